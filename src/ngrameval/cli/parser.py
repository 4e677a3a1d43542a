"""The whole parser: every subcommand's options, in the order ``--help`` lists them."""

from __future__ import annotations

import argparse

from ngrameval._version import __version__
from ngrameval.cli import agreement, compare, corpus, correlate, pairwise, paraphrase, plane, report, score, stats
from ngrameval.cli.options import CommandParser, add_quiet


def build_parser() -> argparse.ArgumentParser:
    parser = CommandParser(
        prog="ngrameval", description="N-gram co-occurrence metrics, exact and fast, with meta-evaluation."
    )
    parser.add_argument("--version", action="version", version=f"ngrameval {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for module in (score, stats, compare, paraphrase, pairwise, corpus, correlate, plane, agreement):
        module.add_parser(sub)

    from ngrameval.collect.cli import add_collect_parser  # argparse only; the web stack loads when collect runs

    add_collect_parser(sub)
    report.add_parser(sub)
    add_quiet(parser)
    return parser
