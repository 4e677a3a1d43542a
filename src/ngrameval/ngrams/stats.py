"""The sufficient-statistics array every n-gram metric is computed from.

One row per segment, named column blocks (N = ``max_order``)::

    hyp_len | ref_len (closest, ties -> shorter) | ref_len_mean | match[N] | total[N]
            | rmatch[N] | rtotal[N] | info[N]

``match``/``total``: clipped and all hypothesis n-grams (precision side, clipped by the maximum
reference count); ``rmatch``/``rtotal``: the same summed over every reference (recall side, clipped by
the hypothesis count); ``info``: NIST information-weighted matches (zero unless counted with NIST).
Rows add: a corpus score is the metric of ``stats.total()``; a sentence score the metric of one row;
a resample the metric of ``W @ values``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

_BLOCKS = ("match", "total", "rmatch", "rtotal", "info")


@dataclass(frozen=True)
class Stats:
    """Per-segment (or summed) n-gram statistics; ``values`` has shape ``(..., 3 + 5 * max_order)``."""

    values: NDArray[np.float64]
    max_order: int
    has_info: bool = False

    def __post_init__(self) -> None:
        if self.values.shape[-1] != 3 + 5 * self.max_order:
            raise ValueError(f"stats need {3 + 5 * self.max_order} columns, got {self.values.shape[-1]}")

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

    def total(self) -> Stats:
        """The corpus row: the sum over segments."""
        return Stats(self.values.sum(axis=0), self.max_order, self.has_info)

    def rows(self, index: NDArray[np.intp] | slice) -> Stats:
        """A subset of segments (for sub-corpora and resampling)."""
        return Stats(self.values[index], self.max_order, self.has_info)

    def weighted(self, weights: NDArray[np.float64]) -> Stats:
        """``weights @ values``: one summed row per row of ``weights`` (bootstrap counts, AR masks)."""
        return Stats(weights @ self.values, self.max_order, self.has_info)
