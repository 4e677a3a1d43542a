"""Quality control of a study, computed from what the store holds: description outliers (Chen & Dolan's
review of Tier-1 workers, with ngrameval's own sentence BLEU), per-judge consistency on repeated and
known-answer trials (Belz & Reiter), and WMT Direct Assessment's checks (Graham et al. 2013): a one-sided
Wilcoxon signed-rank test per annotator that degraded "bad reference" copies score lower than their originals,
and per-annotator z-scores. Pure functions of plain values."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class DescriptionCheck:
    """One description's sentence BLEU against the other descriptions of its stimulus (None if it is alone),
    its length in words and whether its declared language differs from the study's."""

    bleu: float | None
    words: int
    other_language: bool


def description_checks(
    by_stimulus: Mapping[str, Sequence[tuple[str, str]]], language: str
) -> dict[tuple[str, int], DescriptionCheck]:
    """(stimulus, index) -> check, for ``by_stimulus``: stimulus -> [(text, declared language)]. BLEU is
    sacreBLEU's sentence BLEU (exp smoothing, effective order) against the stimulus' other descriptions; one
    BLEU call for every stimulus at once (a call per stimulus took 35 s at 100,000 descriptions, this 1 s)."""
    from ngrameval.api import bleu

    hyps: list[str] = []
    refs: list[list[str]] = []
    scored: list[tuple[str, int]] = []
    for key, descs in by_stimulus.items():
        texts = [t for t, _ in descs]
        if len(texts) > 1:
            for i in range(len(texts)):
                hyps.append(texts[i])
                refs.append([*texts[:i], *texts[i + 1 :]])
                scored.append((key, i))
    scores: dict[tuple[str, int], float] = {}
    if hyps:
        sent = bleu(hyps, refs, smooth="exp", eff=True).sentences
        assert sent is not None  # asked for above
        scores = {k: float(x) for k, x in zip(scored, sent)}
    return {
        (key, i): DescriptionCheck(scores.get((key, i)), len(text.split()), lang.lower() != language.lower())
        for key, descs in by_stimulus.items()
        for i, (text, lang) in enumerate(descs)
    }


@dataclass(frozen=True)
class AnnotatorCheck:
    submissions: int
    mean_bleu: float | None
    mean_words: float
    other_language: int
    flags: tuple[str, ...]


def annotator_checks(checks: Mapping[K, Sequence[DescriptionCheck]]) -> dict[K, AnnotatorCheck]:
    """Annotator -> summary and flags. Flags: ``low-bleu`` (mean BLEU below half the median annotator's),
    ``short`` (under 3 words on average) / ``long`` (over 3 times the median annotator's mean length),
    ``language`` (any description declared in another language)."""
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
        out[a] = AnnotatorCheck(len(cs), mb, mw, other, tuple(flags))
    return out


@dataclass(frozen=True)
class JudgeCheck:
    """Consistency of one judge: mean absolute difference between a trial and its exact repeat, mean absolute
    error on known-answer items, and (DA) the one-sided Wilcoxon signed-rank p-value that bad references
    score lower than their originals (None: no pairs). ``flagged``: p >= alpha, or no bad reference lower."""

    repeat_diff: float | None
    known_error: float | None
    bad_pairs: int
    bad_p: float | None
    flagged: bool


def judge_check(
    repeats: Sequence[tuple[float, float]],
    known: Sequence[tuple[float, float]],
    bad: Sequence[tuple[float, float]],
    alpha: float = 0.05,
) -> JudgeCheck:
    """From (original, repeat), (score, expected) and (original, bad reference) score pairs of one judge."""
    from scipy.stats import wilcoxon

    rep = statistics.fmean(abs(a - b) for a, b in repeats) if repeats else None
    err = statistics.fmean(abs(a - b) for a, b in known) if known else None
    p: float | None = None
    flagged = False
    if bad:
        diffs = np.array([o - b for o, b in bad], dtype=float)
        if np.all(diffs == 0):
            p = 1.0
        else:
            p = float(wilcoxon(diffs[diffs != 0], alternative="greater").pvalue)
        flagged = p >= alpha
    return JudgeCheck(rep, err, len(bad), p, flagged)


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
