"""mt-metrics-eval's pairwise statistics (Freitag et al., github.com/google-research/mt-metrics-eval, ``stats.py``).

* **Pairwise accuracy** (Kocmi et al. 2021, system level): the share of system pairs that the metric orders as
  people do, ``sum_{i<j} [sign(x_i - x_j) = sign(y_i - y_j)] / pairs`` over the judged systems. A pair tied by
  people agrees only if the metric ties it too (mt-metrics-eval's ``Agreement``). Over several sets (language
  pairs), pooled: agreements and pairs are summed over the sets (``CompareMetricsWithGlobalAccuracy``).
* **Tie-calibrated pairwise accuracy** ``acc*_eq`` (Deutsch et al. 2023, "Ties Matter"; ``KendallWithTiesOpt``
  with variant ``acc23``): a pair is a metric tie when ``|x_i - x_j| <= epsilon``; a pair counts as correct when
  both sides order it the same way or both tie it: ``acc_eq = (C + T_xy) / pairs``. ``tau_eq`` is
  ``(C + T_xy - D - T_x - T_y) / pairs``. The value is averaged over groups (``item``: a segment across systems,
  as WMT23 does; ``system``; ``none``: one group of every judged cell) at one epsilon for all groups, chosen
  among 0 and every pair's ``|x_i - x_j|`` to maximise the average (the smallest such epsilon on a tie).
* **Pairs permutation test** (``PairwisePermutationSigDiff``): each metric at its own calibrated epsilon; in
  each trial every pair's outcome is swapped between the two metrics with probability 1/2.

Counts are exact integers wherever the common denominator fits in 62 bits, so the chosen epsilon does not
depend on rounding. Randomness is a seeded :class:`numpy.random.Generator`; p-values are ``(c + 1)/(R + 1)``
as ngrameval's other permutation tests (mt-metrics-eval: ``c / R`` from ``np.random``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import reduce

import numpy as np
from numpy.typing import NDArray

from ngrameval.errors import ConfigError, InputError
from ngrameval.meta.resample import FloatArray

IntArray = NDArray[np.int64]
GROUPINGS = ("none", "item", "system")
VARIANTS = ("acc", "tau")
MAX_PAIRS = 50_000_000  # pairs of one tie calibration (about 2 GB of working arrays)


def agreement(x: FloatArray, y: FloatArray) -> tuple[int, int]:
    """(agreeing pairs, pairs) among the points whose human score ``y`` is not NaN (mt-metrics-eval's
    ``Agreement``): a pair agrees when ``sign(x_i - x_j) == sign(y_i - y_j)``."""
    keep = ~np.isnan(y)
    x, y = np.asarray(x, dtype=np.float64)[keep], np.asarray(y, dtype=np.float64)[keep]
    i, j = np.triu_indices(len(y), 1)
    return int(np.count_nonzero(np.sign(x[i] - x[j]) == np.sign(y[i] - y[j]))), len(i)


def pairwise_accuracy(x: FloatArray, y: FloatArray) -> float:
    """System-level pairwise accuracy (Kocmi et al. 2021): agreeing pairs / pairs (NaN for fewer than 2 points).

    >>> pairwise_accuracy(np.array([1.0, 2.0, 3.0]), np.array([0.1, 0.3, 0.2]))
    0.6666666666666666
    """
    agree, pairs = agreement(x, y)
    return agree / pairs if pairs else math.nan


def pooled_accuracy(xs: list[FloatArray], ys: list[FloatArray]) -> float:
    """Pairwise accuracy over several sets: agreements and pairs summed over the sets (pairs never cross sets)."""
    counts = [agreement(x, y) for x, y in zip(xs, ys, strict=True)]
    pairs = sum(p for _, p in counts)
    return sum(a for a, _ in counts) / pairs if pairs else math.nan


@dataclass(frozen=True)
class PairTable:
    """Every pair of one metric's judged points, within its group: ``diff = |x_i - x_j|`` (ascending),
    ``group`` of the pair, ``plain`` its outcome (1 correct, 0 not; tau: +1/-1) untied by calibration,
    ``tied`` its outcome once tied; ``order`` maps a sorted pair back to its canonical position (groups in
    order, ``i < j`` within a group) so two metrics' tables can be paired; ``sizes`` = pairs per group."""

    variant: str
    diff: FloatArray
    group: IntArray
    plain: IntArray
    tied: IntArray
    order: IntArray
    sizes: IntArray


def _groups(x: FloatArray, y: FloatArray, grouping: str) -> list[tuple[FloatArray, FloatArray]]:
    if grouping not in GROUPINGS:
        raise ConfigError(f"grouping must be one of {', '.join(GROUPINGS)}, got {grouping!r}")
    x, y = np.atleast_2d(np.asarray(x, dtype=np.float64)), np.atleast_2d(np.asarray(y, dtype=np.float64))
    if x.shape != y.shape:
        raise InputError(f"metric scores {x.shape} and human scores {y.shape} differ in shape")
    if grouping == "none":
        keep = ~np.isnan(y)
        return [(x[keep], y[keep])]
    xs, ys = (x.T, y.T) if grouping == "item" else (x, y)
    return [(a[~np.isnan(b)], b[~np.isnan(b)]) for a, b in zip(xs, ys)]


def pair_table(x: FloatArray, y: FloatArray, grouping: str = "item", variant: str = "acc") -> PairTable:
    """The pairs of ``x`` (metric) and ``y`` (human, NaN = not judged), both ``(n_systems, n_segments)`` (or
    1-d: one group), grouped as ``grouping`` says; groups with fewer than two judged points have no pair."""
    if variant not in VARIANTS:
        raise ConfigError(f"variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
    parts = [g for g in _groups(x, y, grouping) if len(g[1]) > 1]
    total = sum(len(b) * (len(b) - 1) // 2 for _, b in parts)
    if total > MAX_PAIRS:
        raise InputError(f"{total:,} pairs to calibrate ties over (at most {MAX_PAIRS:,}): group by item")
    if not parts:
        empty = np.zeros(0, dtype=np.int64)
        return PairTable(variant, np.zeros(0), empty, empty, empty, empty, empty)
    diffs, hties, concs, groups = [], [], [], []
    for g, (a, b) in enumerate(parts):
        i, j = np.triu_indices(len(b), 1)
        dx, dy = a[i] - a[j], b[i] - b[j]
        diffs.append(np.abs(dx))
        hties.append(dy == 0)
        concs.append(dx * dy > 0)
        groups.append(np.full(len(i), g, dtype=np.int64))
    diff, htie, conc, group = (np.concatenate(v) for v in (diffs, hties, concs, groups))
    mtie = diff == 0
    if variant == "acc":  # correct: concordant, or tied on both sides
        plain = (conc | (htie & mtie)).astype(np.int64)
        tied = htie.astype(np.int64)
    else:
        plain = np.where(conc | (htie & mtie), 1, -1).astype(np.int64)
        tied = np.where(htie, 1, -1).astype(np.int64)
    order = np.argsort(diff, kind="stable")
    sizes = np.bincount(group, minlength=len(parts)).astype(np.int64)
    return PairTable(variant, diff[order], group[order], plain[order], tied[order], order, sizes)


@dataclass(frozen=True)
class TieCalibration:
    """The calibrated statistic: ``value`` at ``epsilon`` averaged over ``groups`` groups of ``pairs`` pairs."""

    value: float
    epsilon: float
    groups: int
    pairs: int


def _weights(t: PairTable, counts: IntArray | None) -> tuple[NDArray[np.int64] | FloatArray, float]:
    """Per-pair weights (``count_g * L / size_g``, integers when they fit) and the denominator."""
    counts = np.ones(len(t.sizes), dtype=np.int64) if counts is None else counts
    scale = reduce(math.lcm, (int(s) for s in np.unique(t.sizes)), 1)
    if scale * int(counts.max(initial=1)) * max(len(t.diff), 1) < 1 << 62:
        per_group = counts * (scale // t.sizes)
        return per_group[t.group], float(scale * int(counts.sum()))
    return (counts / t.sizes)[t.group], float(counts.sum())


def calibrate(t: PairTable, counts: IntArray | None = None) -> TieCalibration:
    """The best average of the variant over the groups (each group weighted by ``counts``, default 1) and the
    smallest epsilon reaching it, searched over 0 and every pair's difference (as ``tau_optimization``)."""
    if not len(t.diff):
        return TieCalibration(math.nan, 0.0, 0, 0)
    w, den = _weights(t, counts)
    if not den:
        return TieCalibration(math.nan, 0.0, 0, 0)
    base = (t.plain * w).sum()
    totals = base + np.cumsum((t.tied - t.plain) * w)
    last = np.r_[t.diff[1:] != t.diff[:-1], True]  # the last pair of every distinct difference
    thresholds, values = t.diff[last], totals[last]
    if thresholds[0] > 0:  # epsilon 0 ties nothing new
        thresholds, values = np.r_[0.0, thresholds], np.r_[base, values]
    best = int(np.argmax(values))
    groups = int(np.count_nonzero(counts)) if counts is not None else len(t.sizes)
    return TieCalibration(float(values[best] / den), float(thresholds[best]), groups, len(t.diff))


def tie_calibrated(x: FloatArray, y: FloatArray, grouping: str = "item", variant: str = "acc") -> TieCalibration:
    """``acc*_eq`` (or ``tau*_eq``) of metric ``x`` against human ``y`` with the optimal epsilon.

    >>> tie_calibrated(np.array([[1.0, 1.1, 3.0]]), np.array([[0.0, 0.0, 1.0]]), "none").value
    1.0
    """
    return calibrate(pair_table(x, y, grouping, variant))


def outcomes(t: PairTable, epsilon: float) -> FloatArray:
    """Each pair's weighted outcome at ``epsilon`` in canonical order; their sum is the statistic."""
    w, den = _weights(t, None)
    got = np.where(t.diff <= epsilon, t.tied, t.plain) * w / den
    out = np.empty(len(got))
    out[t.order] = got
    return out


def bootstrap_calibrated(t: PairTable, n_resamples: int, rng: np.random.Generator) -> FloatArray:
    """The calibrated statistic of ``n_resamples`` bootstrap resamples of the groups (epsilon re-chosen in each)."""
    g = len(t.sizes)
    out = np.empty(n_resamples)
    for k in range(n_resamples):
        counts = np.bincount(rng.integers(0, g, size=g), minlength=g).astype(np.int64)
        out[k] = calibrate(t, counts).value
    return out


def pairs_permutation_test(
    a: FloatArray, b: FloatArray, rng: np.random.Generator, n_resamples: int = 1000
) -> tuple[float, float]:
    """(observed ``sum(a) - sum(b)``, one-sided p that ``a`` is higher) of two metrics' per-pair outcomes
    (:func:`outcomes`, same pairs in the same order): each trial swaps every pair's outcomes with probability
    1/2; ``p = (c + 1)/(R + 1)``, ``c`` the trials whose difference reaches the observed one."""
    if a.shape != b.shape:
        raise InputError("the two metrics were calibrated on different pairs")
    d = a - b
    observed = float(d.sum())
    count, step = 0, max(1, (1 << 22) // max(len(d), 1))
    for start in range(0, n_resamples, step):
        size = min(step, n_resamples - start)
        sign = 1.0 - 2.0 * (rng.random((size, len(d))) < 0.5)
        count += int(np.count_nonzero(sign @ d >= observed - 1e-12))
    return observed, (count + 1) / (n_resamples + 1)
