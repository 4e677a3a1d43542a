"""Type stub of the direct counting kernel (src/ngrameval/_direct.c)."""

from collections.abc import Callable, Sequence

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
def rouge(
    systems: Sequence[Sequence[str]],
    refs: Sequence[str | Sequence[str]],
    full_lower: bool,
    max_order: int,
    want_lcs: bool,
    /,
) -> tuple[bytes, bytes, bytes, bytes, bytes, bool]: ...
