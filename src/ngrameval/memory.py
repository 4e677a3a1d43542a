"""Fresh memory for large arrays, in transparent huge pages. The first write to a fresh 4 kB page costs ~2.3 us on
this project's 2-core machine (a ``(3, 100k)`` float64 array: 586 page faults, 1.2-1.5 ms to fill; the same array
filled again: 0.1 ms), a fresh 2 MB page ~0.1 ms. A buffer of :data:`BIG` bytes or more is therefore private
anonymous memory rounded up to whole 2 MB pages and advised into huge pages (Linux's THP in ``madvise`` or
``always`` mode): Linux (6.7 and later) places an anonymous mapping whose length is a multiple of 2 MB on a 2 MB
boundary, so every page of it can be huge; an older kernel gives huge pages where aligned 2 MB fit, as for NumPy,
which advises its arrays of 4 MB or more without the rounding (its allocations are not aligned: 2 x 100k segments
of BLEU's rows, 37 MB, took 5,701 faults). Elsewhere, or with THP off, the memory is plain pages, as NumPy's. The
ground floor, the standard library only (:mod:`ngrameval.scale.early` uses it before NumPy loads)."""

from __future__ import annotations

import math
import mmap
import os

TYPE_CHECKING = False  # (typing is not loaded here: mypy reads this name as typing's)
if TYPE_CHECKING:
    from typing import Any

    from numpy.typing import DTypeLike, NDArray

HUGE_PAGE = 2 * 2**20
BIG = 2**20  # bytes from which a buffer is given in huge pages (at most twice its size: from 1 MB)


def anonymous(size: int) -> mmap.mmap:
    """At least ``size`` bytes of private anonymous memory, zeroed (``mmap``'s default is shared memory, which gets
    no huge pages); from :data:`BIG` bytes whole huge pages where the system offers them, so ``len()`` may be more
    than ``size``. No page is touched before it is written."""
    huge = size >= BIG and hasattr(mmap, "MADV_HUGEPAGE")
    if huge:
        size = -(-size // HUGE_PAGE) * HUGE_PAGE
    buf = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE) if os.name == "posix" else mmap.mmap(-1, size)
    if huge:
        try:  # noqa: SIM105 (contextlib is not loaded here)
            buf.madvise(mmap.MADV_HUGEPAGE)
        except OSError:  # (a kernel without THP: 4 kB pages)
            pass
    return buf


def empty(shape: int | tuple[int, ...], dtype: DTypeLike = float) -> NDArray[Any]:
    """``np.empty(shape, dtype)`` (its values zeros, in fact), in :func:`anonymous` memory from :data:`BIG` bytes; the
    array keeps its memory (its ``base``) alive, and the memory is unmapped with it."""
    import numpy as np

    dt = np.dtype(dtype)
    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    count = math.prod(dims)
    if count * dt.itemsize < BIG:
        return np.empty(dims, dtype=dt)
    return np.frombuffer(anonymous(count * dt.itemsize), dtype=dt, count=count).reshape(dims)
