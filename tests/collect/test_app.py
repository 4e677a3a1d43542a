"""The app through Starlette's test client: arrivals (MTurk, Prolific, invitation), the describe task to the
completion code, CSRF, escaping, limits, the admin's login / qualification / exports, and a rating study whose
export `ngrameval agreement` reads."""

from __future__ import annotations

import csv
import io
import json
import re
import warnings
from pathlib import Path

import pytest

with warnings.catch_warnings():  # starlette >= 0.50 suggests httpx2; httpx is what it still runs on
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from collect.collect_studies import write_study
from ngrameval.cli import main
from ngrameval.collect.app import create_app
from ngrameval.collect.store import Store
from ngrameval.collect.study import StudyError, load_study
from ngrameval.corpus.msvd import cluster, read_corpus
from ngrameval.io.judgments import read_judgments


def _field(html: str, name: str) -> str:
    m = re.search(rf'name="{name}" value="([^"]*)"', html)
    assert m, f"no field {name}"
    return m[1]


def _client(tmp_path: Path, kind: str = "describe") -> tuple[TestClient, Store]:
    store = Store(load_study(write_study(tmp_path, kind)))
    store.init()
    store.add_admin("admin", "correct horse")
    return TestClient(create_app(store), follow_redirects=True), store


def _describe_all(client: TestClient, text: str) -> list[str]:
    keys = []
    while True:
        page = client.get("/task").text
        if "completion code" in page:
            return keys
        form = {f: _field(page, f) for f in ("csrf", "token", "stimulus")}
        r = client.post("/task", data={**form, "description": text, "language": "English"})
        assert r.status_code == 200
        # the same form again (a double click, a retry): stored once
        client.post("/task", data={**form, "description": text, "language": "English"})
        keys.append(form["stimulus"])


def _login(client: TestClient) -> None:
    page = client.get("/admin/login").text
    r = client.post(
        "/admin/login", data={"csrf": _field(page, "csrf"), "username": "admin", "password": "correct horse"}
    )
    assert "Annotators" in r.text


@pytest.mark.slow
def test_describe_study_end_to_end(tmp_path: Path) -> None:
    client, store = _client(tmp_path)
    assert "Play segment" in client.get("/start?workerId=W1&assignmentId=A1&hitId=H1").text
    assert _describe_all(client, "a man is slicing a tomato") and "NGE-OK" in client.get("/done").text
    assert store.counts()["descriptions"] == 3  # every double POST stored once
    other = TestClient(create_app(store), follow_redirects=True)
    other.get("/start?PROLIFIC_PID=P1&STUDY_ID=S&SESSION_ID=X")
    assert _describe_all(other, "<script>alert(1)</script> a man cuts") != []
    # the admin qualifies the Prolific annotator: their next work is tier 2 (clean)
    _login(client)
    admin = client.get("/admin").text
    # pseudonyms, not platform ids ("W1" as a word: a pseudonym W1… or a random token may contain the letters)
    assert "<script>alert" not in admin and not re.search(r"(?<![\w-])W1(?![\w-])", admin)
    aid = next(a.id for a, _ in store.annotators() if a.platform == "prolific")
    page = client.get(f"/admin/annotator/{aid}").text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert(1)" not in page
    r = client.post(f"/admin/annotator/{aid}/status", data={"csrf": _field(admin, "csrf"), "status": "qualified"})
    assert store.annotator(aid).status == "qualified"  # type: ignore[union-attr]
    assert r.status_code == 200
    export = client.get("/admin/export/descriptions.csv").text
    path = tmp_path / "descriptions.csv"
    path.write_text(export)
    descs = read_corpus(path)
    assert len(descs) == 6 and {d.tier for d in descs} == {"unverified"}
    assert "vid1_2_5" in cluster(descs)
    assert all(d.worker and d.worker.startswith("W") and len(d.worker) == 17 for d in descs)
    ledger = list(csv.DictReader(io.StringIO(client.get("/admin/export/ledger.csv").text)))
    assert {(r["tier"], r["submissions"], r["amount"]) for r in ledger} == {("1", "3", "0.03")}
    # the CLI reads the export unchanged
    assert main(["corpus", "stats", str(path), "-o", str(tmp_path / "stats.txt")]) == 0
    # privacy: one annotator's data out, then deleted
    mine = client.get(f"/admin/annotator/{aid}/export.json").json()
    assert mine["worker_id"] == "P1" and len(mine["descriptions"]) == 3
    client.post(f"/admin/annotator/{aid}/delete", data={"csrf": _field(admin, "csrf")})
    assert store.annotator(aid) is None and store.counts()["descriptions"] == 3


def test_csrf_limits_and_isolation(tmp_path: Path) -> None:
    client, store = _client(tmp_path)
    client.get("/start?invite=nope")
    assert client.get("/task").status_code == 403  # no session
    (token,) = store.add_invites(1)
    page = client.get(f"/start?invite={token}").text
    form = {f: _field(page, f) for f in ("token", "stimulus")}
    r = client.post("/task", data={**form, "csrf": "forged", "description": "x"})
    assert r.status_code == 403 and store.counts()["descriptions"] == 0
    r = client.post("/task", data={**form, "csrf": _field(page, "csrf"), "description": "y" * 401})
    assert r.status_code == 400 and "at most 400" in r.text
    # admin pages need a login; a wrong password is refused
    assert "Admin login" in client.get("/admin").text
    login = client.get("/admin/login").text
    r = client.post("/admin/login", data={"csrf": _field(login, "csrf"), "username": "admin", "password": "nope"})
    assert r.status_code == 401
    assert client.get("/admin/export/ledger.csv").url.path == "/admin/login"


def test_platform_preview_and_status(tmp_path: Path) -> None:
    client, _ = _client(tmp_path)
    page = client.get("/start?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=H").text
    assert "Preview" in page and "cooking" in page
    assert client.get("/status").status_code == 200


@pytest.mark.slow  # a whole study answered over HTTP, then every export read: 2 s
@pytest.mark.parametrize("kind", ["rate", "da"])
def test_rating_study_export_reads(tmp_path: Path, kind: str) -> None:
    client, store = _client(tmp_path, kind)
    crits = [c.name for c in store.study.criteria]
    outputs = {i.output for i in store.study.items}
    for j, group in enumerate(["expert", "expert", "expert", "lay", "lay", "lay"]):
        (token,) = store.add_invites(1, group)
        c = TestClient(create_app(store), follow_redirects=True)
        page = c.get(f"/start?invite={token}").text
        while "Text to rate" in page:
            out = re.search(r'id="output">([^<]*)<', page)[1]  # type: ignore[index]
            bad = out not in outputs  # a degraded "bad reference" copy: this judge scores it low
            score = (10 if bad else 60 + 5 * (out.split()[1] == "A") + j) if kind == "da" else 3
            data = {f: _field(page, f) for f in ("csrf", "token", "trial")}
            page = c.post("/task", data={**data, **{f"c_{n}": str(score) for n in crits}}).text
        assert "Thank you" in page
    _login(client)
    text = client.get("/admin/export/judgments.csv").text
    path = tmp_path / "judgments.csv"
    path.write_text(text)
    js = read_judgments(str(path), segment="segment", judge="judge", criterion="criterion")
    assert len(js) == 6 * 6 * len(crits)  # normal trials only: no duplicate (system, segment, judge)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert {r["group"] for r in rows} == {"expert", "lay"}
    out = tmp_path / "agreement.txt"
    args = ["agreement", "-j", str(path), "--segment-column", "segment", "--judge-column", "judge"]
    assert main([*args, "--criterion-column", "criterion", "--where", "group=expert", "-o", str(out)]) == 0
    judges = list(csv.DictReader(io.StringIO(client.get("/admin/export/judges.csv").text)))
    assert len(judges) == 6
    if kind == "da":  # five bad references each, all scored lower: p = 2**-5 for everyone, nobody flagged
        assert {(r["bad_pairs"], r["bad_p"], r["flagged"]) for r in judges} == {("5", "0.03125", "False")}
        assert {round(float(r["z"]), 6) for r in rows} != {0.0}
    else:
        assert {r["repeat_diff"] for r in judges} == {"0.0"}
    # the datasheet (HEDS sections) says what was collected, from whom, under which design, and what it cost
    assert main(["collect", "export", str(store.study.path), "--out", str(tmp_path / "out"), "--datasheet"]) == 0
    sheet = json.loads((tmp_path / "out" / "datasheet.json").read_text("utf-8"))
    ledger = list(csv.DictReader(io.StringIO(client.get("/admin/export/ledger.csv").text)))
    assert sheet["study"]["kind"] == kind and sheet["evaluated_outputs"]["systems"] == list(store.study.systems)
    assert [c["name"] for c in sheet["quality_criteria"]] == crits
    assert sheet["evaluators"]["groups"] == {"expert": 3, "lay": 3} and sheet["evaluators"]["contributed"] == 6
    assert sheet["responses"]["ratings"] == sum(1 for _ in store.ratings())
    assert sum(sheet["responses"]["trials_by_kind"].values()) == sum(int(r["submissions"]) for r in ledger)
    assert sheet["responses"]["trials_by_kind"]["normal"] * len(crits) == len(js)
    assert sheet["payment"]["amount"] == pytest.approx(sum(float(r["amount"]) for r in ledger))
    controls = sheet["design"]["controls"]["judges"]
    assert controls["checked"] == 6 and controls["flagged"] == sum(r["flagged"] == "True" for r in judges)
    first, last = sheet["dates"]["answers"]["first"], sheet["dates"]["answers"]["last"]
    assert first is not None and first <= last
    assert "worker" not in json.dumps(sheet).lower()  # nothing identifies a worker


def test_late_annotator_of_a_full_study_gets_no_code(tmp_path: Path) -> None:
    client, store = _client(tmp_path)  # target 2: two annotators fill the study
    for arrival in ("workerId=W1&assignmentId=A1&hitId=H1", "PROLIFIC_PID=P1&STUDY_ID=S&SESSION_ID=X"):
        c = TestClient(create_app(store), follow_redirects=True)
        c.get(f"/start?{arrival}")
        assert len(_describe_all(c, "a man cuts a tomato")) == 3
        assert "NGE-OK" in c.get("/done").text
    page = client.get("/start?workerId=W3&assignmentId=A3&hitId=H3&turkSubmitTo=https://www.mturk.com").text
    assert "Nothing left for you" in page and "NGE-OK" not in page and "externalSubmit" not in page


def test_paraphrase_study(tmp_path: Path) -> None:
    path = write_study(tmp_path)
    path.write_text(path.read_text().replace('kind = "describe"', 'kind = "paraphrase"'))
    (tmp_path / "stimuli.csv").write_text("id,kind,src,start,end,text\ns1,text,,,,The committee postponed it.\n")
    store = Store(load_study(path))
    store.init()
    client = TestClient(create_app(store), follow_redirects=True)
    page = client.get("/start?PROLIFIC_PID=P1&STUDY_ID=S&SESSION_ID=X").text
    assert "Write a paraphrase" in page and "The committee postponed it." in page
    assert _describe_all(client, "The committee put it off.") == [_field(page, "stimulus")]
    (d, s, _) = store.descriptions()[0]
    assert (s.key, d.text) == ("s1", "The committee put it off.")
    # a paraphrase study shows sentences only
    (tmp_path / "stimuli.csv").write_text("id,kind,src,start,end,text\nv1,video,clip.mp4,1,2,\n")
    with pytest.raises(StudyError, match="every stimulus must be of kind text"):
        load_study(path)
