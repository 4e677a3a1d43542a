"""Side-by-side preferences on the command line: ``compare --preferences`` prints the Bradley-Terry fit, intervals
and win rates of :func:`ngrameval.meta.bradley_terry.bradley_terry` (text, JSON, CSV); ``correlate
--judgments-layout preferences`` correlates metric system scores with θ and with the win rates (equal to scipy on
the same numbers); bad input is one line and exit 2."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import pearsonr

from ngrameval.cli import main
from ngrameval.io.preferences import Preference, read_preferences
from ngrameval.meta.bradley_terry import bradley_terry
from ngrameval.report.preferences import render_preferences

TRUE = {"sysA": 1.0, "sysB": 0.4, "sysC": 0.0, "sysD": -0.6}


def _write(path: Path, n: int = 400, seed: int = 3) -> Path:
    rng = np.random.default_rng(seed)
    names = list(TRUE)
    rows = ["item,system_a,system_b,winner,rater"]
    for k in range(n):
        i, j = rng.choice(len(names), size=2, replace=False)
        a, b = names[i], names[j]
        if rng.random() < 0.1:
            w = "tie"
        else:
            w = "a" if rng.random() < 1 / (1 + np.exp(TRUE[b] - TRUE[a])) else "b"
        rows.append(f"{k},{a},{b},{w},r{k % 5}")
    path.write_text("\n".join(rows) + "\n")
    return path


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_compare_preferences_json_csv_and_text_equal_the_fit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prefs = _write(tmp_path / "prefs.csv")
    fit = bradley_terry(read_preferences(str(prefs)), 100, 7, 0.9)
    code, out, err = run(["compare", "--preferences", str(prefs), "--confidence-n", "100", "--seed", "7", "--ci",
                          "0.9", "-f", "json"], capsys)  # fmt: skip
    assert code == 0, err
    got = json.loads(out)
    assert (got["resamples"], got["seed"], got["confidence"], got["dropped"]) == (100, 7, 0.9, 0)
    ranked = sorted(range(4), key=lambda k: -fit.theta[k])
    assert [s["system"] for s in got["systems"]] == [fit.systems[k] for k in ranked]
    assert [s["system"] for s in got["systems"]] == list(TRUE)  # 400 comparisons recover the true order
    for s, k in zip(got["systems"], ranked, strict=True):
        assert (s["theta"], s["low"], s["high"]) == (fit.theta[k], fit.low[k], fit.high[k])
        assert (s["win_rate"], s["comparisons"]) == (fit.win_rate[k], fit.comparisons[k])
    code, out, _ = run(["compare", "--preferences", str(prefs), "--confidence-n", "100", "--seed", "7", "--ci",
                        "0.9", "-f", "csv"], capsys)  # fmt: skip
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and [r["system"] for r in rows] == list(TRUE)
    assert [float(r["theta"]) for r in rows] == [fit.theta[k] for k in ranked]
    code, out, _ = run(["compare", "--preferences", str(prefs), "--confidence-n", "100", "--seed", "7", "--ci",
                        "0.9", "-w", "3"], capsys)  # fmt: skip
    assert code == 0 and "400 comparisons, 4 systems" in out and "90% CI" in out and "100 resamples, seed 7" in out
    first = next(line for line in out.splitlines() if line.startswith("1 "))
    k = ranked[0]
    assert first.split()[:3] == ["1", "sysA", f"{fit.theta[k]:+.3f}"]
    assert f"({fit.low[k]:+.3f}, {fit.high[k]:+.3f})" in first and f"{fit.win_rate[k]:.3f}" in first
    out_file = tmp_path / "bt.json"
    assert (
        run(
            [
                "compare",
                "--preferences",
                str(prefs),
                "-f",
                "json",
                "-o",
                str(out_file),
                "--seed",
                "7",
                "--ci",
                "0.9",
                "--confidence-n",
                "100",
            ],
            capsys,
        )[0]
        == 0
    )
    assert json.loads(out_file.read_text())["systems"] == got["systems"]


def test_no_resamples_gives_no_interval(tmp_path: Path) -> None:
    fit = bradley_terry(read_preferences(str(_write(tmp_path / "prefs.csv", 60))), n_resamples=0)
    assert all(s["low"] is None and s["high"] is None for s in json.loads(render_preferences(fit, "json"))["systems"])
    assert render_preferences(fit, "csv").splitlines()[1].split(",")[2:4] == ["", ""]
    assert "nan" not in render_preferences(fit, "text").lower()


def test_correlate_reads_preferences_as_system_scores(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prefs = _write(tmp_path / "prefs.csv")
    metric = {"sysA": 31.0, "sysB": 29.5, "sysC": 30.1, "sysD": 22.0}
    scores = tmp_path / "scores.csv"
    scores.write_text("system,bleu\n" + "".join(f"{s},{v}\n" for s, v in metric.items()))
    code, out, err = run(["correlate", "-j", str(prefs), "--judgments-layout", "preferences", "--scores", str(scores),
                          "--coefficients", "pearson", "--confidence-n", "10", "-f", "json"], capsys)  # fmt: skip
    assert code == 0, err
    got = {r["criterion"]: r["value"] for r in json.loads(out)}
    fit = bradley_terry(read_preferences(str(prefs)), n_resamples=0)
    x = [metric[s] for s in fit.systems]
    assert got["bradley-terry"] == pytest.approx(pearsonr(x, fit.theta).statistic, abs=1e-12)
    assert got["win-rate"] == pytest.approx(pearsonr(x, fit.win_rate).statistic, abs=1e-12)


CORRELATE = ["correlate", "-j", "{good}", "--judgments-layout", "preferences", "--scores", "{scores}"]


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["compare", "--preferences", "{missing}"], "no such file"),
        (["compare", "--preferences", "{bad}"], "bad.csv:3: column 'winner' must be a, b or tie"),
        (["compare", "--preferences", "{never}"], "never wins or never loses"),
        (["compare", "--preferences", "{good}", "sys.txt", "-r", "ref.txt"], "a system file does not apply"),
        (["compare", "--preferences", "{good}", "--baseline"], "--baseline does not apply"),
        (["compare", "--preferences", "{good}", "-o", "{good}"], "-o"),
        ([*CORRELATE, "--where", "x=1"], "--where"),
        ([*CORRELATE, "--segment-column", "item"], "system-level"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], words: str
) -> None:
    files = {"good": _write(tmp_path / "good.csv", 80), "missing": tmp_path / "missing.csv"}
    files["bad"] = tmp_path / "bad.csv"
    files["bad"].write_text("item,system_a,system_b,winner\n1,x,y,a\n2,x,y,left\n")
    files["never"] = tmp_path / "never.csv"
    files["never"].write_text("item,system_a,system_b,winner\n1,x,y,a\n2,x,z,a\n3,y,z,tie\n")
    files["scores"] = tmp_path / "scores.csv"
    files["scores"].write_text("system,bleu\n" + "".join(f"{s},1\n" for s in TRUE))
    before = files["good"].read_text()
    code, out, err = run([a.format(**files) for a in argv], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("ngrameval: error: ") and words in err, err
    assert "Traceback" not in err and files["good"].read_text() == before


def test_agreement_refuses_preferences(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prefs = _write(tmp_path / "prefs.csv", 40)
    code, _, err = run(["agreement", "-j", str(prefs), "--judgments-layout", "preferences", "--judge-column",
                        "rater"], capsys)  # fmt: skip
    assert code == 2 and "system-level" in err


def test_preference_objects_keep_where_they_were_read(tmp_path: Path) -> None:
    prefs = read_preferences(str(_write(tmp_path / "p.csv", 5)))
    assert all(isinstance(p, Preference) and p.path.endswith("p.csv") for p in prefs)
    assert [p.line for p in prefs] == [2, 3, 4, 5, 6]
