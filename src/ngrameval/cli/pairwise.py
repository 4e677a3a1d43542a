"""``ngrameval pairwise``: score matrices within groups, MBR selection (``--mbr``) and diversity (``--diversity``)."""

from __future__ import annotations

import argparse
import csv
import io
import math
from collections.abc import Hashable, Sequence
from typing import Any

from ngrameval.cli.inputs import decimals, emit
from ngrameval.cli.options import add_jobs, add_output_options, number_arg
from ngrameval.errors import ConfigError, InputError
from ngrameval.io import read_lines
from ngrameval.io.write import check_not_input, dumps_json
from ngrameval.report.table import table

_size = number_arg(int, 1, 2**31 - 1, "a group size of at least 1")
_order = number_arg(int, 1, 100, "an n-gram order from 1 to 100")


def _labels(path: str | None, size: int | None, n: int, what: str, texts_path: str) -> list[Hashable] | None:
    """Group labels of ``n`` texts: one a line of ``path``, or blocks of ``size`` consecutive lines (1, 2, ...)."""
    if path is not None and size is not None:
        raise ConfigError(f"{what}: give --groups FILE or --group-size N, not both")
    if size is not None:
        if n % size:
            raise InputError(f"{texts_path} has {n} lines, not a multiple of --group-size {size}")
        return [i // size + 1 for i in range(n)]
    if path is None:
        return None
    labels: list[Hashable] = list(read_lines(path))
    if len(labels) != n:
        raise InputError(f"{path} has {len(labels)} labels but {texts_path} has {n} lines; give one label per line")
    return labels


def _num(v: float, scale: float, digits: int, fmt: str) -> Any:
    """A score on the 0-100 scale: rounded text for text output, the number (NaN: empty / null) otherwise."""
    if math.isnan(v):
        return "-" if fmt == "text" else None
    return f"{v * scale:.{digits}f}" if fmt == "text" else v * scale


def _render(head: Sequence[str], rows: Sequence[Sequence[Any]], fmt: str, left: int, note: str) -> str:
    if fmt == "json":
        return dumps_json([dict(zip(head, r)) for r in rows])
    if fmt == "csv":
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(head)
        w.writerows([["" if c is None else c for c in r] for r in rows])
        return out.getvalue()
    return "\n".join([*table(head, [[str(c) for c in r] for r in rows], left=left), note]) + "\n"


def cmd_pairwise(args: argparse.Namespace) -> int:
    from ngrameval.matrices import diversity, iter_mbr, iter_pairwise
    from ngrameval.matrices.matrix import spec_of

    check_not_input(args.output, [args.texts, args.others, args.groups, args.other_groups], "-o")
    if args.mbr and args.diversity:
        raise ConfigError("--mbr and --diversity: give one of them")
    if args.diversity and (args.others or args.matrix):
        raise ConfigError("--diversity measures a group's own texts: no --others, no --matrix")
    if args.mbr and args.matrix:
        raise ConfigError("--mbr prints one choice per group: drop --matrix")
    if args.multi_reference and (args.matrix or args.diversity):
        raise ConfigError("--multi-reference scores each text once against all its references: no --matrix, "
                          "no --diversity (Self-BLEU and self-chrF already are)")  # fmt: skip
    texts = read_lines(args.texts)
    labels = _labels(args.groups, args.group_size, len(texts), "texts", args.texts)
    others = read_lines(args.others) if args.others else None
    other_labels = None
    if others is not None and (args.other_groups or args.other_group_size):
        other_labels = _labels(args.other_groups, args.other_group_size, len(others), "others", args.others)
    elif args.other_groups or args.other_group_size:
        raise ConfigError("--other-groups/--other-group-size label the --others file: give --others too")
    spec = spec_of(args.metric)
    fmt, digits = args.format, decimals(args, 2)
    note = f"scores x100 on the 0-100 scale; {spec.metric.display_name()}, cell = row text against column text"
    if args.diversity:
        d = diversity(texts, labels, max_order=args.distinct, jobs=args.jobs)
        head = ["group", "texts", *d.columns()]
        rows = [[g.group, g.texts, *(_num(v, 100, digits, fmt) for v in (*g.distinct, g.self_bleu, g.self_chrf,
                 g.pinc))] for g in d.groups]  # fmt: skip
        emit(_render(head, rows, fmt, 1, "x100; distinct-n over the group's texts, self-BLEU/self-chrF: each text "
                      "against the others as references, PINC: mean over ordered pairs"), args.output)  # fmt: skip
        return 0
    kw = {"others": others, "other_groups": other_labels, "jobs": args.jobs}
    if args.mbr:
        head = ["group", "line", "utility", "candidates", "text"]
        rows = [[c.group, c.index + 1, _num(c.utility, 100, digits, fmt), c.candidates, texts[c.index]]
                for c in iter_mbr(texts, spec, labels, **kw, multi_reference=args.multi_reference)]  # fmt: skip
        utility = ("score with all the group's other texts as references" if args.multi_reference
                   else "mean against the group's other texts")  # fmt: skip
        emit(_render(head, rows, fmt, 1, f"MBR with {spec.metric.display_name()}: expected utility x100 ({utility}"
                      "); ties go to the lowest line"), args.output)  # fmt: skip
        return 0
    if args.multi_reference:
        from ngrameval.matrices import multi_reference_scores

        scores = multi_reference_scores(texts, spec, labels, **kw)
        groups = labels if labels is not None else [None] * len(texts)
        rows = [[g, i + 1, _num(float(v), 100, digits, fmt), t]
                for i, (g, v, t) in enumerate(zip(groups, scores, texts))]  # fmt: skip
        said = f"scores x100; {spec.metric.display_name()}, each text against all the others of its group at once"
        emit(_render(["group", "line", "score", "text"], rows, fmt, 1, said + " (multi-reference)"), args.output)
        return 0
    mats = iter_pairwise(texts, others, spec, labels, other_labels, args.jobs)
    if args.matrix:
        head = ["group", "row", "col", "score"]
        rows = [[g.group, int(r) + 1, int(c) + 1, _num(float(v), 100, digits, fmt)]
                for g in mats for r, line in zip(g.rows, g.scores) for c, v in zip(g.cols, line)]  # fmt: skip
        emit(_render(head, rows, fmt, 1, note + "; row/col: line numbers"), args.output)
        return 0
    head = ["group", "rows", "cols", "mean", "min", "max"]
    rows = []
    for g in mats:
        means = g.off_diagonal_means()
        cells = g.scores[~_diagonal(g)] if g.same else g.scores.ravel()
        mean = float(means.mean()) if len(cells) else float("nan")
        low, high = (float(cells.min()), float(cells.max())) if len(cells) else (float("nan"), float("nan"))
        rows.append([g.group, len(g.rows), len(g.cols), *(_num(v, 100, digits, fmt) for v in (mean, low, high))])
    emit(_render(head, rows, fmt, 1, note + " (the diagonal left out)"), args.output)
    return 0


def _diagonal(g: Any) -> Any:
    import numpy as np

    return np.eye(len(g.rows), dtype=bool)


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "pairwise",
        help="score matrices within groups (every text against every other), MBR selection, diversity",
        description="Sentence scores of every text against every other text of its group (or against --others): "
        "a summary per group (mean, min, max of the cells, the diagonal left out), the cells (--matrix), the "
        "MBR choice per group (--mbr: highest mean utility against the others; ties go to the lowest line) or "
        "diversity (--diversity: distinct-n, Self-BLEU, self-chrF, mean pairwise PINC).",
    )
    p.add_argument("texts", metavar="TEXTS", help="the texts, one a line (candidates, outputs, descriptions)")
    p.add_argument("--others", metavar="FILE", help="score against these texts (one a line) instead of each other")
    p.add_argument("-m", "--metric", default="bleu", help="one sentence metric spec (default bleu): chrf, chrf++, "
                   "ter, rouge-l, pinc, aev, cider-d, bleu:smooth=floor, ...")  # fmt: skip
    p.add_argument("--groups", metavar="FILE", help="a group label per line of TEXTS (e.g. the source segment)")
    p.add_argument("--group-size", type=_size, metavar="N", help="groups of N consecutive lines (an n-best list)")
    p.add_argument("--other-groups", metavar="FILE", help="a group label per line of --others")
    p.add_argument("--other-group-size", type=_size, metavar="N", help="groups of N consecutive lines of --others")
    what = p.add_argument_group("what to print (default: a summary per group)")
    what.add_argument("--matrix", action="store_true", help="every cell: group, row, col, score")
    what.add_argument("--mbr", action="store_true", help="MBR: per group the text with the best mean utility "
                      "against the others, with that expected utility (ties: the lowest line)")  # fmt: skip
    what.add_argument("--diversity", action="store_true", help="distinct-n, Self-BLEU, self-chrF, mean PINC per group")
    what.add_argument("--multi-reference", action="store_true", help="each text scored once with all the others of"
                      " its group (or its group's --others) as references; with --mbr, the utility")  # fmt: skip
    p.add_argument("--distinct", type=_order, default=2, metavar="N", help="--diversity: distinct-1..N (default 2)")
    add_jobs(p)
    add_output_options(p)
    p.set_defaults(func=cmd_pairwise)
