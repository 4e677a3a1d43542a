"""``ngrameval corpus stats|export|baseline``: highly parallel corpora (MSVD)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ngrameval.cli.inputs import decimals, emit, input_paths
from ngrameval.cli.options import add_jobs, add_width, seed_arg, unit_arg
from ngrameval.errors import InputError
from ngrameval.io.write import check_not_input, dumps_json
from ngrameval.text.pipeline import Preprocess

if TYPE_CHECKING:  # the corpus tools load when a corpus subcommand runs, not with every command
    from ngrameval.corpus import Description


def _corpus(args: argparse.Namespace) -> dict[str, list[Description]]:
    from ngrameval.corpus import cluster, read_corpus, select

    descs = select([d for path in args.corpus for d in read_corpus(path)], args.language, args.tier)
    if not descs:
        raise InputError(f"{', '.join(args.corpus)}: no description left after --language/--tier filtering")
    return cluster(descs)


def cmd_corpus_stats(args: argparse.Namespace) -> int:
    from ngrameval.corpus import cluster_stats

    st = cluster_stats(_corpus(args))
    if args.format == "json":
        emit(dumps_json(st), args.output)
        return 0
    lines = [
        f"clusters            {st.clusters}",
        f"descriptions        {st.descriptions}",
        f"per cluster         min {st.per_cluster_min}, median {st.per_cluster_median:g}, "
        f"mean {st.per_cluster_mean:.2f}, max {st.per_cluster_max}",
        f"clusters of one     {st.singletons}",
        "tiers               " + ", ".join(f"{k} {v}" for k, v in st.tiers),
        "languages           " + ", ".join(f"{k} {v}" for k, v in st.languages),
    ]
    emit("\n".join(lines) + "\n", args.output)
    return 0


def _pairs(text: str) -> list[int | None]:
    """``--pairs``: comma-separated partner counts >= 1, or ``all``."""
    out: list[int | None] = []
    for k in (t.strip() for t in text.split(",")):
        if k == "all":
            out.append(None)
        elif k.isdigit() and int(k) >= 1:
            out.append(int(k))
        else:
            raise InputError(f"--pairs: expected comma-separated counts >= 1 or 'all', got {k!r} in {text!r}")
    return out


def cmd_corpus_export(args: argparse.Namespace) -> int:
    from ngrameval.corpus import export
    from ngrameval.corpus.msvd import export_names, stale_exports

    pairs = _pairs(args.pairs)
    for name in export_names(pairs):
        check_not_input(Path(args.out) / name, input_paths(args), "--out")
    stale = stale_exports(args.out, pairs) if Path(args.out).is_dir() else []
    for path in stale:
        check_not_input(path, input_paths(args), "--out")  # removed below: never an input
    written, singletons = export(
        _corpus(args),
        args.out,
        test_fraction=args.test_fraction,
        seed=args.seed,
        pairs=pairs,
        include_source=args.include_source,
    )
    sys.stdout.write("".join(f"wrote {p}\n" for p in written))
    sys.stdout.write("".join(f"removed {p} (an earlier export's other --pairs)\n" for p in stale))
    if singletons:
        sys.stdout.write(f"left out {len(singletons)} clip(s) with a single description: {', '.join(singletons)}\n")
    return 0


def cmd_corpus_baseline(args: argparse.Namespace) -> int:
    from ngrameval.corpus import human_baseline

    res = human_baseline(_corpus(args), Preprocess(args.tokenize, args.lowercase), jobs=args.jobs)
    text = (
        f"human baseline: {res.descriptions} descriptions of {res.clusters} clips"
        f" ({res.singletons_left_out} clips of one description left out)\n"
        f"BLEU {res.bleu * 100:.{decimals(args, 1)}f}  PINC {res.pinc * 100:.{decimals(args, 1)}f}"
        f"  (Chen & Dolan 2011: BLEU 52.9, PINC 77.2)\n  {res.signature}\n"
    )
    if args.format == "json":
        text = dumps_json(res)
    emit(text, args.output)
    return 0


def add_parser(sub: Any) -> None:
    c = sub.add_parser("corpus", help="highly parallel corpora (MSVD): statistics, splits, human baseline")
    csub = c.add_subparsers(dest="corpus_command", required=True)
    for name, func, helptext in (
        ("stats", cmd_corpus_stats, "clusters, descriptions per clip, tiers and languages"),
        ("export", cmd_corpus_export, "seeded split, training pairs and a leave-one-out test set as text files"),
        ("baseline", cmd_corpus_baseline, "every description scored as a paraphrase of the others in its clip"),
    ):
        q = csub.add_parser(name, help=helptext)
        q.add_argument("corpus", nargs="+", help="MSVD CSV or JSON (clip -> descriptions) files, read in turn")
        q.add_argument("--language", help="keep this language only (e.g. English)")
        q.add_argument("--tier", help="keep this tier only (the CSV's Source column: clean or unverified)")
        q.set_defaults(func=func)
        if name == "export":
            q.add_argument("--out", required=True, help="output directory")
            q.add_argument("--test-fraction", type=unit_arg, default=0.1, help="share of clips in the test set")
            q.add_argument("--seed", type=seed_arg, default=0, help="seed of the split and the pair sampling")
            q.add_argument("--pairs", default="1,5,10,all", help="partners per sentence (default 1,5,10,all)")
            q.add_argument("--include-source", action="store_true", help="count the source among its references")
        else:
            q.add_argument("-f", "--format", choices=("text", "json"), default="text", help="output format")
            q.add_argument("-o", "--output", metavar="FILE", help="write here (atomically) instead of stdout")
            add_width(q, 1)
        if name == "baseline":
            add_jobs(q)
            q.add_argument("-tok", "--tokenize", default="13a", help="tokenizer (default 13a)")
            q.add_argument("-lc", "--lowercase", action="store_true", help="lower-case before tokenizing")
