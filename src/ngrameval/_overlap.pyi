"""Type stub of the C kernel (src/ngrameval/_overlap.c)."""

from collections.abc import Sequence
from typing import Any

Buffer = Any

def overlap(
    ref_tok: Buffer,
    ref_off: Buffer,
    ref_seg: Buffer,
    hyps: Sequence[tuple[Buffer, Buffer]],
    max_order: int,
    emit_matches: bool,
    /,
) -> tuple[bytes, bytes, bytes, list[tuple[bytes, bytes, bytes, bytes, bytes]]]: ...
