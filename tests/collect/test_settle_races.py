"""``[stopping] when = "settled"`` under racing clients, for side-by-side, ESA and MQM studies (SQLite and
PostgreSQL): 4 threads, each bringing one new judge after another who answers every trial the store gives
(clearly: A better than B better than C), until a new judge gets no trial. Whatever the scheduling: the settlement
is recorded once; after it no trial is given out, so the normal trials given out are at most the answers it counted
plus one on screen per thread; every trial given out is answered once; the study says it has finished."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import func, select

from collect.races import at_once
from collect.settle_studies import open_store
from collect.span_studies import write_span_study
from collect.test_pairwise import write_pairwise
from ngrameval.collect import stopping
from ngrameval.collect.models import Meta, TrialRow
from ngrameval.collect.spans import submit_marks
from ngrameval.collect.store import Store

THREADS = 4
RULE = '[stopping]\nwhen = "settled"\nplanned = 10\nalpha = 0.3\n'
RANK = {"A": 3, "B": 2, "C": 1}
MAJOR = {"A": 0, "B": 2, "C": 5}  # MQM: Major errors (5 points each) by system: 0, -10, -25
ESA = {"A": "95", "B": "50", "C": "5"}


def write_kind(root: Path, kind: str) -> Path:
    if kind == "pairwise":
        path = write_pairwise(root, n_items=12)
        path.write_text(path.read_text() + RULE)
        return path
    return write_span_study(root, kind, RULE, n_items=12)


def answerer(store: Store) -> Callable[[int, str, int, str], str]:
    """answer(judge, lease, trial id, system A's name) -> the outcome, by the study's kind."""
    kind = store.study.kind

    def answer(aid: int, lease: str, trial: int, system: str) -> str:
        if kind == "pairwise":
            pair = store.pair_of(trial)
            assert pair is not None
            a_better = RANK[system] > RANK[pair.system_b]
            return store.submit_preference(aid, lease, "left" if a_better == (pair.left == "a") else "right").outcome
        if kind == "esa":
            return submit_marks(store, aid, lease, "[]", {"esa": float(ESA[system])}).outcome
        marks = [{"missing": True, "severity": "Major", "category": "Accuracy/Omission"}] * MAJOR[system]
        return submit_marks(store, aid, lease, json.dumps(marks), {}).outcome

    return answer


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["pairwise", "esa", "mqm"])
def test_racing_judges_stop_once_settled(tmp_path: Path, db_url: str, kind: str) -> None:
    store = open_store(write_kind(tmp_path, kind), db_url)
    answer = answerer(store)

    def crowd() -> int:
        """New judges one after another until one gets no trial (the study stopped); how many came."""
        for judges in range(1, 40):  # a bound, not a goal: the study stops long before
            (token,) = store.add_invites(1)
            aid = store.use_invite(token)
            assert aid is not None
            if not stopping.finished(store):
                store.assign_trials(aid)
            given = 0
            while (t := store.next_trial(aid)) is not None:
                assert t.lease is not None and answer(aid, t.lease, t.id, t.system) == "stored"
                given += 1
            if not given:
                return judges
        return 40

    judges = at_once([crowd] * THREADS)
    with store.session() as s:
        record = s.get(Meta, stopping.SETTLED)
        normal = s.scalar(select(func.count()).where(TrialRow.lease.is_not(None), TrialRow.kind == "normal"))
        on_screen = s.scalar(select(func.count()).where(TrialRow.lease.is_not(None), TrialRow.token.is_(None)))
    assert record is not None and all(n < 40 for n in judges)
    unit = "comparisons" if kind == "pairwise" else "answers"
    found = re.fullmatch(rf"after (\d+) {unit}.* on {'win-rate' if kind == 'pairwise' else kind}", record.value)
    assert found, record.value
    assert on_screen == 0  # every trial given out was answered
    assert int(normal or 0) <= int(found[1]) + THREADS  # nothing given out after the settlement was recorded
    assert stopping.finished(store).startswith("every adjacent pair of the ranking is settled")
