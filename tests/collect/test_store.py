"""The store on SQLite and PostgreSQL: migrations equal the models, descriptions are assigned up to the target
and never twice to one annotator, repeated submissions are stored once, Latin-square trials, deletion."""

from __future__ import annotations

from pathlib import Path

from collect.collect_studies import write_study
from ngrameval.collect.store import Base, Store
from ngrameval.collect.study import load_study


def _store(tmp_path: Path, url: str, kind: str = "describe") -> Store:
    store = Store(load_study(write_study(tmp_path / kind, kind)), url)
    store.init()
    return store


def test_migrations_match_models(tmp_path: Path, db_url: str) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    store = _store(tmp_path, db_url)
    with store.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diff == []
    store.init()  # a second upgrade is a no-op


def test_assignment_target_and_idempotence(tmp_path: Path, db_url: str) -> None:
    store = _store(tmp_path, db_url)
    a, b, c = (store.annotator_for("invite", x) for x in "abc")
    assert store.annotator_for("invite", "a") == a
    seen = []
    while (st := store.next_stimulus(a)) is not None:
        seen.append(st.key)
        assert store.submit_description(a, st.id, f"tok-a-{st.id}", "a cat plays", "English", "", 3.0)
        assert not store.submit_description(a, st.id, f"tok-a-{st.id}", "a cat plays", "English", "", 3.0)
    assert sorted(seen) == ["txt1", "txt2", "vid1_2_5"]  # every stimulus once
    first = store.next_stimulus(b)
    assert first is not None
    store.submit_description(b, first.id, "tok-b-skip", "", "English", "", 1.0, skipped=True)
    while (st := store.next_stimulus(b)) is not None:
        assert st.id != first.id  # a skipped stimulus does not come back
        store.submit_description(b, st.id, f"tok-b-{st.id}", "a dog runs", "English", "", 2.0)
    # target 2: c gets only the stimulus b skipped
    st = store.next_stimulus(c)
    assert st is not None and st.id == first.id
    store.submit_description(c, st.id, "tok-c", "someone", "English", "", 2.0)
    assert store.next_stimulus(c) is None
    counts = store.counts()
    assert counts["descriptions"] == 6 and counts["skips"] == 1
    store.delete_annotator(a)
    assert store.counts()["descriptions"] == 3
    assert store.annotator(a) is None


def test_rating_trials_latin_square(tmp_path: Path, db_url: str) -> None:
    store = _store(tmp_path, db_url, "rate")
    judges = [store.annotator_for("invite", f"j{k}") for k in range(3)]
    seen: dict[tuple[str, str], int] = {}
    for aid in judges:
        store.assign_trials(aid)
        store.assign_trials(aid)  # once only
        mine = []
        while (t := store.next_trial(aid)) is not None:
            assert store.submit_rating(aid, t.id, f"tok-{t.id}", {"fluency": 3, "accuracy": 4}, 1.0)
            assert not store.submit_rating(aid, t.id, f"tok-{t.id}", {"fluency": 3, "accuracy": 4}, 1.0)
            mine.append(t)
        normal = [t for t in mine if t.kind == "normal"]
        assert len(normal) == 6 and len({t.item for t in normal}) == 6
        assert sorted(t.system for t in normal) == ["A", "A", "B", "B", "C", "C"]
        assert sum(t.kind == "repeat" for t in mine) == 1
        for t in normal:
            seen[t.item, t.system] = seen.get((t.item, t.system), 0) + 1
    assert len(seen) == 18 and set(seen.values()) == {1}  # three judges cover the square
    other = judges[0]
    t = store.next_trial(judges[1])
    assert t is None
    # nobody answers another judge's trial
    rows = store.ratings(judges[1])
    assert not store.submit_rating(other, rows[0][0].id, "tok-steal", {"fluency": 1, "accuracy": 1}, 1.0)
