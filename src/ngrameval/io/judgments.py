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

import itertools
import math
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ngrameval.errors import InputError
from ngrameval.io import layouts
from ngrameval.io.choices import LAYOUTS, REPEATED
from ngrameval.io.records import Judgment, ReadCounts, cell_score, kept, missing_columns, records

__all__ = ["LAYOUTS", "REPEATED", "Judgment", "ReadCounts", "read_judgments", "read_judgments_counted"]


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
    if layout not in LAYOUTS:
        raise InputError(f"unknown judgment layout {layout!r}; valid: {', '.join(LAYOUTS)}")
    if repeated not in REPEATED:
        raise InputError(f"repeated judgments: expected one of {', '.join(REPEATED)}, got {repeated!r}")
    if valid is not None and not (math.isfinite(valid[0]) and math.isfinite(valid[1]) and valid[0] <= valid[1]):
        raise InputError(f"valid score range must be LOW,HIGH with finite LOW <= HIGH, got {valid}")
    rows = records(path)
    first = next(rows, None)
    if first is not None:
        rows = itertools.chain([first], rows)
    kind = layouts.detect(layout, first[1] if first else {}, system, scores, criterion)
    if kind in ("long", "wide"):
        if kind == "long" and criterion is None:
            raise InputError(f"{path}: the long layout needs the criterion column (--criterion-column)")
        if kind == "wide" and criterion is not None:
            raise InputError(f"{path}: the wide layout has one column per criterion: give no criterion column")
        found = _rows(path, rows, system, scores or ("score",), segment, judge, criterion, where)
    else:
        found = layouts.read(kind, path, rows, system, scores, segment, judge, criterion, where, annotators)
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
