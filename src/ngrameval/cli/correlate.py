"""``ngrameval correlate``: metrics against human judgments, per data set, with intervals and tests."""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ngrameval.api import measure
from ngrameval.cli.inputs import (
    decimals,
    emit,
    external_scores_from,
    judged,
    judged_systems,
    judgments_from,
    metric_specs,
    parse_low_high,
    scoring_inputs,
)
from ngrameval.cli.options import (
    RenamedOption,
    add_external_scores,
    add_judged_scoring,
    add_judgment_options,
    add_output_options,
    add_text_options,
    count_arg,
    level_arg,
    parse_coefficients,
    parse_floats,
    sig_level_arg,
)
from ngrameval.cli.stats import stored_rows
from ngrameval.errors import ConfigError, InputError
from ngrameval.io.write import dumps_json
from ngrameval.ngrams.stats import MetricRows

if TYPE_CHECKING:
    from ngrameval.meta.correlate import HumanScores
    from ngrameval.meta.resample import FloatArray


def _correlate_inputs(
    args: argparse.Namespace, dataset: str | None = None
) -> tuple[list[MetricRows], list[HumanScores], dict[str, list[str]], list[list[str]], list[str] | None]:
    """Metric rows (ngrameval's from system files and references, and those of --scores), human scores,
    systems, references and source; with --scores and no system file nor reference, the external metrics only."""
    from ngrameval.io.scores import systems_and_segments, to_rows
    from ngrameval.meta.correlate import aggregate

    external = external_scores_from(args, dataset)
    if external and not args.systems and not args.refs:
        if args.given:
            raise ConfigError("--given scores the system files: give them with -r/--refs")
        judgments = judgments_from(args, dataset)
        names, segs = systems_and_segments(external)
        by_segment = any(j.segment is not None for j in judgments)
        if by_segment and segs is None:
            raise InputError(f"{args.judgments}: segment-level judgments, but {args.scores[0]} has system-level scores")
        # a system or segment judged but absent from the scores is the scores' gap: to_rows names their file
        names += [x for x in dict.fromkeys(j.system for j in judgments) if x not in names]
        if by_segment and segs is not None:
            segs += [x for x in dict.fromkeys(str(j.segment) for j in judgments) if x not in segs]
        scale = parse_low_high("--scale", args.scale) if args.scale else None
        criteria = list(dict.fromkeys(j.criterion for j in judgments))
        humans = [aggregate(judgments, c, names, segs if by_segment else None, scale) for c in criteria]
        return to_rows(external, names, segs, _judged_cells(humans)), humans, {}, [], None
    if (kept := stored_rows(args)) is not None:  # a stats file given where the system files go
        if args.given:
            raise ConfigError("--given counts a metric on the text: give system files, not a stats file")
        names, rows = kept
        n, source = len(rows[0].values[0]), None
        systems: dict[str, list[str]] = {}
        refs: list[list[str]] = []
        humans = judged(args, names, n)
    else:
        specs, refs, systems, source = scoring_inputs(args)
        systems, humans = judged_systems(args, systems)
        rows = measure(systems, refs, specs, source, jobs=args.jobs)
        names, n = list(systems), len(refs)
    if external:
        ids = humans[0].segments or tuple(str(i) for i in range(1, n + 1))
        rows = [*rows, *to_rows(external, names, ids, _judged_cells(humans))]
        clash = sorted({r.metric for r in rows if sum(q.metric == r.metric for q in rows) > 1})
        if clash:
            raise InputError(f"--scores: metric name(s) {', '.join(map(repr, clash))} also computed by ngrameval")
    return rows, humans, systems, refs, source


def _judged_note(h: HumanScores) -> str:
    """How many judgments a criterion has and how many of its cells (systems, or system x segment) have none."""
    what = ("system" if h.segment is None else "(system, segment) cell") + ("" if h.missing == 1 else "s")
    return f"{h.criterion}: {h.judgments} judgment{'' if h.judgments == 1 else 's'}; {h.missing} {what} without one"


def _epsilon_notes(results: Sequence[Any]) -> list[str]:
    """acc-eq: the calibrated tie threshold of every metric."""
    return [f"{c.criterion}: {c.metric}'s acc-eq ties metric differences <= epsilon {c.epsilon:.6g}" for c in results
            if c.epsilon is not None]  # fmt: skip


def _judged_cells(humans: list[HumanScores]) -> Any:
    """The (system, segment) cells judged for some criterion (those an external metric must score), or None."""
    import numpy as np

    cells = [~np.isnan(h.segment) for h in humans if h.segment is not None]
    return np.logical_or.reduce(cells) if cells else None


def cmd_correlate(args: argparse.Namespace) -> int:
    from ngrameval.meta.correlate import correlate, direction_notes
    from ngrameval.report.correlate import render_correlations

    if args.set_column:
        return _correlate_sets(args)
    rows, humans, systems, refs, source = _correlate_inputs(args)
    coefs = parse_coefficients(args.coefficients)
    results = [
        c
        for h in humans
        for c in correlate(
            rows, h, level=args.level, grouping=args.grouping, coefficients=coefs,
            n_resamples=args.confidence_n, seed=args.seed, confidence=args.ci,
        )
    ]  # fmt: skip
    notes = [_judged_note(h) for h in humans] + direction_notes(rows)
    notes += _epsilon_notes(results)
    extras = _correlate_extras(args, rows, humans, systems, refs, source)
    if not extras:
        emit(render_correlations(results, args.format, notes, decimals(args, 3)), args.output)
    elif args.format == "csv":
        raise ConfigError("--matrix/--compare-metrics/--given make several tables: use -f text or -f json")
    elif args.format == "json":
        corr = json.loads(render_correlations(results, "json"))
        emit(dumps_json({"correlations": corr, **{k: list(v) for k, v in extras.items()}}), args.output)
    else:
        from ngrameval.report import meta as rm
        from ngrameval.report.mtme import clusters_text
        from ngrameval.report.spa import spa_text

        w = decimals(args, 3)
        text = render_correlations(results, "text", notes, w)
        text += "".join(rm.matrix_text(m, f"{args.level} level", w) for m in extras.get("matrix", []))
        text += spa_text(extras.get("spa", []), extras.get("spa_differences", []), w)
        text += "".join(rm.differences_text([d for d in extras.get("differences", []) if d.criterion == h.criterion],
                        w) for h in humans)  # fmt: skip
        text += clusters_text(extras.get("clusters", []), w)
        text += "".join(rm.conditional_text([c for c in extras.get("conditional", []) if c.criterion == h.criterion],
                        w) for h in humans)  # fmt: skip
        emit(text, args.output)
    return 0


def _correlate_extras(
    args: argparse.Namespace,
    rows: list[MetricRows],
    humans: list[HumanScores],
    systems: dict[str, list[str]],
    refs: list[list[str]],
    source: list[str] | None,
    dataset: str = "",
) -> dict[str, list[Any]]:
    """Belz & Reiter's matrix, Williams'/permutation tests between metrics and their significance clusters,
    Chen & Dolan's conditional correlations — each only when asked for."""
    from ngrameval.meta.agreement import correlation_matrix
    from ngrameval.meta.correlate import sentence_matrix
    from ngrameval.meta.metric_difference import compare_correlations
    from ngrameval.meta.subsets import conditional_correlation

    coef = parse_coefficients(args.coefficients)[0]
    out: dict[str, list[Any]] = {}
    if args.spa:
        out.update(_spa_extras(args, rows, humans, dataset))
    if args.matrix:
        series: dict[str, FloatArray] = {}
        for r in (r.oriented() for r in rows):
            series[r.metric] = r.corpus() if args.level == "system" else sentence_matrix(r).ravel()
        for h in humans:
            human = h.system if args.level == "system" else h.segment
            if human is None:
                raise InputError(f"{h.criterion}: segment-level matrix needs segment-level judgments")
            series[h.criterion] = human.ravel()
        out["matrix"] = [correlation_matrix(series, coef)]
    if args.compare_metrics and not args.spa:
        from ngrameval.meta.mtme_sets import clusters, compare_tie_calibrated

        if coef == "acc-eq":  # mt-metrics-eval's pairs permutation test, grouped as asked
            out["differences"] = [
                d
                for h in humans
                for d in compare_tie_calibrated(
                    rows, h, level=args.level, grouping=args.grouping, n_resamples=args.confidence_n, seed=args.seed
                )
            ]
        else:
            if args.level == "segment" and args.grouping != "none":
                raise ConfigError(
                    "--compare-metrics at segment level compares correlations over all points: --grouping none"
                    " (or --coefficients acc-eq)"
                )
            opts = {"level": args.level, "coefficient_name": coef, "n_resamples": args.confidence_n, "seed": args.seed}
            out["differences"] = [d for h in humans for d in compare_correlations(rows, h, **opts)]
        out["clusters"] = list(clusters(out["differences"], args.sig_level, dataset))
    if args.given:
        given = metric_specs(args, args.given)
        if len(given) != 1:
            raise ConfigError(f"--given takes one metric spec, got {args.given!r}")
        (cond,) = measure(systems, refs, given, source)
        thresholds = parse_floats("--thresholds", args.thresholds)
        out["conditional"] = [c for h in humans for c in conditional_correlation(rows, cond, h, thresholds,
                                                                                 coefficient_name=coef)]  # fmt: skip
    return out


def _spa_extras(
    args: argparse.Namespace, rows: list[MetricRows], humans: list[HumanScores], dataset: str
) -> dict[str, list[Any]]:
    """--spa: soft pairwise accuracy of every metric (each --spa-side), and with --compare-metrics
    mt-metrics-eval's permutation test between every two metrics and its clusters."""
    from ngrameval.meta.spa import spa_clusters, spa_differences, spa_of_rows

    sides = ("segments", "statistics") if args.spa_side == "both" else (args.spa_side,)
    out: dict[str, list[Any]] = {"spa": [v for h in humans for v in spa_of_rows(rows, h, sides, dataset=dataset)]}
    if args.compare_metrics:
        diffs = [d for h in humans for d in spa_differences(rows, h, args.seed, args.confidence_n, dataset)]
        out["spa_differences"] = diffs
        out["clusters"] = spa_clusters(out["spa"], diffs, args.sig_level)
    return out


def _spa_pooled(
    args: argparse.Namespace, extras: dict[str, list[Any]], inputs: dict[str, list[Any]]
) -> dict[str, list[Any]]:
    """--spa over --set-column sets: pooled SPA records, and with --compare-metrics their permutation tests."""
    from ngrameval.meta.spa import pooled_differences, pooled_values, spa_clusters

    values = pooled_values(extras.get("spa", []))
    out: dict[str, list[Any]] = {"spa": values}
    if args.compare_metrics:
        diffs = [d for crit, sets in inputs.items()
                 for d in pooled_differences(sets, values, args.seed, args.confidence_n, crit)]  # fmt: skip
        out["spa_differences"] = diffs
        out["clusters"] = spa_clusters(values, diffs, args.sig_level)
    return out


def _correlate_sets(args: argparse.Namespace) -> int:
    """``correlate --set-column``: every data set (language pair) of the judgments on its own, then
    mt-metrics-eval's summary over the sets (average value and rank; pooled system-level accuracy)."""
    from ngrameval.io.scores import column_values
    from ngrameval.meta.correlate import correlate, direction_notes
    from ngrameval.meta.mtme import pooled_accuracy
    from ngrameval.meta.mtme_sets import Cluster, pooled_clusters, summarize
    from ngrameval.meta.spa import spa_inputs
    from ngrameval.report.correlate import render_correlations
    from ngrameval.report.mtme import clusters_text, summary_text
    from ngrameval.report.spa import spa_text

    if args.systems or args.refs or not args.scores:
        raise ConfigError("--set-column correlates --scores files (with that column) only: give no system file")
    coefs = parse_coefficients(args.coefficients)
    results: list[Any] = []
    extras: dict[str, list[Any]] = {}
    text, w = "", decimals(args, 3)
    pooled_x: dict[tuple[str, str], list[Any]] = {}
    pooled_y: dict[str, list[Any]] = {}
    spa_sets: dict[str, list[Any]] = {}
    sets = column_values(args.judgments, args.set_column)
    for ds in sets:
        rows, humans, *_ = _correlate_inputs(args, ds)
        found = [c for h in humans for c in correlate(
            rows, h, level=args.level, grouping=args.grouping, coefficients=coefs, n_resamples=args.confidence_n,
            seed=args.seed, confidence=args.ci, dataset=ds)]  # fmt: skip
        results += found
        more = _correlate_extras(args, rows, humans, {}, [], None, ds)
        for k, v in more.items():
            extras.setdefault(k, []).extend({"dataset": ds, **dataclasses.asdict(d)} if k == "differences" else d
                                            for d in v)  # fmt: skip
        for h in humans:
            if args.spa and args.compare_metrics:
                spa_sets.setdefault(h.criterion, []).append(spa_inputs(rows, h))
            pooled_y.setdefault(h.criterion, []).append(h.system)
            for r in rows:
                pooled_x.setdefault((h.criterion, r.metric), []).append(r.oriented().corpus())
        notes = [_judged_note(h) for h in humans] + direction_notes(rows)
        notes += _epsilon_notes(found)
        text += f"== {args.set_column} {ds} ==\n" + render_correlations(found, "text", notes, w)
        text += spa_text(more.get("spa", []), more.get("spa_differences", []), w)
        text += clusters_text(more.get("clusters", []), w)
    pooled: list[Cluster] = []
    if args.level == "system" and "accuracy" in coefs:
        for crit, ys in pooled_y.items():
            per = {m: xs for (c, m), xs in pooled_x.items() if c == crit and len(xs) == len(ys)}
            if args.compare_metrics and len(per) > 1:
                pooled += pooled_clusters(per, ys, args.seed, crit, n_resamples=args.confidence_n, alpha=args.sig_level)
            else:
                level = args.sig_level
                pooled += [Cluster("(pooled)", crit, "system", "accuracy", m, pooled_accuracy(xs, ys), 0, level)
                           for m, xs in per.items()]  # fmt: skip
    summary = summarize(results, [c for c in extras.get("clusters", []) if c.coefficient != "spa"], pooled)
    spa_pooled = _spa_pooled(args, extras, spa_sets) if args.spa else {}
    if args.format == "csv":
        if extras:
            raise ConfigError("--matrix/--compare-metrics make several tables: use -f text or -f json")
        emit(render_correlations(results, "csv"), args.output)
    elif args.format == "json":
        corr = json.loads(render_correlations(results, "json"))
        spa = {f"spa_pooled{k.removeprefix('spa')}": v for k, v in spa_pooled.items()}
        emit(dumps_json({"correlations": corr, **extras, **spa, "pooled": pooled, "summary": list(summary)}),
              args.output)  # fmt: skip
    else:
        text += f"== all {len(sets)} sets ==\n" + summary_text(summary, w) + clusters_text(pooled, w)
        text += spa_text(spa_pooled.get("spa", []), spa_pooled.get("spa_differences", []), w)
        emit(text + clusters_text(spa_pooled.get("clusters", []), w), args.output)
    return 0


def add_parser(sub: Any) -> None:
    q = sub.add_parser("correlate", help="correlate metrics with human judgments (system or segment level)")
    add_judged_scoring(q)
    q.add_argument(
        "--grouping",
        choices=("none", "item", "system"),
        default="none",
        help="segment level: all pairs (none), per segment across systems (item), per system",
    )
    q.add_argument(
        "--coefficients", default="pearson,r2,spearman,kendall-b",
        help="comma-separated: pearson, r2, spearman, kendall-b, kendall-c, accuracy (pairwise, Kocmi et al."
        " 2021), acc-eq (tie-calibrated pairwise accuracy, Deutsch et al. 2023)",
    )  # fmt: skip
    q.add_argument(
        "--confidence-n", type=count_arg, default=1000, metavar="N",
        help="bootstrap resamples of the intervals, and permutation trials of --compare-metrics (1000)",
    )  # fmt: skip
    q.add_argument("--n-resamples", type=count_arg, dest="confidence_n", metavar="N", action=RenamedOption,
                   new="--confidence-n")  # fmt: skip
    q.add_argument("--ci", type=level_arg, default=0.95, help="confidence level (default 0.95)")
    q.add_argument("--matrix", action="store_true", help="the full matrix between metrics and criteria")
    q.add_argument(
        "--compare-metrics",
        action="store_true",
        help="Williams' test and a permutation test for every pair of metrics (first coefficient)",
    )
    q.add_argument(
        "--sig-level", type=sig_level_arg, default=0.05,
        help="significance level of the clusters of --compare-metrics (mt-metrics-eval's ranks; 0.05)",
    )  # fmt: skip
    q.add_argument(
        "--set-column", metavar="COL",
        help="judgments and --scores files hold several data sets (e.g. lp): each on its own, then a summary",
    )  # fmt: skip
    q.add_argument(
        "--spa", action="store_true",
        help="soft pairwise accuracy (Thompson et al. 2024, as mt-metrics-eval computes it) from segment-level"
        " judgments; with --compare-metrics its permutation test between metrics and their clusters",
    )  # fmt: skip
    q.add_argument(
        "--spa-side", choices=("segments", "statistics", "both"), default="both",
        help="the metric's p-values of --spa: summed segment scores (mt-metrics-eval's), the corpus metric"
        " recomputed from permuted sufficient statistics, or both (default)",
    )  # fmt: skip
    q.add_argument("--given", metavar="SPEC", help="segment level: only where this metric exceeds --thresholds")
    q.add_argument("--thresholds", default="0,30,60,90", help="for --given, on the 0-100 scale (0,30,60,90)")
    add_judgment_options(q)
    add_external_scores(q)
    add_text_options(q)
    add_output_options(q, width=3)
    q.set_defaults(func=cmd_correlate)
