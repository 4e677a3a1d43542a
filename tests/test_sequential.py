"""Sequential stopping: the normal-mixture confidence sequence's false-settlement rate under continuous monitoring
stays below alpha when systems are equal (seeded simulation), while a naive repeated test does not; settled pairs,
clusters and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import ngrameval as ne
from ngrameval.errors import ConfigError, InputError
from ngrameval.meta.sequential import false_settlement_rate, mixture_rho, radius, sequential_status


def test_false_settlement_rate_below_alpha_under_continuous_monitoring() -> None:
    rate = false_settlement_rate(4, 1000, 400, np.random.default_rng(20261126), alpha=0.05, look_every=1)
    assert rate <= 0.05


def test_naive_repeated_t_test_would_exceed_alpha() -> None:
    """The same equal systems, looked at every 10 ratings with an unadjusted Welch test of the top two: the
    simulation is sensitive enough to see the error a naive procedure makes."""
    rng = np.random.default_rng(7)
    runs, looks = 200, np.arange(10, 1001, 10)
    x = rng.integers(0, 101, size=(runs, 2, 1000)) / 100.0
    s1, s2 = np.cumsum(x, axis=2)[..., looks - 1], np.cumsum(x**2, axis=2)[..., looks - 1]
    mean, var = s1 / looks, (s2 - s1**2 / looks) / (looks - 1)
    se2 = var / looks
    t = (mean[:, 0] - mean[:, 1]) / np.sqrt(se2[:, 0] + se2[:, 1])
    df = (se2[:, 0] + se2[:, 1]) ** 2 / ((se2[:, 0] ** 2 + se2[:, 1] ** 2) / (looks - 1))  # Welch
    p = 2 * stats.t.sf(np.abs(t), df)
    k = 3  # the vectorised statistic is scipy's Welch test
    assert p[0, k] == pytest.approx(stats.ttest_ind(x[0, 0, : looks[k]], x[0, 1, : looks[k]], equal_var=False).pvalue)
    assert np.mean((p < 0.05).any(axis=1)) > 0.15


def test_boundary_is_tightest_near_t_opt() -> None:
    a, sigma = 0.05 / 3, 0.5
    tight = {t: float(radius(t, sigma, mixture_rho(t, sigma, a), a) * t) / np.sqrt(t) for t in (100, 1000)}
    other = {t: float(radius(t, sigma, mixture_rho(10 * t, sigma, a), a) * t) / np.sqrt(t) for t in (100, 1000)}
    assert all(tight[t] < other[t] for t in tight)


def test_different_systems_settle_and_equal_ones_share_a_cluster() -> None:
    rng = np.random.default_rng(3)
    ratings = {
        "good": list(np.clip(rng.normal(80, 10, 400), 0, 100)),
        "mid1": list(np.clip(rng.normal(50, 10, 400), 0, 100)),
        "mid2": list(np.clip(rng.normal(50, 10, 400), 0, 100)),
    }
    got = sequential_status(ratings, 0, 100, alpha=0.05, t_opt=400)
    assert got.ranking[0].system == "good"
    assert [p.settled for p in got.pairs] == [True, False]
    assert [s.cluster for s in got.ranking] == [1, 2, 2]
    assert not got.all_settled
    assert all(s.low <= s.mean <= s.high for s in got.ranking)
    assert ne.sequential_status is sequential_status


def test_bad_input() -> None:
    with pytest.raises(InputError, match="outside the stated range"):
        sequential_status({"a": [1.0, 120.0], "b": [3.0]}, 0, 100)
    with pytest.raises(ConfigError, match="alpha"):
        sequential_status({"a": [1.0], "b": [3.0]}, 0, 100, alpha=1.0)
    with pytest.raises(InputError, match="2 systems"):
        sequential_status({"a": [1.0]}, 0, 100)
    empty = sequential_status({"a": [], "b": [50.0]}, 0, 100)
    assert empty.ranking[-1].system == "a" and empty.ranking[-1].n == 0
