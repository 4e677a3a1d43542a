"""PINC, Paraphrase In N-gram Changes (Chen & Dolan 2011): how much a candidate departs from its source.

    PINC(s, c) = 1/|K| * sum over n in K of (1 - |ngrams_n(s) & ngrams_n(c)| / |ngrams_n(c)|)

Conventions (the paper leaves them open; each is a parameter and part of the signature):

- ``sets=True`` (default): n-gram *sets*, as the formula's intersection reads; ``sets=False`` uses
  multisets (clipped counts, as BLEU clips).
- ``average="present"`` (default): K = the orders 1..N for which the candidate has at least one
  n-gram, so a 2-word candidate is judged on its unigrams and bigram; ``average="all"`` divides by
  N, an order without candidate n-grams contributing 0 (what the widely copied scripts compute).
- An empty candidate has no n-grams at all: PINC 0 with an :class:`UndefinedMetricWarning`.

A system's PINC is the mean over its sentences.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from ngrameval.errors import ConfigError
from ngrameval.metrics.choices import PINC_AVERAGES
from ngrameval.metrics.policy import FloatArray, divide, warn_undefined
from ngrameval.metrics.rows import Batch, IntArray, RowMetric, Rows
from ngrameval.ngrams.count import novelty_counts
from ngrameval.ngrams.stats import mean_of_rows
from ngrameval.ngrams.texts import Texts
from ngrameval.text.validate import MAX_ORDER, integer

AVERAGES = PINC_AVERAGES


@dataclass(frozen=True)
class PINC(RowMetric):
    """PINC of each candidate from its (shared, total) n-gram counts against the source."""

    max_order: int = 4
    sets: bool = True
    average: str = "present"

    higher_is_better: ClassVar[bool] = True  # more novelty against the source
    needs_source: ClassVar[bool] = True
    reads_tokens: ClassVar[bool] = True

    def __post_init__(self) -> None:
        integer(self.max_order, "PINC max_order (n)", 1, MAX_ORDER)
        if self.average not in AVERAGES:
            raise ConfigError(f"unknown PINC average {self.average!r}; valid: {', '.join(AVERAGES)}")

    def __call__(self, shared: NDArray[np.int64], total: NDArray[np.int64]) -> FloatArray:
        """Sentence PINC in [0, 1] from ``(S, max_order)`` arrays.

        >>> PINC(max_order=2)(np.array([[1, 0]]), np.array([[2, 1]]))
        array([0.75])
        """
        present = total > 0
        change = np.where(present, 1.0 - divide(shared.astype(np.float64), total.astype(np.float64)), 0.0)
        orders = present.sum(axis=-1) if self.average == "present" else np.full(change.shape[:-1], self.max_order)
        empty = np.asarray(~present.any(axis=-1))
        warn_undefined(empty, "PINC", "empty candidate")
        return np.where(empty, 0.0, divide(change.sum(axis=-1), orders.astype(np.float64)))

    def rows(self, batch: Batch) -> Rows:
        """Rows ``(PINC, 1)`` of every candidate against its source sentence (texts encoded as the references)."""
        if batch.source is None:
            raise ConfigError("PINC is measured against the source sentences: give them (source=)")

        def score(hyp: Texts, refs: Texts, seg: IntArray, src: Texts | None) -> FloatArray:
            assert src is not None
            return self(*novelty_counts(hyp, src, self.max_order, self.sets))

        return Rows(batch.sentence_rows(score), mean_of_rows)

    def display_name(self) -> str:
        return "PINC"

    def signature(self) -> str:
        return f"n:{self.max_order}|ngrams:{'sets' if self.sets else 'counts'}|avg:{self.average}"


DEFAULT_PINC = PINC()


def checked_pinc(value: object) -> PINC:
    """``value`` when it is a :class:`PINC` configuration, else a ConfigError saying what it is."""
    if not isinstance(value, PINC):
        raise ConfigError(f"pinc must be a PINC configuration, got {type(value).__name__}")
    return value  # sets, N = 4, averaged over the orders present
