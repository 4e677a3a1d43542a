"""Judgment layouts (ngrameval.io.layouts): one column per system, E2E's numbered slots, SummEval's original JSONL,
the valid range and repeated judgments -- on the shared data (skipped when absent) and on small and hostile files."""

from __future__ import annotations

import csv
import json
import sys
from collections import Counter
from pathlib import Path

import pytest

from ngrameval.cli import main
from ngrameval.errors import InputError
from ngrameval.io.judgments import Judgment, read_judgments, read_judgments_counted
from ngrameval.io.layouts import criterion_of

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
E2E = DATA / "e2e"
SUMMEVAL = DATA / "summeval" / "summeval.jsonl"
sys.path.insert(0, str(ROOT / "reproductions"))

import prepare  # noqa: E402

E2E_SLOTS = {"layout": "slots", "system": "sys", "segment": "mr_id", "judge": "_worker_id", "valid": (0.0, 100.0)}


def _key(j: Judgment) -> tuple[str, str | None, str | None, str, float]:
    return j.system, j.segment, j.judge, j.criterion, j.score


def _write(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return str(p)


# ---------------------------------------------------------------- E2E (slots), the shared file


@pytest.mark.skipif(not (E2E / "human_ratings_quality.csv").is_file(), reason="shared E2E data absent")
@pytest.mark.parametrize(("name", "column"), [("quality", "quality"), ("naturalness", "natur")])
@pytest.mark.slow
def test_e2e_slots_equal_the_prepared_long_file(tmp_path: Path, name: str, column: str) -> None:
    """The upstream file read as slots = prepare.py's long file read back; the counts = a plain csv count."""
    path = E2E / f"human_ratings_{name}.csv"
    got, counts = read_judgments_counted(str(path), scores=[column], repeated="mean", **E2E_SLOTS)  # type: ignore[arg-type]
    prepare.e2e(E2E, tmp_path)
    back = read_judgments(str(tmp_path / f"{name}.csv"), scores=[name], segment="mr_id", judge="worker")
    assert [(j.system, j.segment, j.judge, float(f"{j.score:g}")) for j in got] == [
        (j.system, j.segment, j.judge, j.score) for j in back
    ]
    with path.open(encoding="utf-8") as f:
        cells = [((r[f"sys{i}"], r["mr_id"], r["_worker_id"]), float(r[f"{column}{i}"]))
                 for r in csv.DictReader(f) for i in range(1, 6)]  # fmt: skip
    assert counts.scores == len(cells)
    assert counts.outside == sum(not 0 <= v <= 100 for _, v in cells) > 0
    seen = Counter(k for k, v in cells if 0 <= v <= 100)
    assert counts.repeated == sum(n > 1 for n in seen.values()) > 0 and len(got) == len(seen)
    assert {j.criterion for j in got} == {column}
    with pytest.raises(InputError, match=r"human_ratings_.*\.csv:\d+: duplicate judgment \(same as line \d+\)"):
        read_judgments(str(path), scores=[column], **E2E_SLOTS)  # type: ignore[arg-type]


@pytest.mark.skipif(not (E2E / "human_ratings_quality.csv").is_file(), reason="shared E2E data absent")
@pytest.mark.slow
def test_e2e_correlate_from_the_upstream_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`correlate -j human_ratings_quality.csv --judgments-layout slots ...` = the same on prepare.py's file."""
    prepare.e2e(E2E, tmp_path)
    capsys.readouterr()
    common = [*map(str, sorted((tmp_path / "sys").iterdir())), "-r", str(tmp_path / "refs.tsv"), "--tsv",
              "--missing-empty-refs", "--segment-ids", str(tmp_path / "ids.txt"), "--segment-column", "mr_id",
              "-m", "bleu,rouge-l", "--coefficients", "pearson,kendall-b", "--confidence-n", "20",
              "-f", "json"]  # fmt: skip
    upstream = ["-j", str(E2E / "human_ratings_quality.csv"), "--judgments-layout", "slots", "--system-column", "sys",
                "--score-columns", "quality", "--judge-column", "_worker_id", "--valid-scores", "0,100",
                "--repeated", "mean"]  # fmt: skip
    with pytest.warns(UserWarning) as record:  # pytest takes the warnings the CLI prints on stderr
        assert main(["correlate", *common, *upstream]) == 0
    out = capsys.readouterr()
    said = " ".join(str(w.message) for w in record)
    assert "78 of 14895 scores outside 0..100 left out" in said  # the count prepare.py prints
    assert "90 (system, segment, judge, criterion) scored more than once" in said
    prepared = ["-j", str(tmp_path / "quality.csv"), "--score-columns", "quality", "--judge-column", "worker"]
    assert main(["correlate", *common, *prepared]) == 0
    assert json.loads(out.out) == json.loads(capsys.readouterr().out)
    assert main(["agreement", "-j", *upstream[1:], "--segment-column", "mr_id", "--krippendorff", "none",
                 "-f", "json"]) == 0  # fmt: skip
    assert main(["agreement", "-j", str(tmp_path / "quality.csv"), "--segment-column", "mr_id", "--judge-column",
                 "worker", "--score-columns", "quality", "--krippendorff", "none", "-f", "json"]) == 0  # fmt: skip
    first, second = capsys.readouterr().out.split("\n]\n", 1)
    assert json.loads(first + "\n]") == json.loads(second)


# ---------------------------------------------------------------- SummEval


def _summeval_line(model: str, doc: str, experts: list[dict[str, object]], turkers: list[dict[str, object]]) -> str:
    rec = {"id": doc, "decoded": "a summary", "expert_annotations": experts, "turker_annotations": turkers,
           "references": ["r"], "model_id": model, "filepath": f"cnndm/{doc}.story"}  # fmt: skip
    return json.dumps(rec) + "\n"


def _ann(c: float, s: float, f: float, r: float) -> dict[str, object]:
    return {"coherence": c, "consistency": s, "fluency": f, "relevance": r}


def test_summeval_original_layout(tmp_path: Path) -> None:
    text = _summeval_line("M1", "d1", [_ann(1, 2, 3, 4), _ann(2, 2, 3, 4), _ann(3, 2, 3, 4)], [_ann(5, 5, 5, 5)] * 5)
    text += _summeval_line("M2", "d1", [_ann(4, 4, 4, 4)] * 3, [_ann(1, 1, 1, 1)] * 5)
    path = _write(tmp_path, "model_annotations.aligned.paired.jsonl", text)
    experts = read_judgments(path)  # auto: summeval
    assert len(experts) == 2 * 3 * 4
    assert _key(experts[0]) == ("M1", "d1", "expert1", "coherence", 1.0)
    assert [j.score for j in experts if j.system == "M1" and j.criterion == "coherence"] == [1.0, 2.0, 3.0]
    assert {j.judge for j in experts} == {"expert1", "expert2", "expert3"}
    turkers = read_judgments(path, layout="summeval", annotators="turker", scores=["relevance"])
    assert [(j.system, j.judge, j.score) for j in turkers][:2] == [("M1", "turker1", 5.0), ("M1", "turker2", 5.0)]
    assert len(turkers) == 10 and {j.criterion for j in turkers} == {"relevance"}
    assert len(read_judgments(path, annotators="all")) == 2 * 8 * 4
    assert {j.segment for j in read_judgments(path, segment="filepath")} == {"cnndm/d1.story"}


@pytest.mark.parametrize(
    ("line", "pattern"),
    [
        ('{"model_id": "M1", "id": "d", "expert_annotations": {}}', r":1: expert_annotations: expected a list"),
        ('{"model_id": "M1", "id": "d", "expert_annotations": [3]}', r":1: expert_annotations\[1\]: expected an"),
        ('{"model_id": "M1", "id": "d", "expert_annotations": [{"coherence": 1}]}', r":1: expert_annotations\[1\]: no"),
        ('{"model_id": "M1", "id": "d", "expert_annotations": [{"coherence": true, "consistency": 1, "fluency": 1, '
         '"relevance": 1}]}', r":1: column 'expert_annotations\[1\]\.coherence': expected a number, got true"),
        ('{"model_id": "M1", "expert_annotations": []}', r"j\.jsonl:1: no column 'id'"),
        ('{"model_id": "M1", "id": "d", "turker_annotations": []}', r"j\.jsonl:1: no column 'expert_annotations'"),
    ],
)  # fmt: skip
def test_bad_summeval_files(tmp_path: Path, line: str, pattern: str) -> None:
    with pytest.raises(InputError, match=pattern) as exc:
        read_judgments(_write(tmp_path, "j.jsonl", line + "\n"), layout="summeval")
    assert "\n" not in str(exc.value)


def test_summeval_repeated_document_is_an_error(tmp_path: Path) -> None:
    """SummEval's authors' copy lists M23 twice (two variants): the reader says so rather than mixing them."""
    row = _summeval_line("M23", "d1", [_ann(1, 1, 1, 1)], [])
    with pytest.raises(InputError, match=r"j\.jsonl:2: duplicate judgment \(same as line 1\)"):
        read_judgments(_write(tmp_path, "j.jsonl", row + row))
    with pytest.raises(InputError, match="give no judge column"):
        read_judgments(_write(tmp_path, "k.jsonl", row), layout="summeval", judge="x")


@pytest.mark.skipif(not SUMMEVAL.is_file(), reason="shared SummEval data absent")
def test_shared_summeval_is_wide_and_its_original_layout_gives_the_same_means(tmp_path: Path) -> None:
    """The shared summeval.jsonl (BARTScore's conversion: expert means) reads as wide; written back in SummEval's
    original layout (3 expert annotations, each the mean) the summeval reader gives the same per-cell means."""
    crit = ["coherence", "consistency", "fluency", "relevance"]
    wide = read_judgments(str(SUMMEVAL), scores=crit, segment="doc_id")
    assert len(wide) == 1600 * 4
    rows = [json.loads(x) for x in SUMMEVAL.read_text(encoding="utf-8").split("\n") if x]
    path = tmp_path / "model_annotations.aligned.jsonl"
    path.write_text("".join(_summeval_line(r["system"], r["doc_id"], [{c: r[c] for c in crit}] * 3, [])
                            for r in rows), encoding="utf-8")  # fmt: skip
    original = read_judgments(str(path))
    assert len(original) == 3 * len(wide)
    assert [_key(j) for j in original if j.judge == "expert1"] == [
        (j.system, j.segment, "expert1", j.criterion, j.score) for j in wide
    ]


# ---------------------------------------------------------------- one column per system


def test_systems_layout(tmp_path: Path) -> None:
    path = _write(tmp_path, "fluency.csv", "seg,judge,tgen,slug\n1,w1,80,\n1,w2,70,60\n2,w1,,55.5\n")
    got = read_judgments(path, layout="systems", segment="seg", judge="judge")
    assert [_key(j) for j in got] == [
        ("tgen", "1", "w1", "fluency", 80.0),
        ("tgen", "1", "w2", "fluency", 70.0),
        ("slug", "1", "w2", "fluency", 60.0),
        ("slug", "2", "w1", "fluency", 55.5),
    ]
    assert [j.line for j in got] == [2, 3, 3, 4]
    assert [j.system for j in read_judgments(path, layout="systems", segment="seg", judge="judge",
                                             scores=["slug"])] == ["slug", "slug"]  # fmt: skip
    # auto never takes a table for one column per system
    with pytest.raises(InputError, match=r"fluency\.csv:2: no column 'system'"):
        read_judgments(path)
    assert criterion_of("x/q.csv.gz") == "q" and criterion_of("naturalness.tsv") == "naturalness"


@pytest.mark.parametrize(
    ("text", "kwargs", "pattern"),
    [
        ("seg,a,b\n1,2,x\n", {}, r"q\.csv:2: column 'b': expected a number, got 'x'"),
        ("seg,a,b\n1,2,3\n", {"scores": ["c"]}, r"q\.csv:2: no column 'c'"),
        ("seg\n1\n", {}, r"q\.csv:2: no system column"),
        ("seg,a\n1,2\n", {"criterion": "crit"}, r"q\.csv: the systems layout has no criterion column"),
        ("seg,a\n1,2\n1,3\n", {}, r"q\.csv:3: duplicate judgment \(same as line 2\)"),
    ],
)
def test_bad_systems_files(tmp_path: Path, text: str, kwargs: dict[str, object], pattern: str) -> None:
    with pytest.raises(InputError, match=pattern):
        read_judgments(_write(tmp_path, "q.csv", text), layout="systems", segment="seg", **kwargs)  # type: ignore[arg-type]


# ---------------------------------------------------------------- slots, hostile and small


SLOTS = "mr_id,w,sys1,sys2,quality1,quality2\n1,a,tgen,slug,90,80\n1,a,slug,tgen,70,\n2,b,tgen,slug,300,10\n"


def test_slots_auto_range_and_mean(tmp_path: Path) -> None:
    path = _write(tmp_path, "q.csv", SLOTS)
    got, counts = read_judgments_counted(path, system="sys", scores=["quality"], segment="mr_id", judge="w",
                                         valid=(0, 100), repeated="mean")  # fmt: skip
    assert [_key(j) for j in got] == [
        ("tgen", "1", "a", "quality", 90.0),
        ("slug", "1", "a", "quality", 75.0),  # 80 (line 2) and 70 (line 3): their mean, at its first line
        ("slug", "2", "b", "quality", 10.0),
    ]
    assert [j.line for j in got] == [2, 2, 4]
    assert (counts.scores, counts.outside, counts.repeated) == (5, 1, 1)
    with pytest.warns(UserWarning, match=r"q\.csv: 1 of 5 scores outside 0\.\.100 left out"):
        read_judgments(path, system="sys", scores=["quality"], segment="mr_id", judge="w", valid=(0, 100),
                       repeated="mean")  # fmt: skip
    with pytest.raises(InputError, match=r"q\.csv: no judgment read \(all 5 scores lie outside 200\.\.201"):
        read_judgments(path, system="sys", scores=["quality"], segment="mr_id", judge="w", valid=(200, 201))


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("m,sys1,sys3,quality1,quality3\n1,a,b,1,2\n", r"q\.csv:2: expected columns sys1 \.\. sys2 .*got sys1, sys3"),
        ("m,sys1,sys2,quality1\n1,a,b,1\n", r"q\.csv:2: expected columns quality1 \.\. quality2 .*got quality1"),
        ("m,sys1,quality1,quality2\n1,a,1,2\n", r"expected columns quality1 \.\. quality1 .*got quality1, quality2"),
        ("m,sys1,quality1\n1,,5\n", r"q\.csv:2: column quality1 has a score but sys1 names no system"),
        ("m,sys1,quality1\n1,a,five\n", r"q\.csv:2: column 'quality1': expected a number, got 'five'"),
        ("m,sysA,quality1\n1,a,1\n", r"q\.csv:2: no column 'sys1'"),
    ],
)
def test_bad_slots_files(tmp_path: Path, text: str, pattern: str) -> None:
    with pytest.raises(InputError, match=pattern) as exc:
        read_judgments(_write(tmp_path, "q.csv", text), layout="slots", system="sys", scores=["quality"])
    assert "\n" not in str(exc.value)


def test_slots_in_jsonl_need_every_slot_in_every_record(tmp_path: Path) -> None:
    text = '{"sys1": "a", "quality1": 3}\n{"sys1": "b"}\n'
    with pytest.raises(InputError, match=r"q\.jsonl:2: no column 'quality1'"):
        read_judgments(_write(tmp_path, "q.jsonl", text), system="sys", scores=["quality"])


def test_layout_options_are_checked(tmp_path: Path) -> None:
    path = _write(tmp_path, "j.csv", "system,score,crit\na,1,x\n")
    with pytest.raises(InputError, match="unknown judgment layout 'tall'"):
        read_judgments(path, layout="tall")
    with pytest.raises(InputError, match="repeated judgments: expected one of error, mean"):
        read_judgments(path, repeated="max")
    with pytest.raises(InputError, match="valid score range"):
        read_judgments(path, valid=(2, 1))
    with pytest.raises(InputError, match="long layout needs the criterion column"):
        read_judgments(path, layout="long")
    with pytest.raises(InputError, match="wide layout has one column per criterion"):
        read_judgments(path, layout="wide", criterion="crit")
    assert [_key(j) for j in read_judgments(path, criterion="crit")] == [("a", None, None, "x", 1.0)]


# ---------------------------------------------------------------- the command line


def test_cli_layout_errors_are_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = _write(tmp_path, "q.csv", "m,sys1,quality1\n1,a,1\n2,b,x\n")
    hyp = _write(tmp_path, "a", "x\ny\n")
    argv = ["correlate", hyp, "-r", hyp, "-j", bad, "--judgments-layout", "slots", "--system-column", "sys",
            "--score-columns", "quality"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{bad}:3: column 'quality1': expected a number, got 'x'" in err
    assert main([*argv, "--valid-scores", "1"]) == 2
    assert "--valid-scores: expected LOW,HIGH" in capsys.readouterr().err
    assert main(["agreement", "-j", bad, "--judgments-layout", "tall"]) == 2
    assert "invalid choice: 'tall'" in capsys.readouterr().err


def test_cli_summeval_layout_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """correlate and agreement on SummEval's original layout: the judges are named, the documents are segments."""
    lines = [_summeval_line(m, d, [_ann(k + 1, 2, 3, 4), _ann(k + 2, 2, 3, 5), _ann(k, 3, 3, 4)], [])
             for m, k in (("M0", 1), ("M1", 2), ("M2", 3)) for d in ("d1", "d2", "d3")]  # fmt: skip
    jpath = _write(tmp_path, "ann.jsonl", "".join(lines))
    ids = _write(tmp_path, "ids.txt", "d1\nd2\nd3\n")
    ref = _write(tmp_path, "ref", "the cat sat\na dog ran\nit rained\n")
    systems = []
    for name, text in (("M0", "a cat\ndog\nrain\n"), ("M1", "the cat sat\na dog\nit\n"), ("M2", ref)):
        systems.append(_write(tmp_path, name, Path(text).read_text() if text == ref else text))
    assert main(["correlate", *systems, "-r", ref, "-j", jpath, "--segment-ids", ids, "--score-columns", "coherence",
                 "-m", "bleu", "--coefficients", "pearson", "--confidence-n", "10", "-f", "json"]) == 0  # fmt: skip
    doc = json.loads(capsys.readouterr().out)
    assert "coherence" in json.dumps(doc)
    argv = ["agreement", "-j", jpath, "--score-columns", "relevance", "--krippendorff", "none", "-f", "json"]
    assert main(argv) == 2 and "needs --judge-column" in capsys.readouterr().err
    assert main([*argv, "--judgments-layout", "summeval"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "relevance" in json.dumps(out) and "expert" not in capsys.readouterr().err


def test_every_judgment_command_reads_the_layouts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """plane, refcurve and report take --judgments-layout like correlate: a systems table read by each."""
    ref = _write(tmp_path, "ref", "the cat sat on the mat\na dog ran in the park\nit rained all day long\n")
    outs = {"A": "the cat sat on a mat\na dog ran\nit rained\n", "B": "a cat\nthe dog\nrain\n",
            "C": "the cat sat on the mat\na dog ran in a park\nit rained all day\n"}  # fmt: skip
    systems = [_write(tmp_path, name, text) for name, text in outs.items()]
    judged = _write(tmp_path, "adequacy.csv", "seg,A,B,C\n1,3,1,5\n2,2,1,4\n3,3,2,5\n")
    layout = ["-j", judged, "--judgments-layout", "systems", "--segment-column", "seg"]
    assert main(["plane", *systems, "-r", ref, *layout, "-f", "json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["criterion"] == "adequacy"
    assert main(["refcurve", *systems, "-r", ref, *layout, "-m", "bleu", "-f", "json"]) == 0
    assert "adequacy" in capsys.readouterr().out
    report = tmp_path / "r.html"
    assert main(["report", *systems, "-r", ref, *layout, "-m", "bleu", "--paired-ar-n", "100", "--confidence-n",
                 "50", "--correlation-confidence-n", "50", "-o", str(report)]) == 0  # fmt: skip
    assert "adequacy" in report.read_text(encoding="utf-8")
