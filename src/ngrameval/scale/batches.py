"""Scores accumulated batch by batch, as torchmetrics and Hugging Face ``evaluate`` users expect.

Every metric whose corpus score is a function of the sum of per-segment rows (:class:`~ngrameval.ngrams.stats.
MetricRows`: BLEU, AEv, chrF/chrF++, TER, ROUGE, PINC, SE) can be scored from running sums: ``update()`` adds a
batch's rows, ``merge()`` adds another accumulator's (another process, another shard), ``compute()`` scores the
sums. Rows are added one segment after the other (:func:`ngrameval.ngrams.stats.add_rows`, the summation of the
chunked files and of Dask too), so the result equals scoring all batches at once bit for bit; a ``merge()`` adds
two sums (integer counts for BLEU/AEv/chrF/TER: exact either way). NIST is refused: its information weights are
counted over every reference of the corpus, so a batch's rows do not add up to the corpus's.

>>> acc = Accumulator("chrf,rouge-l")
>>> acc.update(["the cat sat"], ["the cat sat"])
>>> acc.update(["a dog"], [["a dog barks", "the dog"]])
>>> {k: round(s.score, 4) for k, s in acc.compute().items()}
{'chrF2': 0.6578, 'ROUGE-L': 0.8333}
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from numpy.typing import NDArray

from ngrameval.api import RefsLike, Score, checked_specs, measure
from ngrameval.errors import ConfigError, InputTypeError
from ngrameval.metrics.registry import MetricSpec
from ngrameval.ngrams.stats import Scorer, add_rows

if TYPE_CHECKING:
    from ngrameval.metrics.bleu import BLEU
    from ngrameval.metrics.chrf import ChrF


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
    _details: list[Any] = field(default_factory=list, init=False, repr=False)
    segments: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self._specs = checked_specs(self.specs)
        for spec in self._specs:
            if spec.metric.needs_info:
                raise ConfigError(
                    "NIST cannot be accumulated: its information weights are counted over every reference of the "
                    "corpus; score the whole corpus with ngrameval.nist()"
                )

    def update(self, hyps: Sequence[str], refs: RefsLike, source: Sequence[str] | None = None) -> None:
        """Add one batch: ``hyps[i]`` and its references ``refs[i]`` (``source`` for PINC)."""
        rows = measure({"system": hyps}, refs, self._specs, source)
        if not self._sums:
            self._sums = [add_rows(None, r.values[0]) for r in rows]
            self._scorers = [r.scorer for r in rows]
            self._names = [r.metric for r in rows]
            self._fractions = [r.fraction for r in rows]
            self._signatures = [r.signature for r in rows]
            self._details = [r.details for r in rows]
        else:
            self._sums = [add_rows(a, r.values[0]) for a, r in zip(self._sums, rows, strict=True)]
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
                out._sums = (
                    [add_rows(a, b[np.newaxis]) for a, b in zip(out._sums, src._sums, strict=True)]
                    if out._sums
                    else list(src._sums)
                )
                out._scorers, out._names, out._fractions = src._scorers, src._names, src._fractions
                out._details = src._details
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
            name: Score("system", name, float(scorer(total)), sig, frac, None, details(total) if details else None)
            for name, scorer, total, sig, frac, details in zip(
                self._names, self._scorers, self._sums, self._signatures, self._fractions, self._details, strict=True
            )
        }

    def sums(self) -> dict[str, NDArray[np.float64]]:
        """The summed rows of every metric (metric name -> row; BLEU's: :class:`~ngrameval.ngrams.stats.Stats`)."""
        return dict(zip(self._names, self._sums, strict=True))

    def reset(self) -> None:
        """Forget every batch."""
        self._sums, self._scorers, self._names, self._signatures, self._fractions = [], [], [], [], []
        self._details = []
        self.segments = 0


def _merged(a: str, b: str) -> str:
    """One signature for batches whose reference counts differ (``nrefs:var``); otherwise ``a``."""
    if a == b:
        return a
    fa, fb = a.split("|"), b.split("|")
    if len(fa) == len(fb):
        return "|".join("nrefs:var" if x != y and x.startswith("nrefs:") else x for x, y in zip(fa, fb, strict=True))
    return a


_ROUGE_SCORE = ",".join(f"rouge-{v}:profile=rouge-score" for v in ("1", "2", "l", "lsum"))
# Hugging Face evaluate's metric names -> the -m specs that compute them (evaluate's defaults)
EVALUATE_NAMES = {"sacrebleu": "bleu", "bleu": "bleu:smooth=none", "rouge": _ROUGE_SCORE, "chrf": "chrf", "ter": "ter"}


def _evaluate_shaped(name: str, acc: Accumulator, scores: dict[str, Score]) -> dict[str, Any]:
    """The result ``evaluate.load(name).compute()`` returns, with its keys and scales: sacrebleu's score,
    counts, totals, precisions (0-100), bp, sys_len, ref_len; bleu's bleu and precisions (0-1),
    brevity_penalty, length_ratio, translation_length, reference_length; rouge's rouge1, rouge2, rougeL,
    rougeLsum (mean F, 0-1: rouge-score's numbers, the exact mean where evaluate reports its bootstrap median);
    chrf's score, char_order, word_order, beta; ter's score (0-100) and num_edits, ref_length."""
    from ngrameval.ngrams.stats import Stats

    if name == "rouge":
        return dict(zip(("rouge1", "rouge2", "rougeL", "rougeLsum"), (s.score for s in scores.values()), strict=True))
    ((key, s),) = scores.items()
    spec = acc._specs[0]
    if name == "chrf":
        m = cast("ChrF", spec.metric)  # evaluate's chrf: a chrF spec
        return {"score": s.score100, "char_order": m.char_order, "word_order": m.word_order, "beta": m.beta}
    if name == "ter":
        edits, ref_length = (float(v) for v in acc.sums()[key][:2])
        return {"score": s.score100, "num_edits": edits, "ref_length": ref_length}
    assert s.details is not None  # evaluate's sacrebleu and bleu: a BLEU spec
    order = cast("BLEU", spec.metric).max_order
    total = Stats(acc.sums()[key], (len(acc.sums()[key]) - 3) // 5, False)
    counts = [int(v) for v in total.match[:order]]
    totals = [int(v) for v in total.total_ngrams[:order]]
    d = s.details
    if name == "sacrebleu":
        return {"score": s.score100, "counts": counts, "totals": totals, "precisions": d["precisions"],
                "bp": d["bp"], "sys_len": int(d["hyp_len"]), "ref_len": int(d["ref_len"])}  # fmt: skip
    return {"bleu": s.score, "precisions": [p / 100 for p in d["precisions"]], "brevity_penalty": d["bp"],
            "length_ratio": d["ratio"], "translation_length": int(d["hyp_len"]),
            "reference_length": int(d["ref_len"])}  # fmt: skip


class EvaluateMetric:
    """A Hugging Face ``evaluate``-style metric: ``compute(predictions=, references=)`` and
    ``add_batch(predictions=, references=)`` then ``compute()``; ``references[i]`` holds the references of
    prediction ``i`` (a str or a list of str), as ``evaluate``'s sacrebleu.

    Loaded by one of ``evaluate``'s names (``sacrebleu``, ``bleu``, ``rouge``, ``chrf``, ``ter``: see
    :data:`EVALUATE_NAMES`), ``compute()`` returns ``evaluate``'s result keys and scales
    (:func:`_evaluate_shaped`). Loaded by ``-m`` specs (``"bleu,rouge-l"``, ``"chrf:beta=3"``), it returns
    ``{"score": .., "signature": ..}`` per metric name, the score on the 0-100 scale (NIST: its own)."""

    def __init__(self, specs: str) -> None:
        self.specs = specs
        self._shape = specs.strip().lower() if specs.strip().lower() in EVALUATE_NAMES else None
        self._acc = Accumulator(EVALUATE_NAMES[self._shape] if self._shape else specs)

    def add_batch(self, *, predictions: Sequence[str], references: RefsLike) -> None:
        self._acc.update(predictions, references)

    def compute(
        self, *, predictions: Sequence[str] | None = None, references: RefsLike | None = None
    ) -> dict[str, Any]:
        """Scores of the batches added (and of ``predictions``/``references`` if given); then starts over."""
        if predictions is not None or references is not None:
            if predictions is None or references is None:
                raise InputTypeError("compute() takes predictions= and references= together")
            self._acc.update(predictions, references)
        try:
            scores = self._acc.compute()
            if self._shape is not None:
                return _evaluate_shaped(self._shape, self._acc, scores)
        finally:
            self._acc.reset()
        return {name: {"score": s.score100, "signature": s.signature} for name, s in scores.items()}


def load(specs: str) -> EvaluateMetric:
    """``ngrameval.scale.batches.load("sacrebleu")`` (or ``bleu``, ``rouge``, ``chrf``, ``ter``): a metric whose
    ``compute()`` returns what ``evaluate.load`` of that name returns; ``load("bleu:n=2,rouge-l")``: any ``-m``
    specs, one ``{"score", "signature"}`` per metric."""
    return EvaluateMetric(specs)
