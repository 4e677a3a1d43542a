"""``[stopping] budget`` and ``max_answers`` under racing clients, for side-by-side, ESA and MQM studies (the rate
study's race is in test_stopping.py): 8 judges, two of them qualified (a dearer tier), answer through the app at
once until the study stops them. Whatever the scheduling, on SQLite and PostgreSQL: no trial is given out past the
rule (the budget is not overspent, no more trials than ``max_answers``), every trial given out is answered and
paid once, the rule stopped work that was left, and a newcomer is turned away.

Only what holds under any interleaving is asserted: a judge who is refused a trial saw the cost of the trials
shown until then plus theirs pass the rule, so at the end the budget has less than the dearest trial left, and
``max_answers`` is reached exactly (the judges' rows hold more work than it)."""

from __future__ import annotations

import csv
import io
from functools import partial
from pathlib import Path

import pytest
from sqlalchemy import func, select

from collect.races import at_once
from collect.settle_studies import open_store
from collect.span_studies import write_span_study
from collect.test_app import TestClient, _field
from collect.test_pairwise import write_pairwise
from ngrameval.collect import stopping
from ngrameval.collect.app import create_app
from ngrameval.collect.export import ledger_csv
from ngrameval.collect.models import TrialRow
from ngrameval.collect.store import Store

JUDGES = 8
TIERS = '[tiers]\ntier1_rate = 0.1\ntier2_rate = 0.25\ncurrency = "EUR"\n'
RULES = {"budget": "budget = 1.6", "max_answers": "max_answers = 11"}


def write_kind(root: Path, kind: str, rule: str) -> Path:
    """A ``kind`` study (pairwise, esa, mqm) paying 0.10 / 0.25 a trial, with the ``[stopping]`` line ``rule``."""
    extra = f"{TIERS}[stopping]\n{rule}\n"
    if kind == "pairwise":
        path = write_pairwise(root, n_items=6)
        path.write_text(path.read_text() + extra)
        return path
    return write_span_study(root, kind, extra, n_items=6)


def answer(kind: str, page: str) -> dict[str, str]:
    """The form that answers the task on ``page`` (a side-by-side choice; no error marks, ESA's score 70)."""
    form = {"csrf": _field(page, "csrf"), "token": _field(page, "token")}
    if kind == "pairwise":
        return {**form, "choice": "left"}
    return {**form, "spans": "[]", **({"c_esa": "70"} if kind == "esa" else {})}


def work(kind: str, client: TestClient) -> tuple[int, str]:
    """Answer every task the app gives (each form posted twice, as a double click); (answers, the last page)."""
    page, n = client.get("/task").text, 0
    while 'name="token"' in page:
        form = answer(kind, page)
        r = client.post("/task", data=form)
        assert r.status_code == 200, r.text[:300]
        assert client.post("/task", data=form).status_code == 200  # a repeat: stored once
        page, n = r.text, n + 1
    return n, page


def race(store: Store, kind: str) -> list[tuple[int, str]]:
    """``JUDGES`` judges, the first two qualified (tier 2) and having answered one trial each before the race
    (so both rates are spent whatever the order), racing through the app; each one's (answers, last page)."""
    clients = []
    for k in range(JUDGES):
        c = TestClient(create_app(store), follow_redirects=True)
        (token,) = store.add_invites(1)
        assert c.get(f"/start?invite={token}", follow_redirects=False).status_code == 303
        if k < 2:
            store.set_status(max(a.id for a, _ in store.annotators()), "qualified")
            page = c.get("/task").text
            assert c.post("/task", data=answer(kind, page)).status_code == 200
        clients.append(c)
    raced = at_once([partial(work, kind, c) for c in clients])
    return [(n + (k < 2), page) for k, (n, page) in enumerate(raced)]  # the first two answered one before


@pytest.mark.slow
@pytest.mark.parametrize("rule", sorted(RULES))
@pytest.mark.parametrize("kind", ["pairwise", "esa", "mqm"])
def test_racing_clients_stop_at_the_rule(tmp_path: Path, db_url: str, kind: str, rule: str) -> None:
    store = open_store(write_kind(tmp_path, kind, RULES[rule]), db_url)
    results = race(store, kind)
    with store.session() as s:
        shown, spent = stopping.committed(s, store.study)
        rows = list(s.scalars(select(func.count()).select_from(TrialRow).group_by(TrialRow.annotator_id)))
        tiers = set(s.scalars(select(TrialRow.tier).where(TrialRow.lease.is_not(None))))
        on_screen = s.scalar(select(func.count()).where(TrialRow.lease.is_not(None), TrialRow.token.is_(None)))
    assert len(results) == JUDGES and tiers == {1, 2}
    # every trial given out was answered, once, and is paid as the ledger says
    answered = sum(n for n, _ in results)
    assert on_screen == 0 and answered == shown == store.counts()["trials_answered"]
    paid = sum(float(r["amount"]) for r in csv.DictReader(io.StringIO(ledger_csv(store))))
    assert paid == pytest.approx(spent)
    if rule == "budget":
        assert spent <= 1.6 + 1e-9 and 1.6 - spent < 0.25  # within it, and less than the dearest trial left
    else:
        assert shown == 11
    assert shown < sum(rows)  # the rule stopped work that was left
    # a judge ends on the "finished" page unless they did their whole row; but a qualified judge may be refused
    # their dearer trial while cheaper ones still fit the budget: told there is nothing more for them
    for k, (n, page) in enumerate(results):
        assert 'id="study-finished"' in page or n == max(rows) or (k < 2 and "nothing more for you" in page)
    assert any('id="study-finished"' in page for _, page in results)
    assert stopping.finished(store)
    newcomer = TestClient(create_app(store), follow_redirects=True)
    r = newcomer.get("/start?PROLIFIC_PID=NEW&STUDY_ID=S&SESSION_ID=X")
    assert "This study has finished" in r.text and 'name="token"' not in r.text
    assert len(store.annotators()) == JUDGES
