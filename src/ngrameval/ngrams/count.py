"""Counting: text -> token ids (C encoder) -> the C kernel -> per-segment :class:`Stats`.

References are tokenized and mapped to ids once (:class:`References`) and reused for every system;
the kernel counts each segment's reference n-grams once and shares them with all systems of the
call. Segments are processed in bounded chunks so memory stays flat on large corpora; NIST needs the
reference n-gram counts of the whole test set, so it counts in one chunk.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from ngrameval import _overlap
from ngrameval.errors import InputError
from ngrameval.ngrams.stats import Stats, stats_width
from ngrameval.ngrams.texts import Texts
from ngrameval.text.pipeline import Encoder, Preprocess

DEFAULT_CHUNK = 20_000

IntArray = NDArray[np.int64]


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
    encoder: Encoder = field(repr=False, compare=False)  # ids of the references; systems are encoded by it too

    @classmethod
    def build(cls, refs: Sequence[Sequence[str]], cfg: Preprocess, chunk_size: int = DEFAULT_CHUNK) -> References:
        """Tokenize ``refs`` (``refs[i]`` = the references of segment ``i``) once."""
        encoder = Encoder(cfg)
        chunks = []
        counts = set()
        for start in range(0, max(len(refs), 1), chunk_size):
            block = refs[start : start + chunk_size]
            per_seg = np.fromiter(map(len, block), dtype=np.int64, count=len(block))
            if len(block) and per_seg.min() == 0:
                bad = start + int(np.argmin(per_seg))
                raise InputError(f"segment {bad + 1} has no reference; every segment needs at least one")
            counts.update(np.unique(per_seg).tolist())
            seg = np.zeros(len(block) + 1, dtype=np.int64)
            np.cumsum(per_seg, out=seg[1:])
            ids, off = encoder.encode(list(itertools.chain.from_iterable(block)))
            chunks.append(_RefChunk(start, start + len(block), ids, off, seg, np.diff(off)))
        return cls(cfg, len(refs), tuple(sorted(counts)), tuple(chunks), encoder)


def _closest(ref_lens: IntArray, seg: IntArray, hyp_len: IntArray) -> IntArray:
    """The reference length closest to the hypothesis length, ties to the shorter (mteval, sacreBLEU)."""
    owner = np.repeat(np.arange(len(hyp_len)), np.diff(seg))
    base = int(ref_lens.max(initial=0)) + 1
    key = np.abs(ref_lens - hyp_len[owner]) * base + ref_lens
    out: IntArray = np.minimum.reduceat(key, seg[:-1]) % base if len(hyp_len) else key[:0]
    return out


def ngram_totals(lens: IntArray, max_order: int) -> IntArray:
    """Number of n-grams of each order 1..max_order in texts of the given lengths."""
    out: IntArray = np.maximum(lens[:, None] - np.arange(max_order)[None, :], 0)
    return out


def nist_info(count: IntArray, prefix: NDArray[np.int32], total_words: int) -> NDArray[np.float64]:
    """info(w1..wn) = log2(count(w1..wn-1) / count(w1..wn)); unigrams use the total reference words. Computed in
    one float array (the same floats as ``np.log2(context.astype(float) / count)``): the arrays have an entry per
    distinct reference n-gram (millions), and every fresh one costs its page faults."""
    info: NDArray[np.float64] = np.divide(count[np.maximum(prefix, 0)], count, dtype=np.float64)
    unigram = prefix < 0
    info[unigram] = np.divide(total_words, count[unigram], dtype=np.float64)
    with np.errstate(divide="ignore"):
        return np.log2(info, out=info)


def _zero_extra(
    zero_id: int, ids: NDArray[np.int32], gid: NDArray[np.int32], count: IntArray, prefix: NDArray[np.int32], n: int
) -> NDArray[np.float64]:
    """Per n-gram id, what mteval-v13a.pl adds to its information weight: it tests the prefix key with Perl
    truthiness (``$mgram ? ... : ... / $tot_wrds``) and the one-token key ``"0"`` is false, so a bigram
    ``0 x`` gets log2(words / count(0 x)) instead of log2(count(0) / count(0 x)); the difference
    log2(words / count(0)) is constant. No other key is false ("" only for unigrams, "00", "0.0", "0 0" are true)."""
    out = np.zeros(len(count))
    where = np.flatnonzero(ids == zero_id) if zero_id >= 0 and n >= 2 else ids[:0]
    if len(where):
        g0 = int(gid[int(where[0]) * n])
        out[prefix == g0] = np.log2(len(ids) / count[g0])  # len(ids): mteval's $tot_wrds
    return out


@dataclass(frozen=True)
class RefSide:
    """What the rows of every system take from the references alone (``ref_lens`` per reference text, the
    references of segment ``s`` being texts ``seg[s] .. seg[s + 1] - 1``)."""

    ref_lens: IntArray
    seg: IntArray
    single: bool  # one reference per segment: its sums are itself
    rtotal: IntArray
    ref_mean: NDArray[np.float64]
    ref_count: NDArray[np.float64]

    @property
    def n_segments(self) -> int:
        return len(self.seg) - 1

    @classmethod
    def of(cls, ref_lens: IntArray, seg: IntArray, n: int) -> RefSide:
        seg_count = np.diff(seg)
        if bool(np.all(seg_count == 1)):
            lens_f = ref_lens.astype(np.float64)
            return cls(ref_lens, seg, True, ngram_totals(ref_lens, n), lens_f, (ref_lens > 0).astype(np.float64))
        owner = np.repeat(np.arange(len(seg_count)), seg_count)
        rtotal = np.zeros((len(seg_count), n), dtype=np.int64)
        np.add.at(rtotal, owner, ngram_totals(ref_lens, n))
        ref_mean = np.bincount(owner, weights=ref_lens, minlength=len(seg_count)) / seg_count
        ref_count = np.asarray(np.bincount(owner, weights=ref_lens > 0, minlength=len(seg_count)), dtype=np.float64)
        return cls(ref_lens, seg, False, rtotal, ref_mean, ref_count)

    def fill(self, rows: NDArray[np.float64], hyp_len: IntArray, match: IntArray, rmatch: IntArray) -> None:
        """Columns ``hyp_len`` .. ``rtotal`` of :class:`Stats` rows of one system (``match``/``rmatch``: ``(S, N)``)."""
        n = match.shape[1]
        rows[:, 0] = hyp_len
        rows[:, 1] = self.ref_lens if self.single else _closest(self.ref_lens, self.seg, hyp_len)
        rows[:, 2] = self.ref_mean
        rows[:, 3 : 3 + n] = match
        rows[:, 3 + n : 3 + 2 * n] = ngram_totals(hyp_len, n)
        rows[:, 3 + 2 * n : 3 + 3 * n] = rmatch
        rows[:, 3 + 3 * n : 3 + 4 * n] = self.rtotal


def count_rows(
    hyps: Sequence[Texts], refs: Texts, seg: IntArray, max_order: int, nist: bool = False, zero_id: int = -1
) -> list[NDArray[np.float64]]:
    """:class:`Stats` values of each system in ``hyps`` against ``refs`` (the references of segment
    ``s`` are texts ``seg[s] .. seg[s + 1] - 1``); NIST weights come from these references alone.
    ``zero_id``: the token id of ``0`` (-1: none), for mteval's weight of bigrams ``0 x`` (``info_zero``)."""
    n = max_order
    info = gid = None
    if nist:
        gid, count_b, prefix_b, order_b = _overlap.intern(refs.ids, refs.off, n)
        count = np.frombuffer(count_b, dtype=np.int64)
        prefix = np.frombuffer(prefix_b, dtype=np.int32)
        info = nist_info(count, prefix, int(refs.off[-1]))
        ids = refs.ids[: int(refs.off[-1])]
        zero = _zero_extra(zero_id, ids, np.frombuffer(gid, dtype=np.int32), count, prefix, n)
        order = np.frombuffer(order_b, dtype=np.int8).astype(np.int64) - 1
    per_sys = _overlap.overlap(refs.ids, refs.off, seg, [(h.ids, h.off) for h in hyps], n, gid)
    side = RefSide.of(refs.lens, seg, n)
    out = []
    for hyp, (match_b, rmatch_b, _, m_seg, m_gram, m_clip) in zip(hyps, per_sys):
        rows = np.zeros((side.n_segments, stats_width(n, info is not None)))
        match = np.frombuffer(match_b, dtype=np.int64).reshape(-1, n)
        side.fill(rows, hyp.lens, match, np.frombuffer(rmatch_b, dtype=np.int64).reshape(-1, n))
        if info is not None:
            seg_i = np.frombuffer(m_seg, dtype=np.int64)
            gram = np.frombuffer(m_gram, dtype=np.int32)
            weight = info[gram] * np.frombuffer(m_clip, dtype=np.int64)
            flat = np.bincount(seg_i * n + order[gram], weights=weight, minlength=side.n_segments * n)
            rows[:, 3 + 4 * n : 3 + 5 * n] = flat.reshape(-1, n)
            clip = np.frombuffer(m_clip, dtype=np.int64)
            rows[:, 3 + 5 * n] = np.bincount(seg_i, weights=zero[gram] * clip, minlength=side.n_segments)
            rows[:, 3 + 5 * n + 1] = side.ref_count
            rows[:, 3 + 5 * n + 2] = 1.0
        out.append(rows)
    return out


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
    out = [np.zeros((refs.n_segments, stats_width(max_order, nist))) for _ in systems]
    zero_id = _token_id(refs.encoder, "0") if nist else -1
    for ch in chunks:
        hyp_texts = [Texts(*refs.encoder.encode(hyps[ch.start : ch.stop])) for hyps in systems]
        for v, rows in zip(out, count_rows(hyp_texts, Texts(ch.ids, ch.off), ch.seg, max_order, nist, zero_id)):
            v[ch.start : ch.stop] = rows
    return [Stats(v, max_order, nist) for v in out]


def _token_id(encoder: Encoder, token: str) -> int:
    """The id of ``token`` in ``encoder``'s vocabulary (its class id when stemming), -1 when absent."""
    names = encoder.names()
    try:
        return names.index(token)
    except ValueError:
        return -1


def novelty_counts(cands: Texts, sources: Texts, max_order: int, sets: bool) -> tuple[IntArray, IntArray]:
    """(shared, total), each ``(S, max_order)``: n-grams of candidate ``s`` also in source ``s``, and
    all n-grams of the candidate; distinct n-grams when ``sets`` (PINC), else clipped counts."""
    seg = np.arange(len(sources) + 1, dtype=np.int64)
    ((match_b, _, dmatch_b, *_),) = _overlap.overlap(
        sources.ids, sources.off, seg, [(cands.ids, cands.off)], max_order, None
    )
    if sets:
        shared = np.frombuffer(dmatch_b, dtype=np.int64)
        total = np.frombuffer(_overlap.distinct(cands.ids, cands.off, max_order), dtype=np.int64)
        return shared.reshape(-1, max_order), total.reshape(-1, max_order)
    return np.frombuffer(match_b, dtype=np.int64).reshape(-1, max_order), ngram_totals(cands.lens, max_order)


def _merge(chunks: Sequence[_RefChunk]) -> _RefChunk:
    ids = np.concatenate([c.ids for c in chunks])
    lens = np.concatenate([c.lens for c in chunks])
    off = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=off[1:])
    per_seg = np.concatenate([np.diff(c.seg) for c in chunks])
    seg = np.zeros(len(per_seg) + 1, dtype=np.int64)
    np.cumsum(per_seg, out=seg[1:])
    return _RefChunk(chunks[0].start, chunks[-1].stop, ids, off, seg, lens)
