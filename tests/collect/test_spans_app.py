"""ESA and MQM pages as a crowd uses them (Starlette's test client over SQLite and PostgreSQL): what the page
shows and sends to its script (the exact output, escaped), the CSP nonce on its script, marks with non-ASCII
letters and an emoji stored at the offsets sent, forged / repeated / cross-site / oversized / out-of-range
submissions refused or stored once, and judges answering at the same moment."""

from __future__ import annotations

import html
import json
import re
import threading
from pathlib import Path

import pytest

from collect.span_studies import write_span_study
from collect.test_app import TestClient, _field
from collect.test_spans import _j
from ngrameval.collect.app import create_app
from ngrameval.collect.spans import Mark, answers
from ngrameval.collect.store import Store
from ngrameval.collect.study import load_study


def _store(tmp_path: Path, kind: str, url: str | None = None, extra: str = "") -> Store:
    store = Store(load_study(write_span_study(tmp_path / kind, kind, extra)), url)
    store.init()
    return store


def _client(store: Store) -> TestClient:
    return TestClient(create_app(store), follow_redirects=True)


def _arrive(store: Store, c: TestClient) -> str:
    (token,) = store.add_invites(1)
    r = c.get(f"/start?invite={token}")
    assert r.status_code == 200
    return r.text


def _data(page: str) -> dict[str, object]:
    m = re.search(r'<script type="application/json" id="span-data">(.*?)</script>', page, re.S)
    assert m, "no data block"
    return json.loads(m[1])  # type: ignore[no-any-return]


def _form(page: str, marks: str, **extra: str) -> dict[str, str]:
    return {"csrf": _field(page, "csrf"), "token": _field(page, "token"), "spans": marks, **extra}


def test_esa_page_and_answer(tmp_path: Path, db_url: str) -> None:
    store = _store(tmp_path, "esa", db_url)
    c = _client(store)
    page = _arrive(store, c)
    data = _data(page)
    text = str(data["text"])
    trial = store.next_trial(store.annotators()[0][0].id)
    assert trial is not None and text == trial.output and "🐻" in text
    assert data["severities"] == ["minor", "major"] and data["categories"] == []
    assert html.escape(trial.source) in page and 'id="reference"' not in page  # ESA shows no reference by default
    assert 'name="c_esa"' in page and "[missing]" in page
    r = c.get("/task")
    csp, page = r.headers["content-security-policy"], r.text
    nonce = re.search(r"'nonce-([^']+)'", csp)
    assert nonce and f'<script nonce="{nonce[1]}">' in page and "unsafe-inline" not in csp
    assert page.count("<script") == 2 and '<script type="application/json" id="span-data">' in page  # data, no code
    bear = text.index("🐻")  # a Python index: the code point after 'Der Bär '
    marks = _j({"start": bear, "end": bear + 1, "severity": "major"}, {"missing": True, "severity": "minor"})
    for score in ("101", "-1", "50.5", "", "nan"):
        r = c.post("/task", data=_form(page, marks, c_esa=score))
        assert r.status_code == 400, score
    assert store.counts()["trials_answered"] == 0
    r = c.post("/task", data=_form(page, marks, c_esa="64"))
    assert r.status_code == 200
    assert c.post("/task", data=_form(page, marks, c_esa="10")).status_code == 200  # a repeat: stored once
    ((t, _, got, score),) = answers(store)
    assert got == (Mark(bear, bear + 1, "major"), Mark(None, None, "minor")) and score == 64
    assert t.output[got[0].start : got[0].end] == "🐻"  # type: ignore[misc]


def test_mqm_page_shows_reference_and_escapes(tmp_path: Path, db_url: str) -> None:
    root = tmp_path / "mqm"
    write_span_study(root, "mqm")
    items = root / "items.csv"
    items.write_text(items.read_text(encoding="utf-8").replace("café.", "café </script><b>x</b>."), encoding="utf-8")
    store = Store(load_study(root / "study.toml"), db_url)
    store.init()
    c = _client(store)
    page = _arrive(store, c)
    assert "<b>x</b>" not in page and "</script><b>" not in page  # escaped in the text and in the data block
    data = _data(page)
    assert str(data["text"]).endswith("café </script><b>x</b>.")
    assert 'id="reference"' in page and "Der Bär läuft über die Straße." in page
    assert data["severities"] == ["Major", "Minor", "Neutral"] and data["omission"] == "Accuracy/Omission"
    groups = {g[0]: [leaf[0] for leaf in g[1]] for g in data["categories"]}  # type: ignore[union-attr]
    assert groups["Accuracy"][1] == "Accuracy/Omission" and groups["Non-translation!"] == ["Non-translation!"]
    text = str(data["text"])
    end = len(text)
    marks = _j({"start": end - 10, "end": end - 1, "severity": "Minor", "category": "Fluency/Spelling"})
    assert c.post("/task", data=_form(page, marks)).status_code == 200
    ((t, _, got, _),) = answers(store)
    assert t.output[got[0].start : got[0].end] == "><b>x</b>"  # type: ignore[misc]
    assert got == (Mark(end - 10, end - 1, "Minor", "Fluency/Spelling"),)


REFUSED = [
    (_j({"start": 0, "end": 999, "severity": "Major", "category": "Other"}), "not a span of the text"),
    (_j({"start": 0, "end": 3, "severity": "Critical", "category": "Other"}), "choose a severity"),
    (_j({"start": 0, "end": 3, "severity": "Major", "category": "Accuracy"}), "choose a category"),
    (
        _j(
            {"start": 0, "end": 5, "severity": "Major", "category": "Other"},
            {"start": 3, "end": 8, "severity": "Minor", "category": "Other"},
        ),
        "overlap",
    ),
    ("not json", "not readable"),
    (_j(*({"missing": True, "severity": "Minor", "category": "Other"} for _ in range(51))), "at most 50"),
]


def test_refused_marks_store_nothing(tmp_path: Path) -> None:
    store = _store(tmp_path, "mqm")
    c = _client(store)
    page = _arrive(store, c)
    for marks, message in REFUSED:  # one form, refused each time: nothing is stored, the page links back
        r = c.post("/task", data=_form(page, marks))
        assert r.status_code == 400 and message in html.unescape(r.text) and 'href="/task"' in r.text, message
    assert store.counts()["trials_answered"] == 0 and answers(store) == []
    assert c.post("/task", data=_form(page, "[]")).status_code == 200  # the same form, now valid: stored
    assert store.counts()["trials_answered"] == 1


def test_forged_and_cross_site_posts(tmp_path: Path, db_url: str) -> None:
    store = _store(tmp_path, "mqm", db_url)
    a, b = _client(store), _client(store)
    page_a, page_b = _arrive(store, a), _arrive(store, b)
    ok = _j({"missing": True, "severity": "Major", "category": "Accuracy/Omission"})
    # B posts A's task token with B's own CSRF token: not B's trial
    r = b.post("/task", data={**_form(page_b, ok), "token": _field(page_a, "token")})
    assert r.status_code == 400 and "not given to you" in r.text
    r = a.post("/task", data={**_form(page_a, ok), "csrf": "forged"})  # another site's form
    assert r.status_code == 403
    r = a.post("/task", data={**_form(page_a, ok), "token": "made-up-token-123"})
    assert r.status_code == 400
    r = a.post("/task", data=_form(page_a, "[" + ",".join(["{}"] * 3000) + "]"))  # over the field limit
    assert r.status_code == 413
    assert store.counts()["trials_answered"] == 0
    r = a.post("/task", data=_form(page_a, ok))
    assert r.status_code == 200 and len(answers(store)) == 1


@pytest.mark.slow
def test_judges_at_the_same_moment(tmp_path: Path, db_url: str) -> None:
    """Six judges answer all their trials at once, each form posted twice concurrently (a double click): every
    trial answered once, with exactly the marks sent."""
    store = _store(tmp_path, "esa", db_url)
    clients = [_client(store) for _ in range(6)]
    pages = [_arrive(store, c) for c in clients]
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(clients))

    def post(c: TestClient, form: dict[str, str], codes: list[int]) -> None:
        codes.append(c.post("/task", data=form).status_code)

    def judge(k: int, c: TestClient, page: str) -> None:
        try:
            first = True
            while "span-data" in page:
                text = str(_data(page)["text"])
                marks = _j({"start": k % 5, "end": k % 5 + 3, "severity": "minor"},
                           {"start": len(text) - 1, "end": len(text), "severity": "major"})  # fmt: skip
                form = _form(page, marks, c_esa=str(10 * k))
                if first:
                    barrier.wait()
                    first = False
                codes: list[int] = []
                twins = [threading.Thread(target=post, args=(c, form, codes)) for _ in range(2)]
                for t in twins:
                    t.start()
                for t in twins:
                    t.join()
                assert codes == [200, 200], codes
                page = c.get("/task").text
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=judge, args=(k, c, p)) for k, (c, p) in enumerate(zip(clients, pages))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    got = answers(store)
    assert store.counts()["trials_answered"] == store.counts()["trials"] == 6 * 4
    for t, _, marks, score in got:
        k = int(score or 0) // 10
        assert marks == (Mark(k % 5, k % 5 + 3, "minor"), Mark(len(t.output) - 1, len(t.output), "major"))
    assert len(got) == 6 * 4 and len({a.id for _, a, _, _ in got}) == 6
