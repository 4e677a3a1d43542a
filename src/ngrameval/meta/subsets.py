"""Chen & Dolan's (2011) analyses: correlations on subsets of the segments and of the references.

* **Conditional correlation**: a metric's segment-level correlation with a criterion restricted to the
  judged segments where another metric's sentence score exceeds a threshold (their PINC vs human scores
  where BLEU > 0, 30, 60, 90 — thresholds on the displayed 0-100 scale for 0-1 metrics).
* **Reference-count curve**: the correlation when only ``k`` of the ``M`` references are used, for
  ``k = 1 .. M``, averaged over subsets of ``k`` reference streams (all of them when there are at most
  ``n_subsets``, else ``n_subsets`` distinct ones drawn with the seed), with or without the source
  counted as one more reference.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from math import comb

import numpy as np

from ngrameval import progress as _progress
from ngrameval.api import RefsLike, measure, segment_major
from ngrameval.errors import ConfigError, InputError
from ngrameval.meta.correlate import LEVELS, HumanScores, coefficient, points, sentence_matrix
from ngrameval.meta.resample import resolve_seed
from ngrameval.meta.significance import DEFAULT_SEED
from ngrameval.metrics.registry import MetricSpec
from ngrameval.ngrams.stats import MetricRows


@dataclass(frozen=True)
class ConditionalCorrelation:
    """``metric`` vs ``criterion`` over the ``n`` judged segments where ``condition`` > ``threshold``."""

    metric: str
    condition: str
    criterion: str
    coefficient: str
    threshold: float
    n: int
    value: float
    p_value: float


def conditional_correlation(
    rows: Sequence[MetricRows],
    condition: MetricRows,
    human: HumanScores,
    thresholds: Sequence[float],
    *,
    coefficient_name: str = "pearson",
) -> tuple[ConditionalCorrelation, ...]:
    """Segment-level correlation of every metric of ``rows`` where ``condition``'s sentence score (x100 for
    a 0-1 metric) is above each threshold; NaN (with n) when fewer than 3 segments remain."""
    xs, y = points(rows, human, "segment")
    assert human.segment is not None  # points() checked it
    judged = ~np.isnan(human.segment)
    cond = sentence_matrix(condition)[judged] * (100.0 if condition.fraction else 1.0)
    out = []
    for r, x in zip(rows, xs):
        for t in thresholds:
            keep = cond > t
            value, p = coefficient(x[keep], y[keep], coefficient_name)
            out.append(ConditionalCorrelation(r.metric, condition.metric, human.criterion, coefficient_name,
                                              float(t), int(keep.sum()), value, p))  # fmt: skip
    return tuple(out)


@dataclass(frozen=True)
class CurvePoint:
    """The mean (and spread) of the coefficient over ``subsets`` subsets of ``k`` references."""

    k: int
    subsets: int
    mean: float
    std: float
    low: float
    high: float


@dataclass(frozen=True)
class ReferenceCurve:
    """One metric's correlation with ``criterion`` as references are added (``with_source``: plus the source)."""

    metric: str
    criterion: str
    level: str
    coefficient: str
    with_source: bool
    points: tuple[CurvePoint, ...]
    seed: int


def _subsets(m: int, k: int, n_subsets: int, rng: np.random.Generator) -> list[tuple[int, ...]]:
    """Every k-subset of range(m) when there are at most ``n_subsets``, else that many distinct ones drawn."""
    if comb(m, k) <= n_subsets:
        return list(combinations(range(m), k))
    seen: dict[tuple[int, ...], None] = {}
    while len(seen) < n_subsets:
        seen[tuple(sorted(int(i) for i in rng.choice(m, size=k, replace=False)))] = None
    return list(seen)


def reference_curve(
    systems: Mapping[str, Sequence[str]],
    refs: RefsLike,
    human: HumanScores,
    specs: Sequence[MetricSpec],
    *,
    level: str = "system",
    coefficient_name: str = "pearson",
    n_subsets: int = 10,
    seed: int | None = DEFAULT_SEED,
    source: Sequence[str] | None = None,
    jobs: int | None = 1,
) -> tuple[ReferenceCurve, ...]:
    """One curve per metric of ``specs`` (and, given ``source``, one more per metric with the source added
    to every subset). Every segment needs the same number of references; systems are matched by name.
    ``jobs``: threads for each subset's scoring (:func:`ngrameval.api.measure`), the same curves."""
    if level not in LEVELS:
        raise ConfigError(f"level must be one of {', '.join(LEVELS)}")
    if n_subsets < 1:
        raise ConfigError(f"need n_subsets >= 1, got {n_subsets}")
    seg_refs = segment_major(refs)
    counts = {len(r) for r in seg_refs}
    if len(counts) != 1:
        raise InputError(f"the reference-count curve needs one number of references per segment; got {sorted(counts)}")
    if source is not None and len(source) != len(seg_refs):
        raise InputError(f"the source has {len(source)} segments but the references have {len(seg_refs)}")
    missing = [s for s in human.systems if s not in systems]
    if missing:
        raise InputError(f"no output for judged system(s) {', '.join(missing)}")
    judged = {s: systems[s] for s in human.systems}
    (m,) = counts
    used = resolve_seed(seed)
    rng = np.random.default_rng(used)
    variants = [False] if source is None else [False, True]
    # values[variant][metric][k-1] = the coefficient of each subset
    values: list[list[list[list[float]]]] = [[[[] for _ in range(m)] for _ in specs] for _ in variants]
    names: list[str] = []

    def per_k(k: int) -> int:  # measure() calls with k references
        return min(comb(m, k), n_subsets) * len(variants)

    for k in _progress.tracked(range(1, m + 1), "reference subsets", "subset", per_k):
        for subset in _subsets(m, k, n_subsets, rng):
            for v, with_source in enumerate(variants):
                chosen = [[r[j] for j in subset] + ([source[i]] if with_source and source else [])
                          for i, r in enumerate(seg_refs)]  # fmt: skip
                rows = measure(judged, chosen, specs, source, jobs)
                names = [r.metric for r in rows]
                xs, y = points(rows, human, level)
                for s, x in enumerate(xs):
                    values[v][s][k - 1].append(coefficient(x, y, coefficient_name)[0])
    out = []
    for v, with_source in enumerate(variants):
        for s, name in enumerate(names):
            pts = []
            for k in range(1, m + 1):
                arr = np.array(values[v][s][k - 1])
                ok = arr[~np.isnan(arr)]
                if not len(ok):
                    pts.append(CurvePoint(k, len(arr), math.nan, math.nan, math.nan, math.nan))
                    continue
                pts.append(CurvePoint(k, len(arr), float(ok.mean()), float(ok.std()), float(ok.min()), float(ok.max())))
            out.append(ReferenceCurve(name, human.criterion, level, coefficient_name, with_source, tuple(pts), used))
    return tuple(out)
