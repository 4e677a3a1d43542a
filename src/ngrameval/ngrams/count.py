"""Counting: tokens -> ids -> the C kernel -> per-segment :class:`Stats`.

References are tokenized and mapped to ids once (:class:`References`) and reused for every system;
within one kernel call the reference n-gram table is built once and shared by all systems of the
call. Segments are processed in bounded chunks so memory stays flat on large corpora; NIST needs the
reference n-gram counts of the whole test set, so it counts in one chunk.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from ngrameval import _overlap
from ngrameval.errors import InputError
from ngrameval.ngrams.stats import Stats
from ngrameval.text.pipeline import Preprocess, preprocess

DEFAULT_CHUNK = 20_000

IntArray = NDArray[np.int64]


def _ids(
    lines: list[list[str]], vocab: dict[str, int], fresh: Iterator[int] | None
) -> tuple[NDArray[np.int32], IntArray]:
    """Flat token ids and offsets. With ``fresh`` (a counter shared by every call that grows this
    ``vocab``) unknown tokens are added; without it they get -1, which matches nothing."""
    lens = np.fromiter(map(len, lines), dtype=np.int64, count=len(lines))
    off = np.zeros(len(lines) + 1, dtype=np.int64)
    np.cumsum(lens, out=off[1:])
    flat = itertools.chain.from_iterable(lines)
    if fresh is not None:
        # setdefault with a running counter: a new token gets an unused number, a known one keeps its own
        values = map(vocab.setdefault, flat, fresh)
    else:
        values = map(vocab.get, flat, itertools.repeat(-1))
    ids = np.fromiter(values, dtype=np.int32, count=int(off[-1]))
    return ids, off


@dataclass(frozen=True)
class _RefChunk:
    start: int
    stop: int
    ids: NDArray[np.int32]
    off: IntArray  # per reference text
    seg: IntArray  # references of segment s: seg[s] .. seg[s+1]
    lens: IntArray  # per reference text


@dataclass(frozen=True)
class References:
    """Tokenized, id-mapped references, segment-major, any number (>= 1) per segment."""

    cfg: Preprocess
    n_segments: int
    n_refs: tuple[int, ...]  # distinct reference counts seen (for signatures)
    chunks: tuple[_RefChunk, ...]
    vocab: dict[str, int] = field(repr=False, compare=False)

    @classmethod
    def build(cls, refs: Sequence[Sequence[str]], cfg: Preprocess, chunk_size: int = DEFAULT_CHUNK) -> References:
        """Tokenize ``refs`` (``refs[i]`` = the references of segment ``i``) once."""
        vocab: dict[str, int] = {}
        fresh = itertools.count()
        chunks = []
        counts = set()
        for start in range(0, max(len(refs), 1), chunk_size):
            block = refs[start : start + chunk_size]
            per_seg = np.fromiter(map(len, block), dtype=np.int64, count=len(block))
            if len(block) and per_seg.min() == 0:
                bad = start + int(np.argmin(per_seg))
                raise InputError(f"segment {bad + 1} has no reference; every segment needs at least one")
            counts.update(per_seg.tolist())
            seg = np.zeros(len(block) + 1, dtype=np.int64)
            np.cumsum(per_seg, out=seg[1:])
            toks = preprocess([r for rs in block for r in rs], cfg)
            ids, off = _ids(toks, vocab, fresh)
            chunks.append(_RefChunk(start, start + len(block), ids, off, seg, np.diff(off)))
        return cls(cfg, len(refs), tuple(sorted(counts)), tuple(chunks), vocab)


def _closest(ref_lens: IntArray, seg: IntArray, hyp_len: IntArray) -> IntArray:
    """The reference length closest to the hypothesis length, ties to the shorter (mteval, sacreBLEU)."""
    owner = np.repeat(np.arange(len(hyp_len)), np.diff(seg))
    base = int(ref_lens.max(initial=0)) + 1
    key = np.abs(ref_lens - hyp_len[owner]) * base + ref_lens
    out: IntArray = np.minimum.reduceat(key, seg[:-1]) % base if len(hyp_len) else key[:0]
    return out


def _ngram_totals(lens: IntArray, max_order: int) -> IntArray:
    """Number of n-grams of each order 1..max_order in texts of the given lengths."""
    out: IntArray = np.maximum(lens[:, None] - np.arange(max_order)[None, :], 0)
    return out


def _nist_info(count: IntArray, prefix: NDArray[np.int32], total_words: int) -> NDArray[np.float64]:
    """info(w1..wn) = log2(count(w1..wn-1) / count(w1..wn)); unigrams use the total reference words."""
    context = np.where(prefix >= 0, count[np.maximum(prefix, 0)], total_words).astype(np.float64)
    with np.errstate(divide="ignore"):
        return np.log2(context / count)


def overlap_stats(
    systems: Sequence[Sequence[str]],
    refs: References,
    max_order: int = 4,
    nist: bool = False,
) -> list[Stats]:
    """Per-segment :class:`Stats` of each system against ``refs`` (one counting pass for all).

    Set ``nist`` to add information-weighted matches (weights from the whole reference side).
    """
    for k, hyps in enumerate(systems):
        if len(hyps) != refs.n_segments:
            raise InputError(f"system {k + 1} has {len(hyps)} segments but the references have {refs.n_segments}")
    chunks = refs.chunks
    if nist and len(chunks) > 1:
        chunks = (_merge(chunks),)
    n = max_order
    out = [np.zeros((refs.n_segments, 3 + 5 * n)) for _ in systems]
    for ch in chunks:
        hyp_ids = []
        for hyps in systems:
            ids, off = _ids(preprocess(hyps[ch.start : ch.stop], refs.cfg), refs.vocab, None)
            hyp_ids.append((ids, off))
        count_b, prefix_b, order_b, per_sys = _overlap.overlap(ch.ids, ch.off, ch.seg, hyp_ids, n, nist)
        info = None
        if nist:
            count = np.frombuffer(count_b, dtype=np.int64)
            prefix = np.frombuffer(prefix_b, dtype=np.int32)
            info = _nist_info(count, prefix, int(ch.lens.sum()))
            order = np.frombuffer(order_b, dtype=np.int8).astype(np.int64) - 1
        seg_count = np.diff(ch.seg)
        owner = np.repeat(np.arange(len(seg_count)), seg_count)
        rtotal = np.zeros((len(seg_count), n), dtype=np.int64)
        np.add.at(rtotal, owner, _ngram_totals(ch.lens, n))
        ref_sum = np.bincount(owner, weights=ch.lens, minlength=len(seg_count))
        for v, (_, off), (match_b, rmatch_b, m_seg, m_gram, m_clip) in zip(out, hyp_ids, per_sys):
            rows = v[ch.start : ch.stop]
            hyp_len = np.diff(off)
            rows[:, 0] = hyp_len
            rows[:, 1] = _closest(ch.lens, ch.seg, hyp_len)
            rows[:, 2] = ref_sum / seg_count
            rows[:, 3 : 3 + n] = np.frombuffer(match_b, dtype=np.int64).reshape(-1, n)
            rows[:, 3 + n : 3 + 2 * n] = _ngram_totals(hyp_len, n)
            rows[:, 3 + 2 * n : 3 + 3 * n] = np.frombuffer(rmatch_b, dtype=np.int64).reshape(-1, n)
            rows[:, 3 + 3 * n : 3 + 4 * n] = rtotal
            if info is not None:
                seg_i = np.frombuffer(m_seg, dtype=np.int64)
                gram = np.frombuffer(m_gram, dtype=np.int32)
                weight = info[gram] * np.frombuffer(m_clip, dtype=np.int64)
                flat = np.bincount(seg_i * n + order[gram], weights=weight, minlength=len(seg_count) * n)
                rows[:, 3 + 4 * n :] = flat.reshape(-1, n)
    return [Stats(v, n, nist) for v in out]


def _merge(chunks: Sequence[_RefChunk]) -> _RefChunk:
    ids = np.concatenate([c.ids for c in chunks])
    lens = np.concatenate([c.lens for c in chunks])
    off = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=off[1:])
    per_seg = np.concatenate([np.diff(c.seg) for c in chunks])
    seg = np.zeros(len(per_seg) + 1, dtype=np.int64)
    np.cumsum(per_seg, out=seg[1:])
    return _RefChunk(chunks[0].start, chunks[-1].stop, ids, off, seg, lens)
