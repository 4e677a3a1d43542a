"""Many tokenized texts as two flat arrays: token ids and offsets."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ngrameval.text.pipeline import flatten

IntArray = NDArray[np.int64]
__all__ = ["IntArray", "Texts", "flatten"]  # flatten lives on the text floor (the pipeline uses it)


@dataclass(frozen=True)
class Texts:
    """Text ``i`` is ``ids[off[i]:off[i + 1]]`` (ids from one :class:`~ngrameval.text.pipeline.Encoder`)."""

    ids: NDArray[np.int32]
    off: IntArray

    def __len__(self) -> int:
        return len(self.off) - 1

    @property
    def lens(self) -> IntArray:
        return np.diff(self.off)

    def take(self, idx: NDArray[np.integer]) -> Texts:
        """The texts ``idx[0], idx[1], ...`` (repeats allowed), gathered without a Python loop."""
        idx = np.asarray(idx, dtype=np.int64)
        lens = self.lens[idx]
        off = np.zeros(len(idx) + 1, dtype=np.int64)
        np.cumsum(lens, out=off[1:])
        # position k of the output comes from token (start of its text) + (k - start of its output text)
        starts = np.repeat(self.off[:-1][idx] - off[:-1], lens)
        return Texts(self.ids[starts + np.arange(off[-1])], off)
