"""Belz & Reiter's matrix, single-vs-mean and agreement; Chen & Dolan's conditional correlation and reference
curve; Williams' test and the permutation test between two metrics' correlations — each against a plain
re-computation (scipy / numpy loops), a published example, or its behaviour under the null hypothesis."""

from __future__ import annotations

import csv
import io
import json
import re
import warnings
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import ngrameval as ne
from ngrameval.cli import main
from ngrameval.cli.demo import load_sample, sample_human
from ngrameval.errors import ConfigError, InputError
from ngrameval.io.judgments import Judgment, read_judgments
from ngrameval.meta import metric_difference
from ngrameval.meta.agreement import (
    agreement,
    correlation_matrix,
    judge_table,
    krippendorff_alpha,
    pairwise_pearson,
    single_vs_mean,
)
from ngrameval.meta.correlate import HumanScores, coefficient
from ngrameval.meta.metric_difference import compare_correlations, permutation_test, williams_test
from ngrameval.meta.subsets import conditional_correlation, reference_curve


def test_williams_psych_example_and_symmetry() -> None:
    # psych::r.test(n = 103, r12 = .4, r13 = .5, r23 = .1), the package's documented example: t = -0.89, p = 0.37
    t, p = williams_test(0.4, 0.5, 0.1, 103)
    assert round(t, 2) == -0.89 and round(2 * min(p, 1 - p), 2) == 0.37
    t2, p2 = williams_test(0.5, 0.4, 0.1, 103)
    assert t2 == pytest.approx(-t) and p2 == pytest.approx(1 - p)
    assert williams_test(0.6, 0.6, 1.0, 20) == (0.0, 0.5)
    with pytest.raises(InputError, match="more than 3 points"):
        williams_test(0.1, 0.2, 0.3, 3)


def test_williams_is_calibrated_under_the_null() -> None:
    # equal population correlations with the human side: the one-sided test rejects ~5% of the time at 0.05
    rng = np.random.default_rng(7)
    cov = np.array([[1, 0.5, 0.5], [0.5, 1, 0.6], [0.5, 0.6, 1]])
    rejected = 0
    for _ in range(2000):
        h, a, b = rng.multivariate_normal(np.zeros(3), cov, size=30).T
        r = np.corrcoef([h, a, b])
        rejected += williams_test(r[0, 1], r[0, 2], r[1, 2], 30)[1] < 0.05
    assert 0.035 <= rejected / 2000 <= 0.065


def _plain_permutation(x1: np.ndarray, x2: np.ndarray, y: np.ndarray, seed: int, n: int, name: str) -> float:
    """The permutation test written out: z-scores, one swap decision per point and trial, scipy per trial."""
    z1, z2 = (x1 - x1.mean()) / x1.std(), (x2 - x2.mean()) / x2.std()
    swap = np.random.default_rng(seed).random((n, len(y))) < 0.5
    observed = coefficient(z1, y, name)[0] - coefficient(z2, y, name)[0]
    count = 0
    for s in swap:
        a, b = np.where(s, z2, z1), np.where(s, z1, z2)
        count += coefficient(a, y, name)[0] - coefficient(b, y, name)[0] >= observed - 1e-12
    return (count + 1) / (n + 1)


@pytest.mark.parametrize("name", ["pearson", "r2", "spearman", "kendall-b", "kendall-c"])
@pytest.mark.parametrize("n", [40, 120])  # Kendall: all trials at once (40 points), per trial (120)
def test_permutation_test_equals_the_plain_loop(name: str, n: int) -> None:
    rng = np.random.default_rng(3)
    y = rng.normal(size=n)
    x1, x2 = y + rng.normal(size=n), 10 * (y + 2 * rng.normal(size=n)) + 5  # another scale: z-scores matter
    p = permutation_test(x1, x2, y, np.random.default_rng(11), coefficient_name=name, n_resamples=300)
    assert p == _plain_permutation(x1, x2, y, 11, 300, name)
    assert p < 0.2
    assert permutation_test(x1, x1, y, np.random.default_rng(1), n_resamples=50) == 1.0  # no difference at all
    # ties on both sides (ratings on a 1-5 scale, rounded metrics): tau-b/tau-c and average ranks handle them
    y5, r1, r2 = np.round(y), np.round(x1 * 2) / 2, np.round(x2)
    p = permutation_test(r1, r2, y5, np.random.default_rng(5), coefficient_name=name, n_resamples=200)
    assert p == _plain_permutation(r1, r2, y5, 5, 200, name)


def test_kendall_trials_in_blocks_equal_one_block(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(8)
    y = rng.integers(1, 6, size=30).astype(float)
    x1, x2 = y + rng.normal(size=30), y + 3 * rng.normal(size=30)
    for name in ("kendall-b", "kendall-c"):
        whole = permutation_test(x1, x2, y, np.random.default_rng(2), coefficient_name=name, n_resamples=200)
        monkeypatch.setattr(metric_difference, "_BLOCK", 1000)  # two trials a block
        assert permutation_test(x1, x2, y, np.random.default_rng(2), coefficient_name=name, n_resamples=200) == whole
        monkeypatch.undo()


def _toy() -> tuple[dict[str, list[str]], list[list[str]], HumanScores]:
    """The bundled SummEval sample (16 systems x 20 documents, 11 references) with its expert relevance."""
    systems, refs = load_sample()
    return systems, refs, sample_human("relevance")


def test_compare_correlations_orders_pairs_and_matches_williams() -> None:
    systems, refs, human = _toy()
    rows = ne.measure(systems, refs, ne.parse_specs("bleu,rouge-2,aev:alpha=0,n=1", ne.Preprocess()))
    diffs = compare_correlations(rows, human, n_resamples=200, seed=5)
    assert len(diffs) == 3
    x = {r.metric: r.corpus() for r in rows}
    for d in diffs:
        ra, rb = stats.pearsonr(x[d.metric_a], human.system)[0], stats.pearsonr(x[d.metric_b], human.system)[0]
        assert d.value_a == pytest.approx(ra) and d.value_b == pytest.approx(rb) and ra >= rb
        r_ab = stats.pearsonr(x[d.metric_a], x[d.metric_b])[0]
        assert d.r_ab == pytest.approx(r_ab) and d.n == 16 and d.seed == 5
        assert (d.williams_t, d.williams_p) == pytest.approx(williams_test(ra, rb, r_ab, 16))
        assert 0 < d.permutation_p <= 1
    assert compare_correlations(rows, human, n_resamples=200, seed=5) == diffs  # seeded
    seg = compare_correlations(rows, human, level="segment", coefficient_name="kendall-b", n_resamples=20)
    assert all(d.williams_t is None and d.n == 320 for d in seg)  # Williams' test is for Pearson r only
    with pytest.raises(ConfigError, match="at least two metrics"):
        compare_correlations(rows[:1], human)


def test_correlation_matrix_pairwise_with_missing_points() -> None:
    rng = np.random.default_rng(0)
    a, b, c = rng.normal(size=(3, 12))
    b[[2, 5]] = np.nan
    m = correlation_matrix({"a": a, "b": b, "c": c}, "spearman")
    keep = ~np.isnan(b)
    assert m.values[0, 1] == pytest.approx(stats.spearmanr(a[keep], b[keep])[0]) == m.values[1, 0]
    assert m.values[0, 2] == pytest.approx(stats.spearmanr(a, c)[0])
    assert m.n.tolist() == [[12, 10, 12], [10, 10, 10], [12, 10, 12]] and np.all(np.diag(m.values) == 1)
    with pytest.raises(InputError, match="same number of points"):
        correlation_matrix({"a": a, "b": b[:5]})


def _alpha_interval(table: np.ndarray) -> float:
    """Krippendorff's interval alpha from its definition: 1 - D_o / D_e over the pairable values."""
    units = [col[~np.isnan(col)] for col in table.T]
    units = [u for u in units if len(u) >= 2]
    values = np.concatenate(units)
    n = len(values)
    d_o = sum(((u[:, None] - u[None, :]) ** 2).sum() / (len(u) - 1) for u in units) / n
    d_e = ((values[:, None] - values[None, :]) ** 2).sum() / (n * (n - 1))
    return float(1 - d_o / d_e)


def test_single_vs_mean_pairwise_and_krippendorff() -> None:
    rng = np.random.default_rng(4)
    truth = rng.normal(size=30)
    table = truth + rng.normal(scale=0.7, size=(5, 30))
    table[rng.random(table.shape) < 0.3] = np.nan
    single, loo = single_vs_mean(table), single_vs_mean(table, leave_one_out=True)
    mean = np.nanmean(table, axis=0)
    for i, row in enumerate(table):
        has = ~np.isnan(row)
        assert single[i] == pytest.approx(stats.pearsonr(row[has], mean[has])[0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # columns nobody else scored: NaN, left out below
            others = np.nanmean(np.delete(table, i, axis=0), axis=0)
        use = has & ~np.isnan(others)
        assert loo[i] == pytest.approx(stats.pearsonr(row[use], others[use])[0])
    assert np.all(loo < single)  # the individual's own score no longer pulls the mean towards it
    expected = []
    for a, b in combinations(range(5), 2):
        both = ~np.isnan(table[a]) & ~np.isnan(table[b])
        expected.append(stats.pearsonr(table[a][both], table[b][both])[0])
    np.testing.assert_allclose(pairwise_pearson(table), expected)
    assert krippendorff_alpha(table) == pytest.approx(_alpha_interval(table))
    with pytest.raises(ConfigError, match="level of measurement"):
        krippendorff_alpha(table, "cardinal")


def test_agreement_from_judgments_and_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(2)
    lines = ["system,seg,judge,q"]
    for s in ("a", "b", "c"):
        for seg in range(8):
            for judge in ("j1", "j2", "j3"):
                if rng.random() < 0.8:
                    lines.append(f"{s},{seg},{judge},{rng.integers(1, 6)}")
    path = tmp_path / "j.csv"
    path.write_text("\n".join(lines) + "\n")
    js = read_judgments(str(path), scores=["q"], segment="seg", judge="judge")
    table = judge_table(js, "q")
    assert table.scores.shape == (3, 24) and np.sum(~np.isnan(table.scores)) == len(lines) - 1
    res = agreement(table)
    assert res.judges == 3 and res.judgments == len(lines) - 1 and res.pairs == 3
    assert res.pairwise_pearson == pytest.approx(pairwise_pearson(table.scores).mean())
    assert res.krippendorff_alpha == pytest.approx(_alpha_interval(table.scores))
    code = main(["agreement", "-j", str(path), "--segment-column", "seg", "--judge-column", "judge",
                 "--score-columns", "q", "-f", "json"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)[0]["krippendorff_alpha"] == pytest.approx(res.krippendorff_alpha)
    assert not json.loads(out)[0]["leave_one_out"]
    code = main(["agreement", "-j", str(path), "--segment-column", "seg", "--judge-column", "judge",
                 "--score-columns", "q", "--leave-one-out"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    loo = agreement(table, leave_one_out=True)
    cell = f"{loo.single_vs_mean:.3f} ({loo.single_vs_mean_min:.3f}..{loo.single_vs_mean_max:.3f})"
    assert "single vs others’ mean" in out and cell in out and loo.single_vs_mean < res.single_vs_mean
    assert main(["agreement", "-j", str(path), "--score-columns", "q"]) == 2
    assert "needs --judge-column" in capsys.readouterr().err
    with pytest.raises(InputError, match="needs a judge column"):
        judge_table([Judgment("a", "1", None, "q", 3.0, 2)], "q")


def test_conditional_correlation_is_a_filtered_correlation() -> None:
    systems, refs, human = _toy()
    pre = ne.Preprocess()
    rows = ne.measure(systems, refs, ne.parse_specs("rouge-2,aev:alpha=0,n=1", pre))
    (cond,) = ne.measure(systems, refs, ne.parse_specs("bleu:eff=yes", pre))
    res = conditional_correlation(rows, cond, human, [0, 5, 10, 99])
    assert human.segment is not None
    bleu = np.stack([cond.scorer(v) for v in cond.values]).ravel() * 100
    y = human.segment.ravel()
    for c in res:
        x = np.stack([r.scorer(v) for r in rows if r.metric == c.metric for v in r.values]).ravel()
        keep = bleu > c.threshold
        assert c.n == keep.sum()
        if c.n >= 3:
            assert (c.value, c.p_value) == pytest.approx(stats.pearsonr(x[keep], y[keep]))
    assert [c.n for c in res[:4]] == sorted((c.n for c in res[:4]), reverse=True)
    assert np.isnan(res[3].value)  # nothing scores above 99


def test_reference_curve_against_separate_scoring() -> None:
    systems, refs, human = _toy()
    refs = [r[:4] for r in refs]
    source = [r[4] for r in refs_full()]
    specs = ne.parse_specs("bleu", ne.Preprocess())
    curves = reference_curve(systems, refs, human, specs, n_subsets=10, seed=1, source=source)
    plain, with_source = curves
    assert (plain.with_source, with_source.with_source) == (False, True)
    assert [p.subsets for p in plain.points] == [4, 6, 4, 1]  # C(4, k) <= 10: every subset

    def r(refs_k: list[list[str]]) -> float:
        (rows,) = ne.measure(systems, refs_k, specs)
        return float(stats.pearsonr(rows.corpus(), human.system)[0])

    assert plain.points[0].mean == pytest.approx(np.mean([r([[x[j]] for x in refs]) for j in range(4)]))
    assert plain.points[3].mean == pytest.approx(r(refs))
    assert with_source.points[3].mean == pytest.approx(r([[*x, s] for x, s in zip(refs, source)]))
    drawn = reference_curve(systems, refs_full(), human, specs, n_subsets=3, seed=9)[0]
    assert [p.subsets for p in drawn.points][:3] == [3, 3, 3] and drawn.points[-1].subsets == 1
    assert reference_curve(systems, refs_full(), human, specs, n_subsets=3, seed=9)[0] == drawn
    with pytest.raises(InputError, match="one number of references per segment"):
        reference_curve(systems, [refs[0][:1], *refs[1:]], human, specs)


def refs_full() -> list[list[str]]:
    return load_sample()[1]


def _files(tmp_path: Path) -> tuple[list[str], list[str]]:
    systems, refs = load_sample()
    files = []
    for name, outs in systems.items():
        (tmp_path / name).write_text("\n".join(outs) + "\n", encoding="utf-8")
        files.append(str(tmp_path / name))
    (tmp_path / "refs.tsv").write_text("\n".join("\t".join(r[:3]) for r in refs) + "\n", encoding="utf-8")
    human = sample_human("relevance")
    assert human.segment is not None
    lines = ["system,doc,relevance"] + [f"{s},{d + 1},{human.segment[i, d]}" for i, s in enumerate(human.systems)
                                         for d in range(len(refs))]  # fmt: skip
    (tmp_path / "j.csv").write_text("\n".join(lines) + "\n")
    common = ["-r", str(tmp_path / "refs.tsv"), "--tsv", "-j", str(tmp_path / "j.csv"), "--segment-column", "doc",
              "--score-columns", "relevance"]  # fmt: skip
    return files, common


@pytest.mark.slow
def test_correlate_extras_and_refcurve_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files, common = _files(tmp_path)
    code = main(["correlate", *files, *common, "-m", "bleu,rouge-1", "--matrix", "--compare-metrics",
                 "--confidence-n", "50", "-f", "json"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    doc = json.loads(out)
    assert doc["matrix"][0]["names"] == ["BLEU", "ROUGE-1", "relevance"]
    assert len(doc["differences"]) == 1 and doc["differences"][0]["n"] == 16 and len(doc["correlations"]) == 8
    code = main(["correlate", *files, *common, "-m", "rouge-2", "--level", "segment", "--given", "bleu:eff=yes",
                 "--thresholds", "0,10", "--matrix"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "where BLEU exceeds a threshold" in out and "BLEU > 10" in out and "(1) ROUGE-2" in out
    code = main(["correlate", *files, *common, "--matrix", "-f", "csv"])
    assert code == 2 and "several tables" in capsys.readouterr().err
    code = main(["correlate", *files, *common, "--given", "bleu,nist"])
    assert code == 2 and "one metric spec" in capsys.readouterr().err
    code = main(["refcurve", *files, *common, "-m", "bleu", "--subsets", "2", "--source", files[0], "-f", "csv"])
    out, err = capsys.readouterr()
    assert code == 0, err
    rows = out.splitlines()
    assert rows[0].startswith("metric,criterion") and len(rows) == 1 + 2 * 3  # 2 curves x k = 1..3
    code = main(["refcurve", *files, *common, "-m", "bleu", "--subsets", "2"])
    out, _ = capsys.readouterr()
    assert code == 0 and "k=3" in out and "+ source" not in out
    # a curve per coefficient; an AEv name holds a comma and the CSV quotes it
    code = main(["refcurve", *files, *common, "-m", "aev:alpha=0.5,n=2", "--subsets", "2", "-f", "csv",
                 "--coefficients", "pearson,kendall-b"])  # fmt: skip
    out, err = capsys.readouterr()
    table = list(csv.reader(io.StringIO(out)))
    assert code == 0, err
    assert {r[0] for r in table[1:]} == {"AEv(0.5,2)"} and {r[3] for r in table[1:]} == {"pearson", "kendall-b"}
    with pytest.warns(FutureWarning, match="--coefficient is deprecated"):
        code = main(["refcurve", *files, *common, "-m", "bleu", "--subsets", "2", "-f", "csv", "--coefficient", "r2"])
    out, err = capsys.readouterr()
    assert code == 0 and out.splitlines()[1].split(",")[3] == "r2"
    for cmd in (["refcurve", "--subsets", "2"], ["correlate"]):  # -w sets the decimals of every text table
        assert main([cmd[0], *files, *common, "-m", "bleu", *cmd[1:], "-w", "5"]) == 0
        assert re.search(r"\b0\.\d{5}\b", capsys.readouterr().out)
