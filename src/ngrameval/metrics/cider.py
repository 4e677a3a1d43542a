"""CIDEr (Vedantam, Zitnick & Parikh 2015) and CIDEr-D exactly as their reference code computes them.

Each text is a TF-IDF vector per order n = 1..N: the entry of n-gram g is ``tf(g) * idf(g)`` with

    idf(g) = log(S) - log(max(1, df(g)))

S the number of segments of the evaluated set and df(g) the number of segments whose references contain
g (document frequencies from the references of the evaluated set only; an n-gram no reference has gets
log(S)). Against reference r of its segment a hypothesis h scores, per order,

    CIDEr   : sim_n = <h_n, r_n> / (|h_n| |r_n|)                                  (vrama91/cider, "corpus" df)
    CIDEr-D : sim_n = sum_g min(h_n[g], r_n[g]) r_n[g] / (|h_n| |r_n|) * exp(-delta^2 / (2 sigma^2))
                                                                                   (pycocoevalcap 1.2 ``Cider``)

(a product of 0 norms leaves the numerator, which is then 0), and the segment score is

    10 * mean over n of (sum over references of sim_n) / (number of references)

Quirks kept from the reference code: delta is the difference of the texts' *bigram* counts
(``max(len - 1, 0)``, its ``if n == 1: length += term_freq``), so an empty text and a one-word text have
the same length; sigma = 6; texts are split on whitespace; an empty hypothesis or reference has a zero
vector (its similarities are 0, and an empty reference still counts in the number of references). With a
single segment every idf is 0 and every score 0. The authors' code only counts n-grams up to 4 (its
``precook`` default): for N > 4 it averages zeros for the higher orders and for N < 4 it fails; here
every order 1..N is counted, so the numbers agree for N = 4, the default.

CIDEr is not a sum of per-segment statistics (df is a property of the whole set): the corpus score is
the mean of the segment scores, as the reference code reports it, so rows are ``(score, 1)`` (like PINC
and SE). Resampling (bootstrap, approximate randomisation) re-averages these segment scores: the
document frequencies stay those of the full evaluated set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ngrameval.errors import InputError
from ngrameval.metrics.policy import FloatArray
from ngrameval.metrics.rows import Batch, RowMetric, Rows
from ngrameval.ngrams.stats import mean_of_rows, mean_rows
from ngrameval.ngrams.texts import IntArray, Texts
from ngrameval.text.pipeline import Encoder, Preprocess
from ngrameval.text.validate import MAX_ORDER, MAX_SQUARED, integer, number

REFERENCES = {True: "pycocoevalcap-1.2", False: "vrama91-cider"}  # what each variant reproduces


@dataclass(frozen=True)
class Cider(RowMetric):
    """CIDEr-D (``defended``: clipped, length-penalised, pycocoevalcap's ``Cider``) or CIDEr (the original);
    called on rows ``(..., 2)`` = (sum of segment scores, segments) -> mean segment score (0 .. 10)."""

    n: int = 4
    sigma: float = 6.0
    defended: bool = True

    higher_is_better: ClassVar[bool] = True
    corpus_wide: ClassVar[bool] = True  # document frequencies come from every reference of the set

    def __post_init__(self) -> None:
        integer(self.n, "CIDEr n", 1, MAX_ORDER)
        number(self.sigma, "CIDEr-D sigma", 1 / MAX_SQUARED, MAX_SQUARED)  # sigma ** 2 finite and positive

    @property
    def order_needed(self) -> int:
        return self.n

    def rows(self, batch: Batch) -> Rows:
        """Rows ``(CIDEr, 1)``; df over every reference of the batch (:func:`cider_rows`)."""
        flat, seg = batch.flat
        return Rows(tuple(cider_rows(self, batch.systems, flat, seg, batch.pre)), self)

    def __call__(self, values: FloatArray) -> FloatArray:
        """Mean CIDEr of summed ``(score, 1)`` rows.

        >>> Cider()(np.array([[3.0, 2.0], [0.0, 0.0]]))
        array([1.5, 0. ])
        """
        return mean_of_rows(values)

    def display_name(self) -> str:
        return "CIDEr-D" if self.defended else "CIDEr"

    def signature(self) -> str:
        sigma = f"|sigma:{self.sigma:g}" if self.defended else ""
        return f"n:{self.n}{sigma}|df:refs|ref:{REFERENCES[self.defended]}"


def cider(**kwargs: object) -> Cider:
    """The original CIDEr (no clipping, no length penalty)."""
    return Cider(defended=False, **kwargs)  # type: ignore[arg-type]


def _sort_rows(*cols: IntArray) -> list[IntArray]:
    """The columns (non-negative integers) reordered so that their rows are sorted, the first column most
    significant: one SIMD ``np.sort`` of the columns packed into int64 keys when their bits fit, else a lexsort."""
    widths = [int(c.max()).bit_length() if len(c) else 0 for c in cols]
    if sum(widths) > 63:
        at = np.lexsort(cols[::-1])
        return [c[at] for c in cols]
    key = cols[0].astype(np.int64)
    for c, w in zip(cols[1:], widths[1:], strict=True):
        key <<= w
        key |= c
    key.sort()
    out = []
    for w in reversed(widths[1:]):
        out.append(key & ((1 << w) - 1))
        key >>= w
    return [key, *reversed(out)]


def _squares(tf: IntArray, df: IntArray, idf: FloatArray) -> FloatArray:
    """``(tf * idf[df]) ** 2`` element-wise, squared as the reference code squares: ``pow(x, 2)`` (libm pow,
    which is not always ``x * x``), computed once per distinct (tf, df) pair, not per entry."""
    width = len(idf)
    code = tf.astype(np.int64) * width + df
    top = int(code.max()) + 1 if len(code) else 0
    if top <= max(1 << 22, 4 * len(code)):
        present = np.zeros(top, dtype=bool)
        present[code] = True
        table = np.zeros(top)
        which = np.flatnonzero(present)
        table[which] = [(float(c // width) * float(idf[c % width])) ** 2 for c in which.tolist()]
        out: FloatArray = table[code]
        return out
    uniq, inv = np.unique(code, return_inverse=True)
    vals = np.array([(float(c // width) * float(idf[c % width])) ** 2 for c in uniq.tolist()], dtype=np.float64)
    out = vals[inv.reshape(-1)]
    return out


def _layout(hyps: Sequence[Texts], refs: Texts, seg: IntArray) -> tuple[Texts, IntArray, IntArray]:
    """All texts in one array, segment by segment: the segment's hypothesis of each system, then its
    references. Returns the texts, the position of each reference ``(refs,)`` and of each hypothesis
    ``(systems, segments)``."""
    n_seg, n_ref, n_sys = len(seg) - 1, len(refs), len(hyps)
    owner = np.repeat(np.arange(n_seg, dtype=np.int64), np.diff(seg))
    ref_at = n_sys * (owner + 1) + np.arange(n_ref, dtype=np.int64)
    hyp_at = (n_sys * np.arange(n_seg) + seg[:-1])[None, :] + np.arange(n_sys)[:, None]
    sources = [refs, *hyps]
    shift = np.cumsum([0] + [len(t.ids) for t in sources])
    starts = np.concatenate([t.off[:-1] + sh for t, sh in zip(sources, shift.tolist(), strict=False)])
    ids = np.concatenate([t.ids for t in sources])
    src = np.empty(n_ref + n_sys * n_seg, dtype=np.int64)
    src[ref_at] = np.arange(n_ref)
    src[hyp_at.reshape(-1)] = n_ref + np.arange(n_sys * n_seg)
    lens = np.concatenate([t.lens for t in sources])[src]
    off = np.zeros(len(src) + 1, dtype=np.int64)
    np.cumsum(lens, out=off[1:])
    at = np.repeat(starts[src] - off[:-1], lens) + np.arange(off[-1])
    return Texts(ids[at], off), ref_at, hyp_at


def cider_scores(metric: Cider, hyps: Sequence[Texts], refs: Texts, seg: IntArray) -> list[FloatArray]:
    """Segment CIDEr(-D) of every system in ``hyps`` (token ids from one encoder) against ``refs``
    (segment ``s`` has references ``seg[s] .. seg[s + 1] - 1``, at least one).

    Per order, every n-gram occurrence is one int64 key (n-gram, text, position in the text); one sort groups
    them by n-gram, and within an n-gram by segment (hypotheses before references, by the layout of
    :func:`_layout`), which gives term and document frequencies and each reference n-gram's match in its
    segment's hypothesis. Sums run in the reference code's order: each text's n-grams in order of first
    appearance (norms) and the hypothesis' n-grams in that order (dot products)."""
    n_seg, n_ref, n, n_sys = len(seg) - 1, len(refs), metric.n, len(hyps)
    per_seg = np.diff(seg)
    if n_seg and per_seg.min() == 0:
        raise InputError(f"segment {int(np.argmin(per_seg)) + 1} has no reference; every segment needs at least one")
    if not n_seg:
        return [np.zeros(0) for _ in hyps]
    owner = np.repeat(np.arange(n_seg, dtype=np.int64), per_seg)
    texts, ref_at, hyp_at = _layout(hyps, refs, seg)
    n_texts, lens = len(texts), texts.lens
    n_tok = int(texts.off[-1])
    # int32 indices when they fit: half the memory traffic (fresh pages are much of the time here)
    idx: type[np.signedinteger[Any]] = np.int32 if max(n_tok, n_texts) < 2**31 - 1 else np.int64
    # each text's tag: segment * (systems + 1) + (its system, or ``systems`` for a reference)
    tags = n_sys + 1
    text_tag = np.empty(n_texts, dtype=np.int64)
    text_tag[ref_at] = owner * tags + n_sys
    text_tag[hyp_at] = np.arange(n_seg)[None, :] * tags + np.arange(n_sys)[:, None]
    text_tag = text_tag.astype(idx) if n_seg * tags < 2**31 else text_tag
    text_ref = np.full(n_texts, -1, dtype=np.int64)
    text_ref[ref_at] = np.arange(n_ref)
    tok = texts.ids
    vocab = int(tok.max()) + 1 if n_tok else 1
    tok_text = np.repeat(np.arange(n_texts, dtype=idx), lens)
    text_start = texts.off[:-1].astype(idx)
    local = np.arange(n_tok, dtype=idx) - text_start[tok_text]  # position within the text
    rest = lens.astype(idx)[tok_text] - local  # tokens from each position to the end of its text
    # idf by document frequency: log(S) - log(max(1, df))
    idf = np.log(float(n_seg)) - np.log(np.maximum(1.0, np.arange(n_seg + 1, dtype=np.float64)))
    sq_norm = np.zeros((n_texts, n))
    dots = [np.zeros((n_ref, n)) for _ in hyps]
    pos = np.arange(n_tok, dtype=idx)  # start positions of the current order's n-grams
    gid = np.zeros(n_tok, dtype=idx)  # n-gram id (this order) of the n-gram starting at each position
    # work buffers, reused by every order (each order has fewer n-grams than the one before)
    key_buf, at_buf = np.empty(n_tok, dtype=np.int64), np.empty(n_tok, dtype=idx)
    gram_buf, txt_buf = np.empty(n_tok, dtype=idx), np.empty(n_tok, dtype=idx)
    new_buf, weight = np.empty(n_tok, dtype=bool), np.empty(n_tok)
    local_bits = max(int(lens.max()) - 1, 0).bit_length()
    shift = max(n_texts - 1, 0).bit_length() + local_bits
    for j in range(n):
        if j:
            pos = pos[rest[pos] > j]
        m = len(pos)
        if not m:
            break
        key, at, gram, txt, new = key_buf[:m], at_buf[:m], gram_buf[:m], txt_buf[:m], new_buf[:m]
        if j:  # (id of the (n-1)-gram prefix, last token): exact
            np.multiply(gid[pos], vocab, out=key, dtype=np.int64)
            key += tok[pos + j]
        else:
            key[:] = tok
        # occurrences by n-gram, then text and position (= segment, text, position): one sort of packed keys
        if int(key.max()).bit_length() + shift <= 63:
            key <<= shift
            key |= tok_text[pos].astype(np.int64) << local_bits
            key |= local[pos]
            key.sort()
            np.bitwise_and(key, (1 << shift) - 1, out=at, casting="unsafe")
            key >>= shift
            np.right_shift(at, local_bits, out=txt)
            at &= (1 << local_bits) - 1
            at += text_start[txt]
        else:
            by = np.argsort(key, kind="stable")
            at[:] = pos[by]
            key[:] = key[by]
            np.take(tok_text, at, out=txt)
        new[0] = True
        np.not_equal(key[1:], key[:-1], out=new[1:])
        np.cumsum(new, dtype=idx, out=gram)
        gram -= 1
        gid[at] = gram
        new[1:] |= txt[1:] != txt[:-1]
        first = np.flatnonzero(new)  # first occurrence of each n-gram in each text
        tf = np.empty(len(first), dtype=idx)
        np.subtract(first[1:], first[:-1], out=tf[:-1], casting="unsafe")
        tf[-1] = m - first[-1]
        e_gram, e_txt, e_at = gram[first], txt[first], at[first]
        e_tag = text_tag[e_txt]
        e_kind = e_tag % tags
        # runs: the entries of one n-gram in one segment (the segment's hypotheses first, then its references)
        run = np.empty(len(first), dtype=bool)
        run[0] = True
        e_tag //= tags
        run[1:] = (e_gram[1:] != e_gram[:-1]) | (e_tag[1:] != e_tag[:-1])
        run_id = np.cumsum(run, dtype=idx)
        # document frequency: segments whose references hold the n-gram (runs that end with a reference)
        ends = np.flatnonzero(run)
        ends[:-1] = ends[1:] - 1
        ends[-1] = len(first) - 1
        df = np.bincount(e_gram[ends[e_kind[ends] == n_sys]], minlength=int(gram[-1]) + 1)
        # norms: squares summed in each text's order of first appearance (bincount adds in array order;
        # the zeros of repeated and absent positions add nothing)
        weight[:] = 0.0
        weight[e_at] = _squares(tf, df[e_gram], idf)
        sq_norm[:, j] = np.bincount(tok_text, weights=weight, minlength=n_texts)
        r_idx = np.flatnonzero(e_kind == n_sys)
        for k in range(n_sys):
            # the last entry of system k at or before each reference entry: a match if in the same run
            last = np.where(e_kind == k, np.arange(len(first), dtype=idx), -1)
            np.maximum.accumulate(last, out=last)
            h = last[r_idx]
            hit = (h >= 0) & (run_id[np.maximum(h, 0)] == run_id[r_idx])
            p, h = r_idx[hit], h[hit]
            # per reference, matches in the hypothesis' order of first appearance
            ref_i, h_at, tf_h, tf_r = _sort_rows(text_ref[e_txt[p]], e_at[h], tf[h], tf[p])
            w = idf[df[gid[h_at]]]
            hv, rv = tf_h.astype(np.float64) * w, tf_r.astype(np.float64) * w
            prod = np.minimum(hv, rv) * rv if metric.defended else hv * rv
            dots[k][:, j] = np.bincount(ref_i, weights=prod, minlength=n_ref)
    norm = np.sqrt(sq_norm)
    bigrams = np.maximum(lens - 1, 0)
    nr = norm[ref_at]
    out = []
    for k in range(n_sys):
        h_text = hyp_at[k][owner]
        dot = dots[k]
        nh = norm[h_text]
        both = (nh != 0) & (nr != 0)
        sim = np.where(both, dot / np.where(both, nh * nr, 1.0), dot)
        if metric.defended:
            delta = (bigrams[h_text] - bigrams[ref_at]).astype(np.float64)
            uniq, inv = np.unique(delta, return_inverse=True)
            # Python's float power, as the reference code's ``np.e ** (-(delta ** 2) / (2 * sigma ** 2))``
            pen = np.array([np.e ** (-(d**2) / (2 * metric.sigma**2)) for d in uniq.tolist()])
            sim = sim * pen[inv.reshape(-1)][:, None]
        # sum over references in order (bincount adds sequentially), mean over orders, / refs, x 10
        total = np.stack([np.bincount(owner, weights=sim[:, j], minlength=n_seg) for j in range(n)], axis=1)
        score = total.mean(axis=1)
        out.append(score / per_seg * 10.0)
    return out


def cider_rows(
    metric: Cider, systems: Sequence[Sequence[str]], refs: Sequence[str], seg: IntArray, pre: Preprocess
) -> list[FloatArray]:
    """``(segments, 2)`` rows ``(CIDEr, 1)`` of each system; the references of segment ``s`` are
    ``refs[seg[s]:seg[s + 1]]``, tokenized by ``pre`` (all of them at once: df needs the whole set)."""
    enc = Encoder(pre)
    ref_texts = Texts(*enc.encode(refs))
    hyp_texts = [Texts(*enc.encode(h)) for h in systems]
    return [mean_rows(s) for s in cider_scores(metric, hyp_texts, ref_texts, seg)]
