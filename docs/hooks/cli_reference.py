"""MkDocs hook: the command-line reference, generated at build time from ``ngrameval.cli.build_parser()`` so it
cannot drift from the parser. ``docs/cli.md`` holds the marker ``<!-- cli-reference -->``; this hook replaces
it with one section per (sub)command: its help line, its usage and a table of every option with its metavar,
default and choices. ``tests/test_docs.py`` checks that every option of every subparser is on the page."""

from __future__ import annotations

import argparse
import html
import re
from collections.abc import Iterator
from typing import Any

MARKER = "<!-- cli-reference -->"
USAGE_WIDTH = 80


def walk(
    parser: argparse.ArgumentParser, prog: str = "ngrameval", help_text: str | None = None
) -> Iterator[tuple[str, str | None, argparse.ArgumentParser]]:
    """(command, its help line, its parser) for the parser and every subparser below it, depth first, in the
    order the parser defines them."""
    yield prog, help_text, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                yield from walk(sub, f"{prog} {name}", helps.get(name))


def options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The parser's arguments and options, without -h/--help and the subcommand selector."""
    return [a for a in parser._actions if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))]


def usage(parser: argparse.ArgumentParser) -> str:
    """The usage line as ``--help`` prints it, at a fixed width (not the terminal's)."""
    formatter = argparse.HelpFormatter(parser.prog, width=USAGE_WIDTH)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    return formatter.format_help().strip()


def _cell(text: str) -> str:
    """Plain text for a Markdown table cell: HTML-escaped, Markdown's inline marks and the cell bar escaped."""
    text = html.escape(" ".join(text.split()), quote=False)
    return re.sub(r"([\\`*_\[\]|<>#])", r"\\\1", text)


def _code(text: str) -> str:
    """A code span for a table cell (the bar escaped for the table)."""
    fence = "``" if "`" in text else "`"
    return f"{fence}{text}{fence}"  # a bar inside a code span does not split the cell


def _names(action: argparse.Action) -> str:
    if action.option_strings:
        return ", ".join(_code(s) for s in action.option_strings)
    return _code(str(action.metavar or action.dest))


def _value(action: argparse.Action) -> str:
    """What the option takes: its metavar (with nargs), or 'flag'."""
    if action.nargs == 0:
        return "flag"
    if action.option_strings:
        metavar = action.metavar or action.dest.upper()
    else:
        metavar = action.metavar or action.dest
    shown = metavar if isinstance(metavar, str) else " ".join(metavar)
    if action.nargs in ("+", "*"):
        shown = f"{shown} ..." if action.nargs == "+" else f"[{shown} ...]"
    elif action.nargs == "?":
        shown = f"[{shown}]"
    return _code(shown)


def _default(action: argparse.Action) -> str:
    default: Any = action.default
    if default is None or default is argparse.SUPPRESS or (action.nargs == 0 and default is False):
        return ""
    if isinstance(default, (list, tuple)):
        default = " ".join(str(d) for d in default)
    return _code(str(default))


def _choices(action: argparse.Action) -> str:
    if not action.choices:
        return ""
    return ", ".join(_code(str(c)) for c in action.choices)


def _help(action: argparse.Action) -> str:
    text = "" if action.help in (None, argparse.SUPPRESS) else str(action.help)
    if "%(" in text:
        text = text % {"default": action.default, "prog": "", "dest": action.dest}
    note = " **Required.**" if action.required and action.option_strings else ""
    if "deprecated" in text:
        note += " See the [deprecation policy](deprecations.md)."
    return _cell(text) + note


def section(command: str, help_text: str | None, parser: argparse.ArgumentParser) -> str:
    """One command's section: heading, help line, usage and the options table."""
    depth = command.count(" ")
    lines = [f"{'#' * (2 if depth < 2 else 3)} `{command}`", ""]
    if help_text:
        lines += [_cell(help_text[:1].upper() + help_text[1:]) + ".", ""]
    if parser.description and depth:
        lines += [_cell(parser.description), ""]
    lines += ["```text", usage(parser), "```", ""]
    actions = options(parser)
    if actions:
        lines += ["| option | takes | default | choices | description |", "|---|---|---|---|---|"]
        for a in actions:
            lines.append(f"| {_names(a)} | {_value(a)} | {_default(a)} | {_choices(a)} | {_help(a)} |")
        lines.append("")
    return "\n".join(lines)


def generate(parser: argparse.ArgumentParser | None = None) -> str:
    """The whole reference (Markdown) for ``parser`` (default: ngrameval's)."""
    if parser is None:
        from ngrameval.cli import build_parser

        parser = build_parser()
    commands = list(walk(parser))
    index = ["| command | what it does |", "|---|---|"]
    for command, help_text, _ in commands[1:]:
        anchor = re.sub(r"[^a-z0-9]+", "-", command.lower()).strip("-")
        index.append(f"| [`{command}`](#{anchor}) | {_cell(help_text or '')} |")
    return "\n".join([*index, "", *(section(*c) for c in commands)])


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    """MkDocs event: fill the marker of the CLI page."""
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, generate())
