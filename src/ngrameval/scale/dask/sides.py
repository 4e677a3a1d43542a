"""Reference sides on Dask: CIDEr and CIDEr-D (any metric that ``keeps_references``), whose document frequencies
are over every reference of the corpus (idf(g) = log(S) - log(max(1, df(g))), S the segments of the corpus).

1. ``partition_counts(p)`` on the worker that reads partition p: its references' document frequencies, per
   side signature and text setting (:meth:`~ngrameval.metrics.rows.RowMetric.reference_counts`; CIDEr and CIDEr-D
   of one order share one), keyed by token strings (token ids are the partition's own).
2. The partitions' counts added in a tree (:func:`merged`, :data:`ngrameval.scale.dask.nist.FAN_IN` at a time):
   integer document frequencies and numbers of segments, exact in any grouping (the segments of two partitions
   are disjoint, so a segment's references are counted once).
3. Each partition's scoring task makes its own reference side against the sum
   (:meth:`~ngrameval.metrics.rows.RowMetric.reference_side` with ``whole``: the corpus's n-grams, document
   frequencies and S; the partition's reference vectors) and scores its systems against it
   (:func:`ngrameval.scale.chunks.chunk_rows`): the rows one machine gives these segments, bit for bit.

Held at once: the summed table on every worker that scores (Dask sends it once per worker; a partition needs the
frequencies of its systems' n-grams too, so the table is not cut into groups as NIST's is) and where it is merged:
per distinct reference n-gram of orders 1..n a key (8 bytes) and a document frequency (4 bytes), plus the
reference vocabulary's strings (WMT19's 11,012 to-English references, 231,808 words: 506,529 n-grams of orders 1..4,
6.0 MB).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dask.delayed import Delayed

    from ngrameval.metrics.registry import MetricSpec
    from ngrameval.metrics.rows import KeptSide, RowMetric, SideCounts
    from ngrameval.scale.dask.cluster import Partition
    from ngrameval.text.pipeline import Preprocess

SideKey = tuple[str, "Preprocess"]  # a side signature and the text setting: one side for every spec of it
Counts = dict[SideKey, "SideCounts"]


def side_keys(specs: Sequence[MetricSpec]) -> dict[SideKey, list[int]]:
    """The specs whose metric ``keeps_references``, by side signature and text setting (their indices)."""
    out: dict[SideKey, list[int]] = {}
    for k, sp in enumerate(specs):
        if sp.metric.keeps_references:
            out.setdefault((sp.metric.side_signature(), sp.pre), []).append(k)
    return out


def _metrics(specs: Sequence[MetricSpec]) -> dict[SideKey, RowMetric]:
    return {key: specs[ks[0]].metric for key, ks in side_keys(specs).items()}


def partition_counts(part: Partition, specs: Sequence[MetricSpec]) -> Counts:
    """The counting pass on a worker: the corpus-wide part of each reference side of the partition's references
    (an input error names the partition)."""
    from ngrameval.scale.dask.cluster import named_errors

    with named_errors(part):
        return {key: m.reference_counts(part.refs, key[1]) for key, m in _metrics(specs).items()}


def merged(metrics: Mapping[SideKey, RowMetric], *pieces: Counts) -> Counts:
    """The counts of consecutive pieces added, per side (new objects: Dask may run a task twice)."""
    return {key: m.merged_counts([p[key] for p in pieces]) for key, m in metrics.items()}


def whole_graph(partitions: Sequence[Delayed], specs: Sequence[MetricSpec]) -> Delayed | None:
    """Lazy: the counts of every partition added (None: no spec keeps a reference side)."""
    from ngrameval.scale.dask.cluster import _dask
    from ngrameval.scale.dask.nist import tree

    metrics = _metrics(specs)
    if not metrics:
        return None
    dask = _dask()
    counted = [dask.delayed(partition_counts, pure=True)(p, specs) for p in partitions]
    return tree(dask, counted, partial(merged, metrics))


def partition_sides(part: Partition, specs: Sequence[MetricSpec], whole: Counts) -> dict[int, KeptSide]:
    """Per spec index, the partition's reference side against the corpus counts ``whole`` (one per side key)."""
    out: dict[int, KeptSide] = {}
    for key, ks in side_keys(specs).items():
        side = specs[ks[0]].metric.reference_side(part.refs, key[1], whole[key])
        out.update((k, side) for k in ks)
    return out
