"""Any metric's scores (COMET, BLEURT, another toolkit's BLEU, a human column) to correlate beside ngrameval's own.

A scores file has the shapes of a judgment file (:mod:`ngrameval.io.judgments` reads it, with its strictness:
CSV, TSV or JSONL, finite numbers, errors naming the file and the line): a ``system`` column, an optional
segment column (segment-level scores) and either one column per metric (*wide*) or a metric column and a
``score`` column (*long*). A file is either system level (no segment column) or segment level. Each metric's
signature is ``external:<file>`` (``external:api`` for scores given in Python).

As rows (:class:`~ngrameval.ngrams.stats.MetricRows`): segment scores are rows ``(score, 1)``, so a system's
score is the mean of its segment scores and bootstrap resamples recompute it; system-level scores are
:class:`SystemRows`, whose corpus score is the given number and which stay fixed when segments are resampled.
Every metric must score every system (and, at segment level, every segment) of the comparison: a missing cell
is an error naming the file, and a system or segment unknown to the comparison one naming the file and line.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from numpy.typing import NDArray

from ngrameval.errors import ConfigError, InputError, InputTypeError
from ngrameval.io.judgments import read_judgments
from ngrameval.io.records import Judgment, cell_score, kept, missing_columns, records
from ngrameval.ngrams.stats import MetricRows, mean_of_rows, mean_rows

API = "external:api"
FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class External:
    """One metric's scores from ``source``: ``cells`` maps (system, segment or ``None``) to (score, where read)."""

    metric: str
    source: str
    cells: Mapping[tuple[str, str | None], tuple[float, str]]
    higher_is_better: bool = True  # False: an error rate (declared with --lower-is-better)
    gaps: Mapping[tuple[str, str | None], str] = field(default_factory=dict)  # empty cells: where they are

    @property
    def segment_level(self) -> bool:
        return any(seg is not None for _, seg in self.cells)

    def systems(self) -> list[str]:
        return list(dict.fromkeys(s for s, _ in self.cells))

    def segments(self) -> list[str]:
        return list(dict.fromkeys(seg for _, seg in self.cells if seg is not None))


@dataclass(frozen=True)
class SystemRows(MetricRows):
    """A metric known at system level only: ``corpus()`` is ``fixed`` exactly; its rows ``(score, 1)`` make a
    bootstrap resample of the segments give the same score (up to rounding)."""

    fixed: FloatArray = field(default_factory=lambda: np.zeros(0))

    def corpus(self) -> FloatArray:
        return np.array(self.fixed, dtype=np.float64)

    def oriented(self) -> MetricRows:
        if self.higher_is_better:
            return self
        flipped = super().oriented()
        assert isinstance(flipped, SystemRows)  # dataclasses.replace keeps the class
        return dataclasses.replace(flipped, fixed=-self.fixed)


def read_scores(
    path: str,
    *,
    system: str = "system",
    segment: str | None = None,
    metric: str | None = None,
    scores: Sequence[str] | None = None,
    where: Mapping[str, str] | None = None,
) -> list[External]:
    """The metrics of one scores file: long with ``metric`` (the column naming the metric; ``scores`` its one
    score column, default ``score``), else wide (``scores`` the metric columns; default every column but the
    system, segment and ``where`` columns). Rows whose columns differ from ``where`` are skipped."""
    if metric is None and scores is None:
        scores = _wide_columns(path, system, segment, where)
    try:
        found = read_judgments(path, system=system, scores=scores, segment=segment, criterion=metric, where=where,
                               layout="long" if metric else "wide")  # fmt: skip
    except InputError as exc:
        raise InputError(str(exc).replace("judgment", "score")) from None
    gaps = _empty_cells(path, system, segment, metric, scores or ["score"], where)
    return [replace(m, gaps=gaps.get(m.metric, {})) for m in _grouped(found, f"external:{path}")]


def _empty_cells(
    path: str,
    system: str,
    segment: str | None,
    metric: str | None,
    scores: Sequence[str],
    where: Mapping[str, str] | None,
) -> dict[str, dict[tuple[str, str | None], str]]:
    """Per metric, the (system, segment) of every empty score cell of ``path`` and its ``FILE:LINE`` (the reader
    skips them, as missing judgments; a scores file must not have them where a judgment needs the score)."""
    out: dict[str, dict[tuple[str, str | None], str]] = {}
    for line, rec in records(path):
        if not kept(rec, where):
            continue
        for col in scores:
            if cell_score(path, line, col, rec[col]) is None:
                name = str(rec[metric]) if metric else col
                out.setdefault(name, {})[str(rec[system]), str(rec[segment]) if segment else None] = f"{path}:{line}"
    return out


def columns(path: str) -> tuple[int, list[str]]:
    """(line, column names) of the first record of ``path``, read by the judgments' strict reader."""
    first = next(records(path), None)
    if first is None:
        raise InputError(f"{path}: no score read (the file is empty)")
    return first[0], list(first[1])


def column_values(path: str, column: str) -> list[str]:
    """The distinct values of ``column`` in ``path`` in order of first appearance (``--set-column``)."""
    seen: dict[str, None] = {}
    for line, rec in records(path):
        missing_columns(path, line, rec, [column])
        seen.setdefault(str(rec[column]), None)
    if not seen:
        raise InputError(f"{path}: empty (no row, so no value of {column!r})")
    return list(seen)


def _wide_columns(path: str, system: str, segment: str | None, where: Mapping[str, str] | None) -> list[str]:
    line, names = columns(path)
    skip = {system, segment, *(where or {})}
    cols = [c for c in names if c not in skip]
    if not cols:
        raise InputError(f"{path}:{line}: no metric column besides {', '.join(map(repr, sorted(filter(None, skip))))}")
    return cols


def _grouped(found: Sequence[Judgment], source: str) -> list[External]:
    cells: dict[str, dict[tuple[str, str | None], tuple[float, str]]] = {}
    for j in found:
        cells.setdefault(j.criterion, {})[j.system, j.segment] = (j.score, j.where)
    return [External(m, source, c) for m, c in cells.items()]


def from_mapping(scores: Mapping[str, Mapping[str, object]], source: str = API) -> list[External]:
    """Scores given in Python: ``{metric: {system: value}}`` (system level), ``{metric: {system: {segment:
    value}}}`` or ``{metric: {system: [value per segment]}}`` (segment level; a list follows the segment order
    of the judgments, its ids ``"1"``, ``"2"`` ... unless the judgments name theirs)."""
    if not isinstance(scores, Mapping):
        raise InputTypeError(f"scores: expected {{metric: {{system: value}}}}, got {type(scores).__name__}")
    out = []
    for metric, per in scores.items():
        if not isinstance(per, Mapping) or not per:
            raise InputTypeError(f"scores[{metric!r}]: expected a non-empty {{system: value}} mapping")
        cells: dict[tuple[str, str | None], tuple[float, str]] = {}
        for system, value in per.items():
            where = f"scores[{metric!r}][{system!r}]"
            if isinstance(value, Mapping):
                items = [(str(k), v) for k, v in value.items()]
            elif isinstance(value, (list, tuple, np.ndarray)):
                items = [(f"#{i}", v) for i, v in enumerate(value)]  # positional: resolved against the segments
            else:
                items = [(None, value)]  # type: ignore[list-item]
            for seg, v in items:
                cells[str(system), seg] = (_number(v, where if seg is None else f"{where}[{seg!r}]"), where)
        out.append(External(str(metric), source, cells))
    return out


def _number(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InputTypeError(f"{where}: expected a number, got {type(value).__name__}")
    v = float(value)
    if not math.isfinite(v):
        raise InputError(f"{where}: expected a finite number, got {v}")
    return v


def systems_and_segments(metrics: Sequence[External]) -> tuple[list[str], list[str] | None]:
    """The systems (order of first appearance) and, when any metric is segment level, the segment ids."""
    systems = list(dict.fromkeys(s for m in metrics for s in m.systems()))
    segs = list(dict.fromkeys(g for m in metrics for g in m.segments() if not g.startswith("#")))
    positional = max((int(g[1:]) + 1 for m in metrics for g in m.segments() if g.startswith("#")), default=0)
    if positional and not segs:
        segs = [str(i) for i in range(1, positional + 1)]
    return systems, (segs or None) if any(m.segment_level for m in metrics) else None


def to_rows(
    metrics: Sequence[External],
    systems: Sequence[str],
    segments: Sequence[str] | None,
    required: NDArray[np.bool_] | None = None,
) -> list[MetricRows]:
    """Rows of every metric over ``systems`` x ``segments`` (``None``: system-level judgments, one row a system).
    A segment-level metric must score the cells of ``required`` (default: every cell); a cell it leaves out is
    a row ``(0, 0)``: it counts in no system's mean."""
    n_seg = len(segments) if segments is not None else 1
    seg_index = {s: i for i, s in enumerate(segments or [])}
    sys_index = {s: i for i, s in enumerate(systems)}
    out: list[MetricRows] = []
    seen: dict[str, str] = {}
    for m in metrics:
        if m.metric in seen:
            raise InputError(f"metric {m.metric!r} given twice: {seen[m.metric]} and {m.source}")
        seen[m.metric] = m.source
        for (system, _), (_, where) in m.cells.items():
            if system not in sys_index:
                raise InputError(
                    f"{where}: metric {m.metric!r}: unknown system {system!r}; systems: {', '.join(systems)}"
                )
        if not m.segment_level:
            fixed = np.full(len(systems), math.nan)
            for (system, _), (value, _) in m.cells.items():
                fixed[sys_index[system]] = value
            _complete(m, fixed, systems, None)
            values = tuple(mean_rows(np.full(n_seg, v)) for v in fixed)
            out.append(SystemRows(m.metric, m.source, False, values, mean_of_rows, None, m.higher_is_better, fixed))
            continue
        if segments is None:
            where = next(iter(m.cells.values()))[1]
            raise InputError(f"{where}: metric {m.metric!r} has segment scores but the judgments are system level")
        matrix = np.full((len(systems), n_seg), math.nan)
        for (system, seg), (value, where) in m.cells.items():
            if seg is None:
                raise InputError(f"{where}: metric {m.metric!r}: a system-level score among segment-level ones")
            col = int(seg[1:]) if seg.startswith("#") and seg not in seg_index else seg_index.get(seg, -1)
            if not 0 <= col < n_seg:
                raise InputError(f"{where}: metric {m.metric!r}: segment {seg!r} is not one of the {n_seg} segment ids")
            matrix[sys_index[system], col] = value
        _complete(m, np.where(required, matrix, 0.0) if required is not None else matrix, systems, segments)
        scored = ~np.isnan(matrix)
        if not scored.any(axis=1).all():
            _complete(m, np.where(scored.any(axis=1)[:, None], 0.0, math.nan), systems, segments)
        values = tuple(np.column_stack([np.where(k, row, 0.0), k.astype(np.float64)]) for row, k in zip(matrix, scored))
        out.append(MetricRows(m.metric, m.source, False, values, mean_of_rows, None, m.higher_is_better))
    return out


def lower_is_better(metrics: Sequence[External], names: Sequence[str], option: str) -> list[External]:
    """``metrics`` with those named in ``names`` marked lower-is-better; ConfigError naming ``option`` for a name
    that is none of them."""
    known = {m.metric for m in metrics}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ConfigError(f"{option}: no metric {', '.join(map(repr, unknown))} in the scores; they hold: "
                          f"{', '.join(sorted(known)) or 'none'}")  # fmt: skip
    return [dataclasses.replace(m, higher_is_better=False) if m.metric in names else m for m in metrics]


def _complete(m: External, values: FloatArray, systems: Sequence[str], segments: Sequence[str] | None) -> None:
    """An InputError naming the source (and the line of an empty cell) and the first system (and segment) ``m``
    does not score."""
    missing = np.argwhere(np.isnan(values.reshape(len(systems), -1)))
    if not len(missing):
        return
    s, g = int(missing[0][0]), int(missing[0][1])
    seg = segments[g] if segments is not None else None
    cell = f"system {systems[s]!r}" + (f", segment {seg!r}" if seg is not None else "")
    empty = m.gaps.get((systems[s], seg))
    if empty is not None:
        raise InputError(f"{empty}: metric {m.metric!r}: empty score for {cell} ({len(missing)} cells missing)")
    where = m.source.removeprefix("external:")
    raise InputError(f"{where}: metric {m.metric!r} has no score for {cell} ({len(missing)} cells missing)")
