"""Human judgments, read strictly from CSV, TSV or JSONL: one row per (system, segment, judge, criterion) score.

Two layouts: *long* (a criterion column and one score column) or *wide* (one column per criterion, e.g.
SummEval's coherence, consistency, fluency, relevance). Segment and judge columns are optional (system-level
judgments such as WMT's DA z-scores have neither). Every error names the file and the line.

The text is read as :func:`ngrameval.io.read.read_text` reads it (UTF-8, LF or CRLF, no stray CR or BOM, may be
compressed). JSONL: one JSON object a line (split at LF only, so U+2028/U+2029/U+0085 inside strings are fine),
no NaN/Infinity, no repeated key. CSV/TSV: RFC 4180 quoting, strict; every row has as many fields as the
header; a record's line is the physical line it starts on (a quoted field may span lines). Scores are finite
numbers (JSON ``true``/``false`` are not numbers); an empty cell or JSON ``null`` is a missing judgment.
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


def _records(path: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    text = read_text(path)
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] in COMPRESSED:
        suffixes.pop()
    kind = suffixes[-1] if suffixes else ""
    if kind in (".jsonl", ".json", ".ndjson"):
        return _jsonl(path, text)
    return _delimited(path, text, "\t" if kind == ".tsv" else ",")


def read_judgments(
    path: str,
    *,
    system: str = "system",
    scores: Sequence[str] = ("score",),
    segment: str | None = None,
    judge: str | None = None,
    criterion: str | None = None,
    where: Mapping[str, str] | None = None,
) -> list[Judgment]:
    """Judgments of ``path`` (``.csv``, ``.tsv`` or ``.jsonl``), keeping rows whose columns equal ``where``.

    ``criterion`` names a column holding the criterion (long layout, one entry in ``scores``); without it
    every column of ``scores`` is a criterion of its own (wide layout). A score must be a finite number;
    an empty score cell is a missing judgment and is skipped. The same (system, segment, judge,
    criterion) twice is an error.
    """
    if criterion is not None and len(scores) != 1:
        raise InputError(f"{path}: with a criterion column give exactly one score column, got {list(scores)}")
    needed = [system, *scores, *(c for c in (segment, judge, criterion) if c), *(where or {})]
    out: list[Judgment] = []
    seen: dict[tuple[str, str | None, str | None, str], int] = {}
    for line, rec in _records(path):
        missing = [c for c in needed if c not in rec]
        if missing:
            raise InputError(f"{path}:{line}: no column {', '.join(map(repr, missing))}; columns: {', '.join(rec)}")
        if where and any(str(rec[k]) != v for k, v in where.items()):
            continue
        for col in scores:
            raw = rec[col]
            if raw is None or (isinstance(raw, str) and not raw.strip()):
                continue
            if isinstance(raw, bool):
                raise InputError(f"{path}:{line}: column {col!r}: expected a number, got {json.dumps(raw)}")
            try:
                value = float(raw)
                if isinstance(raw, str) and "_" in raw:
                    raise ValueError  # float() would read "1_5" as 15
            except (TypeError, ValueError):
                raise InputError(f"{path}:{line}: column {col!r}: expected a number, got {raw!r}") from None
            if not math.isfinite(value):
                raise InputError(f"{path}:{line}: column {col!r}: expected a finite number, got {raw!r}")
            crit = str(rec[criterion]) if criterion else col
            j = Judgment(
                str(rec[system]),
                str(rec[segment]) if segment else None,
                str(rec[judge]) if judge else None,
                crit,
                value,
                line,
                str(path),
            )
            key = (j.system, j.segment, j.judge, j.criterion)
            if key in seen:
                raise InputError(f"{path}:{line}: duplicate judgment (same as line {seen[key]}): {key}")
            seen[key] = line
            out.append(j)
    if not out:
        raise InputError(f"{path}: no judgment read (check --where and the column names)")
    return out
