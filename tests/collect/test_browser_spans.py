"""ESA and MQM pages in a real browser (Debian's headless Chromium through Playwright) against a real server: a
span selected with the mouse, another with the keyboard (across an emoji: the page counts code points as Python
does), a severity edited, a mark removed, an overlap refused, an omission marked, the score given, submitted —
and what the database holds. Set NGRAMEVAL_SHOTS=DIR to keep a screenshot of every step (mqm.png and esa.png
are the pictures of docs/collect)."""

from __future__ import annotations

from pathlib import Path

import pytest

from collect.collect_server import serving
from collect.span_studies import write_span_study
from collect.test_browser import CHROMIUM, _shot, _submit, browser
from ngrameval.collect.spans import Mark, answers
from ngrameval.collect.store import Store
from ngrameval.collect.study import load_study

__all__ = ["browser"]
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]


def _drag(page, first: int, last: int) -> None:  # type: ignore[no-untyped-def]
    """Press the mouse on character ``first`` of the output and release it on character ``last``."""
    a = page.locator(f"#target .ch[data-i='{first}']").bounding_box()
    z = page.locator(f"#target .ch[data-i='{last}']").bounding_box()
    page.mouse.move(a["x"] + a["width"] / 2, a["y"] + a["height"] / 2)
    page.mouse.down()
    page.mouse.move(z["x"] + z["width"] / 2, z["y"] + z["height"] / 2, steps=6)
    page.mouse.up()


def _row(page, k: int):  # type: ignore[no-untyped-def]
    return page.locator("#span-list > li").nth(k)


@pytest.mark.parametrize("kind", ["mqm", "esa"])
def test_mark_edit_remove_and_submit(browser, tmp_path: Path, kind: str) -> None:  # type: ignore[no-untyped-def]
    path = write_span_study(tmp_path, kind)
    store = Store(load_study(path))
    store.init()
    (invite,) = store.add_invites(1)
    mqm = kind == "mqm"
    with serving(path) as url:
        ctx = browser.new_context(viewport={"width": 1000, "height": 900})
        page = ctx.new_page()
        problems: list[str] = []
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.on("console", lambda m: problems.append(m.text) if "Content Security Policy" in m.text else None)
        page.goto(f"{url}/start?invite={invite}")
        text = page.evaluate("JSON.parse(document.getElementById('span-data').textContent).text")
        bear, cafe = text.index("🐻"), text.index("café")
        _shot(page, f"{kind}-0-start")
        # 0. a double-click takes a word; Ctrl+Shift+arrow extends by words; Esc clears
        cell = page.locator(f"#target .ch[data-i='{bear + 3}']")  # in "läuft"
        cell.dblclick()
        assert page.inner_text("#selection").startswith("Selected: \u201cläuft\u201d")
        page.focus("#target")
        page.keyboard.press("Home")
        page.keyboard.press("Control+Shift+ArrowRight")
        page.keyboard.press("Control+Shift+ArrowRight")
        assert page.inner_text("#selection").startswith("Selected: \u201cDer Bär\u201d (characters 0\u20137)")
        page.keyboard.press("Escape")
        assert page.inner_text("#selection") == "Nothing selected."
        # 1. the mouse: "Bär" (characters 4..6)
        _drag(page, 4, 6)
        assert page.inner_text("#selection").startswith("Selected: \u201cBär\u201d")
        _shot(page, f"{kind}-1-dragged")
        page.click("#mark")
        _row(page, 0).locator("select.severity").select_option("Major" if mqm else "major")
        if mqm:
            _row(page, 0).locator("select.category").select_option("Accuracy/Mistranslation")
        # 2. the keyboard: from the start, 8 right, then shift+right 7 times: "🐻 läuft" (the emoji is one step)
        page.focus("#target")
        page.keyboard.press("Home")
        for _ in range(bear):
            page.keyboard.press("ArrowRight")
        for _ in range(7):
            page.keyboard.press("Shift+ArrowRight")
        assert "\u201c🐻 läuft\u201d" in page.inner_text("#selection")
        _shot(page, kind if mqm else f"{kind}-2-keyboard")  # docs/collect/mqm.png
        page.keyboard.press("Enter")
        sev = _row(page, 1).locator("select.severity")
        assert sev.evaluate("e => e === document.activeElement")  # the new mark's severity has the focus
        page.keyboard.press("ArrowDown")  # a keyboard user picks the first severity ...
        sev.select_option("Minor" if mqm else "minor")  # ... and edits it
        if mqm:
            _row(page, 1).locator("select.category").select_option("Fluency/Grammar")
        # 3. an overlap is refused on the page (the server refuses it too)
        _drag(page, 6, bear)
        page.click("#mark")
        assert "overlaps mark" in page.inner_text("#form-error") and page.locator("#span-list > li").count() == 2
        # 4. a third span with the mouse ("café"), then removed
        _drag(page, cafe, cafe + 3)
        page.click("#mark")
        assert page.locator("#span-list > li").count() == 3 and _row(page, 2).locator("q").inner_text() == "café"
        _shot(page, f"{kind}-3-three")
        _row(page, 2).locator("button.remove").click()
        assert page.locator("#span-list > li").count() == 2
        # 5. an omission; submitting without its severity is stopped on the page
        page.click("#missing")
        page.click("#submit")
        assert "Mark 3 needs a severity" in page.inner_text("#form-error")
        _row(page, 2).locator("select.severity").select_option("Major" if mqm else "major")
        if not mqm:
            page.click("#submit")
            assert "slider" in page.inner_text("#form-error")
            page.focus("#c_esa")
            for _ in range(20):
                page.keyboard.press("ArrowRight")  # 50 -> 70
        _shot(page, f"{kind}-4-ready" if mqm else kind)  # docs/collect/esa.png
        _submit(page)
        assert page.locator("#span-data").count() == 1 and "Progress: 1 of" in page.inner_text("main")
        _shot(page, f"{kind}-5-next")
        assert problems == []
        ctx.close()
    ((t, _, marks, score),) = answers(store)
    assert t.output == text
    omission = "Accuracy/Omission" if mqm else ""
    assert marks == (
        Mark(4, 7, "Major" if mqm else "major", "Accuracy/Mistranslation" if mqm else ""),
        Mark(bear, bear + 7, "Minor" if mqm else "minor", "Fluency/Grammar" if mqm else ""),
        Mark(None, None, "Major" if mqm else "major", omission),
    )
    assert t.output[bear : bear + 7] == "🐻 läuft"
    assert score == (None if mqm else 70.0)
