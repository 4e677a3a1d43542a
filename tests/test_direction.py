"""Metric direction (issue 28 item 1): every metric knows whether lower is better, and meta-evaluation
(correlations, Williams'/permutation tests, clusters, the report) orients lower-is-better metrics (TER and
external scores declared with --lower-is-better) by negating them, as mt-metrics-eval does."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ngrameval.api import measure
from ngrameval.cli import main
from ngrameval.meta.correlate import HumanScores, correlate
from ngrameval.meta.metric_difference import compare_correlations
from ngrameval.meta.mtme_sets import clusters
from ngrameval.metrics.registry import _FACTORIES, parse_specs

HYPS = {
    "s1": ["the cat sat on the mat", "a dog barks loudly", "it rains today", "we went home"],
    "s2": ["the cat is on the mat", "the dog barks", "it is raining today", "we go home now"],
    "s3": ["cat mat", "dog", "rain", "home"],
    "s4": ["the cat sat on a mat", "a dog barked loudly", "today it rains", "we went to home"],
    "s5": ["a cat", "dog barks", "raining", "home we"],
}
REF = ["the cat sat on the mat", "a dog barks loudly", "it is raining today", "we went home"]
HUMAN = {"s1": 0.9, "s2": 0.5, "s3": -0.8, "s4": 0.7, "s5": -0.3}


def _human() -> HumanScores:
    return HumanScores("da", tuple(HYPS), np.array(list(HUMAN.values())), None, len(HUMAN), 0)


def test_every_metric_states_its_direction() -> None:
    for name, factory in _FACTORIES.items():
        assert factory().higher_is_better is (name != "ter"), name


def test_measured_rows_carry_the_direction() -> None:
    rows = measure(HYPS, REF, parse_specs("bleu,ter,chrf"))
    assert [r.higher_is_better for r in rows] == [True, False, True]


def test_ter_correlates_positively_when_it_agrees_with_people() -> None:
    rows = measure(HYPS, REF, parse_specs("bleu,ter"))
    got = {(c.metric, c.coefficient): c for c in correlate(rows, _human(), coefficients=("pearson", "accuracy"),
                                                          n_resamples=50)}  # fmt: skip
    ter = rows[1].corpus()
    raw = np.corrcoef(ter, list(HUMAN.values()))[0, 1]
    assert raw < 0  # TER falls as people's scores rise
    assert got["TER", "pearson"].value == pytest.approx(-raw, abs=1e-12)
    assert got["TER", "pearson"].negated and not got["BLEU", "pearson"].negated
    assert got["TER", "pearson"].ci_low > 0  # the interval is of the negated scores too
    assert got["TER", "accuracy"].value > 0.5


def test_williams_and_clusters_use_the_oriented_scores() -> None:
    rows = measure(HYPS, REF, parse_specs("bleu,ter"))
    (d,) = compare_correlations(rows, _human(), n_resamples=99)
    assert d.value_a > 0 and d.value_b > 0 and d.r_ab > 0
    ranks = {c.metric: c.rank for c in clusters([d], 0.05)}
    assert set(ranks) == {"BLEU", "TER"}


def test_external_scores_declared_lower_is_better(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "da.tsv").write_text("system\tscore\n" + "".join(f"{s}\t{v}\n" for s, v in HUMAN.items()))
    error = {s: 1.0 - v for s, v in HUMAN.items()}  # an error rate: perfectly opposite to people
    (tmp_path / "err.csv").write_text("system,ERR\n" + "".join(f"{s},{v}\n" for s, v in error.items()))
    base = ["correlate", "-j", str(tmp_path / "da.tsv"), "--scores", str(tmp_path / "err.csv"),
            "--coefficients", "pearson", "--confidence-n", "20", "-f", "json"]  # fmt: skip
    assert main(base) == 0
    (plain,) = json.loads(capsys.readouterr().out)
    assert plain["value"] == pytest.approx(-1.0) and not plain["negated"]
    assert main([*base, "--lower-is-better", "ERR"]) == 0
    (flipped,) = json.loads(capsys.readouterr().out)
    assert flipped["value"] == pytest.approx(1.0) and flipped["negated"]
    assert main([*base, "--lower-is-better", "NOPE"]) == 2
    err = capsys.readouterr().err
    assert "--lower-is-better" in err and "'NOPE'" in err and "ERR" in err


def test_the_text_output_states_the_direction(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = []
    for name, lines in HYPS.items():
        (tmp_path / name).write_text("\n".join(lines) + "\n")
        paths.append(str(tmp_path / name))
    (tmp_path / "ref").write_text("\n".join(REF) + "\n")
    (tmp_path / "da.tsv").write_text("system\tscore\n" + "".join(f"{s}\t{v}\n" for s, v in HUMAN.items()))
    code = main(["correlate", *paths, "--names", *HYPS, "-r", str(tmp_path / "ref"), "-j", str(tmp_path / "da.tsv"),
                 "-m", "bleu,ter", "--confidence-n", "20"])  # fmt: skip
    assert code == 0
    assert "TER: lower is better; its scores are negated" in capsys.readouterr().out


def test_api_scores_lower_is_better() -> None:
    scores = {"ERR": {s: 1.0 - v for s, v in HUMAN.items()}}
    (c,) = correlate([], _human(), coefficients=("pearson",), n_resamples=20, scores=scores, lower_is_better=["ERR"])
    assert c.value == pytest.approx(1.0) and c.negated


def test_dot_plot_puts_the_best_system_on_top_for_ter() -> None:
    from ngrameval.meta.significance import paired_test
    from ngrameval.report.html_figures import scores_figure

    rows = measure(HYPS, REF, parse_specs("bleu,ter"))
    comp = paired_test(rows, list(HYPS), n_resamples=199, n_confidence=20, correction="none")
    fig = scores_figure(comp.metrics, 0.95)
    for panel, m in zip(fig.panels, comp.metrics, strict=True):
        top_first = [t for _, t in sorted(panel.y.ticks, reverse=True)]  # y grows upwards: the highest is on top
        best = (max if m.higher_is_better else min)(m.systems, key=lambda s: s.score).system
        assert top_first[0] == best, m.metric
    assert "lower is better" in fig.panels[1].title


def test_summary_heading_says_when_a_value_is_mapped_to_r_plus_1_over_2() -> None:
    from ngrameval.meta.mtme_sets import SetSummary
    from ngrameval.report.mtme import summary_text

    rows = [SetSummary("da", "system", "pearson", "BLEU", 2, 0.9, None, None, None),
            SetSummary("da", "system", "accuracy", "BLEU", 2, 0.8, None, None, None)]  # fmt: skip
    text = summary_text(rows)
    assert "avg (pearson + 1) / 2" in text and "avg accuracy" in text and "[0,1]" not in text


def test_compare_text_and_scatter_state_the_direction() -> None:
    from ngrameval.meta.significance import paired_test
    from ngrameval.report.html_figures import human_figure
    from ngrameval.report.significance import render_comparison

    rows = measure(HYPS, REF, parse_specs("bleu,ter"))
    text = render_comparison(paired_test(rows, list(HYPS), n_resamples=199, n_confidence=20, correction="none"))
    assert "TER (lower is better: the best system has the lowest score)" in text
    assert "BLEU (lower" not in text
    scores = {r.metric: r.corpus() for r in rows}
    fig = human_figure(_human(), scores, {"BLEU": True, "TER": True}, lower=["TER"])
    assert [p.title for p in fig.panels] == ["BLEU", "TER (lower is better)"]
