"""``ngrameval stats``: count once, keep the statistics (a Parquet stats file, :mod:`ngrameval.scale.stored`); and
what ``score`` and ``compare`` do with a stats file given where the system files go."""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import Any

from ngrameval.cli.inputs import metric_specs, scoring_inputs
from ngrameval.cli.options import (
    Unset,
    add_chunk_size,
    add_naming_options,
    add_scheduler,
    add_scoring_options,
    add_text_options,
)
from ngrameval.errors import InputError
from ngrameval.io.read import read_lines, read_refs
from ngrameval.io.stats import is_stats_file
from ngrameval.ngrams.stats import MetricRows


def cmd_stats(args: argparse.Namespace) -> int:
    from ngrameval.cli.score import check_one_machine_chunks
    from ngrameval.scale import stored

    check_one_machine_chunks(args)
    paths = list(args.systems or [])
    if args.merge and args.scheduler:
        if args.refs or args.source or args.texts:
            raise InputError("--merge reads stats files only: give the shards, no -r/--source/--texts")
        run = _read_on_dask(args, paths)
    elif args.merge:
        if args.refs or args.source or args.texts:
            raise InputError(
                "--merge reads stats files only: give the shards, no -r/--source/--texts (a merge keeps "
                "the texts when every shard holds them)"
            )
        if not paths:
            raise InputError("--merge: give the stats files of the shards, in corpus order")
        run = stored.merge_stats([stored.read_stats(p) for p in paths], paths)
    else:
        given = next((p for p in paths if is_stats_file(p)), None)
        if given is not None:
            raise InputError(f"{given}: a stats file, not system output (merge shards with ngrameval stats --merge)")
        run = _counted_on_dask(args) if args.scheduler else _streamed_run(args)
        if run is None:
            specs, refs, systems, source = scoring_inputs(args)
            run = stored.count_stats(systems, refs, specs, source, args.jobs, keep_texts=args.texts)
    stored.write_stats(run, args.output)
    return 0


def _streamed_run(args: argparse.Namespace) -> Any:
    """The run of files streamed in chunks (``--chunk-size``, ``--ref-cache`` or large inputs: bounded memory, the
    same statistics), its digests taken chunk by chunk; None: read the inputs in memory."""
    from ngrameval.cli.score import score_streamed
    from ngrameval.scale.stored import Digester

    digests = Digester(keep_texts=args.texts)
    streamed = score_streamed(args, False, True, lambda ch: digests.add(ch.systems, ch.refs, ch.source))
    if streamed is None:
        return None
    with warnings.catch_warnings():  # the specs streamed, again: their warnings were given
        warnings.simplefilter("ignore")
        specs = metric_specs(args, args.metrics)
    try:
        return digests.run(streamed.names, streamed.kept, specs)
    finally:
        streamed.close()


def _counted_on_dask(args: argparse.Namespace) -> Any:
    """``stats --scheduler``: each partition counted on its worker, merged in order on the client."""
    from ngrameval.cli import scheduler as commands
    from ngrameval.cli.inputs import system_namer

    given = next((p for p in _shards(args.systems or []) if is_stats_file(p)), None)
    if given is not None:
        raise InputError(f"{given}: a stats file, not system output (merge shards with ngrameval stats --merge)")
    return commands.stats(args, metric_specs(args, args.metrics), system_namer(args))


def _shards(patterns: list[str]) -> list[str]:
    """The files of ``--scheduler``'s shard patterns (globs, directories or files), in name order."""
    from ngrameval.scale.dask.cluster import expand

    return [p for pattern in patterns for p in expand(pattern)]


def _read_on_dask(args: argparse.Namespace, patterns: list[str]) -> Any:
    """The stats files of ``patterns`` (shards of one corpus, in name order), read on the Dask workers of
    ``--scheduler`` and merged in order."""
    from ngrameval.scale.dask.run import read_stats

    if not patterns:
        raise InputError("--scheduler: give the stats files of the shards (quoted globs, directories or files)")
    return read_stats(args.scheduler, patterns, sys.stderr.isatty() and not getattr(args, "quiet", False))


def stored_rows(args: argparse.Namespace) -> tuple[list[str], list[MetricRows]] | None:
    """The systems and rows of a stats file given as the only system file of ``score``/``compare``/``correlate``
    (None: the inputs are text); see :func:`stored_run`."""
    kept = stored_run(args)
    return None if kept is None else (list(kept[1].systems), list(kept[1].rows))


def stored_run(args: argparse.Namespace, allow_text: bool = False) -> tuple[str, Any] | None:
    """The path and :class:`~ngrameval.scale.stored.RunStats` of a stats file given as the only system file (None:
    the inputs are text). ``-r``/``--source``, when given, must be the texts it was counted on, and ``-m``, when
    given, metrics it holds (an InputError naming what differs, both values); ``allow_text``: the text options pick
    statistics without ``-m`` (``plane``)."""
    paths = list(args.systems or [])
    scheduler = getattr(args, "scheduler", None)
    files = _shards(paths) if scheduler and paths else paths
    given = [p for p in files if is_stats_file(p)]
    if not given:
        return None
    if scheduler and len(given) < len(files):
        text = next(p for p in files if not is_stats_file(p))
        raise InputError(f"{text}: not a stats file, but {given[0]} is: give --scheduler the stats files of the "
                         "shards only, or text shards only")  # fmt: skip
    if len(paths) > 1 and not scheduler:
        raise InputError(f"{given[0]}: a stats file is read alone (merge shards first: ngrameval stats --merge)")
    for option in ("--chunk-size", "--ref-cache", "--names", "--strip-names", "--shard-output"):
        if getattr(args, option[2:].replace("-", "_"), None):
            raise InputError(f"{option} does not apply to a stats file ({given[0]}): its systems are counted")
    from ngrameval.scale import stored

    if scheduler:
        if getattr(args, "refs", None) or getattr(args, "source", None):
            raise InputError(f"-r/--source with --scheduler and stats files ({given[0]} ...): each shard was "
                             "checked when counted; check the merged file against the texts on one machine "
                             "(ngrameval stats --merge, then -r)")  # fmt: skip
        path, run = paths[0] if len(paths) == 1 else f"{paths[0]} ...", _read_on_dask(args, paths)
    else:
        path = given[0]
        run = stored.read_stats(path)
    refs_paths, source_path = getattr(args, "refs", None), getattr(args, "source", None)
    refs = None
    if refs_paths:
        refs = read_refs(refs_paths, tsv=args.tsv, empty_is_missing=getattr(args, "missing_empty_refs", False))
        if getattr(args, "sentence_separator", None):
            refs = [[r.replace(args.sentence_separator, "\n") for r in rs] for rs in refs]
    source = read_lines(source_path) if source_path else None
    stored.check_texts(run, path, refs, refs_paths[0] if refs_paths else "", source, source_path or "")
    if not isinstance(getattr(args, "metrics", Unset()), Unset):
        run = stored.select(run, path, metric_specs(args, args.metrics))
    else:
        options = (("-tok", args.tokenize != "13a"), ("-lc", args.lowercase), ("--stem", args.stem),
                 ("--stopwords", args.stopwords), ("--normalize", args.normalize))  # fmt: skip
        text = [opt for opt, on in options if on]
        if text and not allow_text:
            raise InputError(f"{text[0]} picks statistics of {path} only with -m (the metrics it holds are counted)")
    return path, run


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "stats",
        help="count the per-segment statistics of every metric once and keep them (a Parquet file)",
        description="Write the per-segment sufficient statistics of every metric asked for (with the texts' "
        "fingerprints and the metrics' signatures) to a Parquet file that score, compare, correlate, plane and "
        "report read instead of text, with the same output; --merge joins the files of shards of one corpus (needs "
        "pyarrow: pip install 'ngrameval[stats]').",
    )
    add_scoring_options(p)
    add_naming_options(p)
    p.add_argument(
        "--merge",
        action="store_true",
        help="the files given are stats files of shards of one corpus, in order: write them as one",
    )
    p.add_argument(
        "--texts",
        action="store_true",
        help="keep the texts too (outputs, references, source): what report needs for its analysis and examples",
    )
    p.add_argument("-o", "--output", metavar="FILE", required=True, help="the stats file to write (atomically)")
    add_chunk_size(p, "in bounded memory (the same statistics; NIST: two passes)")
    add_scheduler(p)
    add_text_options(p)
    p.set_defaults(func=cmd_stats)
