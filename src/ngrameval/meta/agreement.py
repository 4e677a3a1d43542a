"""Belz & Reiter's (2006) analyses: the full correlation matrix between human criteria and metrics, the
"arbitrary single judge (or run) vs the mean of the set" statistic, and agreement between judges.

* Correlation matrix: the coefficient of every pair of named score vectors (criteria, judge groups,
  metrics), each pair over the points where both are defined.
* Single vs mean (SPEC §5): for a set of individuals (judges, or runs of one metric) scoring the same
  items, the mean over individuals ``i`` of Pearson ``r(x_i, m)`` where ``m`` is the set's mean per item
  (over the individuals that scored it, ``i`` included) and ``r`` is taken over the items ``i`` scored.
  With ``leave_one_out`` ``m`` is the mean of the *other* individuals (items nobody else scored are left
  out): with two or three ratings per item, including ``i`` inflates ``r`` noticeably.
* Inter-annotator agreement: the mean pairwise Pearson r over judge pairs sharing at least
  ``min_overlap`` items, and Krippendorff's alpha (Krippendorff 2004) from the ``krippendorff`` package
  (``pip install 'ngrameval[agreement]'``), which handles judges who scored different items.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from ngrameval.errors import ConfigError, InputError, MissingDependencyError
from ngrameval.io.judgments import Judgment
from ngrameval.meta.correlate import coefficient
from ngrameval.meta.resample import FloatArray

KRIPPENDORFF_LEVELS = ("interval", "ratio", "ordinal", "nominal")


@dataclass(frozen=True)
class CorrelationMatrix:
    """``values[i, j]`` (and its p-value) of ``names[i]`` vs ``names[j]`` over ``n[i, j]`` shared points."""

    names: tuple[str, ...]
    coefficient: str
    values: FloatArray
    p_values: FloatArray
    n: FloatArray


def correlation_matrix(series: Mapping[str, FloatArray], coefficient_name: str = "pearson") -> CorrelationMatrix:
    """Every pair of ``series`` (equal-length vectors, NaN = undefined point) correlated.

    >>> a, b, c = np.array([1.0, 2, 3, 4]), np.array([2.0, 4, 6, 9]), np.array([4.0, 3, 2, 1])
    >>> m = correlation_matrix({"a": a, "b": b, "c": c})
    >>> np.round(m.values, 3).tolist()[2]
    [-1.0, -0.994, 1.0]
    """
    names = tuple(series)
    lengths = {len(v) for v in series.values()}
    if len(lengths) > 1:
        raise InputError(f"every series needs the same number of points; got {sorted(lengths)}")
    k = len(names)
    values, p_values, n = np.eye(k), np.zeros((k, k)), np.zeros((k, k))
    vecs = [np.asarray(series[s], dtype=np.float64) for s in names]
    for i in range(k):
        n[i, i] = np.sum(~np.isnan(vecs[i]))
        for j in range(i + 1, k):
            keep = ~np.isnan(vecs[i]) & ~np.isnan(vecs[j])
            v, p = coefficient(vecs[i][keep], vecs[j][keep], coefficient_name)
            values[i, j] = values[j, i] = v
            p_values[i, j] = p_values[j, i] = p
            n[i, j] = n[j, i] = keep.sum()
    if coefficient_name == "r2":
        np.fill_diagonal(values, 1.0)
    return CorrelationMatrix(names, coefficient_name, values, p_values, n)


@dataclass(frozen=True)
class JudgeTable:
    """``scores[j, i]``: judge ``judges[j]``'s score of item ``items[i]`` = (system, segment); NaN = not judged."""

    criterion: str
    judges: tuple[str, ...]
    items: tuple[tuple[str, str | None], ...]
    scores: FloatArray


def judge_table(judgments: Sequence[Judgment], criterion: str) -> JudgeTable:
    """The judges x items table of one criterion (judgments need a judge column)."""
    rows = [j for j in judgments if j.criterion == criterion]
    if not rows:
        raise InputError(f"no judgment for criterion {criterion!r}")
    anonymous = [j for j in rows if j.judge is None]
    if anonymous:
        raise InputError(f"{anonymous[0].where}: agreement needs a judge column (judge= of read_judgments)")
    judges = sorted({str(j.judge) for j in rows})
    items = sorted({(j.system, j.segment) for j in rows}, key=lambda t: (t[0], t[1] or ""))
    jx = {s: i for i, s in enumerate(judges)}
    ix = {t: i for i, t in enumerate(items)}
    scores = np.full((len(judges), len(items)), np.nan)
    for j in rows:
        scores[jx[str(j.judge)], ix[j.system, j.segment]] = j.score
    return JudgeTable(criterion, tuple(judges), tuple(items), scores)


def single_vs_mean(scores: FloatArray, min_items: int = 3, *, leave_one_out: bool = False) -> FloatArray:
    """Pearson r of each individual (row) with the set's mean per item (column), over the items it scored
    (``leave_one_out``: the others' mean, over the items it and somebody else scored); NaN for an individual
    with fewer than ``min_items`` such items or a constant side.

    >>> s = np.array([[1.0, 2, 3, 4], [1.0, 2, 3, 5], [4.0, 3, 2, 1]])
    >>> np.round(single_vs_mean(s), 3).tolist()
    [0.983, 1.0, -0.983]
    >>> np.round(single_vs_mean(s, leave_one_out=True), 3).tolist()
    [0.775, nan, -0.994]
    """
    scored = ~np.isnan(scores)
    total, count = np.nansum(scores, axis=0), scored.sum(axis=0)
    out = np.full(len(scores), np.nan)
    for i, (row, has) in enumerate(zip(scores, scored)):
        own = np.where(has, row, 0.0) if leave_one_out else 0.0
        n = count - has if leave_one_out else count
        use = has & (n > 0)
        if use.sum() >= min_items:
            out[i] = coefficient(row[use], ((total - own)[use] / n[use]), "pearson")[0]
    return out


def pairwise_pearson(scores: FloatArray, min_overlap: int = 3) -> FloatArray:
    """Pearson r of every pair of rows over the columns both scored (pairs sharing fewer than
    ``min_overlap`` columns, or with a constant side, are left out)."""
    scored = ~np.isnan(scores)
    out = []
    for a, b in combinations(range(len(scores)), 2):
        both = scored[a] & scored[b]
        if both.sum() >= min_overlap:
            r = coefficient(scores[a][both], scores[b][both], "pearson")[0]
            if not math.isnan(r):
                out.append(r)
    return np.array(out)


def krippendorff_alpha(scores: FloatArray, level: str = "interval") -> float:
    """Krippendorff's alpha of a judges x items table (NaN = not judged), via the ``krippendorff`` package."""
    if level not in KRIPPENDORFF_LEVELS:
        raise ConfigError(f"unknown level of measurement {level!r}; valid: {', '.join(KRIPPENDORFF_LEVELS)}")
    try:
        import krippendorff
    except ImportError:
        raise MissingDependencyError("krippendorff", "agreement") from None
    if np.sum(np.sum(~np.isnan(scores), axis=0) >= 2) == 0:
        return math.nan  # no item was scored twice: nothing to agree on
    if len(np.unique(scores[~np.isnan(scores)])) < 2:
        return math.nan  # one value only: expected disagreement is 0, alpha is 0/0 (the package raises)
    alpha: Any = krippendorff.alpha  # its level argument is typed as a Literal; ours is checked above
    return float(alpha(reliability_data=scores, level_of_measurement=level))


@dataclass(frozen=True)
class Agreement:
    """Agreement between the judges of one criterion (see the module docstring)."""

    criterion: str
    judges: int
    items: int
    judgments: int
    items_judged_twice: int
    pairwise_pearson: float
    pairs: int
    single_vs_mean: float
    single_vs_mean_min: float
    single_vs_mean_max: float
    individuals: int
    leave_one_out: bool  # single vs the others' mean rather than the mean including the individual
    krippendorff_alpha: float | None
    krippendorff_level: str | None


def agreement(
    table: JudgeTable, *, krippendorff_level: str | None = "interval", min_overlap: int = 3, leave_one_out: bool = False
) -> Agreement:
    """Pairwise Pearson, single judge vs mean (``leave_one_out``: vs the other judges' mean) and (unless
    ``krippendorff_level`` is None) Krippendorff's alpha."""
    s = table.scores
    scored = ~np.isnan(s)
    pairs = pairwise_pearson(s, min_overlap)
    single = single_vs_mean(s, min_overlap, leave_one_out=leave_one_out)
    ok = single[~np.isnan(single)]
    alpha = None if krippendorff_level is None else krippendorff_alpha(s, krippendorff_level)
    nan = math.nan
    return Agreement(
        table.criterion,
        len(table.judges),
        len(table.items),
        int(scored.sum()),
        int(np.sum(scored.sum(axis=0) >= 2)),
        float(pairs.mean()) if len(pairs) else nan,
        len(pairs),
        float(ok.mean()) if len(ok) else nan,
        float(ok.min()) if len(ok) else nan,
        float(ok.max()) if len(ok) else nan,
        len(ok),
        leave_one_out,
        alpha,
        krippendorff_level,
    )
