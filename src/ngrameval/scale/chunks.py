"""One piece of a corpus (a chunk of files, a Dask partition) measured and summed, shared by every way of running
at scale (:mod:`ngrameval.scale.files`, :mod:`ngrameval.scale.dask`):

- :func:`chunk_rows`: the rows of every spec on one piece; the n-gram statistics of a text setting with NIST are
  weighted by information weights of the whole corpus (a :class:`~ngrameval.scale.refcounts.WeightSource`:
  counted in memory, on disk or on Dask) and equal, bit for bit, those of the whole corpus in memory;
- :func:`fold`: a running :class:`Summed` plus one piece's rows, added one segment after the other
  (:func:`ngrameval.ngrams.stats.add_rows`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from ngrameval.api import measure
from ngrameval.metrics.registry import MetricSpec
from ngrameval.metrics.rows import KeptSide
from ngrameval.ngrams.count import References, count_rows
from ngrameval.ngrams.stats import MetricRows, add_rows
from ngrameval.ngrams.texts import Texts
from ngrameval.text.pipeline import Preprocess

if TYPE_CHECKING:  # NIST's tables: the NIST paths of scale.files import them
    from ngrameval.scale.refcounts import RefCounts, WeightSource
    from ngrameval.scale.refspill import SpilledCounts

Said = tuple[tuple[type[Warning], str], ...]  # warnings raised in a task: (category, message)


@dataclass(frozen=True)
class Chunk:
    """Segments ``start + 1 .. start + len(refs)``: hypotheses per system, references, source."""

    start: int
    systems: Mapping[str, Sequence[str]]
    refs: Sequence[Sequence[str]]
    source: Sequence[str] | None


def with_nist(specs: Sequence[MetricSpec]) -> dict[Preprocess, tuple[int, list[int]]]:
    """Per text setting of a NIST spec (a ``counted`` metric that ``needs_info``), the specs counted with it as
    :func:`~ngrameval.api.measure` counts them (every ``counted`` metric of that setting) and the highest order they
    need."""
    pres = {sp.pre for sp in specs if sp.metric.counted and sp.metric.needs_info}
    out: dict[Preprocess, tuple[int, list[int]]] = {}
    for k, sp in enumerate(specs):
        if sp.pre in pres and sp.metric.counted:
            order, ks = out.get(sp.pre, (0, []))
            out[sp.pre] = (max(order, sp.metric.order_needed), [*ks, k])
    return out


def nist_orders(specs: Sequence[MetricSpec]) -> dict[Preprocess, int]:
    """The highest n-gram order counted with NIST per text setting of a NIST spec (see :func:`with_nist`)."""
    return {pre: order for pre, (order, _) in with_nist(specs).items()}


def add_references(tables: Mapping[Preprocess, RefCounts | SpilledCounts], refs: Sequence[Sequence[str]]) -> None:
    """Count the reference n-grams of ``refs`` (segment-major) into every table, under its text setting."""
    for pre, table in tables.items():
        built = References.build(refs, pre, chunk_size=max(len(refs), 1))
        for ch in built.chunks:
            table.add(built.encoder.names(), ch.ids, ch.off)


def nist_values(
    systems: Sequence[Sequence[str]],
    refs: Sequence[Sequence[str]],
    pre: Preprocess,
    weights: WeightSource,
    index: int = 0,
) -> list[NDArray[np.float64]]:
    """The :class:`~ngrameval.ngrams.stats.Stats` values (counted with NIST, order ``weights.max_order``) of every
    system on one chunk, information weights from the whole corpus: the rows ``overlap_stats(..., nist=True)``
    gives these segments when it counts the whole corpus at once."""
    n = weights.max_order
    built = References.build(refs, pre, chunk_size=max(len(refs), 1))
    (ch,) = built.chunks
    hyps = [Texts(*built.encoder.encode(h)) for h in systems]
    w = weights.chunk(index, built.encoder.names(), ch.ids, ch.off)
    return count_rows(hyps, Texts(ch.ids, ch.off), ch.seg, n, weights=w)


def chunk_rows(
    chunk: Chunk,
    specs: Sequence[MetricSpec],
    weights: Mapping[Preprocess, WeightSource],
    jobs: int | None,
    index: int = 0,
    sides: Mapping[int, KeptSide] | None = None,
) -> list[MetricRows]:
    """The rows of every spec on one chunk (NIST weighted by ``weights``; the spec ``k`` of ``sides`` counted
    against its reference side of the whole corpus), unnamed (:func:`ngrameval.api.named` names them)."""
    out: list[MetricRows | None] = [None] * len(specs)
    sides = sides or {}
    counted = {pre: ks for pre, (_, ks) in with_nist(specs).items()}
    plain = [k for k in range(len(specs)) if k not in sides and not any(k in ks for ks in counted.values())]
    if plain:
        rows = measure(chunk.systems, chunk.refs, [specs[k] for k in plain], chunk.source, jobs)
        for k, r in zip(plain, rows, strict=True):
            out[k] = r
    texts = list(chunk.systems.values())
    for k, side in sides.items():
        metric = specs[k].metric
        own = metric.rows_against(side, texts, specs[k].pre, chunk.start)
        out[k] = MetricRows(metric.display_name(), "", specs[k].fraction, own.values, own.scorer, own.details)
    for pre, table in weights.items():
        values = tuple(nist_values(texts, chunk.refs, pre, table, index))
        order = table.max_order
        for k in counted[pre]:
            metric = specs[k].metric
            own = metric.counted_rows(values, order, True)
            out[k] = MetricRows(metric.display_name(), "", specs[k].fraction, values, own.scorer, own.details)
    return [r for r in out if r is not None]


@dataclass(frozen=True)
class Summed:
    """The running sum: per metric, one row per system, and the partitions and segments folded so far."""

    rows: tuple[MetricRows, ...]
    n_refs: frozenset[int]
    partitions: int
    segments: int
    said: Said = ()  # the warnings raised on the workers, said once on the client (:func:`say`)


def fold(acc: Summed | None, part: tuple[list[MetricRows], frozenset[int], Said]) -> Summed:
    """``acc`` plus a piece's rows, reference counts and warnings, the rows added one segment after the other
    (:func:`ngrameval.ngrams.stats.add_rows`, the one summation of rows across pieces)."""
    rows, n_refs, said = part
    n_seg = len(rows[0].values[0]) if rows and rows[0].values else 0
    out = []
    for k, r in enumerate(rows):
        before = (None,) * len(r.values) if acc is None else tuple(s[0] for s in acc.rows[k].values)
        summed = tuple(add_rows(s, v)[np.newaxis] for s, v in zip(before, r.values))
        out.append(replace(r, values=summed))
    if acc is None:
        return Summed(tuple(out), n_refs, 1, n_seg, said)
    return Summed(tuple(out), acc.n_refs | n_refs, acc.partitions + 1, acc.segments + n_seg, acc.said + said)
