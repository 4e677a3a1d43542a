"""The command line: thin functions per subcommand; the only place that prints errors and exits."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

from ngrameval._version import __version__
from ngrameval.api import score
from ngrameval.errors import ConfigError, InputError, MissingDependencyError, UndefinedMetricWarning
from ngrameval.io import read_lines, read_refs, write_atomic
from ngrameval.metrics.registry import parse_specs, valid_names
from ngrameval.report.render import FORMATS, render
from ngrameval.text.pipeline import Preprocess
from ngrameval.text.tokenize import TOKENIZERS


def _add_text_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("-tok", "--tokenize", default="13a", help=f"tokenizer: {', '.join(TOKENIZERS)} (default 13a)")
    p.add_argument("-lc", "--lowercase", action="store_true", help="lower-case before tokenizing")
    p.add_argument("--stem", action="store_true", help="Porter-stem every token")
    p.add_argument("--stopwords", metavar="LIST", help="remove stop words: 'smart' or a file, one word a line")


def _add_output_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("-f", "--format", choices=FORMATS, default="text", help="output format (default text)")
    p.add_argument("-w", "--width", type=int, default=2, help="decimals in text output (default 2)")
    p.add_argument("-o", "--output", metavar="FILE", help="write here (atomically) instead of stdout")


def _emit(text: str, output: str | None) -> None:
    if output:
        write_atomic(output, text)
    else:
        sys.stdout.write(text)


def cmd_score(args: argparse.Namespace) -> int:
    pre = Preprocess(args.tokenize, args.lowercase, args.stopwords, args.stem)
    specs = parse_specs(args.metrics, pre)
    if not args.refs:
        raise InputError("give the references with -r/--refs (one file per reference, or TSV with --tsv)")
    refs = read_refs(args.refs, tsv=args.tsv, empty_is_missing=args.missing_empty_refs)
    systems: dict[str, list[str]] = {}
    for path in args.systems:
        lines = read_lines(path)
        if len(lines) != len(refs):
            raise InputError(f"{path} has {len(lines)} lines but the references ({args.refs[0]}) have {len(refs)}")
        name = Path(path).name
        while name in systems:
            name += "'"
        systems[name] = lines
    results = score(systems, refs, specs, sentence=args.sentence)
    _emit(render(results, args.format, args.width, sentence=args.sentence), args.output)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from ngrameval.demo import run_demo

    results = run_demo()
    header = (
        "ngrameval demo: 16 summarisation systems x 20 SummEval documents (11 references each),\n"
        "scored with BLEU, NIST and the AEv(alpha, N) members Soricut & Brill (2004) found best.\n\n"
    )
    _emit(header + render(results, args.format, args.width), args.output)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ngrameval", description="N-gram co-occurrence metrics, exact and fast, with meta-evaluation."
    )
    parser.add_argument("--version", action="version", version=f"ngrameval {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("score", help="score system outputs against references")
    p.add_argument("systems", nargs="+", metavar="SYSTEM", help="system output files, one segment a line")
    p.add_argument("-r", "--refs", nargs="+", metavar="REF", help="reference files (one per reference stream)")
    p.add_argument(
        "--tsv", action="store_true", help="reference files are TSV: one segment a line, a reference a field"
    )
    p.add_argument(
        "--missing-empty-refs",
        action="store_true",
        help="an empty reference line/field is a missing reference (variable number per segment)",
    )
    p.add_argument("-m", "--metrics", default="bleu", help=f"comma-separated metric specs ({valid_names()})")
    p.add_argument("--sentence", action="store_true", help="per-segment scores")
    _add_text_options(p)
    _add_output_options(p)
    p.set_defaults(func=cmd_score)

    d = sub.add_parser("demo", help="score the bundled SummEval sample")
    _add_output_options(d)
    d.set_defaults(func=cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    warnings.simplefilter("default", UndefinedMetricWarning)
    warnings.formatwarning = lambda msg, cat, *a, **k: f"ngrameval: warning: {msg}\n"
    try:
        return int(args.func(args))
    except (InputError, ConfigError, MissingDependencyError) as exc:
        print(f"ngrameval: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
