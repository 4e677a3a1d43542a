"""The whole parser: every subcommand's options, in the order ``--help`` lists them."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from ngrameval._version import __version__
from ngrameval.cli import agreement, compare, corpus, correlate, pairwise, paraphrase, plane, report, score, stats
from ngrameval.cli.options import CommandParser, add_quiet


class _Unread:
    """What a subcommand that is not run gets for its parser: every option added to it is dropped."""

    def __getattr__(self, name: str) -> Any:
        return self

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self

    def __iter__(self) -> Any:  # its actions: none
        return iter(())


class _Subcommands:
    """The subparsers as the subcommand modules see them: each is registered (its name and help line, as ``--help``
    lists them), but only ``chosen``'s options are built (None: every one), ~500 options fewer to make when a
    command starts."""

    def __init__(self, sub: Any, chosen: str | None) -> None:
        self.sub = sub
        self.chosen = chosen

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        parser = self.sub.add_parser(name, **kwargs)
        return parser if self.chosen is None or name == self.chosen else _Unread()


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand; given the command line ``argv``, only the options of the subcommand it runs
    are built (the other subcommands are listed, empty)."""
    parser = CommandParser(
        prog="ngrameval", description="N-gram co-occurrence metrics, exact and fast, with meta-evaluation."
    )
    parser.add_argument("--version", action="version", version=f"ngrameval {__version__}")
    real = parser.add_subparsers(dest="command", required=True)
    sub: Any = _Subcommands(real, _chosen(argv))
    for module in (score, stats, compare, paraphrase, pairwise, corpus, correlate, plane, agreement):
        module.add_parser(sub)

    from ngrameval.collect.cli import add_collect_parser  # argparse only; the web stack loads when collect runs

    add_collect_parser(sub)
    report.add_parser(sub)
    if sub.chosen is not None and sub.chosen not in real.choices:  # not a subcommand after all: build them all
        return build_parser()
    add_quiet(parser)
    return parser


def _chosen(argv: Sequence[str] | None) -> str | None:
    """The subcommand ``argv`` runs: its first word that is not an option (None: no argv, or an option first)."""
    if argv is None:
        return None
    return next((a for a in argv if not a.startswith("-")), None)
