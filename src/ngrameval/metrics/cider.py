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
from typing import ClassVar

import numpy as np

from ngrameval.errors import InputError
from ngrameval.metrics.policy import FloatArray
from ngrameval.ngrams.chars import gram_occurrences
from ngrameval.ngrams.stats import mean_of_rows, mean_rows
from ngrameval.ngrams.texts import IntArray, Texts
from ngrameval.text.pipeline import Encoder, Preprocess
from ngrameval.validate import MAX_ORDER, integer, number

REFERENCES = {True: "pycocoevalcap-1.2", False: "vrama91-cider"}  # what each variant reproduces


@dataclass(frozen=True)
class Cider:
    """CIDEr-D (``defended``: clipped, length-penalised, pycocoevalcap's ``Cider``) or CIDEr (the original);
    called on rows ``(..., 2)`` = (sum of segment scores, segments) -> mean segment score (0 .. 10)."""

    n: int = 4
    sigma: float = 6.0
    defended: bool = True

    higher_is_better: ClassVar[bool] = True
    needs_info: ClassVar[bool] = True  # document frequencies come from every reference of the set

    def __post_init__(self) -> None:
        integer(self.n, "CIDEr n", 1, MAX_ORDER)
        number(self.sigma, "CIDEr-D sigma", 0.0, low_open=True)

    @property
    def order_needed(self) -> int:
        return self.n

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


def _first_sorted(order: IntArray, first: IntArray) -> IntArray:
    """Entry indices sorted by (bin, first occurrence): the reference code adds in dict insertion order."""
    out: IntArray = np.lexsort((first, order))
    return out


def cider_scores(metric: Cider, hyps: Sequence[Texts], refs: Texts, seg: IntArray) -> list[FloatArray]:
    """Segment CIDEr(-D) of every system in ``hyps`` (token ids from one encoder) against ``refs``
    (segment ``s`` has references ``seg[s] .. seg[s + 1] - 1``, at least one)."""
    n_seg, n_ref, n = len(seg) - 1, len(refs), metric.n
    per_seg = np.diff(seg)
    if n_seg and per_seg.min() == 0:
        raise InputError(f"segment {int(np.argmin(per_seg)) + 1} has no reference; every segment needs at least one")
    all_ids = np.concatenate([refs.ids, *(h.ids for h in hyps)])
    lens = np.concatenate([refs.lens, *(h.lens for h in hyps)])
    off = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=off[1:])
    grams = gram_occurrences(Texts(all_ids, off), n)
    big = np.int64(max(grams.n_grams, 1))
    keys, first, tf = np.unique(grams.text * big + grams.gram, return_index=True, return_counts=True)
    text, gram = keys // big, keys % big
    order = grams.order[first]
    owner = np.repeat(np.arange(n_seg, dtype=np.int64), per_seg)
    # document frequency: segments whose references hold the n-gram
    on_ref = text < n_ref
    seg_gram = np.sort(owner[text[on_ref]] * big + gram[on_ref])
    seg_gram = seg_gram[np.r_[True, seg_gram[1:] != seg_gram[:-1]]] if len(seg_gram) else seg_gram
    df = np.bincount(seg_gram % big, minlength=int(big)).astype(np.float64)
    log_df = np.log(np.maximum(1.0, df))
    log_s = np.log(float(n_seg)) if n_seg else 0.0
    vec = tf.astype(np.float64) * (log_s - log_df[gram])
    # norms per (text, order), summed in each text's n-gram order of first appearance
    srt = _first_sorted(text * n + order, first)
    # the reference code squares with pow(x, 2) on NumPy scalars (libm pow), which is not always x * x
    squares = np.array([x**2 for x in vec.tolist()], dtype=np.float64)
    sq = np.bincount((text * n + order)[srt], weights=squares[srt], minlength=len(lens) * n)
    norm = np.sqrt(sq).reshape(len(lens), n)
    bigrams = np.maximum(lens - 1, 0)
    out = []
    for k in range(len(hyps)):
        base = n_ref + k * n_seg
        # each (reference, n-gram) entry meets the same n-gram of its segment's hypothesis (absent: 0)
        want = (base + owner[text[on_ref]]) * big + gram[on_ref]
        at = np.minimum(np.searchsorted(keys, want), len(keys) - 1)
        hit = keys[at] == want
        r_idx = np.flatnonzero(on_ref)[hit]
        h_idx = at[hit]
        hv, rv = vec[h_idx], vec[r_idx]
        prod = np.minimum(hv, rv) * rv if metric.defended else hv * rv
        srt = _first_sorted(text[r_idx] * n + order[r_idx], first[h_idx])  # hypothesis n-gram order
        dot = np.bincount((text[r_idx] * n + order[r_idx])[srt], weights=prod[srt], minlength=n_ref * n)
        dot = dot.reshape(n_ref, n)
        nh, nr = norm[base + owner], norm[:n_ref]
        both = (nh != 0) & (nr != 0)
        sim = np.where(both, dot / np.where(both, nh * nr, 1.0), dot)
        if metric.defended:
            delta = (bigrams[base + owner] - bigrams[:n_ref]).astype(np.float64)
            uniq, inv = np.unique(delta, return_inverse=True)
            # Python's float power, as the reference code's ``np.e ** (-(delta ** 2) / (2 * sigma ** 2))``
            pen = np.array([np.e ** (-(d**2) / (2 * metric.sigma**2)) for d in uniq.tolist()])
            sim = sim * pen[inv.reshape(-1)][:, None]
        # sum over references in order (bincount adds sequentially), mean over orders, / refs, x 10
        total = np.stack([np.bincount(owner, weights=sim[:, j], minlength=n_seg) for j in range(n)], axis=1)
        score = total.mean(axis=1) if n_seg else np.zeros(0)
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
