"""Accumulators (update / merge / compute / reset) and the evaluate-style wrapper equal scoring all at once."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ngrameval as ne
from ngrameval.errors import ConfigError
from ngrameval.stream import Accumulator, load

SPECS = "bleu,bleu:eff=yes,aev:alpha=0.3,n=2,chrf,chrf++,ter,rouge-1,rouge-l,rouge-su4,se"
word = st.sampled_from(["the", "cat", "sat", "on", "a", "mat", "dog", "0", "."])
text = st.lists(word, max_size=8).map(" ".join)
segment = st.tuples(text, st.lists(text, min_size=1, max_size=3))


@settings(max_examples=40, deadline=None)
@given(batches=st.lists(st.lists(segment, min_size=1, max_size=4), min_size=1, max_size=4))
def test_batches_add_up_to_the_corpus(batches: list[list[tuple[str, list[str]]]]) -> None:
    acc = Accumulator(SPECS)
    halves = [Accumulator(SPECS), Accumulator(SPECS)]
    for k, batch in enumerate(batches):
        acc.update([h for h, _ in batch], [r for _, r in batch])
        halves[k % 2].update([h for h, _ in batch], [r for _, r in batch])
    every = [seg for batch in batches for seg in batch]
    whole = ne.score({"system": [h for h, _ in every]}, [r for _, r in every], SPECS)
    got = acc.compute()
    merged = halves[0].merge(halves[1]).compute() if len(batches) > 1 else got
    for s in whole:
        assert got[s.metric].score == pytest.approx(s.score, rel=1e-12, abs=1e-15), s.metric
        assert merged[s.metric].score == pytest.approx(s.score, rel=1e-12, abs=1e-15), s.metric
        assert got[s.metric].signature.split("|")[2:] == s.signature.split("|")[2:]
    assert acc.segments == len(every)


def test_reset_nist_and_empty() -> None:
    acc = Accumulator("bleu")
    with pytest.raises(ConfigError, match="nothing to score"):
        acc.compute()
    acc.update(["a b"], ["a b"])
    acc.reset()
    acc.update(["x y z w"], ["a b c d"])
    assert acc.compute()["BLEU"].score == 0.0 and acc.segments == 1
    with pytest.raises(ConfigError, match="NIST cannot be accumulated"):
        Accumulator("bleu,nist")


def test_evaluate_style_compute_and_add_batch() -> None:
    hyps, refs = ["the cat sat on the mat", "a dog"], [["the cat sat on a mat"], ["a dog barks", "the dog"]]
    metric = load("bleu,chrf")
    once = metric.compute(predictions=hyps, references=refs)
    expected = {s.metric: s for s in ne.score({"system": hyps}, refs, "bleu,chrf")}
    assert once == {k: {"score": s.score * 100, "signature": s.signature} for k, s in expected.items()}
    for h, r in zip(hyps, refs):
        metric.add_batch(predictions=[h], references=[r])
    assert metric.compute() == once
    with pytest.raises(ConfigError):  # compute() started over
        metric.compute()
