"""chrF / chrF++ equal sacreBLEU 2.6 (statistics, corpus and sentence scores, every option, several references)."""

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
from ngrameval.api import measure
from ngrameval.errors import ConfigError
from ngrameval.metrics.chrf import ChrF, alpha_of_beta, chrf_rows
from ngrameval.metrics.registry import parse_specs
from ngrameval.ngrams.chars import split_punctuation
from ngrameval.ngrams.texts import flatten
from ngrameval.text.pipeline import Preprocess

logging.getLogger("sacrebleu").setLevel(logging.ERROR)
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
# every system of the shared data: minutes, run with NGRAMEVAL_SLOW=1 (a reduced form runs by default)
slow = pytest.mark.skipif(os.environ.get("NGRAMEVAL_SLOW") != "1", reason="slow: set NGRAMEVAL_SLOW=1")
OPTIONS = st.fixed_dictionaries(
    {
        "char_order": st.integers(0, 7),
        "word_order": st.integers(0, 3),
        "beta": st.sampled_from([1, 2, 3, 0.5]),
        "lowercase": st.booleans(),
        "whitespace": st.booleans(),
        "eps_smoothing": st.booleans(),
    }
).filter(lambda o: o["char_order"] + o["word_order"] > 0)


def ours(hyps: list[str], refs: list[list[str]], opts: dict[str, object]) -> tuple[ChrF, np.ndarray]:
    kw = dict(opts)
    lc = bool(kw.pop("lowercase", False))
    metric = ChrF(**kw)  # type: ignore[arg-type]
    flat, seg = flatten(refs)
    (rows,) = chrf_rows(metric, [hyps], flat, seg, lc, chunk=5)  # small chunks: chunk edges are exercised
    return metric, rows


def check_equal(hyps: list[str], refs: list[list[str]], opts: dict[str, object], sentences: bool = True) -> None:
    sb = sacrebleu.CHRF(**opts)  # type: ignore[arg-type]
    metric, rows = ours(hyps, refs, opts)
    # the statistics themselves, integer for integer (best reference chosen as sacreBLEU chooses it)
    want_rows = np.array(sb._extract_corpus_statistics(hyps, streams(refs)), dtype=np.float64)
    np.testing.assert_array_equal(rows, want_rows)
    assert metric(rows.sum(axis=0)) * 100 == pytest.approx(sb.corpus_score(hyps, streams(refs)).score, rel=1e-13)
    if sentences:
        sent = metric.f_score(rows)  # sacreBLEU's 0-100 sentence score, bit for bit
        assert sent.tolist() == [sb.sentence_score(h, r).score for h, r in zip(hyps, refs)]


@settings(max_examples=150, deadline=None)
@given(data=corpus(), opts=OPTIONS)
@pytest.mark.slow
def test_equal_sacrebleu_every_option(data: tuple[list[str], list[list[str]]], opts: dict[str, object]) -> None:
    check_equal(*data, opts)


@settings(max_examples=80, deadline=None)
@given(
    hyps=st.lists(free_line, min_size=1, max_size=6),
    data=st.data(),
    opts=OPTIONS,
)
def test_equal_sacrebleu_any_characters(hyps: list[str], data: st.DataObject, opts: dict[str, object]) -> None:
    refs = [data.draw(st.lists(free_line, min_size=1, max_size=3)) for _ in hyps]
    check_equal(hyps, refs, opts)


def test_punctuation_split_as_sacrebleu() -> None:
    sb = sacrebleu.CHRF(word_order=2)
    for line in ["(hi) there, you!", "a . b", "!!", "'quoted'", "x", "", "  a\tb  "]:
        assert split_punctuation(line) == sb._remove_punctuation(line)


def test_best_reference_first_on_ties() -> None:
    # both references give the same sentence chrF with different statistics: sacreBLEU keeps the first
    hyps, refs = ["ab"], [["abc", "abd"]]
    check_equal(hyps, refs, {})
    hyps, refs = ["abcd"], [["abx", "abcdzz", "abcd"]]
    metric, rows = ours(hyps, refs, {"lowercase": False})
    assert metric(rows[0]) == 1.0  # the exact copy wins over earlier, worse references


def test_alpha_algebra() -> None:
    """F_beta = (1 + b^2) P R / (b^2 P + R) = P R / (alpha R + (1 - alpha) P) with alpha = 1 / (1 + b^2)."""
    rng = np.random.default_rng(0)
    p, r = rng.uniform(0.01, 1, 1000), rng.uniform(0.01, 1, 1000)
    for beta in (0.5, 1.0, 2.0, 3.0):
        a = alpha_of_beta(beta)
        f_beta = (1 + beta**2) * p * r / (beta**2 * p + r)
        np.testing.assert_allclose(p * r / (a * r + (1 - a) * p), f_beta, rtol=1e-13)
        # and chrF of one order is exactly that combination of its precision and recall
        h, ref, m = 10.0, 7.0, 4.0
        assert ChrF(char_order=1, beta=beta)(np.array([h, ref, m])) == pytest.approx(
            (m / h) * (m / ref) / (a * (m / ref) + (1 - a) * (m / h)), rel=1e-13
        )
    assert alpha_of_beta(2.0) < 0.5  # chrF2 leans to recall, as AEv's alpha -> 0 does


def test_rows_add_and_score_like_other_metrics() -> None:
    hyps = ["the cat sat", "a dog ran home", "nothing"]
    refs = ["the cat sat down", "the dog ran home", "something"]
    (rows,) = measure({"s": hyps}, refs, parse_specs("chrf++", Preprocess()))
    (v,) = rows.values
    assert rows.corpus()[0] == pytest.approx(sacrebleu.CHRF(word_order=2).corpus_score(hyps, [refs]).score / 100)
    assert rows.scorer(v[[0, 0, 2]].sum(axis=0)) == pytest.approx(
        sacrebleu.CHRF(word_order=2).corpus_score([hyps[0], hyps[0], hyps[2]], [[refs[0], refs[0], refs[2]]]).score
        / 100
    )


def test_api_cli_and_signature(tmp_path: Path) -> None:
    hyps = ["The cat sat on the mat.", "Hello world"]
    refs = [["The cat is on the mat.", "A cat sat."], ["hello there, world"]]
    s = ne.score({"sys": hyps}, refs, "chrf,chrf++,chrf:beta=1,nc=4,nw=1,space=yes,eps=yes,lc=yes", sentence=True)
    for got, opts in zip(
        s,
        [
            {},
            {"word_order": 2},
            {"beta": 1, "char_order": 4, "word_order": 1, "whitespace": True, "eps_smoothing": True, "lowercase": True},
        ],
    ):
        sb = sacrebleu.CHRF(**opts)  # type: ignore[arg-type]
        assert got.score * 100 == pytest.approx(sb.corpus_score(hyps, streams(refs)).score, rel=1e-13)
        sig = sb.get_signature().format().replace("version:2.6.0", f"version:ngrameval-{ne.__version__}")
        assert got.signature == f"{got.metric}|{sig}"
    assert [x.metric for x in s] == ["chrF2", "chrF2++", "chrF1+"]
    h, r = tmp_path / "h.txt", tmp_path / "r.txt"
    h.write_text("\n".join(hyps) + "\n", "utf-8")
    r.write_text("\n".join(x[0] for x in refs) + "\n", "utf-8")
    out = tmp_path / "o.json"
    from ngrameval.cli import main

    assert main(["score", str(h), "-r", str(r), "-m", "chrf,chrf++", "-f", "json", "-o", str(out)]) == 0
    got_cli = {row["metric"]: row["score"] for row in json.loads(out.read_text("utf-8"))}
    for name, wo in (("chrF2", 0), ("chrF2++", 2)):
        want = sacrebleu.CHRF(word_order=wo).corpus_score(hyps, [[x[0] for x in refs]]).score
        assert got_cli[name] == pytest.approx(want, rel=1e-13)


@pytest.mark.parametrize("spec", ["chrf:nc=0,nw=0", "chrf:beta=-1", "chrf:nc=x", "chrf++:space=maybe"])
def test_bad_options(spec: str) -> None:
    with pytest.raises(ConfigError):
        parse_specs(spec, Preprocess())


def _wmt(pair: str, limit: int | None) -> tuple[list[list[str]], list[list[str]]]:
    root = DATA / "wmt19" / pair
    if not root.exists():
        pytest.skip("shared WMT19 data not present")
    ref = next(root.glob("newstest2019-*-ref.en")).read_text("utf-8").splitlines()
    systems = [p.read_text("utf-8").splitlines() for p in sorted((root / "system-outputs").iterdir())[:limit]]
    return systems, [[x] for x in ref]


def _summeval(limit: int | None) -> tuple[list[list[str]], list[list[str]]]:
    path = DATA / "summeval" / "summeval.jsonl"
    if not path.exists():
        pytest.skip("shared SummEval data not present")
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    docs = sorted({r["doc_id"] for r in rows})
    names = sorted({r["system"] for r in rows})[:limit]
    by = {(r["system"], r["doc_id"]): r for r in rows}
    systems = [[by[(s, d)]["summary"] for d in docs] for s in names]
    return systems, [by[(names[0], d)]["references"] for d in docs]


@pytest.mark.parametrize("opts", [{}, {"word_order": 2}, {"word_order": 2, "eps_smoothing": True, "lowercase": True}])
@pytest.mark.slow
def test_wmt19_and_summeval_sample(opts: dict[str, object]) -> None:
    systems, refs = _wmt("de-en", 1)
    check_equal(systems[0][:500], refs[:500], opts, sentences=False)
    systems, refs = _summeval(1)
    check_equal(systems[0], refs, opts, sentences=False)  # 100 documents x 11 references


@slow
@pytest.mark.parametrize("pair", ["de-en", "fi-en", "gu-en", "kk-en", "lt-en", "ru-en", "zh-en"])
def test_wmt19_every_system(pair: str) -> None:
    systems, refs = _wmt(pair, None)
    for hyps in systems:
        check_equal(hyps, refs, {"word_order": 2})


@slow
def test_summeval_every_system() -> None:
    systems, refs = _summeval(None)
    for hyps in systems:
        for opts in ({}, {"word_order": 2}):
            check_equal(hyps, refs, opts)
