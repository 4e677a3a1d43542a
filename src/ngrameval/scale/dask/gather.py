"""Dask jobs that need more than the corpus sum: paired significance between systems, paraphrase scores,
sentence scores per shard, and the (alpha, N) plane.

Each worker turns its partition's text into numbers; no text leaves it. What comes back, and what it costs
the client (``S`` systems, ``n`` segments, 8-byte floats):

- ``compare``: every segment's summable rows, gathered in segment order, then exactly the one-machine
  :func:`ngrameval.meta.significance.paired_test` on them (same seeded resamples, same p-values). Memory:
  ``8 x S x n x`` the metric's columns (BLEU 5 an order + 3 = 23, chrF 18, chrF++ 24, ROUGE/PINC/SE/TER/
  CIDEr 2): BLEU on 10M segments of 2 systems is 3.7 GB on the client.
- ``paraphrase``: every segment's BLEU rows with and without the source (23 columns each), PINC and SE
  (one each): ``8 x S x n x 48`` bytes; then exactly :func:`ngrameval.corpus.paraphrase.paraphrase_scores`.
- sentence scores (:func:`write_sentences`): written by the workers, one file per shard, beside the
  corpus sum; the client holds only the sum (as :func:`ngrameval.scale.dask.cluster.score`).
- ``plane``: the integer n-gram totals of each judged system (``S x (5N + 3)`` numbers a partition),
  added up in any order (integer-valued floats: exact below 2**53).

NIST is refused by ``compare`` and the sentence scores here (its information weights are counted by the corpus
and ``stats`` paths only); CIDEr and CIDEr-D take their document frequencies from the whole corpus
(:mod:`ngrameval.scale.dask.sides`) on every path.
"""

from __future__ import annotations

import operator
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ngrameval.errors import InputError
from ngrameval.metrics.pinc import DEFAULT_PINC, PINC, checked_pinc
from ngrameval.scale.chunks import Said, fold
from ngrameval.scale.dask.cluster import (
    Partition,
    _dask,
    bounded,
    check_specs,
    compute,
    kept_warnings,
    named_errors,
    partition_rows,
    say,
    system_names,
)
from ngrameval.scale.dask.sides import whole_graph

if TYPE_CHECKING:
    from dask.delayed import Delayed
    from distributed import Client

    from ngrameval.api import Score
    from ngrameval.corpus.paraphrase import ParaphraseResult, SegmentRows
    from ngrameval.meta.correlate import HumanScores
    from ngrameval.meta.plane import Plane
    from ngrameval.meta.significance import Comparison
    from ngrameval.metrics.registry import MetricSpec
    from ngrameval.ngrams.stats import MetricRows, Stats
    from ngrameval.scale.dask.sides import Counts
    from ngrameval.scale.stored import RunStats
    from ngrameval.text.pipeline import Preprocess

Render = Callable[[Sequence["Score"]], str]  # sentence scores -> the text of a shard's file


def _assembled(
    parts: Sequence[tuple[list[MetricRows], frozenset[int], Said]], specs: Sequence[MetricSpec]
) -> tuple[list[MetricRows], Said]:
    """The per-segment rows of every partition, concatenated in order and named as one machine names them, and
    the partitions' warnings."""
    from ngrameval.api import named
    from ngrameval.ngrams.stats import concatenated_rows

    rows = [replace(r, values=v) for r, v in zip(parts[0][0], concatenated_rows([p[0] for p in parts]))]
    return named(rows, specs, sorted(frozenset().union(*(p[1] for p in parts)))), sum((p[2] for p in parts), ())


def gathered(
    partitions: Sequence[Delayed],
    specs: Sequence[MetricSpec] | str,
    client: Client | None = None,
    progress: bool = False,
    max_cells: int | None = None,
) -> list[MetricRows]:
    """:func:`segment_rows` computed on ``client``, the workers' warnings said here."""
    rows, said = compute(_segment_graph(partitions, specs, max_cells), client, progress)
    say(said)
    return cast("list[MetricRows]", rows)


def segment_rows(
    partitions: Sequence[Delayed], specs: Sequence[MetricSpec] | str, max_cells: int | None = None
) -> Delayed:
    """Lazy: the per-segment rows of every metric and system (as :func:`ngrameval.api.measure` gives them for
    the concatenated partitions), gathered on the client: see the module docstring for their size."""
    graph: Delayed = _dask().delayed(operator.itemgetter(0), pure=True)(_segment_graph(partitions, specs, max_cells))
    return graph


def _segment_graph(
    partitions: Sequence[Delayed], specs: Sequence[MetricSpec] | str, max_cells: int | None = None
) -> Delayed:
    """Lazy: the rows of :func:`segment_rows` and the workers' warnings."""
    from ngrameval.api import checked_specs

    dask = _dask()
    specs = checked_specs(specs)
    check_specs(specs)
    if not partitions:
        raise InputError("no partition to score")
    whole = whole_graph(partitions, specs)
    parts = [dask.delayed(partition_rows, pure=True)(p, specs, max_cells, None, whole) for p in partitions]
    graph: Delayed = dask.delayed(_assembled, pure=True)(parts, specs)
    return graph


def compare(
    partitions: Sequence[Delayed],
    specs: Sequence[MetricSpec] | str,
    client: Client | None = None,
    *,
    progress: bool = False,
    max_cells: int | None = None,
    **options: Any,
) -> Comparison:
    """:func:`ngrameval.meta.significance.paired_test` (``options``: its keyword arguments) of the systems of
    ``partitions`` under ``specs``, equal to the one-machine result (rows gathered, then resampled here)."""
    from ngrameval.meta.significance import paired_test

    rows = gathered(partitions, specs, client, progress, max_cells)
    return paired_test(rows, system_names(partitions), **options)


def _paraphrase_rows(
    part: Partition, tokenize: str, lowercase: bool, pinc: PINC, max_cells: int | None
) -> tuple[SegmentRows, Said]:
    from ngrameval.corpus.paraphrase import segment_rows as paraphrase_rows

    if part.source is None:
        raise InputError(f"{part.name}: paraphrase needs the source of every partition")
    with named_errors(part), bounded(max_cells), kept_warnings() as said:
        rows = paraphrase_rows(dict(part.systems), part.source, part.refs, tokenize=tokenize, lowercase=lowercase,
                               pinc=pinc)  # fmt: skip
    return rows, tuple(said)


def _paraphrase_concatenated(parts: Sequence[tuple[SegmentRows, Said]]) -> tuple[SegmentRows, Said]:
    from ngrameval.corpus.paraphrase import SegmentRows

    return SegmentRows.concatenate([p[0] for p in parts]), sum((p[1] for p in parts), ())


def paraphrase(
    partitions: Sequence[Delayed],
    client: Client | None = None,
    *,
    ratings: Mapping[str, Sequence[float]] | None = None,
    tokenize: str = "13a",
    lowercase: bool = False,
    pinc: PINC = DEFAULT_PINC,
    progress: bool = False,
    max_cells: int | None = None,
) -> ParaphraseResult:
    """:func:`ngrameval.corpus.paraphrase.paraphrase` of partitions with a source (``from_text_shards(...,
    source=...)``), equal to the one-machine result; ``ratings`` cover the concatenated segments."""
    from ngrameval.corpus.paraphrase import paraphrase_scores

    dask = _dask()
    if not partitions:
        raise InputError("no partition to score")
    checked_pinc(pinc)
    parts = [dask.delayed(_paraphrase_rows, pure=True)(p, tokenize, lowercase, pinc, max_cells) for p in partitions]
    segs, said = compute(dask.delayed(_paraphrase_concatenated, pure=True)(parts), client, progress)
    say(said)
    return paraphrase_scores(segs, ratings=ratings, tokenize=tokenize, lowercase=lowercase, pinc=pinc)


def _totals(part: Partition, names: Sequence[str], pre: Preprocess, max_order: int) -> Stats:
    from ngrameval.meta.plane import corpus_totals

    missing = [s for s in names if s not in part.systems]
    if missing:
        raise InputError(f"{part.name}: no output for judged system(s) {', '.join(missing)}")
    return corpus_totals([part.systems[s] for s in names], part.refs, pre, max_order)


def _added(parts: Sequence[Stats]) -> Stats:
    from ngrameval.ngrams.stats import Stats

    return Stats(np.sum([p.values for p in parts], axis=0), parts[0].max_order)


def plane(
    partitions: Sequence[Delayed],
    human: HumanScores,
    client: Client | None = None,
    *,
    pre: Preprocess | None = None,
    alphas: Sequence[float] | None = None,
    orders: Sequence[int] | None = None,
    coefficient_name: str = "r2",
    brevity: float = 1.0,
    wordiness: float = 2.0,
    unit: str = "word",
    progress: bool = False,
) -> Plane:
    """:func:`ngrameval.meta.plane.plane` of the judged systems of ``partitions`` (same options), equal to the
    one-machine plane: each partition's integer n-gram totals are added, then every cell is scored here."""
    from ngrameval.meta.plane import DEFAULT_ALPHAS, DEFAULT_ORDERS, checked_grid, plane_of_totals, unit_text
    from ngrameval.text.pipeline import Preprocess

    dask = _dask()
    text = unit_text(unit, pre or Preprocess())
    grid = checked_grid(alphas or DEFAULT_ALPHAS, orders or DEFAULT_ORDERS, brevity, wordiness)
    if not partitions:
        raise InputError("no partition to score")
    names = list(human.systems)
    known = system_names(partitions)
    missing = [s for s in names if s not in known]
    if missing:
        raise InputError(f"no output for judged system(s) {', '.join(missing)}")
    parts = [dask.delayed(_totals, pure=True)(p, names, text, max(grid[1])) for p in partitions]
    totals = compute(dask.delayed(_added, pure=True)(parts), client, progress)
    return plane_of_totals(totals, human, text, *grid, coefficient_name, brevity, wordiness)


def _rows_written(
    part: Partition, specs: Sequence[MetricSpec], max_cells: int | None, path: str, render: Render,
    whole: Counts | None = None,
) -> tuple[list[MetricRows], frozenset[int], Said]:  # fmt: skip
    """``partition_rows`` of ``part`` (``whole``: the reference sides' corpus counts), its sentence scores written
    to ``path`` first as ``render`` gives them (atomically; segments numbered from 1 within the shard)."""
    from ngrameval.api import named, scores_of
    from ngrameval.io.write import write_atomic

    rows, n_refs, said = partition_rows(part, specs, max_cells, None, whole)
    with kept_warnings() as more:  # what scoring the sentences says, for the client too
        scores = scores_of(named(rows, specs, sorted(n_refs)), list(part.systems), sentence=True)
    write_atomic(path, render(scores))
    return rows, n_refs, said + tuple(more)


def written(
    partitions: Sequence[Delayed],
    specs: Sequence[MetricSpec] | str,
    out_dir: str,
    render: Render,
    *,
    ext: str = "txt",
    max_cells: int | None = None,
) -> Delayed:
    """Lazy: the :class:`~ngrameval.scale.dask.cluster.Summed` rows and warnings of every partition, each
    partition's sentence scores written by its worker to ``out_dir/<label>.<ext>`` as ``render`` (a picklable
    function of the sentence :class:`~ngrameval.api.Score` s, e.g. ``functools.partial(ngrameval.report.render.
    render, fmt="csv", sentence=True)``) gives them; the partition's label: the file name of its first reference
    shard; ``out_dir`` must be visible to the workers."""
    from ngrameval.api import checked_specs

    dask = _dask()
    specs = checked_specs(specs)
    check_specs(specs)
    if not partitions:
        raise InputError("no partition to score")
    if not os.path.isdir(out_dir):
        raise InputError(f"{out_dir}: not a directory (the sentence scores of each shard are written there)")
    labels = list(getattr(partitions, "labels", ()))
    if len(set(labels)) != len(partitions):
        raise InputError(f"the partitions' labels must differ, one file each in {out_dir}: {labels[:5]}")
    whole = whole_graph(partitions, specs)
    acc = None
    for p, label in zip(partitions, labels):
        path = os.path.join(out_dir, f"{label}.{ext}")
        rows = dask.delayed(_rows_written, pure=True)(p, specs, max_cells, path, render, whole)
        acc = dask.delayed(fold, pure=True)(acc, rows)
    return cast("Delayed", acc)


def write_sentences(
    partitions: Sequence[Delayed], specs: Sequence[MetricSpec] | str, out_dir: str, render: Render, **options: Any
) -> Delayed:
    """Lazy: the corpus rows of :func:`ngrameval.scale.dask.cluster.corpus_rows`, each partition's sentence
    scores written by its worker to ``out_dir/<label>.<ext>`` as ``render`` gives them; ``options``: ``ext``
    and ``max_cells`` of :func:`written`."""
    from ngrameval.api import checked_specs
    from ngrameval.scale.dask.cluster import named_sum

    specs = checked_specs(specs)
    graph: Delayed = _dask().delayed(named_sum, pure=True)(written(partitions, specs, out_dir, render, **options),
                                                           specs)  # fmt: skip
    return graph


def _partition_stats(
    part: Partition,
    specs: Sequence[MetricSpec],
    max_cells: int | None,
    keep_texts: bool,
    nist: tuple[Any, ...] = (),
    whole: Counts | None = None,
) -> tuple[RunStats, Said]:
    """The :class:`~ngrameval.scale.stored.RunStats` of one partition (on its worker: its texts' digests, and the
    texts with ``keep_texts``) and its warnings; ``nist``: the corpus unigrams and the partition's lookups of NIST's
    weights (:func:`ngrameval.scale.dask.nist.nist_rows`), or nothing; ``whole``: the reference sides' corpus
    counts (:mod:`ngrameval.scale.dask.sides`)."""
    from ngrameval.scale.dask.nist import nist_rows
    from ngrameval.scale.stored import run_of

    if nist:
        rows, _, said = nist_rows(part, specs, max_cells, nist[0], nist[1], whole)
    else:
        rows, _, said = partition_rows(part, specs, max_cells, None, whole)
    with named_errors(part):
        return run_of(dict(part.systems), part.refs, part.source, rows, specs, keep_texts), said


def _merged_runs(runs: Sequence[tuple[RunStats, Said]], labels: Sequence[str]) -> tuple[RunStats, Said]:
    from ngrameval.scale.stored import merge_stats

    return merge_stats([r[0] for r in runs], labels, weighed=True), sum((r[1] for r in runs), ())


def counted_stats(
    partitions: Sequence[Delayed],
    specs: Sequence[MetricSpec] | str,
    client: Client | None = None,
    *,
    keep_texts: bool = False,
    progress: bool = False,
    max_cells: int | None = None,
    nist_groups: int | None = None,
) -> RunStats:
    """The statistics of the concatenated ``partitions`` under ``specs``, counted on the workers and merged in
    order on the client: the :class:`~ngrameval.scale.stored.RunStats` :func:`ngrameval.count_stats` gives for the
    whole corpus on one machine, bit for bit (NIST with the weights of the whole corpus, :mod:`.nist`; CIDEr with
    its document frequencies, :mod:`.sides`). Memory on the client: every segment's
    rows (see the module docstring) and, with ``keep_texts``, the texts."""
    from ngrameval.api import checked_specs
    from ngrameval.scale.dask import nist as nd_nist

    dask = _dask()
    specs = checked_specs(specs)
    check_specs(specs, nist=True)
    if not partitions:
        raise InputError("no partition to score")
    graph = None
    if any(sp.metric.corpus_wide and sp.metric.needs_info for sp in specs):
        graph = nd_nist.weights_graph(partitions, specs, nd_nist.checked_groups(nist_groups, len(partitions)))
    whole = whole_graph(partitions, specs)
    parts = [
        dask.delayed(_partition_stats, pure=True)(p, specs, max_cells, keep_texts,
                                                  () if graph is None else (graph.unigrams, graph.found[k]), whole)
        for k, p in enumerate(partitions)
    ]  # fmt: skip
    labels = list(getattr(partitions, "labels", ())) or [f"partition {k}" for k in range(len(partitions))]
    run, said = compute(dask.delayed(_merged_runs, pure=True)(parts, labels), client, progress)
    say(said)
    return cast("RunStats", run)


def _read_stats(path: str) -> RunStats:
    from ngrameval.scale.stored import read_stats

    return read_stats(path)


def read_stats(
    paths: Sequence[str], client: Client | None = None, progress: bool = False, labels: Sequence[str] | None = None
) -> RunStats:
    """The stats files ``paths`` (shards of one corpus, in order; each read by a worker, so they must be visible
    to the workers), merged in order on the client (:func:`ngrameval.scale.stored.merge_stats`: the same systems
    and metrics in every file, an InputError naming the file that differs, by its ``labels``)."""
    from ngrameval.scale.stored import merge_stats

    dask = _dask()
    if not paths:
        raise InputError("no stats file to read")
    runs = compute(dask.delayed(list, pure=True)([dask.delayed(_read_stats, pure=True)(p) for p in paths]), client,
                   progress)  # fmt: skip
    return merge_stats(runs, list(labels or paths))
