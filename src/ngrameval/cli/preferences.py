"""Side-by-side preferences on the command line: ``compare --preferences`` (Bradley–Terry ranking with bootstrap
intervals and win rates) and ``--judgments-layout preferences`` (human system scores for ``correlate``)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ngrameval.cli.inputs import decimals, emit
from ngrameval.errors import ConfigError

if TYPE_CHECKING:
    from ngrameval.io.judgments import Judgment

CRITERIA = ("bradley-terry", "win-rate")


def add_preferences_option(p: argparse.ArgumentParser) -> None:
    """``--preferences FILE`` of ``compare``."""
    p.add_argument(
        "--preferences", metavar="FILE",
        help="side-by-side preferences (.csv/.tsv/.jsonl: item, system_a, system_b, winner a|b|tie): rank the "
        "systems by Bradley-Terry with bootstrap intervals (--confidence-n, --ci, --seed) and win rates; "
        "no system file nor -r",
    )  # fmt: skip


def cmd_preferences(args: argparse.Namespace) -> int:
    """``compare --preferences``: Bradley–Terry scores, intervals and win rates of the file's systems."""
    from ngrameval.io.preferences import read_preferences
    from ngrameval.meta.bradley_terry import bradley_terry
    from ngrameval.report.preferences import render_preferences

    given = [o for o, v in (("a system file", args.systems), ("-r/--refs", args.refs), ("--baseline", args.baseline),
                            ("--paired-bs", args.paired_bs), ("--scheduler", args.scheduler)) if v]  # fmt: skip
    if given:
        raise ConfigError(f"--preferences ranks the systems of a preference file: {given[0]} does not apply")
    bt = bradley_terry(read_preferences(args.preferences), args.confidence_n, args.seed, args.ci)
    emit(render_preferences(bt, args.format, decimals(args, 2), args.preferences), args.output)
    return 0


def preference_judgments(args: argparse.Namespace, where: dict[str, Any]) -> list[Judgment]:
    """``--judgments-layout preferences``: two system-level criteria, ``bradley-terry`` (θ of the MLE) and
    ``win-rate`` ((wins + ties/2) / comparisons), one judgment per system each."""
    from ngrameval.io.judgments import Judgment
    from ngrameval.io.preferences import read_preferences
    from ngrameval.meta.bradley_terry import bradley_terry

    if where:
        raise ConfigError("--judgments-layout preferences: --where and --set-column are not supported")
    if args.segment_column or args.judge_column:
        raise ConfigError("--judgments-layout preferences gives system-level scores: no --segment/--judge-column")
    bt = bradley_terry(read_preferences(args.judgments), n_resamples=0)
    return [Judgment(s, None, None, c, v, k + 1, args.judgments) for c, values in zip(CRITERIA, (bt.theta, bt.win_rate))
            for k, (s, v) in enumerate(zip(bt.systems, values, strict=True))]  # fmt: skip
