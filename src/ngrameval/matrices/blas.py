"""One BLAS thread while the pairwise products run: their parallelism is ``jobs`` threads over groups or row
blocks, and OpenBLAS's own threads on top of them oversubscribe the cores. On a busy machine that costs more than
it gives: a 128 x 128 group's products took 47 ms with OpenBLAS's threads and under 1 ms with one
(benchmarks/bench_pairwise.py, 2 cores, load ~16). OpenBLAS's thread count is process-wide, so it is set for the
duration of the call and restored after; where no OpenBLAS is loaded (another BLAS, another OS) nothing changes."""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

# (get, set) pairs of the OpenBLAS builds NumPy ships (scipy-openblas, 64-bit ints) and of plain OpenBLAS
_NAMES = (
    ("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
    ("scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"),
    ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
    ("openblas_get_num_threads", "openblas_set_num_threads"),
)


@cache
def _controls() -> tuple[tuple[Any, Any], ...]:
    """The get/set functions of every OpenBLAS loaded into this process (found in /proc/self/maps)."""
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return ()
    paths = dict.fromkeys(ln.split()[-1] for ln in maps.splitlines() if "openblas" in ln.lower() and ".so" in ln)
    out = []
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for get_name, set_name in _NAMES:
            get, put = getattr(lib, get_name, None), getattr(lib, set_name, None)
            if get is not None and put is not None:
                get.restype, put.argtypes = ctypes.c_int, [ctypes.c_int]
                out.append((get, put))
                break
    return tuple(out)


_LOCK = threading.Lock()
_state: dict[str, object] = {"inside": 0, "before": []}


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """OpenBLAS on one thread inside the block, its previous thread count restored when the last of any threads
    inside such a block leaves it.

    >>> with one_blas_thread():
    ...     pass
    """
    import numpy  # noqa: F401  (loads NumPy's OpenBLAS, so that it is found)

    controls = _controls()
    with _LOCK:
        if _state["inside"] == 0:
            _state["before"] = [get() for get, _ in controls]
            for _, put in controls:
                put(1)
        _state["inside"] = int(str(_state["inside"])) + 1
    try:
        yield
    finally:
        with _LOCK:
            _state["inside"] = int(str(_state["inside"])) - 1
            if _state["inside"] == 0:
                before = _state["before"]
                assert isinstance(before, list)
                for (_, put), n in zip(controls, before):
                    put(n)
