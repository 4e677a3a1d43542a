"""NIST equals NLTK's corpus_nist on generated single-reference corpora.

With several references NLTK keeps only the best single reference per segment (and its length), which
mteval-v13a.pl does not; the multi-reference behaviour is pinned by the mteval golden tests instead."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from nltk.translate.nist_score import corpus_nist

from ngrameval import NIST, Preprocess, References, nist, overlap_stats

toks = st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f", "g"]), min_size=1, max_size=10)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(toks, st.lists(toks, min_size=1, max_size=1)), min_size=1, max_size=8), st.integers(1, 6))
def test_corpus_nist_equals_nltk(data, n) -> None:  # type: ignore[no-untyped-def]
    hyps = [" ".join(h) for h, _ in data]
    refs = [[" ".join(r) for r in rs] for _, rs in data]
    (stats,) = overlap_stats([hyps], References.build(refs, Preprocess("none")), max_order=n, nist=True)
    # NLTK divides by the number of hypothesis n-grams without a guard (mteval uses max(t, 1)).
    try:
        want = corpus_nist([[r.split() for r in rs] for rs in refs], [h.split() for h in hyps], n=n)
    except ZeroDivisionError:
        assume(False)
    assert float(NIST(n)(stats.total())) == pytest.approx(want, rel=1e-9)


def test_api_nist_identical_is_positive() -> None:
    assert nist(["the cat sat on the mat"], ["the cat sat on the mat"]).score > 0
