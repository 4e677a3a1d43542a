"""Quality control of a study, computed from what the store holds: description outliers (Chen & Dolan's
review of Tier-1 workers, with ngrameval's own sentence BLEU), per-judge consistency on repeated and
known-answer trials (Belz & Reiter), and WMT Direct Assessment's checks (Graham et al. 2013, 2017): a one-sided
Wilcoxon signed-rank test per annotator, exact, that degraded "bad reference" copies score lower than their
originals (Appraise runs a one-sided Mann-Whitney U on the same pairs; the paired test uses the pairing), and
per-annotator z-scores. Pure functions of plain values."""

from __future__ import annotations

import functools
import math
import re
import statistics
from collections import defaultdict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

K = TypeVar("K", bound=Hashable)


COPY_PINC = 0.1  # a paraphrase whose PINC against its source is below this is a copy (benchmarks/bench_copy_pinc.py)
# The languages the identifier may answer (ISO 639-1), the study's own added: widely written ones. py3langid knows
# 97 more; among them Afrikaans, Frisian, Nigerian Pidgin, Tagalog and Javanese were its answers for English
# crowd descriptions such as "A dog is drinking water" (benchmarks/bench_langid.py).
LANGID_LANGUAGES = (
    *("en", "de", "fr", "es", "it", "pt", "nl", "sv", "da", "no", "fi", "pl", "cs", "sk", "hu", "ro", "bg"),
    *("ru", "uk", "el", "tr", "ar", "he", "fa", "hi", "bn", "ur", "ta", "te", "zh", "ja", "ko", "vi", "th"),
    *("id", "ms", "lt", "lv", "et", "hr", "sl", "sr", "kk", "gu", "mr"),
)
LANGUAGE_CODES = {  # a study's ``language`` name -> ISO 639-1; a two-letter code is taken as it is
    "english": "en", "german": "de", "french": "fr", "spanish": "es", "italian": "it", "portuguese": "pt",
    "dutch": "nl", "swedish": "sv", "danish": "da", "norwegian": "no", "finnish": "fi", "polish": "pl",
    "czech": "cs", "slovak": "sk", "hungarian": "hu", "romanian": "ro", "bulgarian": "bg", "russian": "ru",
    "ukrainian": "uk", "greek": "el", "turkish": "tr", "arabic": "ar", "hebrew": "he", "persian": "fa",
    "hindi": "hi", "bengali": "bn", "urdu": "ur", "tamil": "ta", "telugu": "te", "chinese": "zh",
    "japanese": "ja", "korean": "ko", "vietnamese": "vi", "thai": "th", "indonesian": "id", "malay": "ms",
    "lithuanian": "lt", "latvian": "lv", "estonian": "et", "croatian": "hr", "slovenian": "sl",
    "serbian": "sr", "kazakh": "kk", "gujarati": "gu", "marathi": "mr",
}  # fmt: skip
Detect = Callable[[str], tuple[str, float]]


def language_code(name: str) -> str | None:
    """ISO 639-1 code of a language ``name`` ("English", "en"); None if unknown."""
    key = name.strip().lower()
    return key if len(key) == 2 and key.isalpha() else LANGUAGE_CODES.get(key)


@dataclass(frozen=True)
class Rules:
    """The ``[quality]`` table of a study.

    ``copy_pinc``: the PINC against the source below which a paraphrase is a copy (0 turns the check off).
    Attention checks (control stimuli with gold answers): an answer passes when its ``control_metric`` score
    (:func:`control_score`) is >= ``pass_mark``; :func:`qualification` decides after ``min_controls`` answers
    whether at least ``pass_rate`` of them passed; ``control_every``: one item in that many is a control (the
    ``control_every``-th, ``2 * control_every``-th, ... item an annotator is shown, while controls are left).
    ``language_check``: identify each description's language (py3langid); ``language_code``: the study's, as
    ISO 639-1; a description of at least ``language_min_words`` words identified as another language with
    probability >= ``language_confidence`` among ``languages`` (plus the study's) is flagged."""

    copy_pinc: float = COPY_PINC
    control_metric: str = "bleu"
    pass_mark: float = 0.1
    min_controls: int = 3
    pass_rate: float = 0.66  # 2 of 3
    control_every: int = 5
    language_check: bool = True
    language_code: str = "en"
    language_confidence: float = 0.7
    language_min_words: int = 3
    languages: tuple[str, ...] = LANGID_LANGUAGES


@functools.lru_cache(maxsize=8)
def language_detector(languages: tuple[str, ...] = LANGID_LANGUAGES) -> Detect:
    """A text's (ISO 639-1 code, probability) by py3langid (langid.py's model, Lui & Baldwin 2012; normalised
    probabilities), answering only among ``languages`` (those the model knows); results are cached per text.
    Imports py3langid and loads its model (about 1.5 s) on first use."""
    try:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier
    except ImportError as exc:
        from ngrameval.errors import MissingDependencyError

        raise MissingDependencyError("py3langid", "langid") from exc
    ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    ident.set_languages([x for x in languages if x in ident.nb_classes])

    @functools.lru_cache(maxsize=200_000)
    def detect(text: str) -> tuple[str, float]:
        code, prob = ident.classify(text)
        return str(code), float(prob)

    return detect


@dataclass(frozen=True)
class DescriptionCheck:
    """One description's sentence BLEU against the other descriptions of its stimulus (None if it is alone),
    its length in words and whether its declared language differs from the study's; for a paraphrase, its PINC
    against the source sentence (Chen & Dolan 2011: the share of its n-grams, n = 1..4, not in the source,
    averaged over n; None: not a paraphrase) and ``copy``: PINC below :attr:`Rules.copy_pinc`; the language
    identified in the text and its probability (None: not checked) and ``wrong_language``: identified as
    another language than the study's, by the rules of :class:`Rules`."""

    bleu: float | None
    words: int
    other_language: bool
    pinc: float | None = None
    copy: bool = False
    detected: str | None = None
    detected_p: float | None = None
    wrong_language: bool = False


def source_pinc(pairs: Sequence[tuple[str, str]]) -> list[float | None]:
    """PINC of each (paraphrase, source) pair with :func:`ngrameval.corpus.paraphrase.pinc` (13a tokens, lower-cased,
    n = 4: a copy with other capitals is still a copy); None for an empty paraphrase."""
    from ngrameval.corpus.paraphrase import pinc

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
    detect: Detect | None = None,
) -> dict[tuple[str, int], DescriptionCheck]:
    """(stimulus, index) -> check, for ``by_stimulus``: stimulus -> [(text, declared language)]. BLEU is
    sacreBLEU's sentence BLEU (exp smoothing, effective order) against the stimulus' other descriptions, in one
    BLEU call for every stimulus at once (a call per stimulus took 35 s at 100,000 descriptions, this 1 s);
    ``sources`` (stimulus -> the sentence to paraphrase) adds each paraphrase's PINC against it; ``detect``
    (e.g. :func:`language_detector`) identifies each text's language."""
    from ngrameval.api import bleu

    keys = [(key, i) for key, descs in by_stimulus.items() for i in range(len(descs)) if sources and key in sources]
    pincs = dict(zip(keys, source_pinc([(by_stimulus[k][i][0], sources[k]) for k, i in keys]) if sources else []))
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
    out: dict[tuple[str, int], DescriptionCheck] = {}
    for key, descs in by_stimulus.items():
        for i, (text, lang) in enumerate(descs):
            p = pincs.get((key, i))
            copy = p is not None and p < rules.copy_pinc
            words = len(text.split())
            found, prob = detect(text) if detect is not None and text.strip() else (None, None)
            wrong = (
                found is not None
                and prob is not None
                and words >= rules.language_min_words
                and found != rules.language_code
                and prob >= rules.language_confidence
            )
            declared = lang.lower() != language.lower()
            out[key, i] = DescriptionCheck(scores.get((key, i)), words, declared, p, copy, found, prob, wrong)
    return out


@dataclass(frozen=True)
class AnnotatorCheck:
    """One annotator's descriptions: how many, mean BLEU against the others' descriptions, mean length, how
    many declared in another language, (paraphrase) mean PINC against the sources and how many copies, how
    many identified as another language, and the flags of :func:`annotator_checks`."""

    submissions: int
    mean_bleu: float | None
    mean_words: float
    other_language: int
    flags: tuple[str, ...]
    mean_pinc: float | None = None
    copies: int = 0
    wrong_language: int = 0


def annotator_checks(checks: Mapping[K, Sequence[DescriptionCheck]]) -> dict[K, AnnotatorCheck]:
    """Annotator -> summary and flags. Flags: ``low-bleu`` (mean BLEU below half the median annotator's),
    ``short`` (under 3 words on average) / ``long`` (over 3 times the median annotator's mean length),
    ``language`` (any description declared in another language), ``copy`` (any paraphrase that copies its
    source), ``detected-language`` (any description identified as another language)."""
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
        wrong = sum(c.wrong_language for c in cs)
        if wrong:
            flags.append("detected-language")
        pincs = [c.pinc for c in cs if c.pinc is not None]
        mean_pinc = statistics.fmean(pincs) if pincs else None
        out[a] = AnnotatorCheck(len(cs), mb, mw, other, tuple(flags), mean_pinc, copies, wrong)
    return out


CONTROL_METRICS = ("bleu", "keywords")


def control_score(text: str, gold: Sequence[str], metric: str) -> float:
    """How well ``text`` answers a control stimulus whose gold answers are ``gold``: ``bleu``, sacreBLEU's
    sentence BLEU (exp smoothing, effective order) against all of them; ``keywords``, the share of the gold
    keywords (each a word or phrase) found in the text, as whole lower-cased words."""
    if metric == "keywords":
        words = " " + " ".join(re.findall(r"\w+", text.lower())) + " "
        keys = [" " + " ".join(re.findall(r"\w+", k.lower())) + " " for k in gold]
        return sum(k in words for k in keys) / len(keys) if keys else 0.0
    if metric != "bleu":
        raise ValueError(f"control metric must be one of {', '.join(CONTROL_METRICS)}, got {metric!r}")
    from ngrameval.api import bleu

    if not text.strip():
        return 0.0
    sent = bleu([text], [list(gold)], smooth="exp", eff=True).sentences
    assert sent is not None  # asked for
    return float(sent[0])


@dataclass(frozen=True)
class ControlCheck:
    """One annotator's attention checks: answers to control stimuli, how many passed, mean score."""

    controls: int
    passed: int
    mean_score: float | None


def control_checks(
    answers: Mapping[K, Sequence[tuple[str, str]]], gold: Mapping[str, Sequence[str]], rules: Rules = Rules()
) -> dict[K, ControlCheck]:
    """Annotator -> their attention checks, from ``answers``: annotator -> [(stimulus, text)] (answers to other
    stimuli are ignored) and ``gold``: control stimulus -> its gold answers (the manifest's ``control`` column)."""
    out = {}
    for a, rows in answers.items():
        scores = [control_score(text, gold[k], rules.control_metric) for k, text in rows if gold.get(k)]
        passed = sum(x >= rules.pass_mark for x in scores)
        out[a] = ControlCheck(len(scores), passed, statistics.fmean(scores) if scores else None)
    return out


def qualification(check: ControlCheck, rules: Rules = Rules()) -> str:
    """``passed``, ``failed`` or ``undecided``: after ``min_controls`` answered controls, passed when at least
    ``pass_rate`` of them passed; failed as soon as so many failed that ``min_controls`` answers could no longer
    pass; undecided before."""
    failed = check.controls - check.passed
    allowed = rules.min_controls - math.ceil(rules.pass_rate * rules.min_controls - 1e-9)
    if check.controls >= rules.min_controls:
        return "passed" if check.passed >= rules.pass_rate * check.controls - 1e-9 else "failed"
    return "failed" if failed > allowed else "undecided"


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


def preference_p(preferred: int, n: int) -> float:
    """One-sided exact binomial p-value that a judge who chose the original over its bad reference ``preferred``
    times in ``n`` such comparisons prefers it more often than chance: ``P(X >= preferred)`` for ``X ~ Bin(n,
    1/2)``, the sign test (Dixon & Mood 1946) with every comparison counted. 1.0 without comparisons.

    >>> preference_p(5, 5)
    0.03125
    """
    if not 0 <= preferred <= n:
        raise ValueError(f"preferred must be in 0..{n}, got {preferred}")
    return math.fsum(math.comb(n, k) for k in range(preferred, n + 1)) / 2**n if n else 1.0


@dataclass(frozen=True)
class PairCheck:
    """One judge of a side-by-side study: ``repeats`` repeat controls (a comparison again, sides swapped) and the
    share of them answered as the original (the same winner in system terms; None: no repeats); ``bad_pairs``
    bad-reference comparisons (an output against its own degraded copy), how many chose the original
    (``bad_preferred``) and called a tie (``bad_ties``), and :func:`preference_p` (a tie counts as not preferring
    the original). ``flagged``: p >= alpha, as DA's :class:`JudgeCheck`; ``decisive``: at least
    :func:`min_pairs` bad-reference answers, the fewest with which the test can reach alpha. ``training``: the
    judge's training outcome (passed, failed; None: no training)."""

    repeats: int
    repeat_agreement: float | None
    bad_pairs: int
    bad_preferred: int
    bad_ties: int
    bad_p: float | None
    flagged: bool
    decisive: bool
    training: str | None = None


def pair_check(
    repeats: Sequence[tuple[str, str]], bad: Sequence[str], alpha: float = 0.05, training: str | None = None
) -> PairCheck:
    """From one judge's (original's winner, repeat's winner) pairs (``a``, ``b``, ``tie`` in system terms) and
    the winners of their bad-reference comparisons (``a``: the original, ``b``: its degraded copy, ``tie``)."""
    agree = statistics.fmean(x == y for x, y in repeats) if repeats else None
    preferred = sum(w == "a" for w in bad)
    p = preference_p(preferred, len(bad)) if bad else None
    decisive = len(bad) >= min_pairs(alpha)
    ties = sum(w == "tie" for w in bad)
    return PairCheck(len(repeats), agree, len(bad), preferred, ties, p, p is not None and p >= alpha, decisive,
                     training)  # fmt: skip
