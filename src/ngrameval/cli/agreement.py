"""``ngrameval agreement``: agreement between judges."""

from __future__ import annotations

import argparse
from typing import Any

from ngrameval.cli.inputs import decimals, emit, judgments_from
from ngrameval.cli.options import KRIPPENDORFF_CHOICES, add_judgment_options, add_output_options, count_arg
from ngrameval.errors import ConfigError, InputError
from ngrameval.io.write import dumps_json


def cmd_agreement(args: argparse.Namespace) -> int:
    from ngrameval.meta.agreement import agreement, judge_table
    from ngrameval.report.meta import agreement_text, to_csv, to_json

    spans = args.judgments_layout in ("mqm", "esa")
    if not args.judge_column and args.judgments_layout != "summeval" and not spans:  # those name their judges
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
    marked = _span_agreement(args) if spans else []
    if args.format == "json":
        text = to_json(results) if not spans else dumps_json({"agreement": results, "spans": marked})
    elif args.format == "csv":
        if spans:
            raise ConfigError("--judgments-layout mqm/esa makes two tables: use -f text or -f json")
        text = to_csv(results)
    else:
        text = agreement_text(results, decimals(args, 3))
        w = decimals(args, 3)
        text += "".join(f"span agreement ({'span and severity' if s.by_severity else 'span'}): exact F1 "
                        f"{s.exact_f1:.{w}f}, character F1 {s.character_f1:.{w}f} over {s.rater_pairs} rater "
                        f"pair(s), {s.segments} shared segment(s)\n" for s in marked)  # fmt: skip
        if level is None and args.krippendorff == "auto":
            text += "Krippendorff's alpha: pip install 'ngrameval[agreement]' to compute it\n"
    emit(text, args.output)
    return 0


def _span_agreement(args: argparse.Namespace) -> list[Any]:
    """Exact and character F1 between the raters of a span file, on spans and on spans with severity."""
    from ngrameval.io.spans import read_spans
    from ngrameval.meta.mqm import span_agreement

    spans = read_spans(args.judgments)
    return [span_agreement(spans), span_agreement(spans, severity=True)]


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
