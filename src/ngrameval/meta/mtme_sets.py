"""mt-metrics-eval's significance clusters and its summaries over several data sets (language pairs).

* **Clusters** (``data.AssignRanks``): metrics sorted by decreasing value (name second); walking down the
  list, a metric opens a new rank when some metric of the current rank (from the rank's first metric to the
  one just above it) beats it significantly (``p <= alpha``); metrics statistically tied share a rank.
* **Over sets** (``tasks.TaskSetResults``): a metric's *average rank* is the mean of its cluster ranks over the
  sets, its *average value* the mean over the sets of its value mapped to [0, 1] (``(v - lo)/(hi - lo)``; lo,
  hi = -1, 1 for correlations, 0, 1 for accuracies); the system-level *pooled accuracy* sums agreements and
  pairs over the sets, with its permutation test (``CompareMetricsWithGlobalAccuracy``: both metrics
  z-normalised over all sets' systems, each system's two scores swapped with probability 1/2).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations, pairwise
from typing import TYPE_CHECKING

import numpy as np

from ngrameval.errors import ConfigError, InputError
from ngrameval.meta.mtme import agreement, calibrate, outcomes, pair_table, pairs_permutation_test, pooled_accuracy
from ngrameval.meta.resample import FloatArray, resolve_seed
from ngrameval.meta.significance import DEFAULT_SEED
from ngrameval.ngrams.stats import MetricRows

if TYPE_CHECKING:
    from ngrameval.meta.correlate import Correlation, HumanScores
    from ngrameval.meta.metric_difference import MetricDifference

ACCURACIES = ("accuracy", "acc-eq")  # statistics in [0, 1]; every other coefficient lies in [-1, 1]


@dataclass(frozen=True)
class RankedMetric:
    """A metric's ``value`` and its significance cluster ``rank`` (1 = best)."""

    metric: str
    value: float
    rank: int


def _value_key(item: tuple[str, float]) -> tuple[float, str]:
    return (-item[1] if not math.isnan(item[1]) else math.inf, item[0])


def assign_ranks(values: Mapping[str, float], p_value: Mapping[tuple[str, str], float], alpha: float = 0.05) -> (
    tuple[RankedMetric, ...]
):  # fmt: skip
    """Clusters of ``values`` (metric -> statistic): ``p_value[a, b]`` is the one-sided p that ``a`` is higher
    than ``b`` (either order of the key may be given: a pair tested once serves both)."""
    if not 0 < alpha < 1:
        raise ConfigError(f"alpha must be strictly between 0 and 1, got {alpha}")
    ordered = sorted(values.items(), key=_value_key)
    ranks: list[int] = []
    rank, start = 1, 0
    for i, (b, _) in enumerate(ordered):
        beaten = False
        for a, _ in ordered[start:i]:
            p = p_value.get((a, b), p_value.get((b, a)))
            if p is None:
                raise InputError(f"no significance test between {a!r} and {b!r}")
            beaten = beaten or p <= alpha
        if beaten:
            rank, start = rank + 1, i
        ranks.append(rank)
    return tuple(RankedMetric(m, v, r) for (m, v), r in zip(ordered, ranks))


@dataclass(frozen=True)
class Cluster:
    """One metric's rank among the metrics compared on ``criterion`` (and data set ``dataset``)."""

    dataset: str
    criterion: str
    level: str
    coefficient: str
    metric: str
    value: float
    rank: int
    alpha: float


def clusters(differences: Sequence[MetricDifference], alpha: float = 0.05, dataset: str = "") -> tuple[Cluster, ...]:
    """The clusters of every criterion from :class:`~ngrameval.meta.metric_difference.MetricDifference` records
    (each pair's permutation p, ``metric_a`` the higher)."""
    out: list[Cluster] = []
    groups: dict[tuple[str, str, str], list[MetricDifference]] = {}
    for d in differences:
        groups.setdefault((d.criterion, d.level, d.coefficient), []).append(d)
    for (criterion, level, coef), ds in groups.items():
        values: dict[str, float] = {}
        p: dict[tuple[str, str], float] = {}
        for d in ds:
            a, b = d.metric_a, d.metric_b
            values[a], values[b] = d.value_a, d.value_b
            p[a, b] = d.permutation_p
        out += [Cluster(dataset, criterion, level, coef, r.metric, r.value, r.rank, alpha)
                for r in assign_ranks(values, p, alpha)]  # fmt: skip
    return tuple(out)


@dataclass(frozen=True)
class SetSummary:
    """A metric over ``sets`` data sets: mean of its values mapped to [0, 1], mean cluster rank (when the sets
    were compared), pooled pairwise accuracy and its global cluster rank (system-level ``accuracy`` only)."""

    criterion: str
    level: str
    coefficient: str
    metric: str
    sets: int
    average_value: float
    average_rank: float | None
    pooled_accuracy: float | None
    pooled_rank: int | None


def _unit(value: float, coefficient: str) -> float:
    return value if coefficient in ACCURACIES else (value + 1) / 2


def summarize(
    correlations: Sequence[Correlation],
    ranks: Sequence[Cluster] = (),
    pooled: Sequence[Cluster] = (),
) -> tuple[SetSummary, ...]:
    """Per (criterion, coefficient, metric) over the data sets of ``correlations`` (records with ``dataset``,
    ``criterion``, ``level``, ``coefficient``, ``metric`` and ``value``); only metrics found in every set.
    ``ranks``: the clusters of every set; ``pooled``: the pooled accuracies (rank 0 when untested)."""
    keys: dict[tuple[str, str, str, str], dict[str, float]] = {}
    sets: dict[tuple[str, str], set[str]] = {}
    for c in correlations:
        crit, level, coef = c.criterion, c.level, c.coefficient
        keys.setdefault((crit, level, coef, c.metric), {})[c.dataset] = c.value
        sets.setdefault((crit, coef), set()).add(c.dataset)
    rank_of: dict[tuple[str, str, str, str], list[int]] = {}
    for r in ranks:
        rank_of.setdefault((r.criterion, r.coefficient, r.metric, r.dataset), []).append(r.rank)
    pooled_of = {(r.criterion, r.metric): r for r in pooled}
    out: list[SetSummary] = []
    for (crit, level, coef, metric), per in keys.items():
        names = sets[crit, coef]
        if set(per) != names:
            continue
        found = [rank_of.get((crit, coef, metric, s), []) for s in sorted(names)]
        avg_rank = float(np.mean([r[0] for r in found])) if all(found) else None
        g = pooled_of.get((crit, metric)) if coef == "accuracy" else None
        mean = float(np.mean([_unit(v, coef) for v in per.values()]))
        out.append(SetSummary(crit, level, coef, metric, len(per), mean, avg_rank, g.value if g else None,
                              g.rank if g and g.rank else None))  # fmt: skip
    return tuple(out)


def _zscore(x: FloatArray) -> FloatArray:
    sd = float(x.std())
    out: FloatArray = (x - x.mean()) / sd if sd > 0 else x - x.mean()
    return out


def pooled_accuracy_test(
    x1: Sequence[FloatArray],
    x2: Sequence[FloatArray],
    y: Sequence[FloatArray],
    rng: np.random.Generator,
    n_resamples: int = 1000,
) -> float:
    """One-sided p that metric 1's pooled accuracy over the sets is higher than metric 2's (module docstring);
    ``p = (c + 1)/(R + 1)``. ``y`` NaN marks an unjudged system (left out, as in every set's accuracy)."""
    keep = [~np.isnan(v) for v in y]
    a = [np.asarray(v, dtype=np.float64)[k] for v, k in zip(x1, keep)]
    b = [np.asarray(v, dtype=np.float64)[k] for v, k in zip(x2, keep)]
    ys = [np.asarray(v, dtype=np.float64)[k] for v, k in zip(y, keep)]
    bounds = np.cumsum([0, *(len(v) for v in ys)])
    z1, z2 = _zscore(np.concatenate(a)), _zscore(np.concatenate(b))
    observed = pooled_accuracy([z1[s:e] for s, e in pairwise(bounds)], ys) - pooled_accuracy(
        [z2[s:e] for s, e in pairwise(bounds)], ys
    )
    pairs = sum(agreement(v, v)[1] for v in ys)
    if not pairs:
        return math.nan
    swap = rng.random((n_resamples, len(z1))) < 0.5
    t1, t2 = np.where(swap, z2, z1), np.where(swap, z1, z2)
    delta = np.zeros(n_resamples)
    for (s, e), h in zip(pairwise(bounds), ys):
        i, j = np.triu_indices(e - s, 1)
        sy = np.sign(h[i] - h[j])
        for t, sgn in ((t1, 1.0), (t2, -1.0)):
            part = t[:, s:e]
            delta += sgn * np.count_nonzero(np.sign(part[:, i] - part[:, j]) == sy, axis=1)
    count = int(np.count_nonzero(delta / pairs >= observed - 1e-12))
    return (count + 1) / (n_resamples + 1)


def pooled_clusters(
    metrics: Mapping[str, Sequence[FloatArray]],
    human: Sequence[FloatArray],
    rng_seed: int,
    criterion: str,
    *,
    n_resamples: int = 1000,
    alpha: float = 0.05,
) -> tuple[Cluster, ...]:
    """Pooled accuracy of every metric (per set scores in ``metrics``) and its clusters, each pair of metrics
    tested on its own generator from ``(seed, i, j)``."""
    names = list(metrics)
    values = {m: pooled_accuracy(list(metrics[m]), list(human)) for m in names}
    p: dict[tuple[str, str], float] = {}
    for i, m1 in enumerate(names):
        for j in range(i + 1, len(names)):
            m2 = names[j]
            a, b = (m1, m2) if values[m1] >= values[m2] else (m2, m1)
            rng = np.random.default_rng([rng_seed, i, j])
            p[a, b] = pooled_accuracy_test(metrics[a], metrics[b], human, rng, n_resamples)
    return tuple(Cluster("(pooled)", criterion, "system", "accuracy", r.metric, r.value, r.rank, alpha)
                 for r in assign_ranks(values, p, alpha))  # fmt: skip


def compare_tie_calibrated(
    rows: Sequence[MetricRows],
    human: HumanScores,
    *,
    level: str = "segment",
    grouping: str = "item",
    n_resamples: int = 1000,
    seed: int | None = DEFAULT_SEED,
) -> tuple[MetricDifference, ...]:
    """``acc*_eq`` of every pair of metrics compared by the pairs permutation test (mt-metrics-eval's
    ``perm_test='pairs'``), each metric at its own calibrated epsilon; each pair its own generator from
    ``(seed, i, j)``. ``n`` is the number of pairs; ``r_ab`` Pearson's r of the two metrics over the points."""
    from ngrameval.meta.correlate import coefficient, points, sentence_matrix
    from ngrameval.meta.metric_difference import MetricDifference

    if len(rows) < 2:
        raise ConfigError("comparing correlations needs at least two metrics")
    if n_resamples < 1:
        raise ConfigError(f"need n_resamples >= 1, got {n_resamples}")
    used = resolve_seed(seed)
    rows = [r.oriented() for r in rows]
    xs, _ = points(rows, human, level)
    if level == "system":
        keep = ~np.isnan(human.system)
        tables = [pair_table(r.corpus()[keep], human.system[keep], "none") for r in rows]
    else:
        assert human.segment is not None  # points() checked it
        tables = [pair_table(sentence_matrix(r), human.segment, grouping) for r in rows]
    cals = [calibrate(t) for t in tables]
    outs = [outcomes(t, c.epsilon) for t, c in zip(tables, cals)]
    out = []
    for i, j in combinations(range(len(rows)), 2):
        a, b = (i, j) if cals[i].value >= cals[j].value or math.isnan(cals[j].value) else (j, i)
        _, p = pairs_permutation_test(outs[a], outs[b], np.random.default_rng([used, i, j]), n_resamples)
        r_ab = coefficient(xs[a], xs[b], "pearson")[0]
        out.append(MetricDifference(rows[a].metric, rows[b].metric, human.criterion, level, "acc-eq", cals[a].value,
                                    cals[b].value, r_ab, cals[a].pairs, None, None, p, n_resamples, used))  # fmt: skip
    return tuple(out)
