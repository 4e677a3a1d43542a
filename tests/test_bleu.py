"""BLEU equals sacreBLEU 2.6 (corpus and sentence, every smoothing) and NLTK (methods 0-7)."""

from __future__ import annotations

import logging
import math
import warnings

import numpy as np
import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
from tests.conftest import corpus, streams

from ngrameval import BLEU, Preprocess, References, bleu, overlap_stats

logging.getLogger("sacrebleu").setLevel(logging.ERROR)
SMOOTH = ["none", "floor", "add-k", "exp"]


@pytest.mark.parametrize("tokenize", ["13a", "intl", "char", "none"])
@settings(max_examples=60, deadline=None)
@given(
    data=corpus(),
    smooth=st.sampled_from(SMOOTH),
    eff=st.booleans(),
    lc=st.booleans(),
    value=st.sampled_from([None, 0.5, 2.0]),
    order=st.integers(1, 5),
)
def test_corpus_and_sentence_equal_sacrebleu(tokenize, data, smooth, eff, lc, value, order) -> None:  # type: ignore[no-untyped-def]
    hyps, refs = data
    if smooth in ("none", "exp"):
        value = None
    sb = sacrebleu.BLEU(
        tokenize=tokenize,
        lowercase=lc,
        smooth_method=smooth,
        smooth_value=value,
        effective_order=eff,
        max_ngram_order=order,
    )
    metric = BLEU(order, smooth, value, eff)
    built = References.build(refs, Preprocess(tokenize, lc))
    (stats,) = overlap_stats([hyps], built, max_order=order)
    result = sb.corpus_score(hyps, streams(refs))
    assert metric(stats.total()) * 100 == pytest.approx(result.score, rel=1e-12, abs=1e-12)
    details = metric.breakdown(stats.total())  # sacreBLEU's breakdown, to the last bit
    assert details is not None and details["precisions"] == result.precisions
    assert (details["bp"], details["ratio"]) == (result.bp, result.ratio)
    assert (details["hyp_len"], details["ref_len"]) == (result.sys_len, result.ref_len)
    sent = metric(stats) * 100
    for i, (h, r) in enumerate(zip(hyps, refs)):
        assert sent[i] == pytest.approx(sb.sentence_score(h, r).score, rel=1e-12, abs=1e-12)


def test_api_matches_sacrebleu_on_wmt17_sample() -> None:
    from pathlib import Path

    root = Path(__file__).parent / "data"
    hyps = (root / "wmt17_sample.hyp.txt").read_text("utf-8").splitlines()
    ref = (root / "wmt17_sample.ref.txt").read_text("utf-8").splitlines()
    ours = bleu(hyps, ref)
    theirs = sacrebleu.corpus_bleu(hyps, [ref])
    assert f"{ours.score * 100:.2f}" == f"{theirs.score:.2f}"
    assert ours.score * 100 == pytest.approx(theirs.score, rel=1e-12)


nltk_tokens = st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f"]), min_size=1, max_size=12)


@pytest.mark.parametrize("method", range(8))
@settings(max_examples=80, deadline=None)
@given(hyp=nltk_tokens, refs=st.lists(nltk_tokens, min_size=1, max_size=3))
def test_sentence_equals_nltk(method: int, hyp: list[str], refs: list[list[str]]) -> None:
    fn = getattr(SmoothingFunction(), f"method{method}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want = sentence_bleu(refs, hyp, smoothing_function=fn)
        except (AssertionError, ZeroDivisionError):
            want = None  # NLTK method 6 asserts a non-zero trigram precision
        metric = BLEU(smooth_method=f"nltk{method}")
        built = References.build([[" ".join(r) for r in refs]], Preprocess("none"))
        (stats,) = overlap_stats([[" ".join(hyp)]], built, max_order=metric.order_needed)
        got = float(metric(stats)[0])
    if want is None:
        assert got == 0.0
    else:
        assert got == pytest.approx(float(want), rel=1e-9, abs=1e-300)


def test_sentence_bleu_exact_match_is_one() -> None:
    s = bleu(["the cat sat on the mat", "a b c d"], ["the cat sat on the mat", "a b c d"])
    assert s.score == 1.0
    assert s.sentences is not None and np.all(s.sentences == 1.0)


def test_mteval_smoothing_keeps_short_hypotheses() -> None:
    # mteval-v13a: orders a 2-token hypothesis cannot have count as log 1 = 0, so BLEU = BP.
    built = References.build([["Storm warning for the coast"]], Preprocess("none"))
    (stats,) = overlap_stats([["Storm warning"]], built)
    assert BLEU(smooth_method="mteval")(stats)[0] == pytest.approx(math.exp(1 - 5 / 2))
    assert BLEU(smooth_method="exp")(stats)[0] == 0.0


def _smoothed_row(correct: list[float], total: list[float], method: str, value: float) -> list[float]:
    """sacreBLEU's smoothing of one row, as its compute_bleu loops (fractions, not x100): 0 from the first order
    without a hypothesis n-gram on."""
    out, halvings = [0.0] * len(total), 1.0
    for i, (c, t) in enumerate(zip(correct, total)):
        if method == "add-k" and i >= 1:
            c, t = c + value, t + value
        if t == 0:
            break
        if c == 0 and method == "exp":
            halvings *= 2
            out[i] = 1.0 / (halvings * t)
        elif c == 0 and method == "floor":
            out[i] = value / t
        else:
            out[i] = c / t
    return out


@pytest.mark.parametrize("method", ["none", "floor", "add-k", "exp"])
def test_smoothed_precisions_are_sacrebleus_loop_on_strided_rows(method: str) -> None:
    # the vectorised smoothing (on strided views of Stats rows, copied only for add-k) equals the per-row loop bit
    # for bit, orders with t = 0 included, and leaves its inputs as they were
    from ngrameval.metrics.policy import smoothed_precisions

    rng = np.random.default_rng(3)
    values = rng.integers(0, 5, size=(2000, 9)).astype(np.float64)
    values[rng.random(values.shape) < 0.15] = 0
    total = values[:, 1:5]
    correct = np.minimum(values[:, 5:9], total)
    values[:, 5:9] = correct
    correct = values[:, 5:9]  # strided views of one array
    before = values.copy()
    value = {"none": 0.0, "floor": 0.1, "add-k": 1.0, "exp": 0.0}[method]
    prec, valid = smoothed_precisions(correct, total, method, value)
    want = [_smoothed_row(c, t, method, value) for c, t in zip(correct.tolist(), total.tolist())]
    assert prec.tolist() == want
    assert np.array_equal(values, before)
    seen = total.copy()
    seen[:, 1:] += value if method == "add-k" else 0.0  # add-k adds to the orders from 2 on
    assert valid.tolist() == [[bool(np.all(t[: i + 1] > 0)) for i in range(4)] for t in seen]


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), orders=st.integers(1, 7))
def test_reduce_last_is_numpys_reduction_bit_for_bit(seed: int, orders: int) -> None:
    # BLEU sums its log precisions column by column (policy.reduce_last): the same floats as numpy's sum
    from ngrameval.metrics.policy import reduce_last

    rng = np.random.default_rng(seed)
    logs = np.log(rng.random((1000, orders)) + 1e-300) * rng.choice([1.0, 1e-8, 1e8], size=(1000, orders))
    assert np.array_equal(reduce_last(np.add, logs), logs.sum(axis=-1))
    flags = rng.random((1000, orders)) < 0.7
    assert np.array_equal(reduce_last(np.logical_and, flags), flags.all(axis=-1))
    assert np.array_equal(reduce_last(np.logical_or, flags), flags.any(axis=-1))


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), orders=st.integers(1, 9), rows=st.integers(0, 40), share=st.floats(0, 1))
def test_rows_all_and_any_are_numpys(seed: int, orders: int, rows: int, share: float) -> None:
    # BLEU's all/any over the orders reads a row of 1, 2, 4 or 8 bools as one word: numpy's all/any, any layout
    from ngrameval.metrics.policy import rows_all, rows_any

    flags = np.random.default_rng(seed).random((rows, orders)) < share
    for a in (flags, np.asfortranarray(flags), flags[::-1], np.repeat(flags, 2, axis=1)[:, ::2]):
        assert np.array_equal(rows_all(a), a.all(axis=-1))
        assert np.array_equal(rows_any(a), a.any(axis=-1))


@pytest.mark.parametrize("smooth", ["exp", "none", "floor", "add-k", "mteval"])
@pytest.mark.parametrize("eff", [False, True])
def test_many_rows_are_scored_in_blocks_with_the_same_floats(smooth: str, eff: bool) -> None:
    # BLEU scores more than 8,192 rows block by block: the floats are those of scoring each few rows alone
    from ngrameval.ngrams.stats import Stats, stats_width

    rng = np.random.default_rng(7)
    n_rows = 20_001
    values = np.zeros((n_rows, stats_width(4, False)))
    hyp = rng.integers(0, 30, n_rows)
    values[:, 0], values[:, 1] = hyp, rng.integers(1, 30, n_rows)
    for n in range(4):
        total = np.maximum(hyp - n, 0)
        values[:, 3 + 4 + n] = total
        values[:, 3 + n] = rng.integers(0, total + 1)
    metric = BLEU(smooth_method=smooth, effective_order=eff)
    whole = metric(Stats(values, 4))
    pieces = np.concatenate([metric(Stats(values[a : a + 1000], 4)) for a in range(0, n_rows, 1000)])
    assert whole.shape == (n_rows,)
    assert np.array_equal(whole, pieces)
