"""Annotator reliability in the collect app: the admin table's bias/noise (and MACE competence on Likert
studies), judges.csv's columns, judgments.csv's ``weight`` and ``--min-reliability``, on SQLite and PostgreSQL."""

from __future__ import annotations

import csv
import io
import json
import re
import warnings
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("sqlalchemy")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # starlette's notice about httpx
    from starlette.testclient import TestClient

from collect.collect_studies import write_study
from ngrameval.cli import main
from ngrameval.collect.app import create_app
from ngrameval.collect.store import Store
from ngrameval.collect.study import load_study

# judge j's offset on a DA study; judge 8 also scores with large noise. The Latin squares give judges j, j + 3 and
# j + 6 the same trials: three connected sets of three judges, each (system, segment) rated by three judges
BIAS = (-20, -10, 0, 0, 10, 0, 10, 0, 0)
NOISY = 8


def _field(html: str, name: str) -> str:
    m = re.search(rf'name="{name}" value="([^"]*)"', html)
    assert m, f"no field {name}"
    return m[1]


def _run_study(tmp_path: Path, db_url: str, kind: str) -> tuple[TestClient, Store]:
    """Nine judges rate every trial: on DA, 40 (+10 for system A) + their bias, the noisy one +-20 around it; on
    a Likert study, a label 1..5 of the (segment, system) all honest judges give, the noisy judge 1 or 5 in turn."""
    store = Store(load_study(write_study(tmp_path, kind)), db_url)
    store.init()
    store.add_admin("admin", "correct horse")
    outputs = {i.output for i in store.study.items}
    crits = [c.name for c in store.study.criteria]
    for j in range(9):
        (token,) = store.add_invites(1, "g")
        c = TestClient(create_app(store), follow_redirects=True)
        page = c.get(f"/start?invite={token}").text
        k = 0
        while "Text to rate" in page:
            out = re.search(r'id="output">([^<]*)<', page)[1]  # type: ignore[index]
            good = out.split()[1] == "A"
            if kind == "da":
                score = 40 + 10 * good + BIAS[j] + (20 * (-1) ** k if j == NOISY else 0)
                score = 5 if out not in outputs else score  # a bad reference copy: scored low
            else:  # honest judges agree on labels spread over the scale (MACE needs variety to tell spam)
                m = re.search(r"w(\d+)([ABC])0", out)
                honest = 1 + (int(m[1]) + "ABC".index(m[2])) % 5 if m else 3  # type: ignore[index]
                score = (1 + 4 * (k % 2)) if j == NOISY else honest
            k += 1
            data = {f: _field(page, f) for f in ("csrf", "token", "trial")}
            page = c.post("/task", data={**data, **{f"c_{n}": str(score) for n in crits}}).text
        assert "Thank you" in page
    client = TestClient(create_app(store), follow_redirects=True)
    login = client.get("/admin/login").text
    form = {"csrf": _field(login, "csrf"), "username": "admin", "password": "correct horse"}
    assert "Annotators" in client.post("/admin/login", data=form).text
    return client, store


def _csv(client: TestClient, url: str) -> list[dict[str, str]]:
    r = client.get(url)
    assert r.status_code == 200, r.text
    return list(csv.DictReader(io.StringIO(r.text)))


@pytest.mark.slow
def test_da_reliability_in_admin_and_export(tmp_path: Path, db_url: str) -> None:
    client, store = _run_study(tmp_path, db_url, "da")
    judges = _csv(client, "/admin/export/judges.csv")
    assert len(judges) == 9
    by_name = {r["judge"]: r for r in judges}
    order = [store.pseudonym(a) for a, _ in sorted(store.annotators(), key=lambda x: x[0].id)]
    bias = [float(by_name[n]["bias"]) for n in order]
    noise = [float(by_name[n]["noise"]) for n in order]
    for j in range(3):  # biases are comparable within a connected set: planted differences, recovered
        assert bias[j + 3] - bias[j] == pytest.approx(BIAS[j + 3] - BIAS[j], abs=1e-3)
        if j + 6 != NOISY:  # the noisy judge's bias also takes the mean of their noise
            assert bias[j + 6] - bias[j] == pytest.approx(BIAS[j + 6] - BIAS[j], abs=1e-3)
    assert noise[NOISY] == max(noise) and noise[NOISY] > 10 * max(noise[:NOISY])
    assert sum(float(r["weight"]) for r in judges) == pytest.approx(9, abs=1e-4)
    assert {r["competence"] for r in judges} == {""}  # DA: no categorical answers, no MACE
    # the admin table shows the same estimates
    html = client.get("/admin").text
    assert "<th" in html and ">bias</th>" in html and ">noise</th>" in html and "competence" not in html
    for a, _ in store.annotators():
        row = re.search(rf'<tr id="annotator-{a.id}">(.*?)</tr>', html, re.S)[1]  # type: ignore[index]
        shown = re.search(r'<td class="bias">([^<]*)</td>', row)[1]  # type: ignore[index]
        assert float(shown) == pytest.approx(float(by_name[store.pseudonym(a)]["bias"]), abs=0.005)
        assert re.search(r'<td class="noise">\d+\.\d\d</td>', row)
    # judgments.csv: a weight column on request; judges below a reliability floor are left out and marked
    plain = _csv(client, "/admin/export/judgments.csv")
    assert "weight" not in plain[0]
    weighted = _csv(client, "/admin/export/judgments.csv?weight=reliability")
    assert len(weighted) == len(plain) and all(float(r["weight"]) > 0 for r in weighted)
    noisy = order[NOISY]
    assert {r["weight"] for r in weighted if r["judge"] == noisy} == {by_name[noisy]["weight"]}  # one criterion
    floor = float(by_name[noisy]["weight"]) + 1e-6
    kept = _csv(client, f"/admin/export/judgments.csv?min_reliability={floor}")
    dropped = {j for j, r in by_name.items() if float(r["weight"]) < floor}
    assert noisy in dropped and {r["judge"] for r in kept} == set(by_name) - dropped
    marked = _csv(client, f"/admin/export/judges.csv?min_reliability={floor}")
    assert {r["judge"] for r in marked if r["dropped"] == "True"} == dropped
    assert client.get("/admin/export/judgments.csv?min_reliability=-1").status_code == 400
    # the CLI writes the same
    out = tmp_path / "out"
    args = ["collect", "export", str(store.study.path), "--database", db_url, "--out", str(out)]
    assert main([*args, "--weight", "reliability", "--min-reliability", str(floor), "--datasheet"]) == 0
    sheet = json.loads((out / "datasheet.json").read_text("utf-8"))  # on SQLite and PostgreSQL alike
    assert sheet["study"]["kind"] == "da" and sheet["evaluators"]["contributed"] == 9
    checks = sheet["design"]["controls"]["judges"]
    assert checks["checked"] == 9 and checks["flagged"] == sum(r["flagged"] == "True" for r in judges)
    assert sheet["responses"]["ratings"] == sum(1 for _ in store.ratings())
    rows = list(csv.DictReader((out / "judgments.csv").open(encoding="utf-8")))
    assert "weight" in rows[0] and {r["judge"] for r in rows} == set(by_name) - dropped
    cli_judges = list(csv.DictReader((out / "judges.csv").open(encoding="utf-8")))
    assert [r["bias"] for r in cli_judges] == [r["bias"] for r in judges]


@pytest.mark.slow
def test_likert_study_shows_mace_competence(tmp_path: Path, db_url: str) -> None:
    client, store = _run_study(tmp_path, db_url, "rate")
    judges = _csv(client, "/admin/export/judges.csv")
    order = [store.pseudonym(a) for a, _ in sorted(store.annotators(), key=lambda x: x[0].id)]
    comp = {r["judge"]: float(r["competence"]) for r in judges}
    assert comp[order[NOISY]] < 0.5 < min(comp[n] for n in order[:NOISY])
    html = client.get("/admin").text
    assert ">competence</th>" in html and len(re.findall(r'<td class="competence">\d\.\d\d</td>', html)) == 9


def test_bad_min_reliability_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_study(tmp_path, "da")
    assert main(["collect", "export", str(path), "--out", str(tmp_path / "o"), "--min-reliability", "x"]) == 2
    err = capsys.readouterr().err
    assert "--min-reliability" in err and "expected a number >= 0" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "o").exists()
