"""The command line's ``--scheduler``: ``score``, ``compare`` and ``paraphrase`` on Dask workers.

Every SYSTEM, ``-r`` REF and ``--source`` argument is a shard pattern (a quoted glob, a directory or a file),
shards aligned by name order and read by the workers (see :mod:`ngrameval.distributed.cluster`). The client
prints the dashboard's address on stderr and, on a terminal, Dask's progress bar.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, cast

from ngrameval.errors import ConfigError, InputError

if TYPE_CHECKING:
    from distributed import Client

    from ngrameval.api import Score
    from ngrameval.corpus.paraphrase import ParaphraseResult
    from ngrameval.distributed.cluster import Partitions
    from ngrameval.meta.significance import Comparison
    from ngrameval.metrics.pinc import PINC
    from ngrameval.metrics.registry import MetricSpec
    from ngrameval.ngrams.stats import MetricRows


Names = Callable[[Sequence[str]], list[str]]  # SYSTEM patterns -> system names (--names, --strip-names)


def shards(args: argparse.Namespace, names: Names) -> Partitions:
    """The partitions of the command's shard patterns (plain shards above ``--blocksize`` cut into blocks of
    lines, counted on the current Dask scheduler)."""
    from ngrameval.distributed import cluster

    if getattr(args, "sentence_separator", None):
        raise ConfigError("--sentence-separator does not work with --scheduler")
    if not args.systems or not args.refs:
        raise InputError("with --scheduler give the system and reference shards as quoted globs or directories")
    # named as one machine names them; read by workers that may run in another directory: absolute patterns
    systems = dict(zip(names(args.systems), map(os.path.abspath, args.systems)))
    refs = [os.path.abspath(r) for r in args.refs]
    source = None if args.source is None else os.path.abspath(args.source)
    empty = args.missing_empty_refs
    return cluster.from_text_shards(
        systems, refs, source, tsv=args.tsv, empty_is_missing=empty, blocksize=args.blocksize or None
    )


@contextmanager
def job(args: argparse.Namespace, names: Names) -> Iterator[tuple[Client, Partitions]]:
    """A client of ``--scheduler`` (``local[:N]`` starts a local cluster, closed at the end; the dashboard's
    address on stderr) and the partitions of the command's shards."""
    from ngrameval.distributed import cluster

    client = cluster.connect(args.scheduler)
    try:
        print(f"ngrameval: Dask dashboard: {cast(Any, client).dashboard_link}", file=sys.stderr)
        yield client, shards(args, names)
    finally:
        cluster.close(client, args.scheduler.startswith("local"))


def _progress(args: argparse.Namespace) -> bool:
    """Dask's progress bar: on a terminal, unless ``-q``."""
    return sys.stderr.isatty() and not getattr(args, "quiet", False)


def score(args: argparse.Namespace, specs: Sequence[MetricSpec], names: Names) -> list[Score]:
    """``score --scheduler``: corpus scores; with ``--sentence``, each shard's sentence scores are written by
    its worker into ``--shard-output DIR`` and the corpus scores printed."""
    from ngrameval.api import scores_of
    from ngrameval.distributed import cluster, gather

    if args.sentence and not args.shard_output:
        raise ConfigError(
            "--sentence with --scheduler writes one file per shard: give the directory with --shard-output"
        )
    if args.shard_output and not args.sentence:
        raise ConfigError("--shard-output is where --sentence writes each shard's scores; add --sentence")
    with job(args, names) as (client, parts):
        if not args.sentence:
            return cluster.score(parts, specs, client, _progress(args), args.max_cells)
        fmt = "text" if args.format in ("markdown", "latex") else args.format
        digits = 2 if args.width is None else int(args.width)
        graph = gather.written(parts, specs, args.shard_output, fmt=fmt, digits=digits, max_cells=args.max_cells)
        acc = cluster.compute(graph, client, _progress(args))
    cluster.say(acc.said)
    return list(scores_of(cluster.named_sum(acc, specs), parts.system_names))


def segment_rows(args: argparse.Namespace, specs: Sequence[MetricSpec], names: Names) -> tuple[
    list[str], list[MetricRows]
]:  # fmt: skip
    """``score --scheduler --confidence``: the system names and every segment's rows, gathered for the bootstrap."""
    from ngrameval.distributed import gather

    if args.sentence:
        raise ConfigError("--confidence and --sentence together do not work with --scheduler")
    with job(args, names) as (client, parts):
        rows = gather.gathered(parts, specs, client, _progress(args), args.max_cells)
        return list(parts.system_names), rows


def compare(
    args: argparse.Namespace, specs: Sequence[MetricSpec], names: Names, baseline: bool, **options: Any
) -> Comparison:
    """``compare --scheduler``: the per-segment rows gathered from the workers, then the paired tests here
    (``baseline``: the first system against each other one)."""
    from ngrameval.distributed import gather

    with job(args, names) as (client, parts):
        first = parts.system_names[0] if baseline else None
        return gather.compare(parts, specs, client, progress=_progress(args), max_cells=args.max_cells,
                              baseline=first, **options)  # fmt: skip


def paraphrase(args: argparse.Namespace, names: Names, pinc: PINC) -> ParaphraseResult:
    """``paraphrase --scheduler``: the per-segment rows gathered from the workers, then the scores here."""
    from ngrameval.distributed import gather

    if args.ratings:
        raise ConfigError("--ratings does not work with --scheduler (ratings of sharded corpora: use the API)")
    with job(args, names) as (client, parts):
        return gather.paraphrase(parts, client, tokenize=args.tokenize, lowercase=args.lowercase, pinc=pinc,
                                 progress=_progress(args), max_cells=args.max_cells)  # fmt: skip
