"""``ngrameval compare``: paired significance tests between systems and a ranking."""

from __future__ import annotations

import argparse
from typing import Any

from ngrameval.api import measure
from ngrameval.cli.inputs import decimals, emit, metric_specs, resample_jobs, scoring_inputs, system_namer
from ngrameval.cli.options import (
    RenamedOption,
    add_chunk_size,
    add_naming_options,
    add_output_options,
    add_scheduler,
    add_scoring_options,
    add_text_options,
    count_arg,
    level_arg,
    seed_arg,
    sig_level_arg,
)
from ngrameval.cli.preferences import add_preferences_option, cmd_preferences
from ngrameval.cli.score import check_one_machine_chunks, score_streamed
from ngrameval.cli.stats import stored_rows


def cmd_compare(args: argparse.Namespace) -> int:
    if args.preferences:
        return cmd_preferences(args)
    check_one_machine_chunks(args)
    from ngrameval.meta.significance import paired_test
    from ngrameval.report.significance import render_comparison

    test = "bs" if args.paired_bs else "ar"
    options: dict[str, Any] = {
        "test": test,
        "n_resamples": args.paired_bs_n if test == "bs" else args.paired_ar_n,
        "n_confidence": args.confidence_n,
        "seed": args.seed,
        "correction": args.correction,
        "alpha": args.sig_level,
        "confidence": args.ci,
        "jobs": resample_jobs(args),
    }
    if (kept := stored_rows(args)) is not None:  # a stats file given where the system files go
        names, rows = kept
        result = paired_test(rows, names, baseline=names[0] if args.baseline else None, **options)
    elif args.scheduler:
        from ngrameval.cli import scheduler as commands

        result = commands.compare(args, metric_specs(args, args.metrics), system_namer(args), args.baseline, **options)
    elif (streamed := score_streamed(args, sentence=False, keep_rows=True)) is not None:
        rows, names = streamed.kept, streamed.names
        result = paired_test(rows, names, baseline=names[0] if args.baseline else None, **options)
    else:
        specs, refs, systems, source = scoring_inputs(args)
        baseline = next(iter(systems)) if args.baseline else None
        rows = measure(systems, refs, specs, source, jobs=args.jobs)
        result = paired_test(rows, list(systems), baseline=baseline, **options)
    emit(render_comparison(result, args.format, decimals(args, 2)), args.output)
    return 0


def add_parser(sub: Any) -> None:
    cp = sub.add_parser("compare", help="significance tests between systems (all pairs) and a ranking")
    add_scoring_options(cp)
    add_naming_options(cp)
    test = cp.add_mutually_exclusive_group()
    test.add_argument("--paired-ar", action="store_true", help="paired approximate randomisation (the default)")
    test.add_argument("--paired-bs", action="store_true", help="paired bootstrap resampling (Koehn 2004)")
    cp.add_argument("--paired-ar-n", type=count_arg, default=10_000, metavar="N", help="AR trials (default 10000)")
    cp.add_argument(
        "--paired-bs-n", type=count_arg, default=1_000, metavar="N", help="bootstrap resamples (default 1000)"
    )
    cp.add_argument(
        "--confidence-n", type=count_arg, default=1_000, metavar="N", help="bootstrap resamples for intervals under AR"
    )
    cp.add_argument("--ci", type=level_arg, default=0.95, help="confidence level of the intervals (default 0.95)")
    cp.add_argument("--seed", type=seed_arg, default=12345, help="random seed (default 12345; 'none': drawn, printed)")
    cp.add_argument(
        "--correction", choices=("holm", "bonferroni", "none"), default="holm", help="multiple comparisons (holm)"
    )
    cp.add_argument(
        "--sig-level", type=sig_level_arg, default=0.05, help="significance level after correction (default 0.05)"
    )
    cp.add_argument("--alpha", type=sig_level_arg, dest="sig_level", action=RenamedOption, new="--sig-level")
    cp.add_argument(
        "--baseline", action="store_true", help="compare each system with the first one only (sacreBLEU's layout)"
    )
    add_preferences_option(cp)
    add_chunk_size(cp, "keeping every segment's summable statistics, not its text")
    add_scheduler(cp)
    add_text_options(cp)
    add_output_options(cp)
    cp.set_defaults(func=cmd_compare)
