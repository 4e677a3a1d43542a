"""``ngrameval compare``: paired significance tests between systems and a ranking."""

from __future__ import annotations

import argparse
from typing import Any

from ngrameval.api import measure
from ngrameval.cli.inputs import _digits, _emit, _namer, _resample_jobs, _scoring_inputs, _specs
from ngrameval.cli.options import (
    _add_chunk_size,
    _add_naming_options,
    _add_output_options,
    _add_scheduler,
    _add_scoring_options,
    _add_text_options,
    _count,
    _level,
    _Renamed,
    _seed,
    _sig_level,
)
from ngrameval.cli.score import _one_machine_chunks, _score_streamed


def cmd_compare(args: argparse.Namespace) -> int:
    _one_machine_chunks(args)
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
        "jobs": _resample_jobs(args),
    }
    if args.scheduler:
        from ngrameval.cli import scheduler as commands

        result = commands.compare(args, _specs(args, args.metrics), _namer(args), args.baseline, **options)
    elif (streamed := _score_streamed(args, sentence=False, keep_rows=True)) is not None:
        rows, names = streamed.kept, streamed.names
        result = paired_test(rows, names, baseline=names[0] if args.baseline else None, **options)
    else:
        specs, refs, systems, source = _scoring_inputs(args)
        baseline = next(iter(systems)) if args.baseline else None
        rows = measure(systems, refs, specs, source, jobs=args.jobs)
        result = paired_test(rows, list(systems), baseline=baseline, **options)
    _emit(render_comparison(result, args.format, _digits(args, 2)), args.output)
    return 0


def add_parser(sub: Any) -> None:
    cp = sub.add_parser("compare", help="significance tests between systems (all pairs) and a ranking")
    _add_scoring_options(cp)
    _add_naming_options(cp)
    test = cp.add_mutually_exclusive_group()
    test.add_argument("--paired-ar", action="store_true", help="paired approximate randomisation (the default)")
    test.add_argument("--paired-bs", action="store_true", help="paired bootstrap resampling (Koehn 2004)")
    cp.add_argument("--paired-ar-n", type=_count, default=10_000, metavar="N", help="AR trials (default 10000)")
    cp.add_argument("--paired-bs-n", type=_count, default=1_000, metavar="N", help="bootstrap resamples (default 1000)")
    cp.add_argument(
        "--confidence-n", type=_count, default=1_000, metavar="N", help="bootstrap resamples for intervals under AR"
    )
    cp.add_argument("--ci", type=_level, default=0.95, help="confidence level of the intervals (default 0.95)")
    cp.add_argument("--seed", type=_seed, default=12345, help="random seed (default 12345; 'none': drawn, printed)")
    cp.add_argument(
        "--correction", choices=("holm", "bonferroni", "none"), default="holm", help="multiple comparisons (holm)"
    )
    cp.add_argument(
        "--sig-level", type=_sig_level, default=0.05, help="significance level after correction (default 0.05)"
    )
    cp.add_argument("--alpha", type=_sig_level, dest="sig_level", action=_Renamed, new="--sig-level")
    cp.add_argument(
        "--baseline", action="store_true", help="compare each system with the first one only (sacreBLEU's layout)"
    )
    _add_chunk_size(cp, "keeping every segment's summable statistics, not its text")
    _add_scheduler(cp)
    _add_text_options(cp)
    _add_output_options(cp)
    cp.set_defaults(func=cmd_compare)
