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
