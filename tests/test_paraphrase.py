"""PINC, SE and the paraphrase report against plain implementations and sacreBLEU."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.conftest import corpus, streams

from ngrameval.corpus.paraphrase import fit_logistic, paraphrase, pinc, se
from ngrameval.errors import UndefinedMetricWarning
from ngrameval.metrics.pinc import PINC

words = st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=8).map(" ".join)


def plain_pinc(src: str, cand: str, n_max: int, sets: bool, average: str) -> float:
    s, c = src.split(), cand.split()
    changes = []
    for n in range(1, n_max + 1):
        cg = [tuple(c[i : i + n]) for i in range(len(c) - n + 1)]
        sg = [tuple(s[i : i + n]) for i in range(len(s) - n + 1)]
        if not cg:
            continue
        if sets:
            shared, total = len(set(cg) & set(sg)), len(set(cg))
        else:
            shared, total = sum(min(cg.count(g), sg.count(g)) for g in set(cg)), len(cg)
        changes.append(1 - shared / total)
    if not changes:
        return 0.0
    return sum(changes) / (len(changes) if average == "present" else n_max)


def plain_edit(a: list[str], b: list[str]) -> float:
    """Edit distance with substitution 2, insertion and deletion 1, by dynamic programming."""
    d = np.zeros((len(a) + 1, len(b) + 1))
    d[:, 0] = np.arange(len(a) + 1)
    d[0, :] = np.arange(len(b) + 1)
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i, j] = min(d[i - 1, j] + 1, d[i, j - 1] + 1, d[i - 1, j - 1] + (0 if a[i - 1] == b[j - 1] else 2))
    return float(d[-1, -1])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(words, words), min_size=1, max_size=6), st.integers(1, 5), st.booleans(), st.booleans())
def test_pinc_equals_plain_definition(pairs: list[tuple[str, str]], n: int, sets: bool, all_orders: bool) -> None:
    average = "all" if all_orders else "present"
    srcs, cands = [p[0] for p in pairs], [p[1] for p in pairs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        got = pinc(cands, srcs, n=n, sets=sets, average=average, tokenize="none")
    want = [plain_pinc(s, c, n, sets, average) for s, c in pairs]
    np.testing.assert_allclose(got.sentences, want, rtol=0, atol=1e-12)  # type: ignore[arg-type]
    assert got.score == pytest.approx(np.mean(want))


def test_pinc_conventions() -> None:
    # sets vs counts: "a a" against "a" shares one of one distinct unigram, but only one of two tokens
    assert pinc(["a a"], ["a"], n=1).score == 0.0
    assert pinc(["a a"], ["a"], n=1, sets=False).score == 0.5
    # a two-word candidate is judged on the orders it has (present) or over all four (all)
    assert pinc(["x y"], ["z"]).score == 1.0
    assert pinc(["x y"], ["z"], average="all").score == 0.5
    with pytest.warns(UndefinedMetricWarning, match="empty candidate"):
        assert pinc([""], ["a b"]).score == 0.0
    assert pinc(["the cat"], ["The cat"], lowercase=True).score == 0.0
    assert "ngrams:sets|avg:present" in pinc(["a"], ["a"]).signature


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(words, st.lists(words, min_size=1, max_size=3)), min_size=1, max_size=6))
@pytest.mark.slow
def test_se_equals_dynamic_program(data: list[tuple[str, list[str]]]) -> None:
    got = se([h for h, _ in data], [r for _, r in data], tokenize="none")
    want = []
    for h, refs in data:
        a = h.split()
        sims = [1 - plain_edit(a, r.split()) / max(len(a) + len(r.split()), 1) for r in refs]
        want.append(np.mean(sims))
    np.testing.assert_allclose(got.sentences, want, rtol=0, atol=1e-12)  # type: ignore[arg-type]


@settings(max_examples=40, deadline=None)
@given(corpus(max_refs=3, max_segments=8), st.data())
def test_paraphrase_bleu_equals_sacrebleu(data: tuple[list[str], list[list[str]]], draw: st.DataObject) -> None:
    hyps, refs = data
    sources = [draw.draw(st.sampled_from(rs)) + " extra" for rs in refs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        res = paraphrase({"s": hyps}, sources, refs)
    got = {s.metric: s.score for s in res.scores}
    want = sacrebleu.BLEU().corpus_score(hyps, streams(refs)).score
    want_src = sacrebleu.BLEU().corpus_score(hyps, streams([[*r, s] for r, s in zip(refs, sources)])).score
    assert got["BLEU"] * 100 == pytest.approx(want, abs=1e-9)
    assert got["BLEU+src"] * 100 == pytest.approx(want_src, abs=1e-9)
    b, p = got["BLEU"], got["PINC"]
    assert got["AM(BLEU,PINC)"] == pytest.approx((b + p) / 2)
    assert got["GM(BLEU,PINC)"] == pytest.approx(np.sqrt(b * p))


def test_logistic_fit_recovers_a_known_combination() -> None:
    rng = np.random.default_rng(0)
    b, p = rng.random(300), rng.random(300)
    ratings = p / (1 + np.exp(-12 * (b - 0.4)))
    fit = fit_logistic(b, p, ratings)
    assert fit.pearson > 0.999
    assert fit.midpoint == pytest.approx(0.4, abs=0.02)
    with pytest.raises(ValueError, match="ratings that vary"):
        fit_logistic(b, p, np.ones(300))


def test_paraphrase_with_ratings_adds_the_fitted_combination() -> None:
    srcs = ["the cat sat on the mat", "a dog runs in the park", "he eats an apple", "she reads a book"]
    refs = [["a cat sat on a mat"], ["the dog is running in a park"], ["he is eating an apple"], ["a book is read"]]
    systems = {
        "copy": srcs,
        "para": ["a cat is sitting on the mat", "the dog is running in a park", "an apple is eaten", "reading"],
    }
    ratings = {"copy": [1.0, 1.0, 2.0, 1.0], "para": [4.0, 5.0, 3.0, float("nan")]}
    res = paraphrase(systems, srcs, refs, ratings=ratings)
    assert res.logistic is not None and res.logistic.n == 7
    names = [s.metric for s in res.scores if s.system == "copy"]
    assert names[-1] == "PINC*sig(BLEU)"
    copy_pinc = next(s.score for s in res.scores if s.system == "copy" and s.metric == "PINC")
    assert copy_pinc == 0.0  # a copy of the source changes nothing
    with pytest.raises(ValueError, match="no ratings for system"):
        paraphrase(systems, srcs, refs, ratings={"copy": ratings["copy"]})


def test_pinc_rejects_bad_configuration() -> None:
    with pytest.raises(ValueError, match="average"):
        PINC(average="mean")
    with pytest.raises(ValueError, match="2 candidates but 1 sources"):
        pinc(["a", "b"], ["a"])
