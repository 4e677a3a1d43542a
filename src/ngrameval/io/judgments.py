"""Human judgments, read strictly from CSV, TSV or JSONL: one row per (system, segment, judge, criterion) score.

Two layouts: *long* (a criterion column and one score column) or *wide* (one column per criterion, e.g.
SummEval's coherence, consistency, fluency, relevance). Segment and judge columns are optional (system-level
judgments such as WMT's DA z-scores have neither). Every error names the file and the line.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ngrameval.errors import InputError


@dataclass(frozen=True)
class Judgment:
    """One human score; ``segment``/``judge`` are ``None`` when the file has no such column."""

    system: str
    segment: str | None
    judge: str | None
    criterion: str
    score: float
    line: int


def _records(path: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except UnicodeDecodeError as exc:
        line = p.read_bytes()[: exc.start].count(b"\n") + 1
        raise InputError(f"{path}:{line}: not valid UTF-8") from None
    if p.suffix.lower() in (".jsonl", ".json", ".ndjson"):
        for i, raw in enumerate(text.splitlines(), 1):
            if not raw.strip():
                continue
            try:
                rec = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{i}: not a JSON object ({exc.msg})") from None
            if not isinstance(rec, dict):
                raise InputError(f"{path}:{i}: expected a JSON object, got {type(rec).__name__}")
            yield i, rec
        return
    delimiter = "\t" if p.suffix.lower() == ".tsv" else ","
    reader = csv.DictReader(text.splitlines(), delimiter=delimiter)
    for i, rec in enumerate(reader, 2):
        yield i, rec


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
            try:
                value = float(raw)
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
            )
            key = (j.system, j.segment, j.judge, j.criterion)
            if key in seen:
                raise InputError(f"{path}:{line}: duplicate judgment (same as line {seen[key]}): {key}")
            seen[key] = line
            out.append(j)
    if not out:
        raise InputError(f"{path}: no judgment read (check --where and the column names)")
    return out
