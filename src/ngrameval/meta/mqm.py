"""MQM and ESA scores of error-span annotations (:mod:`ngrameval.io.spans`), and span-level agreement.

* **MQM** (Freitag et al. 2021; weights of Google's MQM data and mt-metrics-eval's ``converters/score_mqm.py``):
  an error weighs the value of the most specific of ``severity/category/subcategory``, ``severity/category``,
  ``severity`` found in the weights (lower case; 0 if none): Major 5, Minor 1, Neutral 0, Major/Non-translation!
  25, Minor/Fluency/Punctuation 0.1. A rater's segment score is the sum of its errors' weights; the segment's
  MQM score is minus the mean over its raters (higher = better, 0 = no error). A system's score is the mean of
  its segment scores.
* **ESA** (Kocmi et al. 2024, Error Span Annotation): each rater marks minor/major spans and scores the segment
  0-100; the segment's score is the mean over its raters, a system's the mean of its segments'.
* **Span agreement** between two raters over the segments both annotated: *exact* F1 ``2|A ∩ B| / (|A| + |B|)``
  on spans as (start, end) target offsets (with ``severity=True``: (start, end, severity)); *character* F1 the
  same on the sets of target characters each rater marked. Both are summed over segments before dividing
  (micro), then averaged over rater pairs. Spans without offsets (omissions, no-error rows) are left out.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

from ngrameval.errors import ConfigError, InputError
from ngrameval.io.judgments import Judgment
from ngrameval.io.spans import Span

MQM_WEIGHTS: Mapping[str, float] = {
    "major": 5.0,
    "minor": 1.0,
    "neutral": 0.0,
    "major/non-translation!": 25.0,
    "minor/fluency/punctuation": 0.1,
}
ESA_SEVERITIES = ("minor", "major")

Cell = tuple[str, str, int]  # system, doc, doc_id


def weight(key: str, value: str, where: str = "weights") -> tuple[str, float]:
    """One weight: ``key`` (``severity[/category[/subcategory]]``, lower-cased) and ``value``, a finite number
    >= 0 (a penalty); a :class:`ConfigError` naming ``where`` otherwise."""
    name = key.strip().lower()
    if not name or any(not p.strip() for p in name.split("/")):
        raise ConfigError(f"{where}: expected severity[/category]=weight, got an empty name in {key!r}")
    try:
        number = float(value)
    except ValueError:
        raise ConfigError(f"{where}: the weight of {key.strip()!r} must be a number, got {value.strip()!r}") from None
    if not math.isfinite(number) or number < 0:
        raise ConfigError(f"{where}: the weight of {key.strip()!r} must be a finite number >= 0, got {value.strip()!r}")
    return name, number


def parse_weights(spec: str) -> dict[str, float]:
    """``"Major:5 Minor:1 ..."`` (space-separated ``severity[/category[/subcategory]]:weight``) -> weights."""
    out: dict[str, float] = {}
    for item in spec.split():
        key, sep, value = item.rpartition(":")
        if not sep or not key:
            raise ConfigError(f"weights: expected severity[/category]:number, got {item!r}")
        name, number = weight(key, value)
        out[name] = number
    return out


def weight_key(severity: str, category: str, weights: Mapping[str, float] = MQM_WEIGHTS) -> str | None:
    """The most specific ``severity/category/...`` prefix of this error found in ``weights`` (None if none)."""
    parts = [p.lower() for p in [severity, *category.split("/")]]
    while parts:
        key = "/".join(parts)
        if key in weights:
            return key
        parts.pop()
    return None


def span_weight(severity: str, category: str, weights: Mapping[str, float] = MQM_WEIGHTS) -> float:
    """The weight of the most specific ``severity/category/...`` prefix found in ``weights`` (0 if none)."""
    key = weight_key(severity, category, weights)
    return 0.0 if key is None else weights[key]


def unweighted(spans: Sequence[Span], weights: Mapping[str, float] = MQM_WEIGHTS) -> dict[str, list[Span]]:
    """The errors (not no-error rows) that no key of ``weights`` covers, by severity (lower case, first-seen
    order): :func:`span_weight` weighs them 0, as mt-metrics-eval does; a caller that wants no silent 0 checks
    here first."""
    out: dict[str, list[Span]] = {}
    for s in spans:
        if s.is_error and weight_key(s.severity, s.category, weights) is None:
            out.setdefault(s.severity.strip().lower(), []).append(s)
    return out


@dataclass(frozen=True)
class SegmentScore:
    """One segment's score (``mqm``: minus the mean rater penalty; ``esa``: the mean rater score) and each
    rater's (MQM: the rater's penalty sum, as mt-metrics-eval prints it; ESA: the rater's 0-100 score)."""

    system: str
    doc: str
    doc_id: int
    score: float
    raters: tuple[tuple[str, float], ...]

    @property
    def segment(self) -> str:
        """``doc:doc_id``, the segment's name in judgments."""
        return f"{self.doc}:{self.doc_id}"


def _by_cell(spans: Sequence[Span]) -> dict[Cell, dict[str, list[Span]]]:
    out: dict[Cell, dict[str, list[Span]]] = defaultdict(lambda: defaultdict(list))
    for s in spans:
        out[s.system, s.doc, s.doc_id][s.rater].append(s)
    return out


def mqm_segment_scores(spans: Sequence[Span], weights: Mapping[str, float] = MQM_WEIGHTS) -> list[SegmentScore]:
    """Every (system, doc, doc_id) cell's MQM score, cells in first-seen order (ids sorted within a doc)."""
    out = []
    for (system, doc, doc_id), raters in _sorted(_by_cell(spans)):
        per = {r: sum(span_weight(s.severity, s.category, weights) for s in rows) for r, rows in raters.items()}
        score = -(sum(per.values()) / len(per))
        out.append(SegmentScore(system, doc, doc_id, score, tuple(sorted(per.items()))))
    return out


def _sorted(cells: dict[Cell, dict[str, list[Span]]]) -> list[tuple[Cell, dict[str, list[Span]]]]:
    systems = list(dict.fromkeys(c[0] for c in cells))
    docs = list(dict.fromkeys(c[1] for c in cells))
    return sorted(cells.items(), key=lambda kv: (systems.index(kv[0][0]), docs.index(kv[0][1]), kv[0][2]))


def esa_segment_scores(spans: Sequence[Span]) -> list[SegmentScore]:
    """Every cell's ESA score: the mean of its raters' 0-100 scores (each rater's rows must agree on it)."""
    out = []
    for (system, doc, doc_id), raters in _sorted(_by_cell(spans)):
        per = {}
        for r, rows in raters.items():
            values = {s.score for s in rows}
            if None in values or len(values) != 1:
                bad = rows[0]
                where = f"{bad.path}:{bad.line}: rater {r!r} of {system} {doc}:{doc_id}"
                raise InputError(f"{where} needs one ESA score on all its rows, got {values}")
            (v,) = values
            assert v is not None
            if not 0 <= v <= 100:
                raise InputError(f"{rows[0].path}:{rows[0].line}: ESA score must lie in 0-100, got {v}")
            per[r] = v
        bad_sev = [s for rows in raters.values() for s in rows
                   if s.is_error and s.severity.lower() not in ESA_SEVERITIES]  # fmt: skip
        if bad_sev:
            s = bad_sev[0]
            raise InputError(f"{s.path}:{s.line}: ESA severity must be minor or major, got {s.severity!r}")
        out.append(SegmentScore(system, doc, doc_id, sum(per.values()) / len(per), tuple(sorted(per.items()))))
    return out


def system_scores(segments: Sequence[SegmentScore]) -> dict[str, float]:
    """The mean segment score of every system (first-seen order)."""
    sums: dict[str, list[float]] = {}
    for s in segments:
        sums.setdefault(s.system, []).append(s.score)
    return {k: math.fsum(v) / len(v) for k, v in sums.items()}


def to_judgments(segments: Sequence[SegmentScore], criterion: str = "mqm") -> list[Judgment]:
    """One :class:`Judgment` per (segment, rater) — MQM raters' scores negated, so higher = better — for
    :func:`ngrameval.meta.correlate.aggregate` and :func:`ngrameval.meta.agreement.judge_table`."""
    sign = -1.0 if criterion == "mqm" else 1.0
    return [Judgment(s.system, s.segment, r, criterion, sign * v if v else 0.0, k + 1)
            for k, s in enumerate(segments) for r, v in s.raters]  # fmt: skip


@dataclass(frozen=True)
class SpanAgreement:
    """Span-level agreement: exact and character F1 averaged over the ``rater_pairs`` that annotated a common
    segment (``segments``: common segments summed over those pairs)."""

    exact_f1: float
    character_f1: float
    rater_pairs: int
    segments: int
    by_severity: bool


def _f1(common: int, a: int, b: int) -> float:
    return 2 * common / (a + b) if a + b else 1.0


def span_agreement(spans: Sequence[Span], *, severity: bool = False) -> SpanAgreement:
    """Exact-match and character-overlap F1 between every two raters (see the module docstring); F1 of two
    empty sets is 1 (both found no error)."""
    cells = _by_cell(spans)
    raters = sorted({s.rater for s in spans})
    exact, chars, seen = [], [], 0
    for a, b in combinations(raters, 2):
        counts = [0, 0, 0, 0, 0, 0]  # exact: common, a, b; characters: common, a, b
        shared = 0
        for by_rater in cells.values():
            if a not in by_rater or b not in by_rater:
                continue
            shared += 1
            sa, sb = _span_set(by_rater[a], severity), _span_set(by_rater[b], severity)
            ca, cb = _characters(by_rater[a]), _characters(by_rater[b])
            for k, v in enumerate((len(sa & sb), len(sa), len(sb), len(ca & cb), len(ca), len(cb))):
                counts[k] += v
        if shared:
            seen += shared
            exact.append(_f1(*counts[:3]))
            chars.append(_f1(*counts[3:]))
    if not exact:
        raise InputError("span agreement needs two raters who annotated a common segment")
    return SpanAgreement(sum(exact) / len(exact), sum(chars) / len(chars), len(exact), seen, severity)


def _span_set(rows: Sequence[Span], severity: bool) -> set[tuple[int, int, str]]:
    return {(s.start, s.end, s.severity.lower() if severity else "") for s in rows
            if s.is_error and s.start is not None and s.end is not None}  # fmt: skip


def _characters(rows: Sequence[Span]) -> set[int]:
    return {k for s in rows if s.is_error and s.start is not None and s.end is not None for k in range(s.start, s.end)}
