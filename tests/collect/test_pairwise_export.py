"""A side-by-side study's exports: ``collect export`` writes the comparisons in :mod:`ngrameval.io.preferences`'
layout (read back by ``read_preferences`` and ``compare --preferences``) and the repeat controls apart; the admin
area serves the same file, and the ledger and a judge's data export count the comparisons."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from collect.test_crowd import _login
from collect.test_pairwise import _client, _store
from ngrameval.cli import main
from ngrameval.collect.datasheet import datasheet
from ngrameval.collect.export import annotator_json, export_all, ledger_csv, preferences_csv
from ngrameval.collect.store import Store
from ngrameval.io.preferences import read_preferences


def _judge_all(store: Store, n_judges: int = 6) -> None:
    """Judges who mostly prefer A to B to C (one answer in four the other way) and call every fifth a tie."""
    better = {"A": 2, "B": 1, "C": 0}
    for k in range(n_judges):
        aid = store.annotator_for("invite", f"j{k}", group="expert" if k % 2 else "")
        store.assign_trials(aid)
        n = 0
        while (t := store.next_trial(aid)) is not None:
            p = store.pair_of(t.id)
            assert p is not None
            shown_left = t.system if p.left == "a" else p.system_b
            shown_right = p.system_b if p.left == "a" else t.system
            wise = (better[shown_left] > better[shown_right]) != (n % 4 == 3)
            choice = "tie" if n % 5 == 4 else "left" if wise else "right"
            n += 1
            assert store.submit_preference(aid, t.lease or "", choice, f"=reason {n}").outcome == "stored"


def test_export_reads_back_into_compare(tmp_path: Path, db_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    store = _store(tmp_path, db_url, rating="repeats = 1")
    _judge_all(store, 3)
    written = export_all(store, tmp_path / "out")
    names = {p.name for p in written}
    assert {"preferences.csv", "preference_repeats.csv", "A.txt", "segments.txt"} <= names
    path = tmp_path / "out" / "preferences.csv"
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    assert len(rows) == 18 and rows[0]["reason"].startswith("'=")  # a formula is defused
    assert all(r["left"] in (r["system_a"], r["system_b"]) and float(r["seconds"]) >= 0 for r in rows)
    assert {r["group"] for r in rows} == {"", "expert"} and all(r["rater"].startswith("W") for r in rows)
    repeats = list(csv.DictReader(io.StringIO((tmp_path / "out" / "preference_repeats.csv").read_text())))
    assert len(repeats) == 3
    by_position = {(r["rater"], r["position"]): r["winner"] for r in rows}
    assert all(r["original_winner"] == by_position[r["rater"], r["position"]] for r in repeats)
    prefs = read_preferences(str(path))
    expected = [(t.item, t.system, p.system_b, p.winner) for t, p, _ in store.preferences() if t.kind == "normal"]
    assert [(q.item, q.system_a, q.system_b, q.winner) for q in prefs] == expected
    assert main(["compare", "--preferences", str(path), "-f", "json", "--confidence-n", "100"]) == 0
    ranked = json.loads(capsys.readouterr().out)["systems"]
    assert [s["system"] for s in ranked] == ["A", "B", "C"]
    assert sum(s["comparisons"] for s in ranked) == 2 * 18


@pytest.mark.slow
def test_admin_serves_the_preferences_and_pays_for_them(tmp_path: Path) -> None:
    store = _store(tmp_path, None, rating="repeats = 1")
    store.add_admin("admin", "correct horse")
    _judge_all(store, 2)
    c = _client(store)
    page = _login(c)
    assert "/admin/export/preferences.csv" in page
    for url in ("/admin", "/admin/progress", "/status"):
        assert c.get(url).status_code == 200, url
    assert (
        "3 rows make a complete square of 3 systems: together they compare every pair" in c.get("/admin/progress").text
    )
    r = c.get("/admin/export/preferences.csv")
    assert r.status_code == 200 and r.text == preferences_csv(store)[0]
    ledger = list(csv.DictReader(io.StringIO(ledger_csv(store))))
    assert [int(row["submissions"]) for row in ledger] == [7, 7]  # 6 comparisons and a repeat each
    aid = store.annotator_for("invite", "j0")
    person = c.get(f"/admin/annotator/{aid}")
    assert person.status_code == 200
    comparisons = person.text.split('id="comparisons"')[1].split("</table>")[0]
    shown = [(t, p) for t, p, _ in store.preferences(aid)]
    assert comparisons.count("<tr><td>") == len(shown) == 7  # 6 comparisons and a repeat
    for t, p in shown:
        left, right = (t.system, p.system_b) if p.left == "a" else (p.system_b, t.system)
        won = "tie" if p.winner == "tie" else t.system if p.winner == "a" else p.system_b
        row = f"<td>{t.item}</td><td>{t.kind}</td><td>{left}</td><td>{right}</td><td>{won}</td>"
        assert row in comparisons and f"<td>{p.reason}</td>" in comparisons, row
    sheet = datasheet(store)
    assert sheet["responses"]["trials_by_kind"] == {"normal": 12, "repeat": 2}
    assert sheet["responses"]["comparisons"] == 14 and sheet["design"]["pairwise"]["ties"] is True
    mine = json.loads(annotator_json(store, aid))["preferences"]
    assert len(mine) == 7 and {p["kind"] for p in mine} == {"normal", "repeat"}
