"""``ngrameval agreement``: agreement between judges."""

from __future__ import annotations

import argparse
from typing import Any

from ngrameval.cli.inputs import decimals, emit, judgments_from
from ngrameval.cli.options import KRIPPENDORFF_CHOICES, add_judgment_options, add_output_options, count_arg
from ngrameval.errors import InputError


def cmd_agreement(args: argparse.Namespace) -> int:
    from ngrameval.meta.agreement import agreement, judge_table
    from ngrameval.report.meta import agreement_text, to_csv, to_json

    if not args.judge_column and args.judgments_layout != "summeval":  # that layout names its judges itself
        raise InputError("agreement needs --judge-column (the column naming who gave each score)")
    judgments = judgments_from(args)
    level: str | None = args.krippendorff
    if level == "auto":
        try:
            import krippendorff  # noqa: F401
        except ImportError:
            level = None
        else:
            level = "interval"
    elif level == "none":
        level = None
    criteria = list(dict.fromkeys(j.criterion for j in judgments))
    results = [agreement(judge_table(judgments, c), krippendorff_level=level, min_overlap=args.min_overlap,
                         leave_one_out=args.leave_one_out) for c in criteria]  # fmt: skip
    if args.format == "json":
        text = to_json(results)
    elif args.format == "csv":
        text = to_csv(results)
    else:
        text = agreement_text(results, decimals(args, 3))
        if level is None and args.krippendorff == "auto":
            text += "Krippendorff's alpha: pip install 'ngrameval[agreement]' to compute it\n"
    emit(text, args.output)
    return 0


def add_parser(sub: Any) -> None:
    ag = sub.add_parser("agreement", help="agreement between judges: pairwise r, single judge vs mean, Krippendorff")
    add_judgment_options(ag, systems=False)
    ag.add_argument(
        "--krippendorff",
        choices=KRIPPENDORFF_CHOICES,
        default="auto",
        help="level of measurement of Krippendorff's alpha (auto: interval if ngrameval[agreement] is installed)",
    )
    ag.add_argument("--min-overlap", type=count_arg, default=3, help="items two judges must share to be correlated (3)")
    ag.add_argument(
        "--leave-one-out", action="store_true", help="single judge vs the other judges' mean (default: the mean of all)"
    )
    add_output_options(ag, width=3)
    ag.set_defaults(func=cmd_agreement)
