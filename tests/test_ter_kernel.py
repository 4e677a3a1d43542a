"""The TER kernel (ngrameval._ter) equals the pure-Python reference (ngrameval.metrics.ter.edits) move for move,
on generated word-id lists (every candidate cap, beam widths, repeated blocks, several references), and is safe:
checked inputs, int32 bound, linear memory, interruptible, GIL released."""

from __future__ import annotations

import textwrap
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.conftest import interrupt, run_python, ticks_beside

from ngrameval import _ter
from ngrameval.errors import LimitError
from ngrameval.metrics import ter as ter_module
from ngrameval.metrics.ter import TER, edits, ter_rows
from ngrameval.ngrams.texts import flatten

I32, I64 = np.int32, np.int64
WMT = Path("/work/shared/data/wmt19")


def kernel(hyps: list[list[int]], refs: list[list[list[int]]], cap: int = 1000) -> list[int]:
    """Fewest edits of every hypothesis over its references, by the kernel."""
    flat, seg = flatten(refs)

    def arrays(texts: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
        off = np.zeros(len(texts) + 1, I64)
        np.cumsum([len(t) for t in texts], out=off[1:])
        return np.array([w for t in texts for w in t], I32), off

    return [int(x) for x in np.frombuffer(_ter.edits(*arrays(hyps), *arrays(flat), seg, cap), I64)]


def reference(hyp: list[int], ref: list[int], cap: int = 1000) -> int:
    with mock.patch.object(ter_module, "MAX_SHIFT_CANDIDATES", cap):
        return edits(list(hyp), ref)


# few word types, so blocks repeat and many shifts compete; lengths up to 40 (and references up to 3x longer)
WORDS = st.lists(st.integers(0, 4), max_size=40)
CAPS = st.sampled_from([1000, 1000, 1000, 0, 1, 2, 7, 60, 10**9])


@settings(max_examples=400, deadline=None)
@given(hyp=WORDS, ref=WORDS, cap=CAPS)
def test_kernel_equals_reference_on_one_pair(hyp: list[int], ref: list[int], cap: int) -> None:
    assert kernel([hyp], [[ref]], cap) == [reference(hyp, ref, cap)]


@settings(max_examples=150, deadline=None)
@given(hyp=st.lists(st.integers(0, 2), max_size=6), ref=st.lists(st.integers(0, 2), min_size=1, max_size=160))
def test_kernel_equals_reference_with_a_widened_beam(hyp: list[int], ref: list[int]) -> None:
    # |ref| / |hyp| above 50 widens the beam past 25 cells
    assert kernel([hyp], [[ref]]) == [reference(hyp, ref)]


@settings(max_examples=100, deadline=None)
@given(data=st.data(), n_seg=st.integers(0, 5))
@pytest.mark.slow
def test_kernel_takes_the_fewest_edits_over_references(data: st.DataObject, n_seg: int) -> None:
    hyps = [data.draw(WORDS) for _ in range(n_seg)]
    refs = [data.draw(st.lists(WORDS, min_size=1, max_size=3)) for _ in range(n_seg)]
    assert kernel(hyps, refs) == [min(reference(h, r) for r in rs) for h, rs in zip(hyps, refs)]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.slow
def test_kernel_equals_reference_on_long_random_pairs(seed: int) -> None:
    rng = np.random.default_rng(seed)
    types = [3, 5, 30, 200, 4, 8][seed]
    n = int(rng.integers(60, 160))
    hyp = rng.integers(0, types, n).tolist()
    # a reference made from the hypothesis by block moves and edits, so long shifts gain
    ref = list(hyp)
    for _ in range(int(rng.integers(2, 12))):
        a = int(rng.integers(0, len(ref)))
        b = min(len(ref), a + int(rng.integers(1, 12)))
        block, ref = ref[a:b], ref[:a] + ref[b:]
        at = int(rng.integers(0, len(ref) + 1))
        ref = ref[:at] + block + ref[at:]
    ref = [w if rng.random() > 0.1 else int(rng.integers(0, types)) for w in ref][: int(rng.integers(n // 2, n + 20))]
    assert kernel([hyp], [[ref]]) == [reference(hyp, ref)]


def test_any_int32_word_id_is_a_word() -> None:
    lo, hi = -(2**31), 2**31 - 1
    hyp, ref = [hi, lo, 0, -1], [lo, 0, -1, hi, 5]
    assert kernel([hyp], [[ref]]) == [reference(hyp, ref)] == [2]


def test_ter_rows_on_real_text_equals_the_reference() -> None:
    pairs = sorted(p for p in WMT.glob("*-en") if (p / "system-outputs").is_dir()) if WMT.exists() else []
    if not pairs:
        pytest.skip("shared WMT19 data not present")
    metric = TER()
    for pair in pairs[:3]:
        refs = next(pair.glob("newstest2019-*-ref.en")).read_text("utf-8").splitlines()[:60]
        hyps = sorted((pair / "system-outputs").iterdir())[1].read_text("utf-8").splitlines()[:60]
        flat, seg = flatten([[r] for r in refs])
        (rows,) = ter_rows(metric, [hyps], flat, seg)
        vocab: dict[str, int] = {}

        def ids(line: str, twice: bool, vocab: dict[str, int] = vocab) -> list[int]:
            words = metric.tokenize(" ".join(metric.tokenize(line))) if twice else metric.tokenize(line)
            return [vocab.setdefault(w, len(vocab)) for w in words]

        want = [reference(ids(h, False), ids(r, True)) for h, r in zip(hyps, refs)]
        assert rows[:, 0].tolist() == want


# --- safety ---------------------------------------------------------------------------------------------------


def test_checked_inputs() -> None:
    tok, off, seg = np.array([1, 2], I32), np.array([0, 2], I64), np.array([0, 1], I64)
    with pytest.raises(ValueError, match="hypotheses must be int32 ids"):
        _ter.edits(tok, np.array([0, 3], I64), tok, off, seg, 10)
    with pytest.raises(ValueError, match="references must be int32 ids"):
        _ter.edits(tok, off, tok, np.array([0, 2, 1, 2], I64), np.array([0, 3], I64), 10)
    with pytest.raises(ValueError, match="hypotheses must be"):
        _ter.edits(tok, np.array([1, 2], I64), tok, off, seg, 10)
    with pytest.raises(ValueError, match="one offset per hypothesis"):
        _ter.edits(tok, off, tok, off, np.array([0, 1, 1], I64), 10)
    with pytest.raises(ValueError, match="from 0 to the number of references"):
        _ter.edits(tok, off, tok, off, np.array([0, 2], I64), 10)
    with pytest.raises(ValueError, match="segment 1 has no reference"):
        _ter.edits(tok, np.array([0, 1, 2], I64), tok, off, np.array([0, 0, 1], I64), 10)
    with pytest.raises(ValueError, match="max_candidates must be an integer >= 0"):
        _ter.edits(tok, off, tok, off, seg, -1)
    with pytest.raises(ValueError, match="max_candidates must be an integer >= 0"):
        _ter.edits(tok, off, tok, off, seg, -(10**30))
    with pytest.raises(TypeError):
        _ter.edits(tok, off, tok, off, seg, 1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        _ter.edits([1, 2], off, tok, off, seg, 10)
    assert _ter.edits(tok, off, tok[::-1].copy(), off, seg, 10**30) == np.array([1], I64).tobytes()  # one shift
    empty = (np.zeros(0, I32), np.zeros(1, I64))
    assert _ter.edits(*empty, *empty, np.zeros(1, I64), 10) == b""
    assert kernel([[], [1, 2], []], [[[]], [[]], [[3, 4, 5]]]) == [0, 2, 3]


def test_words_above_the_int32_cost_bound_are_a_limit_error(tmp_path: Path) -> None:
    assert _ter.MAX_WORDS == 2**30 - 1
    # a sparse file: the kernel refuses the pair from its length before reading a word
    big = np.memmap(tmp_path / "big", dtype=I32, mode="w+", shape=(2**30,))
    off, seg = np.array([0, 2**30 - 2], I64), np.array([0, 1], I64)
    rest = (big[: 2**30 - 2], off, big[:2], np.array([0, 2], I64), seg, 10)
    with pytest.raises(LimitError, match=r"segment 1, reference 1: TER aligns at most 2\*\*30 - 1 words"):
        _ter.edits(*rest)


def test_vocabulary_bound_is_a_limit_error() -> None:
    flat, seg = flatten([["a b c"]])
    with (
        mock.patch.object(ter_module, "MAX_VOCAB", 2),
        pytest.raises(LimitError, match="more than 2 distinct words"),
    ):
        ter_rows(TER(), [["a"]], flat, seg)


def test_memory_is_linear_in_the_beam() -> None:
    # 100k words against 100k: a full table would be 10**10 cells; the bands are ~5 * 10**6
    code = """
        import resource, numpy as np
        from ngrameval import _ter
        rng = np.random.default_rng(0)
        a = rng.integers(0, 50, 100_000).astype(np.int32)
        b = rng.integers(0, 50, 100_000).astype(np.int32)
        off = np.array([0, len(a)], np.int64)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        got = _ter.edits(a, off, b, off, np.array([0, 1], np.int64), 5)
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(np.frombuffer(got, np.int64)[0], before, after)
    """
    out = run_python(code, timeout=120)
    assert out.returncode == 0, out.stderr
    got, before, after = map(int, out.stdout.split())
    assert 0 < got <= 100_000
    assert after - before < 100_000, out.stdout  # KiB: ~25 MB of bands


# uninterrupted this takes minutes: every candidate of a 3-type 3000-word pair, without a cap
_LONG_CALL = """
    import numpy as np
    from ngrameval import _ter
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 3, 3000).astype(np.int32), rng.integers(0, 3, 3000).astype(np.int32)
    off, seg = np.array([0, 3000], np.int64), np.array([0, 1], np.int64)
    print("start", flush=True)
    _ter.edits(a, off, b, off, seg, 10**12)
    print("finished", flush=True)
"""


def test_long_call_stops_on_sigint() -> None:
    code = textwrap.dedent(_LONG_CALL)
    interrupt(code)  # ended by KeyboardInterrupt without printing "finished"


def test_releases_the_gil() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 3, 400).astype(I32), rng.integers(0, 3, 400).astype(I32)
    args = (a, np.array([0, 400], I64), b, np.array([0, 400], I64), np.array([0, 1], I64), 20_000)
    ran = ticks_beside(lambda: _ter.edits(*args))
    assert ran > 0  # another thread ran during the call


def test_blocks_of_segments_give_the_same_rows() -> None:
    hyps = ["a b c", "", "c b a d", "x", "b a", "a a a b"]
    refs = [["a c b", "c"], ["b"], ["d c b a"], [""], ["a b", "b a x", "x"], ["b a a a"]]
    flat, seg = flatten(refs)
    (whole,) = ter_rows(TER(), [hyps], flat, seg)
    with mock.patch.object(ter_module, "BLOCK", 2):
        (blocks,) = ter_rows(TER(), [hyps], flat, seg)
    np.testing.assert_array_equal(whole, blocks)
    ids: dict[str, int] = {}

    def words(line: str) -> list[int]:
        return [ids.setdefault(w, len(ids)) for w in line.split()]

    assert whole[:, 0].tolist() == [min(reference(words(h), words(r)) for r in rs) for h, rs in zip(hyps, refs)]
