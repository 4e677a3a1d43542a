"""Every core of one machine: long jobs split into chunks of segments or blocks of resamples and run on a
thread pool (the C kernels release the GIL in their loops), then put back together in order, so every
number is bit for bit the one of ``jobs=1``. The ground floor: it knows nothing of texts or metrics.

- Chunks (:func:`chunked_map`): a function of a range of segments mapped over contiguous chunks, results in
  order (scoring: :func:`ngrameval.api.measure_chunked`, each chunk measured on its own and its rows
  concatenated; text settings of corpus-wide metrics run as one more task of the same pool).
- Resampling (:func:`run_blocks`): the weights of every block are drawn in order on the calling
  thread from the one seeded generator (the same draws as serially); the matrix products and scores
  run on the pool, and the results are taken in block order.
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from typing import TYPE_CHECKING, TypeVar, cast

import numpy as np

from ngrameval.errors import ConfigError

if TYPE_CHECKING:  # the pool (and logging, which it imports) loads with the first job on a thread
    from concurrent.futures import Future

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


WAKE = 0.1  # seconds: how often a thread waiting for the pool looks for a signal to handle


def awaited(future: Future[R]) -> R:
    """``future.result()``, waited for in slices of :data:`WAKE` seconds: on the main thread a Ctrl-C is handled even
    when its signal came just before the wait began (a wait without a timeout can miss it and sleep for ever)."""
    from concurrent.futures import TimeoutError as Pending

    while True:
        with contextlib.suppress(Pending):
            return future.result(timeout=WAKE)


def thread_map(fn: Callable[[T], R], items: Sequence[T], jobs: int) -> list[R]:
    """``[fn(x) for x in items]`` on ``jobs`` threads (inline for one job or one item), in order; each item in a
    copy of the caller's context (:mod:`contextvars`: a warnings list of ``metrics.policy.keeping`` reaches it)."""
    if jobs == 1 or len(items) < 2:
        return [fn(x) for x in items]
    if len(items) <= jobs:
        return _a_thread_each(fn, items)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(jobs, len(items)), thread_name_prefix="ngrameval") as pool:
        futures = [pool.submit(contextvars.copy_context().run, fn, x) for x in items]
        return [awaited(f) for f in futures]


def _a_thread_each(fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """:func:`thread_map` of no more items than threads: the first item on the calling thread, each other on a thread
    of its own, without a pool (``concurrent.futures`` loads ``logging``: ~4 ms of a command's one core, as much as
    the work it would share, e.g. ROUGE's scores of two systems of 100k segments); the first error in item order is
    raised once every item has ended. A Ctrl-C on the calling thread is handled between slices of :data:`WAKE`."""
    import threading

    out: list[R | None] = [None] * len(items)
    errors: list[BaseException | None] = [None] * len(items)

    def run(k: int) -> None:
        try:
            out[k] = fn(items[k])
        except BaseException as exc:  # (raised on the calling thread, below)
            errors[k] = exc

    others = [
        threading.Thread(target=contextvars.copy_context().run, args=(run, k), name=f"ngrameval-{k}")
        for k in range(1, len(items))
    ]
    for t in others:
        t.start()
    try:
        out[0] = contextvars.copy_context().run(fn, items[0])
    finally:
        for t in others:
            while t.is_alive():
                t.join(WAKE)
    first = next((e for e in errors if e is not None), None)
    if first is not None:
        raise first
    return cast("list[R]", out)


def let_go(held: list[object], jobs: int) -> None:
    """Empties ``held``, the caller's last references to mapped files and large arrays, on a daemon thread of its own
    when ``jobs`` >= 2, so that their unmapping (~0.5 ms a 10 MB file here, the GIL released) runs beside the caller's
    remaining work (a command's output) rather than before it; with one job here and now."""
    if jobs == 1:
        held.clear()
        return
    import threading

    threading.Thread(target=held.clear, name="ngrameval-let-go", daemon=True).start()


def beside(background: Callable[[], T], foreground: Callable[[], R], jobs: int) -> tuple[T, R]:
    """``(background(), foreground())``, with ``jobs`` >= 2 the first on a thread of its own (in a copy of the
    caller's context, as :func:`thread_map`) while the calling thread runs the second (a kernel that releases the GIL
    beside Python work that holds it); with one job one after the other. An error of either is raised, the
    background's first, once both have ended."""
    if jobs == 1:
        return background(), foreground()
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ngrameval-beside") as pool:
        pending = pool.submit(contextvars.copy_context().run, background)
        try:
            mine = foreground()
        finally:
            done = awaited(pending)
        return done, mine


def run_blocks(sizes: Iterable[int], draw: Callable[[int], W], work: Callable[[int, int, W], R], jobs: int) -> list[R]:
    """``work(start, size, draw(size))`` for each block, in order. ``draw`` always runs on the calling thread
    in block order (a seeded generator gives the serial draws); ``work`` runs on ``jobs`` threads (in a copy of
    the caller's context, as :func:`thread_map`) with at most ``2 * jobs`` blocks drawn ahead, so memory stays
    bounded."""
    out: list[R] = []
    start = 0
    if jobs == 1:
        for size in sizes:
            out.append(work(start, size, draw(size)))
            start += size
        return out
    from concurrent.futures import ThreadPoolExecutor

    pending: deque[Future[R]] = deque()
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="ngrameval") as pool:
        for size in sizes:
            if len(pending) >= 2 * jobs:
                out.append(awaited(pending.popleft()))
            pending.append(pool.submit(contextvars.copy_context().run, work, start, size, draw(size)))
            start += size
        out.extend(awaited(f) for f in pending)
    return out


def chunked_map(
    fn: Callable[[range], R] | None, n_items: int, jobs: int, first: Sequence[Callable[[], R]] = ()
) -> tuple[list[R], list[R]]:
    """``fn`` of every chunk of ``range(n_items)`` (:func:`segment_chunks`; no chunk when ``fn`` is None) on
    ``jobs`` threads, and the tasks ``first`` (long ones: the pool starts them first) on the same pool: (their
    results, the chunks' results), in order."""
    tasks: list[Callable[[], R]] = [*first]
    tasks += [partial(fn, ch) for ch in segment_chunks(n_items, jobs)] if fn is not None else []
    results = thread_map(lambda task: task(), tasks, jobs)
    return results[: len(first)], results[len(first) :]


_END = object()


def _next_or_end(items: Iterator[T]) -> object:
    return next(items, _END)


def ahead(items: Iterator[T]) -> Iterator[T]:
    """The items of ``items`` in order, the next one made on a thread of its own while the caller works on the
    current one (a file's next chunk read while this one is counted on the pool: the reading holds the GIL, the
    kernels release it). An error making an item is raised where that item is asked for, as without the thread;
    when the caller stops early, the item being made is waited for and ``items`` is closed (if it can be), on the
    caller's thread. Each item is made in a copy of the caller's context (as :func:`thread_map`'s)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ngrameval-ahead") as pool:
        pending = pool.submit(contextvars.copy_context().run, _next_or_end, items)
        try:
            while (item := awaited(pending)) is not _END:
                pending = pool.submit(contextvars.copy_context().run, _next_or_end, items)
                yield cast(T, item)
        finally:
            pending.cancel()
            while not pending.done():  # the item being made: items is not used by two threads at once
                pending.exception()
            close = getattr(items, "close", None)
            if close is not None:
                close()
