"""The admin's running ranking in headless Chromium: after enough answers the top pair is settled and the table
says so, the HTML in a system's name shows as text. NGRAMEVAL_SHOTS=DIR keeps the screenshot."""

from __future__ import annotations

from pathlib import Path

import pytest

from collect.collect_server import serving
from collect.settle_studies import judge, open_store, write_settle_study
from collect.test_browser import CHROMIUM, _shot, _submit, browser  # noqa: F401 (a fixture)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]


def test_admin_ranking_table(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    chromium = request.getfixturevalue("browser")
    path = write_settle_study(tmp_path, "planned = 20")
    store = open_store(path, admin=True)
    for k in range(12):  # 24 answers a system: good (5) is clear of the rest, bad (2) and the last (1) are not
        judge(store, f"j{k}")
    with serving(path) as url:
        page = chromium.new_context(viewport={"width": 1280, "height": 900}).new_page()
        page.goto(f"{url}/admin/login")
        page.fill("#username", "admin")
        page.fill("#password", "correct horse")
        _submit(page, "#login")
        rows = page.locator("#ranking tr.standing")
        assert rows.count() == 3
        cells = [[c.strip() for c in rows.nth(k).locator("td").all_inner_texts()] for k in range(3)]
        assert [c[1] for c in cells] == ["good", "bad", "<b>worse</b>"]  # the name as text, not markup
        assert page.locator("#ranking b").count() == 0
        assert [c[2] for c in cells] == ["24", "24", "24"]
        assert [c[5] for c in cells] == ["yes", "no", "–"]  # settled with the next
        assert [c[6] for c in cells] == ["1", "2", "2"]  # clusters
        assert "1 of 2 adjacent pairs settled" in page.inner_text("#settle")
        page.locator("#settle").scroll_into_view_if_needed()
        _shot(page, "admin-ranking")
        page.context.close()


def test_finished_pages(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """``max_answers = 1``: the first judge's trial on screen spends the budget. A second person arriving is told
    the study has finished (and is not recorded); the first answers, and their completion page says it has
    finished and gives their code; the admin page says why it stopped."""
    chromium = request.getfixturevalue("browser")
    path = write_settle_study(tmp_path, "max_answers = 1")
    store = open_store(path, admin=True)
    with serving(path) as url:
        first = chromium.new_context(viewport={"width": 800, "height": 700}).new_page()
        first.goto(f"{url}/start?PROLIFIC_PID=P1&STUDY_ID=S&SESSION_ID=X")
        assert first.locator('input[name="trial"]').count() == 1  # a trial on screen
        late = chromium.new_context(viewport={"width": 800, "height": 700}).new_page()
        late.goto(f"{url}/start?PROLIFIC_PID=P2&STUDY_ID=S&SESSION_ID=Y")
        assert "This study has finished" in late.inner_text("main")
        assert late.locator('input[name="trial"]').count() == 0
        _shot(late, "finished-newcomer")
        assert len(store.annotators()) == 1
        first.check('input[name="c_fluency"][value="4"]')
        _submit(first)
        assert "This study has finished" in first.inner_text("#study-finished")
        assert first.inner_text("#completion-code") == "SETTLE"  # Prolific: the study's code
        _shot(first, "finished-judge")
        assert store.counts()["trials_answered"] == 1
        admin = chromium.new_context(viewport={"width": 1280, "height": 900}).new_page()
        admin.goto(f"{url}/admin/login")
        admin.fill("#username", "admin")
        admin.fill("#password", "correct horse")
        _submit(admin, "#login")
        assert "the answer budget is spent (1 of max_answers = 1 trials given out)" in admin.inner_text("#stopped")
        _shot(admin, "finished-admin")
        for page in (first, late, admin):
            page.context.close()
