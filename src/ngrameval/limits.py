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
    if isinstance(cells, bool) or not isinstance(cells, int) or not 1 <= cells <= MAX_MAX_CELLS:
        raise ValueError(f"max_cells must be an integer from 1 to 2**62, got {cells!r}")
    previous = _max_cells
    _rouge.set_max_cells(cells)
    _max_cells = cells
    return previous


def limit_message(where: str, what: str, need: int) -> str:
    """The one-line message of a LimitError: the segment, what it would need and the call raising the bound (the
    command line adds its option, ``--max-cells``)."""
    return (
        f"{where}: {what} needs {need} cells, above max_cells={_max_cells}; "
        "raise the bound with ngrameval.limits.set_max_cells()"
    )
