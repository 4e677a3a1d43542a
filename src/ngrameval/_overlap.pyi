"""Type stub of the C kernel (src/ngrameval/_overlap.c)."""

from collections.abc import Sequence
from typing import Any

Buffer = Any

MAX_ORDER: int  # the highest max_order (100); beyond it: ValueError
MAX_ID: int  # 2**31 - 1: n-gram ids and per-segment n-gram counts stay below it (else LimitError)

def intern_plan(
    ref_tok: Buffer, ref_off: Buffer, max_order: int, gid: Buffer, bits: int, /
) -> tuple[bytes, bytes, bytes]: ...
def intern_part(
    ref_tok: Buffer,
    gid: Buffer,
    max_order: int,
    pos: Buffer,
    bstart: Buffer,
    lo: int,
    hi: int,
    unigrams: int,
    base: int,
    count: Buffer,
    prefix: Buffer,
    order: Buffer,
    /,
) -> int: ...
def intern_rebase(
    gid: Buffer,
    max_order: int,
    pos: Buffer,
    bstart: Buffer,
    lo: int,
    hi: int,
    shift: int,
    count: Buffer,
    prefix: Buffer,
    order: Buffer,
    unigrams: Buffer,
    context: Buffer | None,
    /,
) -> None: ...
def overlap(
    ref_tok: Buffer,
    ref_off: Buffer,
    ref_seg: Buffer,
    hyps: Sequence[tuple[Buffer, Buffer]],
    max_order: int,
    nist: tuple[Buffer, Buffer, Buffer, float] | None,
    /,
) -> list[tuple[bytes, bytes, bytes, bytes, bytes]]: ...
def distinct(tok: Buffer, off: Buffer, max_order: int, /) -> bytes: ...
