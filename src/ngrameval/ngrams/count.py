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
from functools import partial

import numpy as np
from numpy.typing import NDArray

from ngrameval import _overlap
from ngrameval.errors import InputError, LimitError
from ngrameval.jobs import CHUNKS_PER_JOB, beside, segment_chunks, thread_map
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


BUCKET_KEYS = 8_192  # reference n-grams of orders >= 2 per bucket of intern_plan, about: its table stays in cache
PARTS_PER_JOB = 2  # bucket ranges interned per thread


@dataclass(frozen=True)
class RefGrams:
    """Every distinct reference n-gram of orders 1..``max_order`` of a block, by id (:func:`intern`): ``count``,
    ``prefix`` (the id of its (n-1)-gram prefix, -1 for unigrams) and ``order`` (1-based); ``gid[i * max_order + n -
    1]``, the id of the n-gram of order n starting at token i (-1 past the end of its text)."""

    gid: NDArray[np.int32]
    count: IntArray
    prefix: NDArray[np.int32]
    order: NDArray[np.int8]


def bucket_bits(tokens: int, max_order: int) -> int:
    """log2 of the number of buckets of :func:`intern`: about :data:`BUCKET_KEYS` n-gram positions each (at most
    2**16), from the input's size alone (never the number of threads: the ids do not depend on it)."""
    return min(16, (tokens * (max_order - 1) // BUCKET_KEYS).bit_length())


def _ranges(bstart: IntArray, parts: int) -> list[tuple[int, int]]:
    """``parts`` ranges of consecutive buckets with about as many positions each (empty ranges dropped)."""
    cuts = np.searchsorted(bstart, np.linspace(0, bstart[-1], parts + 1)[1:-1]).tolist()
    bounds = [0, *cuts, len(bstart) - 1]
    return [(a, b) for a, b in itertools.pairwise(bounds) if b > a]


def _grams(size: int) -> tuple[IntArray, NDArray[np.int32], NDArray[np.int8]]:
    """Room for ``size`` n-grams: count, prefix, order (only what is written is ever touched)."""
    return np.empty(size, dtype=np.int64), np.empty(size, dtype=np.int32), np.empty(size, dtype=np.int8)


@dataclass(frozen=True)
class GramParts:
    """:func:`intern_parts`' n-grams before they are put together: ``gid`` as :class:`RefGrams`'; the unigrams'
    counts (ids ``0 .. U - 1``); per range of buckets its n-grams' ``(count, prefix, order)``, ids ``bases[k] ..
    bases[k + 1] - 1`` (``bases[0] = U``, ``bases[-1]``: every n-gram); ``context`` (empty unless asked for): by
    id from ``U`` on, the count of each one's prefix as a float (NIST's information weight is log2(context /
    count)), the unigrams' left to the caller."""

    gid: NDArray[np.int32]
    unigrams: IntArray
    parts: list[tuple[IntArray, NDArray[np.int32], NDArray[np.int8]]]
    bases: list[int]
    context: NDArray[np.float64]
    joined: RefGrams | None = None  # with one range, when asked for: the unigrams and it in one array each


def intern_parts(
    ids: NDArray[np.int32], off: IntArray, max_order: int, jobs: int = 1, contexts: bool = False, join: bool = False
) -> GramParts:
    """The reference n-grams of the texts ``ids[off[i]:off[i + 1]]`` interned by the C kernel (``_overlap.c``):
    ``intern_plan`` numbers the unigrams and sorts the positions by the bucket of their first two tokens; the n-grams
    of orders >= 2 of each range of buckets are interned on their own, ``PARTS_PER_JOB * jobs`` ranges on ``jobs``
    threads, each range's ids following the previous range's (``intern_rebase`` moves them once their number is
    known, and with ``contexts`` finds the count of each one's prefix). The ids are the same for every ``jobs``.
    ``join``: one range (or none) is written after the unigrams in one array of each (:attr:`GramParts.joined`, no
    copy)."""
    n = max_order
    gid = np.empty(len(ids) * n, dtype=np.int32)
    gid[: int(off[0]) * n] = -1
    gid[int(off[-1]) * n :] = -1  # tokens outside the texts (none from References)
    pos_b, bstart_b, uni_b = _overlap.intern_plan(ids, off, n, gid, bucket_bits(len(ids), n))
    pos, bstart = np.frombuffer(pos_b, dtype=np.int64), np.frombuffer(bstart_b, dtype=np.int64)
    n_uni = len(uni_b) // 8
    ranges = _ranges(bstart, 1 if jobs == 1 else PARTS_PER_JOB * jobs)
    join = join and len(ranges) <= 1
    all_count, all_prefix, all_order = _grams(n_uni + int(bstart[-1]) * (n - 1) if join else 0)
    outs = [(all_count[n_uni:], all_prefix[n_uni:], all_order[n_uni:])] * len(ranges) if join else []
    outs = outs or [_grams(int(bstart[hi] - bstart[lo]) * (n - 1)) for lo, hi in ranges]

    def part(k: int) -> int:
        return _overlap.intern_part(ids, gid, n, pos, bstart, *ranges[k], n_uni, n_uni, *outs[k])

    sizes = thread_map(part, range(len(ranges)), jobs)
    bases = np.cumsum([n_uni, *sizes]).tolist()
    if bases[-1] > _overlap.MAX_ID:
        raise LimitError(
            f"more than {_overlap.MAX_ID} distinct reference n-grams, above the 32-bit id bound of the counting "
            "kernel; split the input"
        )
    parts = [(c[:size], p[:size], o[:size]) for (c, p, o), size in zip(outs, sizes, strict=True)]
    uni = np.frombuffer(uni_b, dtype=np.int64)
    context = np.empty(bases[-1] if contexts else 0)

    def rebase(k: int) -> None:
        into = context[bases[k] : bases[k + 1]] if contexts else None
        _overlap.intern_rebase(gid, n, pos, bstart, *ranges[k], bases[k] - n_uni, *parts[k], uni, into)

    thread_map(rebase, [k for k in range(len(ranges)) if contexts or bases[k] != n_uni], jobs)
    joined = None
    if join:
        total = bases[-1]
        all_count[:n_uni], all_prefix[:n_uni], all_order[:n_uni] = uni, -1, 1
        joined = RefGrams(gid, all_count[:total], all_prefix[:total], all_order[:total])
    return GramParts(gid, uni, parts, bases, context, joined)


def intern(ids: NDArray[np.int32], off: IntArray, max_order: int, jobs: int = 1) -> RefGrams:
    """:func:`intern_parts` put together: every n-gram's count, prefix and order by id."""
    got = intern_parts(ids, off, max_order, jobs, join=jobs == 1)
    if got.joined is not None:
        return got.joined
    u = len(got.unigrams)
    return RefGrams(
        got.gid,
        np.concatenate([got.unigrams, *(c for c, _, _ in got.parts)]),
        np.concatenate([np.full(u, -1, dtype=np.int32), *(p for _, p, _ in got.parts)]),
        np.concatenate([np.ones(u, dtype=np.int8), *(o for _, _, o in got.parts)]),
    )


def _blocks(size: int, jobs: int) -> list[range]:
    """About ``CHUNKS_PER_JOB * jobs`` blocks of ``range(size)`` starting at multiples of 2**16 (an element's
    SIMD lane is the same as in one pass over the whole array)."""
    per = -(-size // (CHUNKS_PER_JOB * jobs))
    step = max(1, -(-per >> 16)) << 16
    return [range(a, min(a + step, size)) for a in range(0, size, step)]


def _log_ratio(context: NDArray[np.integer | np.floating], count: IntArray, out: NDArray[np.float64]) -> None:
    """``out = log2(context / count)`` in float64 (NIST's information weight; ``out`` may be ``context``)."""
    np.divide(context, count, out=out, dtype=np.float64)
    with np.errstate(divide="ignore"):
        np.log2(out, out=out)


def nist_info(count: IntArray, prefix: NDArray[np.int32], total_words: int, jobs: int = 1) -> NDArray[np.float64]:
    """info(w1..wn) = log2(count(w1..wn-1) / count(w1..wn)); unigrams use the total reference words. Computed in
    one float array (the same floats as ``np.log2(context.astype(float) / count)``): the arrays have an entry per
    distinct reference n-gram (millions), and every fresh one costs its page faults. In blocks on ``jobs``
    threads (NumPy's loops release the GIL), element by element the same floats."""
    info = np.empty(len(count))

    def block(r: range) -> None:
        pre = prefix[r.start : r.stop]
        context = count[np.maximum(pre, 0)]
        context[pre < 0] = total_words
        _log_ratio(context, count[r.start : r.stop], info[r.start : r.stop])

    thread_map(block, _blocks(len(count), jobs), jobs)
    return info


@dataclass(frozen=True)
class ChunkWeights:
    """The NIST weights of a block's reference n-grams for the counting kernel: ``gid[i * max_order + n - 1]``, the
    id of the n-gram of order n starting at token i (-1 past the end of its text); ``info`` and ``order`` (0-based)
    by id; ``zero_ids`` (increasing), the n-grams with mteval's extra weight ``extra`` (bigrams ``0 x``, see
    :func:`nist_weights`). Weights of the whole corpus for a chunk of it come from :mod:`ngrameval.scale.refcounts`
    and its peers."""

    gid: NDArray[np.int32]
    info: NDArray[np.float64]
    order: NDArray[np.int8]
    zero_ids: NDArray[np.int32] = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    extra: float = 0.0

    def zero(self, gram: NDArray[np.int32]) -> NDArray[np.float64]:
        """mteval's extra weight of each n-gram id of ``gram`` (0 for all but :attr:`zero_ids`)."""
        out = np.zeros(len(gram))
        if len(self.zero_ids):
            out[np.isin(gram, self.zero_ids)] = self.extra
        return out

    def kernel(self) -> tuple[NDArray[np.int32], NDArray[np.float64], NDArray[np.int32], float]:
        """The ``nist`` argument of ``_overlap.overlap``."""
        return self.gid, self.info, self.zero_ids, self.extra


def nist_weights(refs: Texts, max_order: int, zero_id: int = -1, jobs: int = 1) -> ChunkWeights:
    """The weights of the reference n-grams of ``refs`` alone (:func:`intern_parts`; info as :func:`nist_info`
    computes it, a range of buckets at a time, never put together) on ``jobs`` threads. ``zero_id``: the token id of
    ``0`` (-1: none). mteval-v13a.pl tests the prefix key with Perl truthiness (``$mgram ? ... : ... / $tot_wrds``)
    and the one-token key ``"0"`` is false, so a bigram ``0 x`` gets log2(words / count(0 x)) instead of
    log2(count(0) / count(0 x)); the difference log2(words / count(0)) is constant, the extra weight. No other key
    is false ("" only for unigrams, "00", "0.0", "0 0" are true)."""
    n = max_order
    got = intern_parts(refs.ids, refs.off, n, jobs, contexts=True)
    uni, u = got.unigrams, len(got.unigrams)
    words = int(refs.off[-1] - refs.off[0])  # mteval's $tot_wrds
    info, order = got.context, np.empty(got.bases[-1], dtype=np.int8)  # the contexts become the weights in place
    where = np.flatnonzero(refs.ids[: int(refs.off[-1])] == zero_id) if zero_id >= 0 and n >= 2 else np.zeros(0)
    g0 = int(got.gid[int(where[0]) * n]) if len(where) else -1  # the unigram "0"
    zero: list[IntArray] = [np.zeros(0, dtype=np.int64)] * len(got.parts)

    def weigh(k: int) -> None:
        if k < 0:  # the unigrams: their context is every reference word
            info[:u] = words
            _log_ratio(info[:u], uni, info[:u])
            order[:u] = 0
            return
        count, prefix, own = got.parts[k]
        lo, hi = got.bases[k], got.bases[k + 1]
        _log_ratio(info[lo:hi], count, info[lo:hi])
        np.subtract(own, 1, out=order[lo:hi])
        if g0 >= 0:
            zero[k] = np.flatnonzero(prefix == g0) + lo

    thread_map(weigh, range(-1, len(got.parts)), jobs)
    if g0 < 0:
        return ChunkWeights(got.gid, info, order)
    ids = np.concatenate(zero).astype(np.int32)
    return ChunkWeights(got.gid, info, order, ids, float(np.log2(words / uni[g0])))


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

    def part(self, a: int, b: int) -> RefSide:
        """The side of segments ``a .. b - 1``."""
        r0, r1 = int(self.seg[a]), int(self.seg[b])
        return RefSide(
            self.ref_lens[r0:r1], self.seg[a : b + 1] - r0, self.single, self.rtotal[a:b], self.ref_mean[a:b],
            self.ref_count[a:b],
        )  # fmt: skip

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
    hyps: Sequence[Texts],
    refs: Texts,
    seg: IntArray,
    max_order: int,
    nist: bool = False,
    zero_id: int = -1,
    *,
    weights: ChunkWeights | None = None,
    jobs: int = 1,
) -> list[NDArray[np.float64]]:
    """:class:`Stats` values of each system in ``hyps`` against ``refs`` (the references of segment
    ``s`` are texts ``seg[s] .. seg[s + 1] - 1``), with NIST's weighted matches when ``weights`` is given (a whole
    corpus's, for a chunk of it) or ``nist`` is set (weights from these references alone, :func:`nist_weights`;
    ``zero_id``: the token id of ``0``, -1: none). With ``jobs`` >= 2 the weights and then chunks of segments are
    counted on ``jobs`` threads; a segment's rows are its own (its matches' weights summed in the kernel's order), so
    they are the same floats for every ``jobs``."""
    n = max_order
    if nist and weights is None:
        weights = nist_weights(refs, n, zero_id, jobs)
    side = RefSide.of(refs.lens, seg, n)
    out = [np.zeros((side.n_segments, stats_width(n, weights is not None))) for _ in hyps]

    def count(ch: range) -> None:
        a, b = ch.start, ch.stop
        r0, r1 = int(seg[a]), int(seg[b])
        here = _overlap.overlap(
            refs.ids,
            refs.off[r0 : r1 + 1],
            seg[a : b + 1] - r0,
            [(h.ids, h.off[a : b + 1]) for h in hyps],
            n,
            None if weights is None else weights.kernel(),
        )
        part = side.part(a, b)
        for rows, hyp, (match_b, rmatch_b, _, winfo_b, wzero_b) in zip(out, hyps, here):
            mine = rows[a:b]
            match = np.frombuffer(match_b, dtype=np.int64).reshape(-1, n)
            part.fill(mine, np.diff(hyp.off[a : b + 1]), match, np.frombuffer(rmatch_b, dtype=np.int64).reshape(-1, n))
            if weights is not None:
                mine[:, 3 + 4 * n : 3 + 5 * n] = np.frombuffer(winfo_b).reshape(-1, n)
                mine[:, 3 + 5 * n] = np.frombuffer(wzero_b)
                mine[:, 3 + 5 * n + 1] = part.ref_count
                mine[:, 3 + 5 * n + 2] = 1.0

    thread_map(count, segment_chunks(side.n_segments, jobs) if jobs > 1 else [range(side.n_segments)], jobs)
    return out


def overlap_stats(
    systems: Sequence[Sequence[str]],
    refs: References,
    max_order: int = 4,
    nist: bool = False,
    jobs: int = 1,
) -> list[Stats]:
    """Per-segment :class:`Stats` of each system against ``refs`` (one counting pass for all).

    Set ``nist`` to add information-weighted matches (weights from the whole reference side); NIST's counting runs
    on ``jobs`` threads (its weights while this thread encodes the systems, then chunks of segments), the same
    floats for every ``jobs``.
    """
    for k, hyps in enumerate(systems):
        if len(hyps) != refs.n_segments:
            raise InputError(f"system {k + 1} has {len(hyps)} segments but the references have {refs.n_segments}")
    if nist:
        ch = _merge(refs.chunks) if len(refs.chunks) > 1 else refs.chunks[0]
        ref_texts = Texts(ch.ids, ch.off)
        zero_id = _token_id(refs.encoder, "0")
        weights, hyp_texts = beside(
            partial(nist_weights, ref_texts, max_order, zero_id, jobs),
            lambda: [Texts(*refs.encoder.encode(hyps)) for hyps in systems],
            jobs,
        )
        weighted = count_rows(hyp_texts, ref_texts, ch.seg, max_order, weights=weights, jobs=jobs)
        return [Stats(v, max_order, nist) for v in weighted]
    out = [np.zeros((refs.n_segments, stats_width(max_order, nist))) for _ in systems]
    for ch in refs.chunks:
        hyp_texts = [Texts(*refs.encoder.encode(hyps[ch.start : ch.stop])) for hyps in systems]
        for v, rows in zip(out, count_rows(hyp_texts, Texts(ch.ids, ch.off), ch.seg, max_order)):
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
