"""mt-metrics-eval's statistics (ngrameval.meta.mtme*) against mt-metrics-eval's own numbers (tests/golden/mtme,
made by make_mtme_golden.py there with mt-metrics-eval's functions) and against naive O(n^2) definitions."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ngrameval.cli import main
from ngrameval.errors import ConfigError
from ngrameval.io.judgments import read_judgments
from ngrameval.io.scores import read_scores, systems_and_segments, to_rows
from ngrameval.meta.correlate import aggregate, correlate, sentence_matrix
from ngrameval.meta.mtme import calibrate, pair_table, pairwise_accuracy, pooled_accuracy, tie_calibrated
from ngrameval.meta.mtme_sets import assign_ranks, clusters, compare_tie_calibrated, pooled_clusters

GOLD = Path(__file__).parent / "golden" / "mtme"
DA19 = Path("/work/shared/data/wmt19/DA-syslevel.tsv")
G = json.loads((GOLD / "golden.json").read_text())
LPS19 = list(G["wmt19_system"])
LPS17 = list(G["wmt17_segment"])
needs_data = pytest.mark.skipif(not DA19.exists(), reason="shared WMT19 data not present")


def _system_level(lp: str) -> tuple[list, object]:
    ext = read_scores(str(GOLD / "wmt19-sys-scores.tsv"), where={"lp": lp})
    names, _ = systems_and_segments(ext)
    human = aggregate(read_judgments(str(DA19), scores=["da_z"], where={"lp": lp}), "da_z", names)
    return to_rows(ext, names, None), human


def _segment_level(lp: str, digits: int | None) -> tuple[list, object]:
    ext = read_scores(str(GOLD / "wmt17-seg-scores.tsv"), segment="segment", where={"lp": lp})
    names, segs = systems_and_segments(ext)
    judged = read_judgments(str(GOLD / "wmt17-seg-da.tsv"), scores=["da"], segment="segment", where={"lp": lp})
    human = aggregate(judged, "da", names, segs)
    if digits is not None:
        human = type(human)(**{**human.__dict__, "segment": np.round(human.segment, digits)})
    return to_rows(ext, names, segs, ~np.isnan(human.segment)), human


@needs_data
@pytest.mark.parametrize("lp", LPS19)
def test_system_accuracy_and_pearson_equal_mtme(lp: str) -> None:
    rows, human = _system_level(lp)
    got = {
        (c.metric, c.coefficient): c
        for c in correlate(rows, human, coefficients=["accuracy", "pearson", "kendall-b"], n_resamples=10)
    }
    for m in ("BLEU", "chrF", "TER"):
        gold = G["wmt19_system"][lp][m]
        assert got[m, "accuracy"].value == gold["accuracy"]  # exact: the same integers divided
        assert got[m, "pearson"].value == pytest.approx(gold["pearson"], abs=1e-12)
        assert got[m, "kendall-b"].value == pytest.approx(gold["kendall_b"], abs=1e-12)
        assert got[m, "accuracy"].signature == f"external:{GOLD / 'wmt19-sys-scores.tsv'}"


@needs_data
@pytest.mark.parametrize("lp", LPS19)
def test_system_clusters_match_mtme_decisions(lp: str) -> None:
    """Seeds cannot match (mtme draws from np.random, p = c/R): the same decisions at alpha 0.05, 1000 trials."""
    from ngrameval.meta.metric_difference import compare_correlations

    rows, human = _system_level(lp)
    diffs = compare_correlations(rows, human, coefficient_name="accuracy", n_resamples=1000, seed=1)
    _same_decisions(diffs, G["wmt19_system"][lp], p_close=False)


@needs_data
def test_pooled_accuracy_and_clusters_equal_mtme() -> None:
    per_lp = [_system_level(lp) for lp in LPS19]
    metrics = {
        m: [next(r for r in rows if r.metric == m).corpus() for rows, _ in per_lp] for m in ("BLEU", "chrF", "TER")
    }
    human = [h.system for _, h in per_lp]
    for m, xs in metrics.items():
        assert pooled_accuracy(xs, human) == G["wmt19_pooled"][m][0]
    got = {c.metric: [c.value, c.rank] for c in pooled_clusters(metrics, human, 1, "da_z", n_resamples=1000)}
    assert got == G["wmt19_pooled"]


@pytest.mark.parametrize("lp", LPS17)
@pytest.mark.parametrize("key, digits", [("wmt17_segment", None), ("wmt17_segment_rounded", 0)])
def test_acc_eq_equals_mtme(lp: str, key: str, digits: int | None) -> None:
    rows, human = _segment_level(lp, digits)
    for r in rows:
        gold = G[key][lp][r.metric]
        x = sentence_matrix(r)
        item = tie_calibrated(x, human.segment, "item")
        assert item.value == pytest.approx(gold["acc_eq_item"][0], abs=1e-12)
        assert item.epsilon == gold["epsilon_item"]
        none = tie_calibrated(x, human.segment, "none")
        assert none.value == pytest.approx(gold["acc_eq_none"], abs=1e-12)
        assert none.epsilon == gold["epsilon_none"]
        tau = tie_calibrated(x, human.segment, "item", "tau")
        assert tau.value == pytest.approx(gold["tau_eq_item"], abs=1e-12)
        assert tau.epsilon == gold["tau_epsilon_item"]
        (c,) = correlate([r], human, level="segment", grouping="item", coefficients=["acc-eq"], n_resamples=20)
        assert (c.value, c.epsilon) == (item.value, item.epsilon)


@pytest.mark.parametrize("lp", LPS17)
@pytest.mark.parametrize("key, digits", [("wmt17_segment", None), ("wmt17_segment_rounded", 0)])
def test_acc_eq_clusters_match_mtme_decisions(lp: str, key: str, digits: int | None) -> None:
    """The pairs permutation test (1000 trials, alpha 0.05): the same decisions as mt-metrics-eval's."""
    rows, human = _segment_level(lp, digits)
    diffs = compare_tie_calibrated(rows, human, level="segment", grouping="item", n_resamples=1000, seed=1)
    _same_decisions(diffs, G[key][lp])


@pytest.mark.parametrize("n", [0, -3])
def test_acc_eq_comparison_checks_its_resamples(n: int) -> None:
    rows, human = _segment_level(LPS17[0], None)
    with pytest.raises(ConfigError, match="n_resamples >= 1"):
        compare_tie_calibrated(rows, human, n_resamples=n)


def _band(p: float) -> float:
    """Four Monte-Carlo standard errors of a p-value from 1000 trials (and mtme's c/R vs ngrameval's (c+1)/(R+1))."""
    return 4 * math.sqrt(max(p * (1 - p), 0.01) / 1000) + 0.002


def _same_decisions(diffs: tuple, gold: dict, p_close: bool = True) -> None:
    """Every pair's decision (p <= 0.05) as mt-metrics-eval's unless its p lies within Monte-Carlo error of alpha
    (a coin toss for both); with ``p_close`` every p within that error of mt-metrics-eval's; the clusters equal
    whenever no p-value is that close to alpha. (System-level accuracy: mt-metrics-eval compares float
    differences of accuracies without tolerance, so a trial whose difference equals the observed one as a
    fraction may count or not by rounding; ngrameval counts it: its p is the same or higher.)"""
    order = list(gold["clusters"])
    sig = gold["sig_matrix"]
    for d in diffs:
        i, j = sorted((order.index(d.metric_a), order.index(d.metric_b)))
        if abs(sig[i][j] - 0.05) > _band(0.05):
            assert (d.permutation_p <= 0.05) == (sig[i][j] <= 0.05), (d.metric_a, d.metric_b, d.permutation_p)
        if p_close:
            assert abs(d.permutation_p - sig[i][j]) <= _band(sig[i][j]), (d.metric_a, d.metric_b, d.permutation_p)
        else:
            assert d.permutation_p >= sig[i][j] - _band(sig[i][j])
    got = {c.metric: [c.value, c.rank] for c in clusters(diffs)}
    assert list(got) == order  # same order of values
    for m, (value, _) in gold["clusters"].items():
        assert got[m][0] == pytest.approx(value, abs=1e-12)
    if all(abs(sig[i][j] - 0.05) > _band(0.05) for i in range(len(order)) for j in range(i + 1, len(order))):
        assert {m: r for m, (_, r) in got.items()} == {m: v[1] for m, v in gold["clusters"].items()}


@needs_data
def test_cli_several_sets_without_system_files(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["correlate", "-j", str(DA19), "--score-columns", "da_z", "--set-column", "lp", "--scores",
            str(GOLD / "wmt19-sys-scores.tsv"), "--coefficients", "accuracy,pearson", "--confidence-n", "20",
            "--compare-metrics", "--seed", "1", "-f", "json"]  # fmt: skip
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    acc = {(c["dataset"], c["metric"]): c["value"] for c in out["correlations"] if c["coefficient"] == "accuracy"}
    for lp in LPS19:
        for m in ("BLEU", "chrF", "TER"):
            assert acc[lp, m] == G["wmt19_system"][lp][m]["accuracy"]
    pooled = {c["metric"]: c["value"] for c in out["pooled"]}
    assert pooled == {m: v[0] for m, v in G["wmt19_pooled"].items()}
    summary = {(s["coefficient"], s["metric"]): s for s in out["summary"]}
    assert summary["accuracy", "BLEU"]["sets"] == 7
    mean = np.mean([G["wmt19_system"][lp]["BLEU"]["accuracy"] for lp in LPS19])
    assert summary["accuracy", "BLEU"]["average_value"] == pytest.approx(mean, abs=1e-12)
    assert {c["dataset"] for c in out["clusters"]} == set(LPS19)


def test_assign_ranks_as_mtme() -> None:
    """mtme's AssignRanks: a new rank opens where a metric of the current rank beats the next one."""
    values = {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6}
    p = {("a", "b"): 0.3, ("a", "c"): 0.01, ("b", "c"): 0.2, ("a", "d"): 0.0, ("b", "d"): 0.0, ("c", "d"): 0.5}
    assert [r.rank for r in assign_ranks(values, p)] == [1, 1, 2, 2]


# --- naive O(n^2) definitions -------------------------------------------------------------------------------


def _naive_accuracy(x: list[float], y: list[float]) -> float:
    pairs = list(itertools.combinations(range(len(x)), 2))
    sign = lambda v: (v > 0) - (v < 0)  # noqa: E731
    return sum(sign(x[i] - x[j]) == sign(y[i] - y[j]) for i, j in pairs) / len(pairs)


def _naive_acc_eq(groups: list[tuple[list[float], list[float]]], eps: float) -> float:
    per = []
    for x, y in groups:
        pairs = list(itertools.combinations(range(len(x)), 2))
        if not pairs:
            continue
        ok = 0
        for i, j in pairs:
            mt, ht = abs(x[i] - x[j]) <= eps, y[i] == y[j]
            ok += (mt and ht) or (not mt and not ht and (x[i] - x[j]) * (y[i] - y[j]) > 0)
        per.append(ok / len(pairs))
    return sum(per) / len(per)


small = st.lists(st.integers(-4, 4).map(float), min_size=2, max_size=9)


@settings(max_examples=200, deadline=None)
@given(st.data())
@pytest.mark.slow
def test_pairwise_accuracy_is_the_naive_one(data: st.DataObject) -> None:
    x = data.draw(small)
    y = data.draw(st.lists(st.integers(-3, 3).map(float), min_size=len(x), max_size=len(x)))
    assert pairwise_accuracy(np.array(x), np.array(y)) == pytest.approx(_naive_accuracy(x, y), abs=1e-15)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_acc_eq_is_the_naive_maximum(data: st.DataObject) -> None:
    n_sys, n_items = data.draw(st.integers(2, 5)), data.draw(st.integers(1, 5))
    x = np.array(data.draw(st.lists(st.integers(0, 6), min_size=n_sys * n_items, max_size=n_sys * n_items)),
                 dtype=float).reshape(n_sys, n_items) / 4  # fmt: skip
    y = np.array(data.draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, math.nan]), min_size=x.size, max_size=x.size)))
    y = y.reshape(x.shape)
    groups = [(list(x[~np.isnan(y[:, k]), k]), list(y[~np.isnan(y[:, k]), k])) for k in range(n_items)]
    if not any(len(g[0]) > 1 for g in groups):
        assert math.isnan(tie_calibrated(x, y, "item").value)
        return
    candidates = sorted({0.0, *(abs(a - b) for g, _ in groups for a, b in itertools.combinations(g, 2))})
    best = max(_naive_acc_eq(groups, e) for e in candidates)
    eps = min(e for e in candidates if _naive_acc_eq(groups, e) == pytest.approx(best, abs=1e-12))
    got = calibrate(pair_table(x, y, "item"))
    assert got.value == pytest.approx(best, abs=1e-12)
    assert got.epsilon == eps
