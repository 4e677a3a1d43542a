"""A real browser (Debian's headless Chromium through Playwright) against a real server: an annotator's whole
describe task, a rating task of a Latin square, the admin's login, qualification and export. Set
NGRAMEVAL_SHOTS=DIR to keep a screenshot of every page."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from collect.collect_server import serving
from collect.collect_studies import write_study
from ngrameval.collect.store import Store
from ngrameval.collect.study import load_study
from ngrameval.corpus.msvd import read_corpus

CHROMIUM = "/usr/bin/chromium"
pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian's chromium at /usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="needs playwright (the test extra)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def _shot(page, name: str) -> None:  # type: ignore[no-untyped-def]
    where = os.environ.get("NGRAMEVAL_SHOTS")
    if where:
        Path(where).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(where) / f"{name}.png"), full_page=True)


def _setup(tmp_path: Path, kind: str) -> tuple[Path, Store]:
    path = write_study(tmp_path, kind)
    store = Store(load_study(path))
    store.init()
    store.add_admin("admin", "correct horse")
    return path, store


def _submit(page, selector: str = "#submit") -> None:  # type: ignore[no-untyped-def]
    """Clicks a form's submit button and waits for the page it leads to: a click returns once the navigation has
    begun, when the next page's document may still be empty (a loop reading it then would stop early)."""
    with page.expect_navigation():
        page.click(selector)


def test_describe_task_admin_qualification_and_export(browser, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path, store = _setup(tmp_path, "describe")
    (invite,) = store.add_invites(1)
    with serving(path) as url:
        ctx = browser.new_context(viewport={"width": 390, "height": 844})  # a phone
        page = ctx.new_page()
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        page.goto(f"{url}/start?workerId=WORKER1&assignmentId=A1&hitId=H1")
        texts = ["a man plays a <b>guitar</b>", "a cat plays the piano", "a man slices a tomato"]
        n = 0
        while page.locator("#description").count():
            _shot(page, f"describe-{n}")
            page.fill("#description", texts[n])
            page.fill("#comment", "fine")
            _submit(page)
            n += 1
        assert n == 3 and "NGE-OK" in page.inner_text("#completion-code")
        _shot(page, "done")
        assert all(r.startswith(url) for r in requests)  # nothing from another host (no CDN)
        second = ctx.browser.new_context().new_page()
        second.goto(f"{url}/start?invite={invite}")
        second.click("#skip")
        second.fill("#description", "someone is cooking")
        _submit(second)
        admin = browser.new_context().new_page()
        admin.goto(f"{url}/admin")
        _shot(admin, "login")
        admin.fill("#username", "admin")
        admin.fill("#password", "correct horse")
        _submit(admin, "#login")
        _shot(admin, "admin")
        aid = next(a.id for a, _ in store.annotators() if a.platform == "mturk")
        admin.click(f"#qualify-{aid}")
        assert admin.inner_text(f"#annotator-{aid} .status") == "qualified"
        admin.goto(f"{url}/admin/annotator/{aid}")
        assert "<b>guitar</b>" in admin.inner_text("#descriptions")  # shown as text
        _shot(admin, "annotator")
        with admin.expect_download() as dl:
            admin.evaluate("location.href = '/admin/export/descriptions.csv'")
        target = tmp_path / "descriptions.csv"
        dl.value.save_as(target)
        ctx.close()
    descs = read_corpus(target)
    assert len(descs) == 4 and {d.text for d in descs} >= set(texts)


def test_rating_task_latin_square(browser, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path, store = _setup(tmp_path, "rate")
    tokens = store.add_invites(3)
    with serving(path) as url:
        for j, token in enumerate(tokens):
            page = browser.new_context().new_page()
            page.goto(f"{url}/start?invite={token}")
            k = 0
            while page.locator("#output").count():
                if j == 0 and k == 0:
                    _shot(page, "rate")
                page.locator('input[name="c_fluency"]').nth(j + 1).check()
                page.locator('input[name="c_accuracy"]').nth(4).check()
                _submit(page)
                k += 1
            assert "Thank you" in page.content() and k == 7  # 6 items + 1 repeat
            page.context.close()
    rows = [t for t, r, _ in store.ratings() if r.criterion == "fluency" and t.kind == "normal"]
    pairs = {(t.item, t.system) for t in rows}
    assert len(rows) == 18 and len(pairs) == 18  # the square: every (item, system) once over three judges
    for aid in {t.annotator_id for t in rows}:
        mine = [t for t in rows if t.annotator_id == aid]
        assert sorted(t.system for t in mine) == ["A", "A", "B", "B", "C", "C"]


def test_da_slider_must_be_moved(browser, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path, store = _setup(tmp_path, "da")
    (token,) = store.add_invites(1)
    with serving(path) as url:
        page = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
        page.goto(f"{url}/start?invite={token}")
        assert "adequately expresses the meaning of the reference" in page.inner_text("form")
        assert page.locator("#submit").is_disabled()  # Submit waits until the slider is moved (as Appraise)
        _shot(page, "da")
        page.locator("#c_adequacy").focus()
        page.keyboard.press("ArrowRight")  # keyboard alone is enough
        assert page.locator("#submit").is_enabled()
        _submit(page)
        assert "Progress: 1 of" in page.inner_text("main")
        page.context.close()
    ((_, r, _),) = store.ratings()
    assert r.criterion == "adequacy" and r.score == 51
