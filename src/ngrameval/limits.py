"""Documented resource bounds of the kernels.

``max_cells`` bounds the quadratic work of one text pair: the cells of an alignment table (ROUGE-W and
summary-level ROUGE-L, one bit per cell; SE's edit distance, ``len(a) * len(b)``) and the skip-bigram units of
one text (ROUGE-S/SU). An input above it stops with :class:`ngrameval.errors.LimitError` naming the
segment, what it would need and how to raise the bound (:func:`set_max_cells`; the command line's ``--max-cells``).
Sentence-level ROUGE-L needs no table (bit-parallel LCS, linear memory) and is not bounded.

>>> previous = set_max_cells(1000)
>>> get_max_cells()
1000
>>> _ = set_max_cells(previous)
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from ngrameval import _rouge

DEFAULT_MAX_CELLS = 2**28
MAX_MAX_CELLS = 2**62  # the largest bound the kernels accept

_max_cells = DEFAULT_MAX_CELLS


def get_max_cells() -> int:
    """The current bound on the cells (or skip-bigram units) of one text pair."""
    return _max_cells


def set_max_cells(cells: int) -> int:
    """Sets the bound on the cells of one text pair (1 .. 2**62) for the whole process; returns the previous one."""
    global _max_cells
    _checked(cells)
    previous = _max_cells
    _rouge.set_max_cells(cells)
    _max_cells = cells
    return previous


_bound = threading.Condition()
_holders = 0  # threads inside held()
_held = DEFAULT_MAX_CELLS  # the bound they share
_own = DEFAULT_MAX_CELLS  # the bound before the first of them entered
_asking: dict[int | None, int] = {}  # threads waiting in held(), by the bound they ask


def _checked(cells: int) -> int:
    if isinstance(cells, bool) or not isinstance(cells, int) or not 1 <= cells <= MAX_MAX_CELLS:
        raise ValueError(f"max_cells must be an integer from 1 to 2**62, got {cells!r}")
    return cells


@contextmanager
def held(cells: int | None) -> Iterator[None]:
    """Inside, the bound is ``cells`` (None: the process's own) for this thread, whatever other threads do: the
    bound is one per process (the C kernels read it), so threads asking the same bound are inside together, and a
    thread asking another waits until they have all left (and a newcomer waits while one does). The last to leave
    restores the bound found by the first (a Dask worker running several tasks at once on threads: two tasks that
    each set and restored the bound had left one task running under the worker's own, and the client's bound set
    on the worker for good)."""
    global _holders, _held, _own
    if cells is not None:
        _checked(cells)
    with _bound:
        _asking[cells] = _asking.get(cells, 0) + 1
        try:
            while _holders and (
                _held != (_own if cells is None else cells) or any(n for c, n in _asking.items() if c != cells)
            ):
                _bound.wait()
        finally:
            _asking[cells] -= 1
        if not _holders:
            _own = _max_cells
            if cells is not None and cells != _own:
                set_max_cells(cells)
            _held = _max_cells
        _holders += 1
    try:
        yield
    finally:
        with _bound:
            _holders -= 1
            if not _holders:
                if _max_cells != _own:
                    set_max_cells(_own)
                _bound.notify_all()


def limit_message(where: str, what: str, need: int) -> str:
    """The one-line message of a LimitError: the segment, what it would need and the call raising the bound (the
    command line adds its option, ``--max-cells``)."""
    return (
        f"{where}: {what} needs {need} cells, above max_cells={_max_cells}; "
        "raise the bound with ngrameval.limits.set_max_cells()"
    )
