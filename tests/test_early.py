"""``ngrameval.scale.early``: a plain ``score`` on two threads counts its files while the command line loads, and
the command uses those counts only when they are exactly what it would count (the output is the same bytes)."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.conftest import held_import, huge_pages_on_request, interrupted_at_start, mapping_of

import ngrameval
import ngrameval.scale.fromfile
from ngrameval.cli import main as cli_main
from ngrameval.cli.inputs import metric_specs
from ngrameval.cli.parser import build_parser
from ngrameval.metrics.fromfile import plan
from ngrameval.scale import early

LINES = [
    "the cat sat on the mat .",
    "a dog &amp; a cat <b>",  # v13a markup and an entity: the piece is declined, counted from str
    "naïve café — “quoted”",  # above ASCII: a ROUGE piece is declined
    "it is raining , said he",
    "",
    "one more line of text",
    "the end of the file",
]


def _files(tmp_path: Path, n: int = 40) -> tuple[str, str, str]:
    """Two systems and a reference of ``n`` lines: every kind of :data:`LINES` in the first half, plain ASCII
    words only in the second (a piece there is counted by the kernel, not declined)."""
    plain = [x for x in LINES if x.isascii() and "&" not in x and "<" not in x]
    paths = []
    for k, name in enumerate(("a", "b", "r")):
        lines = [
            (LINES if i < n // 2 else plain)[(i * (k + 2) + k) % len(LINES if i < n // 2 else plain)]
            + (f" {i % 5}" if k else "")
            for i in range(n)
        ]
        path = tmp_path / f"{name}.txt"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(str(path))
    return paths[0], paths[1], paths[2]


@pytest.mark.parametrize("name", sorted(early.PLANS))
def test_plans_are_the_commands_plans(name: str) -> None:
    """:data:`early.PLANS` is the kernel plan ``score -m NAME`` makes with its default options."""
    args = build_parser().parse_args(["score", "a.txt", "-r", "r.txt", "-m", name])
    (spec,) = metric_specs(args, args.metrics)
    p = plan(spec.pre, [spec.metric])
    assert p is not None
    assert early.PLANS[name] == (p.mode, p.lowercase, p.order, p.want_lcs)
    # the buffers counted into are the plan's arrays, item for item (else the command would not take them)
    assert [len(b) for b in early.buffers(early.PLANS[name], 2, 7, 3)] == [a.size for a in p.arrays(2, 7, 3)]


def test_the_readers_rules_are_the_commands() -> None:
    """What is standard input or a compressed file, as the command's readers have it."""
    from ngrameval.io.read import COMPRESSED, STDIN

    assert (early.STDIN, early.COMPRESSED) == (STDIN, COMPRESSED)


@pytest.mark.parametrize(
    ("argv", "want"),
    [
        (["score", "a", "b", "-r", "r", "-m", "bleu", "--jobs", "2"], (["a", "b"], ["r"], "bleu", 2)),
        (["score", "a", "-r", "q", "r", "-m", "rouge-l", "--jobs", "3", "-o", "o"], (["a"], ["q", "r"], "rouge-l", 3)),
        (["score", "-m", "rouge-2", "a", "--refs", "r", "--jobs", "2"], (["a"], ["r"], "rouge-2", 2)),
        (["score", "a", "-r", "r", "-m", "bleu", "--jobs", "1"], None),  # one thread: nothing runs beside it
        (["score", "a", "-r", "r", "-m", "bleu", "--jobs", "0"], None),  # refused by the command
        (["score", "a", "-r", "r", "-m", "nist", "--jobs", "2"], None),  # not served
        (["score", "a", "-r", "r", "-m", "bleu,rouge-l", "--jobs", "2"], None),
        (["score", "a", "-r", "r", "-m", "bleu", "--jobs", "2", "--sentence"], None),  # any other option
        (["score", "a", "-r", "r", "-m", "bleu", "--jobs=2"], None),
        (["score", "a", "-m", "bleu", "--jobs", "2"], None),  # no reference
        (["compare", "a", "b", "-r", "r", "-m", "bleu", "--jobs", "2"], None),
        ([], None),
    ],
)  # fmt: skip
def test_parse_serves_only_the_plain_shape(argv: list[str], want: Any) -> None:
    assert early.parse(argv) == want


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 300_000), st.integers(1, 64), st.integers(1, 4096))
def test_guided_pieces_shrink_to_the_end(n: int, jobs: int, grain: int) -> None:
    """The bounds cover ``0 .. n`` in order, cut at multiples of ``grain`` (where offsets are kept); each piece is
    about ``1 / (SHARE * jobs)`` of the lines left and at least ``SMALLEST`` grains, so the sizes never grow but for
    the last piece, which takes the rest (less than ``2 * SMALLEST + 1`` grains)."""
    b = early.guided(n, jobs, grain)
    assert b[0] == 0 and b[-1] == n and all(x < y for x, y in pairwise(b))
    assert all(x % grain == 0 for x in b[:-1])
    sizes = [y - x for x, y in pairwise(b)]
    smallest = early.SMALLEST * grain
    for k, (x, size) in enumerate(zip(b, sizes, strict=False)):
        left = n - x
        if k < len(sizes) - 1:
            assert smallest <= size and abs(size - max(left // (early.SHARE * jobs), smallest)) <= grain / 2
            assert n - (x + size) >= smallest
        else:
            assert size == left < 2 * smallest + grain
    assert all(a >= c for a, c in pairwise(sizes[:-1]))


def _spied(monkeypatch: pytest.MonkeyPatch) -> list[early.Counted | None]:
    """What ``score`` took of the early counts (None: nothing), once per ``early.take`` with two jobs."""
    taken: list[early.Counted | None] = []
    real = early.take

    def spy(refs: Any, systems: Any, plan: Any, jobs: int, grain: int, every: int = early.WHOLE) -> Any:
        got = real(refs, systems, plan, jobs, grain, every)
        if jobs == 2:
            taken.append(got)
        return got

    monkeypatch.setattr(early, "take", spy)
    return taken


def _score(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli_main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _taken_with_the_same_output(
    files: tuple[str, str, str], name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> early.Counted:
    """``score`` of ``files`` (a, b, reference) under ``name`` with two jobs after :func:`early.start`: its output,
    warnings and exit status are one job's (which begins nothing early), and it took what was begun."""
    a, b, r = files
    argv = ["score", a, b, "-r", r, "-m", name, "--jobs", "2"]
    want = _score([*argv[:-1], "1"], capsys)
    assert want[0] == 0
    taken = _spied(monkeypatch)
    early.start(argv)
    assert _score(argv, capsys) == want
    assert len(taken) == 1 and taken[0] is not None
    return taken[0]


@pytest.mark.parametrize("name", sorted(early.PLANS))
@pytest.mark.parametrize("grain", [1, 3, 512])
def test_early_counts_give_the_same_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str, grain: int
) -> None:
    """The counts begun before the command line loaded (pieces cut every ``grain`` lines; the pieces with markup,
    entities or, for ROUGE, text above ASCII declined and counted from ``str``) give the output, warnings and exit
    status of counting in the command; they are taken."""
    a, b, r = _files(tmp_path)
    monkeypatch.setattr(early, "GRAIN", grain)
    monkeypatch.setattr(ngrameval.scale.fromfile, "GRAIN", grain)
    got = _taken_with_the_same_output((a, b, r), name, monkeypatch, capsys)
    # markup declined (one piece of 40 lines at grain 512), the plain second half counted by the kernel
    assert not all(got.served)
    assert all(s for a, s in zip(got.bounds, got.served, strict=False) if a >= 20)
    assert grain == 512 or any(got.served)
    assert early.take([r], [a, b], early.PLANS[name], 2, grain) is None  # taken once


def test_a_file_changed_since_is_counted_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file replaced after the early counts began (another file, or the same one touched): not taken; the
    output is that of the file as the command reads it."""
    a, b, r = _files(tmp_path)
    argv = ["score", a, b, "-r", r, "-m", "bleu", "--jobs", "2"]
    taken = _spied(monkeypatch)
    early.start(argv)
    new = tmp_path / "new.txt"  # (a new file put in its place: the mapped one is never cut short under a reader)
    new.write_text("something else entirely\n" * 40, encoding="utf-8")
    os.replace(new, a)
    got = _score(argv, capsys)
    assert taken == [None]
    assert got == _score([*argv[:-1], "1"], capsys)
    st = os.stat(b)
    early.start(argv)
    os.utime(b, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # same bytes, touched
    assert _score(argv, capsys) == got
    assert taken == [None, None]


def test_other_counts_are_not_taken(tmp_path: Path) -> None:
    """Counts of other files, another plan, threads or grain are not taken (and are dropped)."""
    a, b, r = _files(tmp_path)
    for other in (
        ([r], [a], early.PLANS["bleu"], 2, early.GRAIN),
        ([r], [b, a], early.PLANS["bleu"], 2, early.GRAIN),
        ([r], [a, b], early.PLANS["rouge-l"], 2, early.GRAIN),
        ([r], [a, b], early.PLANS["bleu"], 3, early.GRAIN),
        ([r], [a, b], early.PLANS["bleu"], 2, 7),
    ):
        early.start(["score", a, b, "-r", r, "-m", "bleu", "--jobs", "2"])
        assert early.take(*other) is None
    early.start(["score", a, b, "-r", r, "-m", "bleu", "--jobs", "2"])
    got = early.take([r], [a, b], early.PLANS["bleu"], 2, early.GRAIN)
    assert got is not None and got.served == [False]  # one piece (40 lines), declined: it holds "&amp;"


def test_nothing_begins_for_inputs_it_does_not_serve(tmp_path: Path) -> None:
    """A missing, empty or compressed file, standard input, or inputs of different line counts: nothing is taken
    and nothing is printed."""
    r = _files(tmp_path)[2]
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    gz = tmp_path / "a.txt.gz"
    gz.write_bytes(b"")
    short = tmp_path / "short.txt"
    short.write_text("one line\n", encoding="utf-8")
    for system in (str(tmp_path / "missing.txt"), str(empty), str(gz), "-", str(short)):
        early.start(["score", system, "-r", r, "-m", "bleu", "--jobs", "2"])
        assert early.take([r], [system], early.PLANS["bleu"], 2, early.GRAIN) is None


def test_the_command_line_counts_early_and_prints_the_same(tmp_path: Path) -> None:
    """``python -m ngrameval score ... --jobs 2`` (the entry point that begins the counting) prints what
    ``--jobs 1`` prints, for every served metric, with nothing on stderr but the command's own warnings."""
    a, b, r = _files(tmp_path, 2000)
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    for name in sorted(early.PLANS):
        runs = [
            subprocess.run(
                [sys.executable, "-m", "ngrameval", "score", a, b, "-r", r, "-m", name, "--jobs", jobs],
                capture_output=True, text=True, env=env, check=False,
            )
            for jobs in ("1", "2")
        ]  # fmt: skip
        assert runs[0].returncode == runs[1].returncode == 0
        assert runs[0].stdout == runs[1].stdout and runs[0].stderr == runs[1].stderr
        assert "Traceback" not in runs[1].stderr


@pytest.mark.parametrize(("given", "want"), [(None, "4"), ("9", "9")])
def test_the_command_line_keeps_openblas_from_spinning(given: str | None, want: str) -> None:
    """The entry point sets OpenBLAS's busy-wait to 2**4 cycles before NumPy loads (its threads spun ~0.1 s of a
    core each at start-up), unless the user set it."""
    code = (
        "import os, sys; sys.argv = ['ngrameval', '--version']; import _ngrameval_cli\n"
        "assert 'numpy' not in sys.modules; _ngrameval_cli.main(); print(os.environ['OPENBLAS_THREAD_TIMEOUT'])"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    if given is not None:
        env["OPENBLAS_THREAD_TIMEOUT"] = given
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.splitlines()[-1] == want


def test_the_counting_begins_before_the_heavy_modules_load() -> None:
    """Importing :mod:`ngrameval.scale.early` (what the entry point does before it starts the counting) loads
    neither NumPy nor dataclasses, typing, re, contextlib, importlib.util or threading (~20 ms before the counting
    could begin)."""
    heavy = ("numpy", "dataclasses", "typing", "re", "contextlib", "importlib.util", "threading", "functools")
    code = (
        "import sys; before = set(sys.modules); import ngrameval.scale.early\n"
        f"print(sorted(set(sys.modules) - before & set({heavy!r})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_command_leaves_its_objects_to_the_exit_frozen(tmp_path: Path) -> None:
    """After the command ran (its output written and closed), every object is moved out of the collector's sight,
    so the interpreter's exit does not walk them all once more; the output is whole."""
    a, b, r = _files(tmp_path, 50)
    out = tmp_path / "out.txt"
    code = (
        "import gc, sys; import _ngrameval_cli\n"
        f"sys.argv = ['ngrameval', 'score', {a!r}, {b!r}, '-r', {r!r}, '-m', 'bleu', '-o', {str(out)!r}]\n"
        "status = _ngrameval_cli.main(); print(status, gc.get_freeze_count() > 1000)"
    )
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert got.stdout.split() == ["0", "True"]
    assert out.read_text().splitlines()[2].split()[0] == Path(a).name


def test_the_command_runs_with_its_imports_frozen_and_the_collector_on() -> None:
    """The entry point keeps the collector off while the command line loads, then freezes what the imports made
    (the run's full collections skip it) and turns the collector on before the command runs."""
    code = (
        "import gc, sys; import _ngrameval_cli, ngrameval.cli as cli\n"
        "real = cli.main\n"
        "def seen():\n"
        "    print(gc.get_freeze_count() > 1000, gc.isenabled())\n"
        "    return real()\n"
        "cli.main = seen; sys.argv = ['ngrameval', '--version']; _ngrameval_cli.main()"
    )
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert got.stdout.splitlines()[0] == "True True"


@pytest.mark.skipif(not huge_pages_on_request(), reason="transparent huge pages: Linux, not switched off")
def test_large_buffers_are_private_memory_in_huge_pages() -> None:
    """The early counts' buffers are private anonymous memory (``mmap``'s default, shared memory, gets no huge
    pages) and from ``ngrameval.memory.BIG`` bytes ask for transparent huge pages: 2 MB a page fault when the
    kernel writes them, not 4 kB."""
    import numpy as np

    (buf,) = early.buffers(early.PLANS["bleu"], 2, 50_000, 1)  # 18 MB of float64 rows
    rows = np.frombuffer(buf, dtype=np.float64)
    rows[::512] = 1.0  # every 4 kB page touched
    region, huge = mapping_of(rows.ctypes.data)
    assert region.endswith("p")  # private
    assert huge >= 2048  # kB: at least one huge page (the kernel gives them where 2 MB-aligned pages fit)


@pytest.mark.parametrize("name", ["bleu", "rouge-l"])
def test_streamed_inputs_are_checked_early_with_the_same_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """Inputs the command streams (here: above a small AUTO_BYTES, chunks of 7 segments) are only checked early
    (their lines and the offsets of every chunk and every ``GRAIN`` lines); the command takes that check and its
    output is the one of checking the files itself."""
    import ngrameval.scale.files

    for module, names in ((early, ("AUTO_BYTES", "CHUNK")), (ngrameval.scale.files, ("AUTO_BYTES", "DEFAULT_CHUNK"))):
        monkeypatch.setattr(module, names[0], 100)
        monkeypatch.setattr(module, names[1], 7)
    for module in (early, ngrameval.scale.fromfile):
        monkeypatch.setattr(module, "GRAIN", 3)
    got = _taken_with_the_same_output(_files(tmp_path), name, monkeypatch, capsys)
    assert got.outs == () and [f[0] for f in got.found] == [40, 40, 40]  # checked, not counted


def test_ctrl_c_while_counting_early_exits_130_with_one_line(tmp_path: Path) -> None:
    """SIGINT while the command line is still loading and the early counting runs on its threads: exit 130, one
    line, no output file (the count's threads end with the process). The import of the command line is held until
    the signal comes (a marker, not a delay)."""
    a, b, r = _files(tmp_path, 200_000)
    out = tmp_path / "out.txt"
    argv = [sys.executable, "-m", "ngrameval", "score", a, b, "-r", r, "-m", "bleu", "--jobs", "2", "-o", str(out)]
    ended = interrupted_at_start(argv, held_import(tmp_path, "ngrameval.cli"))
    assert ended.status == 130 and ended.err == "ngrameval: interrupted\n" and ended.out == ""
    assert not out.exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread's own nice value is Linux's")
def test_the_counting_runs_below_the_command_which_helps_once_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pieces are counted on a thread of nice value 10 or more while the command starts (at 0, it comes first);
    once the command is in ``take``, its own thread counts the pieces no thread has begun. Here the counting
    thread's first piece waits until the command's thread has begun one."""
    import threading

    from ngrameval import _direct

    a, b, r = _files(tmp_path, 3000)
    seen: list[tuple[bool, bool]] = []
    helping = threading.Event()
    real = _direct.count_bytes

    def count_bytes(*args: Any) -> bool:
        main = threading.current_thread() is threading.main_thread()
        seen.append((main, os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) >= early.BACKGROUND))
        if main:
            helping.set()
        else:
            assert helping.wait(60)
        return real(*args)

    monkeypatch.setattr(_direct, "count_bytes", count_bytes)
    monkeypatch.setattr(early, "GRAIN", 64)
    early.start(["score", a, b, "-r", r, "-m", "rouge-1", "--jobs", "2"])
    got = early.take([r], [a, b], early.PLANS["rouge-1"], 2, 64)
    assert got is not None and len(seen) == len(got.served) > 2
    assert seen[0] == (False, True) and all(below for main, below in seen if not main) and any(m for m, _ in seen)


_TEARDOWN = (
    "import atexit, sys, threading\n"
    "import _ngrameval_cli\n"
    "class Torn:\n"
    "    def __del__(self):\n"
    "        sys.stdout.write('torn down\\n'); sys.stdout.flush()\n"
    "kept = Torn()  # freed by the interpreter's teardown of this module, not before\n"
    "atexit.register(lambda: print('exit function'))\n"
    "print('buffered', end='')  # still in sys.stdout's buffer when leave() is called\n"
)


def test_the_command_ends_without_the_interpreter_teardown() -> None:
    """``leave`` runs the exit functions and flushes the standard streams, then ends the process with the status;
    the interpreter's teardown of modules and objects (what it skips: ~8 ms after a command) is not run."""
    code = _TEARDOWN + "sys.stderr.write('said'); _ngrameval_cli.leave(3)"
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert (got.returncode, got.stdout, got.stderr) == (3, "bufferedexit function\n", "said")


def test_the_command_exit_waits_for_a_running_thread_as_python_does() -> None:
    """A thread that is not a daemon still running: ``leave`` is ``sys.exit`` (the interpreter waits for it, runs
    the exit functions and tears down as usual)."""
    code = _TEARDOWN + (
        "go = threading.Event()\n"
        "worker = threading.Thread(target=lambda: go.wait() and print('thread ended'))\n"
        "worker.start()\n"
        "try:\n"
        "    _ngrameval_cli.leave(4)\n"
        "finally:\n"
        "    go.set()  # (SystemExit is on its way: the thread ends, and the interpreter joins it)\n"
    )
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert got.returncode == 4
    assert got.stdout.splitlines() == ["bufferedthread ended", "exit function", "torn down"]


def test_python_m_and_the_console_script_enter_through_leave() -> None:
    """``python -m ngrameval`` and the installed script call ``_ngrameval_cli.command`` (main, then leave)."""
    assert "command()" in Path(ngrameval.__file__).with_name("__main__.py").read_text()
    scripts = {ep.name: ep.value for ep in importlib.metadata.entry_points(group="console_scripts")}
    assert scripts["ngrameval"] == "_ngrameval_cli:command"


def test_no_thread_to_start_leaves_the_counting_to_the_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``_thread.start_new_thread`` failing (a process at its thread limit) is no error: nothing is begun, and the
    command counts the files itself."""
    a, b, r = _files(tmp_path, 20)

    def refused(*_: object) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(early._thread, "start_new_thread", refused)
    early.start(["score", a, b, "-r", r, "-m", "bleu", "--jobs", "2"])
    assert early.take([r], [a, b], early.PLANS["bleu"], 2, early.GRAIN) is None
