"""Accumulators (update / merge / compute / reset) and the evaluate-style wrapper equal scoring all at once."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ngrameval as ne
from ngrameval.errors import ConfigError
from ngrameval.scale.batches import Accumulator, load

SPECS = "bleu,bleu:eff=yes,aev:alpha=0.3,n=2,chrf,chrf++,ter,rouge-1,rouge-l,rouge-su4,se"
word = st.sampled_from(["the", "cat", "sat", "on", "a", "mat", "dog", "0", "."])
text = st.lists(word, max_size=8).map(" ".join)
segment = st.tuples(text, st.lists(text, min_size=1, max_size=3))


@settings(max_examples=40, deadline=None)
@given(batches=st.lists(st.lists(segment, min_size=1, max_size=4), min_size=1, max_size=4))
@pytest.mark.slow
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


def test_batches_chunks_and_partitions_sum_to_the_same_bits() -> None:
    """Issue 30, item 2: one summation of rows with one exactness rule (ngrams.stats.add_rows). The Accumulator's
    batches, the running sum of chunked files and Dask partitions (scale.chunks.fold) and the whole corpus in memory
    give identical bits for float rows (ROUGE, SE sentence means); the Accumulator used to add each batch's own sum,
    which differs in the last bits."""
    import itertools

    import numpy as np

    from ngrameval.api import measure
    from ngrameval.scale.chunks import fold

    rng = np.random.default_rng(7)
    words = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran", "far", "away"]
    hyps = [" ".join(rng.choice(words, size=rng.integers(1, 9))) for _ in range(300)]
    refs = [[" ".join(rng.choice(words, size=rng.integers(1, 9)))] for _ in range(300)]
    specs = "rouge-l,rouge-su4,se,chrf"
    cuts = [0, 37, 101, 102, 250, 300]
    acc = Accumulator(specs)
    summed = None
    for a, b in itertools.pairwise(cuts):
        acc.update(hyps[a:b], refs[a:b])
        rows = measure({"system": hyps[a:b]}, refs[a:b], specs)
        summed = fold(summed, (rows, frozenset({1}), ()))
    assert summed is not None
    whole = measure({"system": hyps}, refs, specs)
    for r, folded, (name, total) in zip(whole, summed.rows, acc.sums().items(), strict=True):
        assert name == r.metric
        at_once = r.values[0].sum(axis=0)
        assert total.tobytes() == at_once.tobytes(), name
        assert folded.values[0][0].tobytes() == at_once.tobytes(), name


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


HYPS = ["the cat sat on the mat", "a dog barks loudly today", "nothing in common here"]
REFS = [["the cat sat on a mat", "a cat sat on the mat"], ["the dog barks loudly"], ["it is raining"]]


def test_evaluate_names_give_evaluate_shaped_results() -> None:
    """load("sacrebleu"|"bleu"|"rouge"|"chrf"|"ter") returns the keys and scales of evaluate.load(name).compute()
    (checked against the libraries evaluate's scripts call: sacreBLEU and rouge-score)."""
    import numpy as np
    import sacrebleu
    from rouge_score import rouge_scorer

    sacre = sacrebleu.BLEU().corpus_score(HYPS, [[r[0] for r in REFS]])
    one = [[r[0]] for r in REFS]
    got = load("sacrebleu").compute(predictions=HYPS, references=one)
    assert got["score"] == pytest.approx(sacre.score, abs=1e-9)
    assert got["counts"] == sacre.counts and got["totals"] == sacre.totals
    assert got["precisions"] == pytest.approx(sacre.precisions) and got["bp"] == pytest.approx(sacre.bp)
    assert (got["sys_len"], got["ref_len"]) == (sacre.sys_len, sacre.ref_len)
    plain = sacrebleu.BLEU(smooth_method="none").corpus_score(HYPS, [[r[0] for r in REFS]])
    bleu = load("bleu").compute(predictions=HYPS, references=one)
    assert set(bleu) == {"bleu", "precisions", "brevity_penalty", "length_ratio", "translation_length",
                         "reference_length"}  # fmt: skip
    assert bleu["bleu"] == pytest.approx(plain.score / 100, abs=1e-12)
    assert bleu["precisions"] == pytest.approx([p / 100 for p in plain.precisions])
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL", "rougeLsum"])
    each = [scorer.score_multi(r, h) for h, r in zip(HYPS, REFS)]
    rouge = load("rouge").compute(predictions=HYPS, references=REFS)
    assert list(rouge) == ["rouge1", "rouge2", "rougeL", "rougeLsum"]
    for k, v in rouge.items():
        assert v == pytest.approx(float(np.mean([s[k].fmeasure for s in each])), abs=1e-12)
    chrf = load("chrf").compute(predictions=HYPS, references=one)
    assert chrf == {"score": pytest.approx(sacrebleu.CHRF().corpus_score(HYPS, [[r[0] for r in REFS]]).score),
                    "char_order": 6, "word_order": 0, "beta": 2}  # fmt: skip
    ter = sacrebleu.TER().corpus_score(HYPS, [[r[0] for r in REFS]])
    assert load("ter").compute(predictions=HYPS, references=one) == {
        "score": pytest.approx(ter.score),
        "num_edits": ter.num_edits,
        "ref_length": ter.ref_length,
    }


def test_bare_rouge_stands_for_rouge_1_2_l() -> None:
    """-m rouge and ne.rouge(..., "rouge") are ROUGE-1, ROUGE-2 and ROUGE-L (as `ngrameval metrics` says)."""
    from ngrameval.metrics.registry import parse_specs

    assert [s.metric.display_name() for s in parse_specs("bleu,rouge")] == ["BLEU", "ROUGE-1", "ROUGE-2", "ROUGE-L"]
    assert [s.metric.display_name() for s in parse_specs("rouge:stat=r")] == ["ROUGE-1-R", "ROUGE-2-R", "ROUGE-L-R"]
    got = ne.rouge(["the cat sat"], ["the cat sat on"], ["rouge"])
    assert list(got) == ["rouge-1", "rouge-2", "rouge-l"]
    frame = got.to_pandas()
    assert list(frame.index) == ["rouge-1", "rouge-2", "rouge-l"]
    assert frame.loc["rouge-1", "f"] == pytest.approx(got["rouge-1"].f)
