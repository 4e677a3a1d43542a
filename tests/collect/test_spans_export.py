"""The export of ESA and MQM studies: Google's MQM TSV layout (one row per mark, ``<v>`` marks in the target
agreeing with the offsets, a No-error row for a clean segment), read back by ``read_spans`` and scored by
``meta.mqm`` exactly as the marks that were submitted score; ``agreement`` and ``correlate`` run on it."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from collect.test_spans import _j, _store
from ngrameval.collect.export import annotator_json, span_files
from ngrameval.collect.spans import Mark, parse_marks, submit_marks
from ngrameval.collect.store import Store
from ngrameval.collect.study import load_study
from ngrameval.io.spans import read_spans
from ngrameval.meta.mqm import esa_segment_scores, mqm_segment_scores, span_weight, system_scores


def _answer_all(store: Store, judge: str, choose: object) -> list[tuple[str, str, tuple[Mark, ...], float | None]]:
    """Judge ``judge`` answers every trial with ``choose(output, k)`` -> (marks as dicts, esa score or None);
    returns (item, system, marks, score) as submitted."""
    aid = store.annotator_for("invite", judge)
    store.assign_trials(aid)
    sent = []
    k = 0
    while (t := store.next_trial(aid)) is not None:
        assert t.lease is not None
        marks, score = choose(t.output, k)  # type: ignore[operator]
        scores = {} if score is None else {"esa": float(score)}
        assert submit_marks(store, aid, t.lease, _j(*marks), scores).outcome == "stored"
        if t.kind == "normal":
            sent.append((t.item, t.system, parse_marks(_j(*marks), t.output, store.study.spans), score))  # type: ignore[arg-type]
        k += 1
    return sent


def _mqm_choice(out: str, k: int) -> tuple[list[dict[str, object]], None]:
    bear = out.index("🐻")
    pool = [
        [],
        [{"start": bear, "end": bear + 1, "severity": "Major", "category": "Non-translation!"}],
        [{"start": 0, "end": 3, "severity": "Minor", "category": "Fluency/Punctuation"},
         {"missing": True, "severity": "Major", "category": "Accuracy/Omission"}],
        [{"start": len(out) - 5, "end": len(out), "severity": "Minor", "category": "Style"},
         {"start": 4, "end": 7, "severity": "Neutral", "category": "Other"}],
    ]  # fmt: skip
    return pool[k % len(pool)], None


def _esa_choice(out: str, k: int) -> tuple[list[dict[str, object]], int]:
    bear = out.index("🐻")
    pool = [[], [{"start": bear, "end": bear + 1, "severity": "major"}],
            [{"start": 0, "end": 3, "severity": "minor"}, {"missing": True, "severity": "major"}]]  # fmt: skip
    return pool[k % len(pool)], [100, 35, 72, 0][k % 4]


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["mqm", "esa"])
def test_export_round_trip(tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    store = _store(tmp_path, kind)
    choose = _mqm_choice if kind == "mqm" else _esa_choice
    sent = [x for j in ("j1", "j2", "j3", "j4") for x in _answer_all(store, j, choose)]
    out = tmp_path / "export"
    from ngrameval.cli import main

    assert main(["collect", "export", str(store.study.path), "--out", str(out), "--datasheet"]) == 0
    capsys.readouterr()
    spans = read_spans(str(out / "spans.tsv"))
    # every submitted mark is a row with its offsets; the <v> marks in the target agree with them
    texts = {(i.item, i.system): i.output for i in store.study.items}
    lines = (out / "spans.tsv").read_text(encoding="utf-8").split("\n")
    for s in spans:
        cells = lines[s.line - 1].split("\t")
        text = texts[cells[3], s.system]
        want = text if s.start is None else f"{text[: s.start]}<v>{text[s.start : s.end]}</v>{text[s.end :]}"
        assert cells[6] == want
    seg = {"s0": ("doc0", 1), "s1": ("doc0", 2), "s2": ("doc1", 1), "s3": ("doc1", 2)}  # doc = item // 2
    if kind == "mqm":
        got = mqm_segment_scores(spans)
        expect: dict[tuple[str, str], list[float]] = {}
        for item, system, marks, _ in sent:
            pen = math.fsum(span_weight(m.severity, m.category) for m in marks)
            expect.setdefault((system, f"{seg[item][0]}:{seg[item][1]}"), []).append(pen)
        assert {(g.system, g.segment): g.score for g in got} == pytest.approx(
            {k: -sum(v) / len(v) for k, v in expect.items()}
        )
        assert any(g.score == -25 for g in got)  # a major non-translation weighs 25
        # judgments.csv: each rater's MQM score of each trial (minus the penalty), as for any rating
        with (out / "judgments.csv").open(encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        assert sorted((r["system"], r["segment"], float(r["score"])) for r in rows) == sorted(
            (system, item, 0.0 - math.fsum(span_weight(m.severity, m.category) for m in marks))
            for item, system, marks, _ in sent
        )
        assert {r["criterion"] for r in rows} == {"mqm"}
    else:
        got = esa_segment_scores(spans)
        expect = {}
        for item, system, _, score in sent:
            expect.setdefault((system, f"{seg[item][0]}:{seg[item][1]}"), []).append(float(score))  # type: ignore[arg-type]
        assert {(g.system, g.segment): g.score for g in got} == {k: sum(v) / len(v) for k, v in expect.items()}
        assert (out / "judgments.csv").exists()  # the ESA scores as judgments too
    assert len(got) == len(expect) and set(system_scores(got)) == {"A", "B", "C"}
    per_segment = {k: (-1 if kind == "mqm" else 1) * sum(v) / len(v) for k, v in expect.items()}
    for name, value in system_scores(got).items():  # a system's score: the mean of its segments'
        mine = [v for (system, _), v in per_segment.items() if system == name]
        assert value == pytest.approx(sum(mine) / len(mine))
    n_marks = sum(max(1, len(m)) for _, _, m, _ in sent)
    assert len(spans) == n_marks
    with (out / "ledger.csv").open(encoding="utf-8") as f:  # every answered trial is paid, controls included
        assert sum(int(r["submissions"]) for r in csv.DictReader(f)) == store.counts()["trials_answered"] == 16
    sheet = json.loads((out / "datasheet.json").read_text(encoding="utf-8"))
    assert sheet["error_spans"]["severities"] == list(store.study.spans.severities)  # type: ignore[union-attr]
    assert sheet["responses"]["trials_by_kind"] == {"normal": 16} and sheet["responses"]["ratings"] == 16
    person = json.loads(annotator_json(store, store.annotators()[0][0].id))
    assert len(person["spans"]) == 4 and all(set(x) == {"item", "system", "kind", "marks"} for x in person["spans"])
    clean = [s for s in spans if not s.is_error]
    assert clean and all(s.start is None and s.category == ("" if kind == "esa" else "No-error") for s in clean)
    # correlate and agreement read the export
    names = (out / "outputs" / "segments.txt").read_text().split()
    assert sorted(names) == sorted({g.segment for g in got})
    scores = tmp_path / "metric.tsv"
    scores.write_text("system\tsegment\tm\n" + "".join(
        f"{g.system}\t{g.segment}\t{(k * 7) % 5 + 0.5 * (g.system == 'B')}\n" for k, g in enumerate(got)))  # fmt: skip
    args = ["-j", str(out / "spans.tsv"), "--judgments-layout", kind, "-f", "json"]
    assert main(["agreement", *args]) == 0, capsys.readouterr().err
    report = json.loads(capsys.readouterr().out)
    assert report["spans"][0]["rater_pairs"] >= 1
    cmd = ["correlate", *args, "--scores", str(scores), "--segment-column", "segment", "--level", "system"]
    assert main(cmd) == 0, capsys.readouterr().err
    rows = json.loads(capsys.readouterr().out)
    assert rows and all((r["criterion"], r["level"], r["n"], r["undefined"]) == (kind, "system", 3, 0) for r in rows)


def test_admin_download_and_formula_cells(tmp_path: Path) -> None:
    from collect.test_app import TestClient, _field
    from ngrameval.collect.app import create_app

    store = _store(tmp_path, "mqm")
    (store.study.path.parent / "items.csv").write_text(
        (store.study.path.parent / "items.csv").read_text(encoding="utf-8").replace(",A,Der", ",=HYPERLINK(1),=Der"),
        encoding="utf-8",
    )
    store = Store(load_study(store.study.path))
    store.init(update_manifest=True)
    store.add_admin("admin", "correct horse")

    def choose(out: str, k: int) -> tuple[list[dict[str, object]], None]:
        return [{"start": 0, "end": 4, "severity": "Minor", "category": "Style"}], None

    _answer_all(store, "j1", choose)
    c = TestClient(create_app(store), follow_redirects=True)
    page = c.get("/admin/login").text
    c.post("/admin/login", data={"csrf": _field(page, "csrf"), "username": "admin", "password": "correct horse"})
    assert "/admin/export/spans.tsv" in c.get("/admin").text
    aid = store.annotators()[0][0].id
    assert c.get("/admin/progress").status_code == 200
    person = c.get(f"/admin/annotator/{aid}").text
    assert "<td>mqm</td><td>-1.0</td>" in person  # Minor Style: 1
    assert person.count('id="marks"') == 1 and '<main class="wide">' in person  # the review table, once
    assert person.count('<mark class="m-minor">') == 4  # each of the judge's 4 trials: characters 0-4, minor
    assert '<mark class="m-minor">=Der</mark>' in person and "Minor · Style: “=Der” (0–4)" in person
    r = c.get("/admin/export/spans.tsv")
    assert r.status_code == 200 and r.text == span_files(store)["spans.tsv"]
    rows = [line.split("\t") for line in r.text.splitlines()[1:]]
    hyper = [row for row in rows if row[0].startswith("'=")]
    assert hyper and all(row[6].startswith("<v>=Der</v>") for row in hyper)  # the target verbatim: offsets hold
    anonymous = TestClient(create_app(store)).get("/admin/export/spans.tsv", follow_redirects=False)
    assert anonymous.status_code == 303 and anonymous.headers["location"] == "/admin/login"
