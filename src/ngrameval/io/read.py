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
import gc
import lzma
import math
import sys
import zlib
from collections.abc import Callable, Generator, Iterator, Sequence
from pathlib import Path
from typing import Protocol

from ngrameval.errors import InputError

COMPRESSED = (".gz", ".bz2", ".xz")
BLOCK = 1 << 20  # bytes read (or given) at a time


class _Decompressor(Protocol):
    """What :class:`Expanded` needs of ``zlib.decompressobj``, ``bz2.BZ2Decompressor`` and ``lzma.LZMADecompressor``."""

    @property
    def eof(self) -> bool: ...

    @property
    def unused_data(self) -> bytes: ...

    def decompress(self, data: bytes, max_length: int = ..., /) -> bytes: ...


def _gzip_member() -> _Decompressor:
    return zlib.decompressobj(wbits=31)  # one gzip member, its CRC-32 and length checked


_MEMBER: dict[str, Callable[[], _Decompressor]] = {
    ".gz": _gzip_member,
    ".bz2": bz2.BZ2Decompressor,
    ".xz": lzma.LZMADecompressor,  # .xz (and .lzma) streams
}


class Expanded:
    """The decompressed bytes of a ``.gz``, ``.bz2`` or ``.xz`` file, ``read(n)`` giving at most ``n`` at a time,
    so memory is bounded by the block sizes whatever the compression ratio.

    Concatenated members (``cat a.gz b.gz``, ``pbzip2``'s streams) read as one text, as ``gzip -d``, ``bzip2 -d``
    and ``xz -d`` read them; zero bytes after a member are padding (gzip's and xz's); anything else after the last
    member is an error (``ValueError``), as is a file that ends inside a member (``EOFError``). Python's ``bz2``
    and ``lzma`` readers drop such trailing data silently; its ``gzip`` reader refuses it, and so do we for all."""

    def __init__(self, path: str | Path) -> None:
        suffix = Path(path).suffix.lower()
        self._member = _MEMBER[suffix]
        self._padding = suffix != ".bz2"  # bzip2 has no padding
        self._raw = open(path, "rb")  # noqa: SIM115 - closed by close()
        self._dec = self._member()
        self._input = b""  # compressed bytes not yet given to the decompressor
        self._fresh = False  # the decompressor is a member after the first and has not produced a byte yet

    def __enter__(self) -> Expanded:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._raw.close()

    def _next_member(self) -> bool:
        """Starts the member after the one just ended; False at the end of the file (padding skipped)."""
        rest = self._dec.unused_data  # all that followed the member (zlib's unconsumed_tail repeats part of it)
        while True:
            if self._padding:
                rest = rest.lstrip(b"\0")
            if rest:
                break
            rest = self._raw.read(BLOCK)
            if not rest:
                return False
        self._dec, self._input, self._fresh = self._member(), rest, True
        return True

    def read(self, n: int = BLOCK) -> bytes:
        """Up to ``n`` (>= 1) decompressed bytes; ``b""`` only at the end of the file."""
        while True:
            if self._dec.eof:
                if not self._next_member():
                    return b""
                continue
            try:
                out = self._dec.decompress(self._input, n)
            except (OSError, zlib.error, lzma.LZMAError) as exc:
                if self._fresh:
                    raise ValueError("data after the end of the compressed stream (trailing garbage)") from None
                raise ValueError(f"corrupt compressed data ({exc})") from None
            self._input = getattr(self._dec, "unconsumed_tail", b"")  # zlib hands back what it did not read
            if out:
                self._fresh = False
                return out
            if self._dec.eof:
                continue
            if not self._input and getattr(self._dec, "needs_input", True):
                self._input = self._raw.read(BLOCK)
                if not self._input:
                    if self._fresh:
                        raise ValueError("data after the end of the compressed stream (trailing garbage)")
                    raise EOFError("the compressed data ends early (a truncated file?)")


def expanded_size(path: str | Path, limit: int) -> int:
    """The size of ``path`` once decompressed (its size when it is not compressed), counted block by block and
    no further than past ``limit``: a number above ``limit`` means "more than ``limit``". Raises what reading
    raises (see :func:`read_errors`)."""
    p = Path(path)
    if p.suffix.lower() not in COMPRESSED:
        return p.stat().st_size
    total = 0
    with Expanded(p) as f:
        while total <= limit and (block := f.read(BLOCK)):
            total += len(block)
    return total


def _decompressed(p: Path) -> bytes:
    with Expanded(p) as f:
        return b"".join(iter(lambda: f.read(BLOCK), b""))


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
        return _decompressed(p) if suffix in COMPRESSED else p.read_bytes()


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


class _Blocks(Protocol):
    """A binary file or an :class:`Expanded` one."""

    def read(self, n: int, /) -> bytes: ...

    def close(self) -> None: ...


def _open_binary(p: Path) -> _Blocks:
    """``p`` opened for reading bytes, decompressed as its suffix says (``-``: standard input)."""
    if str(p) == STDIN:
        return sys.stdin.buffer
    if p.suffix.lower() in COMPRESSED:
        return Expanded(p)
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
        self._file: _Blocks | None = None
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
    p = Path(path)
    if str(p) != STDIN and p.suffix.lower() not in COMPRESSED:
        lines = _plain_lines(p)
        if lines is not None:
            return lines
    text = read_text(path)
    if not text:
        return []
    lines = text.split("\n")  # never splitlines(): it also splits at U+2028, U+2029, U+0085, VT, FF, ...
    if lines[-1] == "":
        lines.pop()
    return lines


class NotPlain(Exception):
    """A file :func:`line_blocks` does not read: it breaks a rule of :func:`read_text` (read it whole for the
    error naming the line) or is standard input or compressed."""


def _plain_lines(p: Path) -> list[str] | None:
    """The lines of the uncompressed file ``p`` as :func:`read_lines` gives them (:func:`line_blocks` joined); None
    when the file breaks a rule: the whole-file reader then names the first fault as ever."""
    lines: list[str] = []
    try:
        for block in line_blocks(p):
            lines += block
    except NotPlain:
        return None
    return lines


def line_blocks(path: str | Path) -> Generator[list[str], None, None]:
    """The lines of an uncompressed file a block at a time (the lines of :func:`read_lines`, in order), read into one
    reused buffer and decoded and split a block of whole lines at a time, so memory holds the lines and one block,
    never the file's bytes and its text beside them: about half the page faults, the most of reading a large file.
    Raises :class:`NotPlain` for standard input, a compressed file or a file that breaks a rule (the lines given
    before are then not the file's); reading errors as :class:`InputError` naming the file."""
    p = Path(path)
    if str(p) == STDIN or p.suffix.lower() in COMPRESSED:
        raise NotPlain(str(p))
    buf = bytearray(BLOCK)
    view = memoryview(buf)
    have = 0  # bytes in buf not yet split: the start of a line
    at_start = True
    with _read_errors(p):
        fh = open(p, "rb", buffering=0)  # noqa: SIM115 - closed below, also when the caller stops early
    try:
        while True:
            if have == len(buf):  # one line longer than the buffer: room for more of it
                view.release()
                buf.extend(bytes(len(buf)))
                view = memoryview(buf)
            with _read_errors(p):
                got = fh.readinto(view[have:])
            end = have + got
            cut = buf.rfind(b"\n", 0, end) + 1 if got else end  # at the end of the file: the last line too
            if cut or not got:
                try:
                    text = _normalized(p, str(view[:cut], "utf-8"), 1, at_start, at_end=not got)
                except (UnicodeDecodeError, InputError):
                    raise NotPlain(str(p)) from None
                lines = text.split("\n")
                if lines[-1] == "":
                    lines.pop()  # after the block's last line end (or the file's)
                if lines:
                    yield lines
                view[: end - cut] = view[cut:end]
                have, at_start = end - cut, False
            else:
                have = end
            if not got:
                return
    finally:
        fh.close()


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


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a block builds many small containers that hold no cycle (a list of
    strings per segment): otherwise every 700 new lists start a collection that walks the young ones, and the
    older generations are walked again and again as the rows pile up (~40 % of building 200,000 rows)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def ref_rows(
    paths: Sequence[str | Path], streams: Sequence[Sequence[str]], tsv: bool, empty_is_missing: bool, start: int = 0
) -> list[list[str]]:
    """Segment-major references of the aligned lines ``streams[k]`` of ``paths[k]`` (segments ``start + 1``..,
    for error messages), as :func:`read_refs` makes them."""
    with gc_paused():
        return _ref_rows(paths, streams, tsv, empty_is_missing, start)


def _ref_rows(
    paths: Sequence[str | Path], streams: Sequence[Sequence[str]], tsv: bool, empty_is_missing: bool, start: int
) -> list[list[str]]:
    if tsv:
        rows: list[list[str]] = []
        for lines in streams:
            fields = [ln.split("\t") for ln in lines]
            rows = [a + b for a, b in zip(rows, fields)] if rows else fields
    elif len(streams) == 1:
        rows = [[line] for line in streams[0]]
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
