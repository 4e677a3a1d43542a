"""Paired approximate randomisation and bootstrap: the block algebra against text-level recomputation with
sacreBLEU, p-values against sacreBLEU / Moses / MultEval on WMT17, corrections, rankings and bad input."""

from __future__ import annotations

import math
import tarfile
from pathlib import Path

import numpy as np
import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.conftest import line

import ngrameval as ne
from ngrameval.errors import ConfigError, InputError
from ngrameval.meta import adjust_p, compare, paired_test, rank
from ngrameval.meta.resample import BLOCK_ENTRIES, WeightedSums, blocks, bootstrap_counts, exact_dtype, swap_masks
from ngrameval.meta.significance import DEFAULT_SEED

TOL = 1e-10


@st.composite
def systems(draw: st.DrawFn, n_sys: int = 3) -> tuple[list[list[str]], list[str]]:
    """``n_sys`` systems and one reference each, over 2..10 segments."""
    n = draw(st.integers(2, 10))
    return [[draw(line) for _ in range(n)] for _ in range(n_sys)], [draw(line) for _ in range(n)]


def sacre_bleu(hyps: list[str], refs: list[str]) -> float:
    return float(sacrebleu.corpus_bleu(hyps, [refs]).score / 100)


def plain_ar_counts(sys_a: list[str], sys_b: list[str], refs: list[str], masks: np.ndarray) -> int:
    """Trials whose text-level |BLEU(A*) - BLEU(B*)| reaches the observed one (sacreBLEU scores the texts)."""
    observed = abs(sacre_bleu(sys_a, refs) - sacre_bleu(sys_b, refs))
    c = 0
    for m in masks:
        a = [y if s else x for x, y, s in zip(sys_a, sys_b, m)]
        b = [x if s else y for x, y, s in zip(sys_a, sys_b, m)]
        c += abs(sacre_bleu(a, refs) - sacre_bleu(b, refs)) >= observed - TOL * max(observed, 1.0)
    return c


@settings(max_examples=15, deadline=None)
@given(systems(3), st.booleans())
@pytest.mark.slow
def test_ar_equals_text_level_recomputation(data: tuple[list[list[str]], list[str]], baseline: bool) -> None:
    """Every trial's pseudo-systems, rebuilt as text and scored by sacreBLEU, give the same counts: the
    matrix algebra (all systems at once, or pair differences against a baseline) recomputes BLEU exactly."""
    outs, refs = data
    names = ["s0", "s1", "s2"]
    n_trials, seed = 40, 7
    res = compare(
        dict(zip(names, outs)),
        refs,
        "bleu",
        n_resamples=n_trials,
        n_confidence=5,
        seed=seed,
        correction="none",
        baseline="s0" if baseline else None,
    )
    masks = swap_masks(np.random.default_rng(seed), n_trials, len(refs))  # one block: the same draws
    for p in res.metrics[0].pairs:
        i, j = names.index(p.system_a), names.index(p.system_b)
        c = plain_ar_counts(outs[i], outs[j], refs, masks)
        assert p.p_value == (c + 1) / (n_trials + 1)


@settings(max_examples=15, deadline=None)
@given(systems(2))
def test_bootstrap_equals_text_level_recomputation(data: tuple[list[list[str]], list[str]]) -> None:
    """Resampled corpora rebuilt as text: sacreBLEU's scores give the same p, win rate, mean and interval."""
    (a, b), refs = data
    n_res, seed = 30, 3
    res = compare({"a": a, "b": b}, refs, "bleu", test="bs", n_resamples=n_res, seed=seed, correction="none")
    counts = bootstrap_counts(np.random.default_rng(seed), n_res, len(refs))
    scores = np.array(
        [
            [sacre_bleu([x for x, k in zip(out, w) for _ in range(k)], [r for r, k in zip(refs, w) for _ in range(k)])]
            for w in counts
            for out in (a, b)
        ]
    ).reshape(n_res, 2)
    d = scores[:, 0] - scores[:, 1]
    observed = abs(sacre_bleu(a, refs) - sacre_bleu(b, refs))
    spread = np.abs(d) - np.abs(d).mean()
    c = int(np.sum(spread >= observed - TOL * max(observed, 1.0)))
    m = res.metrics[0]
    assert m.pairs[0].p_value == pytest.approx((c + 1) / (n_res + 1), abs=1e-12)
    assert m.pairs[0].win_rate == pytest.approx(float(np.mean(d > 0)), abs=1e-12)
    assert m.systems[0].mean == pytest.approx(float(scores[:, 0].mean()), abs=1e-9)
    lo, hi = np.quantile(scores[:, 1], [0.025, 0.975])
    assert (m.systems[1].ci_low, m.systems[1].ci_high) == pytest.approx((lo, hi), abs=1e-9)


@settings(max_examples=10, deadline=None)
@given(systems(2))
def test_macro_metric_resamples_sentence_means(data: tuple[list[list[str]], list[str]]) -> None:
    """SE (a mean of sentence scores) is resampled as rows (score, 1): AR counts from the sentence scores."""
    (a, b), refs = data
    n_trials, seed = 60, 11
    res = compare({"a": a, "b": b}, refs, "se", n_resamples=n_trials, n_confidence=3, seed=seed)
    sa, sb = ne.se(a, refs).sentences, ne.se(b, refs).sentences
    assert sa is not None and sb is not None
    masks = swap_masks(np.random.default_rng(seed), n_trials, len(refs)).astype(bool)
    observed = abs(sa.mean() - sb.mean())
    star = np.abs(np.where(masks, sb, sa).mean(axis=1) - np.where(masks, sa, sb).mean(axis=1))
    c = int(np.sum(star >= observed - TOL * max(observed, 1.0)))
    assert res.metrics[0].pairs[0].p_value == (c + 1) / (n_trials + 1)


def test_blocks_cover_every_resample_within_the_budget() -> None:
    sizes = list(blocks(10_000, 3_004))
    assert sum(sizes) == 10_000 and max(sizes) * 3_004 <= BLOCK_ENTRIES
    assert list(blocks(5, 0)) == [5]


def test_weighted_sums_exact_in_float32_and_float64() -> None:
    rng = np.random.default_rng(0)
    ints = rng.integers(-40, 40, size=(500, 6)).astype(np.float64)
    floats = rng.random((500, 3))
    assert exact_dtype(ints, 1, 500) is np.float32 and exact_dtype(floats, 1, 500) is np.float64
    assert exact_dtype(np.full((500, 1), 2.0**20), 500, 500) is np.float64  # partial sums could pass 2^24
    w = bootstrap_counts(rng, 20, 500)
    got = WeightedSums([ints, floats], 500, 500)(w)
    assert np.array_equal(got[0], w.astype(np.float64) @ ints)
    np.testing.assert_allclose(got[1], w @ floats, rtol=1e-12)


# --- WMT17 en-de: sacreBLEU's own significance fixture (16 systems, 3,004 segments) -------------------------

WMT17 = "wmt17-en-de"
BASELINE = "newstest2017.LIUM-NMT.4900.en-de"
# sacreBLEU test/test_significance.py: Moses bootstrap (2,000 samples, mean of 3 runs) and MultEval AR
# (10,000 trials) p-values of each system against LIUM-NMT, BLEU, tokenize="none".
MOSES_BS = {
    "C-3MA.4959": 0.00000,
    "FBK.4870": 0.01267,
    "KIT.4950": 0.02233,
    "LMU-nmt-reranked.4934": 0.04383,
    "LMU-nmt-single.4893": 0.20783,
    "online-A.0": 0.00000,
    "online-B.0": 0.38100,
    "online-F.0": 0.00000,
    "online-G.0": 0.00000,
    "PROMT-Rule-based.4735": 0.00000,
    "RWTH-nmt-ensemble.4921": 0.01167,
    "SYSTRAN.4847": 0.20983,
    "TALP-UPC.4834": 0.00000,
    "uedin-nmt.4722": 0.00000,
    "xmu.4910": 0.25483,
}
MULTEVAL_AR = {
    "C-3MA.4959": 0.0001,
    "FBK.4870": 0.0218,
    "KIT.4950": 0.0410,
    "LMU-nmt-reranked.4934": 0.09029,
    "LMU-nmt-single.4893": 0.58494,
    "online-A.0": 0.0001,
    "online-B.0": 0.94111,
    "online-F.0": 0.0001,
    "online-G.0": 0.0001,
    "PROMT-Rule-based.4735": 0.0001,
    "RWTH-nmt-ensemble.4921": 0.0207,
    "SYSTRAN.4847": 0.59914,
    "TALP-UPC.4834": 0.0001,
    "uedin-nmt.4722": 0.0001,
    "xmu.4910": 0.71073,
}


def mc_tolerance(p: float, *runs: int) -> float:
    """4 standard errors of the difference of independent Monte-Carlo p estimates with these sample sizes
    (p(1 - p) floored at that of one hit), plus the (c + 1)/(R + 1) offset of the smallest run."""
    var = max(p * (1 - p), 1 / min(runs))
    return 4 * math.sqrt(sum(var / r for r in runs)) + 1 / (min(runs) + 1)


@pytest.fixture(scope="module")
def wmt17() -> tuple[dict[str, list[str]], list[str]]:
    """The 16 systems (LIUM-NMT, the baseline, first) and the reference, stripped as sacreBLEU's test reads them."""
    with tarfile.open(Path(__file__).parent / "data" / "wmt17-en-de.tar.bz2") as tar:

        def read(name: str) -> list[str]:
            fh = tar.extractfile(f"wmt17-en-de/{name}")
            assert fh is not None
            return [ln.strip() for ln in fh.read().decode("utf-8").split("\n")[:-1]]

        names = [f"newstest2017.{k}.en-de" for k in ["LIUM-NMT.4900", *MOSES_BS]]
        return {n: read(n + ".txt") for n in names}, read("reference.txt")


def _short(name: str) -> str:
    return name.removeprefix("newstest2017.").removesuffix(".en-de")


@pytest.mark.slow
def test_wmt17_bootstrap_identical_to_sacrebleu(wmt17: tuple[dict[str, list[str]], list[str]]) -> None:
    """Same seed, same draws (sacreBLEU's rng.choice(n, (B, n)) is rng.integers(0, n, (B, n))), same statistic:
    sacreBLEU's paired-bootstrap p-values and bootstrap means, to rounding."""
    from sacrebleu.metrics import BLEU
    from sacrebleu.significance import PairedTest

    systems, ref = wmt17
    ours = compare(systems, ref, "bleu", tokenize="none", test="bs", n_resamples=2000, seed=12345, baseline=BASELINE)
    named = list(systems.items())
    theirs = PairedTest(named, {"BLEU": BLEU(references=[ref], tokenize="none")}, None, "bs", 2000)()[1]["BLEU"]
    m = ours.metrics[0]
    for k, pair in enumerate(m.pairs, 1):
        assert pair.system_b == named[k][0]
        assert pair.score_b * 100 == pytest.approx(theirs[k].score, abs=1e-9)
        assert pair.p_value == pytest.approx(theirs[k].p_value, abs=1e-12)
        assert m.systems[k].mean * 100 == pytest.approx(theirs[k].mean, abs=1e-6)  # sacreBLEU sums float32


#: the systems whose AR p-values sacreBLEU computes live (its 10,000 trials over all 15 take 31 s; these 4, p from
#: 0.02 to 0.94 in MultEval's, take a quarter of that)
LIVE = ("FBK.4870", "KIT.4950", "LMU-nmt-single.4893", "online-B.0")


@pytest.mark.slow
def test_wmt17_against_sacrebleu_ar_moses_and_multeval(wmt17: tuple[dict[str, list[str]], list[str]]) -> None:
    """AR p-values agree with sacreBLEU's (10,000 trials each, live, for the systems of :data:`LIVE`) and with
    MultEval's; bootstrap p-values with Moses' — each within 4 Monte-Carlo standard errors of the difference
    (:func:`mc_tolerance`)."""
    from sacrebleu.metrics import BLEU
    from sacrebleu.significance import PairedTest

    systems, ref = wmt17
    named = [(n, t) for n, t in systems.items() if n == BASELINE or _short(n) in LIVE]
    theirs = PairedTest(named, {"BLEU": BLEU(references=[ref], tokenize="none")}, None, "ar", 10_000)()[1]["BLEU"]
    sacre_p = {_short(n): theirs[k].p_value for k, (n, _) in enumerate(named) if n != BASELINE}
    assert sorted(sacre_p) == sorted(LIVE)
    ar = compare(systems, ref, "bleu", tokenize="none", n_resamples=10_000, n_confidence=10, baseline=BASELINE)
    ar_big = compare(systems, ref, "bleu", tokenize="none", n_resamples=100_000, n_confidence=10, baseline=BASELINE)
    bs_big = compare(systems, ref, "bleu", tokenize="none", test="bs", n_resamples=20_000, baseline=BASELINE)
    for p, p_big, b_big in zip(ar.metrics[0].pairs, ar_big.metrics[0].pairs, bs_big.metrics[0].pairs, strict=True):
        name = _short(p.system_b)
        if name in sacre_p:
            assert abs(p.p_value - sacre_p[name]) <= mc_tolerance(sacre_p[name], 10_000, 10_000), name
        assert abs(p_big.p_value - MULTEVAL_AR[name]) <= mc_tolerance(MULTEVAL_AR[name], 10_000, 100_000), name
        assert abs(b_big.p_value - MOSES_BS[name]) <= mc_tolerance(MOSES_BS[name], 6_000, 20_000), name


@pytest.mark.slow
def test_wmt17_all_pairs_ranking(wmt17: tuple[dict[str, list[str]], list[str]]) -> None:
    systems, ref = wmt17
    with pytest.warns(UserWarning, match="smallest reachable p"):
        compare(systems, ref, "bleu", tokenize="none", n_resamples=2000, n_confidence=10)  # 120 x 1/2001 > 0.05
    # the bootstrap's p is (c + 1) / (n + 1) too: 1,000 resamples over 120 pairs cannot reach 0.05 (needs 2,400)
    floor = r"1000 bootstrap resamples .* use at least 2400 bootstrap resamples \(n_resamples=2400\)$"
    with pytest.warns(UserWarning, match=floor):
        compare(systems, ref, "bleu", tokenize="none", test="bs", n_resamples=1000)
    res = compare(systems, ref, "bleu", tokenize="none", n_confidence=200)
    m = res.metrics[0]
    assert len(m.pairs) == 16 * 15 // 2 and m.ranking is not None
    scores = [e.score for e in m.ranking]
    assert scores == sorted(scores, reverse=True)
    assert _short(m.ranking[0].system) == "uedin-nmt.4722" and m.ranking[0].rank_high == 1
    # every pair inside a group is not significant, and the rank range agrees with the significant pairs
    sig = {(p.system_a, p.system_b): p.significant for p in m.pairs}
    sig.update({(b, a): s for (a, b), s in list(sig.items())})
    for letter in {g for e in m.ranking for g in e.groups}:
        members = [e.system for e in m.ranking if letter in e.groups]
        assert not any(sig[x, y] for x in members for y in members if x != y)
    for e in m.ranking:
        better = sum(sig[e.system, o.system] for o in m.ranking if o.score > e.score)
        assert e.rank_low == 1 + better


# --- properties, corrections, rankings ------------------------------------------------------------------------


@settings(max_examples=10, deadline=None)
@given(systems(2), st.sampled_from(["ar", "bs"]))
def test_same_seed_same_result_and_self_comparison(data: tuple[list[list[str]], list[str]], test: str) -> None:
    (a, b), refs = data
    kw = {"test": test, "n_resamples": 50, "n_confidence": 20}
    first = compare({"a": a, "b": b}, refs, "bleu,se", seed=5, **kw)  # type: ignore[arg-type]
    assert first == compare({"a": a, "b": b}, refs, "bleu,se", seed=5, **kw)  # type: ignore[arg-type]
    drawn = compare({"a": a, "b": b}, refs, "bleu", seed=None, **kw)  # type: ignore[arg-type]
    assert drawn == compare({"a": a, "b": b}, refs, "bleu", seed=drawn.seed, **kw)  # type: ignore[arg-type]
    assert f"seed:{drawn.seed}" in drawn.metrics[0].signature
    for m in first.metrics:
        assert 1 / 51 <= m.pairs[0].p_value <= 1
    same = compare({"a": a, "b": list(a)}, refs, "bleu,se", seed=5, **kw)  # type: ignore[arg-type]
    for m in same.metrics:
        assert m.pairs[0].p_value == 1.0 and m.pairs[0].delta == 0.0 and not m.pairs[0].significant
        assert len({e.groups for e in m.ranking or ()}) == 1


def test_clearly_different_systems_reach_the_smallest_p() -> None:
    refs = [f"the cat number {i} sat on the mat today" for i in range(60)]
    good = list(refs)
    bad = [f"dogs {i} ran away" for i in range(60)]
    for test, n in (("ar", 999), ("bs", 499)):
        m = compare({"good": good, "bad": bad}, refs, "bleu", test=test, n_resamples=n).metrics[0]
        assert m.pairs[0].p_value == 1 / (n + 1) and m.pairs[0].significant
        assert [e.system for e in m.ranking or ()] == ["good", "bad"]
        assert m.systems[0].ci_low == m.systems[0].ci_high == 1.0  # a perfect system stays perfect
    bs = compare({"good": good, "bad": bad}, refs, "bleu", test="bs", n_resamples=99).metrics[0]
    assert bs.pairs[0].win_rate == 1.0


def test_holm_and_bonferroni() -> None:
    p = np.array([0.01, 0.04, 0.03, 0.005])
    # Holm (1979): sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 -> 0.02, 0.03, 0.06, 0.04 -> running max
    np.testing.assert_allclose(adjust_p(p, "holm"), [0.03, 0.06, 0.06, 0.02])
    np.testing.assert_allclose(adjust_p(p, "bonferroni"), [0.04, 0.16, 0.12, 0.02])
    np.testing.assert_array_equal(adjust_p(p, "none"), p)
    assert adjust_p(np.array([0.6, 0.9]), "bonferroni").tolist() == [1.0, 1.0]
    with pytest.raises(ConfigError, match="holm"):
        adjust_p(p, "fdr")


@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=20))
def test_holm_lies_between_raw_and_bonferroni(ps: list[float]) -> None:
    p = np.array(ps)
    holm = adjust_p(p, "holm")
    assert np.all(holm >= p - 1e-15) and np.all(holm <= adjust_p(p, "bonferroni") + 1e-15)
    order = np.argsort(p, kind="stable")
    assert np.all(np.diff(holm[order]) >= -1e-15)  # monotone in the raw p-values


def test_rank_groups_and_ranges() -> None:
    names = ["a", "b", "c", "d"]
    scores = np.array([4.0, 3.0, 2.0, 1.0])
    none = np.zeros((4, 4), dtype=bool)
    assert [(e.rank_low, e.rank_high, e.groups) for e in rank(names, scores, none)] == [(1, 4, "a")] * 4
    every = ~np.eye(4, dtype=bool)
    assert [(e.rank_low, e.rank_high, e.groups) for e in rank(names, scores, every)] == [
        (1, 1, "a"),
        (2, 2, "b"),
        (3, 3, "c"),
        (4, 4, "d"),
    ]
    # a differs from c and d, b from d only: overlapping groups {a, b} and {b, c}, then {c, d}
    sig = np.zeros((4, 4), dtype=bool)
    for i, j in ((0, 2), (0, 3), (1, 3)):
        sig[i, j] = sig[j, i] = True
    got = [(e.system, e.rank_low, e.rank_high, e.groups) for e in rank(names, scores, sig)]
    assert got == [("a", 1, 2, "a"), ("b", 1, 3, "ab"), ("c", 2, 4, "bc"), ("d", 3, 4, "c")]
    # input order does not matter: systems are ranked by score
    shuffled = rank(["d", "b", "a", "c"], np.array([1.0, 3.0, 4.0, 2.0]), sig[np.ix_([3, 1, 0, 2], [3, 1, 0, 2])])
    assert [(e.system, e.groups) for e in shuffled] == [(g[0], g[3]) for g in got]


def _share_exactly_the_non_significant(groups: list[str], sig: np.ndarray) -> bool:
    n = len(groups)
    return all(bool(set(groups[i]) & set(groups[j])) == (not sig[i, j]) for i in range(n) for j in range(n) if i != j)


@given(st.integers(1, 9).flatmap(lambda n: st.lists(st.booleans(), min_size=n * n, max_size=n * n)))
@settings(max_examples=300, deadline=None)
@pytest.mark.slow
def test_letter_groups_follow_the_tests(cells: list[bool]) -> None:
    """Compact letter display (Piepho 2004): two systems share a letter if and only if their difference is not
    significant, for any symmetric significance matrix (even one that does not follow the scores)."""
    n = round(len(cells) ** 0.5)
    sig = np.array(cells, dtype=bool).reshape(n, n)
    sig = np.triu(sig, 1) | np.triu(sig, 1).T
    entries = rank([f"s{i}" for i in range(n)], np.arange(n, 0, -1, dtype=float), sig)
    groups = [e.groups for e in entries]
    assert all(groups)
    assert _share_exactly_the_non_significant(groups, sig)
    assert groups[0].startswith("a")  # the top system is in group a


def test_letter_groups_of_a_system_that_differs_from_none() -> None:
    """The demo's case: M1 ranks 1-16 (differs from no system) while the top system M22 differs from some
    systems below M1; M1 must share a letter with M22 and with every other system (the run-of-adjacent-systems
    groups put M1 in 'b' only, contradicting its rank)."""
    names = ["M22", "M23", "M15", "M1", "M12"]
    sig = np.zeros((5, 5), dtype=bool)
    for i, j in ((0, 2), (0, 4)):  # M22 beats M15 and M12; M1 differs from nobody
        sig[i, j] = sig[j, i] = True
    got = {e.system: (e.rank_low, e.rank_high, e.groups) for e in rank(names, np.array([5.0, 4, 3, 2, 1]), sig)}
    assert got["M1"][:2] == (1, 5)
    assert set(got["M1"][2]) >= set(got["M22"][2]) | set(got["M15"][2]) | set(got["M12"][2])
    assert _share_exactly_the_non_significant([got[n][2] for n in names], sig)
    assert got["M22"][2] == "a" and "a" not in got["M15"][2]


@pytest.mark.slow
def test_letter_groups_in_the_demo_follow_the_tests() -> None:
    from ngrameval.cli.demo import run_demo

    comparison = run_demo()[1]
    (m,) = comparison.metrics
    assert m.ranking is not None
    groups = {e.system: e.groups for e in m.ranking}
    sig = {frozenset((p.system_a, p.system_b)): p.significant for p in m.pairs}
    for pair, significant in sig.items():
        a, b = sorted(pair)
        assert bool(set(groups[a]) & set(groups[b])) == (not significant), (a, b)
    entry = {e.system: e for e in m.ranking}
    assert (entry["M1"].rank_low, entry["M1"].rank_high) == (1, 16)
    assert set(groups["M1"]) & set(groups["M22"])


@pytest.mark.filterwarnings("ignore:with .* AR trials:UserWarning")
def test_signature_records_the_test() -> None:
    res = compare({"a": ["x y"], "b": ["x z"]}, ["x y"], "bleu", n_resamples=9, n_confidence=4, seed=1)
    assert "|ar:9|bs:4|seed:1|correction:holm|version:" in res.metrics[0].signature
    bs = compare({"a": ["x y"], "b": ["x z"]}, ["x y"], "bleu", test="bs", n_resamples=9, seed=1)
    assert "|bs:9|seed:1|" in bs.metrics[0].signature and res.seed == 1
    assert compare({"a": ["x"], "b": ["y"]}, ["x"], "bleu", n_resamples=3).seed == DEFAULT_SEED


def test_bad_input() -> None:
    two = {"a": ["x y", "z"], "b": ["x", "z z"]}
    refs = ["x y", "z"]
    with pytest.raises(InputError, match="at least two systems"):
        compare({"a": ["x y", "z"]}, refs)
    with pytest.raises(InputError, match="system 'b' has 1 segment but the references have 2"):
        compare({"a": ["x y", "z"], "b": ["x"]}, refs)
    with pytest.raises(InputError, match="no segments"):
        compare({"a": [], "b": []}, [])
    with pytest.raises(ConfigError, match=">= 1"):
        compare(two, refs, n_resamples=0)
    with pytest.raises(ConfigError, match=">= 1"):
        compare(two, refs, n_confidence=0)
    with pytest.raises(ConfigError, match="unknown test"):
        compare(two, refs, test="permutation")
    with pytest.raises(ConfigError, match="unknown correction"):
        compare(two, refs, correction="fdr")
    with pytest.raises(ConfigError, match="baseline 'c'"):
        compare(two, refs, baseline="c")
    with pytest.raises(ConfigError, match="alpha"):
        compare(two, refs, alpha=1.5)
    with pytest.raises(ConfigError, match="confidence"):
        compare(two, refs, confidence=95)
    with pytest.raises(ConfigError, match="source"):
        compare(two, refs, "pinc")
    with pytest.raises(ConfigError, match="no metric"):
        paired_test([], ["a", "b"])


def test_pinc_compared_with_its_source() -> None:
    src = ["the cat sat on the mat", "a dog ran in the park", "birds fly south"]
    a = ["the cat sat on the mat", "a dog ran in the park", "birds fly south"]  # copies: PINC 0
    b = ["a feline rested upon a rug", "the hound sprinted through green grass", "flocks migrate"]
    res = compare({"a": a, "b": b}, src, "pinc", source=src, n_resamples=99)
    m = res.metrics[0]
    assert m.systems[0].score == 0.0 and m.systems[1].score == pytest.approx(ne.pinc(b, src).score)
    assert m.signature.startswith("PINC|nrefs:src|")


@pytest.mark.filterwarnings("ignore:with .* (AR trials|bootstrap resamples):UserWarning")
def test_one_interval_per_system_and_seed() -> None:
    """The interval of a system does not depend on the test (AR draws its masks first) nor on the command:
    compare (AR), compare --paired-bs and score --confidence (``intervals``) give the same numbers."""
    from ngrameval.api import measure
    from ngrameval.meta.significance import intervals
    from ngrameval.metrics.registry import parse_specs

    systems = {"a": ["the cat sat on the mat", "a dog", "it rains", "we go"],
               "b": ["the cat is on a mat", "dog", "it is raining", "we went"],
               "c": ["cat", "a dog barks", "rain today", "going"]}  # fmt: skip
    refs = ["the cat sat on the mat", "a dog barks", "it is raining", "we went"]
    rows = measure(systems, refs, parse_specs("bleu,ter"))
    ar = paired_test(rows, list(systems), n_resamples=50, n_confidence=200, seed=7)
    bs = paired_test(rows, list(systems), test="bs", n_resamples=200, seed=7)
    alone = intervals(rows, n_resamples=200, seed=7)
    for m_ar, m_bs, (lo, hi) in zip(ar.metrics, bs.metrics, alone, strict=True):
        assert [(s.ci_low, s.ci_high) for s in m_ar.systems] == [(s.ci_low, s.ci_high) for s in m_bs.systems]
        assert [(s.ci_low, s.ci_high) for s in m_ar.systems] == list(zip(lo.tolist(), hi.tolist(), strict=True))


@pytest.mark.parametrize("baseline", [None, "s0"])
def test_ar_trials_scored_a_few_at_a_time_count_the_same(monkeypatch: pytest.MonkeyPatch, baseline: str | None) -> None:
    """A block of AR trials is scored in parts of about BLOCK_ENTRIES values (a block of 10,000 trials of 120 pairs
    made 220 MB arrays): the masks are drawn as before and every p-value is the same whatever the part, with
    integer rows (BLEU, chrF) and fractional ones (ROUGE-L's sentence means, TER)."""
    from ngrameval.meta import significance

    rng = np.random.default_rng(11)
    words = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran", "fast", "today"]
    refs = [" ".join(rng.choice(words, rng.integers(3, 9))) for _ in range(30)]
    outs = {f"s{k}": [" ".join(rng.choice(words, rng.integers(2, 9))) for _ in refs] for k in range(5)}

    def p_values() -> list[float]:
        res = compare(outs, refs, "bleu,chrf,rouge-l,ter", n_resamples=997, n_confidence=5, seed=3, baseline=baseline)
        return [p.p_value for m in res.metrics for p in m.pairs]

    whole = p_values()
    for entries in (1, 500, 4096):  # one trial a part, a few, many
        monkeypatch.setattr(significance, "BLOCK_ENTRIES", entries)
        assert p_values() == whole, entries
