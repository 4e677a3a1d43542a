"""A study that stops giving out work (``[stopping]``): once the budget is spent, clients racing for the last
trials never overspend (SQLite and PostgreSQL), trials on screen are still answered and paid, newcomers and
judges asking for more get the "finished" page, and ``collect status`` says why; with ``when = "settled"`` it
stops at the first look at which every adjacent pair is settled, recorded once however many race to it."""

from __future__ import annotations

import csv
import io
import json
import threading
from pathlib import Path

import pytest
from sqlalchemy import func, select

from collect.settle_studies import clear_score, judge, open_store, write_settle_study
from collect.test_app import TestClient, _field
from ngrameval.cli import main
from ngrameval.collect import stopping
from ngrameval.collect.app import create_app
from ngrameval.collect.datasheet import datasheet
from ngrameval.collect.export import ledger_csv
from ngrameval.collect.models import Meta, TrialRow
from ngrameval.collect.settle import answers_of, settle
from ngrameval.collect.store import Store
from ngrameval.collect.study import load_study


def _shown(store: Store) -> tuple[int, float]:
    with store.session() as s:
        return stopping.committed(s, store.study)


def _rate_until_done(client: TestClient, first: str) -> tuple[int, str]:
    """Answer every trial the app gives (each form sent twice, as a double click); (answers, the last page)."""
    page, n = first, 0
    while 'name="trial"' in page:
        data = {f: _field(page, f) for f in ("csrf", "token", "trial")}
        r = client.post("/task", data={**data, "c_fluency": "4"})
        assert r.status_code == 200
        client.post("/task", data={**data, "c_fluency": "4"})  # stored once
        page, n = r.text, n + 1
    return n, page


def test_no_trial_past_max_answers(tmp_path: Path) -> None:
    """The gate alone (the fast tier): a judge is given trials up to ``max_answers``, then none, though the
    Latin-square row has more; the trial already shown is given again."""
    store = open_store(write_settle_study(tmp_path, "max_answers = 2"))
    token, late = store.add_invites(2)
    aid = store.use_invite(token)
    assert aid is not None
    store.assign_trials(aid)
    first = store.next_trial(aid)
    assert first is not None and first.lease is not None
    again = store.next_trial(aid)
    assert again is not None and again.lease == first.lease  # on screen: the same trial, not new work
    assert store.submit_rating(aid, first.lease, {"fluency": 3.0}).outcome == "stored"
    second = store.next_trial(aid)
    assert second is not None and second.lease is not None
    assert store.submit_rating(aid, second.lease, {"fluency": 3.0}).outcome == "stored"
    assert store.next_trial(aid) is None and store.counts()["trials"] == 6
    assert stopping.finished(store).startswith("the answer budget is spent (2 of max_answers = 2")
    other = store.use_invite(late)  # a judge who asks for work after the stop is given no rows
    assert other is not None
    store.assign_trials(other)
    assert store.counts()["trials"] == 6 and store.next_trial(other) is None
    rules = datasheet(store)["design"]["stopping"]  # the datasheet records the rule and why it stopped
    assert (rules["max_answers"], rules["stopped"], rules["reason"], rules["shown"]) == (2, True, "max_answers", 2)
    assert rules["when"] == "never" and rules["criterion"] == "fluency" and "Howard" in rules["method"]


@pytest.mark.slow
def test_racing_clients_do_not_overspend_the_budget(tmp_path: Path, db_url: str) -> None:
    """12 judges (two of them qualified: 0.25 a trial, the rest 0.10) race for trials under a budget of 2.00 that
    pays for about a quarter of what they would do. Every trial shown is answered and paid; what is paid stays
    within the budget and leaves less than the dearest trial unspent; then everybody is told it has finished."""
    store = open_store(write_settle_study(tmp_path, "budget = 2.0"), db_url)
    clients = []
    for k in range(12):
        c = TestClient(create_app(store), follow_redirects=True)
        (token,) = store.add_invites(1)
        assert c.get(f"/start?invite={token}", follow_redirects=False).status_code == 303  # arrived, no trial yet
        if k < 2:
            store.set_status(max(a.id for a, _ in store.annotators()), "qualified")  # their trials: tier 2
        clients.append(c)
    # the two qualified judges answer one trial each before the race, so both rates are spent whatever the order
    before = []
    for c in clients[:2]:
        page = c.get("/task").text
        data = {f: _field(page, f) for f in ("csrf", "token", "trial")}
        assert c.post("/task", data={**data, "c_fluency": "4"}).status_code == 200
        before.append(1)
    before += [0] * (len(clients) - 2)
    barrier = threading.Barrier(len(clients))
    results: list[tuple[int, int, str]] = []  # (client, answers, last page)
    errors: list[BaseException] = []

    def rate(k: int, c: TestClient) -> None:
        try:
            barrier.wait()
            n, page = _rate_until_done(c, c.get("/task").text)
            results.append((k, before[k] + n, page))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=rate, args=(k, c)) for k, c in enumerate(clients)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    n, spent = _shown(store)
    paid = sum(float(r["amount"]) for r in csv.DictReader(io.StringIO(ledger_csv(store))))
    assert sum(a for _, a, _ in results) == n == store.counts()["trials_answered"]  # every trial shown, answered once
    assert paid == pytest.approx(spent) and spent <= 2.0 + 1e-9
    assert 2.0 - spent < 0.25  # spent up to the last trial the budget allowed
    assert n < 12 * 6  # the budget stopped work that was left
    with store.session() as s:
        tiers = set(s.scalars(select(TrialRow.tier).where(TrialRow.lease.is_not(None))))
        rows = set(s.scalars(select(func.count()).select_from(TrialRow).group_by(TrialRow.annotator_id)))
    assert tiers == {1, 2}  # both rates were spent
    # however the threads were scheduled, a judge stops on the "finished" page unless they did their whole row; a
    # qualified judge may be refused their dearer trial while cheaper ones still fit: told there is nothing more
    (row,) = rows
    for k, answers, page in results:
        assert 'id="study-finished"' in page or answers == row or (k < 2 and "nothing more for you" in page)
    assert any('id="study-finished"' in page for _, _, page in results)
    state = stopping.finished(store)
    assert state.startswith("the budget is spent (") and "of 2.00 EUR committed" in state
    newcomer = TestClient(create_app(store), follow_redirects=True)
    r = newcomer.get("/start?PROLIFIC_PID=NEW&STUDY_ID=S&SESSION_ID=X")
    assert "This study has finished" in r.text and 'name="trial"' not in r.text
    assert len(store.annotators()) == 12  # the newcomer was not recorded


@pytest.mark.slow
def test_a_trial_on_screen_is_still_accepted_and_status_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_settle_study(tmp_path, "max_answers = 7")
    store = open_store(path)
    early = TestClient(create_app(store), follow_redirects=True)
    (token,) = store.add_invites(1)
    shown = early.get(f"/start?invite={token}").text  # a trial on this judge's screen
    assert 'name="trial"' in shown
    assert judge(store, "other") == 6  # another judge takes 6: 7 given out, the budget is spent
    assert _shown(store)[0] == 7
    n, page = _rate_until_done(early, shown)  # the trial on screen is answered and stored; then nothing more
    assert n == 1 and 'id="study-finished"' in page and "You gave 1 answer(s)" in page
    assert store.counts()["trials_answered"] == 7
    assert main(["collect", "status", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "stopped: the answer budget is spent (7 of max_answers = 7 trials given out)"
    assert main(["collect", "status", str(path), "-f", "json"]) == 0
    got = json.loads(capsys.readouterr().out)["stopping"]
    assert got == {"stopped": True, "reason": "max_answers", "detail": got["detail"], "shown": 7, "spent": 0.7}
    # more budget in STUDY.toml: the study gives out work again
    path.write_text(path.read_text().replace("max_answers = 7", "max_answers = 9"))
    again = Store(load_study(path))
    assert stopping.finished(again) == "" and judge(again, "late") == 2


@pytest.mark.slow
def test_settled_study_stops_at_the_first_settled_look(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Judges rate good 5, bad 3, the last 1, one after another; the study stops giving out trials at the first
    trial it would show after the answer that settled every adjacent pair, and says so."""
    path = write_settle_study(tmp_path, 'when = "settled"\nplanned = 40', n_items=30)
    store = open_store(path)

    judges = 0
    while judge(store, f"j{judges}", clear_score):
        judges += 1
        assert judges < 100
    answers = answers_of(store.ratings())  # in the order given: judge by judge, trial by trial
    assert settle(store.study, answers).all_settled
    assert not settle(store.study, answers[:-1]).all_settled  # one answer earlier it was not: no trial was wasted
    with store.session() as s:
        row = s.get(Meta, stopping.SETTLED)
    assert row is not None and row.value == f"after {len(answers)} answers on fluency"
    assert main(["collect", "status", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    why = f"every adjacent pair of the ranking is settled (after {len(answers)} answers on fluency)"
    assert out[-1] == f"stopped: {why}"
    assert "2 of 2 adjacent pairs settled (all)" in out[-2]


@pytest.mark.slow
def test_settling_is_recorded_once_by_racing_clients(tmp_path: Path, db_url: str) -> None:
    """The answers settle the ranking while nobody watches (``when = "never"``); then the study is served with
    ``when = "settled"`` and 10 judges with trials not yet shown ask at once: none is given one, the
    settlement is recorded once, no request fails."""
    path = write_settle_study(tmp_path, "planned = 20", n_items=30)
    store = open_store(path, db_url)
    for k in range(6):
        judge(store, f"j{k}", clear_score)  # 60 answers a system, 5 / 3 / 1: settled
    assert settle(store.study, answers_of(store.ratings())).all_settled
    path.write_text(path.read_text().replace("planned = 20", 'planned = 20\nwhen = "settled"'))
    watched = Store(load_study(path), db_url)
    _, before = stopping.overview(watched)  # not recorded yet, but the next request for work will stop: says so
    assert before is not None and before.stopped and before.reason == "settled"
    with watched.session() as s:
        assert s.get(Meta, stopping.SETTLED) is None
    ids = []
    for _ in range(10):
        (token,) = watched.add_invites(1)
        aid = watched.use_invite(token)
        assert aid is not None
        watched.assign_trials(aid)
        ids.append(aid)
    barrier = threading.Barrier(len(ids))
    got: list[object] = []

    def ask(aid: int) -> None:
        barrier.wait()
        got.append(watched.next_trial(aid))

    threads = [threading.Thread(target=ask, args=(aid,)) for aid in ids]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert got == [None] * 10
    with watched.session() as s:
        assert s.get(Meta, stopping.SETTLED) is not None
    assert stopping.finished(watched).startswith("every adjacent pair of the ranking is settled")
