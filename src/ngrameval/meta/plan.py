"""Plan a human evaluation before it runs: how many items and judges separate systems ``delta`` apart.

The model of one rating (system ``s``, item ``i``, judge ``j``)::

    y = mu_s + u_i + v_si + e_sij,   v_si ~ N(0, item_sd^2),   e_sij ~ N(0, judge_sd^2)

``u_i`` (what every system shares on an item) cancels in the paired tests over items, so it needs no value;
``item_sd`` is how much one system's score moves from item to item beyond that (system x item interaction),
``judge_sd`` the spread of the ratings of one output around its mean. With ``k`` judges per item and system the
analysis compares per-item means ``m_si = mu_s + v_si + mean_j e_sij``.

Each candidate design (``n`` items x ``k`` judges per item and system) is simulated ``n_sim`` times; every
simulated study is analysed with the test the analysis uses (:func:`ngrameval.meta.significance.compare`):
approximate randomisation (sign flips of the per-item differences, Noreen 1989) or the paired bootstrap
(Koehn 2004) over items on the per-system means, for all pairs, Holm-corrected (:func:`adjust_p`). The power
is the share of simulated studies in which every adjacent pair of truly different systems is significant at
``alpha``; its Monte-Carlo standard error is sqrt(p (1 - p) / n_sim). The chosen design is the one with the
fewest judgments (items x judges x systems) reaching the target power.

With a pilot, ``judge_sd`` is the pooled within-output SD of its ratings and ``item_sd`` comes from the
variance of the per-item differences between systems: var(m_ai - m_bi) = 2 item_sd^2 + 2 judge_sd^2 / k.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ngrameval.errors import InputError
from ngrameval.io.records import Judgment
from ngrameval.meta.resample import bootstrap_counts, resolve_seed, swap_masks
from ngrameval.meta.significance import adjust_p

__all__ = [
    "TESTS",
    "DesignPower",
    "PilotNoise",
    "StudyPlan",
    "pilot_noise",
    "plan_study",
    "simulate_power",
    "studies_power",
]

TESTS = ("ar", "bootstrap")
DEFAULT_ITEMS = (10, 20, 30, 40, 50, 75, 100, 150, 200, 300, 400, 500, 750, 1000)
DEFAULT_JUDGES = (1, 2, 3)
_CHUNK = 1 << 22  # resample x (study x pair) entries per matrix product

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class PilotNoise:
    """What a pilot says about the noise: ``judge_sd``, ``item_sd`` (see the module), the systems and their
    pilot means, and how much the estimate rests on (``outputs`` rated more than once, ``items`` shared)."""

    systems: tuple[str, ...]
    means: tuple[float, ...]
    judge_sd: float
    item_sd: float
    outputs: int
    items: int
    cov: tuple[tuple[float, ...], ...] | None = None


@dataclass(frozen=True)
class DesignPower:
    """One candidate design: ``items`` x ``judges`` per item and system; ``latin`` the Latin-square size
    (the number of systems) when the study assigns by Latin squares, then ``judges * latin`` judges each rate
    every item once; ``judgments`` in all; the simulated ``power`` and its Monte-Carlo ``se``."""

    items: int
    judges: int
    latin: int | None
    judgments: int
    power: float
    se: float


@dataclass(frozen=True)
class StudyPlan:
    """The designs tried and the chosen one (``None`` if none reaches ``target``)."""

    designs: tuple[DesignPower, ...]
    chosen: DesignPower | None
    target: float
    delta: float
    alpha: float
    test: str
    means: tuple[float, ...]
    judge_sd: float
    item_sd: float
    n_sim: int
    n_resamples: int
    seed: int
    notes: tuple[str, ...] = ()

    def table(self) -> str:
        """The designs as a plain-text table, then the chosen one in a sentence."""
        lines = [f"{'items':>6} {'judges':>6} {'latin':>5} {'judgments':>9} {'power':>6} {'mc se':>6}"]
        for d in self.designs:
            mark = "  <- chosen" if d == self.chosen else ""
            latin = str(d.latin) if d.latin else "-"
            lines.append(f"{d.items:>6} {d.judges:>6} {latin:>5} {d.judgments:>9} {d.power:>6.3f} {d.se:>6.3f}{mark}")
        lines += [*(f"note: {n}" for n in self.notes), self.summary()]
        return "\n".join(lines) + "\n"

    def summary(self) -> str:
        """One line: the chosen design and what it gives, or that none of the designs tried reaches the target."""
        head = (
            f"{self.test}, Holm over all pairs, alpha {self.alpha:g}, delta {self.delta:g}, judge sd "
            f"{self.judge_sd:.3g}, item sd {self.item_sd:.3g}, {self.n_sim} simulated studies, seed {self.seed}"
        )
        c = self.chosen
        if c is None:
            best = max(self.designs, key=lambda d: d.power)
            return f"no design tried reaches power {self.target:g} (best {best.power:.3f}); {head}"
        latin = f" (Latin squares of {c.latin}: {c.judges * c.latin} judges rate every item once)" if c.latin else ""
        return (
            f"plan: {c.items} items x {c.judges} judges per item and system{latin}, {c.judgments} judgments: "
            f"power {c.power:.3f} +- {c.se:.3f} >= {self.target:g}; {head}"
        )


def _finite_positive(name: str, value: float, zero: bool = False) -> float:
    v = float(value)
    if not math.isfinite(v) or v < 0 or (v == 0 and not zero):
        raise InputError(f"{name} must be a finite number {'>= 0' if zero else '> 0'}, got {value!r}")
    return v


def pilot_noise(judgments: Sequence[Judgment], criterion: str | None = None) -> PilotNoise:
    """Estimate ``judge_sd`` and ``item_sd`` from pilot judgments (one criterion; ``criterion`` picks it when the
    pilot has several). Needs a segment column and at least two systems sharing two items. A pilot that rates
    every output once (``outputs == 0``) cannot tell judge from item noise: ``judge_sd`` is 0 and ``item_sd``
    holds both, so it plans studies with as many ratings per output as the pilot had."""
    crits = sorted({j.criterion for j in judgments})
    if not judgments:
        raise InputError("pilot: no judgments")
    if criterion is None:
        if len(crits) > 1:
            raise InputError(f"pilot: several criteria ({', '.join(crits)}); choose one (criterion)")
        criterion = crits[0]
    elif criterion not in crits:
        raise InputError(f"pilot: no criterion {criterion!r}; found {', '.join(crits)}")
    cells: dict[tuple[str, str], list[float]] = defaultdict(list)
    for j in judgments:
        if j.criterion != criterion:
            continue
        if j.segment is None:
            raise InputError(f"{j.where}: pilot judgments need an item (segment) column")
        cells[(j.system, j.segment)].append(j.score)
    systems = sorted({s for s, _ in cells})
    if len(systems) < 2:
        raise InputError(f"pilot: need at least two systems, got {len(systems)}")
    within = [(len(v) - 1, float(np.var(v, ddof=1))) for v in cells.values() if len(v) > 1]
    dof = sum(d for d, _ in within)
    judge_var = sum(d * v for d, v in within) / dof if dof else 0.0  # no repeats: all noise is item noise
    items = sorted({i for _, i in cells})
    by_system = {s: {i: cells[(s, i)] for i in items if (s, i) in cells} for s in systems}
    diff_vars, inv_k = [], []
    for a in range(len(systems)):
        for b in range(a + 1, len(systems)):
            shared = sorted(by_system[systems[a]].keys() & by_system[systems[b]].keys())
            if len(shared) < 2:
                continue
            ca, cb = by_system[systems[a]], by_system[systems[b]]
            d = [float(np.mean(ca[i]) - np.mean(cb[i])) for i in shared]
            diff_vars.append(float(np.var(d, ddof=1)))
            inv_k.append(float(np.mean([1 / len(ca[i]) + 1 / len(cb[i]) for i in shared])))
    if not diff_vars:
        raise InputError("pilot: no two systems share two items; item noise cannot be estimated")
    item_var = max(0.0, (float(np.mean(diff_vars)) - judge_var * float(np.mean(inv_k))) / 2)
    means = tuple(float(np.mean([x for v in by_system[s].values() for x in v])) for s in systems)
    complete = [i for i in items if all(i in by_system[s] for s in systems)]
    cov = None
    if len(complete) > 2:  # the systems' item scores vary together: keep the pilot's covariance
        m = np.array([[np.mean(by_system[s][i]) for i in complete] for s in systems])
        k_inv = np.array([np.mean([1 / len(by_system[s][i]) for i in complete]) for s in systems])
        c = np.cov(m) - np.diag(judge_var * k_inv)
        w, v = np.linalg.eigh(c)
        c = (v * np.maximum(w, 0.0)) @ v.T  # the nearest covariance (no negative variance)
        cov = tuple(tuple(float(x) for x in row) for row in c)
    return PilotNoise(tuple(systems), means, math.sqrt(judge_var), math.sqrt(item_var), len(within), len(items), cov)


def _adjacent(means: FloatArray) -> tuple[list[tuple[int, int]], NDArray[np.intp]]:
    """All pairs (a < b) and the indices of the pairs of systems adjacent in the true order that differ."""
    n = len(means)
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n)]
    where = {p: k for k, p in enumerate(pairs)}
    order = np.argsort(means, kind="stable").tolist()
    adj = [where[(min(x, y), max(x, y))] for x, y in itertools.pairwise(order) if means[y] - means[x] > 0]
    return pairs, np.array(adj, dtype=np.intp)


def _p_values(d: FloatArray, test: str, n_resamples: int, rng: np.random.Generator) -> FloatArray:
    """Two-sided p-values of ``d`` (studies x items), every row a paired sample of per-item differences, all rows
    tested with the same resamples: AR flips the signs of items with probability 1/2; the bootstrap draws items
    with replacement and asks how often |mean*| - mean|mean*| reaches |mean| (as :func:`compare`)."""
    n = d.shape[1]
    observed = np.abs(d.mean(axis=1))
    if test == "ar":
        w = 1.0 - 2.0 * swap_masks(rng, n_resamples, n).astype(np.float64)
    else:
        w = bootstrap_counts(rng, n_resamples, n).astype(np.float64)
    w /= n
    reached = np.zeros(len(d), dtype=np.int64)
    step = max(1, _CHUNK // max(n_resamples, 1))
    for lo in range(0, len(d), step):
        stat = np.abs(w @ d[lo : lo + step].T)  # resamples x studies
        if test == "bootstrap":
            stat -= stat.mean(axis=0)
        obs = observed[lo : lo + step]
        reached[lo : lo + step] = (stat >= obs - 1e-12 * np.maximum(obs, 1.0)).sum(axis=0)
    return np.asarray((reached + 1.0) / (n_resamples + 1.0), dtype=np.float64)


def simulate_power(
    means: Sequence[float],
    judge_sd: float,
    item_sd: float,
    items: int,
    judges: int,
    *,
    alpha: float = 0.05,
    test: str = "ar",
    n_sim: int = 400,
    n_resamples: int | None = None,
    rng: np.random.Generator | None = None,
    cov: Sequence[Sequence[float]] | None = None,
) -> tuple[float, float]:
    """(power, Monte-Carlo SE) of one design under the module's model, or with ``cov`` (systems x systems) the
    covariance of the systems' item scores (a pilot's) in place of ``item_sd``: the share of ``n_sim`` simulated studies
    whose Holm-corrected test separates every adjacent pair of truly different systems."""
    mu = np.asarray(means, dtype=np.float64)
    rng = rng or np.random.default_rng()
    if cov is None:
        noise = math.sqrt(item_sd**2 + judge_sd**2 / judges)
        studies = mu[None, :, None] + noise * rng.standard_normal((n_sim, len(mu), items))
    else:
        c = np.asarray(cov, dtype=np.float64) + np.eye(len(mu)) * judge_sd**2 / judges
        w, v = np.linalg.eigh(c)
        root = v * np.sqrt(np.maximum(w, 0.0))  # root @ root.T == c
        studies = mu[None, :, None] + np.einsum("st,rti->rsi", root, rng.standard_normal((n_sim, len(mu), items)))
    return studies_power(studies, mu, alpha=alpha, test=test, n_resamples=n_resamples, rng=rng)


def studies_power(
    studies: FloatArray,
    means: Sequence[float] | FloatArray,
    *,
    alpha: float = 0.05,
    test: str = "ar",
    n_resamples: int | None = None,
    rng: np.random.Generator | None = None,
) -> tuple[float, float]:
    """(power, Monte-Carlo SE) over ``studies`` (studies x systems x items: per-item means of each system, drawn
    however): the share of studies whose paired test over items, Holm-corrected over all pairs, separates every
    adjacent pair of systems whose true ``means`` differ."""
    mu = np.asarray(means, dtype=np.float64)
    n_sim, n_sys, items = studies.shape
    if n_sys != len(mu):
        raise InputError(f"studies have {n_sys} systems but means has {len(mu)}")
    pairs, adj = _adjacent(mu)
    if len(adj) == 0:
        raise InputError("means: all systems are equal; nothing to separate")
    rng = rng or np.random.default_rng()
    b = n_resamples or default_resamples(len(pairs), alpha)
    a_idx = np.array([a for a, _ in pairs], dtype=np.intp)
    b_idx = np.array([b for _, b in pairs], dtype=np.intp)
    d = (studies[:, a_idx] - studies[:, b_idx]).reshape(n_sim * len(pairs), items)
    p = _p_values(d, test, b, rng).reshape(n_sim, len(pairs))
    hits = np.array([bool(np.all(adjust_p(row, "holm")[adj] <= alpha)) for row in p])
    power = float(hits.mean())
    return power, math.sqrt(power * (1 - power) / n_sim)


def default_resamples(n_pairs: int, alpha: float) -> int:
    """Enough resamples that Holm's smallest threshold alpha / pairs is reachable four times over (at least 199)."""
    return max(199, math.ceil(4 * n_pairs / alpha))


def plan_study(
    pilot: Sequence[Judgment] | None = None,
    *,
    delta: float,
    power: float = 0.8,
    alpha: float = 0.05,
    means: Sequence[float] | None = None,
    n_systems: int | None = None,
    judge_sd: float | None = None,
    item_sd: float | None = None,
    criterion: str | None = None,
    items: Sequence[int] | None = None,
    judges: Sequence[int] = DEFAULT_JUDGES,
    max_items: int | None = None,
    latin: bool = True,
    test: str = "ar",
    n_sim: int = 400,
    n_resamples: int | None = None,
    seed: int | None = None,
) -> StudyPlan:
    """Simulate candidate designs and choose the smallest that separates systems ``delta`` apart with ``power``.

    Either ``pilot`` judgments (noise from :func:`pilot_noise`, as many systems as the pilot has) or stated
    ``judge_sd`` and ``item_sd`` (given, they override the pilot's). The true means are ``means`` if given
    (``delta`` then only labels the plan), else ``n_systems`` (default: the pilot's) spaced ``delta`` apart.
    ``items`` defaults to a grid up to ``max_items``, refined between the last item count below the target power
    and the first reaching it; with ``latin`` the item counts are rounded up to multiples
    of the number of systems (the Latin-square size). ``seed`` (``None``: a fresh one, reported) seeds a numpy
    Generator; the designs are simulated in order from it.
    """
    delta = _finite_positive("delta", delta)
    if not 0 < power < 1:
        raise InputError(f"power must be between 0 and 1 (exclusive), got {power!r}")
    if not 0 < alpha < 1:
        raise InputError(f"alpha must be between 0 and 1 (exclusive), got {alpha!r}")
    if test not in TESTS:
        raise InputError(f"test must be one of {', '.join(TESTS)}, got {test!r}")
    if n_sim < 1 or (n_resamples is not None and n_resamples < 1):
        raise InputError(f"n_sim and n_resamples must be at least 1, got {n_sim}, {n_resamples}")
    noise = pilot_noise(pilot, criterion) if pilot is not None else None
    if noise is None and (judge_sd is None or item_sd is None):
        raise InputError("give pilot judgments, or both judge_sd and item_sd")
    j_sd = _finite_positive("judge_sd", judge_sd if judge_sd is not None else noise.judge_sd, zero=True)  # type: ignore[union-attr]
    i_sd = _finite_positive("item_sd", item_sd if item_sd is not None else noise.item_sd, zero=True)  # type: ignore[union-attr]
    if j_sd == 0 and i_sd == 0:
        raise InputError("judge_sd and item_sd are both 0: a study without noise needs no plan")
    if means is not None:
        mu = tuple(float(m) for m in means)
        if not all(math.isfinite(m) for m in mu):
            raise InputError(f"means must be finite numbers, got {list(means)}")
    else:
        k = n_systems if n_systems is not None else (len(noise.systems) if noise else 2)
        if k < 2:
            raise InputError(f"n_systems must be at least 2, got {k}")
        mu = tuple(delta * s for s in range(k))
        if noise is not None and k == len(noise.systems):  # the pilot's systems keep their order
            rank = np.argsort(np.argsort(noise.means, kind="stable"), kind="stable")
            mu = tuple(delta * float(r) for r in rank)
    if len(mu) < 2:
        raise InputError(f"means: need at least two systems, got {len(mu)}")
    notes: tuple[str, ...] = ()
    if noise is not None and noise.outputs == 0 and judge_sd is None:
        judges = (1,)
        notes = ("the pilot rates every output once: judge and item noise are not separable, so the plan keeps "
                 "one rating (as the pilot's) per item and system",)  # fmt: skip
    if any(j < 1 for j in judges) or not judges:
        raise InputError(f"judges must be counts >= 1, got {list(judges)}")
    square = len(mu) if latin else None
    grid = sorted({(math.ceil(n / square) * square if square else n) for n in (items or DEFAULT_ITEMS)})
    if max_items is not None:
        if max_items < 2:
            raise InputError(f"max_items must be at least 2, got {max_items}")
        top = max_items // square * square if square and max_items >= square else max_items
        grid = sorted({n for n in grid if n <= max_items} | ({top} if not items else set()))
    if grid[0] < 2:
        raise InputError(f"items must be at least 2, got {grid[0]}")
    cov = None
    if noise is not None and noise.cov is not None and item_sd is None and len(mu) == len(noise.systems):
        cov = noise.cov  # the pilot's item covariance, the systems in its order (sorted names)
    used_seed = resolve_seed(seed)
    rng = np.random.default_rng(used_seed)
    n_pairs = len(mu) * (len(mu) - 1) // 2
    b = n_resamples or default_resamples(n_pairs, alpha)
    designs: list[DesignPower] = []

    def run(n: int, k: int) -> DesignPower:
        pw, se = simulate_power(mu, j_sd, i_sd, n, k, alpha=alpha, test=test, n_sim=n_sim, n_resamples=b, rng=rng,
                                cov=cov)  # fmt: skip
        designs.append(DesignPower(n, k, square, n * k * len(mu), pw, se))
        return designs[-1]

    for k in sorted(set(judges)):
        tried = [run(n, k) for n in grid]
        first = next((t for t, d in enumerate(tried) if d.power >= power), None)
        if not items and first:  # refine the default grid between the last miss and the first hit
            step = square or 1
            lo, hi = tried[first - 1].items, tried[first].items
            for n in sorted({lo + (hi - lo) * q // 5 // step * step for q in range(1, 5)} - {lo, hi}):
                run(n, k)
    designs.sort(key=lambda d: (d.judgments, d.judges))
    reach = [d for d in designs if d.power >= power]
    return StudyPlan(
        tuple(designs),
        reach[0] if reach else None,
        power,
        delta,
        alpha,
        test,
        mu,
        j_sd,
        i_sd,
        n_sim,
        b,
        used_seed,
        notes,
    )
