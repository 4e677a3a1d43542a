"""BLEU (Papineni et al. 2002) exactly as sacreBLEU 2.x, mteval-v13a.pl and NLTK compute it.

    BLEU = BP * exp( (1/N) * sum_n log p_n ),  BP = 1 if c >= r else exp(1 - r/c)

with c the hypothesis length and r the closest reference length (ties -> shorter), both summed over
the corpus. Smoothing (Chen & Cherry 2014): sacreBLEU's ``none``, ``floor``, ``add-k``, ``exp``;
``mteval`` (exp smoothing where an order the hypothesis is too short for counts as p = 1, as
mteval-v13a.pl's bleu_score does); and ``nltk0`` .. ``nltk7`` (NLTK's ``SmoothingFunction``
methods, with NLTK's max(1, t) denominators, its skipping of zero precisions, and method 5's "next"
precision being the 5-gram one whatever N is). The BLEU of summed rows is NLTK's ``corpus_bleu`` only when
no segment is shorter than N tokens and the smoothing is not 5, 6 or 7; :meth:`BLEU.nltk_corpus` is NLTK's
``corpus_bleu`` exactly. Methods 5, 6 and 7 can exceed 1 (NLTK's own formulas).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from ngrameval.errors import ConfigError
from ngrameval.metrics.policy import (
    SACREBLEU_SMOOTH,
    FloatArray,
    check_smooth_value,
    divide,
    exceed_penalty,
    reduce_last,
    rows_all,
    rows_any,
    smooth_label,
    smoothed_precisions,
    warn_undefined,
)
from ngrameval.metrics.rows import Details, RowMetric
from ngrameval.ngrams.stats import Stats
from ngrameval.text.validate import MAX_ORDER, integer, number

SMOOTH_METHODS = (*SACREBLEU_SMOOTH, "mteval", *(f"nltk{i}" for i in range(8)))
_BLOCK = 8192  # rows scored at a time by BLEU.__call__


@dataclass(frozen=True)
class BLEU(RowMetric):
    """Corpus or sentence BLEU from :class:`Stats` (scores in [0, 1])."""

    max_order: int = 4
    smooth_method: str = "exp"
    smooth_value: float | None = None
    effective_order: bool = False
    nltk_epsilon: float = 0.1
    nltk_alpha: float = 5.0
    nltk_k: float = 5.0

    name: ClassVar[str] = "BLEU"
    counted: ClassVar[bool] = True  # rows: the shared n-gram statistics
    higher_is_better: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if self.smooth_method not in SMOOTH_METHODS:
            raise ConfigError(f"unknown BLEU smoothing {self.smooth_method!r}; valid: {', '.join(SMOOTH_METHODS)}")
        if self.max_order < 1:
            raise ConfigError("BLEU max_order must be >= 1")
        if self.smooth_method == "nltk6" and self.max_order < 3:
            # NLTK's method6 asserts on the trigram precision: it fails (IndexError) below order 3
            raise ConfigError("BLEU smoothing nltk6 needs max_order >= 3 (NLTK's method6 reads the trigram precision)")

    @property
    def order_needed(self) -> int:
        # NLTK's method5 takes the 5-gram precision as the "next" one whatever the order
        return max(self.max_order, 5) if self.smooth_method in ("nltk5", "nltk7") else self.max_order

    def __call__(self, stats: Stats) -> FloatArray:
        """BLEU of each row of ``stats`` (of ``stats.total()`` for a corpus score)."""
        if self.smooth_method.startswith("nltk"):
            return self._nltk(stats)
        values = stats.values
        if values.ndim == 2 and len(values) > _BLOCK:
            # each row's score depends on that row alone: blocks of rows give the same floats, their temporaries
            # in cache and in memory used again (fresh arrays of every row cost a page fault per 4 KiB)
            out = np.empty(len(values))
            for a in range(0, len(values), _BLOCK):
                out[a : a + _BLOCK] = self._sacrebleu(Stats(values[a : a + _BLOCK], stats.max_order, stats.has_info))
            return out
        return self._sacrebleu(stats)

    def _sacrebleu(self, stats: Stats) -> FloatArray:
        """BLEU of each row of ``stats`` under one of sacreBLEU's smoothings (or ``mteval``)."""
        n = self.max_order
        correct, total = stats.match[..., :n], stats.total_ngrams[..., :n]
        bp = exceed_penalty(stats.ref_len, stats.hyp_len)
        if self.smooth_method == "mteval":
            prec, _ = smoothed_precisions(correct, total, "exp")
            # mteval-v13a.pl: log p = 0 for an order with no hypothesis n-gram, and always divide by N.
            prec = np.where(total > 0, prec, 1.0)
            return np.asarray(bp * np.exp(np.log(prec).sum(axis=-1) / n))
        prec, valid = smoothed_precisions(correct, total, self.smooth_method, self.smooth_value)
        positive = prec > 0
        np.copyto(prec, 1.0, where=~positive)  # (prec is smoothed_precisions' own array)
        logs = np.log(prec, out=prec)
        if self.effective_order:
            eff = np.maximum(valid.sum(axis=-1), 1)
            in_mean = np.arange(n) < eff[..., None]
            zero = np.any(in_mean & ~positive, axis=-1)
            logs = np.where(in_mean & positive, logs, 0.0)
            score = bp * np.exp(logs.sum(axis=-1) / eff)
        else:  # every order in the mean (log 1 = 0 where p = 0: that score is 0 below)
            zero = ~rows_all(positive)
            score = bp * np.exp(reduce_last(np.add, logs) / n)
        # sacreBLEU: no match at all -> 0; a zero precision in the mean -> log floor -> 0.
        return np.asarray(np.where(zero | ~rows_any(correct > 0), 0.0, score))

    def check(self) -> None:
        extra = 1 if self.smooth_method in ("nltk5", "nltk7") else 0  # these read order n + 1
        integer(self.max_order, f"BLEU n (max_order) with smoothing {self.smooth_method}", 1, MAX_ORDER - extra)
        check_smooth_value(self.smooth_method, self.smooth_value, "BLEU smooth_value")
        for field in ("nltk_epsilon", "nltk_alpha", "nltk_k"):
            number(getattr(self, field), f"BLEU {field}", 0.0, low_open=True)

    def details(self, order: int, nist: bool) -> Details:
        """:meth:`breakdown` of a summed row of statistics counted at ``order``."""

        def details(total: FloatArray) -> dict[str, Any] | None:
            return self.breakdown(Stats(total, order, nist))

        return details

    def breakdown(self, total: Stats) -> dict[str, Any] | None:
        """sacreBLEU's BLEU breakdown of one summed row, computed in its arithmetic (``100 * c / t``): the
        smoothed n-gram precisions x100 (0 from the first order without a hypothesis n-gram on), BP, the length
        ratio and both lengths; ``None`` for the nltk smoothings, whose precisions are per sentence."""
        if self.smooth_method.startswith("nltk") or total.values.ndim != 1:
            return None
        method = "exp" if self.smooth_method == "mteval" else self.smooth_method
        value = SACREBLEU_SMOOTH.get(method) if self.smooth_value is None else self.smooth_value
        precisions, halvings = [0.0] * self.max_order, 1.0
        for i in range(self.max_order if np.any(total.match[: self.max_order] > 0) else 0):  # no match: all 0
            c, t = float(total.match[i]), float(total.total_ngrams[i])
            if method == "add-k" and i >= 1:
                c, t = c + (value or 0.0), t + (value or 0.0)
            if t == 0:
                break
            if c > 0:
                precisions[i] = 100.0 * c / t
            elif method == "exp":
                halvings *= 2
                precisions[i] = 100.0 / (halvings * t)
            elif method == "floor":
                precisions[i] = 100.0 * (value or 0.0) / t
        hyp, ref = float(total.hyp_len), float(total.ref_len)
        bp = 1.0 if hyp >= ref else (0.0 if hyp == 0 else math.exp(1.0 - ref / hyp))
        return {"precisions": precisions, "bp": bp, "ratio": hyp / ref if ref > 0 else 0.0, "hyp_len": hyp,
                "ref_len": ref}  # fmt: skip

    def nltk_corpus(self, rows: Stats) -> float:
        """NLTK's ``corpus_bleu`` from per-segment ``rows`` (an ``nltk*`` smoothing): denominators are
        ``sum_i max(1, t_i)``, and, as NLTK passes the *last* segment to the smoothing function, method 5/7's
        "next" precision is the last segment's 5-gram precision and method 6's hypothesis n-gram count is
        the last segment's. (The metric of ``rows.total()`` differs when a segment is shorter than an order.)"""
        if not self.smooth_method.startswith("nltk"):
            raise ConfigError(f"nltk_corpus needs an nltk smoothing, got {self.smooth_method!r}")
        if len(rows.values) == 0:
            return 0.0
        total = rows.total()
        den = np.maximum(rows.total_ngrams, 1.0).sum(axis=0)
        last = rows.rows(slice(-1, None))
        p_next = self._precision5(last)[0] if self.smooth_method in ("nltk5", "nltk7") else None
        return float(self._nltk(total, den=den, p_next=p_next, l_total=last.total_ngrams[0]))

    @staticmethod
    def _precision5(stats: Stats) -> FloatArray:
        """NLTK's ``modified_precision(..., 5)``: 5-gram matches / max(1, 5-grams)."""
        if stats.max_order < 5:
            raise ConfigError("BLEU nltk5/nltk7 need statistics counted to order 5 (see BLEU.order_needed)")
        return np.asarray(divide(stats.match[..., 4], np.maximum(stats.total_ngrams[..., 4], 1.0)))

    def _nltk(
        self,
        stats: Stats,
        den: FloatArray | None = None,
        p_next: float | None = None,
        l_total: FloatArray | None = None,
    ) -> FloatArray:
        n = self.max_order
        method = int(self.smooth_method[4:])
        num = stats.match[..., :n].astype(np.float64)
        # NLTK: max(1, t) per sentence (corpus: the sum of those, given by nltk_corpus)
        den = np.maximum(stats.total_ngrams[..., :n], 1.0) if den is None else np.asarray(den)[..., :n]
        hyp_len = stats.hyp_len
        p = divide(num, den).copy()
        if method in (5, 7):
            p_next_arr = self._precision5(stats) if p_next is None else np.full(p.shape[:-1], p_next)
        zero = num == 0
        undefined = np.zeros(p.shape[:-1], dtype=bool)
        if method == 0:
            p = np.where(zero, sys.float_info.min, p)
        elif method == 1:
            p = np.where(zero, self.nltk_epsilon / den, p)
        elif method == 2:
            p[..., 1:] = (num[..., 1:] + 1) / (den[..., 1:] + 1)
        elif method == 3:
            k = np.cumsum(zero, axis=-1)
            p = np.where(zero, 1.0 / (2.0**k * den), p)
        if method in (4, 7):
            p = self._nltk4(p, zero, den, hyp_len)
        if method in (5, 7):
            p = self._nltk5(p, p_next_arr)
        if method == 6:
            counts = stats.total_ngrams[..., :n] if l_total is None else np.asarray(l_total)[..., :n]
            p, undefined = self._nltk6(p, num, counts)
        # NLTK: BP = 1 if c > r, 0 if c = 0, else exp(1 - r/c): the same as ours except at c = r = 0,
        # where there is no unigram match and the score is 0 either way.
        bp = exceed_penalty(stats.ref_len, hyp_len)
        with np.errstate(divide="ignore"):
            logs = np.where(p > 0, np.log(np.where(p > 0, p, 1.0)), 0.0)  # NLTK skips p = 0
        score = bp * np.exp(logs.sum(axis=-1) / n)
        no_unigram = stats.match[..., 0] == 0
        warn_undefined(undefined & ~no_unigram, "BLEU nltk6", "zero trigram precision")
        return np.asarray(np.where(no_unigram | undefined, 0.0, score))

    def _nltk4(self, p: FloatArray, zero: NDArray[np.bool_], den: FloatArray, hyp_len: FloatArray) -> FloatArray:
        hl = hyp_len[..., None]
        bites = zero & (hl > 1)
        k = np.cumsum(bites, axis=-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            smoothed = (1.0 / (2.0**k * self.nltk_k / np.log(np.where(hl > 1, hl, 2.0)))) / den
        return np.where(bites, smoothed, p)

    @staticmethod
    def _nltk5(p: FloatArray, p_next: FloatArray) -> FloatArray:
        out = np.empty_like(p)
        prev = p[..., 0] + 1.0
        nxt = np.concatenate([p[..., 1:], p_next[..., None]], axis=-1)
        for i in range(p.shape[-1]):
            prev = (prev + p[..., i] + nxt[..., i]) / 3.0
            out[..., i] = prev
        return out

    def _nltk6(self, p: FloatArray, num: FloatArray, total: FloatArray) -> tuple[FloatArray, FloatArray]:
        undefined = p[..., 2] == 0 if p.shape[-1] > 2 else np.zeros(p.shape[:-1], dtype=bool)
        out = p.copy()
        for i in range(2, p.shape[-1]):
            pi0 = np.where(
                out[..., i - 2] == 0, 0.0, out[..., i - 1] ** 2 / np.where(out[..., i - 2] == 0, 1.0, out[..., i - 2])
            )
            out[..., i] = (num[..., i] + self.nltk_alpha * pi0) / (total[..., i] + self.nltk_alpha)
        return out, undefined

    def display_name(self) -> str:
        return "BLEU" if self.max_order == 4 else f"BLEU-{self.max_order}"

    def signature(self) -> str:
        smooth = smooth_label(self.smooth_method, self.smooth_value)
        if smooth.startswith("nltk") and smooth != "nltk0":
            smooth += f"[eps={self.nltk_epsilon},alpha={self.nltk_alpha},k={self.nltk_k}]"
        return f"n:{self.max_order}|eff:{'yes' if self.effective_order else 'no'}|smooth:{smooth}"
