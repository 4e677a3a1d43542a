"""A side-by-side study's running ranking: win rates (a comparison scores 1, 1/2 or 0 for each of its two systems)
read from the stored answers, their always-valid intervals, and ``[stopping] when = "settled"`` stopping it."""

from __future__ import annotations

from pathlib import Path

import pytest

from collect.test_pairwise import _answer, _arrive, _pair_of_page, _store
from ngrameval.collect import stopping
from ngrameval.collect.settle import WIN_RATE, read_settlement, settle_tallies
from ngrameval.collect.study import StudyError

RANK = {"A": 3, "B": 2, "C": 1}  # what the judges below prefer (A best)


def _judge(store: object, who: str, tie: str = "") -> str:
    """A judge who always prefers the better system (a tie whenever ``tie`` is one of the two); the last page."""
    c, page = _arrive(store, who)  # type: ignore[arg-type]
    while 'name="choice"' in page:
        t, p = _pair_of_page(store, page)  # type: ignore[arg-type]
        a, b = t.system, p.system_b
        if tie in (a, b):
            choice = "tie"
        else:
            better_a = RANK[a] > RANK[b]
            choice = "left" if better_a == (p.left == "a") else "right"
        code, page = _answer(c, page, choice)
        assert code == 200
    return page


def test_win_rates_are_counted_from_the_answers(tmp_path: Path, db_url: str) -> None:
    store = _store(tmp_path, db_url)
    _judge(store, "P1")
    _judge(store, "P2", tie="B")
    with store.session() as s:
        got = read_settlement(s, store.study)
    assert got.criterion == WIN_RATE
    by = {r.system: r for r in got.standings}
    prefs = store.preferences()
    for system in RANK:
        rows = [(t.system, p.system_b, p.winner) for t, p, _ in prefs if system in (t.system, p.system_b)]
        wins = sum(1.0 if (w == "a") == (a == system) else 0.0 for a, _, w in rows if w != "tie")
        wins += 0.5 * sum(w == "tie" for *_, w in rows)
        assert by[system].n == len(rows) and by[system].mean == pytest.approx(wins / len(rows))
    assert [r.system for r in got.standings] == ["A", "B", "C"]
    assert all(0.0 <= r.low <= r.mean <= r.high <= 1.0 for r in got.standings)  # type: ignore[operator]


def test_equal_win_rates_are_not_settled_and_clear_ones_are(tmp_path: Path) -> None:
    from ngrameval.collect.study import load_study

    study = load_study(_study_file(tmp_path, 'when = "settled"\nplanned = 50'))
    even = {s: (400, 200.0) for s in RANK}
    assert not settle_tallies(study, even).all_settled
    clear = {"A": (400, 360.0), "B": (400, 200.0), "C": (400, 40.0)}
    assert settle_tallies(study, clear).all_settled


def _study_file(root: Path, stopping_table: str) -> Path:
    from collect.test_pairwise import write_pairwise

    path = write_pairwise(root, n_items=6)
    path.write_text(path.read_text() + f"[stopping]\n{stopping_table}\n")
    return path


def test_stopping_keys_on_a_pairwise_study(tmp_path: Path) -> None:
    from ngrameval.collect.study import load_study

    assert load_study(_study_file(tmp_path / "a", 'when = "settled"')).stopping.when == "settled"
    with pytest.raises(StudyError, match="key 'criterion'"):
        load_study(_study_file(tmp_path / "b", 'when = "settled"\ncriterion = "fluency"'))


def _trial_rows(store: object) -> int:
    from sqlalchemy import func, select

    from ngrameval.collect.models import TrialRow

    with store.session() as s:  # type: ignore[attr-defined]
        return int(s.scalar(select(func.count()).select_from(TrialRow)) or 0)


def test_a_judge_who_asks_for_work_after_the_study_stopped_is_given_no_schedule(tmp_path: Path) -> None:
    """A judge who arrived before the study stopped (here: still on the consent page) and asks for a task after
    ``max_answers`` was reached gets the finished page and no trial rows (nothing leased, paid or counted)."""
    from collect.test_app import _field
    from ngrameval.collect.store import Store
    from ngrameval.collect.study import load_study

    path = _study_file(tmp_path, "max_answers = 2")
    path.write_text(path.read_text() + '[consent]\ntext = "Your answers are kept for research."\n')
    store = Store(load_study(path))
    store.init()
    late, consent = _arrive(store, "LATE")
    first, page = _arrive(store, "P1")
    page = first.post("/consent", data={"csrf": _field(page, "csrf"), "agree": "yes"}).text
    while 'name="choice"' in page:
        page = _answer(first, page, "tie")[1]
    assert stopping.finished(store).startswith("the answer budget is spent (2 of max_answers = 2")
    before = _trial_rows(store)
    page = late.post("/consent", data={"csrf": _field(consent, "csrf"), "agree": "yes"}).text
    assert "This study has finished" in page and 'name="choice"' not in page
    assert _trial_rows(store) == before > 0


@pytest.mark.slow
def test_a_pairwise_study_stops_once_settled(tmp_path: Path) -> None:
    from ngrameval.collect.store import Store
    from ngrameval.collect.study import load_study

    store = Store(load_study(_study_file(tmp_path, 'when = "settled"\nplanned = 20\nalpha = 0.1')))
    store.init()
    last = ""
    for k in range(60):
        last = _judge(store, f"J{k}")
        if stopping.finished(store):
            break
    assert stopping.finished(store).startswith("every adjacent pair of the ranking is settled")
    with store.session() as s:
        got = read_settlement(s, store.study)
    assert got.all_settled and [r.system for r in got.standings] == ["A", "B", "C"]
    before = _trial_rows(store)
    _, page = _arrive(store, "LATE")
    assert "This study has finished" in page and 'name="choice"' not in page
    assert _trial_rows(store) == before  # no schedule for a judge who arrives after it stopped
    assert last  # the judges before it got their pages
