"""Bradley-Terry from side-by-side preferences: equal to independent fits of the same likelihood (a Newton-Raphson
logistic regression and scipy's optimiser) on generated preferences; intervals, win rates, reader errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import minimize

import ngrameval as ne
from ngrameval.errors import ConfigError, InputError
from ngrameval.io.preferences import Preference, read_preferences
from ngrameval.meta.bradley_terry import bradley_terry, win_matrix

TRUE = np.array([0.8, 0.3, 0.0, -0.4, -0.7])


def _generated(n: int, seed: int, tie_rate: float = 0.15) -> list[Preference]:
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n):
        i, j = rng.choice(len(TRUE), size=2, replace=False)
        u = rng.random()
        if u < tie_rate:
            w = "tie"
        else:
            w = "a" if rng.random() < 1 / (1 + np.exp(-(TRUE[i] - TRUE[j]))) else "b"
        out.append(Preference(f"item{k}", f"s{i}", f"s{j}", w))
    return out


def _design(prefs: list[Preference], names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Logistic regression rows x = e_a - e_b with outcome y (1 a wins, 0 b wins, 1/2 a tie)."""
    ix = {s: k for k, s in enumerate(names)}
    x = np.zeros((len(prefs), len(names)))
    y = np.zeros(len(prefs))
    for r, p in enumerate(prefs):
        x[r, ix[p.system_a]], x[r, ix[p.system_b]] = 1.0, -1.0
        y[r] = {"a": 1.0, "b": 0.0, "tie": 0.5}[p.winner]
    return x, y


def _newton(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Newton-Raphson of the logistic log-likelihood with the last system's score fixed at 0, then centred."""
    z = x[:, :-1]
    beta = np.zeros(z.shape[1])
    for _ in range(100):
        p = 1 / (1 + np.exp(-(z @ beta)))
        step = np.linalg.solve((z * (p * (1 - p))[:, None]).T @ z, z.T @ (y - p))
        beta += step
        if np.max(np.abs(step)) < 1e-13:
            break
    theta = np.append(beta, 0.0)
    return theta - theta.mean()


def test_equals_newton_logistic_regression_and_scipy() -> None:
    prefs = _generated(3000, seed=5)
    names = [f"s{k}" for k in range(len(TRUE))]
    got = bradley_terry(prefs, n_resamples=0, systems=names)
    x, y = _design(prefs, names)
    ref = _newton(x, y)
    assert np.max(np.abs(np.array(got.theta) - ref)) < 1e-8

    def nll(beta: np.ndarray) -> float:
        s = x[:, :-1] @ beta
        return float(np.sum(np.logaddexp(0, -s) * y + np.logaddexp(0, s) * (1 - y)))

    opt = minimize(nll, np.zeros(len(names) - 1), method="BFGS", options={"gtol": 1e-10})
    theta = np.append(opt.x, 0.0)
    assert np.max(np.abs(np.array(got.theta) - (theta - theta.mean()))) < 1e-5
    # without ties the fit recovers the generating scores (ties as half wins shrink them towards 0)
    plain = bradley_terry(_generated(3000, seed=6, tie_rate=0.0), n_resamples=0, systems=names)
    assert np.max(np.abs(np.array(plain.theta) - (TRUE - TRUE.mean()))) < 0.2


def test_bootstrap_intervals_cover_the_fit_and_are_seeded() -> None:
    prefs = _generated(800, seed=2)
    a = bradley_terry(prefs, n_resamples=200, seed=11)
    b = bradley_terry(prefs, n_resamples=200, seed=11)
    assert a == b
    assert all(lo <= t <= hi for lo, t, hi in zip(a.low, a.theta, a.high, strict=True))
    assert a.resamples + a.dropped == 200
    c = bradley_terry(prefs, n_resamples=200, seed=12)
    assert c.low != a.low


def test_win_rates_count_ties_as_half() -> None:
    prefs = [Preference("1", "x", "y", "a"), Preference("2", "x", "y", "tie"), Preference("3", "y", "x", "a"),
             Preference("4", "x", "z", "b"), Preference("5", "z", "y", "b")]  # fmt: skip
    got = bradley_terry(prefs, n_resamples=0)
    assert got.systems == ("x", "y", "z")
    assert got.win_rate == (1.5 / 4, 2.5 / 4, 1 / 2)
    assert got.comparisons == (4, 4, 2)
    assert win_matrix(prefs, ["x", "y", "z"])[0, 1] == 1.5


def test_no_mle_when_a_system_never_loses() -> None:
    prefs = [Preference("1", "x", "y", "a"), Preference("2", "x", "z", "a"), Preference("3", "y", "z", "tie")]
    with pytest.raises(InputError, match="never wins or never loses"):
        bradley_terry(prefs, n_resamples=0)
    with pytest.raises(ConfigError, match="confidence"):
        bradley_terry(prefs, confidence=1.5)


def test_reader(tmp_path: Path) -> None:
    p = tmp_path / "prefs.csv"
    p.write_text("item,system_a,system_b,winner\n1,x,y,A\n2,y,x,tie\n")
    assert [q.winner for q in read_preferences(str(p))] == ["a", "tie"]
    p.write_text("item,system_a,system_b,winner\n1,x,y,c\n")
    with pytest.raises(InputError, match=r"prefs\.csv:2: .*winner"):
        read_preferences(str(p))
    p.write_text("item,system_a,winner\n1,x,a\n")
    with pytest.raises(InputError, match=r"prefs\.csv:2: missing column"):
        read_preferences(str(p))
    p.write_text("item,system_a,system_b,winner\n1,x,x,a\n")
    with pytest.raises(InputError, match="itself"):
        read_preferences(str(p))
    assert ne.bradley_terry is bradley_terry
