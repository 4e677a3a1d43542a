"""Human judgments, read strictly from CSV, TSV or JSONL: one row per (system, segment, judge, criterion) score.

Here the row layouts: *long* (a criterion column and one score column) or *wide* (one column per criterion, e.g.
SummEval's coherence, consistency, fluency, relevance). Segment and judge columns are optional (system-level
judgments such as WMT's DA z-scores have neither). One column per system, E2E's numbered system/score pairs and
SummEval's original JSONL: :mod:`ngrameval.io.layouts`. Every error names the file and the line.

The text is read as :func:`ngrameval.io.read.read_text` reads it (UTF-8, LF or CRLF, no stray CR or BOM, may be
compressed). JSONL: one JSON object a line (split at LF only, so U+2028/U+2029/U+0085 inside strings are fine),
no NaN/Infinity, no repeated key. CSV/TSV: RFC 4180 quoting, strict; every row has as many fields as the
header; a record's line is the physical line it starts on (a quoted field may span lines). Scores are finite
numbers (JSON ``true``/``false`` are not numbers); an empty cell or JSON ``null`` is a missing judgment.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import warnings
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


LAYOUTS = ("auto", "long", "wide", "systems", "slots", "summeval")
REPEATED = ("error", "mean")


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


def _rows(
    path: str,
    records: Iterator[tuple[int, Mapping[str, Any]]],
    system: str,
    scores: Sequence[str],
    segment: str | None,
    judge: str | None,
    criterion: str | None,
    where: Mapping[str, str] | None,
) -> Iterator[Judgment]:
    """The long and wide layouts: one row per (system, segment, judge), a criterion column or one per criterion."""
    if criterion is not None and len(scores) != 1:
        raise InputError(f"{path}: with a criterion column give exactly one score column, got {list(scores)}")
    needed = [system, *scores, *(c for c in (segment, judge, criterion) if c), *(where or {})]
    for line, rec in records:
        missing_columns(path, line, rec, needed)
        if not kept(rec, where):
            continue
        for col in scores:
            value = cell_score(path, line, col, rec[col])
            if value is None:
                continue
            crit = str(rec[criterion]) if criterion else col
            yield Judgment(
                str(rec[system]),
                str(rec[segment]) if segment else None,
                str(rec[judge]) if judge else None,
                crit,
                value,
                line,
                str(path),
            )


@dataclass(frozen=True)
class ReadCounts:
    """What reading a judgment file did: ``scores`` numbers read (after ``where``), ``outside`` of them left out
    for lying outside the valid range, ``repeated`` keys (system, segment, judge, criterion) scored more than once
    and merged into their mean."""

    scores: int
    outside: int
    repeated: int


def read_judgments_counted(
    path: str,
    *,
    layout: str = "auto",
    system: str = "system",
    scores: Sequence[str] | None = None,
    segment: str | None = None,
    judge: str | None = None,
    criterion: str | None = None,
    where: Mapping[str, str] | None = None,
    annotators: str = "expert",
    valid: tuple[float, float] | None = None,
    repeated: str = "error",
) -> tuple[list[Judgment], ReadCounts]:
    """:func:`read_judgments` and what it did (see :class:`ReadCounts`), without warning."""
    from ngrameval.io import layouts

    if layout not in LAYOUTS:
        raise InputError(f"unknown judgment layout {layout!r}; valid: {', '.join(LAYOUTS)}")
    if repeated not in REPEATED:
        raise InputError(f"repeated judgments: expected one of {', '.join(REPEATED)}, got {repeated!r}")
    if valid is not None and not (math.isfinite(valid[0]) and math.isfinite(valid[1]) and valid[0] <= valid[1]):
        raise InputError(f"valid score range must be LOW,HIGH with finite LOW <= HIGH, got {valid}")
    records = _records(path)
    first = next(records, None)
    if first is not None:
        records = itertools.chain([first], records)
    kind = layouts.detect(layout, first[1] if first else {}, system, scores, criterion)
    if kind in ("long", "wide"):
        if kind == "long" and criterion is None:
            raise InputError(f"{path}: the long layout needs the criterion column (--criterion-column)")
        if kind == "wide" and criterion is not None:
            raise InputError(f"{path}: the wide layout has one column per criterion: give no criterion column")
        found = _rows(path, records, system, scores or ("score",), segment, judge, criterion, where)
    else:
        found = layouts.read(kind, path, records, system, scores, segment, judge, criterion, where, annotators)
    return layouts.finish(path, found, valid, repeated)


def read_judgments(
    path: str,
    *,
    system: str = "system",
    scores: Sequence[str] | None = None,
    segment: str | None = None,
    judge: str | None = None,
    criterion: str | None = None,
    where: Mapping[str, str] | None = None,
    layout: str = "auto",
    annotators: str = "expert",
    valid: tuple[float, float] | None = None,
    repeated: str = "error",
) -> list[Judgment]:
    """Judgments of ``path`` (``.csv``, ``.tsv`` or ``.jsonl``), keeping rows whose columns equal ``where``.

    ``layout`` (:mod:`ngrameval.io.layouts`): ``long`` (``criterion`` names a column holding the criterion, one
    entry in ``scores``), ``wide`` (every column of ``scores`` a criterion of its own; ``scores`` default
    ``["score"]``), ``systems`` (one column per
    system), ``slots`` (numbered system/score column pairs, E2E's ``sys1``, ``quality1`` ...), ``summeval``
    (SummEval's JSONL with ``annotators`` ``expert``, ``turker`` or ``all``), or ``auto`` (long with a criterion
    column, summeval or slots where the file can be nothing else, else wide). A score must be a finite number;
    an empty score cell is a missing judgment and is skipped; ``valid`` = (low, high) leaves out the scores outside
    it (with a warning counting them). The same (system, segment, judge, criterion) twice is an error, or with
    ``repeated="mean"`` one judgment, their mean (with a warning counting them).
    """
    out, counts = read_judgments_counted(
        path, layout=layout, system=system, scores=scores, segment=segment, judge=judge, criterion=criterion,
        where=where, annotators=annotators, valid=valid, repeated=repeated,
    )  # fmt: skip
    if counts.outside and valid is not None:
        warnings.warn(
            f"{path}: {counts.outside} of {counts.scores} scores outside {valid[0]:g}..{valid[1]:g} left out",
            UserWarning,
            stacklevel=2,
        )
    if counts.repeated:
        warnings.warn(
            f"{path}: {counts.repeated} (system, segment, judge, criterion) scored more than once: their mean kept",
            UserWarning,
            stacklevel=2,
        )
    return out
