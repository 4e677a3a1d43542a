"""``ngrameval report``, ``metrics`` and ``demo``."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

from ngrameval.cli.inputs import decimals, emit, judged, judged_systems, scoring_inputs
from ngrameval.cli.options import (
    RenamedOption,
    add_judgment_options,
    add_output_options,
    add_scoring_options,
    add_text_options,
    add_width,
    count_arg,
    level_arg,
    parse_coefficients,
    seed_arg,
    sig_level_arg,
)
from ngrameval.cli.stats import stored_run
from ngrameval.io import write_atomic
from ngrameval.io.write import dumps_json
from ngrameval.metrics.registry import (
    parse_specs,
    valid_names,
)
from ngrameval.report.render import render

if TYPE_CHECKING:
    from ngrameval.meta.correlate import HumanScores


def cmd_metrics(args: argparse.Namespace) -> int:
    from ngrameval.metrics.registry import OWN_TEXT, TEXT_OPTIONS, describe
    from ngrameval.report.table import table

    rows = describe()
    if args.format == "json":
        sys.stdout.write(
            dumps_json([dict(zip(("metric", "option", "default", "valid"), r, strict=True)) for r in rows])
        )
        return 0
    lines = [
        f"Metric specs: NAME[:OPTION=VALUE,...] ({valid_names()}); in the option table, 'rouge' stands for "
        "every rouge-* name.",
        "",
    ]
    lines += table(["metric", "option", "default", "valid values"], [list(r) for r in rows], left=4)
    lines += ["", "Text options of every spec (default: -tok, -lc, --stem, --stopwords, --normalize):"]
    lines += [f"  {key}: {valid}" for key, valid in TEXT_OPTIONS.items()]
    lines += [f"  {name} takes only {', '.join(keys)}: {why}" for name, (keys, why) in OWN_TEXT.items()]
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


def _demo_report(path: str, width: int) -> None:
    """``demo --report``: the HTML report of the bundled sample: the demo's metrics, its relevance judgments and
    its plane (with the demo's text settings), so the page shows the numbers the terminal does."""
    from ngrameval.cli.demo import DEMO_METRICS, PLANE_CRITERION, PLANE_TEXT, load_sample, sample_human
    from ngrameval.meta.report_data import build_report
    from ngrameval.report.html import render_html

    systems, refs = load_sample()
    humans = [sample_human(PLANE_CRITERION)]
    title, command = "ngrameval demo: the SummEval sample", f"ngrameval demo --report {path}"
    data = build_report(systems, refs, parse_specs(DEMO_METRICS), humans=humans, title=title, command=command,
                        plane_text=PLANE_TEXT)  # fmt: skip
    write_atomic(path, render_html(data, width))
    sys.stderr.write(f"ngrameval: wrote {path}\n")


def cmd_demo(args: argparse.Namespace) -> int:
    from ngrameval.cli.demo import run_demo
    from ngrameval.report.plane import plane_text
    from ngrameval.report.significance import render_comparison

    results, ranking, best = run_demo()
    if args.report:
        _demo_report(args.report, decimals(args, 2))
    if args.format != "text":
        emit(render(results, args.format, decimals(args, 2)), args.output)
        return 0
    header = (
        "ngrameval demo: 16 summarisation systems x 20 SummEval documents (11 references each),\n"
        "scored with BLEU, NIST, the AEv(alpha, N) members Soricut & Brill (2004) found best and ROUGE (as\n"
        "ROUGE-1.5.5 computes it, F; plain mean over documents),\n"
        "then ranked by BLEU with significance tests between every pair of systems,\n"
        "and the (alpha, N) plane searched for the member that best explains the experts' relevance scores.\n\n"
    )
    w = decimals(args, 2)
    text = render(results, args.format, w) + "\n" + render_comparison(ranking, "text", w, pairs=False)
    text += "\n" + plane_text(best)
    emit(header + text, args.output)
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from ngrameval.meta.report_data import ReportOptions, build_report, command_line
    from ngrameval.report.html import render_html

    test = "bs" if args.paired_bs else "ar"
    opts = ReportOptions(
        test=test, n_resamples=args.paired_bs_n if test == "bs" else args.paired_ar_n, n_confidence=args.confidence_n,
        seed=args.seed, correction=args.correction, alpha=args.sig_level, confidence=args.ci,
        coefficients=tuple(parse_coefficients(args.coefficients)), n_corr_resamples=args.correlation_confidence_n,
        examples=args.examples, max_pairs=args.max_pairs,
    )  # fmt: skip
    base = os.path.dirname(os.path.abspath(args.output)) if args.output else os.getcwd()
    command = command_line("ngrameval report", vars(args), defaults=args._defaults, base=base)
    if (kept := stored_run(args)) is not None:  # a stats file given where the system files go
        data = _stored_report(args, *kept, opts, command)
    else:
        specs, refs, systems, source = scoring_inputs(args)
        humans: list[HumanScores] = []
        if args.judgments:
            systems, humans = judged_systems(args, systems)
        data = build_report(systems, refs, specs, source=source, humans=humans, options=opts, title=args.title,
                            command=command, jobs=args.jobs)  # fmt: skip
    emit(render_html(data, decimals(args, 2)), args.output)
    if args.output:
        sys.stderr.write(f"ngrameval: wrote {args.output}\n")
    return 0


def _stored_report(args: argparse.Namespace, path: str, run: Any, opts: Any, command: str) -> Any:
    """The report of a stats file: the report of its texts when it keeps them (``stats --texts``), its rows not
    counted again; else every part the statistics give, and one line (on stderr and on the page) naming the
    parts that need the texts."""
    from ngrameval.meta.plane import DEFAULT_ORDERS
    from ngrameval.meta.report_data import build_report, build_stored_report

    humans = judged(args, list(run.systems), run.segments) if args.judgments else []
    specs = list(run.specs)
    if run.texts is not None:
        systems = dict(zip(run.systems, (list(h) for h in run.texts.hyps), strict=True))
        source = None if run.texts.source is None else list(run.texts.source)
        return build_report(systems, [list(r) for r in run.texts.refs], specs, source=source, humans=humans,
                            options=opts, title=args.title, command=command, jobs=args.jobs,
                            rows=run.rows)  # fmt: skip
    pre, order = specs[0].pre, max(DEFAULT_ORDERS)
    totals = run.counted_totals(pre, order)
    if totals is None:
        totals = (f"{path} holds no n-gram statistics counted under {pre.signature()} at order {order} or higher "
                  f"(count them with -m aev:n={order}, or keep the texts with ngrameval stats --texts)")  # fmt: skip
    parts = ["the scores by sentence length"]
    parts += ["word accuracy", "the n-grams", "the example segments"] if len(run.systems) >= 2 else []
    parts += ["the paraphrase scores"] if run.source is not None else []
    absent = (f"Not in this report: {', '.join(parts[:-1])}{' and ' if len(parts) > 1 else ''}{parts[-1]}, which "
              f"are computed from the texts: {path} holds statistics without them (write it with ngrameval stats "
              "--texts to have them).")  # fmt: skip
    sys.stderr.write(f"ngrameval: {absent}\n")
    return build_stored_report(run.rows, run.systems, run.segments, run.n_refs, totals=totals, absent=absent,
                               humans=humans, options=opts, title=args.title, command=command,
                               jobs=args.jobs)  # fmt: skip


def add_parser(sub: Any) -> None:
    """``report``, ``metrics`` and ``demo``."""
    rp = sub.add_parser("report", help="one self-contained HTML page: scores, significance, correlations, analysis")
    add_scoring_options(rp)
    rp.add_argument("--paired-bs", action="store_true", help="paired bootstrap instead of approximate randomisation")
    rp.add_argument("--paired-ar-n", type=count_arg, default=10_000, metavar="N", help="AR trials (default 10000)")
    rp.add_argument("--paired-bs-n", type=count_arg, default=1_000, metavar="N", help="bootstrap resamples (1000)")
    rp.add_argument(
        "--confidence-n", type=count_arg, default=1_000, metavar="N",
        help="bootstrap resamples of the scores' intervals (1000)",
    )  # fmt: skip
    rp.add_argument("--ci", type=level_arg, default=0.95, help="confidence level of the intervals (default 0.95)")
    rp.add_argument("--seed", type=seed_arg, default=12345, help="random seed of every resampling (default 12345)")
    rp.add_argument("--correction", choices=("holm", "bonferroni", "none"), default="holm", help="(default holm)")
    rp.add_argument("--sig-level", type=sig_level_arg, default=0.05, help="significance level after correction (0.05)")
    rp.add_argument(
        "--coefficients",
        default="pearson,spearman",
        help="correlations (default pearson,spearman; kendall-b is slower)",
    )
    rp.add_argument(
        "--correlation-confidence-n", type=count_arg, default=1000, metavar="N",
        help="bootstrap resamples of the correlations' intervals (correlate --confidence-n; 1000)",
    )  # fmt: skip
    rp.add_argument("--n-resamples", type=count_arg, dest="correlation_confidence_n", metavar="N", action=RenamedOption,
                    new="--correlation-confidence-n")  # fmt: skip
    rp.add_argument("--examples", type=count_arg, default=5, help="example segments per direction and pair (5)")
    rp.add_argument("--max-pairs", type=count_arg, default=3, help="analysed pairs: the first system vs the next N (3)")
    rp.add_argument("--title", default="ngrameval report", help="the page title")
    add_judgment_options(rp, required=False)
    add_text_options(rp)
    add_width(rp, 2)
    rp.add_argument("-o", "--output", metavar="FILE", help="write the HTML here (atomically) instead of stdout")
    rp.set_defaults(func=cmd_report)
    rp.set_defaults(_defaults={a.dest: a.default for a in rp._actions})  # the command block shows what was set

    ms = sub.add_parser("metrics", help="every metric spec with its options, defaults and valid values")
    ms.add_argument("-f", "--format", choices=("text", "json"), default="text", help="output format")
    ms.set_defaults(func=cmd_metrics)

    d = sub.add_parser("demo", help="score the bundled SummEval sample")
    d.add_argument("--report", metavar="HTML", help="also write the HTML report of the sample here")
    add_output_options(d)
    d.set_defaults(func=cmd_demo)
