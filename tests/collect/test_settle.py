"""The running ranking of a rating study (ngrameval.collect.settle): the normal trials of one criterion, ranked
with the always-valid intervals of ngrameval.meta.sequential; controls and other criteria left out; the same
from the stored answers as from a list; bad configuration and answers refused with the key named."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from collect.collect_studies import write_study
from collect.settle_studies import judge_every_trial
from ngrameval.collect import settle as st
from ngrameval.collect.store import Store
from ngrameval.collect.study import StudyError, load_study
from ngrameval.errors import ConfigError, InputError
from ngrameval.meta.sequential import sequential_status


def rate_study(tmp_path: Path, stopping: str = "", kind: str = "rate") -> Path:
    """The test rate study (systems A, B, C; criteria fluency, accuracy on 1..5) with a ``[stopping]`` table."""
    path = write_study(tmp_path, kind)
    if stopping:
        path.write_text(path.read_text() + "[stopping]\n" + stopping + "\n")
    return path


def test_ranking_uses_normal_trials_of_the_first_criterion(tmp_path: Path) -> None:
    study = load_study(rate_study(tmp_path))
    rng = np.random.default_rng(5)
    scores = {"A": rng.integers(4, 6, 300), "B": rng.integers(1, 3, 300), "C": rng.integers(1, 3, 300)}
    answers = [st.Answer(s, "fluency", float(x)) for s, xs in scores.items() for x in xs]
    noise = [
        st.Answer("C", "fluency", 5.0, "repeat"),  # controls and training do not count
        st.Answer("C", "fluency", 5.0, "known"),
        st.Answer("C", "fluency", 5.0, "training"),
        st.Answer("C", "accuracy", 5.0),  # another criterion
    ]
    got = st.settle(study, answers + noise)
    want = sequential_status({s: list(map(float, xs)) for s, xs in scores.items()}, 1, 5, 0.05, 100)
    assert got.criterion == "fluency" and got.status == want
    rows = got.standings
    assert [r.rank for r in rows] == [1, 2, 3] and rows[0].system == "A"
    assert [r.settled_with_next for r in rows] == [True, False, None]
    assert [r.cluster for r in rows] == [1, 2, 2] and not got.all_settled
    assert got.answers == 900
    assert all(r.low <= (r.mean or 0) <= r.high for r in rows)
    text = got.table()
    assert text.splitlines()[0].split()[:4] == ["rank", "system", "n", "mean"]
    assert "1 of 2 adjacent pairs settled" in text and "Howard et al. 2021" in text


def test_named_criterion_and_empty_systems(tmp_path: Path) -> None:
    study = load_study(rate_study(tmp_path, 'criterion = "accuracy"\nalpha = 0.1\nplanned = 40'))
    got = st.settle(study, [st.Answer("A", "accuracy", 3.0), st.Answer("A", "fluency", 1.0)])
    assert got.criterion == "accuracy" and got.status.alpha == 0.1 and got.status.t_opt == 40
    a = next(r for r in got.standings if r.system == "A")
    assert a.n == 1 and a.mean == 3.0
    empty = [r for r in got.standings if r.n == 0]
    assert {r.system for r in empty} == {"B", "C"} and all(r.mean is None for r in empty)
    assert all((r.low, r.high) == (1.0, 5.0) for r in empty)  # nothing known: the whole scale
    d = got.as_dict()
    json.dumps(d, allow_nan=False)  # no NaN in JSON
    assert d["ranking"][1]["mean"] is None and d["range"] == [1.0, 5.0]
    assert st.settle(study, [], "fluency").criterion == "fluency"


def test_da_uses_the_slider_range(tmp_path: Path) -> None:
    study = load_study(rate_study(tmp_path, kind="da"))
    got = st.settle(study, [st.Answer("A", "adequacy", 100.0), st.Answer("B", "adequacy", 0.0)])
    assert (got.status.low, got.status.high) == (0.0, 100.0)
    with pytest.raises(InputError, match="outside the scale"):
        st.settle(study, [st.Answer("A", "adequacy", 101.0)])


def test_bad_answers_and_criteria(tmp_path: Path) -> None:
    study = load_study(rate_study(tmp_path))
    with pytest.raises(InputError, match=r"A: a fluency score 6.0 lies outside the scale \[1, 5\]"):
        st.settle(study, [st.Answer("A", "fluency", 6.0)])
    with pytest.raises(InputError, match="not in the study: Z"):
        st.settle(study, [st.Answer("Z", "fluency", 3.0)])
    with pytest.raises(ConfigError, match="'style' is not one of"):
        st.settle(study, [], "style")
    describe = load_study(write_study(tmp_path / "d", "describe"))
    with pytest.raises(ConfigError, match="kind 'describe' has no running ranking"):
        st.settle(describe, [])


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('when = "soon"', "key 'when' must be 'settled' or 'never'"),
        ('criterion = "style"', "key 'criterion' must name a criterion"),
        ("alpha = 1", "key 'alpha' must be in"),
        ("planned = 0", "key 'planned' must be at least 1"),
        ("budget = -2", "key 'budget' must be a positive amount"),
        ('budget = "10"', "key 'budget' must be int or float"),
        ("max_answers = 0", "key 'max_answers' must be at least 1"),
        ("max_answers = 2.5", "key 'max_answers' must be int"),
        ("stop = true", r"unknown key\(s\) stop"),
    ],
)
def test_stopping_table_is_checked(tmp_path: Path, table: str, message: str) -> None:
    with pytest.raises(StudyError, match=r"\[stopping\]: " + message):
        load_study(rate_study(tmp_path, table))


def test_stopping_needs_a_rating_study_and_a_paid_tier(tmp_path: Path) -> None:
    free = rate_study(tmp_path / "free", "budget = 5")
    free.write_text(free.read_text().replace("[instructions]", "[tiers]\ntier1_rate = 0\n[instructions]"))
    with pytest.raises(StudyError, match=r"\[stopping\]: key 'budget' needs a paid tier"):
        load_study(free)
    describe = write_study(tmp_path / "d", "describe")
    describe.write_text(describe.read_text() + '[stopping]\nwhen = "settled"\n')
    with pytest.raises(StudyError, match="stopping applies to rating and side-by-side studies"):
        load_study(describe)
    one = rate_study(tmp_path / "one", 'when = "settled"')
    (one.parent / "items.csv").write_text("item,system,output,source\ns1,A,an output,a source\n")
    with pytest.raises(StudyError, match="key 'when' = 'settled' needs a ranking: at least 2 systems"):
        load_study(one)
    ok = load_study(rate_study(tmp_path / "ok", 'when = "settled"\nmax_answers = 10'))
    assert ok.stopping.when == "settled" and ok.stopping.max_answers == 10 and ok.stopping.budget is None


def test_stored_answers_give_the_same_ranking(tmp_path: Path) -> None:
    store = Store(load_study(rate_study(tmp_path)))
    store.init()
    rng = np.random.default_rng(2)

    def answer(aid: int, lease: str, system: str) -> None:
        scores = {"fluency": float(rng.integers(1, 6)), "accuracy": float(rng.integers(1, 6))}
        assert store.submit_rating(aid, lease, scores).outcome == "stored"

    for _ in range(3):
        judge_every_trial(store, answer)
    listed = st.settle(store.study, st.answers_of(store.ratings()))
    with store.session() as s:
        read = st.read_settlement(s, store.study)
    assert listed.answers == read.answers == 3 * 6  # normal trials only: 6 items a judge
    for a, b in zip(listed.standings, read.standings):
        assert (a.system, a.n, a.settled_with_next, a.cluster) == (b.system, b.n, b.settled_with_next, b.cluster)
        assert a.mean == pytest.approx(b.mean) and a.low == pytest.approx(b.low) and a.high == pytest.approx(b.high)
    assert not math.isnan(listed.status.ranking[0].mean)
