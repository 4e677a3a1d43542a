"""Input and output files (issue 15): outputs never replace an input or a special file, JSON has no NaN, text
and judgment files are read strictly with errors naming the file and the line."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import random
import signal
import stat
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

import ngrameval.io.read
from ngrameval.cli import main
from ngrameval.errors import InputError
from ngrameval.io.judgments import read_judgments
from ngrameval.io.read import LineStream, expanded_size, read_ids, read_lines, read_ratings, read_text
from ngrameval.io.write import _resolve, check_not_input, dumps_json, write_atomic

ROOT = os.geteuid() == 0 if hasattr(os, "geteuid") else False


def _no_nan(name: str) -> None:
    raise AssertionError(f"{name} in JSON output")


def strict_json(text: str) -> object:
    """json.loads that fails on NaN, Infinity and -Infinity (Python's json accepts them by default)."""
    return json.loads(text, parse_constant=_no_nan)


def tmp_files(directory: Path) -> list[Path]:
    return [p for p in directory.rglob(".*.tmp")]


# ---------------------------------------------------------------- 1. -o naming an input


def test_output_that_is_an_input_is_refused(tmp_path: Path) -> None:
    sys_txt = tmp_path / "sys.txt"
    sys_txt.write_text("a\n")
    ref = tmp_path / "ref.txt"
    ref.write_text("b\n")
    link = tmp_path / "link.txt"
    link.symlink_to(sys_txt)
    hard = tmp_path / "hard.txt"
    os.link(sys_txt, hard)
    for output in (sys_txt, str(sys_txt), link, hard, tmp_path / "." / "sys.txt"):
        with pytest.raises(InputError, match=r"sys\.txt|link\.txt|hard\.txt") as exc:
            check_not_input(output, [ref, sys_txt])
        assert "\n" not in str(exc.value) and "is an input" in str(exc.value)
    with pytest.raises(InputError, match=r"-o .*link\.txt: is an input \(.*sys\.txt\)"):
        check_not_input(link, [None, sys_txt])
    check_not_input(tmp_path / "new.txt", [sys_txt, ref])  # does not exist yet: fine
    check_not_input(tmp_path / "other.txt" if (tmp_path / "other.txt").write_text("x") else None, [sys_txt])
    check_not_input(None, [sys_txt])
    check_not_input("/dev/null", ["/dev/null"])  # not a regular file: nothing to clobber
    with pytest.raises(InputError, match=r"--plot .*ref\.txt"):
        check_not_input(ref, [sys_txt, ref], option="--plot")


# ---------------------------------------------------------------- 2. where and how the output is written


def test_new_file_gets_the_umask_and_an_existing_one_keeps_its_mode(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "new.txt", "x\n")
        assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o644  # not mkstemp's 0600
        os.umask(0o077)
        kept = tmp_path / "kept.txt"
        kept.write_text("old\n")
        kept.chmod(0o664)
        write_atomic(kept, "new\n")
        assert stat.S_IMODE(kept.stat().st_mode) == 0o664 and kept.read_text() == "new\n"
    finally:
        os.umask(old)
    assert tmp_files(tmp_path) == []


def test_symlink_stays_a_link_and_its_target_is_replaced(tmp_path: Path) -> None:
    target = tmp_path / "real" / "scores.txt"
    target.parent.mkdir()
    target.write_text("old\n")
    link = tmp_path / "link.txt"
    link.symlink_to(Path("real") / "scores.txt")  # relative, resolved from the link's directory
    chain = tmp_path / "chain.txt"
    chain.symlink_to(link)
    write_atomic(chain, "new\n")
    assert chain.is_symlink() and link.is_symlink() and target.read_text() == "new\n"
    dangling = tmp_path / "dangling.txt"
    dangling.symlink_to(tmp_path / "real" / "later.txt")
    write_atomic(dangling, "made\n")
    assert dangling.is_symlink() and (tmp_path / "real" / "later.txt").read_text() == "made\n"
    assert tmp_files(tmp_path) == []


def test_fifo_is_written_in_place(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    write_atomic(fifo, "through the pipe\n")
    reader.join(10)
    assert got == ["through the pipe\n"] and stat.S_ISFIFO(fifo.stat().st_mode)
    assert tmp_files(tmp_path) == []


# The tests below never name /dev/null or /dev/stdout as the output directly: an implementation that replaced
# special files would replace the machine's /dev/null. They write through a symbolic link in tmp_path (a
# regression replaces only that link) or through /dev/fd/N and /proc/self/fd/N (no file can be made there).


def test_special_paths_resolve_to_in_place_writes() -> None:
    assert _resolve("/dev/null").in_place and _resolve("/dev/stdout").fd == 1 and _resolve("/dev/stderr").fd == 2
    assert _resolve("/dev/fd/1").fd == 1 and _resolve("/proc/self/fd/2").fd == 2


def test_device_is_written_in_place(tmp_path: Path) -> None:
    link = tmp_path / "sink"
    link.symlink_to("/dev/null")
    write_atomic(link, "gone\n")
    assert link.is_symlink() and stat.S_ISCHR(os.stat("/dev/null").st_mode) and tmp_files(tmp_path) == []


CHILD = "import sys; from ngrameval.io.write import write_atomic; write_atomic(sys.argv[1], sys.argv[2])"


def test_dev_stdout_writes_to_the_descriptor(tmp_path: Path) -> None:
    """/dev/stdout redirected to a file with >>: appended, same inode, no truncation, no replacement."""
    log = tmp_path / "log.txt"
    log.write_text("head\n")
    inode = log.stat().st_ino
    link = tmp_path / "out"
    link.symlink_to("/dev/stdout")
    for path in (str(link), "/dev/fd/1", "/proc/self/fd/1"):
        with log.open("ab") as fh:
            subprocess.run([sys.executable, "-c", CHILD, path, "x\n"], stdout=fh, check=True, timeout=60)
    assert log.read_text() == "head\nx\nx\nx\n" and log.stat().st_ino == inode and link.is_symlink()
    piped = subprocess.run([sys.executable, "-c", CHILD, str(link), "y\n"], capture_output=True, timeout=60)
    assert piped.returncode == 0 and piped.stdout == b"y\n"
    assert tmp_files(tmp_path) == []


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda t: t / "no" / "such" / "dir" / "out.txt", r"directory .*dir does not exist"),
        (lambda t: t, "is a directory"),
        (lambda t: t / "adir/", "is a directory|names a directory"),
        (lambda t: t / "file.txt" / "out.txt", "not a directory"),
        (lambda t: Path("/proc/version"), "permission denied|not permitted|input/output|read-only"),
        (lambda t: Path("/proc/no-such-entry"), "no such file|permission denied|not permitted"),
    ],
)
def test_every_os_error_is_one_line_naming_the_path(tmp_path: Path, make, reason: str) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "file.txt").write_text("keep\n")
    (tmp_path / "adir").mkdir()
    path = make(tmp_path)
    with pytest.raises(InputError) as exc:
        write_atomic(path, "x\n")
    msg = str(exc.value)
    assert "\n" not in msg and msg.startswith(str(path)) and ": cannot write (" in msg
    assert __import__("re").search(reason, msg), msg
    assert (tmp_path / "file.txt").read_text() == "keep\n" and tmp_files(tmp_path) == []


@pytest.mark.skipif(ROOT, reason="root may write anywhere")
def test_permission_denied(tmp_path: Path) -> None:
    ro = tmp_path / "ro.txt"
    ro.write_text("keep\n")
    ro.chmod(0o444)
    with pytest.raises(InputError, match=r"ro\.txt: cannot write \(permission denied\)"):
        write_atomic(ro, "x\n")  # a read-only file is not replaced behind its back
    assert ro.read_text() == "keep\n"
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        with pytest.raises(InputError, match=r"out\.txt: cannot write \(permission denied\)"):
            write_atomic(locked / "out.txt", "x\n")
    finally:
        locked.chmod(0o755)
    assert tmp_files(tmp_path) == []


def test_failed_write_leaves_no_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old\n")

    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(InputError, match=r"out\.txt: cannot write \(no space left on device\)"):
        write_atomic(target, "new\n")
    assert target.read_text() == "old\n" and tmp_files(tmp_path) == []


SLOW_CHILD = """
import os, signal, sys, time
import ngrameval.io.write as w
for sig in (signal.SIGTERM, signal.SIGHUP):  # as started from a terminal (under nohup SIGHUP comes in ignored)
    signal.signal(sig, signal.SIG_DFL)
def held(fd):  # holds the write open between the temporary file and the rename, after saying so
    print("in fsync", flush=True)
    time.sleep(3600)  # ended by the test's signal
os.fsync = held
w.write_atomic(sys.argv[1], "new\\n")
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_signal_mid_write_leaves_no_temporary_file(tmp_path: Path, sig: int) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old\n")
    proc = subprocess.Popen([sys.executable, "-c", SLOW_CHILD, str(target)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "in fsync\n", "the child never started writing"
    assert tmp_files(tmp_path), "no temporary file while the write is held"
    proc.send_signal(sig)
    proc.wait(60)  # a hang guard
    assert proc.returncode == -sig  # ended by the signal, as without our handler
    assert tmp_files(tmp_path) == [] and target.read_text() == "old\n"


# ---------------------------------------------------------------- 3. JSON without NaN


def test_dumps_json_writes_null_for_every_non_finite_number() -> None:
    obj = {"a": float("nan"), "b": [1.5, float("inf"), -float("inf")], "c": np.array([[np.nan, 2.0]]), "d": np.int64(3)}
    assert strict_json(dumps_json(obj)) == {"a": None, "b": [1.5, None, None], "c": [[None, 2.0]], "d": 3}


def _judged_inputs(tmp_path: Path) -> list[str]:
    lines = ["the cat sat on the mat", "a dog barks", "hello world", "fine day today"]
    files = {
        "a.txt": lines,
        "b.txt": ["the cat sat on a mat", "a dog barked", "hello there", "nice day"],
        "c.txt": ["cat mat", "dog", "world", "day"],
        "ref.txt": lines,
    }
    for name, content in files.items():
        (tmp_path / name).write_text("".join(f"{ln}\n" for ln in content))
    (tmp_path / "flat.csv").write_text("system,score\na.txt,3\nb.txt,3\nc.txt,3\n")  # constant: r undefined
    return [str(tmp_path / n) for n in ("a.txt", "b.txt", "c.txt")] + ["-r", str(tmp_path / "ref.txt")]


@pytest.mark.parametrize("extra", [[], ["--matrix"]])
def test_correlate_json_has_no_nan(tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str]) -> None:
    argv = ["correlate", *_judged_inputs(tmp_path), "-j", str(tmp_path / "flat.csv"), "--confidence-n", "20", *extra]
    assert main([*argv, "-f", "json"]) == 0
    text = capsys.readouterr().out
    assert "null" in text  # the undefined correlations are there, as null
    strict_json(text)


def test_correlate_csv_has_no_nan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 29, item 13: an undefined correlation is an empty CSV cell where JSON has null (it was ``nan``)."""
    import csv
    import io

    argv = ["correlate", *_judged_inputs(tmp_path), "-j", str(tmp_path / "flat.csv"), "--confidence-n", "20"]
    assert main([*argv, "-f", "json"]) == 0
    as_json = strict_json(capsys.readouterr().out)
    assert main([*argv, "-f", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert isinstance(as_json, list) and len(rows) == len(as_json) > 0
    for row, rec in zip(rows, as_json, strict=True):
        assert list(row) == list(rec)  # the same fields, in the same order
        for key, value in rec.items():
            assert row[key] != "nan"
            assert (row[key] == "") == (value is None or value == ""), (key, row[key], value)


def test_plane_json_has_no_nan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No system has a matching bigram: every N = 2 member scores 0 for all, its r2 is undefined (null)."""
    for name, text in {"a.txt": "mat the\n", "b.txt": "on cat\n", "c.txt": "sat\n", "r.txt": "the cat sat on the mat\n",
                       "j.csv": "system,score\na.txt,3\nb.txt,2\nc.txt,1\n"}.items():  # fmt: skip
        (tmp_path / name).write_text(text)
    t = str(tmp_path)
    argv = ["plane", f"{t}/a.txt", f"{t}/b.txt", f"{t}/c.txt", "-r", f"{t}/r.txt", "-j", f"{t}/j.csv"]
    assert main([*argv, "--max-order", "2", "--alpha-step", "0.5", "-f", "json"]) == 0
    recs = strict_json(capsys.readouterr().out)
    assert isinstance(recs, list) and len(recs) == 1
    rec = recs[0]
    assert rec["orders"] == [2, 1] and rec["values"][0] == [None] * 3 and None not in rec["values"][1]


# ---------------------------------------------------------------- 4. text input


@pytest.mark.parametrize(
    ("data", "pattern"),
    [
        (b"a\rb\rc\r", r"t\.txt:1: bare CR .*old Mac"),
        (b"a\r\r\nb\r\r\n", r"t\.txt:1: bare CR .*CR CR LF"),
        (b"a\nb\nc\rd\n", r"t\.txt:3: bare CR"),
        (b"\xef\xbb\xbf\xef\xbb\xbfa\n", r"t\.txt:1: a second BOM"),
        (b"a\nb\n\xef\xbb\xbfc\n", r"t\.txt:3: BOM \(U\+FEFF\) inside the text"),
        (b"a\nwell\xef\xbb\xbf done\n", r"t\.txt:2: BOM"),
        (b"a\n\xff\n", r"t\.txt:2: not valid UTF-8 \(byte 0xff\)"),
    ],
)
def test_text_that_is_not_plain_is_refused(tmp_path: Path, data: bytes, pattern: str) -> None:
    p = tmp_path / "t.txt"
    p.write_bytes(data)
    with pytest.raises(InputError, match=pattern) as exc:
        read_lines(p)
    assert "\n" not in str(exc.value)


def test_text_that_is_plain_is_read(tmp_path: Path) -> None:
    p = tmp_path / "t.txt"
    cases = {
        b"\xef\xbb\xbfa\r\nb\r\n": ["a", "b"],
        b"a\r\nb\nc": ["a", "b", "c"],  # mixed line ends, no final one
        b"a\r\nb\r": ["a", "b"],  # a CR LF without its LF at the very end
        b"\n\n": ["", ""],
        b"": [],
        "x\u2028y\u2029z\x85w\x0bv\x0cu\x1c\n".encode(): ["x\u2028y\u2029z\x85w\x0bv\x0cu\x1c"],
    }
    for data, lines in cases.items():
        p.write_bytes(data)
        assert read_lines(p) == lines, data


@pytest.mark.parametrize(
    ("suffix", "compress"), [(".gz", gzip.compress), (".bz2", bz2.compress), (".xz", lzma.compress)]
)
def test_compressed_text(tmp_path: Path, suffix: str, compress) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / f"t.txt{suffix}"
    p.write_bytes(compress("a\r\nb\u2028c\n".encode()))
    assert read_lines(p) == ["a", "b\u2028c"]
    p.write_bytes(compress(b"abc")[:-4])
    with pytest.raises(InputError, match=rf"t\.txt\{suffix}: cannot read"):
        read_lines(p)
    p.write_bytes(compress(b"a\rb\n"))
    with pytest.raises(InputError, match=rf"t\.txt\{suffix}:1: bare CR"):
        read_lines(p)


COMPRESSORS = [(".gz", gzip.compress), (".bz2", bz2.compress), (".xz", lzma.compress)]


@pytest.mark.parametrize(("suffix", "compress"), COMPRESSORS)
def test_compressed_members_padding_and_trailing_garbage(tmp_path: Path, suffix: str, compress) -> None:  # type: ignore[no-untyped-def]
    """Issue 29, item 13: concatenated members are one text; bytes after the last member that are not one are
    refused for every format (Python's bz2 and lzma readers dropped them silently), in memory and streamed."""
    p = tmp_path / f"t.txt{suffix}"
    p.write_bytes(compress(b"a\nb\n") + compress(b"c\n"))
    assert read_lines(p) == ["a", "b", "c"]
    with LineStream(p, block_size=3) as s:
        assert s.take(10) == ["a", "b", "c"]
    p.write_bytes(compress(b"a\nb\n") + b"garbage")
    with pytest.raises(InputError, match=rf"t\.txt\{suffix}: cannot read \(data after the end .*trailing garbage"):
        read_lines(p)
    with pytest.raises(InputError, match="trailing garbage"), LineStream(p) as s:
        s.take(10)
    if suffix != ".bz2":  # gzip and xz allow zero padding after a member
        p.write_bytes(compress(b"a\n") + bytes(8))
        assert read_lines(p) == ["a"]


def _bomb(path: Path, mib: int) -> None:
    """``mib`` MiB of line ends in a few KB: one gzip member of 1 MiB of ``\\n``, repeated."""
    member = gzip.compress(b"\n" * 2**20, 9)
    with path.open("wb") as f:
        for _ in range(mib):
            f.write(member)


def test_auto_streaming_counts_decompressed_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A compressed file is streamed when it is large once decompressed, however small on disk (it was
    counted as 4x its size: a bomb was read whole)."""
    from ngrameval.scale import files as streaming

    monkeypatch.setattr(streaming, "AUTO_BYTES", 3 * 2**20)
    bomb, ref = tmp_path / "b.gz", tmp_path / "r.txt"
    _bomb(bomb, 4)
    ref.write_text("a\n")
    assert bomb.stat().st_size * 4 < streaming.AUTO_BYTES
    files = streaming.Files({"b": str(bomb)}, [str(ref)])
    assert streaming.auto_chunk(files, [], None) == streaming.DEFAULT_CHUNK
    _bomb(bomb, 2)
    assert streaming.auto_chunk(files, [], None) is None
    assert expanded_size(bomb, 2**20) == 2**20 + 2**20  # stops a block past the limit


@pytest.mark.slow
def test_compressed_bomb_is_read_in_bounded_memory(tmp_path: Path) -> None:
    """Issue 29, item 3: 300 MiB of empty lines in a ~300 KB gzip file, scored under an address-space limit of
    600 MiB above the interpreter's own: the length mismatch is reported (every line counted, streamed), where the
    whole file used to be read into memory first (~9 bytes a decompressed byte: out of memory)."""
    bomb, ref = tmp_path / "b.gz", tmp_path / "r.txt"
    _bomb(bomb, 300)
    ref.write_text("a\nb\n")
    code = f"""
        import resource, sys
        from ngrameval.cli import main
        import ngrameval.api, ngrameval.scale.files
        size = next(int(ln.split()[1]) for ln in open("/proc/self/status") if ln.startswith("VmSize:")) * 1024
        resource.setrlimit(resource.RLIMIT_AS, (size + 600 * 2**20, resource.RLIM_INFINITY))
        sys.exit(main(["score", {str(bomb)!r}, "-r", {str(ref)!r}, "--jobs", "1"]))
    """
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MALLOC_ARENA_MAX": "1"}
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300, env=env
    )
    assert out.returncode == 2, out.stderr
    assert out.stderr == f"ngrameval: error: {bomb} has {300 * 2**20} lines but the references ({ref}) have 2\n"


def test_no_reader_splits_at_unicode_line_separators() -> None:
    """str.splitlines() splits at U+2028, U+2029, U+0085, VT, FF and more: the readers must not use it."""
    src = Path(__file__).parent.parent / "src" / "ngrameval" / "io"
    for f in src.glob("*.py"):
        code = [ln for ln in f.read_text().splitlines() if not ln.lstrip().startswith("#")]
        assert not any(".splitlines(" in ln and "never" not in ln for ln in code), f


# ---------------------------------------------------------------- 5. judgment files


def _judgments(tmp_path: Path, name: str, text: str, **kwargs) -> list:  # type: ignore[no-untyped-def, type-arg]
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return read_judgments(str(p), **kwargs)


def test_jsonl_keeps_unicode_line_separators_inside_strings(tmp_path: Path) -> None:
    recs = [
        {"system": "s\u2028x", "seg": "1\u2029", "note": "a\x85b", "score": 2},
        {"system": "t", "seg": "2", "score": 3},
    ]
    js = _judgments(tmp_path, "j.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), segment="seg")
    assert [(j.system, j.segment, j.score, j.line) for j in js] == [("s\u2028x", "1\u2029", 2.0, 1), ("t", "2", 3.0, 2)]


@pytest.mark.parametrize(
    ("name", "text", "pattern"),
    [
        (
            "j.jsonl",
            '{"system": "a", "score": 1}\n{"system": "b", "score": true}\n',
            r"j\.jsonl:2: .*expected a number, got true",
        ),
        ("j.jsonl", '{"system": "a", "score": false}\n', r"j\.jsonl:1: .*got false"),
        ("j.jsonl", '{"system": "a", "score": NaN}\n', r"j\.jsonl:1: .*NaN is not valid JSON"),
        ("j.jsonl", '{"system": "a", "score": -Infinity}\n', r"j\.jsonl:1: .*Infinity is not valid JSON"),
        ("j.jsonl", '{"system": "a", "score": 1, "score": 2}\n', r"j\.jsonl:1: .*key 'score' repeated"),
        ("j.jsonl", '\n\n{"system": "a", "score": 1\n', r"j\.jsonl:3: not a JSON object"),
        ("j.csv", "system,score\na,1\nb,2,3\n", r"j\.csv:3: expected 2 fields \(as in the header\), got 3"),
        ("j.csv", "system,score\na\n", r"j\.csv:2: expected 2 fields .*got 1"),
        ("j.tsv", "system\tscore\na\t1\tx\n", r"j\.tsv:2: expected 2 fields"),
        ("j.csv", 'system,note,score\na,"two\nlines",1\nb,x,oops\n', r"j\.csv:4: column 'score': expected a number"),
        ("j.csv", 'system,note,score\na,"two\n\nlines",1\nb,x,1,2\n', r"j\.csv:5: expected 3 fields"),
        ("j.csv", 'system,note,score\na,"open,1\nb,x,1\n', r"j\.csv:3: malformed CSV"),
        ("j.csv", 'system,note,score\na,"q"x,1\n', r"j\.csv:2: malformed CSV"),
        ("j.csv", "system,score,score\na,1,2\n", r"j\.csv:1: column\(s\) 'score' repeated"),
        ("j.csv", "system,score\na,inf\n", r"j\.csv:2: column 'score': expected a finite number, got 'inf'"),
        ("j.csv", "system,score\na,-Infinity\n", r"j\.csv:2: .*finite"),
        ("j.csv", "system,score\na,nan\n", r"j\.csv:2: .*finite"),
        ("j.csv", "system,score\na,1_5\n", r"j\.csv:2: .*expected a number, got '1_5'"),
        ("j.csv", "system,score\r\na,1\rb,2\r\n", r"j\.csv:2: bare CR"),
    ],
)
def test_bad_judgment_files(tmp_path: Path, name: str, text: str, pattern: str) -> None:
    with pytest.raises(InputError, match=pattern) as exc:
        _judgments(tmp_path, name, text)
    assert "\n" not in str(exc.value)


def test_judgment_lines_count_physical_lines(tmp_path: Path) -> None:
    text = '\ufeffsystem,note,score\r\na,"one\r\ntwo",1\r\n\r\nb,"",2\r\nc,x,\r\n'
    js = _judgments(tmp_path, "j.csv", text)
    assert [(j.system, j.line, j.where) for j in js] == [("a", 2, f"{tmp_path / 'j.csv'}:2"),
                                                        ("b", 5, f"{tmp_path / 'j.csv'}:5")]  # fmt: skip
    gz = tmp_path / "j.jsonl.gz"
    gz.write_bytes(gzip.compress(b'{"system": "a", "score": 1}\n'))
    assert read_judgments(str(gz))[0].score == 1.0


def test_segment_ids_and_ratings(tmp_path: Path) -> None:
    ids = tmp_path / "ids.txt"
    ids.write_text("d1\nd2\nd3\n")
    assert read_ids(ids) == ["d1", "d2", "d3"]
    ids.write_text("1\n2\n3\n2\n")
    with pytest.raises(InputError, match=r"ids\.txt:4: segment id '2' repeated \(first on line 2\)"):
        read_ids(ids)
    ids.write_text("1\n\n3\n")
    with pytest.raises(InputError, match=r"ids\.txt:2: empty segment id"):
        read_ids(ids)
    r = tmp_path / "ratings.txt"
    r.write_text("1\n\n2.5\n")
    got = read_ratings(r, 3)
    assert got[0] == 1.0 and np.isnan(got[1]) and got[2] == 2.5
    for bad, line in (("1\n2\ninf\n", 3), ("nan\n2\n3\n", 1), ("1\n-Infinity\n3\n", 2), ("1\nfive\n3\n", 2)):
        r.write_text(bad)
        with pytest.raises(InputError, match=rf"ratings\.txt:{line}: expected a"):
            read_ratings(r, 3)
    with pytest.raises(InputError, match=r"ratings\.txt has 3 lines but there are 4 segments"):
        read_ratings(r, 4)


def test_paraphrase_ratings_reject_non_finite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name, text in {"s.txt": "a b c\nd e f\n", "src.txt": "a b x\nd e y\n", "r.txt": "4\ninf\n"}.items():
        (tmp_path / name).write_text(text)
    t = str(tmp_path)
    argv = ["paraphrase", f"{t}/s.txt", "--source", f"{t}/src.txt", "-r", f"{t}/src.txt", "--ratings", f"{t}/r.txt"]
    assert main(argv) == 2
    assert r"r.txt:2: expected a finite number" in capsys.readouterr().err


def test_repeated_segment_id_is_refused_by_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inputs = _judged_inputs(tmp_path)
    (tmp_path / "segj.csv").write_text("system,seg,score\n" + "".join(f"{s},{i},{i}\n" for s in "abc" for i in (1, 2)))
    (tmp_path / "ids.txt").write_text("1\n2\n3\n2\n")
    argv = ["correlate", *inputs, "-j", str(tmp_path / "segj.csv"), "--segment-column", "seg",
            "--segment-ids", str(tmp_path / "ids.txt"), "--names", "a", "b", "c"]  # fmt: skip
    assert main(argv) == 2
    assert "ids.txt:4: segment id '2' repeated (first on line 2)" in capsys.readouterr().err


# ---------------------------------------------------------------- 6. unknown ids name the judgment file


def test_unknown_ids_name_the_judgment_file_and_line(tmp_path: Path) -> None:
    from ngrameval.meta.agreement import judge_table
    from ngrameval.meta.correlate import aggregate

    js = _judgments(tmp_path, "j.csv", "system,seg,score\na,1,1\nz,1,2\na,7,3\n", segment="seg")
    where = str(tmp_path / "j.csv")
    with pytest.raises(InputError, match=rf"^{where}:3: unknown system 'z'"):
        aggregate(js, "score", ["a", "b"], ["1", "7"])
    with pytest.raises(InputError, match=rf"^{where}:4: segment '7' is not one of the 1 segment ids"):
        aggregate([j for j in js if j.system == "a"], "score", ["a"], ["1"])
    with pytest.raises(InputError, match=rf"^{where}:2: judgments have segments"):
        aggregate(js, "score", ["a", "z"])
    with pytest.raises(InputError, match=rf"^{where}:2: agreement needs a judge column"):
        judge_table(js, "score")


def test_reference_rows_pause_the_collector_and_restore_it() -> None:
    import gc

    from ngrameval.io.read import gc_paused, ref_rows

    assert ref_rows(["r"], [["a", "b c"]], False, False) == [["a"], ["b c"]]  # one stream: a list per segment
    assert ref_rows(["r", "s"], [["a", "b"], ["c", "d"]], False, False) == [["a", "c"], ["b", "d"]]
    was = gc.isenabled()
    try:
        gc.enable()
        with pytest.raises(RuntimeError), gc_paused():
            assert not gc.isenabled()
            raise RuntimeError
        assert gc.isenabled()
        gc.disable()
        with gc_paused():
            pass
        assert not gc.isenabled()  # a caller's own pause is kept
    finally:
        (gc.enable if was else gc.disable)()


_PIECES = [b"a", b"b", b" ", b"\n", b"\r\n", b"\r", "\u00e9".encode(), "\ufeff".encode(), b"\xff", b"\xe2\x82",
           "\u20ac".encode(), "\u2028".encode()]  # fmt: skip


def _whole_file_lines(path: Path) -> list[str] | str:
    """What read_lines gave before it read block by block: the lines of read_text, or its error."""
    try:
        text = read_text(path)
    except InputError as exc:
        return str(exc)
    lines = text.split("\n") if text else []
    return lines[:-1] if lines and lines[-1] == "" else lines


@pytest.mark.parametrize("block", [1, 2, 3, 7, 64])
def test_read_lines_block_by_block_is_the_whole_file_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    """Issue 32, item 6: read_lines reads a plain file block by block into one buffer (half the page faults of the
    bytes, the text and the lines held at once); every file gives the same lines, or the same one error (the one the
    whole-file reader names, e.g. bad UTF-8 before an earlier bare CR, since it decodes first), whatever the block
    size: BOMs, CRLF, bare CRs, bad UTF-8 and lines longer than a block included."""
    monkeypatch.setattr(ngrameval.io.read, "BLOCK", block)
    rng = random.Random(block)
    path = tmp_path / "t.txt"
    for k in range(600):
        clean = k % 3 == 0  # only what a file may hold
        weights = [20, 10, 10, 10, 3, 0 if clean else 1, 3, 0 if clean else 1, 0 if clean else 1, 0 if clean else 1, 2,
                   1]  # fmt: skip
        data = (b"\xef\xbb\xbf" if k % 5 == 0 else b"") + b"".join(rng.choices(_PIECES, weights, k=rng.randint(0, 14)))
        path.write_bytes(data)
        try:
            got: list[str] | str = read_lines(path)
        except InputError as exc:
            got = str(exc)
        assert got == _whole_file_lines(path), data
    path.write_bytes(b"ok\n\r bare CR on line 2\n" + b"x\n" * 40 + b"\xff bad UTF-8 on line 43\n")
    with pytest.raises(InputError, match=r"t.txt:43: not valid UTF-8"):  # the whole file is decoded first, as before
        read_lines(path)
