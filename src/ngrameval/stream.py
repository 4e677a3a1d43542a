"""Scores accumulated batch by batch, as torchmetrics and Hugging Face ``evaluate`` users expect.

Every metric whose corpus score is a function of the sum of per-segment rows (:class:`~ngrameval.ngrams.stats.
MetricRows`: BLEU, AEv, chrF/chrF++, TER, ROUGE, PINC, SE) can be scored from running sums: ``update()`` adds a
batch's summed rows, ``merge()`` adds another accumulator's (another process, another shard), ``compute()``
scores the sums. The result equals scoring all batches at once, bit for bit up to the order of float additions of
the rows (integer counts for BLEU/AEv/chrF/TER: exact). NIST is refused: its information weights are counted over
every reference of the corpus, so a batch's rows do not add up to the corpus's.

>>> acc = Accumulator("chrf,rouge-l")
>>> acc.update(["the cat sat"], ["the cat sat"])
>>> acc.update(["a dog"], [["a dog barks", "the dog"]])
>>> {k: round(s.score, 4) for k, s in acc.compute().items()}
{'chrF2': 0.6578, 'ROUGE-L': 0.8333}
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from ngrameval.api import RefsLike, Score, checked_specs, measure
from ngrameval.errors import ConfigError, InputTypeError
from ngrameval.metrics.nist import NIST
from ngrameval.metrics.registry import MetricSpec
from ngrameval.ngrams.stats import Scorer


@dataclass
class Accumulator:
    """Running sums of the rows of ``specs`` (a ``-m`` string or parsed specs) over the batches seen."""

    specs: Sequence[MetricSpec] | str
    _specs: list[MetricSpec] = field(init=False, repr=False)
    _sums: list[NDArray[np.float64]] = field(default_factory=list, init=False, repr=False)
    _scorers: list[Scorer] = field(default_factory=list, init=False, repr=False)
    _names: list[str] = field(default_factory=list, init=False, repr=False)
    _signatures: list[str] = field(default_factory=list, init=False, repr=False)
    _fractions: list[bool] = field(default_factory=list, init=False, repr=False)
    segments: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self._specs = checked_specs(self.specs)
        for spec in self._specs:
            if isinstance(spec.metric, NIST):
                raise ConfigError(
                    "NIST cannot be accumulated: its information weights are counted over every reference of the "
                    "corpus; score the whole corpus with ngrameval.nist()"
                )

    def update(self, hyps: Sequence[str], refs: RefsLike, source: Sequence[str] | None = None) -> None:
        """Add one batch: ``hyps[i]`` and its references ``refs[i]`` (``source`` for PINC)."""
        rows = measure({"system": hyps}, refs, self._specs, source)
        sums = [r.values[0].sum(axis=0) for r in rows]
        if not self._sums:
            self._sums = sums
            self._scorers = [r.scorer for r in rows]
            self._names = [r.metric for r in rows]
            self._fractions = [r.fraction for r in rows]
            self._signatures = [r.signature for r in rows]
        else:
            self._sums = [a + b for a, b in zip(self._sums, sums, strict=True)]
            self._signatures = [_merged(a, r.signature) for a, r in zip(self._signatures, rows, strict=True)]
        self.segments += len(rows[0].values[0]) if rows else 0

    def merge(self, other: Accumulator) -> Accumulator:
        """A new accumulator holding both sums (the same specs, e.g. from another process or shard)."""
        if not isinstance(other, Accumulator):
            raise InputTypeError(f"merge() takes an Accumulator, got {type(other).__name__}")
        if [s.metric for s in other._specs] != [s.metric for s in self._specs]:
            raise ConfigError("merge() needs accumulators of the same metric specs")
        out = Accumulator(self._specs)
        for src in (self, other):
            if src._sums:
                out._sums = [a + b for a, b in zip(out._sums, src._sums, strict=True)] if out._sums else list(src._sums)
                out._scorers, out._names, out._fractions = src._scorers, src._names, src._fractions
                out._signatures = (
                    [_merged(a, b) for a, b in zip(out._signatures, src._signatures, strict=True)]
                    if out._signatures
                    else list(src._signatures)
                )
        out.segments = self.segments + other.segments
        return out

    def compute(self) -> dict[str, Score]:
        """The corpus score of every metric over all batches so far (metric name -> Score)."""
        if not self._sums:
            raise ConfigError("compute() before any update(): there is nothing to score")
        return {
            name: Score("system", name, float(scorer(total)), sig, frac)
            for name, scorer, total, sig, frac in zip(
                self._names, self._scorers, self._sums, self._signatures, self._fractions, strict=True
            )
        }

    def reset(self) -> None:
        """Forget every batch."""
        self._sums, self._scorers, self._names, self._signatures, self._fractions = [], [], [], [], []
        self.segments = 0


def _merged(a: str, b: str) -> str:
    """One signature for batches whose reference counts differ (``nrefs:var``); otherwise ``a``."""
    if a == b:
        return a
    fa, fb = a.split("|"), b.split("|")
    if len(fa) == len(fb):
        return "|".join("nrefs:var" if x != y and x.startswith("nrefs:") else x for x, y in zip(fa, fb, strict=True))
    return a


class EvaluateMetric:
    """A Hugging Face ``evaluate``-style metric: ``compute(predictions=, references=)`` and
    ``add_batch(predictions=, references=)`` then ``compute()``; ``references[i]`` holds the references of
    prediction ``i`` (a str or a list of str), as ``evaluate``'s sacrebleu. Returns ``{"score": ..,
    "signature": ..}`` per metric, the score on the 0-100 scale like ``evaluate``'s sacrebleu (NIST: its own)."""

    def __init__(self, specs: str) -> None:
        self.specs = specs
        self._acc = Accumulator(specs)

    def add_batch(self, *, predictions: Sequence[str], references: RefsLike) -> None:
        self._acc.update(predictions, references)

    def compute(
        self, *, predictions: Sequence[str] | None = None, references: RefsLike | None = None
    ) -> dict[str, dict[str, float | str]]:
        """Scores of the batches added (and of ``predictions``/``references`` if given); then starts over."""
        if predictions is not None or references is not None:
            if predictions is None or references is None:
                raise InputTypeError("compute() takes predictions= and references= together")
            self._acc.update(predictions, references)
        try:
            scores = self._acc.compute()
        finally:
            self._acc.reset()
        return {name: {"score": s.score100, "signature": s.signature} for name, s in scores.items()}


def load(specs: str) -> EvaluateMetric:
    """``ngrameval.stream.load("bleu,rouge-l")``: an ``evaluate``-style metric of these ``-m`` specs."""
    return EvaluateMetric(specs)
