"""MQM and ESA scores of span annotations: equal to mt-metrics-eval's score_mqm.py (tests/golden/mqm), span
agreement by hand, and the span reader's errors."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from ngrameval.errors import ConfigError, InputError
from ngrameval.io.spans import read_spans
from ngrameval.meta.agreement import agreement, judge_table
from ngrameval.meta.correlate import aggregate
from ngrameval.meta.mqm import (
    MQM_WEIGHTS,
    esa_segment_scores,
    mqm_segment_scores,
    parse_weights,
    span_agreement,
    span_weight,
    system_scores,
    to_judgments,
)

GOLDEN = Path(__file__).parent / "golden" / "mqm"


def test_mqm_scores_equal_mt_metrics_eval_score_mqm() -> None:
    expected = {}
    for line in (GOLDEN / "scores.tsv").read_text().splitlines():
        system, doc, doc_id, score, *raters = line.split("\t")
        expected[system, doc, int(doc_id)] = (float(score), {r.split("=")[0]: float(r.split("=")[1]) for r in raters})
    got = mqm_segment_scores(read_spans(str(GOLDEN / "ratings.tsv")))
    assert len(got) == len(expected) == 24
    for s in got:
        score, raters = expected[s.system, s.doc, s.doc_id]
        assert s.score == score  # bit for bit
        assert dict(s.raters) == raters


def test_default_weights_are_mt_metrics_eval_defaults() -> None:
    assert parse_weights("Major:5 Minor:1 Neutral:0 Major/Non-translation!:25 Minor/Fluency/Punctuation:0.1") == dict(
        MQM_WEIGHTS
    )
    assert span_weight("Major", "Non-translation!") == 25
    assert span_weight("minor", "Fluency/Punctuation") == 0.1
    assert span_weight("Major", "Fluency/Punctuation") == 5
    assert span_weight("Critical", "Other") == 0
    with pytest.raises(ConfigError, match="severity"):
        parse_weights("Major=5")


def test_v_marks_give_offsets_and_system_scores_are_segment_means(tmp_path: Path) -> None:
    spans = read_spans(str(GOLDEN / "ratings.tsv"))
    first = spans[0]
    assert (first.start, first.end) == (16, 24)  # "1 of sys" in "Target sentence 1 of sysA in news-1 ."
    segs = mqm_segment_scores(spans)
    sys_scores = system_scores(segs)
    assert sys_scores["sysA"] == pytest.approx(np.mean([s.score for s in segs if s.system == "sysA"]))


def _esa(tmp_path: Path) -> str:
    rows = [
        "system\tdoc\tdoc_id\trater\tcategory\tseverity\tstart\tend\tscore",
        "A\td\t1\tr1\t\tminor\t0\t4\t80",
        "A\td\t1\tr1\t\tmajor\t6\t10\t80",
        "A\td\t1\tr2\t\tminor\t0\t4\t70",
        "A\td\t2\tr1\t\t\t\t\t100",
        "A\td\t2\tr2\t\tmajor\t2\t5\t40",
        "B\td\t1\tr1\t\tmajor\t0\t8\t30",
        "B\td\t1\tr2\t\tmajor\t0\t6\t50",
        "B\td\t2\tr1\t\t\t\t\t90",
        "B\td\t2\tr2\t\t\t\t\t95",
    ]
    p = tmp_path / "esa.tsv"
    p.write_text("\n".join(rows) + "\n")
    return str(p)


def test_esa_scores_and_span_agreement_by_hand(tmp_path: Path) -> None:
    spans = read_spans(_esa(tmp_path))
    segs = esa_segment_scores(spans)
    assert [s.score for s in segs] == [75.0, 70.0, 40.0, 92.5]
    assert system_scores(segs) == {"A": 72.5, "B": 66.25}
    got = span_agreement(spans)
    # r1 spans {(0,4),(6,10)},{},{(0,8)},{} ; r2 {(0,4)},{(2,5)},{(0,6)},{}: exact common 1 of 3 + 3 spans
    assert got.exact_f1 == pytest.approx(2 * 1 / 6)
    # characters: r1 {0-3,6-9} + {} + {0-7}; r2 {0-3} + {2-4} + {0-5}: common 4 + 0 + 6 = 10; sizes 16 and 13
    assert got.character_f1 == pytest.approx(2 * 10 / 29)
    assert (got.rater_pairs, got.segments) == (1, 4)
    assert span_agreement(spans, severity=True).exact_f1 == pytest.approx(2 * 1 / 6)


def test_scores_feed_aggregate_and_krippendorff(tmp_path: Path) -> None:
    segs = esa_segment_scores(read_spans(_esa(tmp_path)))
    judgments = to_judgments(segs, "esa")
    human = aggregate(judgments, "esa", ["A", "B"], ["d:1", "d:2"])
    assert human.system.tolist() == [72.5, 66.25]
    a = agreement(judge_table(judgments, "esa"))
    assert a.judges == 2 and a.items_judged_twice == 4
    assert a.krippendorff_alpha is not None and -1 <= a.krippendorff_alpha <= 1
    mqm = to_judgments(mqm_segment_scores(read_spans(str(GOLDEN / "ratings.tsv"))), "mqm")
    assert all(j.score <= 0 for j in mqm)  # penalties negated: higher = better


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("A\td\tx\tr1\t\tminor\t0\t4\t80", "doc_id.*integer"),
        ("A\td\t1\tr1\t\tminor\t5\t4\t80", "before its start"),
        ("A\td\t1\tr1\t\tminor\t0\t4", "fields"),
        ("A\td\t1\tr1\t\tminor\t0\t4\tgood", "score.*expected a number"),
    ],
)
def test_bad_rows_name_file_and_line(tmp_path: Path, row: str, message: str) -> None:
    p = tmp_path / "bad.tsv"
    p.write_text("system\tdoc\tdoc_id\trater\tcategory\tseverity\tstart\tend\tscore\n" + row + "\n")
    with pytest.raises(InputError, match=f"bad.tsv:2: .*{message}"):
        read_spans(str(p))


def test_missing_columns_and_bad_esa(tmp_path: Path) -> None:
    p = tmp_path / "m.tsv"
    p.write_text("system\tdoc\trater\n")
    with pytest.raises(InputError, match="missing column"):
        read_spans(str(p))
    p.write_text("system\tdoc\tdoc_id\trater\tcategory\tseverity\tscore\nA\td\t1\tr\t\tcritical\t50\n")
    with pytest.raises(InputError, match="minor or major"):
        esa_segment_scores(read_spans(str(p)))
    p.write_text("system\tdoc\tdoc_id\trater\tcategory\tseverity\tscore\nA\td\t1\tr\t\tminor\t150\n")
    with pytest.raises(InputError, match="0-100"):
        esa_segment_scores(read_spans(str(p)))


def test_agreement_and_correlate_read_span_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ngrameval.cli import main
    from ngrameval.meta.spa import soft_pairwise_accuracy

    ratings = str(GOLDEN / "ratings.tsv")
    assert main(["agreement", "-j", ratings, "--judgments-layout", "mqm", "-f", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    spans = read_spans(ratings)
    assert out["spans"][0] == dataclasses.asdict(span_agreement(spans))
    judged = to_judgments(mqm_segment_scores(spans), "mqm")
    assert out["agreement"][0] == json.loads(json.dumps(dataclasses.asdict(agreement(judge_table(judged, "mqm")))))
    segs = mqm_segment_scores(spans)
    rng = np.random.default_rng(0)
    metric = {(s.system, s.segment): float(rng.random()) for s in segs}
    scores = tmp_path / "scores.tsv"
    scores.write_text("system\tsegment\tm\n" + "".join(f"{a}\t{b}\t{v!r}\n" for (a, b), v in metric.items()))
    args = ["correlate", "-j", ratings, "--judgments-layout", "mqm", "--scores", str(scores), "--segment-column",
            "segment", "--level", "segment", "--spa", "--spa-side", "segments", "-f", "json"]  # fmt: skip
    assert main(args) == 0, capsys.readouterr().err
    (got,) = json.loads(capsys.readouterr().out)["spa"]
    systems = list(dict.fromkeys(s.system for s in segs))
    human = np.array([[s.score for s in segs if s.system == name] for name in systems])
    m = np.array([[metric[s.system, s.segment] for s in segs if s.system == name] for name in systems])
    assert got["value"] == soft_pairwise_accuracy(human, m).value
    assert main([*args[:-2], "--where", "system=sysA"]) == 2
    assert "--where" in capsys.readouterr().err
