"""chrF (Popović 2015) and chrF++ (Popović 2017) exactly as sacreBLEU 2.x computes them.

Per order i (character orders 1..``char_order``, then word orders 1..``word_order``) a segment has three
counts — hypothesis n-grams ``h_i`` (0 when the reference has no n-gram of that order), reference
n-grams ``r_i`` and clipped matches ``m_i`` — summable rows ``[h_1, r_1, m_1, h_2, ...]``. From a row (one
segment) or a sum of rows (a corpus, a resample)::

    P_i = m_i / h_i,  R_i = m_i / r_i
    default (effective order): P, R = means of P_i, R_i over orders with h_i > 0 and r_i > 0
        chrF = (1 + beta^2) P R / (beta^2 P + R)                 (0 when P + R = 0)
    eps_smoothing (chrF++.py, Moses, NLTK): chrF = mean over all orders of
        (1 + beta^2) P_i R_i / (beta^2 P_i + R_i),  P_i or R_i = 1e-16 when its count is 0,
        a term = 1e-16 when its denominator is 0

With several references sacreBLEU keeps, per segment, the counts against the reference whose
sentence chrF is highest (the first on ties) and sums those; so do we.

Relation to AEv (SPEC §2) over character n-grams — the character plane, ``plane --unit char`` (the
``char`` tokenizer: every character a token, whitespace removed exactly as chrF removes it by default).
With ``alpha = 1 / (1 + beta^2)`` (:func:`alpha_of_beta`; beta = 2 is alpha = 0.2, leaning to recall as
alpha -> 0 is recall), ``(1 + beta^2) P R / (beta^2 P + R) = P R / (alpha R + (1 - alpha) P)``: chrF's
combination of P and R *is* AEv's. Both take per-order precisions and recalls from corpus sums of counts
and combine a mean of each. Exactly:

* equal (up to AEv's ``exp(log P)`` rounding, ~1e-16): chrF-beta with ``nc = 1, nw = 0`` and AEv(alpha, 1)
  over the ``char`` tokenizer, same case setting, with AEv's penalties neutral (``W = inf``; ``B`` large enough
  that ``B |c| >= |r|``, e.g. 1e9), one reference per segment and no empty reference (after whitespace
  removal) — at corpus and sentence level. With one reference AEv's clipped hypothesis matches
  ``sum min(c_hyp, max_ref c_ref)`` and clipped reference matches ``sum min(c_ref, c_hyp)`` are both chrF's
  ``m``, so P(1) and R(1) are chrF's P_1 and R_1 (tests/test_chrf_plane.py).
* not equal for N > 1: chrF averages P_n and R_n *arithmetically* over orders, AEv *geometrically*. F is
  increasing in P and R, the arithmetic mean is >= the geometric one, and chrF's P_n is >= AEv's (it
  leaves out the hypotheses of segments whose reference is too short for order n, which match nothing), so
  with one reference per segment and neutral penalties AEv(alpha, N) <= chrF-beta(nc = N) always, empty
  references included (equal at N > 1 only when every order has the same P_n and the same R_n); an order
  without a match makes AEv 0 and leaves chrF positive.
* not equal in general, because of: AEv's brevity and wordiness penalties (chrF has none); several
  references (chrF keeps the counts of the reference with the best sentence chrF, AEv clips against the
  maximum over all references and pools recall over all of them); chrF's effective order (an order with
  no hypothesis or no reference n-gram is left out of the means; in AEv it makes its side 0) and its
  ``h_i = 0`` for a segment whose reference has no n-gram of order i (so an empty reference drops its
  hypothesis from P even at N = 1); ``eps_smoothing`` (a mean of per-order F scores, not an F of means);
  ``whitespace=True`` (the character plane removes whitespace); and chrF++, whose word orders are averaged
  together with the character orders (no AEv member mixes units).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ngrameval import _overlap
from ngrameval.errors import ConfigError, InputError
from ngrameval.metrics.policy import FloatArray
from ngrameval.metrics.rows import Batch, RowMetric, Rows, raw_text_ignored
from ngrameval.ngrams.chars import WordUnits, char_units, ngram_counts
from ngrameval.ngrams.texts import IntArray, Texts
from ngrameval.text.pipeline import Preprocess
from ngrameval.text.validate import MAX_ORDER, MAX_SQUARED, integer, number

EPS = 1e-16  # sacreBLEU's eps of chrF++.py smoothing
DEFAULT_CHUNK = 5_000  # segments per counting pass (memory stays flat)


def alpha_of_beta(beta: float) -> float:
    """The AEv alpha whose combination ``P R / (alpha R + (1 - alpha) P)`` equals F_beta: 1 / (1 + beta^2).

    >>> alpha_of_beta(2.0)
    0.2
    """
    return 1.0 / (1.0 + beta * beta)


@dataclass(frozen=True)
class ChrF(RowMetric):
    """chrF / chrF++ configuration; called on rows ``(..., 3 * (char_order + word_order))`` -> fractions."""

    char_order: int = 6
    word_order: int = 0
    beta: float = 2
    whitespace: bool = False
    eps_smoothing: bool = False

    higher_is_better: ClassVar[bool] = True

    def __post_init__(self) -> None:
        integer(self.char_order, "chrF char_order (nc)", 0, MAX_ORDER)
        integer(self.word_order, "chrF word_order (nw)", 0, MAX_ORDER)
        if self.char_order + self.word_order == 0:
            raise ConfigError("chrF needs char_order + word_order >= 1")
        number(self.beta, "chrF beta", 0.0, MAX_SQUARED)  # beta ** 2 finite, with room for its products

    @property
    def n_orders(self) -> int:
        return self.char_order + self.word_order

    def __call__(self, values: FloatArray) -> FloatArray:
        """chrF in [0, 1] of each row of summed statistics.

        >>> ChrF(char_order=1)(np.array([4.0, 4.0, 2.0]))
        array(0.5)
        """
        return self.f_score(values, 1.0)

    def f_score(self, values: FloatArray, scale: float = 100.0) -> FloatArray:
        """``scale`` x chrF with sacreBLEU's operations in its order (``scale`` 100: its sentence score,
        bit for bit, which decides the best reference)."""
        v = np.asarray(values, dtype=np.float64)
        factor = float(self.beta) ** 2
        shape = v.shape[:-1]
        if self.eps_smoothing:
            total = np.zeros(shape)
        else:
            avg_p, avg_r, eff = np.zeros(shape), np.zeros(shape), np.zeros(shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            for i in range(self.n_orders):
                h, r, m = v[..., 3 * i], v[..., 3 * i + 1], v[..., 3 * i + 2]
                p = np.where(h > 0, m / np.where(h > 0, h, 1.0), EPS)
                rc = np.where(r > 0, m / np.where(r > 0, r, 1.0), EPS)
                if self.eps_smoothing:
                    den = factor * p + rc
                    total = total + np.where(den > 0, (1 + factor) * p * rc / np.where(den > 0, den, 1.0), EPS)
                else:
                    both = (h > 0) & (r > 0)
                    avg_p = avg_p + np.where(both, p, 0.0)
                    avg_r = avg_r + np.where(both, rc, 0.0)
                    eff = eff + both
            if self.eps_smoothing:
                return np.asarray(scale * total / self.n_orders)
            avg_p = np.where(eff > 0, avg_p / np.where(eff > 0, eff, 1.0), 0.0)
            avg_r = np.where(eff > 0, avg_r / np.where(eff > 0, eff, 1.0), 0.0)
            num = (1 + factor) * avg_p * avg_r
            den = factor * avg_p + avg_r
            out = np.where(avg_p + avg_r != 0, scale * (num / np.where(den != 0, den, 1.0)), 0.0)
        return np.asarray(out)

    def display_name(self) -> str:
        return f"chrF{self.beta:g}" + "+" * self.word_order

    def text_signature(self, lowercase: bool) -> str:
        """The text part of the signature: chrF reads raw characters (no tokenizer, stemmer or stop words)."""
        return f"case:{'lc' if lowercase else 'mixed'}"

    def ignored_options(self, own: Preprocess, given: Preprocess) -> list[tuple[str, str]]:
        return raw_text_ignored(given, "chrF reads raw characters")

    def text_settings(self, pre: Preprocess) -> str:
        return self.text_signature(pre.lowercase) + pre.norm_signature()

    def rows(self, batch: Batch) -> Rows:
        """Summable character and word n-gram statistics of the raw text (:func:`chrf_rows`)."""
        systems, flat, seg = batch.raw
        return Rows(tuple(chrf_rows(self, systems, flat, seg, batch.pre.lowercase)), self)

    def signature(self) -> str:
        eff = "no" if self.eps_smoothing else "yes"
        space = "yes" if self.whitespace else "no"
        return f"eff:{eff}|nc:{self.char_order}|nw:{self.word_order}|space:{space}"


def chrf_plus(**kwargs: object) -> ChrF:
    """chrF++: word_order 2 unless given."""
    kwargs.setdefault("word_order", 2)
    return ChrF(**kwargs)  # type: ignore[arg-type]


def _units(metric: ChrF, lines: Sequence[str], words: WordUnits) -> tuple[Texts, Texts | None]:
    chars = char_units(lines, metric.whitespace)
    return chars, (words(lines) if metric.word_order else None)


def per_reference(
    metric: ChrF, hyp: tuple[Texts, Texts | None], ref: tuple[Texts, Texts | None], owner: IntArray
) -> FloatArray:
    """``(references, 3 * orders)``: each reference's ``[h, r, m]`` counts against its segment's hypothesis
    (``owner[k]`` = the segment of reference ``k``).

    The clipped matches come from the counting kernel (``ngrameval._overlap``) with every (hypothesis,
    reference) pair as its own segment, where its ``match`` is ``sum_g min(count_hyp(g), count_ref(g))``."""
    n_refs = len(owner)
    pairs = np.arange(n_refs + 1, dtype=np.int64)
    parts = []
    for k, order in ((0, metric.char_order), (1, metric.word_order)):
        h_units, r_units = hyp[k], ref[k]
        if order == 0 or h_units is None or r_units is None:
            continue
        if len(h_units) != n_refs:  # several references somewhere: the hypothesis once per reference
            h_units = h_units.take(owner)
        ((match_b, *_),) = _overlap.overlap(r_units.ids, r_units.off, pairs, [(h_units.ids, h_units.off)], order, None)
        match = np.frombuffer(match_b, dtype=np.int64).reshape(n_refs, order)
        r_total = ngram_counts(r_units.lens, order)
        h_total = np.where(r_total > 0, ngram_counts(h_units.lens, order), 0)
        parts.append(np.stack([h_total, r_total, match], axis=-1).reshape(n_refs, 3 * order))
    return np.concatenate(parts, axis=1).astype(np.float64)


def best_rows(metric: ChrF, rows: FloatArray, seg: IntArray) -> FloatArray:
    """Per segment, the row of the reference with the highest sentence chrF (the first on ties)."""
    if len(rows) == len(seg) - 1:  # one reference per segment
        return rows
    f = metric.f_score(rows)
    owner = np.repeat(np.arange(len(seg) - 1), np.diff(seg))
    top = np.maximum.reduceat(f, seg[:-1]) if len(f) else f
    is_top = np.flatnonzero(f == top[owner])
    _, first = np.unique(owner[is_top], return_index=True)
    out: FloatArray = rows[is_top[first]]
    return out


def chrf_rows(
    metric: ChrF,
    systems: Sequence[Sequence[str]],
    refs: Sequence[str],
    seg: IntArray,
    lowercase: bool = False,
    chunk: int = DEFAULT_CHUNK,
) -> list[FloatArray]:
    """Summable per-segment chrF statistics of each system; the references of segment ``s`` are
    ``refs[seg[s]:seg[s + 1]]`` (at least one each). ``lowercase``: ``str.lower`` first (sacreBLEU ``-lc``)."""
    n_seg = len(seg) - 1
    per_seg = np.diff(seg)
    if n_seg and per_seg.min() == 0:
        raise InputError(f"segment {int(np.argmin(per_seg)) + 1} has no reference; every segment needs at least one")
    out = [np.zeros((n_seg, 3 * metric.n_orders)) for _ in systems]
    words = WordUnits()  # word ids shared by every chunk (its tables grow with the distinct words only)
    for start in range(0, n_seg, chunk):
        stop = min(start + chunk, n_seg)
        lo, hi = int(seg[start]), int(seg[stop])
        ref_lines = [x.lower() for x in refs[lo:hi]] if lowercase else list(refs[lo:hi])
        ref_units = _units(metric, ref_lines, words)
        local = seg[start : stop + 1] - lo
        owner = np.repeat(np.arange(stop - start), np.diff(local))
        for acc, hyps in zip(out, systems):
            lines = [x.lower() for x in hyps[start:stop]] if lowercase else list(hyps[start:stop])
            rows = per_reference(metric, _units(metric, lines, words), ref_units, owner)
            acc[start:stop] = best_rows(metric, rows, local)
    return out
