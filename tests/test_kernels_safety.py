"""Crash, overflow, resource and interrupt safety of the C kernels (_text, _overlap, _rouge) and of SE.

Each test pins one failure the kernels had: a str subclass whose lower() is not a str, Python code
mutating the input list during a call, 32-bit and order overflows, NaN weights, size-0 inputs,
quadratic memory on long lines, unbounded quadratic work, and calls that could not be interrupted
or held the GIL.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.conftest import interrupt, run_python, ticks_beside

import ngrameval as ne
from ngrameval import _overlap, _rouge, _text, limits
from ngrameval.errors import InputError, LimitError
from ngrameval.metrics.se import se_scores
from ngrameval.ngrams.count import intern
from ngrameval.ngrams.texts import Texts

I32, I64 = np.int32, np.int64
Z8, Z32, Z64 = np.zeros(0, np.int8), np.zeros(0, I32), np.zeros(0, I64)
EMPTY = (np.zeros(0, I32), np.zeros(1, I64), np.zeros(1, I64))
NO_PAIRS = (np.zeros(0, I64), np.zeros(0, I64))


def one_text(tokens: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A single text of one sentence, as the _rouge kernels take it."""
    tok = np.asarray(tokens, dtype=I32)
    return tok, np.array([0, len(tok)], I64), np.array([0, 1], I64)


def two_sentences(tokens: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The same tokens as one sentence followed by an empty one: forces the alignment-table path."""
    tok = np.asarray(tokens, dtype=I32)
    return tok, np.array([0, len(tok), len(tok)], I64), np.array([0, 2], I64)


def clip(tokens: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The clip text of one text (a copy of its tokens)."""
    tok = np.array(tokens, dtype=I32)
    return tok, np.array([0, len(tok)], I64), np.array([0, 1], I64)


ONE_PAIR = (np.zeros(1, I64), np.zeros(1, I64))


@pytest.fixture
def max_cells() -> Iterator[None]:
    """Restores the process-wide bound after a test that changes it."""
    previous = limits.get_max_cells()
    yield
    limits.set_max_cells(previous)


# --- 1. Python objects given to the kernels ------------------------------------------------------------------


class _LowerNotStr(str):
    def lower(self) -> Any:
        return 10**400


def test_str_subclass_whose_lower_is_not_str_does_not_crash() -> None:
    got = ne.rouge([_LowerNotStr("É a")], ["a"], ["rouge-1"], profile="rouge-score")["rouge-1"]
    want = ne.rouge(["É a"], ["a"], ["rouge-1"], profile="rouge-score")["rouge-1"]
    assert got.items.f.tolist() == want.items.f.tolist() == [1.0]


def test_list_mutated_by_lower_during_encode_rouge() -> None:
    texts: list[Any] = []

    class Mutating(str):
        def lower(self) -> str:
            texts.clear()
            return "zzz"

    texts.extend([Mutating("É a b"), "é c", Mutating("Ö k")])
    expected = _text.encode_rouge(_text.vocab_new(), ["É a b", "é c", "Ö k"], True, True)
    assert _text.encode_rouge(_text.vocab_new(), texts, True, True) == expected


def test_encode_rouge_rejects_non_str_items() -> None:
    with pytest.raises(TypeError, match="text 2 is int"):
        _text.encode_rouge(_text.vocab_new(), ["a", 3], True, True)  # type: ignore[list-item]


def test_overlap_hyps_must_be_tuples_and_survive_a_mutating_buffer() -> None:
    tok, off = np.array([1, 2], I32), np.array([0, 2], I64)
    seg = np.array([0, 1], I64)
    with pytest.raises(TypeError, match=r"hyps\[0\] must be a \(tok, off\) tuple"):
        _overlap.overlap(tok, off, seg, [[tok, off]], 2, None)  # type: ignore[list-item]
    hyps: list[Any] = [(tok, off)]

    class Clearing:
        def __buffer__(self, flags: int) -> memoryview:  # Python 3.12+: Python code inside GetBuffer
            hyps.clear()
            return memoryview(tok.tobytes())

    hyps.append((Clearing(), off))
    with contextlib.suppress(TypeError):  # before 3.12 the object has no buffer; the point is: no crash
        _overlap.overlap(tok, off, seg, hyps, 2, None)


# --- 2. Overflows, NaN, size 0 ----------------------------------------------------------------------------------


@pytest.mark.parametrize("order", [0, -1, 101, 10**30])
def test_order_outside_the_kernel_bound_is_a_value_error(order: int) -> None:
    tok, off = np.array([1, 2], I32), np.array([0, 2], I64)
    assert _overlap.MAX_ORDER == 100
    for call in (
        lambda: _overlap.distinct(tok, off, order),
        lambda: _overlap.intern_plan(tok, off, order, np.zeros(4, I32), 0),
        lambda: _overlap.intern_part(tok, np.zeros(4, I32), order, Z64, np.zeros(2, I64), 0, 1, 2, 2, Z64, Z32, Z8),
        lambda: _overlap.intern_rebase(np.zeros(4, I32), order, Z64, np.zeros(2, I64), 0, 1, 0, Z64, Z32, Z8, Z64, 0),
        lambda: _overlap.overlap(tok, off, np.array([0, 1], I64), [(tok, off)], order, None),
    ):
        with pytest.raises(ValueError, match=r"max_order must be an n-gram order from 1 to 100") as info:
            call()
        assert not isinstance(info.value, OverflowError)


@pytest.mark.parametrize("weight", [float("nan"), float("inf"), -0.5])
def test_bad_rouge_w_weight_never_reaches_pow(weight: float) -> None:
    t = one_text([1, 2, 3])
    with pytest.raises(ValueError, match="weight must be a finite number >= 0"):
        _rouge.lcs(*t, *t, *clip([1, 2, 3]), *clip([1, 2, 3]), *ONE_PAIR, weight)


@pytest.mark.parametrize("gap", [10**11, 2**63, 10**40])
def test_huge_skip_gap_means_any_distance(gap: int) -> None:
    h, r = one_text([1, 2, 3, 1, 4]), one_text([1, 3, 2, 4, 4])
    unbounded = _rouge.skip(*h, *r, *ONE_PAIR, -1, True)
    assert _rouge.skip(*h, *r, *ONE_PAIR, gap, True) == unbounded
    assert _rouge.skip(*h, *r, *ONE_PAIR, 10, True) == unbounded


def test_rouge_huge_gap_through_the_api() -> None:
    got = ne.rouge(["a b c d"], ["a c b d"], ["rouge-s99999999999", "rouge-s*"])
    assert got["rouge-s99999999999"].items.f.tolist() == got["rouge-s*"].items.f.tolist()


def test_size_zero_inputs_are_not_memory_errors() -> None:
    tok0, off1 = np.zeros(0, I32), np.zeros(1, I64)
    assert _rouge.lcs(*EMPTY, *EMPTY, *EMPTY, *EMPTY, *NO_PAIRS, 0.0) == b""
    assert _rouge.lcs(*EMPTY, *EMPTY, *EMPTY, *EMPTY, *NO_PAIRS, 1.2) == b""
    assert _rouge.skip(*EMPTY, *EMPTY, *NO_PAIRS, -1, True) == b""
    assert _overlap.intern_plan(tok0, off1, 4, np.zeros(0, I32), 3) == (b"", bytes(8 * 9), b"")
    assert intern(tok0, off1, 4).count.tolist() == []
    assert _overlap.distinct(tok0, off1, 2) == b""
    assert _overlap.overlap(tok0, off1, off1, [], 3, None) == []
    # empty texts that do pair up
    e = (np.zeros(0, I32), np.array([0, 0], I64), np.array([0, 1], I64))
    assert np.frombuffer(_rouge.lcs(*e, *e, *e, *e, *ONE_PAIR, 0.0)).tolist() == [0.0]
    assert np.frombuffer(_rouge.skip(*e, *e, *ONE_PAIR, -1, True), I64).tolist() == [0, 0, 0]
    assert _text.encode(_text.vocab_new(), "", 1, True) == (b"", bytes(16))  # one empty line
    assert _text.encode_rouge(_text.vocab_new(), [], True, True) == (b"", bytes(8), bytes(8))


def test_id_bound_is_exposed() -> None:
    assert _overlap.MAX_ID == 2**31 - 1


def test_vocabulary_used_by_two_threads_at_once_is_refused() -> None:
    vocab = _text.vocab_new()
    text = "\n".join([f"w{i} x y z" for i in range(200_000)])
    errors: list[BaseException] = []

    def run() -> None:
        try:
            _text.encode(vocab, text, 0, True)
        except RuntimeError as e:
            errors.append(e)

    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # whatever interleaving happened, the vocabulary is intact: every token is there exactly once
    assert sorted(_text.tokens(vocab, 0)) == sorted({w for line in text.split("\n") for w in line.split()})
    assert all("in use by another thread" in str(e) for e in errors)


# --- 4. Bounded quadratic work: LimitError naming segment, need and option --------------------------------------


@pytest.mark.usefixtures("max_cells")
def test_rouge_w_above_max_cells_names_segment_need_and_option() -> None:
    hyps, refs = ["a b c", "a " * 10 + "b"], ["a b c", "a " * 10]
    unbounded = ne.rouge(hyps, refs, ["rouge-w"])["rouge-w"].items.f.tolist()
    limits.set_max_cells(99)
    with pytest.raises(LimitError) as info:
        ne.rouge(hyps, refs, ["rouge-w"])
    msg = str(info.value)
    assert isinstance(info.value, InputError) and isinstance(info.value, ValueError)
    assert "segment 2, reference 2" in msg and "110 cells" in msg and "max_cells=99" in msg
    assert msg.endswith("raise the bound with ngrameval.limits.set_max_cells()") and "\n" not in msg
    limits.set_max_cells(110)
    assert ne.rouge(hyps, refs, ["rouge-w"])["rouge-w"].items.f.tolist() == unbounded


def test_cli_max_cells_bounds_and_raises(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ngrameval.cli import main

    (tmp_path / "hyp").write_text("a b c\n" + "a " * 10 + "b\n")
    (tmp_path / "ref").write_text("a b c\n" + "a " * 10 + "\n")
    args = ["score", str(tmp_path / "hyp"), "-r", str(tmp_path / "ref"), "-m", "rouge-w", "-f", "json"]
    assert main([*args, "--max-cells", "99"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "segment 2, reference 2" in err and "max_cells=99" in err
    assert err.endswith("raise the bound with --max-cells or ngrameval.limits.set_max_cells()\n")  # the option
    assert main([*args, "--max-cells", "110"]) == 0
    assert '"ROUGE-W' in capsys.readouterr().out
    assert main([*args, "--max-cells", "0"]) == 2
    assert "--max-cells: expected a number of cells" in capsys.readouterr().err
    assert limits.get_max_cells() == limits.DEFAULT_MAX_CELLS  # main() restores the process's bound


@pytest.mark.usefixtures("max_cells")
def test_summary_level_rouge_l_and_skip_bigrams_are_bounded() -> None:
    hyp, ref = "a b c d e\nf g", "a b c\nd e f g h"
    limits.set_max_cells(14)
    with pytest.raises(LimitError, match=r"segment 1, reference 1: ROUGE-L \(summary level\) needs 15 cells"):
        ne.rouge([hyp], [ref], ["rouge-lsum"])
    # ROUGE-S*: the reference's 8 tokens have 28 skip-bigrams
    limits.set_max_cells(27)
    with pytest.raises(LimitError, match=r"ROUGE-S\* needs 28 cells .*reference's 8 tokens.*max_cells=27"):
        ne.rouge([hyp], [ref], ["rouge-s*"])
    limits.set_max_cells(28)
    assert ne.rouge([hyp], [ref], ["rouge-s*"])["rouge-s*"].items.f[0] > 0
    # sentence-level ROUGE-L needs no table: not bounded
    limits.set_max_cells(1)
    assert ne.rouge(["a b c"], ["a c b"], ["rouge-l"])["rouge-l"].items.f[0] > 0


@pytest.mark.usefixtures("max_cells")
def test_se_is_bounded() -> None:
    h = Texts(np.arange(6, dtype=I32), np.array([0, 2, 6]))
    r = Texts(np.arange(6, dtype=I32), np.array([0, 3, 6]))
    seg = np.array([0, 1, 2])
    limits.set_max_cells(11)
    with pytest.raises(LimitError, match=r"segment 2, reference 2: SE \(edit distance\) needs 12 cells"):
        se_scores(h, r, seg)
    limits.set_max_cells(12)
    assert se_scores(h, r, seg).tolist() == [1 - 1 / 5, 1 - 1 / 7]  # Indel distance 1 each


def test_set_max_cells_validates() -> None:
    for bad in (0, -1, 2**63, 1.5, True):
        with pytest.raises(ValueError, match="max_cells must be an integer"):
            limits.set_max_cells(bad)  # type: ignore[arg-type]
    assert limits.get_max_cells() == limits.DEFAULT_MAX_CELLS == 2**28


def _zipf(rng: np.random.Generator, n: int, vocab: int) -> np.ndarray:
    return np.minimum(rng.zipf(1.3, n), vocab).astype(I32)


@pytest.mark.parametrize(("m", "vocab"), [(300, 20), (4000, 3000), (9000, 8000)])
def test_bit_parallel_lcs_equals_the_alignment_table(m: int, vocab: int) -> None:
    # the larger sizes take the sparse (position list) rows of the bit-parallel LCS
    rng = np.random.default_rng(m)
    a, b = _zipf(rng, m, vocab), _zipf(rng, m + 17, vocab)
    fast = _rouge.lcs(*one_text(b), *one_text(a), *clip(b), *clip(a), *ONE_PAIR, 0.0)
    table = _rouge.lcs(*two_sentences(b), *two_sentences(a), *clip(b), *clip(a), *ONE_PAIR, 0.0)
    assert fast == table and np.frombuffer(fast)[0] > 0


@pytest.mark.slow
def test_rouge_l_on_a_long_line_runs_in_linear_memory() -> None:
    # 200k tokens over a 20k-word vocabulary: the old bit table of every distinct token needed ~1 GB
    code = """
        import resource, numpy as np
        import ngrameval as ne
        rng = np.random.default_rng(0)
        words = [f"w{i}" for i in range(20000)]
        line = lambda: " ".join(words[i] for i in rng.integers(0, 20000, 200_000))
        hyp, ref = line(), line()
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        f = ne.rouge([hyp], [ref], ["rouge-l"])["rouge-l"].items.f[0]
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(f, before, after)
    """
    out = run_python(code, timeout=120)
    assert out.returncode == 0, out.stderr
    f, before, after = out.stdout.split()
    assert 0 < float(f) < 1
    assert int(after) - int(before) < 150_000, out.stdout  # KiB: well under the ~1 GB of a quadratic table


# --- 3. Interruptible, GIL released ------------------------------------------------------------------------------

_LONG_CALL = """
    import numpy as np
    from ngrameval import _rouge
    rng = np.random.default_rng(0)
    a = rng.integers(0, 1000, 2_400_000).astype(np.int32)
    b = rng.integers(0, 1000, 2_400_000).astype(np.int32)
    T = lambda x: (x, np.array([0, len(x)], np.int64), np.array([0, 1], np.int64))
    z = np.zeros(1, np.int64)
    {setup}
    print("start", flush=True)
    {call}
    print("finished", flush=True)
"""

# (setup, call): sized to run for minutes uninterrupted, past the harness's hang guard (lcs on twice the tokens of
# a ~60 s call, skip ~180 s, encode_rouge 30 times the texts of a ~7 s call)
_CALLS = {
    "lcs": ("", "_rouge.lcs(*T(a), *T(b), *T(a), *T(b), z, z, 0.0)"),
    "skip": ("", "_rouge.skip(*T(a[:80000]), *T(b[:80000]), z, z, -1, True)"),
    "encode_rouge": (
        "from ngrameval import _text; texts = [' '.join(map(str, a[:50_000]))] * 90_000",
        "_text.encode_rouge(_text.vocab_new(), texts, True, True)",
    ),
}


@pytest.mark.parametrize("kind", sorted(_CALLS))
def test_long_kernel_call_stops_on_sigint(kind: str) -> None:
    setup, call = _CALLS[kind]
    code = textwrap.dedent(_LONG_CALL).format(setup=setup, call=call)
    if kind == "skip":
        code = "from ngrameval import limits; limits.set_max_cells(2**40)\n" + code
    interrupt(code)  # ended by KeyboardInterrupt without printing "finished"


def test_one_huge_segment_stops_on_sigint() -> None:
    """chrF's kernel (``_overlap.overlap``) on one segment: 500,000 reference tokens with distinct n-grams and a
    hypothesis 100 times that long, ~40 s of work uninterrupted (issue 29, item 1: a 10 MB line of chrF ran on
    for 10-16 s after Ctrl-C). The kernel checked for signals only between (segment, system) pairs; it now
    checks within one, so the call stops long before the 20 s the helper waits (which it would overrun)."""
    code = textwrap.dedent("""
        import numpy as np
        from ngrameval import _overlap
        ref = np.random.default_rng(0).integers(0, 2**30, 500_000).astype(np.int32)
        hyp = np.tile(ref, 100)
        one = np.array([0, 1], np.int64)
        print("start", flush=True)
        _overlap.overlap(ref, np.array([0, len(ref)]), one, [(hyp, np.array([0, len(hyp)]))], 6, None)
        print("finished", flush=True)
    """)
    interrupt(code)  # ended by KeyboardInterrupt without printing "finished"


def test_kernels_release_the_gil() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 1000, 200_000).astype(I32), rng.integers(0, 1000, 200_000).astype(I32)
    ran = ticks_beside(lambda: _rouge.lcs(*one_text(a), *one_text(b), *clip(a), *clip(b), *ONE_PAIR, 0.0))
    assert ran > 0  # another thread ran during the call


def test_a_kernel_on_a_pool_thread_never_waits_for_the_lock_to_check_signals() -> None:
    """Signals are handled on the main thread only, so a kernel on another thread does not take the interpreter
    lock back to check them: with the switch interval at an hour and the main thread running Python all along, a
    count on another thread fills its whole output (it stopped at its first check, a few milliseconds in, until the
    main thread gave the lock up: 5 ms each time at the usual interval). The deadline is a hang guard."""
    import sys
    import time

    from ngrameval import _direct

    n = 200_000
    line = b"the cat sat on the mat and the dog sat on the log\n"
    rows = np.zeros((n, 3 + 5 * 4))
    entered = threading.Event()

    def count() -> None:
        entered.set()  # (the lock is kept until the kernel lets it go: the switch interval is an hour)
        _direct.count_bytes((line * n, line * n), 1, n, 0, n, 0, False, 4, False, None, (rows.reshape(-1),))

    worker = threading.Thread(target=count)
    before = sys.getswitchinterval()
    sys.setswitchinterval(3600)
    try:
        worker.start()
        entered.wait()
        guard = time.monotonic() + 60
        while not rows[-1].any() and time.monotonic() < guard:  # Python on the main thread, never yielding the lock
            pass
        filled = bool(rows[-1].any())
    finally:
        sys.setswitchinterval(before)
        worker.join()
    assert filled
    assert (rows == rows[0]).all() and rows[0, 0] == 13  # every segment counted, the same line (13 tokens)


# --- 6. The sanitizer build ---------------------------------------------------------------------------------------


@pytest.mark.sanitize
@pytest.mark.skipif(not os.environ.get("NGRAMEVAL_SANITIZE"), reason="set NGRAMEVAL_SANITIZE=1 (takes minutes)")
def test_kernel_tests_pass_under_address_and_undefined_behavior_sanitizers() -> None:
    script = Path(__file__).parent / "sanitize" / "run.sh"
    out = subprocess.run([str(script), "-x"], capture_output=True, text=True, timeout=3600, check=False)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]
