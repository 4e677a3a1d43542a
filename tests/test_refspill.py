"""NIST's reference n-gram counts on disk (ngrameval.scale.refspill): every chunk's weights equal, bit for bit, those of
the in-memory counts (RefCounts, itself pinned to the whole-corpus kernel), for any chunking, order and memory
budget; the files go away; a full disk and changed references are clear errors."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ngrameval.errors import InputError, LimitError
from ngrameval.ngrams.count import References
from ngrameval.scale.files import Files, score_files
from ngrameval.scale.refcounts import RefCounts
from ngrameval.scale.refspill import BUCKETS, SpilledCounts, _bucket, _write
from ngrameval.text.pipeline import Preprocess

PRE = Preprocess(tokenize="13a")
WORDS = ["0", "a", "b", "c", "d", "0.5", ".", "x"]


def _encoded(refs: list[list[str]]) -> tuple[list[str], np.ndarray, np.ndarray]:
    built = References.build(refs, PRE, chunk_size=max(len(refs), 1))
    (ch,) = built.chunks
    return built.encoder.names(), ch.ids, ch.off


def _chunks(refs: list[list[str]], size: int) -> Iterator[list[list[str]]]:
    for a in range(0, len(refs), size):
        yield refs[a : a + size]


segments = st.lists(
    st.lists(st.lists(st.sampled_from(WORDS), max_size=9).map(" ".join), min_size=1, max_size=3).map(
        lambda rs: rs + [""] * (3 - len(rs))  # a segment-major block needs the same count of references each
    ),
    min_size=1,
    max_size=40,
)


@settings(max_examples=60, deadline=None)
@given(segments, st.integers(1, 5), st.integers(1, 13), st.sampled_from([1, 200, 1 << 30]), st.sampled_from([1, 2, 3]))
def test_weights_equal_the_in_memory_counts(
    refs: list[list[str]], order: int, size: int, budget: int, jobs: int
) -> None:
    # (jobs: the bucket groups weighed on threads, each a jobs-th of the budget)
    spilled, memory = SpilledCounts(order, budget=budget), RefCounts(order)
    try:
        for chunk in _chunks(refs, size):
            names, ids, off = _encoded(chunk)
            spilled.add(names, ids, off)
            memory.add(names, ids, off)
        weights, whole = spilled.weights(jobs), memory.weights()
    finally:
        spilled.close()
    try:
        for index, chunk in enumerate(_chunks(refs, size)):
            names, ids, off = _encoded(chunk)
            got, want = weights.chunk(index, names, ids, off), whole.chunk(index, names, ids, off)
            assert np.array_equal(got.gid >= 0, want.gid >= 0)
            at = got.gid >= 0
            mine, theirs = got.gid[at], want.gid[at]
            assert got.info[mine].tobytes() == whole.info[theirs].tobytes()  # bit for bit, inf included
            assert np.array_equal(got.order[mine], whole.order[theirs])
            assert got.zero(mine).tobytes() == want.zero(theirs).tobytes()
    finally:
        weights.close()


def test_zero_bigrams_get_mtevals_extra_weight() -> None:
    """``0 x`` bigrams: mteval's Perl-truthiness quirk gives them log2(words / count("0")) more."""
    refs = [["0 a 0 b", "a 0 a"], ["0 a", "b b"]]
    spilled = SpilledCounts(2)
    names, ids, off = _encoded(refs)
    spilled.add(names, ids, off)
    weights = spilled.weights()
    try:
        w = weights.chunk(0, names, ids, off)
        extra = {float(v) for v in w.zero(np.arange(len(w.info), dtype=np.int32)) if v}
        assert extra == {float(np.log2(11 / 4))}  # 11 reference words, "0" four times
    finally:
        weights.close()


def test_buckets_keep_a_prefix_with_its_ngram() -> None:
    rng = np.random.default_rng(0)
    first, second = rng.integers(0, 2**31, 10_000), rng.integers(0, 2**31, 10_000)
    b = _bucket(first, second)
    assert b.min() >= 0 and b.max() < BUCKETS
    assert np.array_equal(b, _bucket(first.copy(), second.copy()))  # a function of the first two tokens only
    assert np.bincount(b, minlength=BUCKETS).max() < 4 * 10_000 / BUCKETS  # spread out


def test_changed_references_are_an_error() -> None:
    spilled = SpilledCounts(3)
    names, ids, off = _encoded([["a b c d"], ["b c d a"]])
    spilled.add(names, ids, off)
    weights = spilled.weights()
    try:
        other = _encoded([["a b c d"], ["b d c a"]])  # same words, other n-grams
        with pytest.raises(InputError, match="changed between the two passes"):
            weights.chunk(0, *other)
        with pytest.raises(InputError, match="changed between the two passes"):
            weights.chunk(0, *_encoded([["a b e"], ["b c d a"]]))  # a word never counted
        with pytest.raises(InputError, match="changed between the two passes"):
            weights.chunk(1, names, ids, off)  # there was one chunk
    finally:
        weights.close()


def test_a_full_disk_names_the_file_and_the_way_out() -> None:
    with open("/dev/full", "wb") as fh, pytest.raises(LimitError, match=r"/dev/full: no space left .* TMPDIR"):
        _write(fh, np.zeros(1 << 20, dtype=np.int32))  # larger than the buffer: written at once


def _ours(root: str) -> list[str]:
    return [p for p in os.listdir(root) if p.startswith("ngrameval-nist-")]


def test_files_removed_after_scoring_and_after_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spill_root = tmp_path / "tmp"
    spill_root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spill_root))
    (tmp_path / "h").write_text("a b c\nb c d\n" * 20)
    (tmp_path / "r").write_text("a b c\nb c a\n" * 20)
    files = Files({"h": str(tmp_path / "h")}, [str(tmp_path / "r")])
    streamed = score_files(files, "nist", 7)
    streamed.close()
    assert _ours(str(spill_root)) == []
    (tmp_path / "h").write_text("a b c\n" * 10)  # fewer lines than the references: an error in the second pass
    with pytest.raises(InputError):
        score_files(files, "nist", 7)
    assert _ours(str(spill_root)) == []


def test_ctrl_c_removes_the_files(tmp_path: Path) -> None:
    """SIGINT while NIST's files exist: exit 130, one line, and the directory is gone."""
    spill_root = tmp_path / "tmp"
    spill_root.mkdir()
    rng = np.random.default_rng(3)
    words = np.array([f"w{i}" for i in range(5000)])
    lines = [" ".join(words[rng.integers(0, len(words), 30)]) for _ in range(3000)]
    (tmp_path / "h").write_text("\n".join(lines * 40) + "\n")
    (tmp_path / "r").write_text("\n".join(lines[::-1] * 40) + "\n")
    cmd = [sys.executable, "-m", "ngrameval", "score", str(tmp_path / "h"), "-r", str(tmp_path / "r"), "-m", "nist"]
    cmd += ["--chunk-size", "1000", "--jobs", "1"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "TMPDIR": str(spill_root)})  # fmt: skip
    try:
        deadline = time.monotonic() + 60  # a hang guard: waits for the files (the event), measures nothing
        while not _ours(str(spill_root)) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)  # polls for the event
        assert _ours(str(spill_root)), "the files never appeared"
        proc.send_signal(signal.SIGINT)  # at once: the files exist, so the run is past creating them
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert _ours(str(spill_root)) == []


def test_an_interrupt_while_the_files_are_made_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C between making the directory and opening its last file (where the CLI test's signal can land)."""
    import builtins

    from ngrameval.scale import refspill

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    opened = []

    def interrupted(*args: object, **kwargs: object) -> object:
        if len(opened) == 3:
            raise KeyboardInterrupt
        handle = builtins.open(*args, **kwargs)  # type: ignore[call-overload]  # noqa: SIM115 - closed by the code under test
        opened.append(handle)
        return handle

    monkeypatch.setattr(refspill, "open", interrupted, raising=False)
    with pytest.raises(KeyboardInterrupt):
        refspill.SpilledCounts(4)
    assert list(tmp_path.iterdir()) == [] and all(h.closed for h in opened)
