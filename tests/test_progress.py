"""Progress bars: on standard error only when it is a terminal (a pseudo-terminal here) and without ``-q``; the
same output with and without them; ``tqdm`` not imported by start-up or short runs; the task rules of
:mod:`ngrameval.progress` (nesting, threads)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import random
import signal
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

import pytest
from tests.conftest import run_python

import ngrameval as ne
from ngrameval import progress
from ngrameval.cli import main
from ngrameval.metrics.registry import parse_specs

NGRAMEVAL = str(Path(sys.executable).parent / "ngrameval")
WORDS = ["the", "cat", "sat", "on", "a", "mat", "dog", "barks", "at", "night", "while", "birds", "sing", "in", "old"]


def _corpus(path: Path, n: int, seed: int) -> str:
    rng = random.Random(seed)
    path.write_text("".join(" ".join(rng.choices(WORDS, k=20)) + "\n" for _ in range(n)))
    return str(path)


@pytest.fixture(scope="module")
def long_compare(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """A compare with an approximate-randomisation task (10,000 trials over 500 segments); on a terminal its bar is
    shown at once (``NGRAMEVAL_PROGRESS_DELAY=0``), so how long it runs does not matter."""
    tmp = tmp_path_factory.mktemp("progress")
    systems = [_corpus(tmp / f"s{k}.txt", 500, k) for k in range(3)]
    return ["compare", *systems, "-r", _corpus(tmp / "ref.txt", 500, 9), "-m", "bleu", "--paired-ar-n", "10000"]


def _on_terminal(argv: list[str]) -> tuple[int, bytes, bytes]:
    """``ngrameval argv`` with standard error on a pseudo-terminal of 100 columns (stdout a pipe):
    (status, stdout, everything the terminal received)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    env = {**os.environ, "NGRAMEVAL_PROGRESS_DELAY": "0"}  # a bar at once, however fast this machine runs it
    proc = subprocess.Popen([NGRAMEVAL, *argv], stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL,
                            env=env)  # fmt: skip
    os.close(slave)
    err = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        err += chunk
    os.close(master)
    assert proc.stdout is not None
    out = proc.stdout.read()
    return proc.wait(timeout=120), out, err


def _piped(argv: list[str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([NGRAMEVAL, *argv], capture_output=True, timeout=300, check=False)


@pytest.mark.slow  # three runs of a 10,000-resample comparison
def test_a_bar_on_a_terminal_and_none_on_a_pipe_or_with_q(long_compare: list[str]) -> None:
    status, out, err = _on_terminal(long_compare)
    assert status == 0, err
    assert b"ngrameval: approximate randomisation:" in err and b"%|" in err and b"/10000" in err
    piped = _piped(long_compare)
    assert piped.returncode == 0 and piped.stdout == out  # the same numbers with and without the bar
    assert b"randomisation" not in piped.stderr and b"\r" not in piped.stderr
    status, quiet_out, quiet_err = _on_terminal(["-q", *long_compare])
    assert status == 0 and quiet_out == out
    assert b"randomisation" not in quiet_err and b"\r" not in quiet_err.replace(b"\r\n", b"")


def test_startup_and_short_runs_do_not_import_tqdm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that ends before its bar is due imports no ``tqdm``. "Before it is due" is set by the delay (an hour
    here), not by how fast a loaded machine runs 20 lines past the default 1 s."""
    monkeypatch.setenv("NGRAMEVAL_PROGRESS_DELAY", "3600")
    hyp, ref = _corpus(tmp_path / "h.txt", 20, 1), _corpus(tmp_path / "r.txt", 20, 2)
    res = run_python(f"""
        import sys
        from ngrameval import progress
        from ngrameval.cli import main
        with progress.shown(True):  # as on a terminal: bars on, but the run is short
            assert main(["score", {hyp!r}, "-r", {ref!r}, "-m", "bleu,ter"]) == 0
            assert main(["--version"]) == 0
        assert "tqdm" not in sys.modules, "tqdm imported"
    """)
    assert res.returncode == 0, res.stderr


def _all_commands(tmp: Path) -> list[tuple[list[str], list[str]]]:
    """One run of every command with a bar: score (several systems, --confidence), compare (AR and BS),
    correlate (--compare-metrics), plane, refcurve, corpus baseline; each with the bars it shows."""
    systems = [_corpus(tmp / f"s{k}.txt", 40, k) for k in range(4)]
    refs = [_corpus(tmp / f"r{k}.txt", 40, 10 + k) for k in range(2)]
    judg = tmp / "j.csv"
    judg.write_text("system,score\n" + "".join(f"s{k}.txt,{v}\n" for k, v in enumerate((0.9, 0.2, 0.5, 0.7))))
    corpus = tmp / "clips.json"
    rng = random.Random(5)
    corpus.write_text(
        "{" + ",".join(f'"c{c}": [' + ",".join(f'"{" ".join(rng.choices(WORDS, k=6))}"' for _ in range(3)) + "]"
                       for c in range(30)) + "}"
    )  # fmt: skip
    judged = [*systems, "-r", *refs, "-j", str(judg)]
    return [
        (["score", *systems, "-r", *refs, "-m", "bleu,ter,rouge-l", "--confidence", "--confidence-n", "200"],
         ["scoring", "bootstrap"]),
        (["compare", *systems, "-r", *refs, "-m", "bleu,nist", "--paired-ar-n", "300", "-f", "json"],
         ["scoring", "approximate randomisation", "bootstrap"]),
        (["compare", *systems, "-r", *refs, "-m", "bleu", "--paired-bs", "--paired-bs-n", "300", "-f", "json"],
         ["scoring", "bootstrap"]),
        (["correlate", *judged, "-m", "bleu,nist,chrf", "--confidence-n", "100", "--compare-metrics", "-f", "json"],
         ["scoring", "correlations", "metric pairs"]),
        (["plane", *judged, "--alpha-step", "0.25", "-f", "csv"], ["counting"]),
        (["refcurve", *judged, "-m", "bleu", "--subsets", "2", "-f", "csv"], ["reference subsets"]),
        (["corpus", "baseline", str(corpus), "-f", "json"], ["human baseline"]),
    ]  # fmt: skip


@pytest.mark.slow
def test_every_long_command_shows_a_bar_and_the_same_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for argv, bars in _all_commands(tmp_path):
        assert main(argv) == 0
        plain = capsys.readouterr().out
        monkeypatch.setattr(progress, "DELAY", 0.0)  # every task shows its bar at once
        with progress.shown(True):
            assert main(argv) == 0
        monkeypatch.setattr(progress, "DELAY", 1.0)
        shown = capsys.readouterr()
        assert shown.out == plain, argv[0]
        for name in bars:
            assert f"ngrameval: {name}:" in shown.err, (argv[0], name, shown.err)


def test_api_progress_parameter_gives_the_same_result(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(0)
    systems = {f"s{k}": [" ".join(rng.choices(WORDS, k=8)) for _ in range(30)] for k in range(3)}
    refs = [" ".join(rng.choices(WORDS, k=8)) for _ in range(30)]
    plain = ne.compare(systems, refs, "bleu,chrf", n_resamples=200)
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(progress, "DELAY", 0.0)
    shown = ne.compare(systems, refs, "bleu,chrf", n_resamples=200, progress=True)
    err = capsys.readouterr().err
    assert "ngrameval: scoring:" in err and "ngrameval: approximate randomisation:" in err
    assert shown == plain
    rows = ne.measure(systems, refs, parse_specs("bleu"), progress=True)
    assert "ngrameval: scoring:" in capsys.readouterr().err
    assert [r.corpus().tolist() for r in rows] == [r.corpus().tolist() for r in ne.measure(systems, refs, "bleu")]
    assert not progress.enabled()  # switched on for the call only


def test_task_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """Off: nothing is created. On: one bar; a nested task of the same name counts towards it (also from other
    threads), a nested task of another name is silent."""
    created: list[object] = []

    def fake_advance(self: progress._Task, done: int) -> None:  # counts without tqdm
        with progress._lock:
            self.done += done
            created.append(self)

    monkeypatch.setattr(progress._Task, "advance", fake_advance)
    with progress.task("a", 10) as advance:
        advance(5)
    assert created == []
    with progress.shown(True):
        assert progress.enabled()
        with progress.task("scoring", 4000) as advance:
            outer = progress._open[0]

            def chunk() -> None:
                with progress.task("scoring", 1) as inner:
                    for _ in range(1000):
                        inner(1)

            threads = [threading.Thread(target=chunk) for _ in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            with progress.task("bootstrap", 7) as other:
                other(7)
        assert outer.done == 4000 and set(map(id, created)) == {id(outer)}
        assert progress._open == []
    assert not progress.enabled()


def test_scoring_advances_per_metric_and_reaches_the_total(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scoring bar moves as each metric's rows are made (not once per text setting, which left `score`
    with 4 metrics showing one bar at 75 % for most of the run) and ends at its total."""
    import ngrameval as ne

    steps: list[tuple[int, int | None]] = []

    def record(self: progress._Task, done: int) -> None:
        with progress._lock:
            self.done += done
            steps.append((done, self.total))

    monkeypatch.setattr(progress._Task, "advance", record)
    hyps = {"a": ["the cat sat on the mat", "a dog"], "b": ["the cat", "a dog barks"]}
    refs = ["the cat sat on a mat", "a dog barks"]
    ne.measure(hyps, refs, "bleu,chrf,ter,rouge-l,se", progress=True)
    assert [d for d, _ in steps] == [2, 2, 2, 2, 2] and {t for _, t in steps} == {10}


def test_a_late_bar_counts_its_rate_from_the_start_of_the_task(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bar created after DELAY shows the units done so far, and its clock starts when the task started."""
    pytest.importorskip("tqdm")
    import io

    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress.sys, "stderr", io.StringIO())
    with progress.shown(True), progress.task("work", 8) as advance:
        task = progress._open[0]
        task.start -= 100.0  # as if the task had run 100 s before its first advance
        advance(6)
        bar = task.bar
        assert bar is not None and bar.n == 6
        assert bar.format_dict["elapsed"] >= 100.0  # the rate is 6 units over >= 100 s, not over the last jump


def test_a_swallowed_ctrl_c_is_raised_again_at_the_next_step() -> None:
    """A Ctrl-C whose KeyboardInterrupt some code swallowed (as an extension module's initialisation can) raises
    again at the next ``advance`` inside :func:`progress.remembered_interrupts`, bars on or off; outside it, and
    once it has ended, nothing is remembered and Python's handler is back."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # (as in a command's process)
    try:
        _swallowed_and_raised_again()
    finally:
        signal.signal(signal.SIGINT, previous)


def _swallowed_and_raised_again() -> None:
    with progress.remembered_interrupts():
        assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler
        with progress.task("work", 3) as advance:
            advance(1)
            with contextlib.suppress(BaseException):  # what a swallowing library does
                signal.raise_signal(signal.SIGINT)
            with pytest.raises(KeyboardInterrupt):
                advance(1)
        with progress.shown(), progress.task("work", 3) as advance, pytest.raises(KeyboardInterrupt):
            advance(1)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with progress.task("work", 3) as advance:
        advance(1)


def test_a_handler_of_the_caller_is_kept() -> None:
    """Over a SIGINT handler the caller installed, nothing is installed or remembered."""

    def mine(signum: int, frame: object) -> None:
        seen.append(signum)

    seen: list[int] = []
    previous = signal.signal(signal.SIGINT, mine)
    try:
        with progress.remembered_interrupts(), progress.task("work", 2) as advance:
            assert signal.getsignal(signal.SIGINT) is mine
            signal.raise_signal(signal.SIGINT)
            advance(1)
        assert seen == [signal.SIGINT]
    finally:
        signal.signal(signal.SIGINT, previous)
