"""The C kernel's statistics equal a plain-Python count on random token sequences."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ngrameval import Preprocess, References, overlap_stats

tokens = st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), max_size=9)
segment = st.tuples(tokens, st.lists(tokens, min_size=1, max_size=4))


def grams(toks: list[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(toks[i : i + n]) for i in range(len(toks) - n + 1))


def expected_row(hyp: list[str], refs: list[list[str]], n_max: int) -> list[float]:
    lens = [len(r) for r in refs]
    closest = min(lens, key=lambda L: (abs(L - len(hyp)), L))
    match, total, rmatch, rtotal = [], [], [], []
    for n in range(1, n_max + 1):
        h = grams(hyp, n)
        rc = [grams(r, n) for r in refs]
        match.append(sum(min(c, max(r[g] for r in rc)) for g, c in h.items()))
        total.append(sum(h.values()))
        rmatch.append(sum(min(c, h[g]) for r in rc for g, c in r.items()))
        rtotal.append(sum(sum(r.values()) for r in rc))
    return [len(hyp), closest, sum(lens) / len(lens), *match, *total, *rmatch, *rtotal, *([0.0] * n_max)]


@pytest.mark.slow  # 200 examples: 1.1 s
@settings(max_examples=200, deadline=None)
@given(st.lists(segment, min_size=1, max_size=8), st.integers(1, 5), st.integers(1, 3))
def test_kernel_matches_python(data: list[tuple[list[str], list[list[str]]]], n_max: int, chunk: int) -> None:
    hyps = [" ".join(h) for h, _ in data]
    refs = [[" ".join(r) for r in rs] for _, rs in data]
    built = References.build(refs, Preprocess(tokenize="none"), chunk_size=chunk)
    (stats,) = overlap_stats([hyps], built, max_order=n_max)
    want = np.array([expected_row(h, rs, n_max) for h, rs in data])
    np.testing.assert_array_equal(stats.values, want)


def test_long_segments_grow_the_kernel_tables() -> None:
    # Segments far longer than the kernel's initial tables, between short ones.
    rng = np.random.default_rng(3)
    words = np.array(list("abcdefgh"))
    seg = [
        (rng.choice(words, k).tolist(), [rng.choice(words, m).tolist() for m in ms])
        for k, ms in [(3, [2]), (3000, [2500, 4000]), (1, [1]), (5000, [6000, 10, 7000]), (0, [4])]
    ]
    hyps = [" ".join(h) for h, _ in seg]
    refs = [[" ".join(r) for r in rs] for _, rs in seg]
    (stats,) = overlap_stats([hyps], References.build(refs, Preprocess(tokenize="none")), max_order=5)
    np.testing.assert_array_equal(stats.values, np.array([expected_row(h, rs, 5) for h, rs in seg]))


def test_several_systems_share_one_reference_table() -> None:
    refs = [["a b c", "a a b"], ["c d"]]
    built = References.build(refs, Preprocess(tokenize="none"))
    s1, s2 = overlap_stats([["a b", "c d"], ["a a a", "d"]], built, max_order=2)
    (alone,) = overlap_stats([["a a a", "d"]], built, max_order=2)
    np.testing.assert_array_equal(s2.values, alone.values)
    assert s1.match.tolist() == [[2, 1], [2, 1]]
    assert s2.match.tolist() == [[2, 1], [1, 0]]  # "a" clipped to 2 by the second reference


def test_rows_add_for_subsets_and_resamples() -> None:
    built = References.build([["a b c"], ["c d"], ["a a"]], Preprocess(tokenize="none"))
    (stats,) = overlap_stats([["a b", "c d", "a"]], built, max_order=2)
    w = np.array([[1.0, 0.0, 1.0], [0.0, 2.0, 0.0]])  # a subset, and segment 2 drawn twice
    got = stats.weighted(w).values
    np.testing.assert_array_equal(got[0], stats.rows(np.array([0, 2])).total().values)
    np.testing.assert_array_equal(got[1], 2 * stats.rows(slice(1, 2)).total().values)
