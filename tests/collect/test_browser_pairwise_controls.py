"""Side-by-side controls in headless Chromium: a training comparison and a bad reference (an output against its
own degraded copy) look like any other comparison to the judge: the same page, element for element, with only the
texts, the form's tokens and the progress count differing (the count of all of the judge's comparisons from the
first training comparison on). NGRAMEVAL_SHOTS=DIR keeps screenshots."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlalchemy import select

from collect.collect_server import serving
from collect.test_browser import CHROMIUM, _shot, _submit, browser  # noqa: F401 (a fixture)
from collect.test_pairwise import write_pairwise
from ngrameval.collect.models import PairRow, TrialRow
from ngrameval.collect.store import Store
from ngrameval.collect.study import load_study

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]


def _skeleton(html: str, texts: list[str]) -> str:
    """The page with what differs between any two comparisons blanked: the shown texts, the tokens, the count."""
    for t in sorted(texts, key=len, reverse=True):
        html = html.replace(t, "TEXT")
    html = re.sub(r'value="[A-Za-z0-9_\-]{16,}"', 'value="TOKEN"', html)
    html = re.sub(r'nonce="[^"]*"', 'nonce="N"', html)
    return re.sub(r"\d+", "0", html)


def test_controls_look_like_any_comparison(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    chromium = request.getfixturevalue("browser")
    path = write_pairwise(
        tmp_path / "sbs", 'question = "Which translation is better?"', "bad_references = 2\nalpha = 0.3"
    )
    path.write_text(path.read_text() + "[training]\nitems = 2\n")
    store = Store(load_study(path))
    store.init()
    pages: dict[str, str] = {}
    totals: set[str] = set()
    with serving(path) as url:
        page = chromium.new_context(viewport={"width": 1100, "height": 800}).new_page()
        page.goto(f"{url}/start?PROLIFIC_PID=P1&STUDY_ID=S&SESSION_ID=X")
        while page.locator("#pair-form").count():
            token = page.locator('input[name="token"]').input_value()
            with store.session() as s:
                t = s.scalar(select(TrialRow).where(TrialRow.lease == token))
                assert t is not None
                p = s.scalar(select(PairRow).where(PairRow.trial_id == t.id))
                assert p is not None
                kind, left, texts = t.kind, p.left, [t.output, p.output_b, t.source]
            totals.add(page.inner_text("main").split("Progress: ")[1].split(" of ")[1].split()[0])
            if kind not in pages:
                pages[kind] = _skeleton(page.inner_html("main"), texts)
                _shot(page, f"pairwise-{kind}")
            # the original (side a) of a control, else A
            page.get_by_text("A is better" if left == "a" or kind == "normal" else "B is better").click()
            _submit(page)
        page.context.close()
    assert set(pages) == {"training", "normal", "bad"}
    assert pages["training"] == pages["normal"] == pages["bad"]
    assert totals == {"10"}  # 2 training, 6 comparisons, 2 bad references: one count from the first page on
    a = next(a for a, _ in store.annotators())
    assert a.trained == "passed"
    assert {t.kind for t, _, _ in store.preferences()} == {"training", "normal", "bad"}
