"""What the running ranking says it counted, per study kind: a side-by-side study's N comparisons score each of
their two systems, so the ranking's ``n`` add up to 2N; the admin page's caption, ``collect status`` (text and
JSON) and the stopping record say "N comparisons (2N system judgments)", not "2N answers" (it said so before);
a rating study still says "N answers"."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from sqlalchemy import select

from collect.settle_studies import judge, judge_every_trial, open_store, write_settle_study
from collect.test_app import TestClient
from collect.test_pairwise import write_pairwise
from collect.test_settle_app import _login
from ngrameval.cli import main
from ngrameval.collect import stopping
from ngrameval.collect.app import create_app
from ngrameval.collect.models import Meta, TrialRow
from ngrameval.collect.settle import read_settlement
from ngrameval.collect.store import Store

RANK = {"A": 3, "B": 2, "C": 1}  # the judges below prefer A to B to C


def compare_all(store: Store) -> int:
    """One new judge preferring the better system (:data:`RANK`) of every comparison they are given; how many
    they answered."""
    answered = []

    def answer(aid: int, lease: str, system: str) -> None:
        with store.session() as s:
            trial = s.scalar(select(TrialRow.id).where(TrialRow.lease == lease))
        pair = store.pair_of(trial or 0)
        assert pair is not None
        a_better = RANK[system] > RANK[pair.system_b]
        choice = "left" if a_better == (pair.left == "a") else "right"
        assert store.submit_preference(aid, lease, choice).outcome == "stored"
        answered.append(lease)

    judge_every_trial(store, answer)
    return len(answered)


def _caption(page: str) -> str:
    found = re.search(r'<table id="ranking">\s*<caption>(.*?) on \[', page, re.S)
    assert found, "no ranking caption"
    return found[1]


@pytest.mark.slow
def test_a_side_by_side_ranking_counts_comparisons(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_pairwise(tmp_path, n_items=6)
    store = open_store(path, admin=True)
    compare_all(store)
    compare_all(store)
    with store.session() as s:
        got = read_settlement(s, store.study)
    normal = [t for t, _, _ in store.preferences() if t.kind == "normal"]  # the ranking leaves the repeats out
    n = len(normal)
    assert n > 0 and got.answers == n and got.judgments == 2 * n == sum(r.n for r in got.standings)
    said = f"{n} comparisons ({2 * n} system judgments)"
    assert got.counted() == said
    page = _login(TestClient(create_app(store), follow_redirects=True))
    assert _caption(page) == said
    assert main(["collect", "status", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"win-rate on [0, 1], {said}: " in out and f"{2 * n} answers" not in out
    assert main(["collect", "status", str(path), "-f", "json"]) == 0
    ranking = json.loads(capsys.readouterr().out)["ranking"]
    assert (ranking["answers"], ranking["judgments"]) == (n, 2 * n)


@pytest.mark.slow
def test_a_rating_ranking_counts_answers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_settle_study(tmp_path)
    store = open_store(path, admin=True)
    assert judge(store, "j0") == 6
    page = _login(TestClient(create_app(store), follow_redirects=True))
    assert _caption(page) == "6 answers"
    assert main(["collect", "status", str(path), "-f", "json"]) == 0
    ranking = json.loads(capsys.readouterr().out)["ranking"]
    assert (ranking["answers"], ranking["judgments"]) == (6, 6)


@pytest.mark.slow
def test_the_stopping_record_of_a_side_by_side_study_counts_comparisons(tmp_path: Path) -> None:
    """The record of a settled side-by-side study names its comparisons (a generous alpha settles it soon)."""
    path = write_pairwise(tmp_path, n_items=6)
    path.write_text(path.read_text() + '[stopping]\nwhen = "settled"\nplanned = 10\nalpha = 0.5\n')
    store = open_store(path)
    for _ in range(40):
        if not compare_all(store):
            break
    with store.session() as s:
        row = s.get(Meta, stopping.SETTLED)
        got = read_settlement(s, store.study)
    assert row is not None and got.all_settled
    assert re.fullmatch(r"after (\d+) comparisons \((\d+) system judgments\) on win-rate", row.value)
    k, judged = map(int, re.findall(r"\d+", row.value))
    assert judged == 2 * k and k <= got.answers
