"""The sufficient-statistics array every n-gram metric is computed from.

One row per segment, named column blocks (N = ``max_order``)::

    hyp_len | ref_len (closest, ties -> shorter) | ref_len_mean | match[N] | total[N]
            | rmatch[N] | rtotal[N] | info[N]

``match``/``total``: clipped and all hypothesis n-grams (precision side, clipped by the maximum
reference count); ``rmatch``/``rtotal``: the same summed over every reference (recall side, clipped by
the hypothesis count); ``info``: NIST information-weighted matches (zero unless counted with NIST).
Counted with NIST (``has_info``), three columns follow: ``info_zero`` (what mteval-v13a.pl adds to the
order-2 information of matched bigrams whose first token is ``0``, see :mod:`ngrameval.metrics.nist`),
``ref_count`` (references with at least one token) and ``segments`` (1 per segment).
Rows add: a corpus score is the metric of ``stats.total()``; a sentence score the metric of one row;
a resample the metric of ``W @ values``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ngrameval.memory import empty

_BLOCKS = ("match", "total", "rmatch", "rtotal", "info")
NIST_COLUMNS = ("info_zero", "ref_count", "segments")  # after the blocks, when counted with NIST


def stats_width(max_order: int, has_info: bool) -> int:
    """Number of columns of :class:`Stats` values."""
    return 3 + 5 * max_order + (len(NIST_COLUMNS) if has_info else 0)


@dataclass(frozen=True)
class Stats:
    """Per-segment (or summed) n-gram statistics; ``values`` has shape ``(..., 3 + 5 * max_order)``, plus
    the :data:`NIST_COLUMNS` when ``has_info``."""

    values: NDArray[np.float64]
    max_order: int
    has_info: bool = False

    def __post_init__(self) -> None:
        want = stats_width(self.max_order, self.has_info)
        if self.values.shape[-1] != want:
            raise ValueError(f"stats need {want} columns, got {self.values.shape[-1]}")

    def _block(self, name: str) -> NDArray[np.float64]:
        i = 3 + _BLOCKS.index(name) * self.max_order
        return self.values[..., i : i + self.max_order]

    @property
    def hyp_len(self) -> NDArray[np.float64]:
        return self.values[..., 0]

    @property
    def ref_len(self) -> NDArray[np.float64]:
        return self.values[..., 1]

    @property
    def ref_len_mean(self) -> NDArray[np.float64]:
        return self.values[..., 2]

    @property
    def match(self) -> NDArray[np.float64]:
        return self._block("match")

    @property
    def total_ngrams(self) -> NDArray[np.float64]:
        return self._block("total")

    @property
    def rmatch(self) -> NDArray[np.float64]:
        return self._block("rmatch")

    @property
    def rtotal(self) -> NDArray[np.float64]:
        return self._block("rtotal")

    @property
    def info(self) -> NDArray[np.float64]:
        return self._block("info")

    def _nist_column(self, name: str) -> NDArray[np.float64]:
        if not self.has_info:
            raise ValueError(f"{name} is only counted with nist=True")
        return self.values[..., 3 + 5 * self.max_order + NIST_COLUMNS.index(name)]

    @property
    def info_zero(self) -> NDArray[np.float64]:
        """mteval-v13a.pl's extra order-2 information: matched bigrams ``0 x`` weighted by the total reference
        words instead of the count of ``0``, i.e. clip * log2(words / count("0")) summed per segment."""
        return self._nist_column("info_zero")

    @property
    def ref_count(self) -> NDArray[np.float64]:
        """References with at least one token."""
        return self._nist_column("ref_count")

    @property
    def segments(self) -> NDArray[np.float64]:
        """Segments summed into the row (1 per segment)."""
        return self._nist_column("segments")

    def total(self) -> Stats:
        """The corpus row: the sum over segments."""
        return Stats(summed(self.values), self.max_order, self.has_info)

    def rows(self, index: NDArray[np.intp] | slice) -> Stats:
        """A subset of segments (for sub-corpora and resampling)."""
        return Stats(self.values[index], self.max_order, self.has_info)

    def weighted(self, weights: NDArray[np.float64]) -> Stats:
        """``weights @ values``: one summed row per row of ``weights`` (bootstrap counts, AR masks)."""
        return Stats(weights @ self.values, self.max_order, self.has_info)


Scorer = Callable[[NDArray[np.float64]], NDArray[np.float64]]


@dataclass(frozen=True)
class MetricRows:
    """One metric's summable per-segment rows for every system, and the function scoring a sum of rows.

    ``values[s]`` has shape ``(n_segments, k)`` for system ``s``; its corpus score is
    ``scorer(values[s].sum(axis=0))``, its sentence scores ``scorer(values[s])`` and a resample
    ``scorer(W @ values[s])``. Micro-averaged metrics (BLEU, NIST, AEv) keep their n-gram statistics;
    means of sentence scores (PINC, SE) are rows ``(score, 1)`` (:func:`mean_of_rows`), so resampling
    code never branches on how a metric averages.
    """

    metric: str
    signature: str
    fraction: bool
    values: tuple[NDArray[np.float64], ...]
    scorer: Scorer
    # the metric's breakdown of a summed row (BLEU: n-gram precisions, BP, lengths), where it has one
    details: Callable[[NDArray[np.float64]], dict[str, Any] | None] | None = None
    # the metric's direction: False for error rates (TER) and external scores declared lower-is-better
    higher_is_better: bool = True

    def corpus(self) -> NDArray[np.float64]:
        """The corpus score of every system."""
        return self.scorer(np.stack([summed(v) for v in self.values]))

    def oriented(self) -> MetricRows:
        """These rows with higher = better: a lower-is-better metric's scores negated (as mt-metrics-eval
        negates TER before correlating); a higher-is-better metric's rows unchanged."""
        if self.higher_is_better:
            return self
        scorer = self.scorer

        def negated(values: NDArray[np.float64]) -> NDArray[np.float64]:
            return -scorer(values)

        return replace(self, scorer=negated, details=None, higher_is_better=True)


def stats_scorer(metric: Callable[[Stats], NDArray[np.float64]], max_order: int, has_info: bool) -> Scorer:
    """The scorer of a :class:`Stats` metric: rows of ``(3 + 5 max_order)`` columns -> scores."""

    def score(values: NDArray[np.float64]) -> NDArray[np.float64]:
        return metric(Stats(values, max_order, has_info))

    return score


def mean_rows(sentences: NDArray[np.float64]) -> NDArray[np.float64]:
    """Sentence scores as summable rows ``(score, 1)``: one new array (column_stack made two), in huge pages when large
    (:func:`ngrameval.memory.empty`: 100k segments, 1.6 MB, 391 page faults and ~0.9 ms before)."""
    rows = empty((len(sentences), 2))
    rows[:, 0] = sentences
    rows[:, 1] = 1.0
    return rows


def mean_of_rows(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """sum of scores / number of sentences (0 for no sentence) of rows made by :func:`mean_rows`."""
    den = values[..., 1]
    out = np.zeros(den.shape)
    np.divide(values[..., 0], den, out=out, where=den != 0)
    return out


def summed(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """``values.sum(axis=0)`` bit for bit: the rows added one after the other from 0, as :func:`add_rows` relies on.
    For a C-ordered ``(n, k)`` float64 array with k >= 2 that is einsum's ``ij->j``, whose loop runs down the rows
    with one add per column; numpy's sum makes one inner-loop call a row (100k x 2: 1.43 -> 0.35 ms, 100k x 23:
    1.90 -> 0.93 ms here). tests/test_stats_summed.py pins the two equal."""
    if values.ndim == 2 and values.shape[1] >= 2 and values.dtype == np.float64 and values.flags.c_contiguous:
        out: NDArray[np.float64] = np.einsum("ij->j", values)
        return out
    total: NDArray[np.float64] = values.sum(axis=0)
    return total


def add_rows(total: NDArray[np.float64] | None, rows: NDArray[np.float64]) -> NDArray[np.float64]:
    """``total`` (a summed row; None: nothing yet) plus ``rows`` (segments x width) added one segment after the
    other, ``((total + r0) + r1) + ...``: numpy's axis-0 sum adds the rows of one array in this order, so a corpus
    summed piece by piece (batches, chunks of files, Dask partitions) is bit for bit the corpus summed at once.
    The one summation of rows across pieces (:class:`ngrameval.scale.batches.Accumulator`,
    :func:`ngrameval.scale.chunks.fold`).

    >>> add_rows(add_rows(None, np.array([[0.1, 1.0]])), np.array([[0.2, 1.0], [0.3, 1.0]])).tolist()
    [0.6000000000000001, 3.0]
    """
    stacked = rows if total is None else np.concatenate([total[np.newaxis], rows])
    out: NDArray[np.float64] = np.add.reduce(stacked, axis=0)
    return out


def concatenated_rows(parts: Sequence[Sequence[MetricRows]]) -> list[tuple[NDArray[np.float64], ...]]:
    """Per metric, each system's rows of every piece (chunk, partition) in order; metrics that share their
    statistics in a piece (counted together) share the concatenated tuple too, so resampling multiplies them once."""
    done: dict[int, tuple[NDArray[np.float64], ...]] = {}
    out = []
    for j, first in enumerate(parts[0]):
        key = id(first.values)
        if key not in done:
            n_sys = len(first.values)
            done[key] = tuple(np.concatenate([p[j].values[s] for p in parts]) for s in range(n_sys))
        out.append(done[key])
    return out
