"""Counting that begins while the command line is still loading: ``ngrameval score SYS... -r REF... -m METRIC`` on
two threads or more spends ~0.2 s importing NumPy, the metrics and the parser on one core. When its arguments have
the plain shape below, :func:`start` (called by the ``ngrameval`` entry point before any of those imports) maps the
files and counts them from their bytes on the other threads meanwhile (``ngrameval._direct``, no GIL): the files'
lines are found on N threads, the pieces counted on N - 1, and the command's thread, once loaded, counts the pieces
left (N threads in all: a third busy thread beside the start-up on two cores made the two-job run ~4 ms slower).
The command then takes those counts (:func:`take`) only if they are exactly what it would count itself — the same
files, not changed since (device, inode, size, modification time), the same kernel plan (mode, lower-casing, order,
LCS), the same threads and offsets grain — and counts everything itself otherwise, so the output never depends on
it. This module loads nothing but the standard library and the kernel.

Served: ``score`` with system files, ``-r``/``--refs`` files, one ``-m``/``--metrics`` name of :data:`PLANS` and
optionally ``--jobs N`` (N >= 2; absent: every core, as ``score``'s default) and ``-o FILE``; plain files (no
standard input, no compressed file). Inputs of at most :data:`AUTO_BYTES` in all are counted whole; larger ones,
which the command streams in chunks of :data:`CHUNK` segments, are only checked (``_direct.lines``: the pass that
finds their lines and the offsets where chunks and pieces are cut). Lines the scanner alone cannot tokenize (v13a
markup and entities, a ROUGE text above ASCII) make their piece declined here; the command counts declined pieces
from ``str`` as it does any declined piece.
"""

from __future__ import annotations

import _thread
import mmap
import os
import sys
from itertools import pairwise

import ngrameval._direct as _direct  # (not `from ngrameval import`: that asks the package's __getattr__ first)
from ngrameval.memory import anonymous  # (the standard library only)

# Nothing else loads before the counting begins: dataclasses (~12 ms here), typing, contextlib, functools and
# threading (~1 ms after `python -m`'s runpy, ~4 ms without it) would delay it, so the two records below are plain
# classes, the tasks closures and the threads _thread's. mypy reads this name as typing's.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

GRAIN = 512  # lines between the offsets kept of every file, where counting may be cut into pieces (8 bytes each)
AUTO_BYTES = 256 * 2**20  # inputs larger than this are streamed in chunks (ngrameval.scale.files takes both)
CHUNK = 50_000  # segments a chunk when streaming was chosen automatically
WHOLE = 1 << 62  # `every` of a corpus counted in memory: its first line's offset and its end only
# ngrameval.io.read's standard input and compressed suffixes (importing it here would load ngrameval.io before the
# counting can begin; tests/test_early.py pins them equal, and the command checks again before taking anything)
STDIN, COMPRESSED = "-", (".gz", ".bz2", ".xz")

# -m name -> (count_bytes mode, lower-casing, n-gram order, LCS): the plan ngrameval.metrics.fromfile.plan makes
# of the name's default spec (tests/test_early.py compares them).
PLANS: dict[str, tuple[int, bool, int, bool]] = {
    "bleu": (1, False, 4, False),
    "rouge-1": (2, False, 1, False),
    "rouge-2": (2, False, 2, False),
    "rouge-l": (2, False, 0, True),
}
_MODE_ROUGE = 2
BACKGROUND = 10  # the nice value of the counting threads (Linux: each thread has its own)
# pieces of the counting: each a 1/(SHARE * threads) of the lines left, none smaller than SMALLEST grains (see guided)
SHARE, SMALLEST = 2, 2


class Key:
    """What the counts were made of: the reference and system files (as given, with their identity), the plan, the
    threads, the offsets grain and ``every`` (``WHOLE``: counted; else only checked, the offsets of every
    ``every`` lines kept: streaming's chunks)."""

    __slots__ = ("every", "grain", "identity", "jobs", "plan", "refs", "systems")

    def __init__(
        self,
        refs: tuple[str, ...],
        systems: tuple[str, ...],
        identity: tuple[tuple[int, int, int, int], ...],
        plan: tuple[int, bool, int, bool],
        jobs: int,
        grain: int,
        every: int,
    ) -> None:
        self.refs, self.systems, self.identity, self.plan = refs, systems, identity, plan
        self.jobs, self.grain, self.every = jobs, grain, every


class Counted:
    """The files mapped and checked (``lines``' results, one a file), the output buffers of the plan's arrays, the
    pieces' line bounds and whether the kernel counted each piece (a declined one is left to the command)."""

    __slots__ = ("bounds", "found", "maps", "outs", "served")

    def __init__(
        self,
        maps: list[mmap.mmap],
        found: list[tuple[int, bool, bytes, bytes]],
        outs: tuple[memoryview[Any], ...],
        bounds: list[int],
        served: list[bool],
    ) -> None:
        self.maps, self.found, self.outs, self.bounds, self.served = maps, found, outs, bounds, served


_state: dict[str, object] = {}


def identity(path: str) -> tuple[int, int, int, int]:
    """A file's device, inode, size and modification time (ns)."""
    st = os.stat(path)
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def parse(argv: Sequence[str]) -> tuple[list[str], list[str], str, int] | None:
    """The systems, references, metric name and threads of a ``score`` command line of the served shape; None for
    any other."""
    if not argv or argv[0] != "score":
        return None
    systems: list[str] = []
    refs: list[str] = []
    metric, jobs, i = "", None, 1
    while i < len(argv):
        a = argv[i]
        if a in ("-r", "--refs"):
            i += 1
            while i < len(argv) and not argv[i].startswith("-"):
                refs.append(argv[i])
                i += 1
            continue
        if a in ("-m", "--metrics", "--jobs", "-o") and i + 1 < len(argv) and not argv[i + 1].startswith("-"):
            if a == "--jobs":
                if not argv[i + 1].isdigit():
                    return None
                jobs = int(argv[i + 1])
            elif a != "-o":
                metric = argv[i + 1]
            i += 2
            continue
        if a.startswith("-"):
            return None
        systems.append(a)
        i += 1
    if jobs is None:
        jobs = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if metric not in PLANS or jobs < 2 or not systems or not refs:
        return None
    return systems, refs, metric, jobs


def pieces(first: int, n: int, k: int, grain: int) -> list[int]:
    """Line bounds of ``k`` pieces of lines ``first .. first + n``: ``first``, the multiples of ``grain`` nearest to
    an even split, ``first + n`` (fewer pieces when ``n`` is small).

    >>> pieces(0, 3000, 2, 512)
    [0, 1536, 3000]
    """
    inner = {round((first + i * n / k) / grain) * grain for i in range(1, k)}
    return [first, *sorted(c for c in inner if first < c < first + n), first + n]


def guided(n: int, jobs: int, grain: int) -> list[int]:
    """Line bounds of pieces of lines ``0 .. n`` for ``jobs`` threads that each take the next piece when free: a
    piece is ``1 / (SHARE * jobs)`` of the lines left, cut at a multiple of ``grain``, and at least ``SMALLEST``
    grains (the last one takes what is left). The first pieces are large and the last ones small, so the threads
    end within about a small piece of each other: the factoring rule of loop scheduling (Hummel, Schonberg and
    Flynn, CACM 1992), whenever each thread begins (the command's joins once its start-up is done: :func:`take`).

    >>> guided(10_000, 2, 512)
    [0, 2560, 4608, 6144, 7168, 8192, 10000]
    """
    bounds, a = [0], 0
    while a < n:
        size = max((n - a) // (SHARE * jobs), SMALLEST * grain)
        b = round((a + size) / grain) * grain
        a = n if b > n - SMALLEST * grain else b
        bounds.append(a)
    return bounds


def buffers(plan: tuple[int, bool, int, bool], n_systems: int, n_seg: int, n_refs: int) -> tuple[memoryview[Any], ...]:
    """Buffers of the plan's arrays (``ngrameval.metrics.fromfile.Plan.arrays``, flat), in anonymous memory
    (:func:`ngrameval.memory.anonymous`: huge pages for large ones; no page is touched before the kernel writes it):
    the Stats rows, ``3 + 5 * order`` float64 columns a segment (BLEU family), or ROUGE's int64 hypothesis and
    reference lengths, hits and LCS."""
    mode, _, order, _ = plan
    if mode != _MODE_ROUGE:
        k = n_systems * n_seg * (3 + 5 * order)
        return (memoryview(anonymous(8 * max(1, k))).cast("d")[:k],)
    pairs = n_seg * n_refs
    sizes = (n_systems * n_seg, pairs, n_systems * pairs * order, n_systems * pairs)
    return tuple(memoryview(anonymous(8 * max(k, 1))).cast("q")[:k] for k in sizes)


def _task(f: Callable[..., object], *args: object) -> Callable[[], object]:
    """``f(*args)`` as a task (functools.partial without loading functools)."""
    return lambda: f(*args)


def _background() -> None:
    """The calling thread's nice value raised to :data:`BACKGROUND` (Linux: each thread has its own; elsewhere the id
    is no pid), below the command's thread: a counting thread never delays the command's start-up."""
    if sys.platform.startswith("linux"):
        try:  # noqa: SIM105 (contextlib is not loaded here)
            os.setpriority(os.PRIO_PROCESS, _thread.get_native_id(), BACKGROUND)
        except (AttributeError, OSError):
            pass


def _run(
    tasks: Sequence[Callable[[], object]], threads: int, publish: Callable[[Callable[[], None]], None] | None = None
) -> list[object]:
    """Every task on ``threads`` threads, this one and ``threads - 1`` started (each takes the next task left), the
    results in order once all are done; a task that fails gives its exception (nothing is printed: the command
    counts the files itself, and names any fault). ``publish`` is given the loop the threads run, so that another
    thread can take tasks too (the command's, once its start-up is done: :func:`take`)."""
    out: list[object] = [None] * len(tasks)
    left, unfinished = iter(range(len(tasks))), [len(tasks)]
    lock, finished = _thread.allocate_lock(), _thread.allocate_lock()
    finished.acquire()

    def each() -> None:
        while True:
            with lock:
                k = next(left, None)
            if k is None:
                return
            try:
                out[k] = tasks[k]()
            except Exception as e:  # (anything: never a traceback from here)
                out[k] = e
            with lock:
                unfinished[0] -= 1
                if not unfinished[0]:
                    finished.release()

    def work(done: _thread.LockType) -> None:
        try:
            _background()
            each()
        finally:
            done.release()

    if not tasks:
        return out
    for _ in range(min(threads, len(tasks)) - 1):
        _started(work)
    if publish is not None:
        publish(each)
    each()
    finished.acquire()
    return out


def _started(work: Callable[[_thread.LockType], None]) -> _thread.LockType:
    """``work(done)`` begun on a new thread (a daemon, as every thread of ``_thread``), ``done`` a lock held until
    ``work`` releases it: acquiring it waits for the thread, as ``Thread.join`` does."""
    done = _thread.allocate_lock()
    done.acquire()
    _thread.start_new_thread(work, (done,))
    return done


def _count(key: Key, files: list[str], publish: Callable[[Callable[[], None]], None]) -> Counted | None:
    """The files checked (on ``key.jobs`` threads) and counted (on ``key.jobs - 1`` threads and, once its start-up is
    done, the command's: ``publish`` gets their loop); None when they are not plain or differ in line count."""
    maps = []
    for path in files:
        with open(path, "rb", buffering=0) as fh:
            maps.append(mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ))
        _direct.watch(maps[-1], os.fsencode(path))  # truncated while read: one line naming it (see _direct.watch)
    streamed = key.every != WHOLE  # (each page let go once checked, as the command's own check does)
    found = _run([_task(_direct.lines, m, key.every, streamed, key.grain) for m in maps], key.jobs)
    found_t = [f for f in found if isinstance(f, tuple)]
    if len(found_t) != len(found):
        return None
    n_seg = found_t[0][0]
    if not n_seg or any(f[0] != n_seg or not f[1] for f in found_t):
        return None
    if streamed:
        return Counted(maps, found_t, (), [], [])
    n_refs = len(key.refs)
    outs = buffers(key.plan, len(key.systems), n_seg, n_refs)
    bounds = guided(n_seg, key.jobs, key.grain)
    offsets = [memoryview(f[3]).cast("q") for f in found_t]
    mode, lower, order, lcs = key.plan

    def at(f: int, line: int) -> int:
        return offsets[f][-1] if line == n_seg else offsets[f][line // key.grain]

    def piece(a: int, b: int) -> bool:
        texts = tuple(memoryview(m)[at(f, a) : at(f, b)] for f, m in enumerate(maps))
        return bool(_direct.count_bytes(texts, n_refs, b - a, a, n_seg, mode, lower, order, lcs, None, outs))

    served = _run([_task(piece, a, b) for a, b in pairwise(bounds)], key.jobs - 1, publish)
    if not all(isinstance(s, bool) for s in served):
        return None
    return Counted(maps, found_t, outs, bounds, [s is True for s in served])


def start(argv: Sequence[str]) -> None:
    """Counting of a served ``score`` command line begun on a thread; anything else (or any failure) does
    nothing."""
    try:
        got = parse(argv)
        if got is None:
            return
        systems, refs, metric, jobs = got
        files = [*refs, *systems]
        if any(p == STDIN or p.lower().endswith(COMPRESSED) or not os.path.isfile(p) for p in files):
            return
        ids = tuple(identity(p) for p in files)
        if any(i[2] == 0 for i in ids):
            return
        every = WHOLE if sum(i[2] for i in ids) <= AUTO_BYTES else CHUNK
        key = Key(tuple(refs), tuple(systems), ids, PLANS[metric], jobs, GRAIN, every)
    except (OSError, ValueError):
        return
    box: dict[str, object] = {}
    ready = _thread.allocate_lock()  # held until the pieces' loop is in the box, or the counting ended
    ready.acquire()

    def publish(each: Callable[[], None]) -> None:
        box["help"] = each
        ready.release()

    def run(done: _thread.LockType) -> None:
        try:
            _background()
            box["counted"] = _count(key, files, publish)
        except Exception:  # (the command counts the files itself, and names any fault)
            box["counted"] = None
        finally:
            if "help" not in box:
                ready.release()
            done.release()

    try:
        done = _started(run)
    except RuntimeError:  # (no thread can be started: the command counts the files itself)
        return
    _state.update(key=key, done=done, ready=ready, box=box)


def take(
    refs: Sequence[str],
    systems: Sequence[str],
    plan: tuple[int, bool, int, bool] | None,
    jobs: int,
    grain: int,
    every: int = WHOLE,
) -> Counted | None:
    """What :func:`start` began, once done, when it is of these files (unchanged since), threads, grain and
    ``every`` (``WHOLE``: the counts of this plan; else the check of files streamed in chunks of ``every``
    segments, ``plan`` None); None otherwise (nothing was begun, or it is not what the command does). Taken once.
    Once the files are checked, the calling thread counts the pieces that no counting thread has begun."""
    key, done, ready, box = _state.get("key"), _state.get("done"), _state.get("ready"), _state.get("box")
    _state.clear()
    if not isinstance(key, Key) or not isinstance(box, dict):
        return None
    if not isinstance(done, _thread.LockType) or not isinstance(ready, _thread.LockType):
        return None
    if (key.refs, key.systems, key.jobs, key.grain, key.every) != (tuple(refs), tuple(systems), jobs, grain, every):
        return None
    if (every == WHOLE) != (plan is not None) or (plan is not None and plan != key.plan):
        return None
    ready.acquire()  # (the files checked: the pieces are being counted, or nothing more is to be done)
    each = box.get("help")
    if callable(each):
        each()  # the pieces no thread has begun, counted on this thread too
    done.acquire()  # (the counting's end)
    try:
        if tuple(identity(p) for p in [*refs, *systems]) != key.identity:
            return None
    except OSError:
        return None
    counted = box.get("counted")
    return counted if isinstance(counted, Counted) else None
