"""A crowd worker's whole path in Chromium against a real server: consent, the qualification items, the rating
task and the completion code of their own assignment; the admin's progress page. NGRAMEVAL_SHOTS=DIR keeps a
screenshot of every page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from collect.collect_server import serving
from collect.collect_studies import write_study
from collect.test_browser import CHROMIUM, _shot, _submit, browser
from ngrameval.collect.store import Store
from ngrameval.collect.study import load_study

__all__ = ["browser"]  # the fixture, used below by name
pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium at /usr/bin/chromium")


def _study(tmp_path: Path) -> tuple[Path, Store]:
    path = write_study(tmp_path, "rate")
    rows = (path.parent / "items.csv").read_text().splitlines()
    known = [f"k{i},{s},a known {s} sentence {i},the reference of {i},{1 + i}" for i in range(3) for s in "ABC"]
    (path.parent / "items.csv").write_text("\n".join([rows[0] + ",expected", *(r + "," for r in rows[1:]), *known]))
    path.write_text(
        path.read_text().replace('completion_code = "RATE-OK"', 'completion_code = "RATE"')
        + '[consent]\ntext = "Your ratings are kept for research under a pseudonym. You may stop at any time."\n'
        + "[training]\nitems = 3\nmax_error = 0.5\n"
    )
    store = Store(load_study(path))
    store.init()
    store.add_admin("admin", "correct horse")
    return path, store


def test_consent_training_task_code(browser, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path, store = _study(tmp_path)
    known = {i.output: int(i.expected) for i in store.study.items if i.expected is not None}
    with serving(path) as url:
        ctx = browser.new_context(viewport={"width": 1000, "height": 900})
        page = ctx.new_page()
        page.goto(f"{url}/start?workerId=W1&assignmentId=ASG1&hitId=H&turkSubmitTo=https://workersandbox.mturk.com")
        assert "kept for research" in page.inner_text("#consent-text")
        _shot(page, "crowd-consent")
        _submit(page, "#agree")
        trained = 0
        while page.query_selector("#output"):
            if page.query_selector("#training"):
                trained += 1
                if trained == 1:
                    _shot(page, "crowd-training")
            score = known.get(page.inner_text("#output"), 3)
            for crit in ("fluency", "accuracy"):
                page.check(f"input[name=c_{crit}][value='{score}']")
            _submit(page)
        assert trained == 3
        _shot(page, "crowd-done")
        code = page.inner_text("#completion-code")
        assert re.fullmatch(r"RATE-[0-9A-F]{10}", code)
        assert page.get_attribute("form[action$='externalSubmit'] input[name=code]", "value") == code
        (g, a, n), *_ = store.assignments()
        assert (g.external, g.code, a.trained) == ("ASG1", code, "passed")
        assert n == 3 + 6 + 1 + 9  # answers: training, the Latin-square row, a repeat, the known items
        ctx.close()
        admin = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
        admin.goto(f"{url}/admin/login")
        admin.fill("#username", "admin")
        admin.fill("#password", "correct horse")
        _submit(admin, "#login")
        with admin.expect_navigation():
            admin.click("#progress-link")
        assert "complete squares" in admin.inner_text("#squares")
        _shot(admin, "crowd-admin-progress")
        admin.context.close()
