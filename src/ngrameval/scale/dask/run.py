"""``score``, ``compare`` and ``paraphrase`` on Dask workers, from plain arguments (the command line's
``--scheduler`` maps its options here: :mod:`ngrameval.cli.scheduler`).

Every system, reference and source pattern is a shard pattern (a glob, a directory or a file), shards aligned
by name order and read by the workers (see :mod:`ngrameval.scale.dask.cluster`). The client prints the
dashboard's address on stderr and, with ``progress``, Dask's progress bar.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from distributed import Client

    from ngrameval.api import Score
    from ngrameval.corpus.paraphrase import ParaphraseResult
    from ngrameval.meta.significance import Comparison
    from ngrameval.metrics.pinc import PINC
    from ngrameval.metrics.registry import MetricSpec
    from ngrameval.ngrams.stats import MetricRows
    from ngrameval.scale.dask.cluster import Partitions
    from ngrameval.scale.dask.gather import Render
    from ngrameval.scale.stored import RunStats


@dataclass(frozen=True)
class Job:
    """Where and what to run: ``scheduler`` (``local``, ``local:N`` or an address), ``systems`` name -> shard
    pattern, one pattern per reference stream, the source's; the reading options of
    :func:`~ngrameval.scale.dask.cluster.from_text_shards`; ``progress``: Dask's progress bar on stderr;
    ``max_cells``: the bound of :mod:`ngrameval.limits` on the workers (None: theirs)."""

    scheduler: str
    systems: Mapping[str, str]
    refs: Sequence[str]
    source: str | None = None
    tsv: bool = False
    empty_is_missing: bool = False
    blocksize: int | None = None
    progress: bool = False
    max_cells: int | None = None


def partitions(job: Job) -> Partitions:
    """The partitions of the job's shard patterns (made absolute: the workers may run in another directory;
    plain shards above ``blocksize`` cut into blocks of lines, counted on the current Dask scheduler)."""
    from ngrameval.scale.dask import cluster

    systems = {name: os.path.abspath(p) for name, p in job.systems.items()}
    refs = [os.path.abspath(r) for r in job.refs]
    source = None if job.source is None else os.path.abspath(job.source)
    return cluster.from_text_shards(
        systems, refs, source, tsv=job.tsv, empty_is_missing=job.empty_is_missing, blocksize=job.blocksize
    )


@contextmanager
def connected(scheduler: str) -> Iterator[Client]:
    """A client of ``scheduler`` (``local[:N]`` starts a local cluster, closed at the end; the dashboard's address
    on stderr)."""
    from ngrameval.scale.dask import cluster

    client = cluster.connect(scheduler)
    try:
        print(f"ngrameval: Dask dashboard: {cast(Any, client).dashboard_link}", file=sys.stderr)
        yield client
    finally:
        cluster.close(client, scheduler.startswith("local"))


@contextmanager
def session(job: Job) -> Iterator[tuple[Client, Partitions]]:
    """A client of the job's scheduler (:func:`connected`) and the job's partitions."""
    with connected(job.scheduler) as client:
        yield client, partitions(job)


def score(job: Job, specs: Sequence[MetricSpec]) -> list[Score]:
    """Corpus scores of every system under every spec."""
    from ngrameval.scale.dask import cluster

    with session(job) as (client, parts):
        return cluster.score(parts, specs, client, job.progress, job.max_cells)


def score_written(job: Job, specs: Sequence[MetricSpec], directory: str, render: Render, ext: str) -> list[Score]:
    """Corpus scores, each shard's sentence scores written by its worker into ``directory`` as ``render`` gives
    them (files named ``<shard>.<ext>``)."""
    from ngrameval.api import scores_of
    from ngrameval.scale.dask import cluster, gather

    with session(job) as (client, parts):
        graph = gather.written(parts, specs, directory, render, ext=ext, max_cells=job.max_cells)
        acc = cluster.compute(graph, client, job.progress)
    cluster.say(acc.said)
    return list(scores_of(cluster.named_sum(acc, specs), parts.system_names))


def segment_rows(job: Job, specs: Sequence[MetricSpec]) -> tuple[list[str], list[MetricRows]]:
    """The system names and every segment's rows, gathered on the client (for the bootstrap)."""
    from ngrameval.scale.dask import gather

    with session(job) as (client, parts):
        rows = gather.gathered(parts, specs, client, job.progress, job.max_cells)
        return list(parts.system_names), rows


def stats(job: Job, specs: Sequence[MetricSpec], keep_texts: bool = False) -> RunStats:
    """The statistics of the job's partitions, counted on the workers and merged in order here: those of the
    whole corpus counted on one machine (:func:`ngrameval.scale.dask.gather.counted_stats`)."""
    from ngrameval.scale.dask import cluster, gather

    cluster.check_specs(specs, nist=True)  # before connecting
    with session(job) as (client, parts):
        return gather.counted_stats(parts, specs, client, keep_texts=keep_texts, progress=job.progress,
                                    max_cells=job.max_cells)  # fmt: skip


def read_stats(scheduler: str, patterns: Sequence[str], progress: bool = False) -> RunStats:
    """The stats files of the shard ``patterns`` (globs, directories or files; in name order), read on the
    workers and merged in order here (:func:`ngrameval.scale.dask.gather.read_stats`)."""
    from ngrameval.scale.dask import cluster, gather

    paths = [p for pattern in patterns for p in cluster.expand(pattern)]
    with connected(scheduler) as client:
        return gather.read_stats([os.path.abspath(p) for p in paths], client, progress, labels=paths)


def compare(job: Job, specs: Sequence[MetricSpec], baseline: bool, **options: Any) -> Comparison:
    """The per-segment rows gathered from the workers, then the paired tests here (``baseline``: the first
    system against each other one; ``options``: those of :func:`ngrameval.scale.dask.gather.compare`)."""
    from ngrameval.scale.dask import gather

    with session(job) as (client, parts):
        first = parts.system_names[0] if baseline else None
        return gather.compare(parts, specs, client, progress=job.progress, max_cells=job.max_cells,
                              baseline=first, **options)  # fmt: skip


def paraphrase(job: Job, pinc: PINC, tokenize: str, lowercase: bool) -> ParaphraseResult:
    """Paraphrase scores: the per-segment rows gathered from the workers, then the scores here."""
    from ngrameval.scale.dask import gather

    with session(job) as (client, parts):
        return gather.paraphrase(parts, client, tokenize=tokenize, lowercase=lowercase, pinc=pinc,
                                 progress=job.progress, max_cells=job.max_cells)  # fmt: skip
