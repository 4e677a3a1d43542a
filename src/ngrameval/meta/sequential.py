"""When is a human ranking settled? Always-valid confidence sequences for a study watched while it runs.

Each system's ratings are taken as independent draws with mean ``μ_s`` from a known range ``[lo, hi]`` (so
``σ = (hi - lo)/2``-sub-Gaussian, Hoeffding's lemma). For ``t`` ratings with mean ``x̄_t`` the two-sided
**normal-mixture confidence sequence** (Robbins 1970; Howard, Ramdas, McAuliffe & Sekhon 2021, "Time-uniform,
nonparametric, nonasymptotic confidence sequences", Ann. Statist. 49(2), eq. (14) with a N(0, 1/ρ) mixture)

    |x̄_t - μ| <= sqrt((t σ² + ρ) log((t σ² + ρ) / (ρ a²))) / t

holds for **all** ``t`` at once with probability ``>= 1 - a`` (Ville's inequality on the mixture martingale), so
the study may be looked at after every rating and stopped at any data-dependent time. ``ρ`` makes the boundary
tightest at ``t_opt`` ratings: ``ρ = t_opt σ² / (-W_{-1}(-a²/e) - 1)`` (Howard et al. 2021, eq. (15); ``W_{-1}``
the lower Lambert branch). Each of the ``K`` systems gets ``a = α / K`` (Bonferroni), so with probability
``>= 1 - α`` every interval covers its mean at every look; then two systems of equal means never have disjoint
intervals. An adjacent pair of the current ranking is **settled** when the two intervals are disjoint, so
the chance of ever declaring a pair of truly equal systems settled is at most ``α``, however often one looks.
**Clusters**: the ranking cut between settled adjacent pairs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from ngrameval.errors import ConfigError, InputError
from ngrameval.meta.resample import FloatArray


@dataclass(frozen=True)
class SystemStanding:
    """One system's ``mean`` of ``n`` ratings and its always-valid interval ``[low, high]``."""

    system: str
    mean: float
    n: int
    low: float
    high: float
    cluster: int


@dataclass(frozen=True)
class AdjacentPair:
    """Systems at ranks ``k`` and ``k + 1``; ``settled`` when their intervals are disjoint."""

    better: str
    worse: str
    difference: float
    settled: bool


@dataclass(frozen=True)
class SequentialStatus:
    """The ranking (best first), adjacent pairs, whether all are settled, and the procedure's parameters."""

    ranking: tuple[SystemStanding, ...]
    pairs: tuple[AdjacentPair, ...]
    all_settled: bool
    alpha: float
    low: float
    high: float
    t_opt: int
    method: str = "normal-mixture confidence sequence (Howard et al. 2021), Bonferroni over systems"


def mixture_rho(t_opt: float, sigma: float, a: float) -> float:
    """``ρ`` tightest at ``t_opt`` observations (Howard et al. 2021, eq. (15))."""
    from scipy.special import lambertw

    w = float(np.real(lambertw(-(a**2) / math.e, k=-1)))
    return t_opt * sigma**2 / (-w - 1.0)


def radius(n: FloatArray | int, sigma: float, rho: float, a: float) -> FloatArray:
    """Half-width of the normal-mixture CS of a mean after ``n`` observations (inf for ``n = 0``)."""
    v = np.asarray(n, dtype=np.float64) * sigma**2 + rho
    with np.errstate(divide="ignore"):
        return np.sqrt(v * np.log(v / (rho * a**2))) / np.asarray(n, dtype=np.float64)


def sequential_status(
    ratings: Mapping[str, Sequence[float]],
    low: float,
    high: float,
    alpha: float = 0.05,
    t_opt: int = 100,
) -> SequentialStatus:
    """The current ranking, its always-valid intervals and which adjacent pairs are settled (module docstring).
    ``ratings``: every system's scores so far, each within ``[low, high]``; ``t_opt``: the ratings per system
    at which the intervals should be tightest (the planned size)."""
    summary = {}
    for name, values in ratings.items():
        x = np.asarray(values, dtype=np.float64)
        if x.ndim != 1 or not np.isfinite(x).all():
            raise InputError(f"{name}: ratings must be a list of finite numbers")
        if len(x) and (x.min() < low or x.max() > high):
            raise InputError(f"{name}: a rating lies outside the stated range [{low}, {high}]")
        summary[name] = (len(x), float(x.sum()))
    return status_from_sums(summary, low, high, alpha, t_opt)


def status_from_sums(
    sums: Mapping[str, tuple[int, float]],
    low: float,
    high: float,
    alpha: float = 0.05,
    t_opt: int = 100,
) -> SequentialStatus:
    """:func:`sequential_status` from each system's number of ratings and their sum (the sufficient statistics
    of the boundary: a running study keeps these, not the ratings); the ratings are taken to lie in
    ``[low, high]`` (a sum whose mean does not is refused)."""
    if not 0 < alpha < 1:
        raise ConfigError(f"alpha must lie strictly between 0 and 1, got {alpha}")
    if not high > low:
        raise ConfigError(f"the score range needs low < high, got [{low}, {high}]")
    if t_opt < 1:
        raise ConfigError(f"t_opt must be at least 1, got {t_opt}")
    if len(sums) < 2:
        raise InputError("a ranking needs at least 2 systems")
    a = alpha / len(sums)
    sigma = (high - low) / 2
    rho = mixture_rho(t_opt, sigma, a)
    rows = []
    for name, (n, total) in sums.items():
        if n < 0 or not math.isfinite(total):
            raise InputError(f"{name}: needs a count >= 0 and a finite sum, got ({n}, {total})")
        mean = total / n if n else math.nan
        if n and not low - 1e-9 * (high - low) <= mean <= high + 1e-9 * (high - low):
            raise InputError(f"{name}: the mean rating {mean} lies outside the stated range [{low}, {high}]")
        r = float(radius(n, sigma, rho, a)) if n else math.inf
        lo, hi = (max(low, mean - r), min(high, mean + r)) if n else (low, high)
        rows.append((name, mean, n, lo, hi))
    rows.sort(key=lambda t: (-t[1] if not math.isnan(t[1]) else math.inf, t[0]))
    pairs = [AdjacentPair(b[0], w[0], b[1] - w[1], b[3] > w[4]) for b, w in pairwise(rows)]
    cluster, standing = 1, []
    for k, row in enumerate(rows):
        if k and pairs[k - 1].settled:
            cluster += 1
        standing.append(SystemStanding(*row, cluster=cluster))
    return SequentialStatus(tuple(standing), tuple(pairs), all(p.settled for p in pairs), alpha, low, high, t_opt)


def false_settlement_rate(
    n_systems: int,
    n_max: int,
    runs: int,
    rng: np.random.Generator,
    alpha: float = 0.05,
    look_every: int = 1,
    t_opt: int = 100,
) -> float:
    """Share of ``runs`` simulated studies of ``n_systems`` truly equal systems in which some two systems ever
    have disjoint intervals (a superset of the runs in which :func:`sequential_status` declares an adjacent pair
    settled, the error it bounds by ``alpha``), looking after every ``look_every`` ratings per system up to
    ``n_max``. Ratings are 0 or 1 with probability 1/2 each: the largest variance the range allows."""
    a = alpha / n_systems
    sigma = 0.5
    rho = mixture_rho(t_opt, sigma, a)
    looks = np.arange(look_every, n_max + 1, look_every, dtype=np.int64)
    r = radius(looks.astype(np.float64), sigma, rho, a)
    hits = 0
    for _ in range(runs):
        x = rng.integers(0, 2, size=(n_systems, n_max)).astype(np.float64)
        means = (np.cumsum(x, axis=1)[:, looks - 1]) / looks
        lo, hi = means - r, means + r
        # disjoint intervals of some pair at some look: max lower bound above min upper bound
        if np.any(lo.max(axis=0) > hi.min(axis=0)):
            hits += 1
    return hits / runs
