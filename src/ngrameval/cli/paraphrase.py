"""``ngrameval paraphrase``: BLEU, PINC, SE and their combinations for paraphrase systems."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ngrameval.cli.inputs import decimals, emit, read_systems, system_namer
from ngrameval.cli.options import add_max_cells, add_naming_options, add_output_options, add_scheduler, order_arg
from ngrameval.errors import InputError
from ngrameval.io import read_lines, read_refs
from ngrameval.io.read import read_ratings
from ngrameval.report.render import render
from ngrameval.text.tokenize import TOKENIZERS

if TYPE_CHECKING:
    from ngrameval.corpus.paraphrase import ParaphraseResult


def cmd_paraphrase(args: argparse.Namespace) -> int:
    from ngrameval.corpus.paraphrase import paraphrase
    from ngrameval.metrics.pinc import PINC

    pinc = PINC(args.pinc_order, not args.pinc_counts, args.pinc_average)
    if args.scheduler:
        from ngrameval.cli import scheduler as commands

        _emit_paraphrase(args, commands.paraphrase(args, system_namer(args), pinc))
        return 0
    sources = read_lines(args.source)
    refs = read_refs(args.refs, tsv=args.tsv, empty_is_missing=args.missing_empty_refs)
    if len(refs) != len(sources):
        raise InputError(f"the references ({args.refs[0]}) have {len(refs)} lines but {args.source} has {len(sources)}")
    systems = read_systems(args.systems, len(sources), f"the source ({args.source}) has", args.names,
                            args.strip_names)  # fmt: skip
    ratings = None
    if args.ratings:
        if len(args.ratings) != len(systems):
            raise InputError(f"give one ratings file per system: {len(systems)} systems, {len(args.ratings)} files")
        ratings = {name: read_ratings(path, len(sources)) for name, path in zip(systems, args.ratings)}
    result = paraphrase(
        systems, sources, refs, ratings=ratings, tokenize=args.tokenize, lowercase=args.lowercase, pinc=pinc
    )
    _emit_paraphrase(args, result)
    return 0


def _emit_paraphrase(args: argparse.Namespace, result: ParaphraseResult) -> None:
    text = render(list(result.scores), args.format, decimals(args, 2), sentence=args.sentence)
    if result.logistic is not None and args.format == "text" and not args.sentence:
        lg = result.logistic
        text += (
            f"logistic fitted to {lg.n} rated sentences: slope {lg.slope:.4g}, midpoint {lg.midpoint:.4g}"
            f" (sentence BLEU 0-1), Pearson r {lg.pearson:.4f}\n"
        )
    emit(text, args.output)


def add_parser(sub: Any) -> None:
    pp = sub.add_parser("paraphrase", help="BLEU, PINC, SE and their combinations for paraphrase systems")
    pp.add_argument("systems", nargs="+", metavar="SYSTEM", help="paraphrase files, one per source line")
    pp.add_argument("--source", required=True, help="the source sentences, one a line")
    add_naming_options(pp)
    pp.add_argument("-r", "--refs", nargs="+", required=True, metavar="REF", help="reference files (or TSV)")
    pp.add_argument("--tsv", action="store_true", help="reference files are TSV (one segment a line)")
    pp.add_argument("--missing-empty-refs", action="store_true", help="an empty reference is a missing one")
    pp.add_argument("--ratings", nargs="+", metavar="FILE", help="human ratings, one file per system, a number a line")
    pp.add_argument("--pinc-order", type=order_arg, default=4, help="PINC's N (default 4)")
    pp.add_argument("--pinc-counts", action="store_true", help="PINC on n-gram multisets instead of sets")
    pp.add_argument(
        "--pinc-average",
        choices=("present", "all"),
        default="present",
        help="average PINC over the orders the candidate has (default) or over all N",
    )
    pp.add_argument("--sentence", action="store_true", help="per-segment scores")
    pp.add_argument("-tok", "--tokenize", default="13a", help=f"tokenizer: {', '.join(TOKENIZERS)} (default 13a)")
    pp.add_argument("-lc", "--lowercase", action="store_true", help="lower-case before tokenizing")
    add_max_cells(pp)
    add_scheduler(pp)
    add_output_options(pp)
    pp.set_defaults(func=cmd_paraphrase)
