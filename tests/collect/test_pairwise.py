"""Side-by-side (pairwise) studies: the balanced pair schedule (pure functions), the study file, and the task as
a crowd uses it on SQLite and PostgreSQL — sides recorded, answers mapped to the right system, forged, repeated,
out-of-range and concurrent submissions, the repeat controls."""

from __future__ import annotations

import threading
from collections import Counter
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import func, select

from collect.collect_studies import items_csv
from collect.test_app import TestClient, _field
from collect.test_store import Clock
from ngrameval.collect.app import create_app
from ngrameval.collect.models import PairRow, TrialRow
from ngrameval.collect.pairwise import pair_schedule, system_pairs, winner_of
from ngrameval.collect.store import Store
from ngrameval.collect.study import StudyError, load_study

PAIRWISE = """
[study]
name = "sbs"
kind = "pairwise"
title = "Which is better?"
completion_code = "SBS-OK"
manifest = "items.csv"
source_label = "Source"
[rating]
seed = 5
{rating}
[pairwise]
{pairwise}
"""


def write_pairwise(root: Path, pairwise: str = "", rating: str = "", n_items: int = 6) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "items.csv").write_text(items_csv(n_items))
    (root / "study.toml").write_text(PAIRWISE.format(pairwise=pairwise, rating=rating))
    return root / "study.toml"


def _store(tmp_path: Path, url: str | None = None, pairwise: str = "", rating: str = "") -> Store:
    store = Store(load_study(write_pairwise(tmp_path / "sbs", pairwise, rating)), url)
    store.init()
    return store


# ------------------------------------------------------------------------------------------ the schedule


@pytest.mark.parametrize(("n_items", "n_systems"), [(6, 3), (12, 4), (7, 3), (5, 4), (10, 5)])
def test_every_judge_sees_every_pair_equally_often(n_items: int, n_systems: int) -> None:
    items = [f"i{k}" for k in range(n_items)]
    systems = [f"s{k}" for k in range(n_systems)]
    pairs = system_pairs(systems)
    assert pairs == list(combinations(systems, 2))
    n_pairs = len(pairs)
    judges = [pair_schedule(items, systems, j, np.random.default_rng(j)) for j in range(2 * n_pairs)]
    for trials in judges:
        assert sorted(t.item for t in trials) == sorted(items)  # every item once
        per_pair = Counter((t.system_a, t.system_b) for t in trials)
        counts = [per_pair[p] for p in pairs]
        assert max(counts) - min(counts) <= 1  # as equal as the counts allow ...
        if n_items % n_pairs == 0:
            assert set(counts) == {n_items // n_pairs}  # ... and equal when P divides the items
        for p in pairs:  # sides balanced within each pair
            sides = Counter(t.left for t in trials if (t.system_a, t.system_b) == p)
            assert abs(sides["a"] - sides["b"]) <= 1
    # P consecutive judges see every pair of every item exactly once: each item's pairs are spread over judges
    for start in (0, n_pairs):
        seen = Counter((t.item, t.system_a, t.system_b) for trials in judges[start : start + n_pairs] for t in trials)
        assert set(seen) == {(i, *p) for i in items for p in pairs} and set(seen.values()) == {1}


def test_more_trials_than_items_go_round_again() -> None:
    items, systems = ["x", "y", "z"], ["A", "B", "C"]
    trials = pair_schedule(items, systems, 0, np.random.default_rng(1), trials=9)
    assert Counter(t.item for t in trials) == {"x": 3, "y": 3, "z": 3}
    assert set(Counter((t.item, t.system_a, t.system_b) for t in trials).values()) == {1}  # never the same twice
    for n_items, n_systems, n in ((4, 4, 30), (6, 3, 20), (5, 5, 23)):  # more trials: pairs still balanced
        names = [f"s{k}" for k in range(n_systems)]
        for judge in range(3):
            trials = pair_schedule([f"i{k}" for k in range(n_items)], names, judge, np.random.default_rng(judge), n)
            counts = Counter((t.system_a, t.system_b) for t in trials)
            assert len(trials) == n and max(counts.values()) - min(counts[p] for p in system_pairs(names)) <= 1
            block = np.lcm(n_items, len(system_pairs(names)))
            assert max(Counter((t.item, t.system_a, t.system_b) for t in trials).values()) <= -(-n // block)
    with pytest.raises(ValueError, match="two systems"):
        pair_schedule(items, ["A"], 0, np.random.default_rng(1))


def test_the_schedule_is_reproducible_and_random_in_order() -> None:
    items, systems = [f"i{k}" for k in range(12)], ["A", "B", "C"]
    one = pair_schedule(items, systems, 2, np.random.default_rng(7))
    assert one == pair_schedule(items, systems, 2, np.random.default_rng(7))
    assert [t.item for t in one] != sorted((t.item for t in one), key=lambda x: int(x[1:]))


def test_winner_in_system_terms() -> None:
    assert [winner_of(c, "a") for c in ("left", "right", "tie")] == ["a", "b", "tie"]
    assert [winner_of(c, "b") for c in ("left", "right", "tie")] == ["b", "a", "tie"]


# ------------------------------------------------------------------------------------------ the study file


@pytest.mark.parametrize(
    ("pairwise", "extra", "words"),
    [
        ('ties = "yes"', "", "key 'ties' must be bool"),
        ('reason = "maybe"', "", "key 'reason' must be one of off, optional, required"),
        ("reason_length = 0", "", "reason_length"),
        ("trials = -1", "", "key 'trials'"),
        ("colour = 1", "", "unknown key(s) colour"),
        ("", '[[criteria]]\nname = "x"\n', "no [[criteria]]"),
    ],
)
def test_bad_pairwise_settings_name_the_key(tmp_path: Path, pairwise: str, extra: str, words: str) -> None:
    path = write_pairwise(tmp_path, pairwise)
    path.write_text(path.read_text() + extra)
    with pytest.raises(StudyError, match=words.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        load_study(path)


def test_a_pairwise_study_needs_two_systems_and_no_known_answers(tmp_path: Path) -> None:
    path = write_pairwise(tmp_path)
    (tmp_path / "items.csv").write_text("item,system,output\n1,A,x\n2,A,y\n")
    with pytest.raises(StudyError, match="at least two"):
        load_study(path)
    (tmp_path / "items.csv").write_text("item,system,output,expected\n1,A,x,1\n1,B,y,\n")
    with pytest.raises(StudyError, match="'expected'"):
        load_study(path)
    rate = write_pairwise(tmp_path / "da", "ties = false", "bad_references = 0")
    rate.write_text(rate.read_text().replace('kind = "pairwise"', 'kind = "da"'))
    with pytest.raises(StudyError, match=r"\[pairwise\] is for kind = 'pairwise'"):
        load_study(rate)


# ------------------------------------------------------------------------------------------ the task


def _client(store: Store) -> TestClient:
    return TestClient(create_app(store), follow_redirects=True)


def _arrive(store: Store, who: str = "P1") -> tuple[TestClient, str]:
    c = _client(store)
    return c, c.get(f"/start?PROLIFIC_PID={who}&STUDY_ID=S&SESSION_ID={who}").text


def _answer(c: TestClient, page: str, choice: str, reason: str = "") -> tuple[int, str]:
    form = {"csrf": _field(page, "csrf"), "token": _field(page, "token"), "choice": choice, "reason": reason}
    r = c.post("/task", data=form)
    return r.status_code, r.text


def _pair_of_page(store: Store, page: str) -> tuple[TrialRow, PairRow]:
    with store.session() as s:
        t = s.scalar(select(TrialRow).where(TrialRow.lease == _field(page, "token")))
        assert t is not None
        p = s.scalar(select(PairRow).where(PairRow.trial_id == t.id))
        assert p is not None
        return t, p


def test_the_page_shows_the_sides_drawn_and_stores_the_winner(tmp_path: Path, db_url: str) -> None:
    store = _store(tmp_path, db_url)
    c, page = _arrive(store)
    lefts = Counter()
    answers = ["left", "right", "tie", "left", "right", "tie"]
    for k, choice in enumerate(answers):
        t, p = _pair_of_page(store, page)
        left, right = (t.output, p.output_b) if p.left == "a" else (p.output_b, t.output)
        assert f'id="output-a">{left}<' in page and f'id="output-b">{right}<' in page
        assert f'id="source">{t.source}<' in page and "Source:" in page and f"Progress: {k} of 6" in page
        lefts[p.left] += 1
        code, page = _answer(c, page, choice, f"because {k}")
        assert code == 200
    assert "SBS-OK" in page  # the completion page with its code
    got = store.preferences()
    assert len(got) == 6 and set(lefts) == {"a", "b"}
    for (t, p, _), choice in zip(got, answers, strict=True):
        assert p.winner == winner_of(choice, p.left) and p.reason.startswith("because ") and t.seconds >= 0
        assert t.token is not None and t.answered is not None


def test_forged_repeated_and_out_of_range_answers(tmp_path: Path, db_url: str) -> None:
    store = _store(tmp_path, db_url, "ties = false\nreason_length = 10")
    c, page = _arrive(store)
    assert 'value="tie"' not in page  # no tie offered
    for choice in ("tie", "", "both", "LEFT"):
        assert _answer(c, page, choice)[0] == 400
    code, text = _answer(c, page, "left", "x" * 11)
    assert code == 400 and "longer than 10" in text
    form = {"csrf": _field(page, "csrf"), "token": "made-up-token-1234", "choice": "left"}
    assert c.post("/task", data=form).status_code == 400
    _, other_page = _arrive(store, "P2")  # another judge's token is not yours
    form = {"csrf": _field(page, "csrf"), "token": _field(other_page, "token"), "choice": "left"}
    assert c.post("/task", data=form).status_code == 400
    assert store.preferences() == []
    assert _answer(c, page, "right", "  short  ")[0] == 200
    assert _answer(c, page, "left")[0] == 200  # the same form again (a double click): stored once, as first sent
    ((t, p, _),) = store.preferences()
    assert p.winner == winner_of("right", p.left) and p.reason == "short"
    assert store.submit_preference(t.annotator_id, t.lease or "", "left").outcome == "repeat"


def test_a_required_reason(tmp_path: Path) -> None:
    store = _store(tmp_path, None, 'reason = "required"')
    c, page = _arrive(store)
    code, text = _answer(c, page, "left", "   ")
    assert code == 400 and "why" in text
    assert _answer(c, page, "left", "clearer")[0] == 200


def test_repeats_show_an_earlier_comparison_with_the_sides_swapped(tmp_path: Path) -> None:
    store = _store(tmp_path, None, rating="repeats = 2\nbatch_size = 8")
    aid = store.annotator_for("invite", "j")
    store.assign_trials(aid)
    with store.session() as s:
        rows = {t.position: (t, p) for t, p in s.execute(select(TrialRow, PairRow).join(PairRow)).all()}
    repeats = [(t, p) for t, p in rows.values() if t.kind == "repeat"]
    assert len(repeats) == 2 and len(rows) == 8
    for t, p in repeats:
        o, op = rows[t.of_position]  # type: ignore[index]
        assert (t.item, t.system, p.system_b) == (o.item, o.system, op.system_b) and p.left != op.left
        assert t.position > o.position


def test_a_row_given_up_goes_to_the_next_judge_with_its_pairs(tmp_path: Path, db_url: str) -> None:
    clock = Clock()
    store = Store(load_study(write_pairwise(tmp_path / "sbs")), db_url, clock=clock)
    store.init()
    quitter = store.annotator_for("invite", "quitter")
    store.assign_trials(quitter)
    first = store.next_trial(quitter)  # shown, never answered
    assert first is not None
    clock.advance(store.study.lease_minutes + 1)
    late = store.annotator_for("invite", "late")
    store.assign_trials(late)
    assert store.annotator(late).judge_index == 0  # type: ignore[union-attr]  # the quitter's row
    with store.session() as s:  # the quitter's trials went with their pairs (no pair left without its trial)
        assert s.scalar(select(func.count()).select_from(PairRow)) == 6
        assert s.scalar(select(func.count()).where(TrialRow.annotator_id == quitter)) == 0
    assert store.submit_preference(quitter, first.lease or "", "left").outcome == "foreign"
    t = store.next_trial(late)
    assert t is not None and store.submit_preference(late, t.lease or "", "tie").outcome == "stored"


def _twice(store: Store, aid: int, lease: str) -> list[str]:
    """The outcomes of two submissions of one answer sent at the same moment."""
    twice = threading.Barrier(2)
    got: list[str] = []

    def send() -> None:
        twice.wait()
        got.append(store.submit_preference(aid, lease, "left").outcome)

    both = [threading.Thread(target=send) for _ in range(2)]
    for th in both:
        th.start()
    for th in both:
        th.join()
    return got


@pytest.mark.slow
def test_concurrent_judges_and_double_submissions(tmp_path: Path, db_url: str) -> None:
    """Six judges answer at once, each sending every answer twice at the same moment: every judge gets their own
    row of the design (0..5: two complete rounds of the 3 pairs), and every comparison is stored once."""
    store = _store(tmp_path, db_url)
    judges = [store.annotator_for("invite", f"j{k}") for k in range(6)]
    barrier = threading.Barrier(len(judges))
    outcomes: Counter[str] = Counter()
    lock = threading.Lock()

    def judge(aid: int) -> None:
        barrier.wait()
        store.assign_trials(aid)
        while (t := store.next_trial(aid)) is not None:
            got = _twice(store, aid, t.lease or "")
            with lock:
                outcomes.update(got)

    threads = [threading.Thread(target=judge, args=(aid,)) for aid in judges]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert outcomes == {"stored": 36, "repeat": 36}
    rows = sorted(a.judge_index for a, _ in store.annotators())  # type: ignore[type-var]
    assert rows == list(range(6))
    seen = Counter((t.item, t.system, p.system_b) for t, p, _ in store.preferences())
    assert len(seen) == 18 and set(seen.values()) == {2}  # every pair of every item, twice
    assert store.rows_per_square() == 3 and store.squares() == [("", 6, 6, 2)]  # two complete rounds of judges
