"""The store on SQLite and PostgreSQL: migrations equal the models; leases fill stimuli fewest-first and never past
the target, also with 120 annotators at once; an expired lease is answered only while there is room; repeated and
forged submissions are not stored; Latin-square rows are numbered per judge group, complete whatever the
interleaving of arrivals, and a row given up goes to the next judge; deletion."""

from __future__ import annotations

import datetime as dt
import random
import threading
from collections import Counter
from pathlib import Path

import pytest

from collect.collect_studies import write_study
from ngrameval.collect.models import now
from ngrameval.collect.store import Base, Store
from ngrameval.collect.study import StudyError, load_study


class Clock:
    """The server's time for a test: real time plus an offset that the test moves (thread-safe reads)."""

    def __init__(self) -> None:
        self.offset = dt.timedelta(0)

    def __call__(self) -> dt.datetime:
        return now() + self.offset

    def advance(self, minutes: float) -> None:
        self.offset += dt.timedelta(minutes=minutes)


def _store(
    tmp_path: Path, url: str, kind: str = "describe", clock: Clock | None = None, texts: int = 0, **study: object
) -> Store:
    """A study of ``kind`` (with ``texts`` text stimuli instead of the usual three, and the [study] keys given)."""
    path = write_study(tmp_path / kind, kind)
    if texts:
        rows = ["id,kind,src,start,end,text", *(f"t{i},text,,,,sentence {i}" for i in range(texts))]
        (path.parent / "stimuli.csv").write_text("\n".join(rows) + "\n")
    if study:
        text = "".join(line for line in path.read_text().splitlines(True) if line.split(" =")[0] not in study)
        extra = "".join(f"{k} = {v}\n" for k, v in study.items())
        path.write_text(text.replace("[study]\n", "[study]\n" + extra, 1))
    store = Store(load_study(path), url, clock or Clock())
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
    while (got := store.lease_stimulus(a)) is not None:
        st, lease = got
        assert store.lease_stimulus(a) is not None  # a reload shows the same lease
        assert store.lease_stimulus(a)[1].token == lease.token  # type: ignore[index]
        seen.append(st.key)
        assert store.submit_description(a, lease.token, "a cat plays", "English", "").outcome == "stored"
        assert store.submit_description(a, lease.token, "a cat plays", "English", "").outcome == "repeat"
    assert sorted(seen) == ["txt1", "txt2", "vid1_2_5"]  # every stimulus once
    first = store.lease_stimulus(b)
    assert first is not None
    assert store.submit_description(b, first[1].token, "", "English", "", skipped=True).outcome == "stored"
    while (got := store.lease_stimulus(b)) is not None:
        assert got[0].id != first[0].id  # a skipped stimulus does not come back
        store.submit_description(b, got[1].token, "a dog runs", "English", "")
    # target 2: c gets only the stimulus b skipped
    got = store.lease_stimulus(c)
    assert got is not None and got[0].id == first[0].id
    # nobody answers another annotator's task, nor one that was never given
    assert store.submit_description(a, got[1].token, "stolen", "English", "").outcome == "foreign"
    assert store.submit_description(c, "forged-token-123", "forged", "English", "").outcome == "foreign"
    store.submit_description(c, got[1].token, "someone", "English", "")
    assert store.lease_stimulus(c) is None and not store.waiting(c)
    counts = store.counts()
    assert counts["descriptions"] == 6 and counts["skips"] == 1 and counts["leased"] == 0
    store.delete_annotator(a)
    assert store.counts()["descriptions"] == 3
    assert store.annotator(a) is None
    assert {r.key: r.done for r, _ in store.stimulus_progress()} == {"txt1": 1, "txt2": 1, "vid1_2_5": 1}


def test_leases_fill_fewest_first(tmp_path: Path) -> None:
    """One annotator after another, each describing two stimuli: fills never differ by more than one."""
    store = _store(tmp_path, f"sqlite:///{tmp_path / 's.db'}", target=4)
    fills: Counter[str] = Counter()
    for k in range(6):
        aid = store.annotator_for("invite", f"p{k}")
        for _ in range(2):
            got = store.lease_stimulus(aid)
            assert got is not None
            store.submit_description(aid, got[1].token, "text", "English", "")
            fills[got[0].key] += 1
            assert max(fills.values()) - min(fills[k] for k in ("txt1", "txt2", "vid1_2_5")) <= 1
    assert set(fills.values()) == {4}


def test_expired_lease_answered_only_while_there_is_room(tmp_path: Path, db_url: str) -> None:
    clock = Clock()
    store = _store(tmp_path, db_url, clock=clock, target=1, lease_minutes=10)
    slow, fast = store.annotator_for("invite", "slow"), store.annotator_for("invite", "fast")
    mine = store.lease_stimulus(slow)
    assert mine is not None
    other = store.lease_stimulus(fast)
    assert other is not None and other[0].id != mine[0].id  # held by slow: not given to fast
    store.submit_description(fast, other[1].token, "fast", "English", "")
    clock.advance(11)  # slow's lease expired: its stimulus is free again, and fast gets it
    taken = {other[0].key}
    while (got := store.lease_stimulus(fast)) is not None:
        store.submit_description(fast, got[1].token, "fast", "English", "")
        taken.add(got[0].key)
    assert mine[0].key in taken
    assert store.submit_description(slow, mine[1].token, "slow", "English", "").outcome == "late"  # full
    assert {r.key: r.done for r, _ in store.stimulus_progress()} == dict.fromkeys(taken, 1)
    # with room left, a late answer is stored, and the time spent is the server's
    late = store.annotator_for("invite", "late")
    store.delete_annotator(fast)
    got = store.lease_stimulus(late)
    assert got is not None
    clock.advance(30)
    res = store.submit_description(late, got[1].token, "fine", "English", "")
    assert res.outcome == "stored" and 30 * 60 <= res.seconds < 31 * 60


def _crowd(store: Store, n: int, seed: int, prefix: str, give_up: float = 0.1, skip: float = 0.1) -> Counter[str]:
    """``n`` annotators at once, each in a thread: they lease and describe until nothing is left; some give up
    after a lease (never answering: ``give_up``), some skip (``skip``), some send every form twice. The outcomes,
    counted."""
    outcomes: Counter[str] = Counter()
    lock = threading.Lock()
    barrier = threading.Barrier(n)

    def one(k: int) -> None:
        rng = random.Random(seed * 1000 + k)
        aid = store.annotator_for("prolific", f"{prefix}{k}")
        barrier.wait()
        while (got := store.lease_stimulus(aid)) is not None:
            if rng.random() < give_up:
                with lock:
                    outcomes["abandoned"] += 1
                return  # gives up: the lease expires
            skips = rng.random() < skip
            for _ in range(2 if rng.random() < 0.3 else 1):
                res = store.submit_description(aid, got[1].token, f"{prefix}{k}", "English", "", skipped=skips)
                with lock:
                    outcomes["skip" if skips and res.outcome == "stored" else res.outcome] += 1

    threads = [threading.Thread(target=one, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return outcomes


@pytest.mark.slow
def test_crowd_of_120_never_overshoots_and_fills_everything(tmp_path: Path, db_url: str) -> None:
    clock = Clock()
    store = _store(tmp_path, db_url, clock=clock, texts=60, target=3)
    first = _crowd(store, 120, 1, "a")
    done = {r.key: r.done for r, _ in store.stimulus_progress(limit=1000)}
    assert max(done.values()) <= 3  # never past the target
    stored = [(d.stimulus_id, d.annotator_id) for d, _, _ in store.descriptions()]
    assert len(stored) == len(set(stored)) == first["stored"] == sum(done.values())
    assert first["foreign"] == 0 and first["late"] == 0
    assert first["abandoned"] > 0
    # the abandoned leases expire; a second crowd (who all describe what they are given) fills every stimulus
    # exactly. (A skip frees its stimulus again; an annotator who found nothing free has left by then, so with skips
    # the last free slot waits for a later arrival: CI once saw a stimulus left at 2.)
    clock.advance(store.study.lease_minutes + 1)
    _crowd(store, 120, 2, "b", give_up=0.0, skip=0.0)
    done = {r.key: r.done for r, _ in store.stimulus_progress(limit=1000)}
    assert set(done.values()) == {3}
    assert store.counts()["descriptions"] == 180


def test_rating_trials_latin_square(tmp_path: Path, db_url: str) -> None:
    store = _store(tmp_path, db_url, "rate")
    judges = [store.annotator_for("invite", f"j{k}") for k in range(3)]
    seen: dict[tuple[str, str], int] = {}
    for aid in judges:
        store.assign_trials(aid)
        store.assign_trials(aid)  # once only
        mine = []
        while (t := store.next_trial(aid)) is not None:
            assert t.lease and store.next_trial(aid).lease == t.lease  # type: ignore[union-attr]
            assert store.submit_rating(aid, t.lease, {"fluency": 3, "accuracy": 4}).outcome == "stored"
            assert store.submit_rating(aid, t.lease, {"fluency": 3, "accuracy": 4}).outcome == "repeat"
            mine.append(t)
        normal = [t for t in mine if t.kind == "normal"]
        assert len(normal) == 6 and len({t.item for t in normal}) == 6
        assert sorted(t.system for t in normal) == ["A", "A", "B", "B", "C", "C"]
        assert sum(t.kind == "repeat" for t in mine) == 1
        for t in normal:
            seen[t.item, t.system] = seen.get((t.item, t.system), 0) + 1
    assert len(seen) == 18 and set(seen.values()) == {1}  # three judges cover the square
    assert store.next_trial(judges[1]) is None
    # nobody answers another judge's trial
    rows = store.ratings(judges[1])
    assert store.submit_rating(judges[0], rows[0][0].token or "", {"fluency": 1, "accuracy": 1}).outcome == "foreign"
    fresh = store.annotator_for("invite", "j9")
    store.assign_trials(fresh)
    t = store.next_trial(fresh)
    assert t is not None and t.lease
    assert store.submit_rating(judges[0], t.lease, {"fluency": 1, "accuracy": 1}).outcome == "foreign"


def _coverage(store: Store, group: str) -> Counter[tuple[str, str]]:
    c: Counter[tuple[str, str]] = Counter()
    for t, r, a in store.ratings():
        if a.square == group and t.kind == "normal" and r.criterion == "fluency":
            c[t.item, t.system] += 1
    return c


@pytest.mark.slow
def test_squares_per_group_whatever_the_interleaving(tmp_path: Path, db_url: str) -> None:
    """Twelve experts and twelve lay judges arrive all at once, interleaved: each group's rows are 0..11 (two
    complete 6-row Williams squares of 3 systems) and each group rates every (item, system) pair equally often."""
    store = _store(tmp_path, db_url, "rate")
    judges = [store.annotator_for("invite", f"{g}{k}", group=g) for k in range(12) for g in ("expert", "lay")]
    barrier = threading.Barrier(len(judges))

    def judge(aid: int) -> None:
        barrier.wait()
        store.assign_trials(aid)
        while (t := store.next_trial(aid)) is not None:
            store.submit_rating(aid, t.lease or "", {"fluency": 3, "accuracy": 3})

    threads = [threading.Thread(target=judge, args=(aid,)) for aid in judges]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for group in ("expert", "lay"):
        rows = sorted(a.judge_index for a, _ in store.annotators() if a.square == group)  # type: ignore[type-var]
        assert rows == list(range(12))
        cover = _coverage(store, group)
        assert len(cover) == 18 and set(cover.values()) == {4}
    assert store.squares() == [("expert", 12, 12, 2), ("lay", 12, 12, 2)]


def test_a_row_given_up_goes_to_the_next_judge(tmp_path: Path, db_url: str) -> None:
    clock = Clock()
    store = _store(tmp_path, db_url, "rate", clock=clock)
    quitter = store.annotator_for("invite", "quitter", group="g")
    store.assign_trials(quitter)
    assert store.next_trial(quitter) is not None  # shown, never answered
    worker = store.annotator_for("invite", "worker", group="g")
    store.assign_trials(worker)
    assert store.annotator(worker).judge_index == 1  # type: ignore[union-attr]  # row 0 is still held
    clock.advance(store.study.lease_minutes + 1)
    late = store.annotator_for("invite", "late", group="g")
    store.assign_trials(late)
    assert store.annotator(late).judge_index == 0  # type: ignore[union-attr]  # the quitter's row
    assert store.annotator(quitter).judge_index is None  # type: ignore[union-attr]
    assert store.next_trial(quitter) is None or store.progress(quitter) == (0, 0)


def test_edited_manifest_is_applied_or_refused(tmp_path: Path) -> None:
    store = _store(tmp_path, f"sqlite:///{tmp_path / 's.db'}")
    manifest = tmp_path / "describe" / "stimuli.csv"
    manifest.write_text(manifest.read_text().replace("A cat is playing the piano.", "A cat plays."))
    edited = Store(load_study(store.study.path), store.url)
    with pytest.raises(StudyError, match=r"changed: txt1 .*--update"):
        edited.init()
    edited.init(update_manifest=True)
    assert edited.stimulus_progress()[1][0].text == "A cat plays."
    aid = edited.annotator_for("invite", "x")
    while (got := edited.lease_stimulus(aid)) is not None:
        edited.submit_description(aid, got[1].token, "a cat", "English", "")
    manifest.write_text(manifest.read_text().replace("A cat plays.", "A dog plays."))
    with pytest.raises(StudyError, match="already shown to annotators"):
        Store(load_study(store.study.path), store.url).init(update_manifest=True)
