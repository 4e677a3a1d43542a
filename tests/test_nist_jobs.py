"""NIST counted on threads (issue 32, item 6): the reference n-grams interned a range of buckets at a time
(``_overlap.intern_plan`` / ``intern_part`` / ``intern_rebase``), the information weights in blocks and the
segments in chunks, on ``jobs`` threads. The rows are the same floats for every ``jobs`` and every bucketing (the
numbering of the n-grams changes with the bucketing; nothing downstream depends on it)."""

from __future__ import annotations

import contextlib
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.conftest import pool_interrupted, ticks_beside

from ngrameval import Preprocess, References, _overlap, overlap_stats
from ngrameval import jobs as local
from ngrameval.ngrams import count
from ngrameval.ngrams.count import intern

I8, I32, I64 = np.int8, np.int32, np.int64

words = st.sampled_from(["a", "b", "c", "0", "00", "d"])  # "0": mteval's false prefix key
line = st.lists(words, max_size=8).map(" ".join)  # empty lines too
segment = st.tuples(line, line, st.lists(line, min_size=1, max_size=3))  # system a, system b, 1-3 references


@contextlib.contextmanager
def bucketed(keys: int, min_chunk: int = 1) -> Iterator[None]:
    """About ``keys`` n-gram positions a bucket and chunks of ``min_chunk`` segments: a small corpus cut as a big
    one is."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(count, "BUCKET_KEYS", keys)
        mp.setattr(local, "MIN_CHUNK", min_chunk)
        yield


@settings(max_examples=80, deadline=None)
@given(st.lists(segment, min_size=1, max_size=40), st.integers(1, 5))
def test_nist_rows_are_the_same_floats_for_every_jobs_and_bucketing(data, n) -> None:  # type: ignore[no-untyped-def]
    systems = [[a for a, _, _ in data], [b for _, b, _ in data]]
    built = References.build([r for *_, r in data], Preprocess("none"))

    def rows(jobs: int, keys: int) -> list[bytes]:
        with bucketed(keys):
            return [s.values.tobytes() for s in overlap_stats(systems, built, n, nist=True, jobs=jobs)]

    want = rows(1, 1 << 30)  # one bucket: the n-grams numbered in order of first occurrence
    for jobs, keys in [(1, 1), (2, 1), (3, 2), (2, 1 << 30)]:
        assert rows(jobs, keys) == want, (jobs, keys)


def _texts(lines: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    off = np.zeros(len(lines) + 1, dtype=I64)
    np.cumsum([len(t) for t in lines], out=off[1:])
    return np.array([t for text in lines for t in text], dtype=I32), off


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 5), max_size=12), min_size=1, max_size=12),
    st.integers(1, 5),
    st.sampled_from([1, 2, 5, 1 << 30]),
)
def test_intern_numbers_every_reference_ngram_once(lines, n, keys) -> None:  # type: ignore[no-untyped-def]
    """Against a dictionary of the n-grams: one id per distinct n-gram, its count, order and prefix; the unigrams
    first, in order of first occurrence; -1 past the end of a text; the same ids for every ``jobs``."""
    ids, off = _texts(lines)
    with bucketed(keys):
        got = intern(ids, off, n)
        for jobs in (2, 3):
            other = intern(ids, off, n, jobs)
            for field in ("gid", "count", "prefix", "order"):
                assert getattr(got, field).tolist() == getattr(other, field).tolist()
    want = Counter(tuple(t[i : i + k]) for t in lines for k in range(1, n + 1) for i in range(len(t) - k + 1))
    grid = got.gid.reshape(-1, n)
    named: dict[int, tuple[int, ...]] = {}
    for text, start in zip(lines, off[:-1].tolist(), strict=True):
        for i in range(len(text)):
            for k in range(1, n + 1):
                g = int(grid[start + i, k - 1])
                if i + k > len(text):
                    assert g == -1
                    continue
                gram = tuple(text[i : i + k])
                assert named.setdefault(g, gram) == gram  # one n-gram per id
                assert got.order[g] == k and got.count[g] == want[gram]
                assert got.prefix[g] == (-1 if k == 1 else grid[start + i, k - 2])
    assert len(named) == len(want) == len(got.count)  # one id per n-gram
    first_seen = list(dict.fromkeys(t for text in lines for t in text))
    assert [named[g] for g in range(len(first_seen))] == [(t,) for t in first_seen]


def test_intern_parts_run_on_the_pool_with_the_lock_released() -> None:
    """With two jobs the bucket ranges are interned by calls on pool threads (four ranges, two a thread), and a
    call lets other Python threads run."""
    rng = np.random.default_rng(3)
    ids, off = _texts([rng.integers(0, 50, 30).tolist() for _ in range(200)])
    seen: list[int] = []
    real = _overlap.intern_part

    def spy(*args: object) -> int:
        seen.append(threading.get_ident())
        return real(*args)  # type: ignore[arg-type]

    with bucketed(8), pytest.MonkeyPatch.context() as mp:
        mp.setattr(_overlap, "intern_part", spy)
        intern(ids, off, 4, jobs=2)
    assert len(seen) == 2 * count.PARTS_PER_JOB and threading.get_ident() not in seen
    big_ids, big_off = _texts([rng.integers(0, 5000, 200).tolist() for _ in range(5000)])
    assert ticks_beside(lambda: intern(big_ids, big_off, 5)) > 0


def test_intern_kernels_refuse_buffers_of_another_plan() -> None:
    """A part's positions, bucket bounds and output room are checked against each other: ValueError, never a
    write out of bounds."""
    ids, off = _texts([[1, 2, 3, 4], [5, 6]])
    gid = np.empty(len(ids) * 3, dtype=I32)
    pos_b, bstart_b, uni_b = _overlap.intern_plan(ids, off, 3, gid, 1)
    pos, bstart = np.frombuffer(pos_b, I64), np.frombuffer(bstart_b, I64)
    room = [np.empty(8, I64), np.empty(8, I32), np.empty(8, I8)]
    assert _overlap.intern_part(ids, gid.copy(), 3, pos, bstart, 0, 2, 6, 6, *room) == 6  # 4 bigrams, 2 trigrams
    bad_pos = pos.copy()
    bad_pos[0] = len(ids) - 1  # the last token starts no bigram
    for call in (
        lambda: _overlap.intern_plan(ids, off, 3, gid[:-1], 1),  # gid of another size
        lambda: _overlap.intern_plan(ids, off, 3, np.frombuffer(gid.tobytes(), I32), 1),  # read-only
        lambda: _overlap.intern_plan(ids, off, 3, gid, 17),  # more than 2**16 buckets
        lambda: _overlap.intern_part(ids, gid, 3, bad_pos, bstart, 0, 2, 6, 6, *room),
        lambda: _overlap.intern_part(ids, gid, 3, pos, bstart[::-1].copy(), 0, 2, 6, 6, *room),
        lambda: _overlap.intern_part(ids, gid, 3, pos, bstart, 0, 3, 6, 6, *room),  # past the last bucket
        lambda: _overlap.intern_part(ids, gid, 3, pos, bstart, 0, 2, 6, 5, *room),  # base below the unigrams
        lambda: _overlap.intern_part(ids, gid, 3, pos, bstart, 0, 2, 6, 6, *(a[:7] for a in room)),  # no room
        lambda: _overlap.intern_part(ids[:-1], gid, 3, pos, bstart, 0, 2, 6, 6, *room),
        lambda: _overlap.intern_rebase(gid, 3, pos, bstart, 0, 2, -1, *room, np.zeros(6, I64), np.zeros(8)),
    ):
        with pytest.raises(ValueError):
            call()
    assert len(uni_b) == 6 * 8


def test_ctrl_c_while_nist_counts_on_threads_exits_130(tmp_path: Path) -> None:
    """SIGINT while ``score -m nist --jobs 2`` interns the references on the pool (the main thread encoding the
    systems, then waiting): exit 130, one line, no output file. The first part waits until the signal has reached
    the main thread, so the run cannot end before it (no timing)."""
    rng = np.random.default_rng(5)
    vocab = np.array(["the", "a", "cat", "sat", "on", "mat", ",", ".", "0"])
    for name in ("h", "r"):
        lines = [" ".join(rng.choice(vocab, 12).tolist()) for _ in range(3_000)]
        (tmp_path / f"{name}.txt").write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.txt"
    argv = ["score", str(tmp_path / "h.txt"), "-r", str(tmp_path / "r.txt"), "-m", "nist", "--jobs", "2"]
    prelude = "from ngrameval.ngrams import count; count.BUCKET_KEYS = 64  # several bucket ranges"
    ended = pool_interrupted([*argv, "-o", str(out)], "ngrameval._overlap", "intern_part", prelude)
    assert ended.status == 130 and ended.err == "ngrameval: interrupted\n", ended.err
    assert not out.exists()


def test_nist_info_in_blocks_is_the_serial_floats() -> None:
    """The weights of 300,000 n-grams in blocks on 1, 2 and 3 threads (several blocks of 2**16): the same floats,
    element by element, as one NumPy pass of the formula."""
    rng = np.random.default_rng(1)
    counts = rng.integers(1, 50, 300_000).astype(I64)
    prefixes = np.where(rng.random(300_000) < 0.1, -1, rng.integers(0, 300_000, 300_000)).astype(I32)
    context = np.where(prefixes < 0, 10**6, counts[np.maximum(prefixes, 0)]).astype(np.float64)
    want = np.log2(context / counts)
    for jobs in (1, 2, 3):
        assert count.nist_info(counts, prefixes, 10**6, jobs).tobytes() == want.tobytes()
