"""TER equals sacreBLEU 2.6 (statistics, corpus and sentence scores, every option); lower is better in rankings."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import numpy as np
import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.conftest import corpus, free_line, streams

import ngrameval as ne
from ngrameval.errors import ConfigError
from ngrameval.meta.significance import rank
from ngrameval.metrics.registry import parse_specs
from ngrameval.metrics.ter import TER, edits, shifted, ter_rows
from ngrameval.ngrams.texts import flatten
from ngrameval.text.pipeline import Preprocess

logging.getLogger("sacrebleu").setLevel(logging.ERROR)
DATA = Path("/work/shared/data")
slow = pytest.mark.skipif(os.environ.get("NGRAMEVAL_SLOW") != "1", reason="slow: set NGRAMEVAL_SLOW=1")
OPTIONS = st.fixed_dictionaries(
    {k: st.booleans() for k in ("normalized", "no_punct", "asian_support", "case_sensitive")}
)
# few word types, so blocks repeat and shifts are found (and compete) often
SHUFFLED = st.lists(st.sampled_from(["a", "b", "c", "d", "A", "e,", "(f)", "g."]), max_size=30).map(" ".join)
ASIAN = st.text(st.sampled_from(list("漢字テストひらがなカタカナ、。「」（）！？ ab.,\u3200\u31f0ｱ")), max_size=20)


def check_equal(hyps: list[str], refs: list[list[str]], opts: dict[str, bool], sentences: bool = True) -> None:
    sb = sacrebleu.TER(**opts)
    metric = TER(**opts)
    flat, seg = flatten(refs)
    (rows,) = ter_rows(metric, [hyps], flat, seg)
    want = np.array(sb._extract_corpus_statistics(hyps, streams(refs)), dtype=np.float64)
    np.testing.assert_array_equal(rows, want)  # fewest edits and mean reference length, segment by segment
    assert metric(rows.sum(axis=0)) * 100 == pytest.approx(sb.corpus_score(hyps, streams(refs)).score, rel=1e-12)
    if sentences:
        got = metric(rows) * 100
        for g, h, r in zip(got, hyps, refs):
            assert g == pytest.approx(sb.sentence_score(h, r).score, rel=1e-12, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(data=corpus(), opts=OPTIONS)
@pytest.mark.slow
def test_equal_sacrebleu_every_option(data: tuple[list[str], list[list[str]]], opts: dict[str, bool]) -> None:
    check_equal(*data, opts)


@settings(max_examples=80, deadline=None)
@given(hyps=st.lists(SHUFFLED, min_size=1, max_size=4), data=st.data(), opts=OPTIONS)
@pytest.mark.slow
def test_equal_sacrebleu_with_many_shifts(hyps: list[str], data: st.DataObject, opts: dict[str, bool]) -> None:
    refs = [data.draw(st.lists(SHUFFLED, min_size=1, max_size=3)) for _ in hyps]
    check_equal(hyps, refs, opts)


@settings(max_examples=60, deadline=None)
@given(hyps=st.lists(st.one_of(ASIAN, free_line), min_size=1, max_size=4), data=st.data(), opts=OPTIONS)
def test_equal_sacrebleu_asian_and_any_text(hyps: list[str], data: st.DataObject, opts: dict[str, bool]) -> None:
    refs = [data.draw(st.lists(st.one_of(ASIAN, free_line), min_size=1, max_size=2)) for _ in hyps]
    check_equal(hyps, refs, opts)


@pytest.mark.slow
def test_beam_and_candidate_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(0)
    # 50 words over 3 types: the search stops at sacreBLEU's 1000 candidates (21 edits; 18 without the cap)
    capped_h, capped_r = (" ".join(f"w{x}" for x in rng.integers(0, 3, n)) for n in (50, 47))
    # a length ratio above 50 widens the beam
    wide_h, wide_r = "w0 w1", " ".join(f"w{x}" for x in rng.integers(0, 3, 150))
    check_equal([capped_h, wide_h], [[capped_r], [wide_r]], {})
    ids = {"w0": 0, "w1": 1, "w2": 2}
    h, r = [ids[w] for w in capped_h.split()], [ids[w] for w in capped_r.split()]
    assert edits(h, r) == 21
    monkeypatch.setattr("ngrameval.metrics.ter.MAX_SHIFT_CANDIDATES", 10**9)
    assert edits(h, r) == 18  # so the cap is what this case exercises


def test_shift_rule_and_edits() -> None:
    w = [0, 1, 2, 3, 4]
    assert shifted(w, 3, 2, 0) == [3, 4, 0, 1, 2]  # before the block
    assert shifted(w, 0, 2, 4) == [2, 3, 0, 1, 4]  # after it
    assert shifted(w, 0, 2, 1) == [2, 0, 1, 3, 4]  # sacreBLEU's rule for a target inside the block
    assert edits([1, 2, 3], [1, 2, 3]) == 0
    assert edits([3, 1, 2], [1, 2, 3]) == 1  # one shift
    assert edits([5, 6], []) == 2


def test_empty_references_and_corpus_rules() -> None:
    check_equal(["", "a b", ""], [[""], [""], ["x y"]], {})
    assert TER()(np.array([0.0, 0.0])) == 0.0 and TER()(np.array([2.0, 0.0])) == 1.0


def test_direction_and_ranking() -> None:
    assert TER.higher_is_better is False
    sig = np.zeros((3, 3), dtype=bool)
    sig[0, 2] = sig[2, 0] = True
    entries = rank(["x", "y", "z"], np.array([0.5, 0.4, 0.2]), sig, higher_is_better=False)
    assert [(e.system, e.rank_low, e.rank_high) for e in entries] == [("z", 1, 2), ("y", 1, 3), ("x", 2, 3)]
    refs = ["the cat sat on the mat", "a dog ran home today", "it is raining now"] * 4
    good = list(refs)
    bad = ["mat the on sat cat", "dog a home", "raining"] * 4
    cmp = ne.compare({"bad": bad, "good": good}, refs, "ter,bleu", n_resamples=200, seed=1)
    ter_cmp, bleu_cmp = cmp.metrics
    assert ter_cmp.ranking is not None and bleu_cmp.ranking is not None
    assert ter_cmp.ranking[0].system == "good" == bleu_cmp.ranking[0].system
    assert ter_cmp.systems[0].score > ter_cmp.systems[1].score  # bad has the higher TER


def test_api_cli_and_signature(tmp_path: Path) -> None:
    hyps = ["The cat sat on the mat.", "Hello world &amp; you"]
    refs = [["the mat, the cat sat on", "A cat sat."], ["hello there, world & you"]]
    s = ne.score({"sys": hyps}, refs, "ter,ter:norm=yes,punct=no,asian=yes,case=yes")
    for got, opts in zip(
        s, [{}, {"normalized": True, "no_punct": True, "asian_support": True, "case_sensitive": True}]
    ):
        sb = sacrebleu.TER(**opts)
        assert got.score * 100 == pytest.approx(sb.corpus_score(hyps, streams(refs)).score, rel=1e-12)
        sig = sb.get_signature().format().replace("version:2.6.0", f"version:ngrameval-{ne.__version__}")
        assert got.signature == f"TER|{sig}"
    h, r = tmp_path / "h.txt", tmp_path / "r.txt"
    h.write_text("\n".join(hyps) + "\n", "utf-8")
    r.write_text("\n".join(x[0] for x in refs) + "\n", "utf-8")
    out = tmp_path / "o.json"
    from ngrameval.cli import main

    assert main(["score", str(h), "-r", str(r), "-m", "ter", "-f", "json", "-o", str(out)]) == 0
    (row,) = json.loads(out.read_text("utf-8"))
    assert row["score"] == pytest.approx(sacrebleu.TER().corpus_score(hyps, [[x[0] for x in refs]]).score, rel=1e-12)


@pytest.mark.parametrize("spec", ["ter:norm=maybe", "ter:n=2", "ter:asian=2"])
def test_bad_options(spec: str) -> None:
    with pytest.raises(ConfigError):
        parse_specs(spec, Preprocess())


def _wmt(pair: str) -> tuple[list[list[str]], list[list[str]]]:
    root = DATA / "wmt19" / pair
    if not root.exists():
        pytest.skip("shared WMT19 data not present")
    ref = next(root.glob("newstest2019-*-ref.en")).read_text("utf-8").splitlines()
    systems = [p.read_text("utf-8").splitlines() for p in sorted((root / "system-outputs").iterdir())]
    return systems, [[x] for x in ref]


def _summeval() -> tuple[list[list[str]], list[list[str]]]:
    path = DATA / "summeval" / "summeval.jsonl"
    if not path.exists():
        pytest.skip("shared SummEval data not present")
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    docs = sorted({r["doc_id"] for r in rows})
    names = sorted({r["system"] for r in rows})
    by = {(r["system"], r["doc_id"]): r for r in rows}
    return [[by[(s, d)]["summary"] for d in docs] for s in names], [by[(names[0], d)]["references"] for d in docs]


@pytest.mark.slow
def test_wmt19_and_summeval_sample() -> None:
    systems, refs = _wmt("de-en")
    check_equal(systems[0][:80], refs[:80], {}, sentences=False)
    check_equal(systems[1][:40], refs[:40], {"normalized": True, "case_sensitive": True}, sentences=False)
    systems, refs = _summeval()
    check_equal(systems[0][:1], refs[:1], {}, sentences=False)  # 1 document x 11 references


@slow
@pytest.mark.parametrize("pair", ["de-en", "fi-en", "gu-en", "kk-en", "lt-en", "ru-en", "zh-en"])
def test_wmt19_every_system(pair: str) -> None:
    systems, refs = _wmt(pair)
    for hyps in systems:
        check_equal(hyps, refs, {}, sentences=False)


@slow
def test_summeval_every_system() -> None:
    systems, refs = _summeval()
    for hyps in systems:
        check_equal(hyps, refs, {}, sentences=False)


@pytest.mark.parametrize("asian", [False, True])
def test_references_are_tokenized_twice_as_sacrebleu_does(asian: bool) -> None:
    """sacreBLEU runs each reference through the tokenizer twice; "U.S..5" is 5 words once and 6 twice."""
    opts = {"normalized": True, "no_punct": False, "asian_support": asian, "case_sensitive": False}
    check_equal(["", "U.S..5", "a.5 b..5"], [["U.S..5 "], ["U.S..5"], ["a..5 b.5", "x..5"]], opts)


def test_win_rate_and_ranking_know_that_lower_is_better() -> None:
    """For TER the better system has the lower score: it ranks first and wins (almost) every resample."""
    import ngrameval as ne

    refs = [f"the cat number {i} sat on the mat today" for i in range(30)]
    good = [f"the cat number {i} sat on the mat" for i in range(30)]
    bad = [f"a dog {i} ran far away" for i in range(30)]
    cmp = ne.compare({"good": good, "bad": bad}, refs, "ter", test="bs", n_resamples=200, seed=1)
    (pair,) = cmp.metrics[0].pairs
    assert pair.system_a == "good" and pair.score_a < pair.score_b and pair.win_rate == 1.0
    assert cmp.metrics[0].ranking is not None and cmp.metrics[0].ranking[0].system == "good"
