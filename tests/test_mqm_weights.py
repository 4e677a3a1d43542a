"""MQM severity weights on the command line (``--mqm-weights``): a custom severity gets its weight in ``agreement``
and ``correlate --judgments-layout mqm`` as through the API; a severity of the file without a weight is an error
with the option and a warning without it (it weighs 0 as in mt-metrics-eval, which it silently did before);
malformed weights, misspelt severities and the option on another layout are one-line errors (exit 2)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from ngrameval.cli import main
from ngrameval.errors import ConfigError
from ngrameval.io.spans import read_spans
from ngrameval.meta.agreement import agreement, judge_table
from ngrameval.meta.mqm import MQM_WEIGHTS, mqm_segment_scores, parse_weights, to_judgments, unweighted

RATINGS = str(Path(__file__).parent / "golden" / "mqm" / "ratings.tsv")  # severities Critical, Major, Minor, ...


def _agreement(capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, object]:
    assert main(["agreement", "-j", RATINGS, "--judgments-layout", "mqm", "-f", "json", *extra]) == 0
    out: dict[str, object] = json.loads(capsys.readouterr().out)["agreement"][0]
    return out


def _expected(weights: dict[str, float]) -> dict[str, object]:
    judged = to_judgments(mqm_segment_scores(read_spans(RATINGS), weights), "mqm")
    out: dict[str, object] = json.loads(json.dumps(dataclasses.asdict(agreement(judge_table(judged, "mqm")))))
    return out


def test_the_file_has_a_severity_without_a_default_weight() -> None:
    missing = unweighted(read_spans(RATINGS))
    assert list(missing) == ["critical"] and len(missing["critical"]) == 9
    assert not unweighted(read_spans(RATINGS), {**MQM_WEIGHTS, "critical": 10.0})


def test_a_custom_severity_gets_its_weight_on_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    custom = {**MQM_WEIGHTS, "critical": 10.0}
    got = _agreement(capsys, "--mqm-weights", "google,Critical=10")
    assert got == _expected(custom) and got != _expected(dict(MQM_WEIGHTS))
    # the whole table by hand, in any case, the most specific match winning
    table = "major=5,MINOR=1,Neutral=0,Major/Non-translation!=25,Minor/Fluency/Punctuation=0.1,Critical=10"
    assert _agreement(capsys, "--mqm-weights", table) == got


@pytest.mark.slow
def test_correlate_takes_the_weights(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    custom = {**MQM_WEIGHTS, "critical": 10.0}
    segs = mqm_segment_scores(read_spans(RATINGS), custom)
    scores = tmp_path / "scores.tsv"
    rng = np.random.default_rng(0)
    scores.write_text("system\tsegment\tm\n" + "".join(f"{s.system}\t{s.segment}\t{rng.random()!r}\n" for s in segs))
    argv = ["correlate", "-j", RATINGS, "--judgments-layout", "mqm", "--scores", str(scores), "--segment-column",
            "segment", "--level", "system", "-f", "json"]  # fmt: skip
    assert main([*argv, "--mqm-weights", "google,Critical=10"]) == 0, capsys.readouterr().err
    weighted = json.loads(capsys.readouterr().out)
    assert main(argv) == 0
    default = json.loads(capsys.readouterr().out)
    assert weighted != default  # the Critical errors now count against their systems


def test_without_the_option_an_unweighted_severity_is_warned_about(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.warns(UserWarning, match=r"no MQM weight for 'critical' \(9 errors, the first at .*ratings.tsv:\d+\)"):
        got = _agreement(capsys)
    assert got == _expected(dict(MQM_WEIGHTS))  # weighed 0, as mt-metrics-eval does (tests/test_mqm.py)


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ("Major=5,Minor=1,Neutral=0", "no weight for 'critical' (9 errors, the first at"),
        ("google,Majr=3", "severity 'majr' does not occur in"),
        ("google,Critical=ten", "the weight of 'Critical' must be a number, got 'ten'"),
        ("google,Critical=nan", "the weight of 'Critical' must be a finite number >= 0, got 'nan'"),
        ("google,Critical=-1", "must be a finite number >= 0, got '-1'"),
        ("google,Critical", "expected SEVERITY[/CATEGORY]=WEIGHT or google, got 'Critical'"),
        ("google,=4", "expected severity[/category]=weight, got an empty name"),
        ("google,Critical=1,critical=2", "'critical' is given twice"),
        ("google,,Critical=1", "expected SEVERITY[/CATEGORY]=WEIGHT or google, got ''"),
    ],
)
def test_bad_weights_are_one_line_errors(weights: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["agreement", "-j", RATINGS, "--judgments-layout", "mqm", "--mqm-weights", weights]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert line.startswith("ngrameval: error: --mqm-weights: ") and message in line


def test_the_option_needs_the_mqm_layout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    esa = tmp_path / "esa.tsv"
    esa.write_text(
        "system\tdoc\tdoc_id\trater\tcategory\tseverity\tstart\tend\tscore\nA\td\t1\tr1\t\tminor\t0\t4\t80\n"
    )
    assert main(["agreement", "-j", str(esa), "--judgments-layout", "esa", "--mqm-weights", "google"]) == 2
    assert "--mqm-weights weighs MQM errors: it needs --judgments-layout mqm (got esa)" in capsys.readouterr().err


def test_the_api_refuses_weights_that_are_not_penalties() -> None:
    with pytest.raises(ConfigError, match="finite number >= 0"):
        parse_weights("Major:nan")
    with pytest.raises(ConfigError, match="finite number >= 0"):
        parse_weights("Major:-5")
