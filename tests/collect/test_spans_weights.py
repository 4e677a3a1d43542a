"""The MQM weights of a study (``[spans] weights``): a severity of the study's own (``Critical``) weighs what the
study says in the stored ``mqm`` score (it weighed 0 before, as no weight could be given), a severity without a
weight is refused when the study is read, and the datasheet carries the weights in the form ``--mqm-weights``
takes, so ``correlate`` on the export scores as the study did."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from collect.settle_studies import judge_every_trial
from collect.span_studies import write_span_study
from ngrameval.cli import main
from ngrameval.collect.spans import submit_marks
from ngrameval.collect.store import Store
from ngrameval.collect.study import StudyError, load_study
from ngrameval.io.spans import read_spans
from ngrameval.meta.mqm import mqm_segment_scores

SEVERITIES = 'severities = ["Critical", "Major", "Minor"]\n'
WEIGHTS = "weights = { Critical = 10, Major = 5, Minor = 1 }\n"
NO_WEIGHT = (
    r"severity 'Critical' has no weight \(Google's weights have none: add \[spans\] weights, "
    r"e.g. weights = \{ Critical = 10, Major = 5, Minor = 1 \}\)"
)
MARKS = {"A": [], "B": [("Major", "Style")], "C": [("Critical", "Accuracy/Mistranslation"), ("Minor", "Style")]}


def _store(root: Path, url: str | None = None) -> Store:
    store = Store(load_study(write_span_study(root, "mqm", SEVERITIES + WEIGHTS)), url)
    store.init()
    return store


def _answer_all(store: Store) -> None:
    """One judge marking each output by its system (:data:`MARKS`), the spans side by side from character 0."""

    def answer(aid: int, lease: str, system: str) -> None:
        marks = [{"start": 2 * k, "end": 2 * k + 1, "severity": sev, "category": cat}
                 for k, (sev, cat) in enumerate(MARKS[system])]  # fmt: skip
        assert submit_marks(store, aid, lease, json.dumps(marks), {}).outcome == "stored"

    judge_every_trial(store, answer)


@pytest.mark.slow
def test_the_study_weights_score_its_own_severity(tmp_path: Path, db_url: str) -> None:
    store = _store(tmp_path, db_url)
    _answer_all(store)
    got = {(t.system, r.score) for t, r, _ in store.ratings() if r.criterion == "mqm" and t.kind == "normal"}
    assert got == {("A", 0.0), ("B", -5.0), ("C", -11.0)}  # Critical 10 + Minor 1


@pytest.mark.slow
def test_the_export_carries_the_weights_for_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = _store(tmp_path)
    for _ in range(4):  # four raters: a second square, so that two raters share a segment (agreement)
        _answer_all(store)
    out = tmp_path / "export"
    assert main(["collect", "export", str(store.study.path), "--out", str(out), "--datasheet"]) == 0
    capsys.readouterr()
    option = json.loads((out / "datasheet.json").read_text(encoding="utf-8"))["error_spans"]["mqm_weights"]
    assert option == "critical=10,major=5,minor=1"
    spans = str(out / "spans.tsv")
    with (out / "judgments.csv").open(encoding="utf-8") as f:
        stored = {(r["system"], float(r["score"])) for r in csv.DictReader(f)}
    scored = mqm_segment_scores(read_spans(spans), {"critical": 10.0, "major": 5.0, "minor": 1.0})
    assert {(s.system, s.score) for s in scored} == stored  # the export scores as the study stored
    argv = ["agreement", "-j", spans, "--judgments-layout", "mqm", "-f", "json"]
    assert main([*argv, "--mqm-weights", option]) == 0, capsys.readouterr().err
    captured = capsys.readouterr()
    assert captured.err == "" and json.loads(captured.out)["agreement"]
    with pytest.warns(UserWarning, match="no MQM weight for 'critical'"):
        assert main(argv) == 0  # without the study's weights: Critical weighs 0, and the warning says so


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (SEVERITIES, NO_WEIGHT),
        (SEVERITIES + "weights = { Critical = 10, Major = 5 }\n", r"severity 'Minor' has no weight \(give it one"),
        (SEVERITIES + WEIGHTS.replace("Minor = 1", "Minr = 1"), r"'Minr' is not a severity of the study"),
        (SEVERITIES + WEIGHTS.replace("Minor = 1", 'Minor = "1"'), r"the weight of 'Minor' must be a number"),
        (SEVERITIES + WEIGHTS.replace("Minor = 1", "Minor = -1"), r"the weight of 'Minor' must be a finite number"),
        (SEVERITIES + WEIGHTS.replace("Minor = 1", "Minor = nan"), r"the weight of 'Minor' must be a finite number"),
        (SEVERITIES + WEIGHTS.replace("Minor = 1", "Minor = 1, minor = 2"), r"'minor' is given twice"),
        (SEVERITIES + "weights = {}\n", r"key 'weights' must be a table"),
    ],
)
def test_bad_weights_name_the_key(tmp_path: Path, extra: str, message: str) -> None:
    with pytest.raises(StudyError, match=message) as got:
        load_study(write_span_study(tmp_path, "mqm", extra))
    assert "[spans]: key 'weights'" in str(got.value)


def test_esa_has_no_weights(tmp_path: Path) -> None:
    with pytest.raises(StudyError, match=r"key 'weights' is for mqm studies"):
        load_study(write_span_study(tmp_path, "esa", "[spans]\nweights = { major = 5 }\n"))
