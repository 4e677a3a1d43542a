"""Type stub of the ROUGE kernel (src/ngrameval/_rouge.c)."""

from typing import Any

Buffer = Any

def lcs(
    hyp_tok: Buffer,
    hyp_soff: Buffer,
    hyp_toff: Buffer,
    ref_tok: Buffer,
    ref_soff: Buffer,
    ref_toff: Buffer,
    clip_hyp_tok: Buffer,
    clip_hyp_soff: Buffer,
    clip_hyp_toff: Buffer,
    clip_ref_tok: Buffer,
    clip_ref_soff: Buffer,
    clip_ref_toff: Buffer,
    pair_hyp: Buffer,
    pair_ref: Buffer,
    weight: float,
    /,
) -> bytes: ...
def skip(
    hyp_tok: Buffer,
    hyp_soff: Buffer,
    hyp_toff: Buffer,
    ref_tok: Buffer,
    ref_soff: Buffer,
    ref_toff: Buffer,
    pair_hyp: Buffer,
    pair_ref: Buffer,
    gap: int,
    unigrams: bool,
    /,
) -> bytes: ...
def scores(
    hits: Buffer, ref_len: Buffer, hyp_len: Buffer, sub: int, alpha: float, round5: bool, out: Buffer, /
) -> bool: ...
def set_max_cells(cells: int, /) -> int: ...
