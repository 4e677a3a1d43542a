"""The side-by-side page in headless Chromium: a judge chooses with the mouse and with the keyboard (1/2/3 and the
arrow keys, Enter), calls a tie, writes a reason, and the database holds each winner in system terms with the side
shown; the page reads as a labelled group and its script runs under the Content-Security-Policy, on a desktop and
a phone. NGRAMEVAL_SHOTS=DIR keeps screenshots."""

from __future__ import annotations

from pathlib import Path

import pytest

from collect.collect_server import serving
from collect.test_browser import CHROMIUM, _shot, _submit, browser  # noqa: F401 (a fixture)
from collect.test_pairwise import write_pairwise
from ngrameval.collect.pairwise import winner_of
from ngrameval.collect.store import Store
from ngrameval.collect.study import load_study

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]


def _study(tmp_path: Path) -> tuple[Path, Store]:
    path = write_pairwise(tmp_path / "sbs", 'question = "Which translation is better?"')
    store = Store(load_study(path))
    store.init()
    return path, store


def test_choose_by_mouse_and_keyboard(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    chromium = request.getfixturevalue("browser")
    path, store = _study(tmp_path)
    with serving(path) as url:
        page = chromium.new_context(viewport={"width": 1100, "height": 800}).new_page()
        refused: list[str] = []
        page.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None)
        page.goto(f"{url}/start?PROLIFIC_PID=P1&STUDY_ID=S&SESSION_ID=X")
        group = page.get_by_role("group", name="Which translation is better?")
        assert group.count() == 1 and group.get_by_role("radio").count() == 3
        shown: list[tuple[str, str]] = []

        def sides() -> None:
            shown.append((page.inner_text("#output-a"), page.inner_text("#output-b")))

        # 1: the mouse, with a reason
        sides()
        box_a, box_b = page.locator("#output-a").bounding_box(), page.locator("#output-b").bounding_box()
        assert box_a and box_b and box_a["x"] + box_a["width"] <= box_b["x"]  # side by side: A left of B
        page.get_by_text("A is better").click()
        page.fill("#reason", "A keeps the meaning; B drops a word")
        _shot(page, "pairwise-mouse")
        _submit(page)
        # 2: the keyboard: 2 (B), then 3 (tie) changes the choice, Enter submits
        sides()
        page.keyboard.press("2")
        assert page.is_checked("#choice-right")
        page.keyboard.press("3")
        assert page.is_checked("#choice-tie") and not page.is_checked("#choice-right")
        _shot(page, "pairwise-keyboard-tie")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        # 3: the arrow keys; typing 1/2/3 in the reason box is text, not a choice
        sides()
        page.keyboard.press("ArrowRight")
        assert page.is_checked("#choice-right")
        page.click("#reason")
        page.keyboard.type("2 words 1 better")
        assert page.is_checked("#choice-right") and page.input_value("#reason") == "2 words 1 better"
        page.focus("#choice-right")
        page.keyboard.press("ArrowLeft")
        assert page.is_checked("#choice-left")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        # 4: Enter with nothing chosen sends nothing
        sides()
        page.keyboard.press("Enter")
        assert page.inner_text("#output-a") == shown[-1][0] and "Progress: 3 of 6" in page.inner_text("main")
        assert refused == []
        page.context.close()
    got = store.preferences()
    assert len(got) == 3
    expected = [("left", "A keeps the meaning; B drops a word"), ("tie", ""), ("left", "2 words 1 better")]
    for (t, p, _), (choice, reason), (text_a, text_b) in zip(got, expected, shown, strict=False):
        left_text, right_text = (t.output, p.output_b) if p.left == "a" else (p.output_b, t.output)
        assert (text_a, text_b) == (left_text, right_text)  # the database knows what was shown where
        assert p.winner == winner_of(choice, p.left) and p.reason == reason


def test_phone_layout_stacks_the_outputs(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    chromium = request.getfixturevalue("browser")
    path, store = _study(tmp_path)
    with serving(path) as url:
        page = chromium.new_context(viewport={"width": 390, "height": 844}).new_page()
        page.goto(f"{url}/start?PROLIFIC_PID=P2&STUDY_ID=S&SESSION_ID=Y")
        box_a, box_b = page.locator("#output-a").bounding_box(), page.locator("#output-b").bounding_box()
        assert box_a and box_b and box_a["y"] + box_a["height"] <= box_b["y"]  # A above B on a narrow screen
        assert page.evaluate("document.documentElement.scrollWidth") <= 390  # nothing runs off the side
        _shot(page, "pairwise-phone")
        page.get_by_text("about the same").click()
        _submit(page)
        page.context.close()
    ((_, p, _),) = store.preferences()
    assert p.winner == "tie"
