"""AEv(alpha, N): its two ends, BLEU as a member, and which way alpha leans (SPEC §2)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.conftest import corpus

from ngrameval import BLEU, AEv, Preprocess, References, UndefinedMetricWarning, aev, overlap_stats, parse_specs
from ngrameval.errors import ConfigError


def stats_of(hyps, refs, order=4):  # type: ignore[no-untyped-def]
    (s,) = overlap_stats([hyps], References.build(refs, Preprocess()), max_order=order)
    return s


@settings(max_examples=80, deadline=None)
@given(data=corpus(), n=st.integers(1, 4), alpha=st.floats(0, 1))
@pytest.mark.slow
def test_ends_are_the_families(data, n, alpha) -> None:  # type: ignore[no-untyped-def]
    hyps, refs = data
    s = stats_of(hyps, refs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        for row in (s.total(), s):
            m = AEv(alpha=alpha, n=n)
            ps, rs = m.precision_side(row), m.recall_side(row)
            np.testing.assert_allclose(AEv(alpha=0.0, n=n)(row), rs, rtol=1e-12)
            np.testing.assert_allclose(AEv(alpha=1.0, n=n)(row), ps, rtol=1e-12)
            # A weighted harmonic mean lies between its two sides.
            v = m(row)
            assert np.all(v <= np.maximum(ps, rs) + 1e-12) and np.all(v >= np.minimum(ps, rs) - 1e-12)
            # PS(4), B = 1, no stemming/stop words = unsmoothed BLEU.
            if n == 4:
                np.testing.assert_allclose(ps, BLEU(smooth_method="none")(row), rtol=1e-12, atol=1e-15)


def test_alpha_leans_towards_precision() -> None:
    # Short hypothesis: precision 1, recall low. Larger alpha must move AEv towards precision.
    refs = [["the cat sat on the mat today"]]
    s = stats_of(["the cat"], refs).total()
    values = [float(AEv(alpha=a, n=1, brevity=1e9)(s)) for a in (0.0, 0.3, 0.7, 1.0)]
    assert values == sorted(values)
    assert values[-1] == 1.0 and values[0] == pytest.approx(2 / 7)


def test_recall_by_hand() -> None:
    # R(1) = (2 + 1) / (3 + 2); R(2) = (1 + 0) / (2 + 1)   (two references, hyp "a b")
    s = stats_of(["a b"], [["a b c", "b d"]]).total()
    want = math.sqrt((3 / 5) * (1 / 3))
    assert float(AEv(alpha=0.0, n=2, wordiness=math.inf)(s)) == pytest.approx(want)


def test_wordiness_penalty() -> None:
    s = stats_of(["a b c d e f g h"], [["a b"]]).total()  # |c| = 8 > W|r| = 4
    base = float(AEv(alpha=0.0, n=1, wordiness=math.inf)(s))
    assert float(AEv(alpha=0.0, n=1, wordiness=2.0)(s)) == pytest.approx(base * math.exp(1 - 8 / 4))


def test_zero_precision_is_zero_with_warning() -> None:
    s = stats_of(["x y"], [["a b"]]).total()
    with pytest.warns(UndefinedMetricWarning, match="1 of 1"):
        assert float(AEv(alpha=0.5, n=2)(s)) == 0.0


def test_presets_use_the_paper_settings() -> None:
    (spec,) = parse_specs("aev:mt-adequacy", Preprocess())
    assert (spec.metric.alpha, spec.metric.n) == (0.0, 4)
    assert spec.pre == Preprocess(lowercase=True, stem=True, stopwords="smart")
    (spec,) = parse_specs("aev:qa-flooding-penalised,W=inf", Preprocess())
    assert (spec.metric.alpha, spec.metric.n, spec.metric.wordiness) == (0.3, 2, math.inf)


def test_api_and_validation() -> None:
    assert aev(["the cat sat"], ["the cat sat"], alpha=0.5, n=2).score == pytest.approx(1.0)
    with pytest.raises(ConfigError):
        AEv(alpha=1.5)
    with pytest.raises(ConfigError):
        AEv(n=2, weights=(1.0,))
