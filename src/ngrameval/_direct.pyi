"""Type stub of the direct counting kernel (src/ngrameval/_direct.c)."""

from collections.abc import Callable, Sequence, Sized
from mmap import mmap
from typing import overload

import numpy as np
from numpy.typing import NDArray

@overload
def counts(
    systems: Sequence[Sequence[str]],
    refs: Sequence[str | Sequence[str]],
    mode: int,
    lowercase: bool,
    max_order: int,
    prep: Callable[[str], str],
    rows: NDArray[np.float64],
    /,
) -> None: ...
@overload
def counts(
    systems: Sequence[Sequence[str]],
    refs: Sequence[str | Sequence[str]],
    mode: int,
    lowercase: bool,
    max_order: int,
    prep: Callable[[str], str],
    /,
) -> tuple[bytes, bytes, bytes, bytes, bytes]: ...
def layout(seq: Sequence[object], /) -> int: ...
def ascii(seq: Sequence[object], /) -> bool: ...
def rouge(
    systems: Sequence[Sequence[str]],
    refs: Sequence[str | Sequence[str]],
    full_lower: bool,
    max_order: int,
    want_lcs: bool,
    /,
) -> tuple[bytes, bytes, bytes, bytes, bytes, bool]: ...
def sizes(seq: Sequence[Sized], /) -> list[int]: ...
def lines(
    buf: bytes | bytearray | memoryview | mmap, every: int, drop: bool = False, grain: int = 0, /
) -> tuple[int, bool, bytes, bytes]: ...
def watch(buf: bytes | bytearray | memoryview | mmap, path: bytes, /) -> None: ...
def exit_on_bus_error() -> bool: ...
def remove_on_fault(path: bytes, /) -> bool: ...
def keep_on_fault(path: bytes, /) -> None: ...
def count_bytes(
    texts: tuple[bytes | bytearray | memoryview, ...],
    n_refs: int,
    n: int,
    first: int,
    total: int,
    mode: int,
    lowercase: bool,
    max_order: int,
    want_lcs: bool,
    prep: Callable[[str], str] | None,
    out: tuple[NDArray[np.float64] | NDArray[np.int64] | memoryview, ...],
    /,
) -> bool: ...
