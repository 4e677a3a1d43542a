"""Everything the HTML report shows, computed once into frozen results (:func:`build_report`); the page itself
is rendered by :mod:`ngrameval.report.html` from these and computes nothing (the report floor renders, this
meta-evaluation floor computes)."""

from __future__ import annotations

import os
import shlex
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ngrameval._version import __version__
from ngrameval.api import measure, segment_major
from ngrameval.corpus.paraphrase import ParaphraseResult, paraphrase
from ngrameval.errors import InputError
from ngrameval.meta import analysis as an
from ngrameval.meta.correlate import Correlation, HumanScores, correlate
from ngrameval.meta.metric_difference import MetricDifference, compare_correlations
from ngrameval.meta.plane import (
    DEFAULT_ALPHAS,
    DEFAULT_ORDERS,
    Plane,
    checked_grid,
    plane,
    plane_of_totals,
    planes,
    planes_of_totals,
)
from ngrameval.meta.resample import resolve_seed
from ngrameval.meta.significance import (
    DEFAULT_SEED,
    Comparison,
    MetricComparison,
    SystemScore,
    bootstrap_scores,
    paired_test,
)
from ngrameval.metrics.registry import MetricSpec
from ngrameval.ngrams.stats import MetricRows, Stats
from ngrameval.text.pipeline import Preprocess


@dataclass(frozen=True)
class ReportOptions:
    """The settings of every computation in the report (the defaults of ``compare`` and ``correlate``)."""

    test: str = "ar"
    n_resamples: int | None = None
    n_confidence: int = 1000
    seed: int | None = DEFAULT_SEED
    correction: str = "holm"
    alpha: float = 0.05
    confidence: float = 0.95
    coefficients: tuple[str, ...] = ("pearson", "spearman")
    n_corr_resamples: int = 1000
    examples: int = 5
    ngrams: int = 10
    max_pairs: int = 3


@dataclass(frozen=True)
class HumanSection:
    """One criterion: its scores, the correlations (system, and segment level when judged per segment), the
    tests between metrics' correlations, the (alpha, N) plane and notes on what could not be computed."""

    human: HumanScores
    correlations: tuple[Correlation, ...]
    differences: tuple[MetricDifference, ...]
    plane: Plane | None
    notes: tuple[str, ...]


@dataclass(frozen=True)
class ReportData:
    """The report's results; ``metrics`` hold every system's score and interval (and, with two systems or
    more, the pair tests and ranking of :func:`~ngrameval.meta.significance.paired_test`)."""

    title: str
    command: str
    systems: tuple[str, ...]
    n_segments: int
    n_refs: tuple[int, ...]
    score_signatures: tuple[str, ...]  # per metric, as ``ngrameval score`` prints them
    comparison: Comparison | None  # None for a single system (nothing to compare)
    metrics: tuple[MetricComparison, ...]
    confidence: float
    humans: tuple[HumanSection, ...] = ()
    lengths: tuple[an.Bucketed, ...] = ()
    words: an.WordAccuracy | None = None
    pairs: tuple[an.PairAnalysis, ...] = ()
    analysis_text: str = ""  # the text setting of the analysis (tokens, n-grams)
    paraphrase: ParaphraseResult | None = None
    version: str = field(default=__version__)
    absent: str = ""  # what the inputs could not give (a report of statistics without their texts), said on the page


def _relative(value: object, base: str | None) -> str:
    """``value`` as text; an existing file's path relative to ``base`` (the directory of the page)."""
    text = str(value)
    if base is None or not isinstance(value, str) or not os.path.exists(value):
        return text
    try:
        return os.path.relpath(value, base)
    except ValueError:  # another drive (Windows)
        return text


def command_line(
    prog: str,
    settings: Mapping[str, Any],
    positional: str = "systems",
    defaults: Mapping[str, Any] | None = None,
    base: str | None = None,
) -> str:
    """A shell command repeating ``settings`` (an argparse namespace's ``vars``): ``--name value`` per option
    set (lists repeated, ``True`` a bare flag; ``None``/``False`` and values equal to ``defaults`` left out);
    paths of existing files relative to ``base`` (the directory of the page), so no machine path shows."""
    words = [*prog.split(), *(_relative(v, base) for v in settings.get(positional) or [])]
    defaults = defaults or {}
    for key, value in settings.items():
        if key in (positional, "func", "command", "output") or key.startswith("_") or value is None or value is False:
            continue
        if key in defaults and defaults[key] == value:
            continue
        words.append("--" + key.replace("_", "-"))
        if isinstance(value, list | tuple):
            words += [_relative(v, base) for v in value]
        elif value is not True:
            words.append(_relative(value, base))
    return shlex.join(words)


def _intervals(rows: Sequence[MetricRows], names: Sequence[str], opts: ReportOptions) -> tuple[MetricComparison, ...]:
    """Scores and bootstrap percentile intervals without pair tests (a single system)."""
    rng = np.random.default_rng(resolve_seed(opts.seed))
    q = ((1 - opts.confidence) / 2, (1 + opts.confidence) / 2)
    out = []
    for r, s in zip(rows, bootstrap_scores(rows, opts.n_confidence, rng)):
        obs = r.corpus()
        lo, hi = np.quantile(s, q, axis=0)
        systems = tuple(SystemScore(n, float(obs[i]), float(s[:, i].mean()), float(lo[i]), float(hi[i]))
                        for i, n in enumerate(names))  # fmt: skip
        out.append(MetricComparison(r.metric, r.signature, r.fraction, systems, (), None, r.higher_is_better))
    return tuple(out)


def _planes(
    systems: Mapping[str, Sequence[str]], refs: Sequence[Sequence[str]], humans: Sequence[HumanScores], pre: Preprocess
) -> list[Plane | str]:
    """Every criterion's (alpha, N) plane from one count of the systems they judge; when that fails, each
    criterion on its own, so that one that cannot have a plane says why (a message) and the others still do."""
    try:
        return list(planes(systems, refs, [(h, "r2") for h in humans], pre=pre))
    except InputError:
        pass
    out: list[Plane | str] = []
    for human in humans:
        try:
            out.append(plane(systems, refs, human, pre=pre))
        except InputError as exc:
            out.append(str(exc))
    return out


def _human_section(
    rows: Sequence[MetricRows], human: HumanScores, found: Plane | str, opts: ReportOptions
) -> HumanSection:
    corr: list[Correlation] = []
    notes: list[str] = []
    copts = {"coefficients": opts.coefficients, "n_resamples": opts.n_corr_resamples, "seed": opts.seed,
             "confidence": opts.confidence}  # fmt: skip
    levels = ["system"] + (["segment"] if human.segment is not None else [])
    for level in levels:
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                corr += correlate(rows, human, level=level, **copts)  # type: ignore[arg-type]
            notes += [str(w.message) for w in caught]
        except InputError as exc:
            notes.append(f"{level} level: {exc}")
    diffs: tuple[MetricDifference, ...] = ()
    if len(rows) >= 2:
        try:
            diffs = compare_correlations(rows, human, coefficient_name=opts.coefficients[0],
                                         n_resamples=opts.n_corr_resamples, seed=opts.seed)  # fmt: skip
        except InputError as exc:
            notes.append(f"metric-vs-metric tests: {exc}")
    if isinstance(found, str):
        notes.append(f"(alpha, N) plane: {found}")
    return HumanSection(human, tuple(corr), diffs, None if isinstance(found, str) else found, tuple(notes))


def build_report(
    systems: Mapping[str, Sequence[str]],
    refs: Sequence[str] | Sequence[Sequence[str]],
    specs: Sequence[MetricSpec],
    *,
    source: Sequence[str] | None = None,
    humans: Sequence[HumanScores] = (),
    options: ReportOptions = ReportOptions(),
    title: str = "ngrameval report",
    command: str = "",
    jobs: int | None = 1,
    plane_text: Preprocess | None = None,
    rows: Sequence[MetricRows] | None = None,
) -> ReportData:
    """Scores with intervals, all-pairs tests and ranking, correlations with ``humans`` and their planes, the
    compare-mt analysis (two systems or more) and, with ``source``, the paraphrase scores — as far as the
    inputs allow (a section that cannot be computed says why in its notes). ``jobs``: threads for scoring and
    resampling (the numbers do not depend on it). ``plane_text``: the text settings of the (alpha, N) planes
    (default: those of the first metric). ``rows``: the per-segment rows of ``specs`` already counted on these
    texts (kept in a stats file): not counted again."""
    seg_refs = segment_major(refs)
    names = list(systems)
    rows = measure(systems, seg_refs, specs, source, jobs) if rows is None else list(rows)
    pre = specs[0].pre
    found = _planes(systems, seg_refs, humans, plane_text or pre) if humans else []
    data = _scored(rows, names, len(seg_refs), tuple(sorted({len(r) for r in seg_refs})), humans, found, options,
                   jobs)  # fmt: skip
    opts = options
    text = Preprocess(pre.tokenize, pre.lowercase)  # the analysis shows words: no stemming, no stop-word removal
    enc = an.encode(systems, seg_refs, text)
    lengths = tuple(an.bucket_scores(r, names, an.reference_lengths(enc), by="mean reference length") for r in rows)
    words = pairs = None
    if len(names) >= 2:
        orders = an.matches(enc.hyps, enc.refs, enc.seg)
        words = an.word_accuracy(enc, orders[0])
        pairs = tuple(an.pair_analysis(enc, orders, rows[0], 0, b, opts.ngrams, opts.examples)
                      for b in range(1, min(len(names), opts.max_pairs + 1)))  # fmt: skip
    para = None
    if source is not None:
        para = paraphrase(systems, source, seg_refs, tokenize=pre.tokenize, lowercase=pre.lowercase)
    return replace(data, title=title, command=command, lengths=lengths, words=words, pairs=pairs or (),
                   analysis_text=text.signature(), paraphrase=para)  # fmt: skip


def _scored(
    rows: Sequence[MetricRows],
    names: Sequence[str],
    n_segments: int,
    n_refs: tuple[int, ...],
    humans: Sequence[HumanScores],
    found: Sequence[Plane | str],
    opts: ReportOptions,
    jobs: int | None,
) -> ReportData:
    """The report's parts that come from the rows alone (and the planes ``found``): scores, tests, people."""
    comparison = None
    if len(names) >= 2:
        comparison = paired_test(
            rows, list(names), test=opts.test, n_resamples=opts.n_resamples, n_confidence=opts.n_confidence,
            seed=opts.seed, correction=opts.correction, alpha=opts.alpha, confidence=opts.confidence, jobs=jobs,
        )  # fmt: skip
        metrics = comparison.metrics
    else:
        metrics = _intervals(rows, names, opts)
    sections = tuple(_human_section(rows, h, f, opts) for h, f in zip(humans, found, strict=True))
    return ReportData(title="", command="", systems=tuple(names), n_segments=n_segments, n_refs=n_refs,
                      score_signatures=tuple(r.signature for r in rows), comparison=comparison, metrics=tuple(metrics),
                      confidence=opts.confidence, humans=sections)  # fmt: skip


def build_stored_report(
    rows: Sequence[MetricRows],
    names: Sequence[str],
    n_segments: int,
    n_refs: Sequence[int],
    *,
    totals: Stats | str,
    absent: str,
    humans: Sequence[HumanScores] = (),
    options: ReportOptions = ReportOptions(),
    title: str = "ngrameval report",
    command: str = "",
    jobs: int | None = 1,
    plane_text: Preprocess | None = None,
) -> ReportData:
    """The report of per-segment ``rows`` kept without their texts (a stats file): the scores, tests and
    correlations of :func:`build_report`; the (alpha, N) planes from the kept n-gram ``totals`` of every system
    (counted under ``plane_text`` at the planes' highest order or above; a str: why there are none); no analysis
    of the texts, which ``absent`` says (one line, shown on the page)."""
    found: list[Plane | str] = []
    if humans:
        found = [totals] * len(humans) if isinstance(totals, str) else _planes_of_totals(totals, names, humans,
                                                                                       plane_text)  # fmt: skip
    data = _scored(rows, names, n_segments, tuple(sorted(n_refs)), humans, found, options, jobs)
    return replace(data, title=title, command=command, absent=absent)


def _planes_of_totals(
    totals: Stats, names: Sequence[str], humans: Sequence[HumanScores], pre: Preprocess | None
) -> list[Plane | str]:
    """:func:`_planes` from kept totals: the default grid, each criterion on its own when they fail together."""
    text = pre or Preprocess()
    alphas, orders = checked_grid(DEFAULT_ALPHAS, DEFAULT_ORDERS, 1.0, 2.0)
    try:
        return list(planes_of_totals(totals, names, [(h, "r2") for h in humans], text, alphas, orders, 1.0, 2.0))
    except InputError:
        pass
    row = {s: k for k, s in enumerate(names)}
    out: list[Plane | str] = []
    for human in humans:
        missing = [s for s in human.systems if s not in row]
        try:
            if missing:
                raise InputError(f"no output for judged system(s) {', '.join(missing)}")
            mine = Stats(totals.values[[row[s] for s in human.systems]], totals.max_order, totals.has_info)
            out.append(plane_of_totals(mine, human, text, alphas, orders, "r2", 1.0, 2.0))
        except InputError as exc:
            out.append(str(exc))
    return out
