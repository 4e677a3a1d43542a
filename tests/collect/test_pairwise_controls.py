"""Quality controls of side-by-side (pairwise) studies, as a crowd meets them: bad references (one output against
its own degraded copy, sides at random) with each judge's one-sided binomial test, repeat agreement, and
known-answer training comparisons that a judge must pass before their schedule. Through the app on SQLite and
PostgreSQL: careless judges (always left, random) are flagged and a careful one is not; controls never reach the
ranking, the exported preferences or the stopping counts as real answers; forged answers to controls are refused;
racing judges never get two controls of one comparison."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import select

from collect.races import at_once
from collect.test_app import TestClient, _field, _login
from collect.test_pairwise import _pair_of_page as _shown
from collect.test_pairwise import write_pairwise
from ngrameval.collect import stopping
from ngrameval.collect.app import create_app
from ngrameval.collect.cli import add_collect_parser
from ngrameval.collect.export import export_all, pair_judges
from ngrameval.collect.models import PairRow, TrialRow
from ngrameval.collect.quality import min_pairs, pair_check, preference_p
from ngrameval.collect.settle import read_settlement
from ngrameval.collect.store import Store
from ngrameval.collect.study import StudyError, load_study

#: 10 items, 20 comparisons a judge, 8 bad references and 2 repeats in their one batch
CONTROLS = "batch_size = 40\nbad_references = 8\nrepeats = 2"
TRIALS = "trials = 20"


def _store(tmp_path: Path, url: str | None, rating: str = CONTROLS, pairwise: str = TRIALS, extra: str = "") -> Store:
    path = write_pairwise(tmp_path / "sbs", pairwise, rating, n_items=10)
    path.write_text(path.read_text() + extra)
    store = Store(load_study(path), url)
    store.init()
    return store


def _arrive(store: Store, who: str) -> tuple[TestClient, str]:
    c = TestClient(create_app(store), follow_redirects=True)
    return c, c.get(f"/start?PROLIFIC_PID={who}&STUDY_ID=S&SESSION_ID={who}").text


def _post(c: TestClient, page: str, choice: str) -> tuple[int, str]:
    r = c.post("/task", data={"csrf": _field(page, "csrf"), "token": _field(page, "token"), "choice": choice})
    return r.status_code, r.text


Judge = Callable[[TrialRow, PairRow, np.random.Generator], str]


def careful(t: TrialRow, p: PairRow, rng: np.random.Generator) -> str:
    """Chooses the original over a degraded copy (its side is ``a``), and system A in real comparisons."""
    return "left" if p.left == "a" else "right"


def always_left(t: TrialRow, p: PairRow, rng: np.random.Generator) -> str:
    return "left"


def random_clicker(t: TrialRow, p: PairRow, rng: np.random.Generator) -> str:
    return ("left", "right", "tie")[int(rng.integers(0, 3))]


def _work(store: Store, who: str, judge: Judge, seed: int = 0) -> tuple[TestClient, str, int]:
    """A judge answering through the app until the done page; (client, last page, comparisons answered)."""
    rng = np.random.default_rng(seed)
    c, page = _arrive(store, who)
    n = 0
    while 'name="token"' in page:
        t, p = _shown(store, page)
        code, page = _post(c, page, judge(t, p, rng))
        assert code == 200, page[:300]
        n += 1
    return c, page, n


# ------------------------------------------------------------------------------------------ the test itself


def test_preference_p_is_the_exact_binomial_tail() -> None:
    assert preference_p(5, 5) == 0.5**5 and preference_p(0, 5) == 1.0 and preference_p(0, 0) == 1.0
    assert preference_p(7, 8) == pytest.approx(9 / 256)  # P(X >= 7), X ~ Bin(8, 1/2): (8 + 1) / 2^8
    assert preference_p(4, 8) == pytest.approx(163 / 256)  # (70 + 56 + 28 + 8 + 1) / 256
    with pytest.raises(ValueError, match="preferred"):
        preference_p(6, 5)


def test_a_tie_counts_as_not_choosing_the_original() -> None:
    honest = pair_check([("a", "a"), ("b", "tie")], ["a"] * 8)
    assert honest.bad_p == 0.5**8 and not honest.flagged and honest.decisive
    assert honest.repeats == 2 and honest.repeat_agreement == 0.5
    tied = pair_check([], ["tie"] * 8)
    assert tied.bad_ties == 8 and tied.bad_preferred == 0 and tied.flagged and tied.repeat_agreement is None
    few = pair_check([], ["a"] * (min_pairs(0.05) - 1))
    assert few.flagged and not few.decisive  # too few to pass, not failed
    assert pair_check([], []).bad_p is None and not pair_check([], []).flagged


# ------------------------------------------------------------------------------------------ the study file


@pytest.mark.parametrize(
    ("rating", "pairwise", "training", "words"),
    [
        ("bad_references = 2", TRIALS, "", "key 'bad_references' = 2 gives each judge 2 bad reference"),
        ("bad_references = 0.01", "", "", r"0 bad reference\(s\) \(10 comparisons.*use a count of at least 5"),
        ("bad_references = 5", "trials = 3", "", r"needs at least 5 .*more trials \(\[pairwise\] trials\)"),
        ("bad_references = -1", "", "", "key 'bad_references' must be a count"),
        ("bad_references = 30\nbatch_size = 40", "", "", "at least half of a batch"),
        ("", "", "items = 31", "asks for 31 training comparisons"),
        ("", "", "items = 2\nmax_error = 1", "key 'max_error' is the share"),
    ],
)
def test_bad_control_settings_name_the_key(
    tmp_path: Path, rating: str, pairwise: str, training: str, words: str
) -> None:
    path = write_pairwise(tmp_path, pairwise, rating, n_items=10)
    path.write_text(path.read_text() + (f"[training]\n{training}\n" if training else ""))
    with pytest.raises(StudyError, match=words):
        load_study(path)


def test_controls_are_read_for_pairwise(tmp_path: Path) -> None:
    path = write_pairwise(tmp_path, TRIALS, CONTROLS, n_items=10)
    path.write_text(path.read_text() + "[training]\nitems = 3\n")
    st = load_study(path)
    assert (st.bad_references, st.repeats, st.training_items, st.training_max_error) == (8, 2, 3, 0.0)


# ------------------------------------------------------------------------------------------ the schedule


def test_a_bad_reference_shows_one_output_of_a_comparison_against_its_copy(tmp_path: Path) -> None:
    store = _store(tmp_path, None)
    lefts: Counter[str] = Counter()
    for who in ("j0", "j1", "j2"):
        aid = store.annotator_for("invite", who)
        store.assign_trials(aid)
        with store.session() as s:
            rows = {t.position: (t, p) for t, p in s.execute(
                select(TrialRow, PairRow).join(PairRow).where(TrialRow.annotator_id == aid)).all()}  # fmt: skip
        kinds = Counter(t.kind for t, _ in rows.values())
        assert kinds == {"normal": 20, "bad": 8, "repeat": 2}
        bad = [(t, p) for t, p in rows.values() if t.kind == "bad"]
        assert len({t.of_position for t, _ in bad}) == 8  # never two controls of one comparison
        for t, p in bad:
            o, op = rows[t.of_position]  # type: ignore[index]
            assert o.kind == "normal" and t.item == o.item and t.position > o.position
            assert t.system == p.system_b and t.system in (o.system, op.system_b)  # one side of that comparison
            assert t.output == (o.output if t.system == o.system else op.output_b)  # the original is side a ...
            assert p.output_b != t.output and p.output_b.split() != t.output.split()  # ... its copy side b
            lefts[p.left] += 1
    assert set(lefts) == {"a", "b"}  # the page side drawn at random


@pytest.mark.slow
def test_no_bad_references_by_default(tmp_path: Path) -> None:
    """A side-by-side study has no bad references unless asked (``bad_references = 0`` is the default)."""
    a = _store(tmp_path / "a", None, "repeats = 2\nbatch_size = 8", "")
    b = _store(tmp_path / "b", None, "repeats = 2\nbatch_size = 8\nbad_references = 0", "")
    got = []
    for store in (a, b):
        aid = store.annotator_for("invite", "j")
        store.assign_trials(aid)
        with store.session() as s:
            q = select(TrialRow, PairRow).join(PairRow).order_by(TrialRow.position)
            got.append([(t.item, t.system, p.system_b, p.left, t.kind, t.of_position) for t, p in s.execute(q)])
    assert got[0] == got[1] and len(got[0]) == 14 and {k for *_, k, _ in got[0]} == {"normal", "repeat"}


# ------------------------------------------------------------------------------------------ through the app


@pytest.mark.slow
def test_careless_judges_are_flagged_and_a_careful_one_is_not(tmp_path: Path, db_url: str) -> None:
    store = _store(tmp_path, db_url)
    for who, judge, seed in (("careful", careful, 0), ("lefty", always_left, 0), ("random", random_clicker, 3)):
        _, page, n = _work(store, who, judge, seed)
        assert n == 30 and "SBS-OK" in page
    names = {store.pseudonym(a): a.external_id for a, _ in store.annotators()}
    checks = {names[j.judge]: j.check for j in pair_judges(store)}
    assert checks["careful"].bad_preferred == 8 and checks["careful"].bad_p == 0.5**8
    assert not checks["careful"].flagged and checks["careful"].repeat_agreement == 1.0
    for who in ("lefty", "random"):
        assert checks[who].flagged and checks[who].decisive and checks[who].bad_p >= 0.05  # type: ignore[operator]
    assert checks["lefty"].repeat_agreement == 0.0  # always left: a repeat swaps the sides, so the winner flips
    # the ranking counts the 60 real comparisons only (no bad reference, no repeat)
    with store.session() as s:
        assert read_settlement(s, store.study).answers == 60
    # the admin page shows the test per judge
    admin = TestClient(create_app(store), follow_redirects=True)
    store.add_admin("admin", "correct horse")
    _login(admin)
    html = admin.get("/admin").text
    for a, _ in store.annotators():
        row = html.split(f'id="annotator-{a.id}"')[1].split("</tr>")[0]
        c = checks[a.external_id]
        assert f"{c.bad_preferred} of 8" in row and f"{c.bad_p:.3f}" in row
        assert ("bad-ref test failed" in row) == (a.external_id != "careful")
    judges_csv = admin.get("/admin/export/judges.csv").text
    rows = {r["judge"]: r for r in csv.DictReader(io.StringIO(judges_csv))}
    assert {names[j]: r["flagged"] for j, r in rows.items()} == {"careful": "False", "lefty": "True", "random": "True"}
    kept = csv.DictReader(io.StringIO(admin.get("/admin/export/preferences.csv?drop_flagged=1").text))
    assert Counter(names[r["rater"]] for r in kept) == {"careful": 20}
    # the exports: preferences.csv holds real comparisons only; the controls are marked as such elsewhere
    out = export_all(store, tmp_path / "export", datasheet=True)
    files = {p.name: p.read_text() for p in out}
    prefs = list(csv.DictReader(io.StringIO(files["preferences.csv"])))
    assert len(prefs) == 60 and all(r["system_a"] != r["system_b"] for r in prefs)
    controls = list(csv.DictReader(io.StringIO(files["preference_controls.csv"])))
    assert Counter(r["kind"] for r in controls) == {"bad": 24}
    assert Counter(r["chose"] for r in controls if names[r["rater"]] == "careful") == {"original": 8}
    assert len(list(csv.DictReader(io.StringIO(files["preference_repeats.csv"])))) == 6
    sheet = json.loads(files["datasheet.json"])
    assert sheet["design"]["controls"]["judges"]["flagged"] == 2
    assert sheet["design"]["controls"]["bad_references"] == 8
    # --drop-flagged leaves the flagged judges' comparisons out, and says so in judges.csv
    out = export_all(store, tmp_path / "dropped", drop_flagged=True)
    files = {p.name: p.read_text() for p in out}
    prefs = list(csv.DictReader(io.StringIO(files["preferences.csv"])))
    assert {names[r["rater"]] for r in prefs} == {"careful"} and len(prefs) == 20
    dropped = {names[r["judge"]]: r["dropped"] for r in csv.DictReader(io.StringIO(files["judges.csv"]))}
    assert dropped == {"careful": "False", "lefty": "True", "random": "True"}


def _status(store: Store, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    import argparse

    parser = argparse.ArgumentParser()
    add_collect_parser(parser.add_subparsers())
    args = parser.parse_args(["collect", "status", str(store.study.path), "--database", store.url, *extra])
    assert args.func(args) == 0
    return capsys.readouterr().out


@pytest.mark.slow
def test_status_names_the_flagged_judges(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = _store(tmp_path, None)
    _work(store, "careful", careful)
    _work(store, "lefty", always_left)
    lefty = next(store.pseudonym(a) for a, _ in store.annotators() if a.external_id == "lefty")
    assert f"judges: 2 checked, 1 flagged by the bad-reference test: {lefty}\n" in _status(store, capsys)
    got = json.loads(_status(store, capsys, "-f", "json"))["judges"]
    assert got["checked"] == 2 and got["flagged"] == 1 and got["decisive"] == 2
    assert {j["judge"]: j["flagged"] for j in got["per_judge"]}[lefty] is True
    plain = _store(tmp_path / "plain", None, rating="repeats = 1")  # no bad references: no test to report
    _work(plain, "lefty", always_left)
    assert "judges:" not in _status(plain, capsys)


@pytest.mark.slow
def test_forged_answers_to_controls_are_refused(tmp_path: Path, db_url: str) -> None:
    store = _store(tmp_path, db_url, pairwise=f"{TRIALS}\nties = false")
    c, page = _arrive(store, "forger")
    other, other_page = _arrive(store, "other")
    while _shown(store, page)[0].kind != "bad":  # answer real comparisons up to the first bad reference
        assert _post(c, page, "left")[0] == 200
        page = c.get("/task").text
    t, p = _shown(store, page)
    for choice in ("tie", "both", "original", ""):  # a choice the page does not offer
        assert _post(c, page, choice)[0] == 400
    form = {"csrf": _field(page, "csrf"), "token": _field(page, "token"), "choice": "left"}
    assert other.post("/task", data={**form, "csrf": _field(other_page, "csrf")}).status_code == 400  # not theirs
    assert c.post("/task", data=form).status_code == 200
    assert c.post("/task", data={**form, "choice": "right"}).status_code == 200  # reused: stored once, as first sent
    got = [(tt, pp) for tt, pp, _ in store.preferences(kinds=("bad",))]
    assert [(tt.id, pp.winner) for tt, pp in got] == [(t.id, "a" if p.left == "a" else "b")]
    assert store.submit_preference(t.annotator_id, t.lease or "", "right").outcome == "repeat"


# ------------------------------------------------------------------------------------------ training


@pytest.mark.slow
def test_training_comparisons_come_first_and_a_failed_judge_gets_no_schedule(tmp_path: Path, db_url: str) -> None:
    store = _store(tmp_path, db_url, extra="[training]\nitems = 3\nqualify = true\n")
    c, page = _arrive(store, "passes")
    for k in range(3):
        t, p = _shown(store, page)
        assert t.kind == "training" and t.position == k and t.system == p.system_b and t.output != p.output_b
        assert "raining" not in page and "ualification" not in page  # no tell on the page
        code, page = _post(c, page, careful(t, p, np.random.default_rng()))
        assert code == 200
    a = next(a for a, _ in store.annotators() if a.external_id == "passes")
    assert (a.trained, a.status) == ("passed", "qualified")
    assert _shown(store, page)[0].kind in ("normal", "bad", "repeat")
    with store.session() as s:
        kinds = Counter(s.scalars(select(TrialRow.kind).where(TrialRow.annotator_id == a.id)))
    assert kinds == {"training": 3, "normal": 20, "bad": 8, "repeat": 2}
    # one who chooses the degraded copy (or a tie) fails: no schedule, the done page says so
    c, page = _arrive(store, "fails")
    for choice in ("tie", "left", "right"):
        t, p = _shown(store, page)
        wrong = "right" if p.left == "a" else "left"
        code, page = _post(c, page, choice if choice == "tie" else wrong)
        assert code == 200
    assert 'name="token"' not in page
    a = next(a for a, _ in store.annotators() if a.external_id == "fails")
    assert a.trained == "failed" and a.judge_index is None
    with store.session() as s:
        assert set(s.scalars(select(TrialRow.kind).where(TrialRow.annotator_id == a.id))) == {"training"}
    # training answers are no preferences and no part of the ranking
    prefs = store.preferences(kinds=("normal",))
    assert all(t.kind == "normal" for t, _, _ in prefs) and prefs == []
    with store.session() as s:
        assert read_settlement(s, store.study).answers == 0
    files = {p.name: p.read_text() for p in export_all(store, tmp_path / "export")}
    assert list(csv.DictReader(io.StringIO(files["preferences.csv"]))) == []
    controls = list(csv.DictReader(io.StringIO(files["preference_controls.csv"])))
    assert Counter(r["kind"] for r in controls) == {"training": 6}


def test_a_share_of_wrong_training_answers_may_pass(tmp_path: Path) -> None:
    store = _store(tmp_path, None, extra="[training]\nitems = 4\nmax_error = 0.25\n")
    c, page = _arrive(store, "one-wrong")
    for k in range(4):
        t, p = _shown(store, page)
        right = careful(t, p, np.random.default_rng())
        code, page = _post(c, page, right if k else ("right" if right == "left" else "left"))
        assert code == 200
    ((a, _),) = store.annotators()
    assert a.trained == "passed" and _shown(store, page)[0].kind != "training"


# ------------------------------------------------------------------------------------------ races


def _race_work(store: Store, c: TestClient) -> int:
    page, n = c.get("/task").text, 0
    while 'name="token"' in page:
        choice = careful(*_shown(store, page), np.random.default_rng())  # passes training
        form = {"csrf": _field(page, "csrf"), "token": _field(page, "token"), "choice": choice}
        r = c.post("/task", data=form)
        assert r.status_code == 200, r.text[:300]
        assert c.post("/task", data=form).status_code == 200  # a double click: stored once
        page, n = r.text, n + 1
    return n


@pytest.mark.slow
def test_racing_judges_get_their_own_controls_and_never_overspend(tmp_path: Path, db_url: str) -> None:
    """Six judges race through the app with a training phase, bad references and ``max_answers``: each gets one
    row, no comparison has two controls, and no more trials are shown than ``max_answers`` (controls and
    training comparisons are paid work: they count as repeats do)."""
    store = _store(tmp_path, db_url, extra="[training]\nitems = 2\n[stopping]\nmax_answers = 100\n")
    clients = []
    for _ in range(6):
        c = TestClient(create_app(store), follow_redirects=True)
        (token,) = store.add_invites(1)
        assert c.get(f"/start?invite={token}", follow_redirects=False).status_code == 303
        clients.append(c)
    answered = at_once([partial(_race_work, store, c) for c in clients])
    with store.session() as s:
        shown = s.scalars(select(TrialRow).where(TrialRow.lease.is_not(None))).all()
        assert len(shown) == 100 == sum(answered) and stopping.state(s, store.study).reason == "max_answers"
        assert all(t.token is not None for t in shown)  # every trial shown was answered (once)
        rows = s.execute(select(TrialRow.annotator_id, TrialRow.kind, TrialRow.of_position)).all()
    per = Counter((aid, of) for aid, kind, of in rows if kind in ("bad", "repeat"))
    assert per and max(per.values()) == 1  # never two controls of one comparison
    judges = sorted(a.judge_index for a, _ in store.annotators() if a.judge_index is not None)
    assert judges == list(range(len(judges)))  # one row each
    assert all(t.kind == "normal" for t, _, _ in store.preferences(kinds=("normal",)))
    with store.session() as s:
        normal = sum(1 for t in shown if t.kind == "normal")
        assert read_settlement(s, store.study).answers == normal < 100


@pytest.mark.slow
def test_drop_flagged_is_for_side_by_side_studies(tmp_path: Path) -> None:
    import subprocess
    import sys

    from collect.collect_studies import write_study

    path = write_study(tmp_path / "rate", "rate")
    run = subprocess.run(
        [sys.executable, "-m", "ngrameval", "collect", "export", str(path), "--out", str(tmp_path / "x"),
         "--drop-flagged"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert run.returncode == 2 and run.stdout == "" and not (tmp_path / "x").exists()
    assert run.stderr.count("\n") == 1 and "--drop-flagged is for side-by-side" in run.stderr
