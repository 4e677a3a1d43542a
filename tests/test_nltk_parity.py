"""NLTK parity of BLEU ``nltk0`` .. ``nltk7``: sentence level (``sentence_bleu``) and corpus level
(``corpus_bleu``, via :meth:`BLEU.nltk_corpus` and ``ngrameval.bleu``), differential against the installed NLTK."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nltk.translate.bleu_score import SmoothingFunction, corpus_bleu, sentence_bleu

from ngrameval import BLEU, Preprocess, References, bleu, overlap_stats
from ngrameval.errors import ConfigError

SLOW_ENABLED = bool(os.environ.get("NGRAMEVAL_SLOW"))
WMT19 = Path(__file__).resolve().parents[2] / "shared" / "data" / "wmt19" / "de-en"
METHODS = [(m, n) for m in range(8) for n in range(1, 6) if not (m == 6 and n < 3)]

tokens = st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), min_size=1, max_size=9)
short = st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=3)  # shorter than most orders
segment = st.tuples(st.one_of(tokens, short), st.lists(st.one_of(tokens, short), min_size=1, max_size=3))


def _nltk(fn: Callable[..., Any], *args: Any) -> float | None:
    """NLTK's value, or None where NLTK fails (method 6 asserts a non-zero trigram precision)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return float(fn(*args))
        except (AssertionError, ZeroDivisionError):
            return None


def _stats(metric: BLEU, segments: list[tuple[list[str], list[list[str]]]]) -> Any:
    built = References.build([[" ".join(r) for r in refs] for _, refs in segments], Preprocess("none"))
    (stats,) = overlap_stats([[" ".join(h) for h, _ in segments]], built, max_order=metric.order_needed)
    return stats


@pytest.mark.parametrize(("method", "n"), METHODS)
@settings(max_examples=25, deadline=None)
@given(segments=st.lists(segment, min_size=1, max_size=4))
def test_sentence_and_corpus_equal_nltk(method: int, n: int, segments: list[tuple[list[str], list[list[str]]]]) -> None:
    fn = getattr(SmoothingFunction(), f"method{method}")
    weights = (1 / n,) * n
    metric = BLEU(n, f"nltk{method}")
    stats = _stats(metric, segments)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sent = metric(stats)
        corpus = metric.nltk_corpus(stats)
    for (hyp, refs), got in zip(segments, sent):
        want = _nltk(sentence_bleu, refs, hyp, weights, fn)
        assert got == (0.0 if want is None else pytest.approx(want, rel=1e-12, abs=1e-300))
    want_corpus = _nltk(corpus_bleu, [refs for _, refs in segments], [h for h, _ in segments], weights, fn)
    if want_corpus is not None:
        assert corpus == pytest.approx(want_corpus, rel=1e-12, abs=1e-300)


def test_method5_next_precision_is_the_5gram_one_and_can_exceed_1() -> None:
    # NLTK's method5 appends modified_precision(..., 5) whatever the order: 1.1269841..., not 1.1825
    h, r = "a b c d e f g", "a b c d e f x"
    want = sentence_bleu([r.split()], h.split(), (1.0,), smoothing_function=SmoothingFunction().method5)
    got = bleu([h], [r], tokenize="none", smooth="nltk5", n=1)
    assert got.sentences is not None
    assert got.sentences[0] == pytest.approx(want, rel=1e-12) and got.score == pytest.approx(want, rel=1e-12)
    assert got.score > 1.0 and want == pytest.approx(71 / 63, rel=1e-12)


def test_short_segment_uses_nltk_denominator_at_corpus_level() -> None:
    # "a b" has no 3- or 4-gram: NLTK counts a denominator of 1 for those orders in the corpus sums
    hyps, refs = ["a b", "a b c d e f", "c d e f g h"], ["a b", "a b c d e x", "c d e f g x"]
    want = corpus_bleu([[r.split()] for r in refs], [h.split() for h in hyps])
    got = bleu(hyps, refs, tokenize="none", smooth="nltk0")
    assert got.score == pytest.approx(want, rel=1e-12)
    summed = BLEU(4, "nltk0")(_stats(BLEU(4, "nltk0"), [(h.split(), [r.split()]) for h, r in zip(hyps, refs)]).total())
    assert abs(float(summed) - want) > 1e-3  # the BLEU of summed rows is not NLTK's corpus_bleu here


def test_nltk6_needs_order_3() -> None:
    with pytest.raises(ConfigError, match="max_order >= 3"):
        BLEU(2, "nltk6")


def _wmt19(methods: list[int]) -> None:
    if not WMT19.is_dir():
        pytest.skip("shared/data/wmt19 is not beside the repository")
    refs = (WMT19 / "newstest2019-deen-ref.en").read_text("utf-8").splitlines()
    hyps = (WMT19 / "system-outputs" / "newstest2019.Facebook_FAIR.6750.de-en").read_text("utf-8").splitlines()
    assert sum(len(h.split()) < 4 for h in hyps) > 0  # segments shorter than 4 tokens: where the two used to differ
    for method in methods:
        fn = getattr(SmoothingFunction(), f"method{method}")
        want = corpus_bleu([[r.split()] for r in refs], [h.split() for h in hyps], smoothing_function=fn)
        got = bleu(hyps, refs, tokenize="none", smooth=f"nltk{method}")
        assert got.score == pytest.approx(want, rel=1e-12), method


def test_wmt19_corpus_equals_nltk() -> None:
    _wmt19([0])


@pytest.mark.slow
@pytest.mark.skipif(not SLOW_ENABLED, reason="set NGRAMEVAL_SLOW=1 (8 NLTK corpus runs)")
def test_wmt19_corpus_equals_nltk_every_method() -> None:
    _wmt19(list(range(8)))
