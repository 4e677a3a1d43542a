"""The command line's ``--scheduler``: ``score``, ``compare`` and ``paraphrase`` on Dask workers. Here the
options are read from the parsed arguments and checked against each other; the work is
:mod:`ngrameval.scale.dask.run`'s, from plain arguments.

Every SYSTEM, ``-r`` REF and ``--source`` argument is a shard pattern (a quoted glob, a directory or a file).
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ngrameval.errors import ConfigError, InputError
from ngrameval.report.render import render as render_scores

if TYPE_CHECKING:
    from ngrameval.api import Score
    from ngrameval.corpus.paraphrase import ParaphraseResult
    from ngrameval.meta.significance import Comparison
    from ngrameval.metrics.pinc import PINC
    from ngrameval.metrics.registry import MetricSpec
    from ngrameval.ngrams.stats import MetricRows
    from ngrameval.scale.dask.run import Job
    from ngrameval.scale.stored import RunStats


Names = Callable[[Sequence[str]], list[str]]  # SYSTEM patterns -> system names (--names, --strip-names)


def job(args: argparse.Namespace, names: Names) -> Job:
    """The :class:`~ngrameval.scale.dask.run.Job` of the command's options (system names as one machine names
    them); Dask's progress bar on a terminal, unless ``-q``."""
    from ngrameval.scale.dask.run import Job

    if getattr(args, "sentence_separator", None):
        raise ConfigError("--sentence-separator does not work with --scheduler")
    if not args.systems or not args.refs:
        raise InputError("with --scheduler give the system and reference shards as quoted globs or directories")
    return Job(
        args.scheduler,
        dict(zip(names(args.systems), args.systems)),
        list(args.refs),
        args.source,
        tsv=args.tsv,
        empty_is_missing=args.missing_empty_refs,
        blocksize=args.blocksize or None,
        progress=sys.stderr.isatty() and not getattr(args, "quiet", False),
        max_cells=args.max_cells,
    )


def score(args: argparse.Namespace, specs: Sequence[MetricSpec], names: Names) -> list[Score]:
    """``score --scheduler``: corpus scores; with ``--sentence``, each shard's sentence scores are written by
    its worker into ``--shard-output DIR`` and the corpus scores printed."""
    from ngrameval.scale.dask import run

    if args.sentence and not args.shard_output:
        raise ConfigError(
            "--sentence with --scheduler writes one file per shard: give the directory with --shard-output"
        )
    if args.shard_output and not args.sentence:
        raise ConfigError("--shard-output is where --sentence writes each shard's scores; add --sentence")
    if not args.sentence:
        return run.score(job(args, names), specs)
    fmt = "text" if args.format in ("markdown", "latex") else args.format
    digits = 2 if args.width is None else int(args.width)
    render = functools.partial(render_scores, fmt=fmt, width=digits, sentence=True)  # picklable: shipped to workers
    return run.score_written(job(args, names), specs, args.shard_output, render, "txt" if fmt == "text" else fmt)


def stats(args: argparse.Namespace, specs: Sequence[MetricSpec], names: Names) -> RunStats:
    """``stats --scheduler``: the statistics of the partitions, counted on the workers, merged on the client."""
    from ngrameval.scale.dask import run

    return run.stats(job(args, names), specs, keep_texts=args.texts)


def segment_rows(args: argparse.Namespace, specs: Sequence[MetricSpec], names: Names) -> tuple[
    list[str], list[MetricRows]
]:  # fmt: skip
    """``score --scheduler --confidence``: the system names and every segment's rows, gathered for the bootstrap."""
    from ngrameval.scale.dask import run

    if args.sentence:
        raise ConfigError("--confidence and --sentence together do not work with --scheduler")
    return run.segment_rows(job(args, names), specs)


def compare(
    args: argparse.Namespace, specs: Sequence[MetricSpec], names: Names, baseline: bool, **options: Any
) -> Comparison:
    """``compare --scheduler``: the paired tests of the rows gathered from the workers."""
    from ngrameval.scale.dask import run

    return run.compare(job(args, names), specs, baseline, **options)


def paraphrase(args: argparse.Namespace, names: Names, pinc: PINC) -> ParaphraseResult:
    """``paraphrase --scheduler``: the scores of the rows gathered from the workers."""
    from ngrameval.scale.dask import run

    if args.ratings:
        raise ConfigError("--ratings does not work with --scheduler (ratings of sharded corpora: use the API)")
    return run.paraphrase(job(args, names), pinc, args.tokenize, args.lowercase)
