"""``ngrameval plane`` and ``refcurve``: the (alpha, N) plane and the reference-count curve."""

from __future__ import annotations

import argparse
import csv
import dataclasses
import io
import sys
from pathlib import Path
from typing import Any

from ngrameval.cli.inputs import (
    decimals,
    emit,
    external_scores_from,
    input_paths,
    judged,
    judged_systems,
    read_systems,
    scoring_inputs,
)
from ngrameval.cli.options import (
    RenamedOption,
    add_external_scores,
    add_jobs,
    add_judged_scoring,
    add_judgment_options,
    add_output_options,
    add_text_options,
    add_width,
    alpha_step_arg,
    count_arg,
    order_arg,
    parse_coefficients,
    plot_path_arg,
    positive_arg,
    wordiness_arg,
)
from ngrameval.cli.stats import stored_run
from ngrameval.errors import ConfigError, InputError
from ngrameval.io import read_refs
from ngrameval.io.write import check_not_input, dumps_json
from ngrameval.text.pipeline import Preprocess

CURVE_COLUMNS = ("metric", "criterion", "level", "coefficient", "with_source", "k", "subsets", "mean", "std", "low",
                 "high", "seed")  # fmt: skip


def cmd_refcurve(args: argparse.Namespace) -> int:
    from ngrameval.meta.subsets import reference_curve
    from ngrameval.report.meta import curves_text, to_json

    specs, refs, systems, source = scoring_inputs(args)
    systems, humans = judged_systems(args, systems)
    curves = [c for h in humans for coef in parse_coefficients(args.coefficients) for c in reference_curve(
        systems, refs, h, specs, level=args.level, coefficient_name=coef, n_subsets=args.subsets,
        seed=args.seed, source=source, jobs=args.jobs)]  # fmt: skip
    if args.format == "json":
        text = to_json(curves)
    elif args.format == "csv":
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(CURVE_COLUMNS)
        w.writerows(
            [c.metric, c.criterion, c.level, c.coefficient, c.with_source, p.k, p.subsets, repr(p.mean),
             repr(p.std), repr(p.low), repr(p.high), c.seed]
            for c in curves
            for p in c.points
        )  # fmt: skip
        text = out.getvalue()
    else:
        text = "".join(
            curves_text([c for c in curves if c.criterion == h.criterion], decimals(args, 3)) for h in humans
        )
    emit(text, args.output)
    return 0


def cmd_plane(args: argparse.Namespace) -> int:
    from ngrameval.meta.plane import alpha_grid, checked_grid, planes_of_totals, unit_text
    from ngrameval.meta.plane import planes as all_planes
    from ngrameval.report.plane import plane_csv, plane_text, plot_plane

    pre = Preprocess(args.tokenize, args.lowercase, args.stopwords, args.stem, args.normalize)
    alphas = alpha_grid(args.alpha_step)
    if (kept := stored_run(args, allow_text=True)) is not None:  # a stats file given where the system files go
        path, run = kept
        setting, n = unit_text(args.unit, pre), args.max_order
        totals = run.counted_totals(setting, n)
        if totals is None:
            raise InputError(f"{path}: no n-gram statistics counted under {setting.signature()} at order {n} or higher "
                             f"(count them with -m aev:n={n})")  # fmt: skip
        systems: dict[str, list[str]] = {name: [] for name in run.systems}
        humans, n_lines = judged(args, list(run.systems), run.segments), run.segments
    else:
        if not args.refs:
            raise InputError("give the references with -r/--refs (one file per reference, or TSV with --tsv)")
        refs = read_refs(args.refs, tsv=args.tsv, empty_is_missing=args.missing_empty_refs)
        against = f"the references ({args.refs[0]}) have"
        read = read_systems(args.systems, len(refs), against, args.names, args.strip_names)
        systems, humans = judged_systems(args, read)
        n_lines = len(refs)
    cells = [(h, coef) for h in humans for coef in parse_coefficients(args.coefficients)]
    plots = [args.plot if len(cells) == 1 else _suffixed(args.plot, h.criterion + ("" if len(cells) == len(humans)
             else f".{coef}")) for h, coef in cells] if args.plot else []  # fmt: skip
    for plot in plots:
        check_not_input(plot, input_paths(args), "--plot")
    if kept is not None:
        grid = checked_grid(alphas, range(1, args.max_order + 1), args.brevity, args.wordiness)
        planes = planes_of_totals(totals, list(systems), cells, setting, *grid, args.brevity, args.wordiness)
    else:
        planes = all_planes(systems, refs, cells, pre=pre, alphas=alphas, orders=range(1, args.max_order + 1),
                            brevity=args.brevity, wordiness=args.wordiness, unit=args.unit, jobs=args.jobs)  # fmt: skip
    beside = _plane_external(args, cells, planes, systems, n_lines)
    if args.format == "json":
        text = dumps_json([{**dataclasses.asdict(p), "values": p.values, **({"external": e} if args.scores else {})}
                           for p, e in zip(planes, beside)])  # fmt: skip
    elif args.format == "csv":  # one header, then every plane's cells
        if args.scores:
            raise ConfigError("plane --scores adds a table beside each plane: use -f text or -f json")
        text = "".join(plane_csv(p) if k == 0 else plane_csv(p).split("\n", 1)[1] for k, p in enumerate(planes))
    else:
        text = "\n".join(plane_text(p, decimals(args, 1)) + "".join(
            f"  beside the best cell (AEv alpha={p.best_alpha:g}, N={p.best_order}: {p.best_value:.4f}): {e['metric']}"
            f" {e['value']:.4f} ({e['signature']})\n" for e in ex) for p, ex in zip(planes, beside))  # fmt: skip
    emit(text, args.output)
    for p, path in zip(planes, plots):
        plot_plane(p, path)
        sys.stderr.write(f"ngrameval: wrote {path}\n")
    return 0


def _plane_external(
    args: argparse.Namespace, cells: list[Any], planes: list[Any], systems: dict[str, list[str]], n_lines: int
) -> list[list[dict[str, Any]]]:
    """Per plane, the coefficient of every --scores metric against the same criterion and systems."""
    if not args.scores:
        return [[] for _ in planes]
    import numpy as np

    from ngrameval.io.scores import to_rows
    from ngrameval.meta.correlate import coefficient

    ids = cells[0][0].segments or tuple(str(i) for i in range(1, n_lines + 1))
    rows = [r.oriented() for r in to_rows(external_scores_from(args), list(systems), ids)]
    out = []
    for h, coef in cells:
        keep = ~np.isnan(h.system)
        out.append([{"metric": r.metric, "signature": r.signature, "value": coefficient(r.corpus()[keep],
                     h.system[keep], coef)[0]} for r in rows])  # fmt: skip
    return out


def _suffixed(path: str, name: str) -> str:
    p = Path(path)
    return str(p.with_name(f"{p.stem}.{name}{p.suffix}"))


def add_parser(sub: Any) -> None:
    """``plane`` and ``refcurve``."""
    q = sub.add_parser("plane", help="R^2 of every AEv(alpha, N) against human judgments, in the paper's layout")
    q.add_argument("systems", nargs="+", metavar="SYSTEM", help="system output files, one segment a line")
    q.add_argument("-r", "--refs", nargs="+", metavar="REF", help="reference files (one per stream)")
    q.add_argument("--tsv", action="store_true", help="reference files are TSV (one segment a line)")
    q.add_argument("--missing-empty-refs", action="store_true", help="an empty reference is a missing one")
    q.add_argument("--alpha-step", type=alpha_step_arg, default=0.1, help="grid step of alpha in [0, 1] (default 0.1)")
    q.add_argument("--max-order", type=order_arg, default=4, help="N = 1 .. this (default 4)")
    add_jobs(q)
    q.add_argument(
        "--unit",
        choices=("word", "char"),
        default="word",
        help="n-grams of words (the -tok tokens; default) or characters (chrF's: whitespace removed)",
    )
    q.add_argument("--coefficients", default="r2", help="r2 (default), pearson, spearman, kendall-b/c; a plane each")
    q.add_argument("--coefficient", dest="coefficients", action=RenamedOption, new="--coefficients")
    q.add_argument("-B", "--brevity", type=positive_arg, default=1.0, help="AEv brevity constant B (default 1)")
    q.add_argument(
        "-W",
        "--wordiness",
        type=wordiness_arg,
        default=2.0,
        help="AEv wordiness constant W > 0 or inf (default 2)",
    )
    q.add_argument(
        "--plot",
        metavar="IMAGE",
        type=plot_path_arg,
        help="draw the heat map here: .svg, or .png or .pdf (these two need ngrameval[plot])",
    )
    add_judgment_options(q)
    add_external_scores(q)
    add_text_options(q)
    q.add_argument("-f", "--format", choices=("text", "json", "csv"), default="text", help="output format")
    add_width(q, 1)
    q.add_argument("-o", "--output", metavar="FILE", help="write here (atomically) instead of stdout")
    q.set_defaults(func=cmd_plane)

    q = sub.add_parser("refcurve", help="correlation as 1, 2, ... all references are used (with/without the source)")
    add_judged_scoring(q)
    q.add_argument(
        "--coefficients", default="pearson", help="pearson (default), r2, spearman, kendall-b/c; a curve each"
    )
    q.add_argument("--coefficient", dest="coefficients", action=RenamedOption, new="--coefficients")
    q.add_argument("--subsets", type=count_arg, default=10, help="reference subsets per count (default 10)")
    add_judgment_options(q)
    add_text_options(q)
    add_output_options(q, width=3)
    q.set_defaults(func=cmd_refcurve)
