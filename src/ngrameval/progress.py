"""Progress bars on standard error for the long loops (resampling, scoring many systems, the plane, ...).

A loop opens a :func:`task` and calls the function it yields with the units just done; nothing is shown
unless bars are switched on (:func:`shown`: the command line does so when standard error is a terminal and
``-q`` is not given; the API's ``progress=True`` does so for one call), and even then a bar appears only once a
task has run for :data:`DELAY` seconds, so short runs print nothing and never import ``tqdm``. A task opened
inside a task of the same name counts towards the outer bar (the chunks of a threaded scoring run); a task
inside a task of another name is silent (one bar at a time). Bars only report: results are the same with
and without them.

Every ``advance`` also raises ``KeyboardInterrupt`` once a Ctrl-C was received by :func:`remembered_interrupts`'
handler (the command line's): an extension module's initialisation that runs Python code can swallow the
exception Python raises for it (Cython's registration of its types with ``collections.abc``: a Ctrl-C that
landed while ``compare`` imported ``numpy.random`` was lost and the run went on), so a long loop notices it at its
next step.

>>> with task("work", 3) as advance:  # bars off: advance does nothing
...     advance(3)
"""

from __future__ import annotations

import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from types import FrameType
from typing import Any, NoReturn, TypeVar


def _delay() -> float:
    """Seconds a task runs before its bar appears: 1, or ``NGRAMEVAL_PROGRESS_DELAY`` (a number >= 0)."""
    try:
        value = float(os.environ.get("NGRAMEVAL_PROGRESS_DELAY", "1"))
    except ValueError:
        return 1.0
    return value if value >= 0 and math.isfinite(value) else 1.0


DELAY = _delay()  # seconds a task runs before its bar appears

Advance = Callable[[int], None]
T = TypeVar("T")

_lock = threading.Lock()
_on = False
_open: list[_Task] = []
_interrupted = False  # a Ctrl-C was received (remembered_interrupts): every advance raises KeyboardInterrupt


def _on_interrupt(signum: int, frame: FrameType | None) -> NoReturn:
    """SIGINT: remembered, then Python's ``KeyboardInterrupt``."""
    global _interrupted
    _interrupted = True
    raise KeyboardInterrupt


def _check() -> None:
    if _interrupted:
        raise KeyboardInterrupt


@contextmanager
def remembered_interrupts() -> Iterator[None]:
    """Inside this block, a Ctrl-C raises ``KeyboardInterrupt`` as Python's own handler does and is also remembered,
    so that every task's ``advance`` raises it again should the first have been swallowed. Only on the main thread
    and over Python's own handler (a handler the caller installed is kept); the previous handler is restored."""
    global _interrupted
    mine = threading.current_thread() is threading.main_thread()
    mine = mine and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    previous = signal.signal(signal.SIGINT, _on_interrupt) if mine else None
    try:
        yield
    finally:
        if mine:
            signal.signal(signal.SIGINT, previous)
            _interrupted = False


def _nothing(done: int) -> None:
    """The ``advance`` of a task without a bar (a Ctrl-C remembered: KeyboardInterrupt)."""
    _check()


class _Task:
    """One bar: counts units from any thread; creates the ``tqdm`` bar (imported then) after :data:`DELAY`."""

    def __init__(self, name: str, total: int | None, unit: str) -> None:
        self.name, self.total, self.unit = name, total, unit
        self.start = time.monotonic()
        self.done = 0
        self.bar: Any = None

    def advance(self, done: int) -> None:
        _check()
        with _lock:
            self.done += done
            if self.bar is not None:
                self.bar.update(done)
            elif time.monotonic() - self.start >= DELAY:
                try:
                    from tqdm import tqdm  # only when a bar is shown: start-up stays free of it
                except ImportError:  # installed without its dependencies: no bar, the run goes on
                    self.start = math.inf
                    return
                # the bar appears late (after DELAY) with the units done so far: its clock starts when the task
                # did, and its rate is the average since then (smoothing 0), not that of the last jump
                self.bar = tqdm(
                    total=self.total, desc=f"ngrameval: {self.name}", unit=self.unit, file=sys.stderr,
                    leave=False, dynamic_ncols=True, mininterval=0.2, smoothing=0,
                )  # fmt: skip
                self.bar.start_t -= time.monotonic() - self.start
                self.bar.update(self.done)

    def close(self) -> None:
        with _lock:
            if self.bar is not None:
                self.bar.close()


def enabled() -> bool:
    """Whether bars are switched on (see :func:`shown`)."""
    return _on


@contextmanager
def shown(on: bool = True) -> Iterator[None]:
    """Bars on inside this block when ``on`` (``on=False`` leaves the current setting as it is)."""
    global _on
    before = _on
    _on = before or on
    try:
        yield
    finally:
        _on = before


@contextmanager
def task(name: str, total: int | None, unit: str = "it") -> Iterator[Advance]:
    """A loop of ``total`` units (``None``: unknown) named ``name``; yields ``advance(units_done)``."""
    with _lock:
        outer = _open[-1] if _open else None
        if not _on or outer is not None:
            mine = None
        else:
            mine = _Task(name, total, unit)
            _open.append(mine)
    if mine is None:
        yield outer.advance if outer is not None and outer.name == name else _nothing
        return
    try:
        yield mine.advance
    finally:
        mine.close()
        with _lock:
            _open.remove(mine)


def counted(items: Iterable[T], advance: Advance, size: Callable[[T], int] = lambda _: 1) -> Iterator[T]:
    """``items`` one by one, calling ``advance(size(item))`` once the loop body for an item has run.

    >>> done = []
    >>> [x for x in counted("ab", done.append)], done
    (['a', 'b'], [1, 1])
    """
    for item in items:
        yield item
        advance(size(item))


def tracked(items: Sequence[T], name: str, unit: str = "it", size: Callable[[T], int] = lambda _: 1) -> Iterator[T]:
    """``items`` one by one inside a :func:`task` of ``sum(size(x))`` units named ``name`` (for a plain loop).

    >>> list(tracked([1, 2], "work"))
    [1, 2]
    """
    with task(name, sum(size(x) for x in items), unit) as advance:
        yield from counted(items, advance, size)
