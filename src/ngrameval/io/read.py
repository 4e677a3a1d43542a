"""Reading text files strictly, with an error naming the file and line for anything that is not plain text.

Accepted: UTF-8 (a byte order mark at the very start is dropped), LF or CRLF line ends (mixed too), optionally
compressed (``.gz``, ``.bz2``, ``.xz``). Every line is a segment, empty lines too; a final line end is optional.
Refused, never reinterpreted: other encodings, a bare CR (old Mac line ends, CR CR LF, a CR inside a line) and a
byte order mark anywhere but at the start (concatenated files). Lines are split at LF only: U+2028, U+2029 and
U+0085 stay inside their line.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import math
import sys
import zlib
from collections.abc import Sequence
from pathlib import Path

from ngrameval.errors import InputError

COMPRESSED = (".gz", ".bz2", ".xz")


def _decompressed(p: Path, suffix: str) -> bytes:
    data = p.read_bytes()
    if suffix == ".gz":
        return gzip.decompress(data)
    if suffix == ".bz2":
        return bz2.decompress(data)
    return lzma.decompress(data)


STDIN = "-"  # the path that names standard input, as in sacreBLEU


def _read_bytes(p: Path) -> bytes:
    suffix = p.suffix.lower()
    try:
        if str(p) == STDIN:
            return sys.stdin.buffer.read()
        return _decompressed(p, suffix) if suffix in COMPRESSED else p.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{p}: is a directory, expected a text file") from None
    except PermissionError:
        raise InputError(f"{p}: permission denied") from None
    except (
        OSError,
        EOFError,
        ValueError,
        lzma.LZMAError,
        zlib.error,
    ) as exc:  # unreadable, or a broken/truncated compressed file
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
        raise InputError(f"{p}: cannot read ({reason})") from None


def read_text(path: str | Path) -> str:
    """The text of a UTF-8 file (``-``: standard input) with LF line ends (CRLF converted), without a leading BOM.

    Raises :class:`InputError` with ``FILE:LINE`` for invalid UTF-8, a bare CR (a CR at the very end of the
    file is taken as its last line end) and a U+FEFF after the start.
    """
    p = Path(path)
    data = _read_bytes(p)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(f"{p}:{line}: not valid UTF-8 (byte {data[exc.start]:#04x})") from None
    del data  # large inputs: never hold the bytes, the text and the lines at once
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        if text.endswith("\r"):  # a CR LF without its LF at the very end
            text = text[:-1] + "\n"
        cr = text.find("\r")
        if cr >= 0:
            line = text.count("\n", 0, cr) + 1
            if text.startswith("\n", cr + 1):
                hint = "CR CR LF line ends; remove the stray CRs, e.g. sed -i 's/\\r*$//' FILE"
            else:
                hint = "old Mac line ends or a CR inside a line; convert, e.g. tr '\\r' '\\n' < FILE > FILE.lf"
            raise InputError(f"{p}:{line}: bare CR (carriage return not followed by a line feed): {hint}")
    bom = text.find("\ufeff")
    if bom >= 0:
        line = text.count("\n", 0, bom) + 1
        where = "a second BOM at the start" if bom == 0 else "BOM (U+FEFF) inside the text"
        raise InputError(
            f"{p}:{line}: {where}, only one at the very start of a file is allowed (concatenated files?);"
            " remove it, e.g. sed -i 's/\\xef\\xbb\\xbf//g' FILE"
        )
    return text


def read_lines(path: str | Path) -> list[str]:
    """The lines of a UTF-8 text file (see :func:`read_text`), without line ends."""
    text = read_text(path)
    if not text:
        return []
    lines = text.split("\n")  # never splitlines(): it also splits at U+2028, U+2029, U+0085, VT, FF, ...
    if lines[-1] == "":
        lines.pop()
    return lines


def read_refs(paths: Sequence[str | Path], tsv: bool = False, empty_is_missing: bool = False) -> list[list[str]]:
    """Segment-major references from one file per reference stream, or from TSV files (one segment a
    line, one reference a field). With ``empty_is_missing`` an empty line or field is no reference
    (a variable number of references per segment); otherwise it is an empty reference."""
    streams = [read_lines(p) for p in paths]
    if tsv:
        rows: list[list[str]] = []
        for p, lines in zip(paths, streams):
            if rows and len(lines) != len(rows):
                raise InputError(f"{p} has {len(lines)} lines but {paths[0]} has {len(rows)}")
            fields = [ln.split("\t") for ln in lines]
            rows = [a + b for a, b in zip(rows, fields)] if rows else fields
    else:
        for p, lines in zip(paths[1:], streams[1:]):
            if len(lines) != len(streams[0]):
                raise InputError(
                    f"reference files differ in length: {paths[0]} has {len(streams[0])} lines, {p} has {len(lines)}"
                )
        rows = [list(seg) for seg in zip(*streams)]
    if empty_is_missing:
        rows = [[r for r in row if r.strip()] for row in rows]
        for i, row in enumerate(rows):
            if not row:
                raise InputError(
                    f"segment {i + 1} (line {i + 1}) has only empty references in {', '.join(map(str, paths))}"
                )
    return rows


def read_ratings(path: str | Path, n: int) -> list[float]:
    """One human rating per line of ``path`` (``n`` lines); an empty line is an unrated segment (NaN).

    Anything else must be a finite number: ``nan``, ``inf`` and words are errors naming ``FILE:LINE``.
    """
    lines = read_lines(path)
    if len(lines) != n:
        raise InputError(f"{path} has {len(lines)} lines but there are {n} segments")
    out = []
    for i, ln in enumerate(lines, 1):
        if not ln.strip():
            out.append(math.nan)  # an empty line: this segment was not rated
            continue
        try:
            value = float(ln)
            if "_" in ln:
                raise ValueError  # float() would read "1_5" as 15
        except ValueError:
            raise InputError(f"{path}:{i}: expected a number (or an empty line), got {ln!r}") from None
        if not math.isfinite(value):
            raise InputError(f"{path}:{i}: expected a finite number (or an empty line for no rating), got {ln!r}")
        out.append(value)
    return out


def read_ids(path: str | Path, what: str = "segment id") -> list[str]:
    """One id per line of ``path``, each non-empty and unique (a repeated id would move judgments)."""
    ids = read_lines(path)
    first: dict[str, int] = {}
    for i, ident in enumerate(ids, 1):
        if not ident.strip():
            raise InputError(f"{path}:{i}: empty {what}")
        if ident in first:
            raise InputError(f"{path}:{i}: {what} {ident!r} repeated (first on line {first[ident]})")
        first[ident] = i
    return ids
