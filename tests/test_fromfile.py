"""Counting straight from a file's UTF-8 bytes (``ngrameval._direct.lines`` / ``count_bytes``,
``ngrameval.scale.fromfile``, ``score``'s path for plain files): the rows are the in-memory ``measure``'s bit for bit,
and ``score``'s output, warnings and errors are those of reading the files as ``str`` first (issue 32, item 6)."""

from __future__ import annotations

import random
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ngrameval.scale.fromfile
from ngrameval import _direct
from ngrameval.api import checked_specs, measure
from ngrameval.cli.run import main
from ngrameval.io.read import read_lines
from ngrameval.ngrams.stats import MetricRows
from ngrameval.scale.fromfile import count_files

# pieces of lines: ASCII words and symbols 13a pads or splits, Latin-1 and wider characters, markup and entities
# 13a unescapes (any case), whitespace above ASCII (NBSP, NEL, U+2028, ideographic space), separators 0x1C-0x1F
# and NUL, characters whose str.lower() changes length or reaches ASCII, a token longer than a SIMD block
PIECES = [
    "the", "Cat", "sat", "on", "MAT", " ", " ", "  ", "\t", ",", ".", "1,000", "3.5", "-", "'s", "n't", "$", "%",
    "&", "&quot;", "&AMP;", "&lt;", "&gt;", "<", "<skipped>", "<SKIPPED>", "é", "naïve", "Été", "“", "”", "—",
    "東京", "Ünï", "\u00a0", "\u0085", "\u2028", "\u3000", "\x1c", "\x00", "İ", "ß", "ǅ", "K", "\U0001f600",
    "x" * 70, "Ab1" * 30,
]  # fmt: skip
SPECS = [
    "bleu", "bleu:lc=true", "bleu:tok=none", "bleu:tok=none,lc=true", "rouge-1,rouge-2,rouge-l",
    "rouge-l:profile=rouge-score,rouge-2:profile=rouge-score", "rouge-lsum", "bleu,rouge-l",
]  # fmt: skip

line_st = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)


def _write(path: Path, lines: list[str], final_newline: bool) -> str:
    path.write_bytes(("\n".join(lines) + ("\n" if final_newline else "")).encode())
    return str(path)


def _same_rows(got: list[MetricRows] | None, want: list[MetricRows]) -> None:
    assert got is not None  # served by the bytes path
    assert [(r.metric, r.signature, r.fraction, r.higher_is_better) for r in got] == [
        (r.metric, r.signature, r.fraction, r.higher_is_better) for r in want
    ]
    for g, w in zip(got, want, strict=True):
        assert len(g.values) == len(w.values)
        for a, b in zip(g.values, w.values, strict=True):
            assert a.shape == b.shape and np.array_equal(a, b), g.metric
        assert np.array_equal(g.corpus(), w.corpus())


def _said(run: Any) -> tuple[Any, list[str]]:
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        out = run()
    return out, [f"{w.category.__name__}: {w.message}" for w in said]


CORPORA = {
    "data": st.data(),
    "n_refs": st.integers(1, 2),
    "n_sys": st.integers(1, 2),
    "final": st.booleans(),
    "spec": st.sampled_from(SPECS),
    "chunk": st.integers(1, 9),
    "grain": st.integers(1, 4),
}


def _rows_are_the_in_memory_rows(
    tmp_path: Path, data: st.DataObject, n_refs: int, n_sys: int, final: bool, spec: str, chunk: int, grain: int
) -> None:
    """Random files (``PIECES``; with and without a final line end; pieces of about ``chunk`` segments, cut at
    multiples of ``grain``): ``count_files`` with one and two jobs gives ``measure()``'s rows and warnings."""
    n = data.draw(st.integers(1, 25))
    streams = [data.draw(st.lists(line_st, min_size=n, max_size=n)) for _ in range(n_refs + n_sys)]
    paths = [_write(tmp_path / f"f{k}.txt", s, final or k % 2 == 1 or not s[-1]) for k, s in enumerate(streams)]
    assert [read_lines(p) for p in paths] == streams
    specs = checked_specs(spec)
    systems = {f"s{k}": streams[n_refs + k] for k in range(n_sys)}
    seg_refs = [list(r) for r in zip(*streams[:n_refs], strict=True)]
    want, want_said = _said(lambda: measure(systems, seg_refs, specs))
    for jobs in (1, 2):
        sys_paths = {f"s{k}": paths[n_refs + k] for k in range(n_sys)}
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(ngrameval.scale.fromfile, "PIECE", chunk)
            mp.setattr(ngrameval.scale.fromfile, "GRAIN", grain)
            got, got_said = _said(lambda: count_files(paths[:n_refs], sys_paths, specs, jobs))  # noqa: B023
        _same_rows(got, want)
        assert got_said == want_said  # the lost ROUGE texts of declined chunks: said once for the corpus


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(**CORPORA)
def test_rows_are_the_in_memory_rows(tmp_path: Path, **drawn: Any) -> None:
    _rows_are_the_in_memory_rows(tmp_path, **drawn)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(**CORPORA)
def test_rows_are_the_in_memory_rows_many(tmp_path: Path, **drawn: Any) -> None:
    _rows_are_the_in_memory_rows(tmp_path, **drawn)


def test_declined_rouge_chunks_are_counted_from_str(tmp_path: Path) -> None:
    """A ROUGE text above ASCII: its chunk is counted from ``str`` (the kernel declines it), with the same rows."""
    calls: list[tuple[int, bool]] = []
    real = _direct.count_bytes

    def spy(*args: Any) -> bool:
        calls.append((args[3], real(*args)))  # (first segment, counted)
        return calls[-1][1]

    lines = [f"the cat {k} sat" for k in range(20)]
    ref = _write(tmp_path / "r.txt", lines, True)
    hyp = _write(tmp_path / "h.txt", [*lines[:13], "naïve été", *lines[14:]], True)
    specs = checked_specs("rouge-1,rouge-l")
    want = measure({"h": read_lines(hyp)}, [[x] for x in lines], specs)
    mp = pytest.MonkeyPatch()
    with mp.context() as m:
        m.setattr(_direct, "count_bytes", spy)
        m.setattr(ngrameval.scale.fromfile, "PIECE", 5)
        m.setattr(ngrameval.scale.fromfile, "GRAIN", 5)
        got = count_files([ref], {"h": hyp}, specs, 2)
    assert sorted(calls) == [(0, True), (5, True), (10, False), (15, True)]  # segments 11-15 declined
    _same_rows(got, want)


@pytest.mark.parametrize(
    "body",
    [b"", b"a\r\nb\n", b"\xef\xbb\xbfa\nb\n", b"a\n\xef\xbb\xbfb\n", b"a\xff\n", b"\xed\xa0\x80\n", b"\xc0\xaf",
     b"\xf4\x90\x80\x80", b"\xe2\x82", b"caf\xc3\xa9\n\xf0\x9f\x98\x80\n\n", b"no final line end", b"a\x00b\n\n\n"],
)  # fmt: skip
def test_lines_are_the_readers_lines(tmp_path: Path, body: bytes) -> None:
    """``_direct.lines``: plain exactly when io.read would give the lines as they are (valid UTF-8, no CR, no BOM);
    then its count and chunk offsets (every 2 lines; and every 3 from the same pass) are those of the reader's
    lines."""
    n, plain, cuts, fine = _direct.lines(body, 2, False, 3)
    assert _direct.lines(body, 2)[3] == b""
    try:
        text = body.decode("utf-8")
        ok = "\r" not in text and "\ufeff" not in text
    except UnicodeDecodeError:
        ok = False
    assert plain == ok
    path = tmp_path / "f.txt"
    path.write_bytes(body)
    if ok:
        assert n == len(read_lines(path))
    offsets = np.frombuffer(cuts, dtype=np.int64).tolist()
    starts = [0] + [k + 1 for k, b in enumerate(body) if b == 10 and k + 1 < len(body)]
    assert offsets == [*starts[::2], len(body)] if body else offsets == [0]
    assert np.frombuffer(fine, dtype=np.int64).tolist() == ([*starts[::3], len(body)] if body else [0])


def test_lines_drops_only_the_pages_of_a_read_only_mapping(tmp_path: Path) -> None:
    """``lines(..., drop=True)`` lets the pages of a read-only file mapping go (the file's bytes are still read back)
    and refuses any other buffer (dropping the pages of anonymous memory would zero them)."""
    import mmap

    body = b"".join(b"line %d \xc3\xa9\n" % k for k in range(300_000))  # ~4.7 MB: several pages
    path = tmp_path / "f.txt"
    path.write_bytes(body)
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as m:
        assert _direct.lines(m, 1000, True)[:2] == (300_000, True)
        assert m[:] == body
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_COPY) as writable, pytest.raises(ValueError, match="mmap"):
            _direct.lines(writable, 1, True)
    data = bytearray(body)
    with pytest.raises(ValueError, match="read-only mmap"):
        _direct.lines(data, 1, True)
    assert data == body


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=40) | st.text(max_size=20).map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_plain_is_what_python_decodes(body: bytes) -> None:
    try:
        text = body.decode("utf-8")
        ok = "\r" not in text and "\ufeff" not in text
    except UnicodeDecodeError:
        ok = False
    assert _direct.lines(body, 1)[1] == ok


def _served(real: Any, served: list[bool]) -> Any:
    """``real``, noting in ``served`` whether each call served its input (gave something other than None)."""

    def spy(*args: Any) -> Any:
        got = real(*args)
        served.append(got is not None)
        return got

    return spy


def _cli(argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str], tag: str) -> tuple[Any, ...]:
    target = tmp_path / f"out-{tag}.txt"
    code, said = _said(lambda: main([*argv, "-o", str(target)]))
    return code, target.read_bytes() if target.exists() else b"", capsys.readouterr().err, said


CASES = {
    "plain": lambda lines: "\n".join(lines) + "\n",
    "no-final-newline": lambda lines: "\n".join(lines),
    "crlf": lambda lines: "\r\n".join(lines) + "\r\n",
    "bom": lambda lines: "\ufeff" + "\n".join(lines) + "\n",
    "bad-utf8": lambda lines: "\n".join(lines) + "\n\udcff\n",
    "bare-cr": lambda lines: "\n".join(lines) + "\rx\n",
    "late-bom": lambda lines: "\n".join(lines) + "\n\ufeffx\n",
    "short": lambda lines: "\n".join(lines[:-1]) + "\n",
}


@pytest.mark.parametrize(
    ("case", "metrics"),
    [(case, m) for case in CASES for m in ("bleu", "bleu,rouge-1,rouge-l", "rouge-2")]
    + [("plain", f"bleu,rouge-l {x}") for x in ("--sentence -f json", "--confidence --confidence-n 5", "-b")],
)
def test_score_is_the_score_of_reading_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], case: str, metrics: str
) -> None:
    """``score`` with one job and with two: the output bytes, stderr, warnings and exit status of reading the files
    as ``str`` first (the bytes path switched off), whatever the second system's file holds."""
    monkeypatch.setattr(ngrameval.cli.score, "PIPELINE_CHUNK", 7)
    rng = random.Random(7)
    lines = [" ".join(rng.choices(PIECES[:30], k=rng.randint(0, 8))) for _ in range(40)]
    a = _write(tmp_path / "a.txt", lines[::-1], True)
    r = _write(tmp_path / "r.txt", lines, True)
    b = tmp_path / "b.txt"
    b.write_bytes(CASES[case](lines[1:] + lines[:1]).encode("utf-8", "surrogateescape"))
    served: list[bool] = []
    spy = _served(ngrameval.scale.fromfile.count_files, served)
    argv = ["score", a, str(b), "-r", r, "-m", *metrics.split(" ")]  # the metrics, then any other options
    monkeypatch.setattr(ngrameval.scale.fromfile, "count_files", lambda *args: None)
    want = _cli([*argv, "--jobs", "1"], tmp_path, capsys, "serial")  # read first, then measure()
    for jobs in ("1", "2"):
        monkeypatch.setattr(ngrameval.scale.fromfile, "count_files", spy)
        got = _cli([*argv, "--jobs", jobs], tmp_path, capsys, f"new{jobs}")
        assert got == want
        assert served[-1] == (case in ("plain", "no-final-newline")), case


@pytest.mark.parametrize("extra", [[], ["--sentence"], ["--confidence", "--confidence-n", "20"]])
@pytest.mark.parametrize("metrics", ["bleu,bleu:tok=none,lc=true", "rouge-1,rouge-l"])
@pytest.mark.parametrize("wide", [False, True])
def test_streamed_score_is_the_streamed_score_of_reading_first(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    metrics: str,
    wide: bool,
) -> None:
    """``score --chunk-size``: chunks counted from the files' bytes give the output, warnings and exit status of
    streaming the files as ``str`` (its chunks' lost ROUGE texts said per chunk, as one job says them)."""
    monkeypatch.setattr(ngrameval.scale.fromfile, "PIECE", 4)  # pieces of a chunk on the pool
    monkeypatch.setattr(ngrameval.scale.fromfile, "GRAIN", 3)  # a chunk of 7 cut at a multiple of 3: 0-3-7, 7-12-14
    rng = random.Random(11)
    words = PIECES if wide else PIECES[:20]
    lines = [[" ".join(rng.choices(words, k=rng.randint(0, 8))) for _ in range(40)] for _ in range(4)]
    a, b, r1, r2 = (_write(tmp_path / f"{n}.txt", x, True) for n, x in zip(("a", "b", "r1", "r2"), lines, strict=True))
    argv = ["score", a, b, "-r", r1, r2, "-m", metrics, "--chunk-size", "7", *extra]
    served: list[bool] = []
    spy = _served(ngrameval.scale.fromfile.chunk_rows, served)
    monkeypatch.setattr(ngrameval.scale.fromfile, "chunk_rows", lambda *args: None)
    want = _cli([*argv, "--jobs", "1"], tmp_path, capsys, "streamed")
    assert want[0] == 0
    monkeypatch.setattr(ngrameval.scale.fromfile, "chunk_rows", spy)
    for jobs in ("1", "2"):
        assert _cli([*argv, "--jobs", jobs], tmp_path, capsys, f"new{jobs}") == want
    assert served == [True, True]


def test_streamed_chunks_are_counted_while_the_one_before_is_scored(tmp_path: Path) -> None:
    """With two jobs the next chunk is counted on the pool while this one's rows are scored on the calling thread:
    scoring the first chunk waits (a hang guard, not a timing) until the second chunk's counting has begun, which
    without the overlap never happens; the rows are those of one job."""
    import threading

    from ngrameval.metrics.registry import parse_specs

    rng = random.Random(3)
    lines = [[" ".join(rng.choices(PIECES[:20], k=rng.randint(1, 8))) for _ in range(30)] for _ in range(2)]
    a, r = (_write(tmp_path / f"{n}.txt", x, True) for n, x in zip(("a", "r"), lines, strict=True))
    specs = parse_specs("bleu,rouge-l")
    serial = ngrameval.scale.fromfile.chunk_rows([r], [a], specs, 10, 1)
    assert serial is not None
    want = [[rows.values for rows in chunk] for chunk in serial]
    counting, scored = threading.Event(), []
    real_pieces, real_rows = ngrameval.scale.fromfile.Corpus.pieces, ngrameval.scale.fromfile._rows

    def pieces(self: Any, by_text: Any, first: int, n: int, jobs: int) -> Any:
        outs, tasks = real_pieces(self, by_text, first, n, jobs)

        def begun(task: Any) -> Any:
            def run() -> Any:
                counting.set()  # a piece of the second chunk is being counted
                return task()

            return run

        return outs, [begun(t) if first == 10 else t for t in tasks]

    def rows(*args: Any) -> Any:
        if not scored:
            scored.append(counting.wait(timeout=300))
        return real_rows(*args)

    mp = pytest.MonkeyPatch()
    with mp.context() as m:
        m.setattr(ngrameval.scale.fromfile.Corpus, "pieces", pieces)
        m.setattr(ngrameval.scale.fromfile, "_rows", rows)
        chunks = ngrameval.scale.fromfile.chunk_rows([r], [a], specs, 10, 2)
        assert chunks is not None
        got = [[rows.values for rows in chunk] for chunk in chunks]
    assert scored == [True]
    assert len(got) == len(want) == 3
    for g, w in zip(got, want, strict=True):
        for x, y in zip(g, w, strict=True):
            np.testing.assert_array_equal(x, y)
