"""Every core of one machine: long jobs split into chunks of segments or blocks of resamples and run on a
thread pool (the C kernels release the GIL in their loops), then put back together in order, so every
number is bit for bit the one of ``jobs=1``.

- Scoring (:func:`measure_chunked`): a segment's rows depend on that segment's text alone, so the
  segments are cut into chunks, each chunk is measured on its own (its own vocabulary, so no two
  threads share one) and the rows are concatenated in segment order. NIST is the exception: its
  information weights come from every reference of the test set, so a text setting with a NIST spec
  is measured over the whole corpus as one more task of the same pool.
- Resampling (:func:`run_blocks`): the weights of every block are drawn in order on the calling
  thread from the one seeded generator (the same draws as serially); the matrix products and scores
  run on the pool, and the results are taken in block order.
"""

from __future__ import annotations

import itertools
import os
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from ngrameval.errors import ConfigError, InputError
from ngrameval.ngrams.stats import MetricRows

if TYPE_CHECKING:
    from ngrameval.metrics.registry import MetricSpec

T = TypeVar("T")
W = TypeVar("W")
R = TypeVar("R")

MIN_CHUNK = 2_000  # segments: smaller chunks cost more in per-call overhead than they gain
CHUNKS_PER_JOB = 4  # a few chunks per thread, so an uneven chunk does not leave a core idle


def resolve_jobs(jobs: int | None) -> int:
    """The number of threads: ``jobs``, or every core available to this process for ``None``.

    >>> resolve_jobs(3)
    3
    """
    if jobs is None:
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ConfigError(f"jobs must be a whole number >= 1 or None (every core), got {jobs!r}")
    return jobs


def segment_chunks(n_segments: int, jobs: int) -> list[range]:
    """Contiguous chunks covering ``range(n_segments)``: about ``CHUNKS_PER_JOB * jobs`` of them, none
    smaller than :data:`MIN_CHUNK` segments (one chunk when the corpus is small).

    >>> len(segment_chunks(100_000, 2)), segment_chunks(3_000, 2)
    (8, [range(0, 3000)])
    """
    count = max(1, min(CHUNKS_PER_JOB * jobs, n_segments // MIN_CHUNK))
    bounds = np.linspace(0, n_segments, count + 1).astype(np.int64).tolist()
    return [range(a, b) for a, b in itertools.pairwise(bounds)]


def thread_map(fn: Callable[[T], R], items: Sequence[T], jobs: int) -> list[R]:
    """``[fn(x) for x in items]`` on ``jobs`` threads (inline for one job or one item), in order."""
    if jobs == 1 or len(items) < 2:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(max_workers=min(jobs, len(items)), thread_name_prefix="ngrameval") as pool:
        return list(pool.map(fn, items))


def run_blocks(sizes: Iterable[int], draw: Callable[[int], W], work: Callable[[int, int, W], R], jobs: int) -> list[R]:
    """``work(start, size, draw(size))`` for each block, in order. ``draw`` always runs on the calling thread
    in block order (a seeded generator gives the serial draws); ``work`` runs on ``jobs`` threads with at
    most ``2 * jobs`` blocks drawn ahead, so memory stays bounded."""
    out: list[R] = []
    start = 0
    if jobs == 1:
        for size in sizes:
            out.append(work(start, size, draw(size)))
            start += size
        return out
    pending: deque[Future[R]] = deque()
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="ngrameval") as pool:
        for size in sizes:
            if len(pending) >= 2 * jobs:
                out.append(pending.popleft().result())
            pending.append(pool.submit(work, start, size, draw(size)))
            start += size
        out.extend(f.result() for f in pending)
    return out


def concatenated(parts: Sequence[Sequence[MetricRows]]) -> list[tuple[np.ndarray, ...]]:
    """Per metric, each system's rows of every chunk in order; metrics that share their statistics in a
    chunk (counted together) share the concatenated tuple too, so resampling multiplies them once."""
    done: dict[int, tuple[np.ndarray, ...]] = {}
    out = []
    for j, first in enumerate(parts[0]):
        key = id(first.values)
        if key not in done:
            n_sys = len(first.values)
            done[key] = tuple(np.concatenate([p[j].values[s] for p in parts]) for s in range(n_sys))
        out.append(done[key])
    return out


def _needs_whole_corpus(spec: MetricSpec, specs: Sequence[MetricSpec]) -> bool:
    """A spec counted with a NIST spec (same text setting) needs the whole corpus's information weights."""
    return any(getattr(sp.metric, "needs_info", False) for sp in specs if sp.pre == spec.pre)


def measure_chunked(
    systems: Mapping[str, Sequence[str]],
    refs: Sequence[Sequence[str]],
    specs: Sequence[MetricSpec],
    source: Sequence[str] | None,
    jobs: int,
) -> list[MetricRows]:
    """:func:`ngrameval.api.measure` of checked, segment-major inputs on ``jobs`` threads (see the module
    docstring); equal to the serial result, names and signatures included."""
    from ngrameval.api import measure, named

    whole = [k for k, sp in enumerate(specs) if _needs_whole_corpus(sp, specs)]
    split = [k for k in range(len(specs)) if k not in whole]
    chunks = segment_chunks(len(refs), jobs) if split else []
    tasks: list[tuple[list[int], range]] = [(split, ch) for ch in chunks]
    if whole:
        tasks.insert(0, (whole, range(len(refs))))  # the longest task first

    def run(task: tuple[list[int], range]) -> list[MetricRows]:
        ks, ch = task
        part = {name: hyps[ch.start : ch.stop] for name, hyps in systems.items()}
        src = None if source is None else source[ch.start : ch.stop]
        return measure(part, refs[ch.start : ch.stop], [specs[k] for k in ks], src)

    try:
        results = thread_map(run, tasks, jobs)
    except InputError:
        # a message naming a segment counts from the chunk's start: let the serial path name it
        return measure(systems, refs, specs, source)
    rows: dict[int, MetricRows] = {}
    if whole:
        rows.update(zip(whole, results.pop(0)))
    if split:
        rows.update(zip(split, (replace(r, values=v) for r, v in zip(results[0], concatenated(results)))))
    return named([rows[k] for k in range(len(specs))], specs, sorted({len(r) for r in refs}))
