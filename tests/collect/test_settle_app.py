"""The running ranking where people see it: ``collect status`` (text and JSON) and the admin page (behind the
login, names escaped)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from collect.settle_studies import SYSTEMS, judge, open_store, write_settle_study
from collect.test_app import TestClient, _field
from ngrameval.cli import main
from ngrameval.collect.app import create_app


def _login(client: TestClient) -> str:
    page = client.get("/admin/login").text
    data = {"csrf": _field(page, "csrf"), "username": "admin", "password": "correct horse"}
    return client.post("/admin/login", data=data).text


def test_status_prints_the_ranking(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_settle_study(tmp_path)
    store = open_store(path)
    for k in range(3):
        judge(store, f"j{k}")
    assert main(["collect", "status", str(path)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "study 'settle' (rate): 3 annotators; 18 of 18 trials answered"
    assert lines[1].split() == ["rank", "system", "n", "mean", "interval", "settled", "with", "next", "cluster"]
    assert [ln.split()[1] for ln in lines[2:5]] == ["good", "bad", "<b>worse</b>"]
    assert lines[2].split()[2:4] == ["6", "5.000"]
    assert "0 of 2 adjacent pairs settled" in lines[5] and lines[6] == "running: no [stopping] rules"
    assert main(["collect", "status", str(path), "-f", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    ranking = got["ranking"]
    assert [r["system"] for r in ranking["ranking"]] == ["good", "bad", "<b>worse</b>"]
    assert ranking["answers"] == 18 and ranking["range"] == [1.0, 5.0] and ranking["all_settled"] is False
    assert [r["settled_with_next"] for r in ranking["ranking"]] == [False, False, None]
    assert got["stopping"]["stopped"] is False and got["counts"]["trials_answered"] == 18
    assert main(["collect", "status", str(path), "--criterion", "style"]) == 2  # one line, exit 2
    assert "'style' is not one of the study's (fluency)" in capsys.readouterr().err


def test_status_of_a_describe_study_has_no_ranking(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from collect.collect_studies import write_study

    path = write_study(tmp_path, "describe")
    assert main(["collect", "status", str(path), "-f", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["ranking"] is None and got["stopping"] is None and got["kind"] == "describe"


def test_admin_page_shows_the_ranking_escaped_behind_the_login(tmp_path: Path) -> None:
    store = open_store(write_settle_study(tmp_path, 'when = "settled"'), admin=True)
    for k in range(2):
        judge(store, f"j{k}")
    client = TestClient(create_app(store), follow_redirects=True)
    r = client.get("/admin")
    assert "Log in" in r.text and 'id="ranking"' not in r.text  # not without the login
    assert 'id="ranking"' not in client.get("/status").text  # nor on the public status page
    page = _login(client)
    table = page[page.index('<table id="ranking">') : page.index("</table>", page.index('<table id="ranking">'))]
    rows = re.findall(r'<tr class="standing">(.*?)</tr>', table, re.S)
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in rows]
    assert [c[1] for c in cells] == ["good", "bad", "&lt;b&gt;worse&lt;/b&gt;"]  # escaped
    assert "<b>worse</b>" not in page
    assert [c[0] for c in cells] == ["1", "2", "3"] and [c[2] for c in cells] == ["4", "4", "4"]
    assert [c[5] for c in cells] == ["no", "no", "–"] and [c[6] for c in cells] == ["1", "1", "1"]
    assert cells[0][3] == "5.000" and re.fullmatch(r"\[\d\.\d{3}, 5\.000\]", cells[0][4])
    assert "it stops once every adjacent pair is settled" in page
    assert len(SYSTEMS) == len(rows)
