"""Reading text files strictly: UTF-8 (a leading BOM is dropped), LF or CRLF line ends, every line a
segment (empty lines too), and an error naming the file and line for anything else."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ngrameval.errors import InputError


def read_lines(path: str | Path) -> list[str]:
    """The lines of a UTF-8 text file, without line ends; a final newline ends the last line."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{p}: is a directory, expected a text file") from None
    except PermissionError:
        raise InputError(f"{p}: permission denied") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(f"{p}:{line}: not valid UTF-8 (byte {data[exc.start]:#04x})") from None
    del data  # large inputs: never hold the bytes, the text and the lines at once
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text:
        return []
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    elif lines[-1].endswith("\r"):  # a CR LF without its LF at the very end
        lines[-1] = lines[-1][:-1]
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
