"""Task pages in headless Chromium (issue 27, items 6 and 7): the describe page refuses an empty or blank
answer with a message and counts characters up to the limit; a Likert rating is done by keyboard alone (number
keys, Enter) and reads to a screen reader as labelled groups; the DA slider shows its number; the Content-
Security-Policy lets the pages' own scripts run; MTurk's worker site may frame the task, other sites may not,
and nobody may frame the admin area. NGRAMEVAL_SHOTS=DIR keeps screenshots."""

from __future__ import annotations

from pathlib import Path

import pytest

from collect.collect_server import serving
from collect.test_browser import ARGS, CHROMIUM, _setup, _shot, _submit, browser  # noqa: F401 (a fixture)

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium at /usr/bin/chromium")


def test_describe_counter_and_empty_submit(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    chromium = request.getfixturevalue("browser")
    path, store = _setup(tmp_path, "describe")
    with serving(path) as url:
        page = chromium.new_context(viewport={"width": 390, "height": 844}).new_page()
        refused: list[str] = []  # what the Content-Security-Policy blocked (the page's own script must run)
        page.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None)
        page.goto(f"{url}/start?PROLIFIC_PID=P1&STUDY_ID=S&SESSION_ID=X")
        first = page.input_value('input[name="stimulus"]')
        assert page.inner_text("#description-count") == "0 of 400 characters"
        assert page.locator("#description-error").is_hidden()
        page.click("#submit")  # nothing written: the page says so and sends nothing
        assert page.locator("#description-error").is_visible()
        assert "Please write your description first, or press Skip." in page.inner_text("#description-error")
        page.fill("#description", "   ")  # only spaces are not an answer either
        page.click("#submit")
        assert page.locator("#description-error").is_visible() and not page.evaluate(
            "document.getElementById('task-form').checkValidity()"
        )
        _shot(page, "describe-empty-submit")
        page.fill("#description", "")
        page.type("#description", "a cat")
        assert page.inner_text("#description-count") == "5 of 400 characters"
        assert page.locator("#description-error").is_hidden()
        page.fill("#description", "x" * 399)
        page.type("#description", "yz")  # the 401st character is not taken
        assert page.input_value("#description") == "x" * 399 + "y"
        assert "400 of 400 characters: the limit" in page.inner_text("#description-count")
        _shot(page, "describe-counter-limit")
        assert store.counts()["descriptions"] == 0 and page.input_value('input[name="stimulus"]') == first
        page.fill("#description", "a man slices a tomato")
        _submit(page)
        assert store.counts()["descriptions"] == 1 and "1 of 3" in page.inner_text("main")
        assert refused == []
        page.context.close()


def test_rating_by_keyboard_and_screen_reader_labels(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    chromium = request.getfixturevalue("browser")
    path, store = _setup(tmp_path, "rate")
    with serving(path) as url:
        page = chromium.new_context().new_page()
        page.goto(f"{url}/start?PROLIFIC_PID=P1&STUDY_ID=S&SESSION_ID=X")
        # labelled groups: a screen reader announces the question, then the choices in it
        for name in ("fluency", "accuracy"):
            group = page.get_by_role("group", name=name)
            assert group.count() == 1 and group.get_by_role("radio").count() == 5
        assert page.get_by_role("radio", name="4").count() == 2
        output = page.inner_text("#output")
        page.keyboard.press("3")  # the first question
        page.keyboard.press("Enter")  # the second is not answered: the page stays, nothing is sent
        assert page.inner_text("#output") == output and page.is_checked('input[name="c_fluency"][value="3"]')
        assert page.evaluate("document.activeElement.name") == "c_accuracy"  # the focus moved on
        page.keyboard.press("9")  # no such point: ignored
        page.keyboard.press("2")
        assert page.is_checked('input[name="c_accuracy"][value="2"]')
        page.focus('input[name="c_fluency"][value="3"]')  # back to the first question: a key changes it
        page.keyboard.press("5")
        assert page.is_checked('input[name="c_fluency"][value="5"]')
        _shot(page, "rate-keyboard")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert "Progress: 1 of" in page.inner_text("main")
        page.context.close()
    assert len({t.id for t, _, _ in store.ratings()}) == 1
    got = {r.criterion: r.score for _, r, _ in store.ratings()}
    assert got == {"fluency": 5.0, "accuracy": 2.0}


def test_da_slider_shows_its_number(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    chromium = request.getfixturevalue("browser")
    path, _ = _setup(tmp_path, "da")
    with serving(path) as url:
        page = chromium.new_context(viewport={"width": 390, "height": 844}).new_page()
        page.goto(f"{url}/start?PROLIFIC_PID=P1&STUDY_ID=S&SESSION_ID=X")
        assert page.locator("#default-instructions").is_visible()
        assert page.inner_text("#value-adequacy") == "not moved yet"
        page.keyboard.press("Enter")  # Enter does not submit an unmoved slider
        assert "Progress: 0 of" in page.inner_text("main")
        page.locator("#c_adequacy").focus()
        for _ in range(7):
            page.keyboard.press("ArrowRight")
        assert page.inner_text("#value-adequacy") == "57"
        _shot(page, "da-slider-value")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert "Progress: 1 of" in page.inner_text("main")
        page.context.close()


def test_framing_mturk_only_and_never_the_admin(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """A fake MTurk worker site (and a fake other site), answered by Playwright's router, frame the study served
    with --secure-cookies: in MTurk's iframe the worker's session works (a SameSite=None; Secure; Partitioned
    cookie; Chromium counts 127.0.0.1 as secure) and the task is shown; another site cannot frame the task and
    nobody the admin area. Chromium is told to allow http content in an https page and a public page's frame
    of a loopback address (both only because the test server is plain http on loopback)."""
    path, _ = _setup(tmp_path, "describe")
    chromium = request.getfixturevalue("browser")
    flags = ["--allow-running-insecure-content", "--disable-features=LocalNetworkAccessChecks"]
    with serving(path, None, "--secure-cookies") as url:
        b = chromium.browser_type.launch(executable_path=CHROMIUM, args=[*ARGS, *flags])
        page = b.new_context().new_page()

        def framed(site: str, target: str) -> str:
            """The text of the framed page's main element; empty when the browser refused to frame it."""
            body = f'<!doctype html><iframe id="f" src="{url}{target}" width="700" height="700"></iframe>'
            page.route(f"{site}/**", lambda route: route.fulfill(content_type="text/html", body=body))
            page.goto(f"{site}/hit")
            frame = page.frame_locator("#f")
            shown = frame.locator("main").inner_text(timeout=10_000) if frame.locator("header").count() else ""
            page.unroute(f"{site}/**")
            return shown

        hit = "/start?workerId=W1&assignmentId=A1&hitId=H1&turkSubmitTo=https://workersandbox.mturk.com"
        assert "Describe the main action" in framed("https://workersandbox.mturk.com", hit)
        _shot(page, "framed-by-mturk")
        assert "Progress: 0 of 3" in framed("https://worker.mturk.com", "/task")  # the same session
        assert framed("https://evil.example", "/task") == ""
        assert framed("https://worker.mturk.com", "/admin/login") == ""
        b.close()
