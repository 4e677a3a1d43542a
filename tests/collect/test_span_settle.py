"""The running ranking of ESA and MQM studies: ESA ranks its 0-100 scores, MQM its segment scores with each
penalty capped at 25 for the ranking (the exports keep them uncapped); `[stopping]` applies to both."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from collect.settle_studies import judge_every_trial
from collect.span_studies import write_span_study
from ngrameval.collect.settle import MQM_CAP, read_settlement
from ngrameval.collect.spans import submit_marks
from ngrameval.collect.store import Store
from ngrameval.collect.study import load_study


def _answer_all(store: Store, marks_of: dict[str, list[dict[str, object]]], esa: dict[str, float]) -> None:
    """One judge answering every trial with the marks (and ESA score) of its system."""

    def answer(aid: int, lease: str, system: str) -> None:
        scores = {"esa": esa[system]} if store.study.kind == "esa" else {}
        assert submit_marks(store, aid, lease, json.dumps(marks_of[system]), scores).outcome == "stored"

    judge_every_trial(store, answer)


def _major(n: int, kind: str) -> list[dict[str, object]]:
    """``n`` omissions of major severity (MQM: 5 points each)."""
    if kind == "esa":
        return [{"missing": True, "severity": "major"}] * n
    return [{"missing": True, "severity": "Major", "category": "Accuracy/Omission"}] * n


@pytest.mark.parametrize("kind", ["esa", "mqm"])
def test_span_studies_rank_their_scores(tmp_path: Path, db_url: str, kind: str) -> None:
    store = Store(load_study(write_span_study(tmp_path, kind, '[stopping]\nwhen = "settled"\n')), db_url)
    store.init()
    marks = {"A": [], "B": _major(1, kind), "C": _major(7, kind)}  # MQM C: 35 points of penalty, ranked as 25
    for _ in range(3):
        _answer_all(store, marks, {"A": 90.0, "B": 60.0, "C": 10.0})
    with store.session() as s:
        got = read_settlement(s, store.study)
    by = {r.system: r for r in got.standings}
    assert [r.system for r in got.standings] == ["A", "B", "C"] and got.criterion == kind
    if kind == "mqm":
        assert (by["A"].mean, by["B"].mean, by["C"].mean) == (0.0, -5.0, -MQM_CAP)  # the cap, for ranking only
        exported = [r.score for t, r, _ in store.ratings() if t.system == "C" and r.criterion == "mqm"]
        assert exported and set(exported) == {-35.0}
        assert all(r.low >= -MQM_CAP and r.high <= 0 for r in got.standings)  # type: ignore[operator]
    else:
        assert (by["A"].mean, by["B"].mean, by["C"].mean) == (90.0, 60.0, 10.0)
        assert all(r.low >= 0 and r.high <= 100 for r in got.standings)  # type: ignore[operator]
