"""Reading text files strictly, with an error naming the file and line for anything that is not plain text.

Accepted: UTF-8 (a byte order mark at the very start is dropped), LF or CRLF line ends (mixed too), optionally
compressed (``.gz``, ``.bz2``, ``.xz``). Every line is a segment, empty lines too; a final line end is optional.
Refused, never reinterpreted: other encodings, a bare CR (old Mac line ends, CR CR LF, a CR inside a line) and a
byte order mark anywhere but at the start (concatenated files). Lines are split at LF only: U+2028, U+2029 and
U+0085 stay inside their line.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import lzma
import math
import sys
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO

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


@contextlib.contextmanager
def _read_errors(p: Path) -> Iterator[None]:
    """Every failure to read ``p`` (or to decompress it) as one :class:`InputError` naming it."""
    try:
        yield
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


def _read_bytes(p: Path) -> bytes:
    suffix = p.suffix.lower()
    with _read_errors(p):
        if str(p) == STDIN:
            return sys.stdin.buffer.read()
        return _decompressed(p, suffix) if suffix in COMPRESSED else p.read_bytes()


def _decoded(p: Path, data: bytes, first_line: int = 1) -> str:
    """``data`` (lines ``first_line``.. of ``p``) as UTF-8, or an InputError naming the line of the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = first_line + data[: exc.start].count(b"\n")
        raise InputError(f"{p}:{line}: not valid UTF-8 (byte {data[exc.start]:#04x})") from None


def _normalized(p: Path, text: str, first_line: int = 1, at_start: bool = True, at_end: bool = True) -> str:
    """``text`` (lines ``first_line``.. of ``p``; ``at_start``/``at_end``: it begins/ends the file) with a leading
    BOM dropped and CRLF as LF, or an InputError naming the line of a bare CR or a misplaced BOM."""
    if at_start and text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        if at_end and text.endswith("\r"):  # a CR LF without its LF at the very end
            text = text[:-1] + "\n"
        cr = text.find("\r")
        if cr >= 0:
            line = first_line + text.count("\n", 0, cr)
            if text.startswith("\n", cr + 1):
                hint = "CR CR LF line ends; remove the stray CRs, e.g. sed -i 's/\\r*$//' FILE"
            else:
                hint = "old Mac line ends or a CR inside a line; convert, e.g. tr '\\r' '\\n' < FILE > FILE.lf"
            raise InputError(f"{p}:{line}: bare CR (carriage return not followed by a line feed): {hint}")
    bom = text.find("\ufeff")
    if bom >= 0:
        line = first_line + text.count("\n", 0, bom)
        where = "a second BOM at the start" if bom == 0 and at_start else "BOM (U+FEFF) inside the text"
        raise InputError(
            f"{p}:{line}: {where}, only one at the very start of a file is allowed (concatenated files?);"
            " remove it, e.g. sed -i 's/\\xef\\xbb\\xbf//g' FILE"
        )
    return text


def read_text(path: str | Path) -> str:
    """The text of a UTF-8 file (``-``: standard input) with LF line ends (CRLF converted), without a leading BOM.

    Raises :class:`InputError` with ``FILE:LINE`` for invalid UTF-8, a bare CR (a CR at the very end of the
    file is taken as its last line end) and a U+FEFF after the start.
    """
    p = Path(path)
    data = _read_bytes(p)
    text = _decoded(p, data)
    del data  # large inputs: never hold the bytes, the text and the lines at once
    return _normalized(p, text)


def _open_binary(p: Path) -> IO[bytes]:
    """``p`` opened for reading bytes, decompressed as its suffix says (``-``: standard input)."""
    if str(p) == STDIN:
        return sys.stdin.buffer
    suffix = p.suffix.lower()
    if suffix == ".gz":
        return gzip.GzipFile(p, "rb")  # type: ignore[return-value]  # typeshed: GzipFile is not an IO[bytes]
    if suffix == ".bz2":
        return bz2.open(p, "rb")
    if suffix == ".xz":
        return lzma.open(p, "rb")
    return open(p, "rb")


class LineStream:
    """The lines of a text file read block by block, checked as :func:`read_text` checks the whole file (the
    same errors, naming the same ``FILE:LINE``): ``take(n)`` gives the next ``n`` lines or fewer at the end, so
    memory holds one block of bytes (``block_size``) and the lines asked for. Use it as a context manager."""

    def __init__(self, path: str | Path, block_size: int = 1 << 20) -> None:
        self.path = Path(path)
        self.block_size = block_size
        self.lines_read = 0  # lines given by take()
        self._buffered: list[str] = []
        self._rest = b""
        self._eof = False
        self._file: IO[bytes] | None = None
        with _read_errors(self.path):
            self._file = _open_binary(self.path)

    def __enter__(self) -> LineStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._file is not None and self._file is not sys.stdin.buffer:
            self._file.close()
        self._file = None

    def _fill(self) -> bool:
        """Read blocks until at least one more line is buffered; False at the end of the file."""
        assert self._file is not None
        while not self._eof:
            with _read_errors(self.path):
                block = self._file.read(self.block_size)
            first = self.lines_read + len(self._buffered) + 1
            at_start = first == 1 and not self._buffered
            if not block:
                self._eof = True
                data, self._rest = self._rest, b""
                if not data:
                    return False
                lines = _normalized(self.path, _decoded(self.path, data, first), first, at_start).split("\n")
                if lines[-1] == "":
                    lines.pop()
                self._buffered += lines
                return bool(lines)
            data = self._rest + block
            cut = data.rfind(b"\n") + 1
            if not cut:
                self._rest = data
                continue
            data, self._rest = data[:cut], data[cut:]
            text = _normalized(self.path, _decoded(self.path, data, first), first, at_start, at_end=False)
            self._buffered += text.split("\n")[:-1]
            return True
        return False

    def take(self, n: int) -> list[str]:
        """The next ``n`` lines (fewer only at the end of the file)."""
        while len(self._buffered) < n and self._fill():
            pass
        out, self._buffered = self._buffered[:n], self._buffered[n:]
        self.lines_read += len(out)
        return out

    def count_rest(self) -> int:
        """How many lines the file has in all (the lines not taken yet are counted, not checked)."""
        assert self._file is not None
        n = self.lines_read + len(self._buffered)
        if self._eof:
            return n
        last = self._rest
        with _read_errors(self.path):
            while block := self._file.read(self.block_size):
                n += block.count(b"\n")
                last = block
        self._eof = True
        return n + (1 if last and not last.endswith(b"\n") else 0)


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
    message = refs_length_error(paths, [len(s) for s in streams], tsv)
    if message:
        raise InputError(message)
    return ref_rows(paths, streams, tsv, empty_is_missing)


def refs_length_error(paths: Sequence[str | Path], counts: Sequence[int], tsv: bool) -> str | None:
    """The error for reference files whose line counts differ (``counts[k]``: lines of ``paths[k]``), or None."""
    for p, n in zip(paths[1:], counts[1:]):
        if n != counts[0]:
            if tsv:
                return f"{p} has {n} lines but {paths[0]} has {counts[0]}"
            return f"reference files differ in length: {paths[0]} has {counts[0]} lines, {p} has {n}"
    return None


def ref_rows(
    paths: Sequence[str | Path], streams: Sequence[Sequence[str]], tsv: bool, empty_is_missing: bool, start: int = 0
) -> list[list[str]]:
    """Segment-major references of the aligned lines ``streams[k]`` of ``paths[k]`` (segments ``start + 1``..,
    for error messages), as :func:`read_refs` makes them."""
    if tsv:
        rows: list[list[str]] = []
        for lines in streams:
            fields = [ln.split("\t") for ln in lines]
            rows = [a + b for a, b in zip(rows, fields)] if rows else fields
    else:
        rows = [list(seg) for seg in zip(*streams)]
    if empty_is_missing:
        rows = [[r for r in row if r.strip()] for row in rows]
        for i, row in enumerate(rows, start + 1):
            if not row:
                raise InputError(f"segment {i} (line {i}) has only empty references in {', '.join(map(str, paths))}")
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


def read_errors(path: str | Path) -> contextlib.AbstractContextManager[None]:
    """Every failure to read ``path`` as one :class:`InputError` naming it (for readers of byte ranges)."""
    return _read_errors(Path(path))


def decoded_lines(path: str | Path, data: bytes, first_line: int, at_start: bool, at_end: bool) -> list[str]:
    """The whole lines in ``data`` (lines ``first_line``.. of ``path``; ``at_start``/``at_end``: it begins/ends the
    file), checked as :func:`read_text` checks a file, with the file's own line numbers in errors."""
    p = Path(path)
    lines = _normalized(p, _decoded(p, data, first_line), first_line, at_start, at_end).split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines
