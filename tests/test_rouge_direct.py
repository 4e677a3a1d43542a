"""ROUGE-N and ROUGE-L counted straight from the text (``ngrameval._direct.rouge``: tokens interned per segment, no
corpus vocabulary) give exactly the scores of the vocabulary path (``Encoder`` + ``_overlap`` + ``_rouge.lcs``) on
any text, profile, number of references and systems; the vocabulary is not built where the direct path serves."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ngrameval import _direct, rouge
from ngrameval.metrics import rouge as rouge_mod
from ngrameval.metrics.rouge import Rouge, item_scores
from ngrameval.text.pipeline import Preprocess

# ASCII case, digits, separators, line breaks, letters str.lower maps into [a-z] (KELVIN SIGN, I WITH DOT ABOVE),
# non-ASCII letters of 1-, 2- and 4-byte strings
_CHARS = st.sampled_from([*"aZz09 \t\n-.'", "\u212a", "\u0130", "é", "Ä", "東", "\U0001f600"])
_WORDS = st.sampled_from(["the", "The", "cat", "sat", "on", "mat", "a", "b", "3", "x-ray", "café", "İ", "\u212aelvin"])
_TEXT = st.one_of(
    st.text(_CHARS, max_size=30),
    st.lists(_WORDS, max_size=20).map(" ".join),
    st.lists(_WORDS, min_size=60, max_size=150).map(" ".join),  # past one 64-bit word of the LCS
)
METRICS = [Rouge("n", n=n) for n in (1, 2, 3, 4)] + [Rouge("l", split=False), Rouge("l", split=True)]


@st.composite
def corpora(draw: st.DrawFn) -> tuple[list[list[str]], list[str], np.ndarray]:
    per_item = draw(st.lists(st.integers(1, 3), max_size=6))
    seg = np.concatenate([[0], np.cumsum(per_item)]).astype(np.int64)
    systems = [[draw(_TEXT) for _ in per_item] for _ in range(draw(st.integers(1, 2)))]
    return systems, [draw(_TEXT) for _ in range(int(seg[-1]))], seg


def _vocabulary_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rouge_mod, "_counted_directly", lambda *args: False)


@pytest.mark.slow  # 150 corpora a profile: 2-3 s on an idle core
@pytest.mark.parametrize("profile", ["rouge155", "rouge-score"])
@settings(max_examples=150, deadline=None)
@given(data=corpora(), lowercase=st.booleans(), multi=st.sampled_from(["A", "B", "max-f", "jk"]))
def test_scores_equal_the_vocabulary_path(
    profile: str, data: tuple[list[list[str]], list[str], np.ndarray], lowercase: bool, multi: str
) -> None:
    systems, refs, seg = data
    pre = Preprocess(profile, lowercase)
    metrics = [Rouge(m.variant, n=m.n, split=m.split, multi=multi) for m in METRICS]
    got = item_scores(metrics, systems, refs, seg, pre)
    with pytest.MonkeyPatch.context() as mp:
        _vocabulary_path(mp)
        want = item_scores(metrics, systems, refs, seg, pre)
    for g_row, w_row in zip(got, want, strict=True):
        for g, w in zip(g_row, w_row, strict=True):
            for stat in ("r", "p", "f"):
                np.testing.assert_array_equal(g.stat(stat), w.stat(stat))


def test_no_vocabulary_is_built_where_the_direct_path_serves(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_vocabulary(*args: object) -> None:
        raise AssertionError("the vocabulary path ran")

    monkeypatch.setattr(rouge_mod, "Encoder", no_vocabulary)
    out = rouge(["the cat sat", "a b"], [["the cat sat on", "cat"], "b a"], ["rouge-1", "rouge-2", "rouge-l"])
    # pooled references (ROUGE-1.5.5 -f A): R = (3 + 1) / (4 + 1), P = 4 / (2 * 3), F rounded to 5 decimals
    assert out["rouge-1"].items.f.tolist() == [0.72727, 1.0]
    with pytest.raises(AssertionError, match="vocabulary path"):  # sentences (a line break): _rouge.lcs's union
        rouge(["the cat\nsat"], ["the cat sat"], ["rouge-lsum"], profile="rouge-score")


def test_pairs_of_every_reference_in_order() -> None:
    hyp_len, ref_len, seg, hits, lcs, breaks = _direct.rouge(
        [["The cat sat on the mat", "a b c d"]], [["the cat is on the mat", "cat sat"], "x b c"], True, 2, True
    )
    assert np.frombuffer(hyp_len, dtype=np.int64).tolist() == [6, 4]
    assert np.frombuffer(ref_len, dtype=np.int64).tolist() == [6, 2, 3]
    assert np.frombuffer(seg, dtype=np.int64).tolist() == [0, 2, 3]
    assert np.frombuffer(hits, dtype=np.int64).reshape(3, 2).tolist() == [[5, 3], [2, 1], [2, 1]]
    assert np.frombuffer(lcs, dtype=np.int64).tolist() == [5, 2, 2]
    assert breaks is False


def test_bad_input_is_a_clear_error() -> None:
    with pytest.raises(TypeError, match="text 1 is bytes"):
        _direct.rouge([[b"x"]], ["x"], True, 2, True)  # type: ignore[list-item]
    with pytest.raises(ValueError, match="max_order"):
        _direct.rouge([["x"]], ["x"], True, 101, True)
    with pytest.raises(ValueError, match="no reference"):
        _direct.rouge([["x"]], [[]], True, 2, True)


def test_round5_is_perls_sprintf_everywhere_and_at_ties() -> None:
    # ROUGE-1.5.5's printed R, P, F: sprintf("%7.5f") read back. The vectorised rounding must agree with the
    # formatted one on ties of the binary value (j / 64: x * 1e5 ends in .5 exactly), ratios of token counts,
    # negative zero, NaN and inf
    from ngrameval.metrics.rouge import _round5

    rng = np.random.default_rng(5)
    a, b = rng.integers(0, 300, 50_000), rng.integers(1, 300, 50_000)
    specials = [np.nan, np.inf, -np.inf, 0.0, -0.0, -1e-7, 5e-6, 1.5e-5, 2.5e-5, 123456.789125, 1e20]
    x = np.concatenate([np.arange(-3000, 3000) / 64, a / b, 2 * a / (a + b), rng.random(20_000), specials])
    want = np.array([float(f"{v:.5f}") for v in x.tolist()])
    got = _round5(x)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@settings(max_examples=400, deadline=None)
@given(st.integers(0, 10**9), st.integers(-3, 3), st.floats(0, 2.0**31, allow_nan=False), st.integers(1, 4096))
def test_round5_decides_near_ties_exactly(k: int, steps: int, anything: float, den: int) -> None:
    # the values within a few ulps of a tie (k + 0.5) / 1e5, any value, and ratios j / den: the exact side of the
    # tie (or the even neighbour of an exact tie) is the formatted rounding
    from ngrameval.metrics.rouge import _round5_near_ties

    x = (k + 0.5) / 1e5
    for _ in range(abs(steps)):
        x = float(np.nextafter(x, np.inf if steps > 0 else 0.0))
    v = np.array([x, anything, anything * 1e-5, (k % den) / den, -x])
    np.testing.assert_array_equal(_round5_near_ties(v), [float(f"{y:.5f}") for y in v.tolist()])


def test_every_latin1_byte_at_every_place_of_a_block() -> None:
    # the 1-byte text is mapped 16 bytes a step (SSE2) and the tail byte by byte, and its tokens found as the edges
    # of 64-byte word masks: every Latin-1 code point at each place 0..149 of a text (words across the 64-byte
    # blocks, texts ending at and around 64 and 128 bytes) gives the tokens of re.findall("[a-z0-9]+") after
    # ASCII lower-casing, and a line break anywhere is seen
    import re

    texts = ["a" * n for n in (63, 64, 65, 127, 128, 129)] + ["b " * 32, " b" * 32, " " * 64 + "c"]
    for c in range(256):
        for at in range(150):
            texts.append("ab1 " * (at // 4) + "Q" * (at % 4) + chr(c) + "zZ9 x" + "y" * (c % 7))
    hyp_len, _, _, _, _, breaks = _direct.rouge([texts], ["x"] * len(texts), False, 1, False)
    want = [len(re.findall("[a-z0-9]+", re.sub("[A-Z]", lambda m: m[0].lower(), t))) for t in texts]
    assert np.frombuffer(hyp_len, dtype=np.int64).tolist() == want
    assert breaks
    for at in range(40):
        line = "ab" * 20
        assert _direct.rouge([[line[:at] + "\n" + line[at:]]], ["x"], False, 1, False)[5]
        assert not _direct.rouge([[line[:at] + "\r" + line[at:]]], ["x"], False, 1, False)[5]


def test_ascii_reads_every_str_flag() -> None:
    # the lost-text warning's fast check: str.isascii of every item in one C loop, False at a non-str
    class Sub(str):
        def isascii(self) -> bool:  # never called: the flag is read
            raise AssertionError

    assert _direct.ascii(["a b", "", Sub("c")])
    assert _direct.ascii([])
    assert not _direct.ascii(["a", "café"])
    assert not _direct.ascii(["a", 3])
    assert not _direct.ascii(("x", "\U0001f600"))
    with pytest.warns(UserWarning, match="1 of 2 system segments"):
        rouge(["a b", "привет"], ["a b", "c"], ["rouge-1"], profile="rouge-score")


@st.composite
def _one_pair_counts(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    # token counts of one pair an item: totals of any size, hits up to the shorter one; near ties of R and P come
    # from totals 2^a 5^b (x * 1e5 ends in .5) and from large totals
    n = draw(st.integers(0, 40))
    total = st.one_of(st.integers(0, 60), st.sampled_from([64, 128, 320, 640, 1280, 2560, 6400]), st.integers(0, 10**6))
    ref = np.array(draw(st.lists(total, min_size=n, max_size=n)), dtype=np.int64)
    hyp = np.array(draw(st.lists(total, min_size=n, max_size=n)), dtype=np.int64)
    frac = draw(st.lists(st.floats(0, 1), min_size=n, max_size=n))
    hits = (np.minimum(ref, hyp) * np.array(frac, dtype=np.float64)).astype(np.int64)
    return hits, ref, hyp


@settings(max_examples=300, deadline=None)
@given(_one_pair_counts(), st.sampled_from([0.5, 0.0, 1.0, 0.2, 0.95]), st.booleans(), st.integers(0, 3))
def test_one_pair_scores_in_c_are_combines_doubles(
    counts: tuple[np.ndarray, np.ndarray, np.ndarray], alpha: float, round5: bool, sub: int
) -> None:
    # _rouge.scores, which scores items of one reference each from the kernel's counts, makes the same doubles
    # as combine's NumPy, for every multi mode (one pair: the best, the average and the jackknife are that pair)
    from ngrameval import _rouge

    hits, ref, hyp = counts
    ref_t, hyp_t = (np.maximum(x - sub, 0) for x in (ref, hyp))
    hits = np.minimum(hits, np.minimum(ref_t, hyp_t))
    out = np.empty((3, len(hits)))
    assert _rouge.scores(hits, ref, hyp, sub, alpha, round5, out)
    seg = np.arange(len(hits) + 1)
    for multi in ("A", "B", "jk", "max-f"):
        m = Rouge("n", n=sub + 1, alpha=alpha, round5=round5, multi=multi)
        want = rouge_mod.combine(m, hits.astype(float), ref_t.astype(float), hyp_t.astype(float), seg)
        for got, exp in zip(out, (want.recall, want.precision, want.f), strict=True):
            assert got.tobytes() == exp.astype(np.float64).tobytes()


def test_one_pair_scores_decline_what_they_do_not_serve_and_check_their_buffers() -> None:
    from ngrameval import _rouge

    ok = np.array([1, 2], dtype=np.int64)
    out = np.empty(6)
    assert _rouge.scores(np.array([1, -3], dtype=np.int64), ok, ok, 0, 0.5, True, out) is False  # R < 0
    assert _rouge.scores(ok[::-1], ok, ok, 0, 0.5, True, out) is True  # any stride
    with pytest.raises(TypeError, match="hits must be a 1-D int64"):
        _rouge.scores(ok.astype(np.float64), ok, ok, 0, 0.5, True, out)
    with pytest.raises(ValueError, match="3 n doubles"):
        _rouge.scores(ok, ok, ok, 0, 0.5, True, np.empty(5))
    # the caller scores a declined corpus in NumPy: the same rows either way
    counts = rouge_mod.KernelCounts(ok, ok, np.array([1, -1], dtype=np.int64), np.array([1, -1], dtype=np.int64))
    seg = np.arange(3)
    metrics = [Rouge("n", n=1), Rouge("l")]
    got = rouge_mod.scores_of_counts(metrics, 1, counts, seg)
    (direct,) = rouge_mod.pair_counts(metrics, 1, counts, seg, False)
    want = [rouge_mod.combine(m, *c, seg) for m, c in zip(metrics, direct, strict=True) if c is not None]
    for g, w in zip(got[0], want, strict=True):
        assert all(np.array_equal(a, b) for a, b in zip((g.recall, g.precision, g.f), (w.recall, w.precision, w.f)))
