"""Streaming ``score`` (ngrameval.scale.files): bit for bit the in-memory scores with any chunk size, compressed
inputs, the same strict errors naming the right file and line, sentence output equal and written atomically,
NIST in two passes, and peak memory that does not grow with the input."""

from __future__ import annotations

import bz2
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ngrameval.api import score
from ngrameval.cli import main
from ngrameval.errors import ConfigError, InputError
from ngrameval.io import read_lines
from ngrameval.io.read import LineStream
from ngrameval.scale.files import Files, read_chunks, score_files

WORDS = ["the", "cat", "sat", "on", "mat", "0", "dog", "ran", ",", ".", "running", "cats", "a", "is", "Über"]
# every family: n-gram stats (BLEU, AEv, NIST with mteval's "0" bigrams, plain profile), ROUGE, chrF, TER, PINC, SE
METRICS = "bleu,nist,nist:n=3,profile=plain,rouge-l,rouge-2,chrf,ter,aev:alpha=0.3,n=2,se,pinc,bleu:tok=intl,lc=yes"


def _line(rng: np.random.Generator) -> str:
    return " ".join(rng.choice(WORDS, size=int(rng.integers(0, 12))).tolist())


def corpus(n: int, seed: int) -> tuple[dict[str, list[str]], list[list[str]], list[str]]:
    """Two systems, two reference streams and a source of ``n`` generated segments (empty lines included)."""
    rng = np.random.default_rng(seed)
    systems = {"a": [_line(rng) for _ in range(n)], "b": [_line(rng) for _ in range(n)]}
    refs = [[_line(rng), _line(rng)] for _ in range(n)]
    return systems, refs, [_line(rng) for _ in range(n)]


def write(path: Path, lines: list[str]) -> str:
    data = ("\n".join(lines) + "\n").encode()
    # the fastest level: what is read back is the same, and level 9 took 10 s for 200k segments
    opener = {".gz": gzip.compress, ".bz2": bz2.compress}.get(path.suffix)
    path.write_bytes(opener(data, compresslevel=1) if opener else data)
    return str(path)


def on_disk(tmp: Path, n: int, seed: int, suffix: str = "") -> tuple[Files, tuple[dict[str, list[str]], ...]]:
    systems, refs, source = corpus(n, seed)
    files = Files(
        {name: write(tmp / f"{name}.txt{suffix}", hyps) for name, hyps in systems.items()},
        [write(tmp / f"ref{k}.txt{suffix}", [r[k] for r in refs]) for k in range(2)],
        write(tmp / f"src.txt{suffix}", source),
    )
    return files, ({"systems": systems, "refs": refs, "source": source},)  # type: ignore[dict-item]


def plain(scores: list[object]) -> list[tuple[object, ...]]:
    return [(s.system, s.metric, s.score, s.signature, s.details) for s in scores]  # type: ignore[attr-defined]


@pytest.mark.parametrize(("chunk", "suffix"), [(1, ""), (7, ".gz"), (97, ".bz2"), (1000, "")])
def test_equal_to_in_memory_bit_for_bit(tmp_path: Path, chunk: int, suffix: str) -> None:
    n = 150 if chunk == 1 else 400
    files, (data,) = on_disk(tmp_path, n, chunk, suffix)
    want = score(data["systems"], data["refs"], METRICS, source=data["source"])
    got = score_files(files, METRICS, chunk).scores()
    assert plain(list(got)) == plain(list(want))


def test_threads_and_kept_rows_equal(tmp_path: Path) -> None:
    files, (data,) = on_disk(tmp_path, 300, 5)
    from ngrameval.api import measure

    want = measure(data["systems"], data["refs"], "bleu,rouge-l,nist,chrf", data["source"])
    got = score_files(files, "bleu,rouge-l,nist,chrf", 41, jobs=2, keep_rows=True)
    assert got.kept is not None and got.segments == 300
    for w, g in zip(want, got.kept, strict=True):
        assert (w.metric, w.signature) == (g.metric, g.signature)
        for a, b in zip(w.values, g.values, strict=True):
            np.testing.assert_array_equal(a, b)


def test_line_stream_equals_read_lines(tmp_path: Path) -> None:
    """Blocks of a few bytes: CRLF, a final line without its end, a BOM at the start, a lone CR at the very end."""
    cases = [b"\xef\xbb\xbfa b\r\nc\n\nd", b"x\r\ny\r\n", b"\xc3\xbcber\n\xe2\x80\xa8z\r", b"", b"\n\n", b"one"]
    for k, data in enumerate(cases):
        p = tmp_path / f"f{k}.txt"
        p.write_bytes(data)
        for block in (1, 2, 3, 64):
            with LineStream(p, block) as s:
                got = s.take(2) + s.take(100)
            assert got == read_lines(p), (data, block)
            with LineStream(p, block) as s:
                s.take(1)
                assert s.count_rest() == len(read_lines(p))


@pytest.mark.parametrize(
    ("data", "line"),
    [
        (b"ok\nok\n\xff bad\nok\n", 3),  # invalid UTF-8 in the middle of a chunk
        (b"ok\nok\nok\nbad\rcr\n", 4),  # a bare CR
        (b"ok\nok\nok\nok\nok\n\xef\xbb\xbfbom\n", 6),  # a BOM after the start
    ],
)
def test_bad_text_names_the_line(tmp_path: Path, data: bytes, line: int) -> None:
    files, _ = on_disk(tmp_path, 6, 1)
    bad = tmp_path / "bad.txt"
    bad.write_bytes(data + b"x\n" * (6 - data.count(b"\n")))
    with pytest.raises(InputError) as streamed:
        score_files(Files({"bad": str(bad)}, files.refs), "bleu", 4)
    with pytest.raises(InputError) as whole:
        read_lines(bad)
    assert str(streamed.value) == str(whole.value)
    assert str(streamed.value).startswith(f"{bad}:{line}: ")


def _cli(tmp: Path, *args: str) -> tuple[int, str, str]:
    out = tmp / "out.txt"
    code = main(["score", *args, "-o", str(out)])
    return code, out.read_text() if out.exists() else "", str(out)


@pytest.mark.parametrize("which", ["system", "ref", "source"])
def test_line_counts_differ_same_message(tmp_path: Path, capsys: pytest.CaptureFixture[str], which: str) -> None:
    files, _ = on_disk(tmp_path, 30, 2)
    target = {"system": files.systems["b"], "ref": files.refs[1], "source": files.source}[which]
    assert target is not None
    Path(target).write_text("\n".join(read_lines(target)[:23]) + "\n")
    args = [*files.systems.values(), "-r", *files.refs, "--source", files.source, "-m", "bleu,pinc"]
    assert main(["score", *args]) == 2
    whole = capsys.readouterr().err
    assert main(["score", *args, "--chunk-size", "10"]) == 2
    streamed = capsys.readouterr().err
    assert streamed == whole and "23" in streamed and target in streamed


def test_sentence_output_equal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files, _ = on_disk(tmp_path, 60, 3, ".gz")
    args = [*files.systems.values(), "-r", *files.refs, "-m", "bleu,nist,rouge-l", "--sentence"]
    for fmt in ("text", "csv", "json"):
        for extra in ([], ["--confidence", "--confidence-n", "50"]):
            assert main(["score", *args, *extra, "-f", fmt, "-w", "4"]) == 0
            whole = capsys.readouterr().out
            assert main(["score", *args, *extra, "-f", fmt, "-w", "4", "--chunk-size", "7"]) == 0
            assert capsys.readouterr().out == whole, (fmt, extra)
            if fmt == "json":
                assert len(json.loads(whole)[0]["sentences"]) == 60
    out = tmp_path / "sent.tsv"
    assert main(["score", *args, "--chunk-size", "13", "-o", str(out)]) == 0
    assert main(["score", *args]) == 0
    assert out.read_text() == capsys.readouterr().out


def test_nothing_half_written_on_error(tmp_path: Path) -> None:
    files, _ = on_disk(tmp_path, 40, 4)
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok\n" * 30 + b"\xfe\n" + b"ok\n" * 9)
    out = tmp_path / "out.tsv"
    out.write_text("old\n")
    argv = ["score", str(bad), "-r", *files.refs, "--sentence", "--chunk-size", "7", "-o", str(out)]
    assert main(argv) == 2
    assert out.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_cli_scores_equal_cider_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Streamed scores equal those in memory; CIDEr (refused with --chunk-size before its reference side could be
    made on its own) too: its side of every reference first, then the chunks."""
    files, _ = on_disk(tmp_path, 80, 6, ".gz")
    args = [*files.systems.values(), "-r", *files.refs, "--source", str(files.source), "-m", METRICS, "-w", "6"]
    assert main(["score", *args]) == 0
    whole = capsys.readouterr().out
    assert main(["score", *args, "--chunk-size", "11", "--jobs", "2"]) == 0
    assert capsys.readouterr().out == whole
    cider = [*args[:-4], "-m", "cider-d,cider"]
    assert main(["score", *cider]) == 0
    whole = capsys.readouterr().out
    assert main(["score", *cider, "--chunk-size", "11"]) == 0
    assert capsys.readouterr().out == whole


def test_chunks_in_lockstep(tmp_path: Path) -> None:
    files, (data,) = on_disk(tmp_path, 25, 7)
    chunks = list(read_chunks(files, 10))
    assert [c.start for c in chunks] == [0, 10, 20]
    assert [h for c in chunks for h in c.systems["a"]] == data["systems"]["a"]
    assert [r for c in chunks for r in c.refs] == data["refs"]


def _peak_rss_mb(tmp: Path, n: int, streamed: bool = True) -> float:
    """Peak RSS of a subprocess streaming BLEU, ROUGE-L and NIST over ``n`` generated segments (``streamed``
    False: the same command in memory), each line drawn from a pool of 3,000 (NIST's counts are on disk; its
    groups of buckets are small either way)."""
    if not (tmp / f"ref{n}.txt.gz").exists():  # (written once for both ways of reading it)
        rng = np.random.default_rng(n)
        vocab = np.array([f"w{i}" for i in range(300)])
        lens = rng.integers(5, 20, size=3000)
        words = vocab[rng.integers(0, len(vocab), size=int(lens.sum()))]
        pool = [" ".join(w) for w in np.split(words, np.cumsum(lens)[:-1])]
        for name in ("sys", "ref"):
            write(tmp / f"{name}{n}.txt.gz", [pool[i] for i in rng.integers(0, len(pool), size=n)])
    code = (  # VmHWM: ru_maxrss would include pytest's own memory (Linux keeps it across fork + exec)
        "import re, sys\n"
        "from ngrameval.cli import main\n"
        "rc = main(sys.argv[1:])\n"
        "print(int(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read())[1]) / 1024, file=sys.stderr)\n"
        "sys.exit(rc)\n"
    )
    argv = ["score", str(tmp / f"sys{n}.txt.gz"), "-r", str(tmp / f"ref{n}.txt.gz"), "-m", "bleu,rouge-l,nist"]
    argv += [*(["--chunk-size", "5000"] if streamed else []), "--jobs", "1", "-o", str(tmp / f"out{n}")]
    run = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True,
                         env={**os.environ, "OMP_NUM_THREADS": "1"})  # fmt: skip
    return float(run.stderr.strip().splitlines()[-1])


@pytest.mark.slow
def test_memory_flat(tmp_path: Path) -> None:
    """Four times the segments: peak RSS grows by far less streamed than in memory (the text and rows, ~4x).
    Measured: streamed +43 MB (NIST's bucket groups grow towards their 16 MB budget; BLEU and ROUGE-L alone stay
    within 2 MB), in memory +207 MB. (A bound of 1.35x the smaller streamed run + 20 MB failed once that run got
    smaller.)"""
    small, large = _peak_rss_mb(tmp_path, 50_000), _peak_rss_mb(tmp_path, 200_000)
    whole_small, whole_large = _peak_rss_mb(tmp_path, 50_000, False), _peak_rss_mb(tmp_path, 200_000, False)
    assert large - small < 0.35 * (whole_large - whole_small), (small, large, whole_small, whole_large)


def test_empty_files_and_nist_on_stdin(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "h").write_text("")
    (tmp_path / "r").write_text("")
    args = ["score", str(tmp_path / "h"), "-r", str(tmp_path / "r"), "-m", "bleu,nist,rouge-l,chrf,cider-d"]
    assert main(args) == 0
    whole = capsys.readouterr().out
    assert main([*args, "--chunk-size", "3"]) == 0
    assert capsys.readouterr().out == whole
    for metric in ("nist", "cider-d"):
        with pytest.raises(ConfigError, match="references twice"):
            score_files(Files({"h": str(tmp_path / "h")}, ["-"]), metric, 5)


def test_compare_streamed_equals_in_memory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``compare --chunk-size`` keeps the rows, not the text: the same p-values, intervals and output."""
    files, _ = on_disk(tmp_path, 90, 5, ".gz")
    args = ["compare", *files.systems.values(), "-r", *files.refs, "-m", "bleu,nist,chrf", "-f", "json"]
    for extra in ([], ["--paired-bs", "--paired-bs-n", "200"], ["--baseline", "--paired-ar-n", "300"]):
        assert main([*args, *extra]) == 0
        whole = capsys.readouterr().out
        assert main([*args, *extra, "--chunk-size", "7"]) == 0
        assert capsys.readouterr().out == whole, extra
        assert json.loads(whole)


@pytest.mark.parametrize("command", ["score", "compare"])
def test_chunk_size_is_refused_on_dask(tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str) -> None:
    files, _ = on_disk(tmp_path, 10, 6)
    argv = [command, *files.systems.values(), "-r", *files.refs, "--chunk-size", "5", "--scheduler", "local:1"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--chunk-size" in err and "--blocksize" in err


def test_undefined_counts_add_up_over_systems_and_chunks(tmp_path: Path) -> None:
    """One warning per message whichever way the corpus is read, its total counting the systems and chunks
    without an undefined score too."""
    import warnings

    write(tmp_path / "a", ["a b", "c d", "e f", "g h"])
    write(tmp_path / "b", ["a b", "", "e f", ""])
    write(tmp_path / "r", ["a b", "c d", "e f", "g h"])
    write(tmp_path / "s", ["x y", "c d", "e", "g"])
    files = Files({"a": str(tmp_path / "a"), "b": str(tmp_path / "b")}, [str(tmp_path / "r")], str(tmp_path / "s"))
    said = []
    for chunk in (None, 1, 2):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if chunk is None:
                data = {n: read_lines(p) for n, p in files.systems.items()}
                score(data, read_lines(str(tmp_path / "r")), "pinc", source=read_lines(str(tmp_path / "s")))
            else:
                score_files(files, "pinc", chunk).close()
        said.append([str(w.message) for w in caught])
    assert said == [["PINC: 2 of 8 score(s) undefined (empty candidate); reported as 0"]] * 3
