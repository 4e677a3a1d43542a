"""Analysis in compare-mt's spirit (Neubig et al. 2019), on the same per-segment rows as every score.

- **Scores by bucket**: a metric's corpus score recomputed on the segments of each bucket (by the mean
  reference length in tokens): one matrix product of a bucket indicator with the summable rows.
- **Word accuracy by frequency**: each word type is bucketed by its count in all references; per bucket,
  matched = sum over segments of min(hyp count, max reference count) (BLEU's clipping), precision =
  matched / hyp tokens, recall = matched / reference tokens (max over the references), F their harmonic mean.
  Hypothesis words never seen in a reference match nothing by definition and are left out.
- **N-grams one system gets right and the other misses**: clipped matches of every n-gram summed over the
  corpus for systems A and B, ranked by compare-mt's smoothed share ``(m_A + 1) / (m_A + m_B + 2)``.
- **Examples**: the segments whose sentence scores differ most, each hypothesis token marked with the
  longest n-gram (up to 4) containing it that occurs in a reference of the segment.

Token ids come from one :class:`~ngrameval.text.pipeline.Encoder`; every count is array maths on them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ngrameval.meta.resample import FloatArray
from ngrameval.ngrams.stats import MetricRows
from ngrameval.ngrams.texts import IntArray, Texts, flatten
from ngrameval.text.pipeline import Encoder, Preprocess

LENGTH_EDGES = (10, 20, 30, 40, 50, 60)
FREQUENCY_EDGES = (1, 2, 3, 5, 10, 100, 1000)
MAX_ORDER = 4


@dataclass(frozen=True)
class Encoded:
    """Every system's outputs and the references as token ids of one encoder; references of segment ``i``
    are texts ``seg[i] .. seg[i + 1] - 1`` of ``refs``; ``words[id]`` is the token of an id."""

    systems: tuple[str, ...]
    hyps: tuple[Texts, ...]
    refs: Texts
    seg: IntArray
    words: tuple[str, ...]

    @property
    def n_segments(self) -> int:
        return len(self.seg) - 1


def encode(systems: Mapping[str, Sequence[str]], refs: Sequence[Sequence[str]], pre: Preprocess) -> Encoded:
    """Token ids of every output and reference (segment-major ``refs``) under ``pre``."""
    enc = Encoder(pre)
    flat, seg = flatten(refs)
    ref = Texts(*enc.encode(flat))
    hyps = tuple(Texts(*enc.encode(list(h))) for h in systems.values())
    return Encoded(tuple(systems), hyps, ref, seg, tuple(enc.names()))


def _concat(texts: Sequence[Texts]) -> Texts:
    ids = np.concatenate([t.ids for t in texts]) if texts else np.zeros(0, dtype=np.int32)
    lens = np.concatenate([t.lens for t in texts]) if texts else np.zeros(0, dtype=np.int64)
    off = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=off[1:])
    return Texts(ids, off)


@dataclass(frozen=True)
class Matches:
    """Clipped n-gram matches of one order: for system ``s``, ``hyp_gid[s]``/``hyp_count[s]``/``matched[s]`` per
    distinct (segment, n-gram); ``ref_gid``/``ref_count`` per distinct (segment, n-gram) with the max count over
    the segment's references; ``first[g]`` the flat position of n-gram ``g``'s first token in ``tokens``."""

    order: int
    hyp_gid: tuple[IntArray, ...]
    hyp_count: tuple[IntArray, ...]
    matched: tuple[IntArray, ...]
    ref_gid: IntArray
    ref_count: IntArray
    n_grams: int
    first: IntArray
    tokens: IntArray


def _unique_counts(key: IntArray) -> tuple[IntArray, IntArray]:
    uniq, counts = np.unique(key, return_counts=True)
    return uniq, counts.astype(np.int64)


def matches(hyps: Sequence[Texts], refs: Texts, seg: IntArray, max_order: int = MAX_ORDER) -> list[Matches]:
    """Clipped matches of every order 1..``max_order`` for each of ``hyps`` (n-gram ids shared by all texts)."""
    n_seg = len(seg) - 1
    every = _concat([refs, *hyps])
    tokens = every.ids.astype(np.int64)
    pos_text = np.repeat(np.arange(len(every)), every.lens)
    end = every.off[1:][pos_text]
    vocab = int(tokens.max()) + 1 if len(tokens) else 1
    ref_seg = np.repeat(np.arange(n_seg), np.diff(seg))  # segment of each reference text
    n_ref = len(refs)
    out: list[Matches] = []
    prev = tokens
    for n in range(1, max_order + 1):
        starts = np.flatnonzero(np.arange(len(tokens)) + n - 1 < end)
        if n == 1:
            gid = tokens
        else:
            # the n-gram at i is the (n-1)-gram at i followed by token i + n - 1; ids made dense again
            _, inv = np.unique(prev[starts] * vocab + tokens[starts + n - 1], return_inverse=True)
            gid = np.full(len(tokens), -1, dtype=np.int64)
            gid[starts] = inv.ravel()
            prev = gid
        g, text = gid[starts], pos_text[starts]
        n_grams = int(g.max()) + 1 if len(g) else 0
        first = np.zeros(n_grams, dtype=np.int64)
        first[g[::-1]] = starts[::-1]  # the last write wins: the first occurrence
        is_ref = text < n_ref
        # max over a segment's references of each n-gram's count in one reference
        per_ref, counts = _unique_counts(text[is_ref] * n_grams + g[is_ref])
        seg_key = ref_seg[per_ref // max(n_grams, 1)] * n_grams + per_ref % max(n_grams, 1)
        order_k = np.argsort(seg_key, kind="stable")
        seg_key, counts = seg_key[order_k], counts[order_k]
        starts_k = np.flatnonzero(np.r_[True, seg_key[1:] != seg_key[:-1]]) if len(seg_key) else np.zeros(0, int)
        ref_key = seg_key[starts_k]
        ref_count = np.maximum.reduceat(counts, starts_k) if len(counts) else counts
        hyp_gid, hyp_count, matched = [], [], []
        for s in range(len(hyps)):
            lo = n_ref + s * n_seg
            mine = (text >= lo) & (text < lo + n_seg)
            key, hc = _unique_counts((text[mine] - lo) * n_grams + g[mine])
            at = np.minimum(np.searchsorted(ref_key, key), max(len(ref_key) - 1, 0))
            found = ref_key[at] == key if len(ref_key) else np.zeros(len(key), dtype=bool)
            hyp_gid.append(key % max(n_grams, 1))
            hyp_count.append(hc)
            matched.append(np.where(found, np.minimum(hc, ref_count[at] if len(ref_key) else 0), 0))
        out.append(Matches(n, tuple(hyp_gid), tuple(hyp_count), tuple(matched), ref_key % max(n_grams, 1),
                           ref_count, n_grams, first, tokens))  # fmt: skip
    return out


def _bucket_labels(edges: Sequence[int], first: str) -> list[str]:
    labels = [first]
    for lo, hi in zip(edges, [*edges[1:], None]):
        labels.append(f">={lo}" if hi is None else (str(lo) if hi == lo + 1 else f"{lo}-{hi - 1}"))
    return labels


@dataclass(frozen=True)
class Bucketed:
    """A metric's corpus score (0-1, or NIST's scale) per system on the segments of each non-empty bucket."""

    metric: str
    by: str
    labels: tuple[str, ...]
    counts: tuple[int, ...]
    systems: tuple[str, ...]
    values: FloatArray  # (n_systems, n_buckets)
    fraction: bool


def reference_lengths(enc: Encoded) -> FloatArray:
    """The mean token length of each segment's references (0 for a segment without one)."""
    lens = enc.refs.lens.astype(np.float64)
    n = np.diff(enc.seg)
    sums = np.add.reduceat(np.r_[lens, 0.0], enc.seg[:-1]) * (n > 0) if len(lens) else np.zeros(len(n))
    return np.where(n > 0, sums / np.maximum(n, 1), 0.0)


def bucket_scores(
    rows: MetricRows, systems: Sequence[str], values: FloatArray, edges: Sequence[float] = LENGTH_EDGES, by: str = ""
) -> Bucketed:
    """``rows``' corpus score per system within each bucket of ``values`` (one per segment) cut at ``edges``.

    >>> from ngrameval.ngrams.stats import mean_rows, mean_of_rows
    >>> r = MetricRows("m", "", True, (mean_rows(np.array([1.0, 0.0, 0.5])),), mean_of_rows)
    >>> b = bucket_scores(r, ["a"], np.array([5.0, 15.0, 12.0]), (10,))
    >>> b.labels, b.counts, b.values.tolist()
    (('<10', '>=10'), (1, 2), [[1.0, 0.25]])
    """
    bucket = np.searchsorted(np.asarray(edges, dtype=np.float64), values, side="right")
    labels = _bucket_labels([int(e) for e in edges], f"<{int(edges[0])}")
    present = np.unique(bucket)
    onehot = (bucket[None, :] == present[:, None]).astype(np.float64)
    scores = np.stack([rows.scorer(onehot @ v) for v in rows.values])
    counts = tuple(int(c) for c in onehot.sum(axis=1))
    return Bucketed(rows.metric, by, tuple(labels[b] for b in present), counts, tuple(systems), scores, rows.fraction)


@dataclass(frozen=True)
class WordAccuracy:
    """Word precision, recall and F per system (rows) and reference-frequency bucket (columns); ``ref_tokens``
    and ``hyp_tokens[s]`` are the token counts behind each bucket (recall is NaN where no reference token)."""

    labels: tuple[str, ...]
    systems: tuple[str, ...]
    precision: FloatArray
    recall: FloatArray
    fmeasure: FloatArray
    ref_tokens: tuple[int, ...]


def word_accuracy(enc: Encoded, unigrams: Matches, edges: Sequence[int] = FREQUENCY_EDGES) -> WordAccuracy:
    """Word matches by the frequency of the word in all references (bucket ``0``: never in a reference)."""
    ref_tokens = enc.refs.ids.astype(np.int64)
    freq = np.bincount(ref_tokens, minlength=max(unigrams.n_grams, 1))
    bucket_of = np.searchsorted(np.asarray(edges), freq, side="right")  # 0 for freq 0
    n_b = len(edges) + 1
    ref_b = np.bincount(bucket_of[unigrams.ref_gid], weights=unigrams.ref_count, minlength=n_b)
    prec, rec = [], []
    for gid, hc, m in zip(unigrams.hyp_gid, unigrams.hyp_count, unigrams.matched):
        hyp_b = np.bincount(bucket_of[gid], weights=hc, minlength=n_b)
        match_b = np.bincount(bucket_of[gid], weights=m, minlength=n_b)
        with np.errstate(invalid="ignore", divide="ignore"):
            prec.append(np.where(hyp_b > 0, match_b / hyp_b, np.nan))
            rec.append(np.where(ref_b > 0, match_b / ref_b, np.nan))
    p, r = np.array(prec), np.array(rec)
    with np.errstate(invalid="ignore", divide="ignore"):
        f = np.where(p + r > 0, 2 * p * r / (p + r), 0.0)
    f[np.isnan(p) | np.isnan(r)] = np.nan
    keep = ref_b > 0  # bucket 0 (never in a reference) has no match by definition: nothing to show
    labels = [lab for lab, k in zip(_bucket_labels(edges, "0"), keep) if k]
    return WordAccuracy(tuple(labels), enc.systems, p[:, keep], r[:, keep], f[:, keep],
                        tuple(int(c) for c in ref_b[keep]))  # fmt: skip


@dataclass(frozen=True)
class NgramDiff:
    """An n-gram matched ``matched_a`` times by A and ``matched_b`` times by B over the corpus."""

    ngram: str
    order: int
    matched_a: int
    matched_b: int


@dataclass(frozen=True)
class Token:
    """A hypothesis token and the longest n-gram (0: none) containing it that a reference of the segment has."""

    text: str
    matched: int


@dataclass(frozen=True)
class Example:
    """A segment where the sentence scores of A and B differ; ``reference`` is its first reference."""

    segment: int  # 1-based, as a line number
    score_a: float
    score_b: float
    reference: str
    hyp_a: tuple[Token, ...]
    hyp_b: tuple[Token, ...]


@dataclass(frozen=True)
class PairAnalysis:
    """System A against B: the n-grams each matches more often, and the segments where ``metric`` differs most."""

    system_a: str
    system_b: str
    metric: str
    fraction: bool
    better_a: tuple[NgramDiff, ...]
    better_b: tuple[NgramDiff, ...]
    examples_a: tuple[Example, ...]
    examples_b: tuple[Example, ...]


def ngram_differences(
    orders: Sequence[Matches], a: int, b: int, words: Sequence[str], top: int = 10
) -> tuple[tuple[NgramDiff, ...], tuple[NgramDiff, ...]]:
    """The ``top`` n-grams A matches more than B (and B more than A), by (m_A + 1) / (m_A + m_B + 2)."""
    sides: tuple[list[tuple[float, int, str, NgramDiff]], list[tuple[float, int, str, NgramDiff]]] = ([], [])
    for m in orders:
        ma = np.bincount(m.hyp_gid[a], weights=m.matched[a], minlength=m.n_grams)
        mb = np.bincount(m.hyp_gid[b], weights=m.matched[b], minlength=m.n_grams)
        share_a = (ma + 1.0) / (ma + mb + 2.0)
        for side, share, pick in ((0, share_a, ma > mb), (1, 1.0 - share_a, mb > ma)):
            idx = np.flatnonzero(pick)
            for g in idx[np.lexsort((idx, -(ma + mb)[idx], -share[idx]))[:top]].tolist():
                start = int(m.first[g])
                text = " ".join(words[t] for t in m.tokens[start : start + m.order].tolist())
                diff = NgramDiff(text, m.order, int(ma[g]), int(mb[g]))
                sides[side].append((-float(share[g]), -int(ma[g] + mb[g]), text, diff))
    return tuple(x[3] for x in sorted(sides[0])[:top]), tuple(x[3] for x in sorted(sides[1])[:top])


def _ngrams(tokens: Sequence[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def highlight(hyp: Sequence[str], refs: Sequence[Sequence[str]], max_order: int = MAX_ORDER) -> tuple[Token, ...]:
    """Each token of ``hyp`` with the longest n-gram containing it that occurs in one of ``refs``.

    >>> [(t.text, t.matched) for t in highlight(["the", "cat", "ran"], [["a", "the", "cat"]])]
    [('the', 2), ('cat', 2), ('ran', 0)]
    """
    best = [0] * len(hyp)
    for n in range(1, max_order + 1):
        seen = set().union(*(_ngrams(r, n) for r in refs)) if refs else set()
        for i in range(len(hyp) - n + 1):
            if tuple(hyp[i : i + n]) in seen:
                for k in range(i, i + n):
                    best[k] = n
    return tuple(Token(t, m) for t, m in zip(hyp, best))


def _tokens(t: Texts, i: int, words: Sequence[str]) -> list[str]:
    return [words[k] for k in t.ids[t.off[i] : t.off[i + 1]].tolist()]


def examples(
    enc: Encoded, rows: MetricRows, a: int, b: int, top: int = 5
) -> tuple[tuple[Example, ...], tuple[Example, ...]]:
    """The ``top`` segments where A's sentence score most exceeds B's, and the other way round."""
    sa, sb = rows.scorer(rows.values[a]), rows.scorer(rows.values[b])
    diff = sa - sb
    order = np.argsort(-diff, kind="stable")
    picks = ([i for i in order[:top].tolist() if diff[i] > 0], [i for i in order[::-1][:top].tolist() if diff[i] < 0])
    out = []
    for pick in picks:
        items = []
        for i in pick:
            refs = [_tokens(enc.refs, r, enc.words) for r in range(int(enc.seg[i]), int(enc.seg[i + 1]))]
            ha, hb = _tokens(enc.hyps[a], i, enc.words), _tokens(enc.hyps[b], i, enc.words)
            items.append(Example(i + 1, float(sa[i]), float(sb[i]), " ".join(refs[0]) if refs else "",
                                 highlight(ha, refs), highlight(hb, refs)))  # fmt: skip
        out.append(tuple(items))
    return out[0], out[1]


def pair_analysis(
    enc: Encoded, orders: Sequence[Matches], rows: MetricRows, a: int, b: int, top: int = 10, n_examples: int = 5
) -> PairAnalysis:
    """N-gram differences and examples of systems ``a`` and ``b`` (indices into ``enc.systems`` and ``orders``'
    hypotheses, which must be in the same order)."""
    better_a, better_b = ngram_differences(orders, a, b, enc.words, top)
    ex_a, ex_b = examples(enc, rows, a, b, n_examples)
    return PairAnalysis(enc.systems[a], enc.systems[b], rows.metric, rows.fraction, better_a, better_b, ex_a, ex_b)
