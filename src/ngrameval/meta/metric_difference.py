"""Is one metric's correlation with people significantly higher than another's, on the same points?

* **Williams' test** (Williams 1959; Steiger 1980, eq. 3; used by WMT since Graham & Baldwin 2014) for two
  dependent Pearson correlations sharing the human side: with ``r12 = r(m1, h)``, ``r13 = r(m2, h)``,
  ``r23 = r(m1, m2)`` over ``n`` points and ``K = 1 - r12^2 - r13^2 - r23^2 + 2 r12 r13 r23``::

      t = (r12 - r13) sqrt((n - 1)(1 + r23)) / sqrt(2 K (n - 1)/(n - 3) + (r12 + r13)^2 / 4 (1 - r23)^3)

  Student's t with ``n - 3`` degrees of freedom; one-sided p for "m1 correlates more strongly".
* **Paired permutation test** (Deutsch et al. 2021; any coefficient): both metrics are z-normalised over
  the points (so swapping them is meaningful; r, rho and tau are unchanged by it), then in each of R trials
  every point's two metric values are swapped with probability 1/2; ``p = (c + 1)/(R + 1)`` with ``c`` the
  trials whose difference ``c(m1', h) - c(m2', h)`` reaches the observed one (one-sided, as Williams').

Each pair is ordered so ``metric_a`` has the higher correlation: the tests ask whether it is really higher.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from scipy import stats

from ngrameval import progress as _progress
from ngrameval.errors import ConfigError, InputError
from ngrameval.meta.correlate import HumanScores, coefficient, points
from ngrameval.meta.resample import FloatArray, resolve_seed
from ngrameval.meta.significance import DEFAULT_SEED
from ngrameval.ngrams.stats import MetricRows


def williams_test(r12: float, r13: float, r23: float, n: int) -> tuple[float, float]:
    """(t, one-sided p) of Williams' test that ``r12 > r13`` (see the module docstring).

    >>> t, p = williams_test(0.4, 0.5, 0.1, 103)
    >>> round(t, 2), round(2 * min(p, 1 - p), 2)
    (-0.89, 0.37)
    """
    if n <= 3:
        raise InputError(f"Williams' test needs more than 3 points, got {n}")
    k = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    den = 2 * k * (n - 1) / (n - 3) + (r12 + r13) ** 2 / 4 * (1 - r23) ** 3
    if den <= 0:  # the two metrics are identical on these points (r23 = 1): no difference to test
        return 0.0, 0.5
    t = (r12 - r13) * math.sqrt((n - 1) * (1 + r23)) / math.sqrt(den)
    return float(t), float(stats.t.sf(t, n - 3))


def _zscore(x: FloatArray) -> FloatArray:
    centred: FloatArray = x - x.mean()
    sd = float(x.std())
    return centred / sd if sd > 0 else centred


def _pearson_rows(a: FloatArray, y: FloatArray) -> FloatArray:
    """Pearson r of every row of ``a`` with ``y`` (NaN for a constant row)."""
    ac = a - a.mean(axis=1, keepdims=True)
    yc = y - y.mean()
    with np.errstate(invalid="ignore", divide="ignore"):
        out: FloatArray = np.divide(ac @ yc, np.linalg.norm(ac, axis=1) * np.linalg.norm(yc))
    return out


_KENDALL_PAIRS = 5000  # up to this many point pairs (n ~ 100), Kendall's tau of all trials at once; beyond, per trial
_BLOCK = 1 << 21  # sign-matrix elements per block of trials (16 MB)


def _kendall_rows(a: FloatArray, y: FloatArray, variant: str) -> FloatArray:
    """Kendall's tau-b or tau-c of every row of ``a`` with ``y``, as ``scipy.stats.kendalltau`` computes it:
    ``S = sum_{i<j} sign(a_i - a_j) sign(y_i - y_j)``; b: ``S / sqrt(n_a) / sqrt(n_y)`` (pairs untied on each
    side); c: ``2 S / (n^2 (m - 1) / m)``, ``m`` the fewer distinct values of the two sides. Rows go in blocks
    so memory stays bounded whatever the number of trials."""
    i, j = np.triu_indices(len(y), 1)
    sy = np.sign(y[i] - y[j])
    s, untied = np.empty(len(a)), np.empty(len(a))
    step = max(1, _BLOCK // max(len(i), 1))
    for lo in range(0, len(a), step):
        sx = np.sign(a[lo : lo + step, i] - a[lo : lo + step, j])
        s[lo : lo + step], untied[lo : lo + step] = sx @ sy, np.abs(sx).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        if variant == "b":
            out: FloatArray = s / np.sqrt(untied) / np.sqrt(np.abs(sy).sum())
            return out
        distinct = 1 + np.count_nonzero(np.diff(np.sort(a, axis=1), axis=1), axis=1)
        m = np.minimum(distinct, len(np.unique(y)))
        out = 2 * s / (len(y) ** 2 * (m - 1) / m)
    return out


def _trial_coefficients(a: FloatArray, y: FloatArray, name: str) -> FloatArray:
    """The coefficient of every row (trial) of ``a`` with ``y``, vectorised where it pays."""
    if name in ("pearson", "r2"):
        r = _pearson_rows(a, y)
        return r**2 if name == "r2" else r
    if name == "spearman":  # Pearson's r of the average ranks
        return _pearson_rows(stats.rankdata(a, axis=1), stats.rankdata(y))
    if name == "accuracy":  # mt-metrics-eval's Agreement: sign(a_i - a_j) == sign(y_i - y_j) over all pairs
        i, j = np.triu_indices(len(y), 1)
        sy, out = np.sign(y[i] - y[j]), np.empty(len(a))
        step = max(1, _BLOCK // max(len(i), 1))
        for lo in range(0, len(a), step):
            out[lo : lo + step] = (np.sign(a[lo : lo + step, i] - a[lo : lo + step, j]) == sy).mean(axis=1)
        return out
    if name.startswith("kendall") and len(y) * (len(y) - 1) // 2 <= _KENDALL_PAIRS:
        return _kendall_rows(a, y, name[-1])
    return np.array([coefficient(u, y, name)[0] for u in a])


def permutation_test(
    x1: FloatArray, x2: FloatArray, y: FloatArray, rng: np.random.Generator, *, coefficient_name: str = "pearson",
    n_resamples: int = 1000,
) -> float:  # fmt: skip
    """One-sided p that ``x1`` correlates more strongly with ``y`` than ``x2`` (paired permutation test)."""
    z1, z2 = _zscore(x1), _zscore(x2)
    observed = coefficient(z1, y, coefficient_name)[0] - coefficient(z2, y, coefficient_name)[0]
    if math.isnan(observed):
        return math.nan
    swap = rng.random((n_resamples, len(y))) < 0.5
    a, b = np.where(swap, z2, z1), np.where(swap, z1, z2)
    delta = _trial_coefficients(a, y, coefficient_name) - _trial_coefficients(b, y, coefficient_name)
    # a trial "reaches" the observed difference up to rounding (a swap of nothing reproduces it exactly)
    count = int(np.sum(delta >= observed - 1e-12))
    return (count + 1) / (n_resamples + 1)


@dataclass(frozen=True)
class MetricDifference:
    """``metric_a`` (the higher correlation) vs ``metric_b`` against ``criterion`` on ``n`` shared points."""

    metric_a: str
    metric_b: str
    criterion: str
    level: str
    coefficient: str
    value_a: float
    value_b: float
    r_ab: float  # Pearson r between the two metrics on the points
    n: int
    williams_t: float | None  # for the Pearson coefficient only
    williams_p: float | None
    permutation_p: float
    n_resamples: int
    seed: int


def compare_correlations(
    rows: Sequence[MetricRows],
    human: HumanScores,
    *,
    level: str = "system",
    coefficient_name: str = "pearson",
    n_resamples: int = 1000,
    seed: int | None = DEFAULT_SEED,
) -> tuple[MetricDifference, ...]:
    """Williams' test (Pearson) and the permutation test for every pair of metrics of ``rows``."""
    if len(rows) < 2:
        raise ConfigError("comparing correlations needs at least two metrics")
    if n_resamples < 1:
        raise ConfigError(f"need n_resamples >= 1, got {n_resamples}")
    used = resolve_seed(seed)
    xs, y = points(rows, human, level)
    if len(y) <= 3:
        raise InputError(f"{human.criterion}: {len(y)} points at {level} level; comparing correlations needs > 3")
    values = [coefficient(x, y, coefficient_name)[0] for x in xs]
    out = []
    for i, j in _progress.tracked(list(combinations(range(len(rows)), 2)), "metric pairs", "pair"):
        a, b = (i, j) if values[i] >= values[j] or math.isnan(values[j]) else (j, i)
        r_ab = coefficient(xs[a], xs[b], "pearson")[0]
        t = p = None
        if coefficient_name == "pearson" and not any(math.isnan(v) for v in (values[a], values[b], r_ab)):
            t, p = williams_test(values[a], values[b], r_ab, len(y))
        # each pair its own generator from (seed, pair): the result of a pair does not depend on the others
        rng = np.random.default_rng([used, i, j])
        perm = permutation_test(xs[a], xs[b], y, rng, coefficient_name=coefficient_name, n_resamples=n_resamples)
        out.append(MetricDifference(rows[a].metric, rows[b].metric, human.criterion, level, coefficient_name,
                                    values[a], values[b], r_ab, len(y), t, p, perm, n_resamples, used))  # fmt: skip
    return tuple(out)
