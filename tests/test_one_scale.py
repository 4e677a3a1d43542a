"""One scale per number (issue 28 item 6): the same score reads the same in every notebook repr, a p-value is
formatted the same in text and HTML, and an uncorrected comparison prints one p column."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import ngrameval as ne
from ngrameval.cli import main
from ngrameval.meta import compare
from ngrameval.meta.metric_difference import MetricDifference
from ngrameval.report.tabular import p_text

HYPS = {"a": ["the cat sat on the mat", "a dog barks", "it rains"], "b": ["the cat", "a dog", "rain it does"]}
REFS = ["the cat sat on a mat", "a dog barks", "it rains today"]


def _cells(html: str) -> list[str]:
    return re.findall(r"<td>([^<]*)</td>", html)


@pytest.mark.filterwarnings("ignore:with .* AR trials:UserWarning")
def test_score_scores_and_comparison_show_one_scale() -> None:
    scores = ne.score(HYPS, REFS, "bleu")
    shown = f"{scores[0].score * 100:.4g}"
    assert shown in _cells(scores[0]._repr_html_())
    assert shown in _cells(scores._repr_html_())
    assert shown in _cells(compare(HYPS, REFS, "bleu", n_resamples=99)._repr_html_())
    assert f"{scores[0].score:.4g}" not in _cells(scores[0]._repr_html_())


def test_p_values_read_the_same_in_text_and_html() -> None:
    from ngrameval.report.meta import differences_text

    d = MetricDifference("A", "B", "da", "system", "pearson", 0.9, 0.8, 0.95, 16, 6.09, 1.92e-05, 0.002, 1000, 1)
    text = differences_text([d])
    assert "1.92e-05" in text and "0.0000" not in text
    assert p_text(1.92e-05) == "1.92e-05" and p_text(0.13963) == "0.1396"


def test_correction_none_prints_one_p(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = []
    for name, lines in HYPS.items():
        (tmp_path / name).write_text("\n".join(lines) + "\n")
        paths.append(str(tmp_path / name))
    (tmp_path / "ref").write_text("\n".join(REFS) + "\n")
    base = ["compare", *paths, "-r", str(tmp_path / "ref"), "--paired-ar-n", "99"]
    assert main([*base, "--correction", "none"]) == 0
    out = capsys.readouterr().out
    assert "p (none)" not in out and re.search(r"A - B\s+p\s+sig", out)
    assert main([*base, "--correction", "holm"]) == 0
    assert "p (holm)" in capsys.readouterr().out
