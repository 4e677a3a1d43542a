"""BLEU-1..4 and ROUGE-L as the coco-caption toolkit (``pycocoevalcap`` 1.2, ``Bleu`` and ``Rouge``)
computes them, on text tokenized as its PTB tokenizer leaves it (``tok:ptb-coco``, see
:mod:`ngrameval.text.ptb`).

coco BLEU-N (``bleu/bleu_scorer.py``, ``compute_score(option="closest")``), from summed :class:`Stats`::

    BLEU-N = BP * prod_{n=1..N} ((m_n + 1e-15) / (t_n + 1e-9)) ** (1 / N)
    ratio = (c + 1e-15) / (r + 1e-9),  BP = exp(1 - 1 / ratio) if ratio < 1 else 1

m_n clipped n-gram matches (clipped by the maximum count in any reference), t_n hypothesis n-grams, c the
hypothesis length, r the closest reference length (ties to the shorter), all summed over the corpus for
the corpus score and taken per segment for its per-image scores. The tiny constants are the toolkit's
(``tiny``, ``small``): a zero precision gives a score near 0 (1e-15 / t), never an undefined log; an empty
hypothesis scores 0. Powers and exponentials are Python's (libm), as the toolkit computes them.

coco ROUGE-L (``rouge/rouge.py``, Lin 2004 with beta = 1.2 "based on discussion with Hovy")::

    P = max over references of LCS / |h|,  R = max over references of LCS / |r|   (separately)
    ROUGE-L = (1 + beta^2) P R / (R + beta^2 P)   (0 when P = 0 or R = 0)

and the system score is the mean over segments (rows ``(score, 1)``). The toolkit splits on single
spaces, so an empty text is one empty token: an empty hypothesis against an empty reference has LCS 1
and scores 1; against a non-empty reference 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from rapidfuzz.distance import LCSseq

from ngrameval.errors import InputError
from ngrameval.metrics.policy import FloatArray
from ngrameval.metrics.rows import Batch, RowMetric, Rows
from ngrameval.ngrams.stats import Stats, mean_of_rows, mean_rows
from ngrameval.ngrams.texts import IntArray, Texts
from ngrameval.text.pipeline import Encoder, Preprocess
from ngrameval.text.validate import MAX_ORDER, MAX_SQUARED, integer, number

TINY, SMALL = 1e-15, 1e-9  # bleu_scorer.py's constants
VERSION = "pycocoevalcap-1.2"


def _libm(fn: Callable[[float], float], x: FloatArray) -> FloatArray:
    """``fn`` of every element with Python floats: NumPy's SIMD exp and pow may differ from libm by an ulp."""
    flat = [fn(v) for v in np.asarray(x, dtype=np.float64).ravel().tolist()]
    return np.asarray(flat, dtype=np.float64).reshape(np.shape(x))


@dataclass(frozen=True)
class CocoBleu(RowMetric):
    """coco-caption BLEU-N from :class:`Stats` (fractions in [0, 1])."""

    max_order: int = 4

    counted: ClassVar[bool] = True  # rows: the shared n-gram statistics
    higher_is_better: ClassVar[bool] = True

    def __post_init__(self) -> None:
        integer(self.max_order, "coco BLEU n", 1, MAX_ORDER)

    @property
    def order_needed(self) -> int:
        return self.max_order

    def __call__(self, stats: Stats) -> FloatArray:
        """BLEU-N of each row.

        >>> from ngrameval.ngrams.stats import stats_width
        >>> v = np.zeros(stats_width(1, False)); v[:5] = [4, 4, 4, 2, 4]  # c, r, r_mean, m_1, t_1
        >>> round(float(CocoBleu(1)(Stats(v, 1))), 6)
        0.5
        """
        n = self.max_order
        bleu = np.ones(stats.hyp_len.shape)
        for k in range(n):  # the toolkit's running product, in its order
            bleu = bleu * ((stats.match[..., k] + TINY) / (stats.total_ngrams[..., k] + SMALL))
        out = _libm(lambda b: b ** (1.0 / n), bleu)
        ratio = (stats.hyp_len + TINY) / (stats.ref_len + SMALL)
        short = ratio < 1
        if np.any(short):
            pen = _libm(lambda q: math.exp(1 - 1 / q), np.where(short, ratio, 1.0))
            out = np.where(short, out * pen, out)
        return np.asarray(out)

    def display_name(self) -> str:
        return f"BLEU-{self.max_order}"

    def signature(self) -> str:
        return f"n:{self.max_order}|ref_len:closest|smooth:tiny|ref:{VERSION}"


@dataclass(frozen=True)
class CocoRougeL(RowMetric):
    """coco-caption ROUGE-L; called on rows ``(..., 2)`` = (sum of segment scores, segments) -> mean."""

    beta: float = 1.2

    higher_is_better: ClassVar[bool] = True

    def __post_init__(self) -> None:
        number(self.beta, "coco ROUGE-L beta", 0.0, MAX_SQUARED)  # beta ** 2 finite

    @property
    def order_needed(self) -> int:
        return 1

    def __call__(self, values: FloatArray) -> FloatArray:
        return mean_of_rows(values)

    def display_name(self) -> str:
        return "ROUGE-L"

    def signature(self) -> str:
        return f"beta:{self.beta:g}|multi:max-p-max-r|ref:{VERSION}"

    def rows(self, batch: Batch) -> Rows:
        """Rows ``(ROUGE-L, 1)`` (:func:`coco_rouge_rows`)."""
        flat, seg = batch.flat
        return Rows(tuple(coco_rouge_rows(self, batch.systems, flat, seg, batch.pre)), self)


def coco_rouge_scores(metric: CocoRougeL, hyps: Texts, refs: Texts, seg: IntArray) -> FloatArray:
    """Segment ROUGE-L of hypothesis ``s`` against references ``seg[s] .. seg[s + 1] - 1``."""
    owner = np.repeat(np.arange(len(hyps)), np.diff(seg))
    h_ids, h_off = hyps.ids.tolist(), hyps.off.tolist()
    r_ids, r_off = refs.ids.tolist(), refs.off.tolist()
    lcs = np.empty(len(refs))
    for r, s in enumerate(owner.tolist()):
        h, ref = h_ids[h_off[s] : h_off[s + 1]], r_ids[r_off[r] : r_off[r + 1]]
        # "".split(" ") == [""]: two empty texts share their one (empty) token
        lcs[r] = LCSseq.similarity(h, ref) if h and ref else float(not h and not ref)
    h_len = np.maximum(hyps.lens, 1).astype(np.float64)[owner]
    r_len = np.maximum(refs.lens, 1).astype(np.float64)
    prec, rec = lcs / h_len, lcs / r_len
    if not len(owner):
        return np.zeros(len(hyps))
    p_max, r_max = np.maximum.reduceat(prec, seg[:-1]), np.maximum.reduceat(rec, seg[:-1])
    b2 = float(metric.beta) ** 2
    both = (p_max != 0) & (r_max != 0)
    den = np.where(both, r_max + b2 * p_max, 1.0)
    out: FloatArray = np.where(both, ((1 + b2) * p_max * r_max) / den, 0.0)
    return out


def coco_rouge_rows(
    metric: CocoRougeL, systems: Sequence[Sequence[str]], refs: Sequence[str], seg: IntArray, pre: Preprocess
) -> list[FloatArray]:
    """``(segments, 2)`` rows ``(ROUGE-L, 1)`` of each system (references of segment ``s``:
    ``refs[seg[s]:seg[s + 1]]``, at least one), texts tokenized by ``pre``."""
    per_seg = np.diff(seg)
    if len(per_seg) and per_seg.min() == 0:
        raise InputError(f"segment {int(np.argmin(per_seg)) + 1} has no reference; every segment needs at least one")
    enc = Encoder(pre)
    ref_texts = Texts(*enc.encode(refs))
    return [mean_rows(coco_rouge_scores(metric, Texts(*enc.encode(h)), ref_texts, seg)) for h in systems]
