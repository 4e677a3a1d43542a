"""Bradley–Terry system scores from side-by-side preferences (:mod:`ngrameval.io.preferences`).

Model (Bradley & Terry 1952): ``P(i beats j) = 1 / (1 + exp(-(θ_i - θ_j)))``. **Ties count as half a win for
each side** (the tie-as-half convention of Chatbot Arena's BT fit; not Davidson's (1970) tie parameter), so
``W_ij`` = wins of ``i`` over ``j`` plus half their ties and ``n_ij = W_ij + W_ji`` comparisons.
The MLE maximises ``sum_{i != j} W_ij log σ(θ_i - θ_j)``; it is found by Hunter's (2004) MM algorithm on
``p = exp(θ)``: ``p_i <- W_i / sum_j n_ij / (p_i + p_j)``, ``W_i = sum_j W_ij``, with ``θ`` centred to mean 0
after each step, to ``max |Δθ| < tol``. It exists iff the win graph (an edge ``i -> j`` when ``W_ij > 0``) is
strongly connected (Hunter 2004, assumption 1); otherwise an InputError names a system that never wins or
never loses against the rest. Intervals: percentile bootstrap over comparisons (rows drawn with replacement;
resamples without an MLE are dropped and counted). ``win_rate`` = (wins + ties/2) / comparisons of a system.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ngrameval.errors import ConfigError, InputError
from ngrameval.io.preferences import Preference
from ngrameval.meta.resample import FloatArray


@dataclass(frozen=True)
class BradleyTerry:
    """Scores ``theta`` (log-strengths, mean 0) of ``systems`` with bootstrap ``low``/``high`` at ``confidence``;
    ``win_rate`` and ``comparisons`` per system; ``resamples`` used and ``dropped`` (no MLE)."""

    systems: tuple[str, ...]
    theta: tuple[float, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]
    win_rate: tuple[float, ...]
    comparisons: tuple[int, ...]
    confidence: float
    resamples: int
    dropped: int
    seed: int | None
    iterations: int


def win_matrix(prefs: Sequence[Preference], systems: Sequence[str]) -> FloatArray:
    """``W[i, j]`` = wins of ``systems[i]`` over ``systems[j]`` plus half their ties."""
    ix = {s: k for k, s in enumerate(systems)}
    w = np.zeros((len(systems), len(systems)))
    for p in prefs:
        a, b = ix[p.system_a], ix[p.system_b]
        if p.winner == "a":
            w[a, b] += 1
        elif p.winner == "b":
            w[b, a] += 1
        else:
            w[a, b] += 0.5
            w[b, a] += 0.5
    return w


def _unreachable(w: FloatArray) -> int | None:
    """A system not reachable from system 0 along wins, or not reaching it (None: strongly connected)."""
    for m in (w > 0, (w > 0).T):
        seen = {0}
        todo = [0]
        while todo:
            k = todo.pop()
            for j in np.flatnonzero(m[k]):
                if int(j) not in seen:
                    seen.add(int(j))
                    todo.append(int(j))
        if len(seen) < len(w):
            return min(set(range(len(w))) - seen)
    return None


def fit(w: FloatArray, tol: float = 1e-10, max_iter: int = 100_000) -> tuple[FloatArray, int]:
    """(θ with mean 0, iterations) of the BT MLE of win matrix ``w`` (MM algorithm); InputError without MLE."""
    if len(w) < 2:
        raise InputError("Bradley-Terry needs at least 2 systems")
    bad = _unreachable(w)
    if bad is not None:
        raise InputError(f"system #{bad + 1} never wins or never loses against the others: no finite BT score")
    n = w + w.T
    wins = w.sum(axis=1)
    theta = np.zeros(len(w))
    for it in range(1, max_iter + 1):
        p = np.exp(theta)
        denom = (n / (p[:, None] + p[None, :])).sum(axis=1)
        new = np.log(wins / denom)
        new -= new.mean()
        if np.max(np.abs(new - theta)) < tol:
            return new, it
        theta = new
    raise InputError(f"Bradley-Terry did not converge in {max_iter} iterations")


def bradley_terry(
    prefs: Sequence[Preference],
    n_resamples: int = 1000,
    seed: int | None = None,
    confidence: float = 0.95,
    systems: Sequence[str] | None = None,
) -> BradleyTerry:
    """BT scores, bootstrap intervals and win rates of the systems in ``prefs`` (first-seen order by default)."""
    if not prefs:
        raise InputError("no preference given")
    if not 0 < confidence < 1:
        raise ConfigError(f"confidence must lie strictly between 0 and 1, got {confidence}")
    if n_resamples < 0:
        raise ConfigError(f"n_resamples must be >= 0, got {n_resamples}")
    seen = list(dict.fromkeys(s for p in prefs for s in (p.system_a, p.system_b)))
    names = list(systems) if systems is not None else seen
    unknown = {s for p in prefs for s in (p.system_a, p.system_b)} - set(names)
    if unknown:
        raise InputError(f"systems not listed: {', '.join(sorted(unknown))}")
    w = win_matrix(prefs, names)
    theta, iters = fit(w)
    rng = np.random.default_rng(seed)
    draws, dropped = [], 0
    rows = list(prefs)
    for _ in range(n_resamples):
        pick = rng.integers(0, len(rows), size=len(rows))
        try:
            draws.append(fit(win_matrix([rows[k] for k in pick], names))[0])
        except InputError:
            dropped += 1
    if draws:
        q = (1 - confidence) / 2
        low, high = np.quantile(np.array(draws), [q, 1 - q], axis=0)
    else:
        low = high = np.full(len(names), np.nan)
    n = w + w.T
    counts = n.sum(axis=1)
    rate = w.sum(axis=1) / counts
    return BradleyTerry(
        tuple(names), tuple(map(float, theta)), tuple(map(float, low)), tuple(map(float, high)),
        tuple(map(float, rate)), tuple(int(c) for c in counts), confidence, len(draws), dropped, seed, iters,
    )  # fmt: skip
