"""Quality control of a study, computed from what the store holds: description outliers (Chen & Dolan's
review of Tier-1 workers, with ngrameval's own sentence BLEU), per-judge consistency on repeated and
known-answer trials (Belz & Reiter), and WMT Direct Assessment's checks (Graham et al. 2013, 2017): a one-sided
Wilcoxon signed-rank test per annotator, exact, that degraded "bad reference" copies score lower than their
originals (Appraise runs a one-sided Mann-Whitney U on the same pairs; the paired test uses the pairing), and
per-annotator z-scores. Pure functions of plain values."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

K = TypeVar("K", bound=Hashable)


COPY_PINC = 0.1  # a paraphrase whose PINC against its source is below this is a copy (benchmarks/bench_copy_pinc.py)


@dataclass(frozen=True)
class Rules:
    """The ``[quality]`` table of a study: ``copy_pinc``, the PINC against the source below which a paraphrase
    is a copy (0 turns the check off)."""

    copy_pinc: float = COPY_PINC


@dataclass(frozen=True)
class DescriptionCheck:
    """One description's sentence BLEU against the other descriptions of its stimulus (None if it is alone),
    its length in words and whether its declared language differs from the study's; for a paraphrase, its PINC
    against the source sentence (Chen & Dolan 2011: the share of its n-grams, n = 1..4, not in the source,
    averaged over n; None: not a paraphrase) and ``copy``: PINC below :attr:`Rules.copy_pinc`."""

    bleu: float | None
    words: int
    other_language: bool
    pinc: float | None = None
    copy: bool = False


def source_pinc(pairs: Sequence[tuple[str, str]]) -> list[float | None]:
    """PINC of each (paraphrase, source) pair with :func:`ngrameval.paraphrase.pinc` (13a tokens, lower-cased,
    n = 4: a copy with other capitals is still a copy); None for an empty paraphrase."""
    from ngrameval.paraphrase import pinc

    todo = [k for k, (text, _) in enumerate(pairs) if text.strip()]
    out: list[float | None] = [None] * len(pairs)
    if todo:
        sent = pinc([pairs[k][0] for k in todo], [pairs[k][1] for k in todo], lowercase=True).sentences
        assert sent is not None  # PINC always has sentence scores
        for k, x in zip(todo, sent.tolist()):
            out[k] = float(x)
    return out


def description_checks(
    by_stimulus: Mapping[str, Sequence[tuple[str, str]]],
    language: str,
    sources: Mapping[str, str] | None = None,
    rules: Rules = Rules(),
) -> dict[tuple[str, int], DescriptionCheck]:
    """(stimulus, index) -> check, for ``by_stimulus``: stimulus -> [(text, declared language)]. BLEU is
    sacreBLEU's sentence BLEU (exp smoothing, effective order) against the stimulus' other descriptions;
    ``sources`` (stimulus -> the sentence to paraphrase) adds each paraphrase's PINC against it."""
    from ngrameval.api import bleu

    out: dict[tuple[str, int], DescriptionCheck] = {}
    keys = [(key, i) for key, descs in by_stimulus.items() for i in range(len(descs)) if sources and key in sources]
    pincs = dict(zip(keys, source_pinc([(by_stimulus[k][i][0], sources[k]) for k, i in keys]) if sources else []))
    for key, descs in by_stimulus.items():
        texts = [t for t, _ in descs]
        scores: list[float | None] = [None] * len(texts)
        if len(texts) > 1:
            refs = [[*texts[:i], *texts[i + 1 :]] for i in range(len(texts))]
            sent = bleu(texts, refs, smooth="exp", eff=True).sentences
            assert sent is not None  # asked for above
            scores = [float(x) for x in sent]
        for i, (text, lang) in enumerate(descs):
            p = pincs.get((key, i))
            copy = p is not None and p < rules.copy_pinc
            out[key, i] = DescriptionCheck(scores[i], len(text.split()), lang.lower() != language.lower(), p, copy)
    return out


@dataclass(frozen=True)
class AnnotatorCheck:
    """One annotator's descriptions: how many, mean BLEU against the others' descriptions, mean length, how
    many declared in another language, (paraphrase) mean PINC against the sources and how many copies, and
    the flags of :func:`annotator_checks`."""

    submissions: int
    mean_bleu: float | None
    mean_words: float
    other_language: int
    flags: tuple[str, ...]
    mean_pinc: float | None = None
    copies: int = 0


def annotator_checks(checks: Mapping[K, Sequence[DescriptionCheck]]) -> dict[K, AnnotatorCheck]:
    """Annotator -> summary and flags. Flags: ``low-bleu`` (mean BLEU below half the median annotator's),
    ``short`` (under 3 words on average) / ``long`` (over 3 times the median annotator's mean length),
    ``language`` (any description declared in another language), ``copy`` (any paraphrase that copies its
    source)."""
    means = {
        a: (
            statistics.fmean(b) if (b := [c.bleu for c in cs if c.bleu is not None]) else None,
            statistics.fmean(c.words for c in cs) if cs else 0.0,
        )
        for a, cs in checks.items()
    }
    bleus = [m for m, _ in means.values() if m is not None]
    med_bleu = statistics.median(bleus) if bleus else None
    med_words = statistics.median(w for _, w in means.values()) if means else 0.0
    out = {}
    for a, cs in checks.items():
        mb, mw = means[a]
        flags = []
        if mb is not None and med_bleu is not None and mb < 0.5 * med_bleu:
            flags.append("low-bleu")
        if mw < 3:
            flags.append("short")
        elif med_words and mw > 3 * med_words:
            flags.append("long")
        other = sum(c.other_language for c in cs)
        if other:
            flags.append("language")
        copies = sum(c.copy for c in cs)
        if copies:
            flags.append("copy")
        pincs = [c.pinc for c in cs if c.pinc is not None]
        mean_pinc = statistics.fmean(pincs) if pincs else None
        out[a] = AnnotatorCheck(len(cs), mb, mw, other, tuple(flags), mean_pinc, copies)
    return out


EXACT_PAIRS = 500  # signed-rank p exact up to this many non-zero pairs, normal approximation beyond


def min_pairs(alpha: float) -> int:
    """The fewest non-zero pairs with which a one-sided signed-rank (or sign) test can reach ``p < alpha``: its
    smallest p, every difference of one sign, is ``0.5 ** n`` (5 at alpha = 0.05, 7 at 0.01)."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    n = 1
    while 0.5**n >= alpha:
        n += 1
    return n


def signed_rank_p(diffs: Sequence[float]) -> float:
    """One-sided p-value of Wilcoxon's signed-rank test that ``diffs`` lean positive (H1: median > 0).

    Zero differences are dropped (Wilcoxon's rule); tied absolute differences get their mean rank, and the null
    distribution of T+ (the sum of the positive differences' ranks) is the exact one of those ranks under
    random signs (conditional on the ties), by convolution on doubled ranks; above :data:`EXACT_PAIRS` non-zero
    pairs, the normal approximation with the tie-corrected variance and a continuity correction.

    >>> signed_rank_p([3, 1, 2, 5, 4])
    0.03125
    """
    from scipy.stats import norm, rankdata

    d = np.asarray(diffs, dtype=float)
    d = d[d != 0]
    if len(d) == 0:
        return 1.0
    ranks2 = np.rint(2 * rankdata(np.abs(d))).astype(np.int64)  # mid-ranks are multiples of 1/2
    t = int(ranks2[d > 0].sum())
    total = int(ranks2.sum())
    if len(d) > EXACT_PAIRS:
        sd = float(np.sqrt(np.sum(ranks2.astype(float) ** 2))) / 2
        return float(norm.sf((t - total / 2 - 1) / sd))
    dist = np.zeros(total + 1)
    dist[0] = 1.0
    for r in ranks2.tolist():
        shifted = np.zeros_like(dist)
        shifted[r:] = dist[: total + 1 - r]
        dist = 0.5 * (dist + shifted)
    return min(1.0, float(dist[t:].sum()))


@dataclass(frozen=True)
class JudgeCheck:
    """Consistency of one judge: mean absolute difference between a trial and its exact repeat, mean absolute
    error on known-answer items, and (DA) the one-sided signed-rank p-value (:func:`signed_rank_p`) that bad
    references score lower than their originals (None: no pairs). ``flagged``: p >= alpha. ``decisive``: the
    judge has at least :func:`min_pairs` non-zero pairs, the fewest with which the test can reach alpha (a
    judge flagged without them has not failed the test, they did too few controls to pass it)."""

    repeat_diff: float | None
    known_error: float | None
    bad_pairs: int
    bad_p: float | None
    flagged: bool
    decisive: bool = False


def judge_check(
    repeats: Sequence[tuple[float, float]],
    known: Sequence[tuple[float, float]],
    bad: Sequence[tuple[float, float]],
    alpha: float = 0.05,
) -> JudgeCheck:
    """From (original, repeat), (score, expected) and (original, bad reference) score pairs of one judge."""
    rep = statistics.fmean(abs(a - b) for a, b in repeats) if repeats else None
    err = statistics.fmean(abs(a - b) for a, b in known) if known else None
    diffs = [o - b for o, b in bad]
    p = signed_rank_p(diffs) if bad else None
    decisive = sum(x != 0 for x in diffs) >= min_pairs(alpha)
    return JudgeCheck(rep, err, len(bad), p, p is not None and p >= alpha, decisive)


def z_scores(scores: Mapping[str, Sequence[float]]) -> dict[str, tuple[float, float]]:
    """Judge -> (mean, standard deviation) of their raw scores; a z-score is (x - mean) / sd. A judge whose
    scores are all equal has sd 0 and every z-score 0 (no spread to standardise; never NaN)."""
    out = {}
    for judge, xs in scores.items():
        arr = np.asarray(xs, dtype=float)
        out[judge] = (float(arr.mean()), float(arr.std(ddof=1)) if len(arr) > 1 else 0.0)
    return out


def z(x: float, mean: float, sd: float) -> float:
    return 0.0 if sd == 0 else (x - mean) / sd


def pairs_by_judge(
    rows: Sequence[tuple[str, int, str, int | None, float | None, float]],
) -> dict[str, tuple[list[tuple[float, float]], list[tuple[float, float]], list[tuple[float, float]]]]:
    """Judge -> (repeat pairs, known pairs, bad-reference pairs) from rows
    (judge, position, kind, of_position, expected, score) of one criterion."""
    by_pos: dict[tuple[str, int], float] = {(j, p): s for j, p, _, _, _, s in rows}
    out: dict[str, tuple[list[tuple[float, float]], list[tuple[float, float]], list[tuple[float, float]]]]
    out = defaultdict(lambda: ([], [], []))
    for j, _, kind, of, expected, s in rows:
        rep, kn, bad = out[j]
        if kind == "known" and expected is not None:
            kn.append((s, expected))
        elif kind in ("repeat", "bad") and of is not None and (j, of) in by_pos:
            (rep if kind == "repeat" else bad).append((by_pos[j, of], s))
        else:
            out[j]
    return dict(out)
