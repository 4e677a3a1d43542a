"""Judgment files in the layouts people have, read as strictly as :mod:`ngrameval.io.judgments` reads its rows.

* ``systems``: one column per system, a row per segment (and judge); every column but the segment, judge and
  ``where`` columns is a system unless the score columns are named; the criterion is the file's name without
  its suffixes (``fluency.csv`` -> ``fluency``).
* ``slots``: each row rates K outputs side by side in numbered column pairs, ``<system>1`` .. ``<system>K``
  naming the systems and ``<score>1`` .. ``<score>K`` holding their scores (E2E's human ratings: ``sys1`` ..
  ``sys5`` with ``quality1`` .. ``quality5``); K is read from the header, whose numbers must run 1 .. K for the
  system prefix and every score prefix; the criterion is the score prefix.
* ``summeval``: SummEval's JSONL (``model_annotations.aligned[.paired].jsonl``, Fabbri et al. 2021): one object
  a line with ``model_id`` (the system), ``id`` (the document: the segment) and ``expert_annotations`` (3) /
  ``turker_annotations`` (5), lists of ``{coherence, consistency, fluency, relevance}``; the judge is the
  annotation's position (``expert1`` .. ``expert3``, ``turker1`` .. ``turker5``: the files name no annotator,
  so position k is not one person across documents).

:func:`finish` applies what every layout shares: the valid range, and one judgment per (system, segment, judge,
criterion) -- a repeat is an error, or merged into the mean of its scores when asked.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ngrameval.errors import InputError
from ngrameval.io.read import COMPRESSED
from ngrameval.io.records import Judgment, ReadCounts, cell_score, kept, missing_columns

Records = Iterator[tuple[int, Mapping[str, Any]]]
SUMMEVAL_CRITERIA = ("coherence", "consistency", "fluency", "relevance")
ANNOTATORS = {"expert": ("expert",), "turker": ("turker",), "all": ("expert", "turker")}


def detect(
    layout: str, first: Mapping[str, Any], system: str, scores: Sequence[str] | None, criterion: str | None
) -> str:
    """The layout to read: ``layout`` unless ``auto``; then ``long`` with a criterion column, ``summeval`` for a
    record with ``model_id`` and an annotation list (and no system column), ``slots`` for a header without the
    system column but with ``<system>1`` and ``<score>1`` for every score column, else ``wide``. ``systems`` is
    never guessed (any table of numbers would pass for one)."""
    if layout != "auto":
        return layout
    if criterion is not None:
        return "long"
    if system not in first and "model_id" in first and any(f"{a}_annotations" in first for a in ANNOTATORS["all"]):
        return "summeval"
    prefixes = scores or ("score",)
    if system not in first and f"{system}1" in first and all(f"{p}1" in first for p in prefixes):
        return "slots"
    return "wide"


def read(
    kind: str,
    path: str,
    records: Records,
    system: str,
    scores: Sequence[str] | None,
    segment: str | None,
    judge: str | None,
    criterion: str | None,
    where: Mapping[str, str] | None,
    annotators: str,
) -> Iterator[Judgment]:
    """The judgments of one of this module's layouts (``kind``), in file order."""
    if criterion is not None:
        raise InputError(f"{path}: the {kind} layout has no criterion column (got {criterion!r})")
    if kind == "systems":
        return _systems(path, records, scores, segment, judge, where)
    if kind == "slots":
        return _slots(path, records, system, scores or ("score",), segment, judge, where)
    if judge is not None:
        raise InputError(f"{path}: the summeval layout names its judges (expert1.., turker1..): give no judge column")
    if annotators not in ANNOTATORS:
        raise InputError(f"annotators: expected one of {', '.join(ANNOTATORS)}, got {annotators!r}")
    sys_col = "model_id" if system == "system" else system
    return _summeval(path, records, sys_col, scores, segment or "id", ANNOTATORS[annotators], where)


def criterion_of(path: str) -> str:
    """A file's name without its format and compression suffixes: the criterion of a ``systems`` table."""
    p = Path(path)
    if p.suffix.lower() in COMPRESSED:
        p = p.with_suffix("")
    return p.stem or "score"


def _systems(
    path: str,
    records: Records,
    scores: Sequence[str] | None,
    segment: str | None,
    judge: str | None,
    where: Mapping[str, str] | None,
) -> Iterator[Judgment]:
    keys = [c for c in (segment, judge) if c]
    crit = criterion_of(path)
    columns: list[str] | None = list(scores) if scores else None
    for line, rec in records:
        if columns is None:  # every other column of the header is a system
            columns = [c for c in rec if c not in keys and c not in (where or {})]
            if not columns:
                raise InputError(f"{path}:{line}: no system column (columns: {', '.join(rec)})")
        missing_columns(path, line, rec, [*keys, *columns, *(where or {})])
        if not kept(rec, where):
            continue
        for col in columns:
            value = cell_score(path, line, col, rec[col])
            if value is not None:
                yield Judgment(col, _cell(rec, segment), _cell(rec, judge), crit, value, line, path)


def _cell(rec: Mapping[str, Any], column: str | None) -> str | None:
    return str(rec[column]) if column else None


def _numbered(rec: Iterable[str], prefix: str) -> list[int]:
    pattern = re.compile(re.escape(prefix) + r"([1-9][0-9]*)")
    return sorted(int(m[1]) for m in map(pattern.fullmatch, rec) if m)


def _slot_count(path: str, line: int, rec: Mapping[str, Any], system: str, prefixes: Sequence[str]) -> int:
    """K, the number of slots: the header's ``<system>1`` .. ``<system>K``, every score prefix numbered alike."""
    k = len(_numbered(rec, system))
    if k == 0:
        raise InputError(f"{path}:{line}: no column {system + '1'!r} (slots layout: {system}1, {system}2 ... name "
                         f"the systems); columns: {', '.join(rec)}")  # fmt: skip
    for prefix in (system, *prefixes):
        found = _numbered(rec, prefix)
        if found != list(range(1, k + 1)):
            shown = ", ".join(f"{prefix}{n}" for n in found) or "none"
            raise InputError(f"{path}:{line}: expected columns {prefix}1 .. {prefix}{k} (as {system}1 .. {system}{k}), "
                             f"got {shown}")  # fmt: skip
    return k


def _slots(
    path: str,
    records: Records,
    system: str,
    prefixes: Sequence[str],
    segment: str | None,
    judge: str | None,
    where: Mapping[str, str] | None,
) -> Iterator[Judgment]:
    k = 0
    needed = [c for c in (segment, judge) if c] + list(where or {})
    for line, rec in records:
        if not k:
            k = _slot_count(path, line, rec, system, prefixes)
            needed += [f"{p}{i}" for i in range(1, k + 1) for p in (system, *prefixes)]
        missing_columns(path, line, rec, needed)
        if not kept(rec, where):
            continue
        for i in range(1, k + 1):
            name = rec[f"{system}{i}"]
            for prefix in prefixes:
                value = cell_score(path, line, f"{prefix}{i}", rec[f"{prefix}{i}"])
                if value is None:
                    continue
                if name is None or not str(name).strip():
                    raise InputError(f"{path}:{line}: column {prefix}{i} has a score but {system}{i} names no system")
                yield Judgment(str(name), _cell(rec, segment), _cell(rec, judge), prefix, value, line, path)


def _summeval(
    path: str,
    records: Records,
    system: str,
    criteria: Sequence[str] | None,
    segment: str,
    kinds: Sequence[str],
    where: Mapping[str, str] | None,
) -> Iterator[Judgment]:
    wanted = list(criteria) if criteria else list(SUMMEVAL_CRITERIA)
    lists = [f"{kind}_annotations" for kind in kinds]
    for line, rec in records:
        missing_columns(path, line, rec, [system, segment, *lists, *(where or {})])
        if not kept(rec, where):
            continue
        for kind, key in zip(kinds, lists):
            annotations = rec[key]
            if not isinstance(annotations, list):
                raise InputError(
                    f"{path}:{line}: {key}: expected a list of annotations, got {type(annotations).__name__}"
                )
            for i, ann in enumerate(annotations, 1):
                if not isinstance(ann, dict):
                    raise InputError(
                        f"{path}:{line}: {key}[{i}]: expected an object of scores, got {type(ann).__name__}"
                    )
                absent = [c for c in wanted if c not in ann]
                if absent:
                    raise InputError(
                        f"{path}:{line}: {key}[{i}]: no {', '.join(map(repr, absent))}; has {', '.join(ann)}"
                    )
                for c in wanted:
                    value = cell_score(path, line, f"{key}[{i}].{c}", ann[c])
                    if value is not None:
                        yield Judgment(str(rec[system]), str(rec[segment]), f"{kind}{i}", c, value, line, path)


def finish(
    path: str, judgments: Iterable[Judgment], valid: tuple[float, float] | None, repeated: str
) -> tuple[list[Judgment], ReadCounts]:
    """Every judgment inside ``valid`` (low, high; inclusive), one per (system, segment, judge, criterion), in the
    order of first appearance: a repeat is an InputError naming both lines (``repeated="error"``) or merged, the
    judgment of its first line with the mean of the scores in file order (``repeated="mean"``)."""
    first: dict[tuple[str, str | None, str | None, str], Judgment] = {}
    scores: dict[tuple[str, str | None, str | None, str], list[float]] = {}
    read = outside = 0
    for j in judgments:
        read += 1
        if valid is not None and not valid[0] <= j.score <= valid[1]:
            outside += 1
            continue
        key = (j.system, j.segment, j.judge, j.criterion)
        if key in first:
            if repeated == "error":
                raise InputError(f"{j.where}: duplicate judgment (same as line {first[key].line}): {key}")
            scores[key].append(j.score)
        else:
            first[key] = j
            scores[key] = [j.score]
    if not first:
        why = f"all {outside} scores lie outside {valid[0]:g}..{valid[1]:g}" if outside and valid else None
        raise InputError(f"{path}: no judgment read ({why or 'check --where and the column names'})")
    out = [j if len(v) == 1 else replace(j, score=sum(v) / len(v)) for j, v in zip(first.values(), scores.values())]
    return out, ReadCounts(read, outside, sum(len(v) > 1 for v in scores.values()))
