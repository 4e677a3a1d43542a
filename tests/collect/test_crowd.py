"""The app as a paid, partly dishonest crowd uses it (Starlette's test client over SQLite and PostgreSQL): forged
and out-of-scale submissions, browser-supplied times, control characters, assignments opened by the wrong worker,
shared invitation links, skip-only workers, per-assignment completion codes and their verification, consent,
the admin's progress pages, and the command-line tools around a running study (init on an edited manifest,
backup, a missing PostgreSQL database)."""

from __future__ import annotations

import csv
import io
import re
import sqlite3
from pathlib import Path

import pytest

from collect.collect_studies import write_study
from collect.test_app import TestClient, _field
from ngrameval.cli import main
from ngrameval.collect.app import create_app
from ngrameval.collect.datasheet import datasheet
from ngrameval.collect.store import Store
from ngrameval.collect.study import StudyError, load_study


def _study(tmp_path: Path, kind: str = "describe", **keys: object) -> Path:
    path = write_study(tmp_path / kind, kind)
    lines = [ln for ln in path.read_text().splitlines(True) if ln.split(" =")[0] not in keys]
    extra = "".join(f"{k} = {v!r}\n".replace("'", '"') for k, v in keys.items() if k != "consent")
    text = "".join(lines).replace("[study]\n", "[study]\n" + extra, 1)
    if "consent" in keys:
        text += f'[consent]\ntext = "{keys["consent"]}"\n'
    path.write_text(text)
    return path


def _app(tmp_path: Path, url: str | None = None, kind: str = "describe", **keys: object) -> Store:
    store = Store(load_study(_study(tmp_path, kind, **keys)), url)
    store.init()
    store.add_admin("admin", "correct horse")
    return store


def _client(store: Store) -> TestClient:
    return TestClient(create_app(store), follow_redirects=True)


def _login(client: TestClient) -> str:
    page = client.get("/admin/login").text
    r = client.post(
        "/admin/login", data={"csrf": _field(page, "csrf"), "username": "admin", "password": "correct horse"}
    )
    assert "Annotators" in r.text
    return r.text


def _form(page: str, *names: str) -> dict[str, str]:
    return {f: _field(page, f) for f in ("csrf", "token", *names)}


def test_forged_and_out_of_range_submissions_are_refused(tmp_path: Path, db_url: str) -> None:
    store = _app(tmp_path, db_url)
    c = _client(store)
    page = c.get("/start?PROLIFIC_PID=P1&STUDY_ID=S&SESSION_ID=X").text
    form = _form(page, "stimulus")
    # a made-up task token: a stimulus this annotator was never given
    r = c.post("/task", data={**form, "token": "made-up-token-1234", "description": "forged"})
    assert r.status_code == 400 and "not given to you" in r.text
    # a NUL byte or another control character: a clear 400 on both databases, nothing stored
    for bad in ("a\x00b", "bell\x07", "esc\x1b[31m"):
        r = c.post("/task", data={**form, "description": bad})
        assert r.status_code == 400 and "control character" in r.text
    assert store.counts()["descriptions"] == 0
    # the browser's clock is not asked: a forged "shown" changes nothing, and the stimulus field is not trusted
    other = next(s for s, _ in store.stimulus_progress() if str(s.id) != form["stimulus"])
    r = c.post("/task", data={**form, "stimulus": str(other.id), "shown": "-1e308", "description": "a cat sits"})
    assert r.status_code == 200
    (d, s, _), *_ = store.descriptions()
    assert str(s.id) == form["stimulus"] and 0 <= d.seconds < 600


@pytest.mark.parametrize("kind", ["rate", "da"])
def test_scores_are_checked_against_the_scale(tmp_path: Path, kind: str) -> None:
    store = _app(tmp_path, None, kind)
    c = _client(store)
    (token,) = store.add_invites(1)
    page = c.get(f"/start?invite={token}").text
    form = _form(page, "trial")
    names = [f"c_{x.name}" for x in store.study.criteria]
    wrong = ["2.5", "0", "6", "-1", "1e1", "nan", "inf", "", "３"] if kind == "rate" else ["101", "-1", "50.5", "1e2"]
    for value in wrong:
        r = c.post("/task", data={**form, **dict.fromkeys(names, value)})
        assert r.status_code == 400, value
    assert store.counts()["trials_answered"] == 0
    good = "4" if kind == "rate" else "100"
    assert c.post("/task", data={**form, **dict.fromkeys(names, good)}).status_code == 200
    (t, r, _), *_ = store.ratings()
    assert r.score == float(good) and 0 <= t.seconds < 600


def test_an_assignment_belongs_to_its_worker(tmp_path: Path, db_url: str) -> None:
    store = _app(tmp_path, db_url)
    a, b = _client(store), _client(store)
    a.get("/start?workerId=WA&assignmentId=ASG-A&hitId=H")
    page = b.get("/start?workerId=WB&assignmentId=ASG-B&hitId=H").text
    b.post("/task", data={**_form(page, "stimulus"), "description": "a man cuts a tomato"})
    code_b = re.search(r'id="completion-code">([^<]+)<', b.get("/done").text)
    assert code_b is not None
    # A opens B's assignment: refused, and B's code is not shown to A
    r = a.get("/start?workerId=WA&assignmentId=ASG-B&hitId=H")
    assert r.status_code == 403 and "another worker" in r.text and code_b[1] not in r.text
    # A's own code differs from B's and appears only once A has answered
    assert "completion-code" not in a.get("/done").text
    page = a.get("/task").text
    a.post("/task", data={**_form(page, "stimulus"), "description": "a woman slices bread"})
    code_a = re.search(r'id="completion-code">([^<]+)<', a.get("/done").text)
    assert code_a is not None and code_a[1] != code_b[1] and code_a[1].startswith("NGE-OK-")
    # the export lists each assignment's code; `collect verify` checks what the platform returns
    c = _client(store)
    _login(c)
    ledger = list(csv.DictReader(io.StringIO(c.get("/admin/export/ledger.csv").text)))
    assert sorted(r["codes"] for r in ledger) == sorted([code_a[1], code_b[1]])
    rows = list(csv.DictReader(io.StringIO(c.get("/admin/export/assignments.csv").text)))
    assert {(r["assignment"], r["code"], r["answers"]) for r in rows} == {
        ("ASG-A", code_a[1], "1"),
        ("ASG-B", code_b[1], "1"),
    }
    results = tmp_path / "batch.csv"
    results.write_text(
        "AssignmentId,WorkerId,Answer.code\n"
        f"ASG-A,WA,{code_a[1]}\n"
        f"ASG-B,WA,{code_b[1]}\n"  # B's code pasted by A
        "ASG-C,WC,NGE-OK-0000000000\n"  # made up
        f"ASG-A,WA,{code_a[1]}\n"  # twice
    )
    args = ["collect", "verify", str(store.study.path), str(results), *(["--database", db_url])]
    assert main(args) == 1
    codes = tmp_path / "codes.txt"
    codes.write_text(f"{code_a[1]}\n{code_b[1]}\n")
    assert main(["collect", "verify", str(store.study.path), str(codes), "--database", db_url]) == 0


def test_verify_reports_each_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = _app(tmp_path)
    c = _client(store)
    page = c.get("/start?workerId=WA&assignmentId=ASG-A&hitId=H").text
    c.post("/task", data={**_form(page, "stimulus"), "description": "a man cuts a tomato"})
    skipper = _client(store)
    page = skipper.get("/start?workerId=WS&assignmentId=ASG-S&hitId=H").text
    skipper.post("/task", data={**_form(page, "stimulus"), "skip": "1"})
    (code_a,) = [g.code for g, _, _ in store.assignments() if g.external == "ASG-A"]
    (code_s,) = [g.code for g, _, _ in store.assignments() if g.external == "ASG-S"]
    results = tmp_path / "batch.csv"
    results.write_text(
        "AssignmentId,WorkerId,Answer.code\n"
        f"ASG-S,WA,{code_a}\nASG-S,WS,{code_s}\nX,Y,bogus\nASG-A,WA,{code_a}\nASG-A,WA,{code_a}\n"
    )
    assert main(["collect", "verify", str(store.study.path), str(results)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert "belongs to another assignment or worker" in out[0]
    assert "fewer than min_answers = 1" in out[1]  # the skipper never earned a code
    assert "not a code of this study" in out[2]
    assert "valid (" in out[3] and "repeated (first at line 5)" in out[4]
    assert out[-1] == "1 valid, 4 not valid, of 5 code(s)"


def test_skipping_everything_earns_no_code(tmp_path: Path) -> None:
    store = _app(tmp_path, completion_code="PROLIFIC-CODE")
    c = _client(store)
    page = c.get("/start?PROLIFIC_PID=P1&STUDY_ID=S&SESSION_ID=X").text
    while "Skip" in page:
        page = c.post("/task", data={**_form(page, "stimulus"), "skip": "1"}).text
    assert "no-code" in page and "skipped 3 item(s)" in page
    assert "PROLIFIC-CODE" not in page and "completion-code" not in page
    # with answers, a Prolific worker gets the study's code (Prolific's own) and the return link
    other = _client(store)
    page = other.get("/start?PROLIFIC_PID=P2&STUDY_ID=S&SESSION_ID=Y").text
    page = other.post("/task", data={**_form(page, "stimulus"), "description": "a cat plays the piano"}).text
    done = other.get("/done").text
    assert "PROLIFIC-CODE" in done and "submissions/complete?cc=PROLIFIC-CODE" in done


def test_min_answers_before_a_code(tmp_path: Path) -> None:
    store = _app(tmp_path, min_answers=2)
    c = _client(store)
    page = c.get("/start?workerId=W&assignmentId=A1&hitId=H").text
    c.post("/task", data={**_form(page, "stimulus"), "description": "one answer"})
    done = c.get("/done").text
    assert "completion-code" not in done and "at least 2 answer(s)" in done
    page = c.get("/task").text
    c.post("/task", data={**_form(page, "stimulus"), "description": "two answers"})
    assert "completion-code" in c.get("/done").text


def test_a_second_person_on_a_used_invitation_link_is_told(tmp_path: Path, db_url: str) -> None:
    store = _app(tmp_path, db_url)
    (token,) = store.add_invites(1)
    first, second = _client(store), _client(store)
    page = first.get(f"/start?invite={token}").text
    assert 'name="description"' in page
    r = second.get(f"/start?invite={token}")
    assert r.status_code == 409 and "already been used" in r.text
    assert second.get("/task").status_code == 403  # no session for the second person
    # the first person carries on; their answer is stored
    assert first.post("/task", data={**_form(page, "stimulus"), "description": "a cat"}).status_code == 200
    assert first.get(f"/start?invite={token}").status_code == 200  # the same browser may come back
    assert store.counts()["descriptions"] == 1


def test_two_people_opening_one_invitation_at_once(tmp_path: Path, db_url: str) -> None:
    """Ten browsers open one fresh invitation link at the same moment: exactly one gets the task."""
    import threading

    store = _app(tmp_path, db_url)
    (token,) = store.add_invites(1)
    clients = [_client(store) for _ in range(10)]
    barrier = threading.Barrier(len(clients))
    codes: list[int] = []

    def arrive(c: TestClient) -> None:
        barrier.wait()
        codes.append(c.get(f"/start?invite={token}").status_code)

    threads = [threading.Thread(target=arrive, args=(c,)) for c in clients]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sorted(codes) == [200] + [409] * 9
    assert len(store.annotators()) == 1


def test_consent_comes_first(tmp_path: Path) -> None:
    store = _app(tmp_path, consent="Your answers are used for research.")
    c = _client(store)
    page = c.get("/start?PROLIFIC_PID=P1&STUDY_ID=S&SESSION_ID=X").text
    assert "Your answers are used for research." in page and 'id="agree"' in page
    assert 'name="description"' not in c.get("/task").text  # no task before consent
    page = c.post("/consent", data={"csrf": _field(page, "csrf"), "agree": "yes"}).text
    assert 'name="description"' in page
    assert store.annotators()[0][0].consented is not None
    no = _client(store)
    page = no.get("/start?PROLIFIC_PID=P2&STUDY_ID=S&SESSION_ID=Y").text
    page = no.post("/consent", data={"csrf": _field(page, "csrf"), "agree": "no"}).text
    assert "did not agree" in page and no.get("/task").status_code == 403


def test_waiting_while_others_hold_the_last_items(tmp_path: Path) -> None:
    store = _app(tmp_path, target=1)
    holders = [_client(store) for _ in range(3)]
    for k, h in enumerate(holders):
        assert 'name="description"' in h.get(f"/start?PROLIFIC_PID=H{k}&STUDY_ID=S&SESSION_ID=S{k}").text
    late = _client(store)
    page = late.get("/start?PROLIFIC_PID=L&STUDY_ID=S&SESSION_ID=L").text
    assert 'id="waiting"' in page and "20 minutes" in page


def test_admin_progress_pages(tmp_path: Path, db_url: str) -> None:
    path = _study(tmp_path, target=2)
    rows = ["id,kind,src,start,end,text", *(f"t{i:03d},text,,,,sentence {i}" for i in range(150))]
    (path.parent / "stimuli.csv").write_text("\n".join(rows) + "\n")
    store = Store(load_study(path), db_url)
    store.init()
    store.add_admin("admin", "correct horse")
    c = _client(store)
    page = c.get("/start?PROLIFIC_PID=P1&STUDY_ID=S&SESSION_ID=X").text
    c.post("/task", data={**_form(page, "stimulus"), "description": "one"})
    c.get("/task")  # a second stimulus, leased
    admin = _client(store)
    assert admin.get("/admin/progress").url.path == "/admin/login"
    _login(admin)
    first = admin.get("/admin/progress").text
    assert "1 of 300 descriptions" in first and "1 item(s) being worked on" in first
    assert first.count("<tr><td>t") == 100 and "page 1 of 2" in first and 'rel="next"' in first
    second = admin.get("/admin/progress?page=2").text
    assert second.count("<tr><td>t") == 50 and "<td>t000</td><td>1</td><td>0</td><td>1</td>" in second
    assert admin.get("/admin/progress?page=x").status_code == 400


def test_rating_progress_shows_squares(tmp_path: Path) -> None:
    store = _app(tmp_path, None, "rate")
    for k in range(3):
        store.annotator_for("invite", f"j{k}", group="expert")
    for a, _ in store.annotators():
        store.assign_trials(a.id)
        while (t := store.next_trial(a.id)) is not None:
            store.submit_rating(a.id, t.lease or "", {"fluency": 3, "accuracy": 3})
    c = _client(store)
    _login(c)
    page = c.get("/admin/progress").text
    assert "<td>expert</td><td>3</td><td>3</td><td>0</td>" in page  # 3 of the 6 Williams rows of 3 systems


def test_init_refuses_an_edited_manifest_and_a_missing_video(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = _app(tmp_path)
    manifest = store.study.path.parent / "stimuli.csv"
    manifest.write_text(manifest.read_text().replace("A cat is playing the piano.", "A cat plays."))
    assert main(["collect", "init", str(store.study.path)]) == 2
    err = capsys.readouterr().err
    assert "changed: txt1" in err and "--update" in err and "Traceback" not in err
    assert main(["collect", "init", str(store.study.path), "--update"]) == 0
    (store.study.path.parent / "clip.mp4").unlink()
    with pytest.raises(StudyError, match=r"local media file\(s\) not found .*vid1_2_5 \(clip.mp4\)"):
        load_study(store.study.path)


def test_backup_while_serving_keeps_every_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = _app(tmp_path)
    c = _client(store)
    page = c.get("/start?PROLIFIC_PID=P1&STUDY_ID=S&SESSION_ID=X").text
    c.post("/task", data={**_form(page, "stimulus"), "description": "kept in the backup"})
    db = Path(store.url.removeprefix("sqlite:///"))
    assert Path(f"{db}-wal").stat().st_size > 0  # the write sits in the write-ahead log
    out = tmp_path / "copy.db"
    assert main(["collect", "backup", str(store.study.path), str(out)]) == 0
    with sqlite3.connect(out) as conn:
        assert conn.execute("SELECT text FROM description").fetchall() == [("kept in the backup",)]
    assert main(["collect", "backup", str(store.study.path), str(db)]) == 2
    assert "overwrite the study database" in capsys.readouterr().err


def test_missing_postgres_database_is_a_clear_error(
    tmp_path: Path, postgres: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _study(tmp_path)
    url = f"postgresql+psycopg://postgres@/no_such_study?host={postgres}"
    assert main(["collect", "init", str(path), "--database", url]) == 2
    err = capsys.readouterr().err
    assert "does not exist: create it first" in err and "createdb no_such_study" in err
    assert "Traceback" not in err and "internal error" not in err


def _training_study(tmp_path: Path) -> Store:
    path = _study(tmp_path, "rate")
    rows = (path.parent / "items.csv").read_text().splitlines()
    known = [f"k{i},A,known output {i},the reference of {i},{2 + i % 3}" for i in range(4)]
    known += [f"k{i},{s},known {s} {i},the reference of {i},{2 + i % 3}" for i in range(4) for s in "BC"]
    (path.parent / "items.csv").write_text("\n".join([rows[0] + ",expected", *(r + "," for r in rows[1:]), *known]))
    path.write_text(path.read_text() + "[training]\nitems = 3\nmax_error = 0.5\nqualify = true\n")
    store = Store(load_study(path))
    store.init()
    return store


def _rate_all(c: TestClient, page: str, score: object) -> str:
    while 'id="output"' in page:
        expected = re.search(r'id="training"', page) is not None
        form = _form(page, "trial")
        value = score(page, expected) if callable(score) else score
        page = c.post("/task", data={**form, "c_fluency": str(value), "c_accuracy": str(value)}).text
    return page


def test_training_gates_the_real_task(tmp_path: Path) -> None:
    store = _training_study(tmp_path)
    answers = {i.output: int(i.expected) for i in store.study.items if i.expected is not None}

    def careful(page: str, training: bool) -> int:
        out = re.search(r'id="output">([^<]*)<', page)[1]  # type: ignore[index]
        return answers.get(out, 3)

    good, bad = _client(store), _client(store)
    page = good.get("/start?workerId=G&assignmentId=AG&hitId=H").text
    assert 'id="training"' in page  # the qualification comes first
    page = _rate_all(good, page, careful)
    assert "completion-code" in page
    (g,) = [a for a, _ in store.annotators() if a.external_id == "G"]
    assert g.trained == "passed" and g.status == "qualified" and g.judge_index == 0
    normal = [t for t, _, _ in store.ratings(g.id) if t.kind == "normal"]
    assert len(normal) == 2 * 6 and all(t.tier == 2 for t in normal)  # two criteria, six items
    page = bad.get("/start?workerId=B&assignmentId=AB&hitId=H").text
    page = _rate_all(bad, page, lambda page, training: 5)  # far from every known answer
    assert 'id="not-qualified"' in page and "completion-code" in page  # paid for the qualification items
    (b,) = [a for a, _ in store.annotators() if a.external_id == "B"]
    assert b.trained == "failed" and b.judge_index is None  # no Latin-square row taken
    assert {t.kind for t, _, _ in store.ratings(b.id)} == {"training"}


def test_training_needs_enough_known_items(tmp_path: Path) -> None:
    path = _study(tmp_path, "rate")
    path.write_text(path.read_text() + "[training]\nitems = 2\n")
    with pytest.raises(StudyError, match=r"asks for 2 known-answer items, but the manifest has 0"):
        load_study(path)


def _control_study(tmp_path: Path, db_url: str | None = None) -> Store:
    path = _study(tmp_path, target=2)
    rows = ["id,kind,src,start,end,text,control"]
    rows += [f"t{i},text,,,,sentence number {i}," for i in range(8)]
    rows += [f"c{i},text,,,,a dog chases a red ball,dog|ball" for i in range(3)]
    (path.parent / "stimuli.csv").write_text("\n".join(rows) + "\n")
    path.write_text(
        path.read_text() + '[quality]\ncontrol_metric = "keywords"\npass_mark = 0.5\ncontrol_every = 2\n'
        "min_controls = 2\npass_rate = 0.5\n"
    )
    store = Store(load_study(path), db_url)
    store.init()
    store.add_admin("admin", "correct horse")
    return store


def test_attention_checks_gate_a_describe_study(tmp_path: Path, db_url: str) -> None:
    store = _control_study(tmp_path, db_url)
    honest, careless = _client(store), _client(store)
    seen: dict[str, list[str]] = {"honest": [], "careless": []}
    for name, c, text in (("honest", honest, "a dog runs after a ball"), ("careless", careless, "good")):
        page = c.get(f"/start?PROLIFIC_PID={name}&STUDY_ID=S&SESSION_ID=X").text
        while 'name="description"' in page:
            seen[name].append(re.search(r'id="stimulus-text">([^<]*)<', page)[1])  # type: ignore[index]
            page = c.post("/task", data={**_form(page, "stimulus"), "description": text}).text
    # every second item is a control while any is left; the honest annotator passes and sees everything
    assert seen["honest"][1::2][:3] == ["a dog chases a red ball"] * 3
    assert len(seen["honest"]) == 8 + 3
    (h,) = [a for a, _ in store.annotators() if a.external_id == "honest"]
    (c,) = [a for a, _ in store.annotators() if a.external_id == "careless"]
    assert h.trained == "passed" and c.trained == "failed"
    # the careless one stopped after failing two controls: 2 regular items and 2 controls
    assert len(seen["careless"]) == 4 and 'id="not-qualified"' in careless.get("/done").text
    # controls are outside the target and the corpus
    assert store.counts()["stimuli"] == 8
    assert {s.key for _, s, _ in store.descriptions()} <= {f"t{i}" for i in range(8)}
    assert len(store.descriptions(controls=True)) == len(store.descriptions()) + 3 + 2
    # the datasheet reports the attention checks as the app applied them: one judge passed, one failed
    sheet = datasheet(store)
    assert sheet["design"]["controls"]["attention_checks"] == 3
    judges = sheet["design"]["controls"]["judges"]
    assert (judges["checked"], judges["passed"], judges["failed"], judges["undecided"]) == (2, 1, 1, 0)
    assert judges["test"] == "keywords against the gold answers >= 0.5"
    assert sheet["responses"]["descriptions"] == len(store.descriptions()) == 8 + 2
    assert sheet["evaluators"]["training"] == {"failed": 1, "passed": 1}


def test_admin_flags_copies_and_other_languages(tmp_path: Path) -> None:
    path = _study(tmp_path)
    path.write_text(path.read_text().replace('kind = "describe"', 'kind = "paraphrase"'))
    (path.parent / "stimuli.csv").write_text(
        "id,kind,src,start,end,text\n"
        "s1,text,,,,The committee postponed the vote until next week.\n"
        "s2,text,,,,A man is slicing a tomato in the kitchen.\n"
    )
    store = Store(load_study(path))
    store.init()
    store.add_admin("admin", "correct horse")
    for name, answers in (
        ("copier", ["The committee postponed the vote until next week.", "A man is slicing a tomato in the kitchen."]),
        ("german", ["Der Ausschuss hat die Abstimmung verschoben.", "Ein Mann schneidet in der Küche eine Tomate."]),
    ):
        c = _client(store)
        page = c.get(f"/start?PROLIFIC_PID={name}&STUDY_ID=S&SESSION_ID=X").text
        while 'name="description"' in page:
            text = re.search(r'id="stimulus-text">([^<]*)<', page)[1]  # type: ignore[index]
            answer = answers[0] if "committee" in text else answers[1]
            page = c.post("/task", data={**_form(page, "stimulus"), "description": answer, "language": "English"}).text
    admin = _client(store)
    page = _login(admin)
    flags = {
        store.pseudonym(a): re.search(rf'id="annotator-{a.id}".*?class="flag">([^<]*)<', page, re.S)[1]  # type: ignore[index]
        for a, _ in store.annotators()
    }
    by_name = {a.external_id: flags[store.pseudonym(a)] for a, _ in store.annotators()}
    assert "copy" in by_name["copier"] and "copy" not in by_name["german"]
    assert "language" in by_name["german"]


@pytest.mark.parametrize(
    ("kind", "text", "message"),
    [
        ("describe", "[study]\nlease_minutes = 0\n", r"\[study\]: key 'lease_minutes' must be 1\.\.1440"),
        ("describe", "[study]\nlease_minutes = 2000\n", r"\[study\]: key 'lease_minutes' must be 1\.\.1440"),
        ("describe", '[study]\nlease_minutes = "20"\n', r"key 'lease_minutes' must be int"),
        ("describe", "[study]\nmin_answers = -1\n", r"\[study\]: key 'min_answers' must not be negative"),
        ("describe", '[study]\ncompletion_code = "a code!"\n', r"key 'completion_code' must be at most 40 letters"),
        ("describe", "[consent]\ntext = 3\n", r"\[consent\]: key 'text' must be str"),
        ("describe", "[consent]\nwho = 'me'\n", r"\[consent\]: unknown key\(s\) who"),
        ("describe", "[quality]\ncontrol_every = 1\n", r"\[quality\]: key 'control_every' must be at least 2"),
        ("describe", "[training]\nitems = 1\n", r"training phase of known-answer items is for rate and da"),
        ("rate", "[training]\nitems = -1\n", r"\[training\]: 'items' and 'max_error' must not be negative"),
        ("rate", "[training]\nqualify = 1\n", r"\[training\]: key 'qualify' must be bool"),
    ],
)
def test_bad_crowd_settings_name_the_key(tmp_path: Path, kind: str, text: str, message: str) -> None:
    path = write_study(tmp_path / kind, kind)
    body = path.read_text()
    if text.startswith("[study]\n"):
        key = text.split("\n")[1].split(" =")[0]
        body = "".join(ln for ln in body.splitlines(True) if not ln.startswith(key + " "))
        body = body.replace("[study]\n", text, 1)
    else:
        body += text
    path.write_text(body)
    with pytest.raises(StudyError, match=message):
        load_study(path)
    assert main(["collect", "init", str(path)]) == 2
