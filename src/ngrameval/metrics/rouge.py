"""ROUGE (Lin 2004): ROUGE-N, ROUGE-L, ROUGE-W, ROUGE-S and ROUGE-SU, per item, as ROUGE-1.5.5 computes them.

Every variant reduces an (item, reference) pair to ``hits``, ``ref_total`` and ``hyp_total``:

* ROUGE-N: clipped n-gram matches ``sum_g min(c_hyp(g), c_ref(g))``; n-grams of the whole text (they cross
  sentence boundaries); totals ``max(len - n + 1, 0)``.
* ROUGE-L: for each reference sentence the union of its LCS with every hypothesis sentence, positions counted
  while both texts have an unused occurrence of the token (summary-level LCS); totals = token counts. With
  ``split=False`` each text is one sentence (``rouge-score``'s ``rougeL``).
* ROUGE-W: weighted LCS, runs of k consecutive hits worth ``k^w``; ``ref_total = sum_sentences len^w``, scored
  against ``ref_total^w`` (ROUGE-1.5.5 weights the reference length twice), ``hyp_total = len^w``, scores
  ``(hits/total)^(1/w)``.
* ROUGE-S / SU: skip-bigrams ``i < j <= i + gap + 1`` (``gap=None``: any distance); SU adds the unigram of
  every token but the last (ROUGE-1.5.5's loop, so a one-word text has no unit).

With several references (``multi``): ``A`` pools them (ROUGE-1.5.5 ``-f A``: ``R = sum hits / sum ref_total``,
``P = sum hits / (M hyp_total)``), ``B`` keeps the reference ROUGE-1.5.5 ``-f B`` keeps (best recall as
its per-model score, first on ties; see :func:`best_model_key`),
``max-f`` the one with the best F (``rouge-score``'s ``score_multi``), ``jk`` jackknifes (mean over the M
leave-one-out subsets of the best-F reference of each subset; one reference: its score).
``F = P R / ((1 - alpha) P + alpha R)``: alpha = 1 is precision, 0 recall (ROUGE-1.5.5 ``-p``; 0.5 = F1).
``round5`` rounds R and P to 5 decimals and F from the rounded values, as ROUGE-1.5.5 prints them.
``sentences="pysbd"`` splits every line into sentences first (:mod:`ngrameval.text.sentences`; rouge-score's
``split_summaries=True`` with another splitter), for ROUGE-L/W over sentences and the limits.
"""

from __future__ import annotations

import itertools
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from ngrameval import _direct, _overlap, _rouge
from ngrameval.errors import ConfigError
from ngrameval.jobs import thread_map
from ngrameval.memory import empty
from ngrameval.metrics.choices import ROUGE_MULTI, ROUGE_STATS
from ngrameval.metrics.policy import FloatArray, warn
from ngrameval.metrics.rows import Batch, RowMetric, Rows
from ngrameval.ngrams.count import ngram_totals
from ngrameval.ngrams.stats import mean_of_rows, mean_rows
from ngrameval.ngrams.texts import Texts
from ngrameval.text import validate
from ngrameval.text.normalize import normalize_texts
from ngrameval.text.pipeline import Encoder, Preprocess
from ngrameval.text.sentences import SPLITTERS, split_sentences
from ngrameval.text.validate import MAX_ORDER, integer, number

IntArray = NDArray[np.int64]
VARIANTS = ("n", "l", "w", "s", "su")
MULTI = ROUGE_MULTI
STATS = ROUGE_STATS


@dataclass(frozen=True)
class Rouge(RowMetric):
    """One ROUGE variant, its F weighting, multi-reference mode and length limits (see the module doc)."""

    variant: str = "n"
    n: int = 1
    gap: int | None = 4
    weight: float = 1.2
    split: bool = True
    alpha: float = 0.5
    multi: str = "A"
    stat: str = "f"
    round5: bool = False
    length_limit: int = 0
    byte_limit: int = 0
    sentences: str = "lines"
    lsum: bool = False  # asked for as rouge-lsum: named ROUGE-Lsum (rouge-score's rougeLsum), split into sentences

    higher_is_better: ClassVar[bool] = True
    tokenizer_option: ClassVar[str] = "--rouge-profile"

    def __post_init__(self) -> None:
        if self.sentences not in SPLITTERS:
            raise ConfigError(f"sentences must be one of {', '.join(SPLITTERS)}, got {self.sentences!r}")
        if self.variant not in VARIANTS:
            raise ConfigError(f"unknown ROUGE variant {self.variant!r}; valid: {', '.join(VARIANTS)}")
        if self.multi not in MULTI:
            raise ConfigError(f"multi must be one of {', '.join(MULTI)}, got {self.multi!r}")
        if self.stat not in STATS:
            raise ConfigError(f"stat must be one of {', '.join(STATS)}, got {self.stat!r}")
        if not 0 <= self.alpha <= 1:
            raise ConfigError(f"alpha must be in [0, 1], got {self.alpha}")
        if self.n < 1 or (self.gap is not None and self.gap < 0) or self.weight <= 0:
            raise ConfigError("ROUGE needs n >= 1, gap >= 0 (or unlimited) and weight > 0")
        if self.length_limit < 0 or self.byte_limit < 0 or (self.length_limit and self.byte_limit):
            raise ConfigError("give at most one of the word limit and the byte limit, each >= 0")

    def display_name(self) -> str:
        """ROUGE-1.5.5's names (ROUGE-2, ROUGE-L, ROUGE-W-1.2, ROUGE-S4, ROUGE-SU*; ROUGE-Lsum for a
        ``rouge-lsum`` spec, so ``-m rouge-l,rouge-lsum`` names both as asked); ``-sent`` for L/W over whole
        texts, ``-R``/``-P`` when recall or precision is reported instead of F."""
        gap = "*" if self.gap is None else str(self.gap)
        ell = "Lsum" if self.lsum and self.variant == "l" and self.split else "L"
        name = {"n": str(self.n), "l": ell, "w": f"W-{self.weight:g}", "s": f"S{gap}", "su": f"SU{gap}"}
        sent = "" if self.split or self.variant not in ("l", "w") else "-sent"
        return f"ROUGE-{name[self.variant]}{sent}" + ("" if self.stat == "f" else f"-{self.stat.upper()}")

    def check(self) -> None:
        integer(self.n, "ROUGE-N n", 1, MAX_ORDER)
        if self.gap is not None:
            integer(self.gap, "ROUGE-S/SU skip gap", 0, sys.maxsize)
        if self.variant == "w":
            # ROUGE-1.5.5: "-w weight ... a number greater than 1"; w <= 1 gives scores above 1
            number(self.weight, "ROUGE-W w (weight)", 1.0, low_open=True)
        number(self.alpha, "ROUGE alpha (-p)", 0.0, 1.0)
        integer(self.length_limit, "ROUGE l (length_limit, words)", 0, sys.maxsize)
        integer(self.byte_limit, "ROUGE b (byte_limit)", 0, sys.maxsize)

    def rows(self, batch: Batch) -> Rows:
        """Rows ``(stat, 1)`` of every item; every ROUGE variant of the batch from one tokenization of each text,
        R, P and F of one variant (``--rouge-stats rpf``) from one computation (:func:`item_scores`)."""
        kinds = variants(batch.metrics)
        per_system = batch.shared("rouge", lambda: item_scores(kinds, batch.systems, *batch.flat, batch.pre))
        k = kinds.index(replace(self, stat="f"))
        return Rows(tuple(mean_rows(items[k].stat(self.stat)) for items in per_system), mean_of_rows)

    def signature(self) -> str:
        limit = f"|l:{self.length_limit}" if self.length_limit else f"|b:{self.byte_limit}" if self.byte_limit else ""
        limit += "" if self.sentences == "lines" else f"|sents:{self.sentences}"
        return f"stat:{self.stat}|alpha:{self.alpha:g}|multi:{self.multi}|round:{'5' if self.round5 else 'no'}{limit}"


@dataclass(frozen=True)
class ItemScores:
    """Recall, precision and F of every item (fractions in [0, 1])."""

    recall: FloatArray
    precision: FloatArray
    f: FloatArray

    def stat(self, name: str) -> FloatArray:
        return {"r": self.recall, "p": self.precision, "f": self.f}[name]


@dataclass(frozen=True)
class _Side:
    """Texts as sentences of token ids: sentence s = ids[soff[s]:soff[s+1]], text t = sentences toff[t]..toff[t+1]."""

    ids: NDArray[np.int32]
    soff: IntArray
    toff: IntArray

    @property
    def flat_off(self) -> IntArray:
        """Token offsets of whole texts."""
        out: IntArray = self.soff[self.toff]
        return out

    def one_sentence(self) -> _Side:
        return _Side(self.ids, self.flat_off, np.arange(len(self.toff), dtype=np.int64))

    @property
    def lens(self) -> IntArray:
        return np.diff(self.flat_off)


_WS = re.compile(rb"[ \t\n\r\f\v]+")


def _fields(s: bytes) -> list[bytes]:
    """Perl's ``split(/\\s+/, $s)``: a leading empty field is kept, trailing ones are dropped."""
    f = _WS.split(s)
    while f and not f[-1]:
        f.pop()
    return f


def _limit_words(sents: list[bytes], limit: int) -> list[bytes]:
    """ROUGE-1.5.5 ``-l``: whole sentences while the running field count stays below the limit, then the
    first fields of the sentence that reaches it."""
    out, used = [], 0
    for s in sents:
        f = _fields(s)
        if used + len(f) < limit:
            out.append(s)
            used += len(f)
        else:
            out.append(b" ".join(f[: limit - used]))
            break
    return out


def _limit_bytes(sents: list[bytes], limit: int, lcs: bool) -> list[bytes]:
    """ROUGE-1.5.5 ``-b`` (joining spaces not counted). Its LCS reader never adds to the running count,
    so there every sentence shorter than the limit is kept until one reaches it and is cut at the limit."""
    out, used = [], 0
    for s in sents:
        if used + len(s) < limit:
            out.append(s)
            used += 0 if lcs else len(s)
        else:
            out.append(s[: limit - used])
            break
    return out


def _limited(text: str, rule: Rouge, lcs: bool) -> str:
    """The text cut to the rule's word or byte limit, sentence by sentence."""
    raw = [s.encode("utf-8", "surrogatepass") for s in text.split("\n")]  # a lone surrogate: 3 bytes, kept
    if rule.length_limit:
        cut = _limit_words(raw, rule.length_limit)
    else:
        cut = _limit_bytes(raw, rule.byte_limit, lcs)
    return "\n".join(_decode_cut(s) for s in cut)


def _decode_cut(data: bytes) -> str:
    """UTF-8 cut at a byte limit: the character the cut split is dropped (ROUGE-1.5.5 -b counts bytes)."""
    try:
        return data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError as exc:  # only the last, incomplete character can fail
        return data[: exc.start].decode("utf-8", "surrogatepass")


def _encode(enc: Encoder, texts: Sequence[str], rule: Rouge, lcs: bool) -> _Side:
    if rule.sentences != "lines" or rule.length_limit or rule.byte_limit:
        texts = normalize_texts(texts, enc.cfg.normalize)  # before splitting and cutting, as before tokenizing
    if rule.sentences == "pysbd":
        texts = split_sentences(texts)
    if rule.length_limit or rule.byte_limit:
        texts = [_limited(t, rule, lcs) for t in texts]
    return _Side(*enc.encode_sentences(texts))


def _round5(x: FloatArray) -> FloatArray:
    """``sprintf("%7.5f")`` and back: correctly rounded to 5 decimals, as Perl prints. ``rint(x * 1e5) / 1e5`` is
    that value (an exact integer over 1e5, divided with one rounding, is the double nearest the decimal) wherever
    the product's own rounding cannot move it across a tie; values near a tie (and NaN, inf) are formatted."""
    y = x * 1e5
    out: FloatArray = np.rint(y)
    # near a tie: |y - floor(y) - 0.5| < 1e-6 max(1, |y|), i.e. |y - rint(y)| > 0.5 - 1e-6 max(1, |y|) (y - rint(y)
    # is exact, Sterbenz); NaN and inf compare false, so they are formatted too. Four arrays, not fourteen: each new
    # array of a 100k-segment corpus is fresh pages to fault in.
    bound = np.abs(y)
    np.maximum(bound, 1.0, out=bound)
    bound *= -1e-6
    bound += 0.5
    with np.errstate(invalid="ignore"):
        np.subtract(y, out, out=y)
        np.abs(y, out=y)
        clear = np.less_equal(y, bound)
    out /= 1e5
    if not clear.all():
        slow = ~clear
        out[slow] = _round5_near_ties(x[slow])
    return out


def _round5_near_ties(v: FloatArray) -> FloatArray:
    """:func:`_round5` of values near a tie ``k + 0.5`` of ``v * 1e5``: which side of the tie the binary value lies
    on, decided exactly (``v = hi + lo``, 26 bits each, so ``v * 3125`` is ``a + b`` without rounding and
    ``v * 200000 - (2k + 1) = (64a - (2k + 1)) + 64b``, the first difference exact by Sterbenz's lemma), an exact
    tie to the even ``k`` as Python's formatting rounds; negative, non-finite and huge values are formatted."""
    out = np.empty_like(v)
    fast = np.isfinite(v) & (v >= 0) & (v < 2.0**30)
    w = v[fast]
    k = np.floor(w * 1e5)
    t = w * 134217729.0  # 2**27 + 1: Veltkamp's split
    hi = t - (t - w)
    d = (hi * 3125.0 * 64.0 - (2 * k + 1)) + (w - hi) * 3125.0 * 64.0
    up = (d > 0) | ((d == 0) & (k % 2 == 1))
    out[fast] = (k + up) / 1e5
    out[~fast] = [float(f"{x:.5f}") for x in v[~fast].tolist()]
    return out


def _ratio(num: FloatArray, den: FloatArray, power: float) -> FloatArray:
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den != 0)
    return out if power == 1 else out ** (1 / power)


def _f(r: FloatArray, p: FloatArray, alpha: float) -> FloatArray:
    den = (1 - alpha) * p + alpha * r
    out = np.zeros(r.shape)
    np.divide(p * r, den, out=out, where=den > 0)
    return out


def combine(metric: Rouge, hits: FloatArray, ref_total: FloatArray, hyp_total: FloatArray, seg: IntArray) -> ItemScores:
    """Per-item R, P, F from per-pair counts; pairs of item ``s`` are ``seg[s] .. seg[s+1]``."""
    power = metric.weight if metric.variant == "w" else 1.0
    rnd = _round5 if metric.round5 else (lambda x: x)
    n_items = len(seg) - 1
    per_item = np.diff(seg)
    ref_den = ref_total**power if metric.variant == "w" else ref_total  # ROUGE-W: (sum_s len^w)^w
    if metric.multi == "A":
        if n_items == len(hits) and bool((per_item == 1).all()):  # an item's sums are its one pair's counts
            sums = [np.asarray(x, dtype=np.float64) for x in (hits, ref_den, hyp_total)]
        else:
            owner = np.repeat(np.arange(n_items), per_item)
            summed = (np.bincount(owner, weights=x, minlength=n_items) for x in (hits, ref_den, hyp_total))
            sums = [x.astype(np.float64, copy=False) for x in summed]  # (float64 already: weighted)
        r, p = rnd(_ratio(sums[0], sums[1], power)), rnd(_ratio(sums[0], sums[2], power))
        return ItemScores(r, p, rnd(_f(r, p, metric.alpha)))
    r_pair, p_pair = rnd(_ratio(hits, ref_den, power)), rnd(_ratio(hits, hyp_total, power))
    f_pair = rnd(_f(r_pair, p_pair, metric.alpha))
    key = f_pair if metric.multi != "B" else best_model_key(metric, hits, ref_total)
    if metric.multi in ("B", "max-f"):
        best = _first_max(key, seg)
        return ItemScores(r_pair[best], p_pair[best], f_pair[best])
    # jackknife: leave out each reference in turn, keep the best-F one of the rest, average over leave-outs
    acc, m_max = np.zeros((3, n_items)), int(per_item.max(initial=1))
    for k in range(m_max):
        left_out = seg[:-1] + k
        valid = per_item > k
        masked = key.copy()
        masked[left_out[valid & (per_item > 1)]] = -np.inf
        best = _first_max(masked, seg)[valid]
        for row, x in zip(acc, (r_pair, p_pair, f_pair)):
            row[valid] += x[best]
    return ItemScores(*(row / per_item for row in acc))


def best_model_key(metric: Rouge, hits: FloatArray, ref_total: FloatArray) -> FloatArray:
    """What ROUGE-1.5.5 ``-f B`` maximises over the models (strict ``>``, so the first on ties): N, S, SU the
    recall printed to 5 decimals (``sprintf "%07.5f"``); L the unrounded ``hits / ref_len``; W the unrounded
    ``(hits / sum_s len^w)^(1/w)``, i.e. against the reference total *before* its second power (so a fully
    matched shorter model ties with an identical one at 1.0 and the first listed wins)."""
    if metric.variant in ("l", "w"):
        return _ratio(hits, ref_total, metric.weight if metric.variant == "w" else 1.0)
    return _round5(_ratio(hits, ref_total, 1.0))


def _first_max(key: FloatArray, seg: IntArray) -> IntArray:
    """Index of the first largest ``key`` within each (non-empty) run ``seg[s] .. seg[s+1]``."""
    if len(seg) == len(key) + 1 and seg[-1] == len(key) and bool(np.all(np.diff(seg) == 1)):
        return np.arange(len(key))  # every run holds one key
    owner = np.repeat(np.arange(len(seg) - 1), np.diff(seg))
    top = np.maximum.reduceat(key, seg[:-1])
    pos = np.where(key == top[owner], np.arange(len(key)), len(key))
    out: IntArray = np.minimum.reduceat(pos, seg[:-1])
    return out


def _pair_counts(
    metric: Rouge, hyp: _Side, ref: _Side, hyp_clip: _Side, ref_clip: _Side, ph: IntArray, pr: IntArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(hits, ref_total, hyp_total) of every pair for the LCS and skip-bigram variants."""
    if metric.variant in ("s", "su"):
        gap = -1 if metric.gap is None else metric.gap
        raw = _rouge.skip(hyp.ids, hyp.soff, hyp.toff, ref.ids, ref.soff, ref.toff, ph, pr, gap, metric.variant == "su")
        counts = np.frombuffer(raw, dtype=np.int64).reshape(3, -1).astype(np.float64)
        return counts[0], counts[1], counts[2]
    if not metric.split:
        hyp, ref = hyp.one_sentence(), ref.one_sentence()
    weight = metric.weight if metric.variant == "w" else 0.0
    hc, rc = hyp_clip.one_sentence(), ref_clip.one_sentence()
    hits = np.frombuffer(
        _rouge.lcs(
            hyp.ids, hyp.soff, hyp.toff, ref.ids, ref.soff, ref.toff,
            hc.ids, hc.soff, hc.toff, rc.ids, rc.soff, rc.toff, ph, pr, weight,
        ),
        dtype=np.float64,
    )  # fmt: skip
    hyp_len = hyp_clip.lens[ph].astype(np.float64)
    if metric.variant == "l":
        return hits, ref.lens[pr].astype(np.float64), hyp_len
    sent_w = np.diff(ref.soff).astype(np.float64) ** metric.weight
    base = np.add.reduceat(np.append(sent_w, 0.0), ref.toff[:-1]) * (np.diff(ref.toff) > 0)
    return hits, base[pr], hyp_len**metric.weight  # combine() raises the reference total to the power w


_ASCII_ALNUM = re.compile(r"[A-Za-z0-9]")


def _lost(texts: Sequence[str], lower: bool) -> int:
    """How many texts have letters or digits but no token under an ASCII-only tokenizer: runs of ``[A-Za-z0-9]``
    (rouge155), of ``[a-z0-9]`` after ``str.lower`` (rouge-score, ``lower``: it maps a few other letters into
    ASCII). An ASCII text has a token as soon as it has a letter or digit. ``str``'s own methods: a subclass's
    overrides are not called (the kernels read the text itself)."""
    if _direct.ascii(texts):  # every str keeps an ASCII flag: one C loop over the flags
        return 0
    return sum(
        1
        for t in texts
        if not str.isascii(t) and not _ASCII_ALNUM.search(str.lower(t) if lower else t) and any(c.isalnum() for c in t)
    )


def _warn_lost_texts(pre: Preprocess, refs: Sequence[str], systems: Sequence[Sequence[str]]) -> None:
    """Warn when the ASCII-only profiles (rouge155, rouge-score) reduce texts written in another script
    (Cyrillic, Greek, CJK ...) to no token at all, instead of a silent 0: how many system segments and references,
    and what to use instead."""
    hyps, lost_refs = lost_texts(pre, refs, systems)
    warn_lost(pre, hyps, sum(len(h) for h in systems), lost_refs, len(refs))


def lost_texts(pre: Preprocess, refs: Sequence[str], systems: Sequence[Sequence[str]]) -> tuple[int, int]:
    """How many system segments and references the ASCII-only profiles (rouge155, rouge-score) reduce to no token
    though they have letters or digits (0, 0 for any other profile)."""
    if pre.tokenize not in ("rouge155", "rouge-score"):
        return 0, 0
    lower = pre.tokenize == "rouge-score"
    return sum(_lost(h, lower) for h in systems), _lost(refs, lower)


def warn_lost(pre: Preprocess, hyps: int, n_hyps: int, refs: int, n_refs: int) -> None:
    """:func:`_warn_lost_texts`' warning of ``hyps`` of ``n_hyps`` system segments and ``refs`` of ``n_refs``
    references that lose every token (nothing when both are 0)."""
    if hyps or refs:
        warn(
            f"ROUGE ({pre.tokenize} profile, ASCII letters and digits only): {hyps} of {n_hyps} system segments "
            f"and {refs} of {n_refs} references have letters or digits but lose all their tokens, so they "
            "score 0; for other scripts use --rouge-profile unicode (API: profile='unicode'; spec: "
            "rouge-l:profile=unicode)",
            UserWarning,
            stacklevel=4,
        )


def _counted_directly(pre: Preprocess, rule: Rouge, variants: set[str]) -> bool:
    """Whether :func:`_direct_counts` serves a group: the rouge155 / rouge-score profiles without stemming or stop
    words, no length limit, sentences as the lines, ROUGE-N and ROUGE-L only."""
    plain = pre.tokenize in ("rouge155", "rouge-score") and not pre.stem and pre.stopwords is None
    whole = not rule.length_limit and not rule.byte_limit and rule.sentences == "lines"
    return plain and whole and variants <= {"n", "l"}


def _direct_counts(
    metrics: Sequence[Rouge], systems: Sequence[Sequence[str]], flat_refs: Sequence[str], seg: IntArray, pre: Preprocess
) -> list[list[tuple[FloatArray, FloatArray, FloatArray] | None]]:
    """``out[k][m]``: (hits, ref_total, hyp_total) of every pair of system ``k`` for ``metrics[m]``, counted
    straight from the text one segment at a time (``ngrameval._direct.rouge``: tokens interned per segment, no
    corpus vocabulary); the same integers as the vocabulary path. None for a ROUGE-L over sentences when a text
    holds a line break (``_rouge.lcs`` unions the LCS of every sentence pair then)."""
    full_lower, top, want_lcs = direct_profile(pre, metrics)
    hyps = [normalize_texts(validate.texts(h, "texts"), pre.normalize) for h in systems]
    refs = normalize_texts(validate.texts(flat_refs, "texts"), pre.normalize)
    one_each = len(seg) == len(refs) + 1 and bool(np.all(np.diff(seg) == 1))
    bounds = seg.tolist() if not one_each else []
    seg_refs = refs if one_each else [refs[a:b] for a, b in itertools.pairwise(bounds)]
    raw = _direct.rouge(hyps, seg_refs, full_lower, top, want_lcs)
    hyp_len, ref_len, _, hits, lcs = (np.frombuffer(b, dtype=np.int64) for b in raw[:5])
    return pair_counts(metrics, len(systems), KernelCounts(hyp_len, ref_len, hits, lcs), seg, bool(raw[5]))


def direct_profile(pre: Preprocess, metrics: Sequence[Rouge]) -> tuple[bool, int, bool]:
    """What ``_direct.rouge`` (and ``_direct.count_bytes``' ROUGE mode) counts for ``metrics``: ``full_lower``
    (``str.lower()`` of a non-ASCII text first), the highest ROUGE-N order and whether an LCS is needed."""
    top = max((m.n for m in metrics if m.variant == "n"), default=0)
    return pre.tokenize == "rouge-score" or pre.lowercase, top, any(m.variant == "l" for m in metrics)


@dataclass(frozen=True)
class KernelCounts:
    """The counts of ``_direct.rouge`` (and ``_direct.count_bytes``' ROUGE mode): ``hyp_len[k * S + s]``,
    ``ref_len[j]``, ``hits[(k * R + j) * N + n - 1]``, ``lcs[k * R + j]`` (system ``k``, segment ``s``, reference
    ``j`` of all ``R``, order ``n``)."""

    hyp_len: IntArray
    ref_len: IntArray
    hits: IntArray
    lcs: IntArray


def pair_counts(
    metrics: Sequence[Rouge], n_systems: int, counts: KernelCounts, seg: IntArray, line_breaks: bool
) -> list[list[tuple[FloatArray, FloatArray, FloatArray] | None]]:
    """:func:`_direct_counts` from the kernel's counts (``line_breaks``: a text held ``"\\n"``)."""
    top = max((m.n for m in metrics if m.variant == "n"), default=0)
    hyp_len, ref_len = counts.hyp_len, counts.ref_len
    n_pairs, n_seg = len(ref_len), len(seg) - 1
    hits = counts.hits.reshape(n_systems, n_pairs, top)
    lcs_f = counts.lcs.reshape(n_systems, n_pairs).astype(np.float64)
    one_each = n_pairs == n_seg
    owner = None if one_each else np.repeat(np.arange(n_seg), np.diff(seg))
    ref_f = ref_len.astype(np.float64)
    out = []
    for k in range(n_systems):
        h_len = hyp_len[k * n_seg : (k + 1) * n_seg]
        h_len = h_len if owner is None else h_len[owner]
        row: list[tuple[FloatArray, FloatArray, FloatArray] | None] = []
        for m in metrics:
            if m.variant == "l" and m.split and line_breaks:
                row.append(None)
            elif m.variant == "l":
                row.append((lcs_f[k], ref_f, h_len.astype(np.float64)))
            else:
                ref_total, hyp_total = (np.maximum(x - (m.n - 1), 0).astype(np.float64) for x in (ref_len, h_len))
                row.append((hits[k, :, m.n - 1].astype(np.float64), ref_total, hyp_total))
        out.append(row)
    return out


def variants(metrics: Sequence[RowMetric]) -> list[Rouge]:
    """The ROUGE variants of ``metrics`` that one :func:`item_scores` serves (R, P and F of one variant alike)."""
    return list(dict.fromkeys(replace(m, stat="f") for m in metrics if isinstance(m, Rouge)))


def counted_directly(pre: Preprocess, metrics: Sequence[Rouge]) -> bool:
    """Whether every variant of ``metrics`` is served by the direct counts alone, in one group (no length limit,
    no sentence splitting, the rouge155 / rouge-score profiles unnormalised): then :func:`scores_of_counts` gives
    :func:`item_scores` of texts that hold no line break."""
    return not pre.normalize and all(_counted_directly(pre, m, {m.variant}) for m in metrics)


def scores_of_counts(
    metrics: Sequence[Rouge], n_systems: int, counts: KernelCounts, seg: IntArray, jobs: int = 1
) -> list[list[ItemScores]]:
    """:func:`item_scores` of ``metrics`` (:func:`counted_directly`) from the kernel's counts of texts without a line
    break; no warning: every text was ASCII. With one reference an item, the systems are scored on ``jobs``
    threads."""
    if 0 < len(counts.ref_len) == len(seg) - 1:  # one reference an item: its scores are its pair's, in one C pass

        def system(k: int) -> list[ItemScores]:
            return [s for m in metrics if (s := _one_pair(m, k, n_systems, counts)) is not None]

        got = thread_map(system, range(n_systems), jobs)
        if all(len(row) == len(metrics) for row in got):
            return got
    direct = pair_counts(metrics, n_systems, counts, seg, False)
    return [[combine(m, *c, seg) for m, c in zip(metrics, row, strict=True) if c is not None] for row in direct]


def _one_pair(m: Rouge, k: int, n_systems: int, counts: KernelCounts) -> ItemScores | None:
    """:func:`combine`'s scores of system ``k`` under ROUGE-N or -L when every item has one pair (whatever
    ``multi``: the best, the average or the jackknife of one pair is that pair), by ``_rouge.scores``: the same
    operations on the same doubles; None when it declines (a ratio outside [0, 2**30): NumPy computes them)."""
    n_pairs = len(counts.ref_len)
    if m.variant == "l":
        hits, sub = counts.lcs.reshape(n_systems, n_pairs)[k], 0
    elif m.variant == "n":
        hits, sub = counts.hits.reshape(n_systems, n_pairs, -1)[k, :, m.n - 1], m.n - 1
    else:
        return None
    out = empty((3, n_pairs))  # (huge pages: 2 x 100k pairs, 1,172 page faults before)
    hyp_len = counts.hyp_len[k * n_pairs : (k + 1) * n_pairs]
    if not _rouge.scores(hits, counts.ref_len, hyp_len, sub, m.alpha, m.round5, out):
        return None
    return ItemScores(out[0], out[1], out[2])


def item_scores(
    metrics: Sequence[Rouge], systems: Sequence[Sequence[str]], flat_refs: Sequence[str], seg: IntArray, pre: Preprocess
) -> list[list[ItemScores]]:
    """``out[k][m]``: per-item scores of system ``k`` for ``metrics[m]``; the references of item ``i`` are
    ``flat_refs[seg[i]:seg[i + 1]]``, texts with sentences separated by ``"\\n"``. Metrics with the same
    limits share one tokenization."""
    _warn_lost_texts(pre, flat_refs, systems)
    per_item = np.diff(seg)
    pr = np.arange(int(seg[-1]), dtype=np.int64)
    ph = np.repeat(np.arange(len(per_item), dtype=np.int64), per_item)
    one_each = bool((per_item == 1).all())
    out: list[list[ItemScores | None]] = [[None] * len(metrics) for _ in systems]
    groups: dict[tuple[int, int, str], list[int]] = {}
    for m, metric in enumerate(metrics):
        groups.setdefault((metric.length_limit, metric.byte_limit, metric.sentences), []).append(m)
    for group in groups.values():
        rule = metrics[group[0]]
        if _counted_directly(pre, rule, {metrics[m].variant for m in group}):
            direct = _direct_counts([metrics[m] for m in group], systems, flat_refs, seg, pre)
            for k, row in enumerate(direct):
                for m, counts in zip(group, row, strict=True):
                    out[k][m] = None if counts is None else combine(metrics[m], *counts, seg)
            group = [m for m, counts in zip(group, direct[0], strict=True) if counts is None] if direct else []
            if not group:
                continue
        enc = Encoder(pre)
        ref_side = _encode(enc, flat_refs, rule, lcs=False)
        hyp_sides = [_encode(enc, hyps, rule, lcs=False) for hyps in systems]
        lcs_sides = None
        if rule.byte_limit and any(metrics[m].variant in ("l", "w") for m in group):
            lcs_sides = (_encode(enc, flat_refs, rule, lcs=True), [_encode(enc, h, rule, lcs=True) for h in systems])
        orders = [metrics[m].n for m in group if metrics[m].variant == "n"]
        rmatch: list[IntArray] = []
        if orders:
            # every reference is its own segment; each hypothesis is repeated once per reference
            ref_seg = np.arange(len(pr) + 1, dtype=np.int64)
            gathered = [Texts(h.ids, h.flat_off) if one_each else Texts(h.ids, h.flat_off).take(ph) for h in hyp_sides]
            results = _overlap.overlap(
                ref_side.ids, ref_side.flat_off, ref_seg, [(t.ids, t.off) for t in gathered], max(orders), None
            )
            rmatch = [np.frombuffer(res[1], dtype=np.int64).reshape(-1, max(orders)) for res in results]
        for k, hyp in enumerate(hyp_sides):
            for m in group:
                metric = metrics[m]
                if metric.variant == "n":
                    counts = (
                        rmatch[k][:, metric.n - 1].astype(np.float64),
                        ngram_totals(ref_side.lens[pr], metric.n)[:, -1].astype(np.float64),
                        ngram_totals(hyp.lens[ph], metric.n)[:, -1].astype(np.float64),
                    )
                elif lcs_sides is not None and metric.variant in ("l", "w"):
                    counts = _pair_counts(metric, lcs_sides[1][k], lcs_sides[0], hyp, ref_side, ph, pr)
                else:
                    counts = _pair_counts(metric, hyp, ref_side, hyp, ref_side, ph, pr)
                out[k][m] = combine(metric, *counts, seg)
    return [[s for s in row if s is not None] for row in out]
