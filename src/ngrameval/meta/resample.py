"""Resampling as array algebra: random weight matrices over segments, drawn in bounded blocks.

A resample of a corpus is a weight matrix ``W`` (resamples x segments) and the resampled statistics
are ``W @ values`` — one matrix product per block, never the text again (DESIGN.md). Blocks hold at
most :data:`BLOCK_ENTRIES` weights, so memory stays bounded whatever the number of resamples; block
sizes depend only on the number of segments, so a seed gives the same numbers on every run.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
from numpy.typing import NDArray

BLOCK_ENTRIES = 1 << 20  # 1M weights (8 MB as float64) per block

FloatArray = NDArray[np.float64]


MAX_SEED = 2**63 - 1  # the largest seed the command line takes (``--seed``), so every drawn seed can be replayed


def resolve_seed(seed: int | None) -> int:
    """``seed``, or (for ``None``) a fresh one from the OS in 0 .. :data:`MAX_SEED`, so every resampled result can
    record a seed that ``--seed`` takes back."""
    return secrets.randbits(63) if seed is None else seed


def blocks(n_resamples: int, n_segments: int) -> Iterator[int]:
    """Sizes of the successive blocks of resamples (each ``<= BLOCK_ENTRIES / n_segments`` rows)."""
    step = max(1, BLOCK_ENTRIES // max(n_segments, 1))
    for start in range(0, n_resamples, step):
        yield min(step, n_resamples - start)


def bootstrap_counts(rng: np.random.Generator, size: int, n_segments: int) -> NDArray[np.int64]:
    """``size`` bootstrap resamples (Efron 1979; paired bootstrap: Koehn 2004): row ``b`` counts how often
    each segment was drawn in ``n_segments`` draws with replacement (``rng.integers`` in one call, the
    same draws as sacreBLEU's ``rng.choice(n, (size, n))`` from the same generator state).

    >>> w = bootstrap_counts(np.random.default_rng(0), 3, 5)
    >>> w.shape, w.sum(axis=1).tolist()
    ((3, 5), [5, 5, 5])
    """
    draws = rng.integers(0, n_segments, size=(size, n_segments))
    draws += (np.arange(size) * n_segments)[:, None]
    return np.bincount(draws.ravel(), minlength=size * n_segments).reshape(size, n_segments)


def swap_masks(rng: np.random.Generator, size: int, n_segments: int) -> NDArray[np.uint8]:
    """``size`` approximate-randomisation trials: 1 where a segment's two outputs are swapped, each
    independently with probability 1/2 (drawn as random bits, 8 segments a byte).

    >>> m = swap_masks(np.random.default_rng(0), 2, 10)
    >>> m.shape, sorted(set(m.ravel().tolist()))
    ((2, 10), [0, 1])
    """
    packed = rng.integers(0, 256, size=(size, (n_segments + 7) // 8), dtype=np.uint8)
    return np.unpackbits(packed, axis=1, count=n_segments)


def exact_dtype(x: FloatArray, max_weight: int, total_weight: int) -> type[np.floating[Any]]:
    """float32 if ``w @ x`` is exact in it for integer weights ``0 <= w_i <= max_weight`` summing to at most
    ``total_weight``: ``x`` integer-valued and every partial sum below 2^24 in magnitude; else float64.

    >>> exact_dtype(np.array([[1.0], [2.0]]), 1, 2).__name__, exact_dtype(np.array([[0.5]]), 1, 1).__name__
    ('float32', 'float64')
    """
    if x.size == 0:
        return np.float32
    mag = np.abs(x)
    bound = min(max_weight * float(mag.sum(axis=0).max()), total_weight * float(mag.max()))
    return np.float32 if bound < 2**24 and bool(np.all(x == np.round(x))) else np.float64


class WeightedSums:
    """``weights @ x`` for each ``x`` of ``xs``, block after block, in the cheapest exact float type, with
    one reused weight buffer per type and thread (fresh 30 MB arrays cost page faults on every block)."""

    def __init__(self, xs: list[FloatArray], max_weight: int, total_weight: int) -> None:
        self.xs = [x.astype(exact_dtype(x, max_weight, total_weight)) for x in xs]
        self._local = threading.local()  # blocks may run on several threads (jobs > 1)

    def __call__(self, weights: NDArray[np.integer[Any]]) -> list[FloatArray]:
        out = []
        buffers: dict[np.dtype[Any], NDArray[Any]] = self._local.__dict__.setdefault("buffers", {})
        for x in self.xs:
            buf = buffers.get(x.dtype)
            if buf is None or buf.shape[0] < weights.shape[0]:
                buf = buffers[x.dtype] = np.empty(weights.shape, dtype=x.dtype)
            w = buf[: weights.shape[0]]
            np.copyto(w, weights)
            out.append((w @ x).astype(np.float64))
        return out
