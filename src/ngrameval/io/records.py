"""The records of judgment and score files, shared by every layout (:mod:`ngrameval.io.judgments`,
:mod:`ngrameval.io.layouts`, :mod:`ngrameval.io.scores`): a file's rows as (line, mapping) pairs, one checked
score cell, the :class:`Judgment` a row yields and what reading counted. The rules of the text are
:mod:`ngrameval.io.judgments`'s (strict CSV/TSV, JSONL without NaN or repeated keys; every error names the file
and the line).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ngrameval.errors import InputError
from ngrameval.io.read import COMPRESSED, read_text


@dataclass(frozen=True)
class Judgment:
    """One human score; ``segment``/``judge`` are ``None`` when the file has no such column; ``path`` and
    ``line`` say where it was read (``where`` is ``path:line`` for error messages)."""

    system: str
    segment: str | None
    judge: str | None
    criterion: str
    score: float
    line: int
    path: str = ""

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}" if self.path else f"line {self.line}"


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not valid JSON")


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"key {key!r} repeated")
        out[key] = value
    return out


def _jsonl(path: str, text: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    for i, raw in enumerate(text.split("\n"), 1):  # not splitlines(): U+2028 etc. may sit inside strings
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw, parse_constant=_no_constant, object_pairs_hook=_object)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{i}: not a JSON object ({exc.msg}, column {exc.colno})") from None
        except ValueError as exc:
            raise InputError(f"{path}:{i}: not a JSON object ({exc})") from None
        if not isinstance(rec, dict):
            raise InputError(f"{path}:{i}: expected a JSON object, got {type(rec).__name__}")
        yield i, rec


def _delimited(path: str, text: str, delimiter: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    end = 0  # physical line of the end of the previous record
    header: list[str] | None = None
    try:
        for row in reader:
            start, end = end + 1, reader.line_num
            if not row:
                continue  # a blank line
            if header is None:
                header = row
                repeated = sorted({c for c in row if row.count(c) > 1})
                if repeated:
                    raise InputError(
                        f"{path}:{start}: column(s) {', '.join(map(repr, repeated))} repeated in the header"
                    )
                continue
            if len(row) != len(header):
                raise InputError(
                    f"{path}:{start}: expected {len(header)} fields (as in the header), got {len(row)}"
                    + ("" if start == end else f" (a record of lines {start}-{end}: an unclosed quote?)")
                )
            yield start, dict(zip(header, row))
    except csv.Error as exc:
        raise InputError(
            f"{path}:{reader.line_num}: malformed {'TSV' if delimiter == chr(9) else 'CSV'} ({exc})"
        ) from None


def records(path: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """The (line, record) pairs of a CSV, TSV or JSONL file (by its extension, under a compression suffix): each
    record a mapping of column to cell, its line the physical line it starts on; every error names the file and
    the line."""
    text = read_text(path)
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] in COMPRESSED:
        suffixes.pop()
    kind = suffixes[-1] if suffixes else ""
    if kind in (".jsonl", ".json", ".ndjson"):
        return _jsonl(path, text)
    return _delimited(path, text, "\t" if kind == ".tsv" else ",")


def cell_score(path: str, line: int, col: str, raw: object) -> float | None:
    """The number in one score cell: ``None`` for an empty cell or JSON ``null`` (a missing judgment); an
    InputError naming the file, line and column for anything but a finite number (JSON booleans included)."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    if isinstance(raw, bool):
        raise InputError(f"{path}:{line}: column {col!r}: expected a number, got {json.dumps(raw)}")
    try:
        if isinstance(raw, str) and "_" in raw:
            raise ValueError  # float() would read "1_5" as 15
        value = float(raw)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputError(f"{path}:{line}: column {col!r}: expected a number, got {raw!r}") from None
    if not math.isfinite(value):
        raise InputError(f"{path}:{line}: column {col!r}: expected a finite number, got {raw!r}")
    return value


def missing_columns(path: str, line: int, rec: Mapping[str, Any], needed: Sequence[str]) -> None:
    """InputError naming the columns of ``needed`` that ``rec`` lacks (and the columns it has)."""
    missing = [c for c in needed if c not in rec]
    if missing:
        raise InputError(f"{path}:{line}: no column {', '.join(map(repr, missing))}; columns: {', '.join(rec)}")


def kept(rec: Mapping[str, Any], where: Mapping[str, str] | None) -> bool:
    """Whether a row's columns equal every value of ``where`` (``--where``)."""
    return not where or all(str(rec[k]) == v for k, v in where.items())


@dataclass(frozen=True)
class ReadCounts:
    """What reading a judgment file did: ``scores`` numbers read (after ``where``), ``outside`` of them left out
    for lying outside the valid range, ``repeated`` keys (system, segment, judge, criterion) scored more than once
    and merged into their mean."""

    scores: int
    outside: int
    repeated: int
