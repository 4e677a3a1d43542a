"""One judge, many requests at once (two tabs, a double click, a retrying proxy): every request that shows a
trial shows the same trial under the same form token, so exactly one form token is valid per shown trial; the
forms posted at once store one answer; a forged, repeated or stale form is refused cleanly (SQLite and
PostgreSQL). Before the trial's row was locked, PostgreSQL let the second request overwrite the first one's
token, and the first page's answer was refused as "not given to you"."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest
from sqlalchemy import func, select

from collect.races import at_once
from collect.settle_studies import open_store, write_settle_study
from collect.span_studies import write_span_study
from collect.test_app import TestClient, _field
from collect.test_pairwise import write_pairwise
from ngrameval.collect.app import create_app
from ngrameval.collect.models import RatingRow, TrialRow
from ngrameval.collect.repo import Submitted
from ngrameval.collect.spans import submit_marks
from ngrameval.collect.store import Store

TABS = 6  # requests of one judge at once


def tabs(store: Store, n: int) -> list[TestClient]:
    """``n`` browsers (tabs) of one invited judge: one session cookie, copied."""
    first = TestClient(create_app(store), follow_redirects=True)
    (token,) = store.add_invites(1)
    assert first.get(f"/start?invite={token}", follow_redirects=False).status_code == 303
    out = [first]
    for _ in range(n - 1):
        c = TestClient(create_app(store), follow_redirects=True)
        for name, value in first.cookies.items():
            c.cookies.set(name, value)
        out.append(c)
    return out


def _answered(store: Store) -> tuple[int, int]:
    """(trials answered, rating rows stored)."""
    with store.session() as s:
        trials = s.scalar(select(func.count()).where(TrialRow.token.is_not(None)))
        ratings = s.scalar(select(func.count()).select_from(RatingRow))
    return int(trials or 0), int(ratings or 0)


@pytest.mark.slow
def test_requests_of_one_judge_at_once_share_one_token(tmp_path: Path, db_url: str) -> None:
    """The store alone, the requests released together by a barrier (which is what reproduced the overwrite on
    PostgreSQL nearly every round): for each of the judge's 12 trials, every request gets the same trial and the
    token stored for it; the answers sent at once under that token store one (the rest are repeats)."""
    store = open_store(write_settle_study(tmp_path, n_items=12), db_url)
    (token,) = store.add_invites(1)
    aid = store.use_invite(token)
    assert aid is not None
    store.assign_trials(aid)
    for k in range(12):
        shown = at_once([partial(store.next_trial, aid) for _ in range(TABS)])
        assert len(shown) == TABS and len({t.id for t in shown}) == 1
        leases = {t.lease for t in shown}
        with store.session() as s:
            stored = s.scalar(select(TrialRow.lease).where(TrialRow.id == shown[0].id))
        assert leases == {stored} and stored is not None  # one form token, the one the database holds
        got = at_once([partial(store.submit_rating, aid, stored, {"fluency": 4.0}) for _ in range(TABS)])
        assert sorted(r.outcome for r in got) == ["repeat"] * (TABS - 1) + ["stored"]
        assert _answered(store) == (k + 1, k + 1)
    assert store.next_trial(aid) is None


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["pairwise", "mqm"])
def test_side_by_side_and_span_trials_too(tmp_path: Path, db_url: str, kind: str) -> None:
    """The same race on a side-by-side and an MQM study (their answers are stored by other functions)."""
    if kind == "pairwise":
        store = open_store(write_pairwise(tmp_path, n_items=6), db_url)
        send: Callable[[int, str], Submitted] = lambda aid, lease: store.submit_preference(aid, lease, "left")  # noqa: E731
    else:
        store = open_store(write_span_study(tmp_path, "mqm", n_items=6), db_url)
        send = lambda aid, lease: submit_marks(store, aid, lease, "[]", {})  # noqa: E731
    (token,) = store.add_invites(1)
    aid = store.use_invite(token)
    assert aid is not None
    store.assign_trials(aid)
    rounds = 0
    while True:
        shown = at_once([partial(store.next_trial, aid) for _ in range(TABS)])
        if shown[0] is None:
            break
        assert len({t.id if t else None for t in shown}) == 1 and len({t.lease if t else None for t in shown}) == 1
        lease = shown[0].lease
        assert lease is not None
        got = at_once([partial(send, aid, lease) for _ in range(TABS)])
        assert sorted(r.outcome for r in got) == ["repeat"] * (TABS - 1) + ["stored"]
        rounds += 1
        assert _answered(store)[0] == rounds
    assert rounds >= 6  # a whole row: one trial per item at least


@pytest.mark.slow
def test_one_judge_in_many_tabs_gets_one_token_per_trial(tmp_path: Path, db_url: str) -> None:
    """Round after round, the judge's tabs ask for the task at once: each round every tab shows the same trial
    with the same form token; then every tab posts its form at once: one answer is stored, no tab sees an
    error. After the last round the stale forms of the first round and a forged token are refused cleanly."""
    store = open_store(write_settle_study(tmp_path), db_url)
    clients = tabs(store, TABS)
    rounds, first_forms = 0, None
    while True:
        responses = at_once([partial(c.get, "/task") for c in clients])
        pages = [r.text for r in responses]
        if not all('name="trial"' in p for p in pages):
            assert not any('name="trial"' in p for p in pages)  # all done, or none
            break
        forms = [{f: _field(p, f) for f in ("csrf", "token", "trial")} for p in pages]
        assert len({f["trial"] for f in forms}) == 1  # the same trial in every tab
        assert len({f["token"] for f in forms}) == 1  # under one form token
        with store.session() as s:
            leased = s.scalar(select(TrialRow.lease).where(TrialRow.id == int(forms[0]["trial"])))
        assert leased == forms[0]["token"]  # the token stored is the one every tab shows
        answer = [{**f, "c_fluency": "4"} for f in forms]
        posted = at_once([partial(c.post, "/task", data=f) for c, f in zip(clients, answer, strict=True)])
        assert [r.status_code for r in posted] == [200] * TABS  # stored once, the others told nothing went wrong
        rounds += 1
        assert _answered(store) == (rounds, rounds)
        first_forms = first_forms or forms
    assert rounds == 6  # the judge's whole Latin-square row (6 items of 3 systems: 6 trials)
    assert first_forms is not None
    stale = clients[0].post("/task", data={**first_forms[0], "c_fluency": "1"})
    assert stale.status_code == 200 and _answered(store) == (6, 6)  # answered before: a repeat, nothing stored
    forged = clients[0].post("/task", data={**first_forms[0], "token": "made-up-token-1234", "c_fluency": "1"})
    assert forged.status_code == 400 and "not given to you" in forged.text
    assert _answered(store) == (6, 6)
