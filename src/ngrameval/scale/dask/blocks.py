"""Partitions sized automatically: a large plain-text shard is cut into blocks of whole lines, the same lines
of every aligned file (systems, references, source), so that no worker gets more than about ``blocksize``
bytes of one file at a time.

Two passes, both on the workers (the files must be visible to them, as for reading): the first counts the
lines and bytes of every plain shard (an early error when aligned files differ in length, naming them); the
client then picks ``K`` lines a block for each shard (``K = ceil(lines x blocksize / bytes of its largest
file)``), and each block's task finds its byte range from the line offsets of that shard, reads only those
bytes, and checks them as the whole file would be checked (errors name the file's own line numbers).
Compressed shards cannot be entered in the middle and stay one partition each. The partitions come in
segment order, so the corpus fold and every gathered job give the one-machine numbers.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ngrameval.errors import InputError
from ngrameval.io.read import COMPRESSED

CHUNK = 1 << 24  # bytes scanned at a time for line ends
DEFAULT_BLOCKSIZE = 64 << 20  # bytes of the largest file of a shard in one partition (the CLI's default)


def splittable(path: str) -> bool:
    """A plain file can be entered at a line's offset; a compressed one cannot."""
    return Path(path).suffix.lower() not in COMPRESSED


def line_count(path: str) -> tuple[int, int]:
    """(lines, bytes) of a plain file: its LF count, plus one for a last line without LF."""
    from ngrameval.io.read import read_errors

    n, size, last = 0, 0, b"\n"
    with read_errors(path), open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            n += chunk.count(b"\n")
            size += len(chunk)
            last = chunk[-1:]
    return n + (last != b"\n"), size


def block_offsets(path: str, lines_per_block: int) -> NDArray[np.int64]:
    """Byte offsets of lines 1, K + 1, 2K + 1, ... of a plain file, and its size last (an empty file: ``[0]``,
    no block)."""
    from ngrameval.io.read import read_errors

    starts: list[int] = [0]
    seen, base = 0, 0  # LFs seen before this chunk; the chunk's offset
    with read_errors(path), open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            ends = np.flatnonzero(np.frombuffer(chunk, dtype=np.uint8) == 10)
            # the LF that ends line m (1-based) is the (m)th; a block starts after LF number K, 2K, ...
            first = -(-(seen + 1) // lines_per_block) * lines_per_block  # the next multiple of K >= seen + 1
            picks = np.arange(first, seen + len(ends) + 1, lines_per_block)
            starts += (base + ends[picks - seen - 1] + 1).tolist()
            seen += len(ends)
            base += len(chunk)
    if starts[-1] == base:  # a final LF (or an empty file): no empty block after it
        starts.pop()
    return np.array([*starts, base], dtype=np.int64)


@dataclass(frozen=True)
class Block:
    """Lines ``first .. first + count - 1`` (1-based) of each file of one shard, read from byte ranges."""

    index: int
    first: int
    last_block: bool


def read_block(path: str, offsets: NDArray[np.int64], block: Block) -> list[str]:
    """The lines of ``block`` in ``path`` (``offsets`` from :func:`block_offsets`), checked as
    :func:`ngrameval.io.read.read_lines` checks the whole file, errors naming the file's own line numbers."""
    from ngrameval.io.read import decoded_lines, read_errors

    start, stop = int(offsets[block.index]), int(offsets[block.index + 1])
    with read_errors(path), open(path, "rb") as f:
        f.seek(start)
        data = f.read(stop - start)
    return decoded_lines(Path(path), data, block.first, at_start=block.index == 0, at_end=block.last_block)


def plan(files: Sequence[str], counts: Sequence[tuple[int, int]], blocksize: int) -> int | None:
    """Lines a block for one shard (``files`` aligned, ``counts`` their (lines, bytes)), or None for one block;
    InputError when the files' line counts differ."""
    lines = {c[0] for c in counts}
    if len(lines) > 1:
        shown = ", ".join(f"{os.path.basename(f)}: {c[0]}" for f, c in zip(files, counts))
        raise InputError(f"aligned shards differ in length ({shown}) in {os.path.dirname(files[0]) or '.'}")
    n, biggest = counts[0][0], max(c[1] for c in counts)
    if n == 0 or biggest <= blocksize:
        return None
    return max(1, math.ceil(n * blocksize / biggest))


def count_all(dask: Any, files: Sequence[str]) -> dict[str, tuple[int, int]]:
    """(lines, bytes) of every plain file, counted by Dask tasks (on the current scheduler)."""
    plain = sorted({f for f in files if splittable(f)})
    done = dask.compute(*(dask.delayed(line_count, pure=True)(f) for f in plain))
    return dict(zip(plain, done))
