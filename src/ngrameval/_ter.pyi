"""Type stub of the TER kernel (src/ngrameval/_ter.c)."""

from typing import Any

Buffer = Any

MAX_WORDS: int  # 2**30 - 1: a hypothesis and a reference of more words together stop with LimitError

def edits(
    hyp_tok: Buffer,
    hyp_off: Buffer,
    ref_tok: Buffer,
    ref_off: Buffer,
    ref_seg: Buffer,
    max_candidates: int,
    /,
) -> bytes: ...
