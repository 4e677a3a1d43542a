"""Shared test helpers: random corpora that exercise tokenization and counting edge cases, a plain LCS, and the
harnesses of the kernels' interrupt, GIL and memory tests."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import strategies as st

from ngrameval import _text

# A test run started in the background (`.ci/run &`) inherits SIGINT ignored, and so would every process the tests
# start to check Ctrl-C; a handler here makes them start with the default disposition (exec resets handled signals).
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_configure(config: pytest.Config) -> None:
    """The package's bytecode written once, by the controller, before any test runs: hundreds of tests start a
    process that imports ngrameval, and with ``PYTHONDONTWRITEBYTECODE`` set (as on this project's machines) each
    would compile every module it imports from source again. The files are what Python itself writes on import
    (``__pycache__``, ignored by git); a stale one is recompiled, as on import."""
    if hasattr(config, "workerinput"):  # an xdist worker: the controller compiled it
        return
    import compileall

    compileall.compile_dir(str(Path(__file__).resolve().parents[1] / "src"), quiet=1)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark what each test needs, from the fixtures it uses, so that a development run can leave the heavy parts
    out (``-m "not slow and not browser and not dask"``): ``browser`` (Chromium), ``postgres`` (the throw-away
    cluster, also the PostgreSQL half of ``db_url``), ``dask`` (a LocalCluster)."""
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        callspec = getattr(item, "callspec", None)
        module = item.nodeid.split("::")[0]
        if "browser" in names or "browser" in module or "test_site_works_from_files" in item.nodeid:
            item.add_marker(pytest.mark.browser)
        if "postgres" in names or (callspec is not None and callspec.params.get("db_url") == "postgresql"):
            item.add_marker(pytest.mark.postgres)
        if names & {"dask_client", "cluster", "client"} or "distributed" in module:
            item.add_marker(pytest.mark.dask)


@pytest.fixture(autouse=True, scope="module")
def _environment_kept() -> Iterator[None]:
    """Each test module leaves the environment as it found it: Dask's LocalCluster sets OMP_NUM_THREADS,
    OPENBLAS_NUM_THREADS, MKL_NUM_THREADS and MALLOC_TRIM_THRESHOLD_ in this process, which every later subprocess
    would inherit (single-threaded BLAS changes how long a command runs, e.g. whether a progress bar appears)."""
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture(scope="module")
def dask_client() -> Iterator[Any]:
    """A Dask client of a LocalCluster with 2 single-threaded worker processes (one per test module)."""
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


# Words and characters chosen to hit every 13a/intl rule: punctuation, digits around . , -, entities,
# non-ASCII letters, symbols and Unicode spaces; repeated words exercise clipping.
WORDS = [
    "the",
    "cat",
    "sat",
    "on",
    "mat",
    "The",
    "a",
    "dog",
    "3.5",
    "1,000",
    "2019-2020",
    "state-of-the-art",
    "don't",
    "U.S.",
    "e.g.,",
    "(see",
    "below)",
    "&amp;",
    "&quot;hi&quot;",
    "<skipped>",
    "x-ray",
    "...",
    "!",
    "?",
    "café",
    "Zürich",
    "€5",
    "10m².",
    "“quoted”",
    "—",
    "«non»",
    "¿qué?",
    "ΣΊΣΥΦΟΣ",
    "İstanbul",
    "$1,200.50",
    "a.b",
    ",",
    ".",
    "-",
    "'",
    "5-",
    ".5",
    "5.",
    "50%",
    "@user",
    "#tag",
    "~",
    "`",
    "|",
]
SEPARATORS = [" ", " ", " ", "  ", "\t", "\u00a0", "\u2009", "\u3000", ""]

word = st.sampled_from(WORDS)
line = st.lists(st.tuples(word, st.sampled_from(SEPARATORS)), max_size=14).map(
    lambda parts: "".join(w + s for w, s in parts)
)
text_char = st.characters(blacklist_categories=("Cs",), blacklist_characters="\n")
free_line = st.text(text_char, max_size=30)
# Segments given through the API may hold line breaks (mteval joins "-\n" and reads "\n" as a space).
broken_line = st.lists(st.tuples(word, st.sampled_from([*SEPARATORS, "\n", "-\n", "\r\n"])), max_size=10).map(
    lambda parts: "".join(w + s for w, s in parts)
)


@st.composite
def corpus(draw: st.DrawFn, max_refs: int = 4, max_segments: int = 12) -> tuple[list[str], list[list[str]]]:
    """(hyps, segment-major refs) with 1..max_refs references per segment."""
    n = draw(st.integers(1, max_segments))
    hyps = [draw(line) for _ in range(n)]
    refs = [[draw(line) for _ in range(draw(st.integers(1, max_refs)))] for _ in range(n)]
    return hyps, refs


def streams(refs: list[list[str]]) -> list[list[str | None]]:
    """sacreBLEU's stream-major layout, None for a missing reference."""
    k = max(len(r) for r in refs)
    return [[r[i] if i < len(r) else None for r in refs] for i in range(k)]


def decoded(ids_off: tuple[bytes, bytes], vocab: _text.VocabHandle) -> list[list[str]]:
    """The token strings of every line of an encoder's (ids int32, offsets int64) buffers in ``vocab``."""
    names = _text.tokens(vocab, 0)
    ids = np.frombuffer(ids_off[0], dtype=np.int32).tolist()
    off = np.frombuffer(ids_off[1], dtype=np.int64).tolist()
    return [[names[i] for i in ids[a:b]] for a, b in itertools.pairwise(off)]


def plain_lcs(a: Sequence[object], b: Sequence[object]) -> int:
    """The length of a longest common subsequence, by the textbook dynamic program (one row)."""
    row = [0] * (len(b) + 1)
    for x in a:
        diag = 0
        for j, y in enumerate(b, 1):
            diag, row[j] = row[j], diag + 1 if x == y else max(row[j], row[j - 1])
    return row[-1]


def run_python(code: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``code`` (dedented) in a fresh interpreter, its output captured."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=timeout, check=False
    )


# A hang guard, not a speed requirement: a kernel that polls for signals stops within milliseconds of SIGINT, one
# that does not runs on to the end of work sized to take minutes; only a hang (or a kernel that ignores the signal
# and is given less work than this) reaches it.
HANG_GUARD = 60.0


@dataclass(frozen=True)
class Interrupted:
    """How a child interrupted by :func:`interrupted` ended: its exit status, stdout (after the ``start`` line)
    and stderr."""

    status: int
    out: str
    err: str

    @property
    def by_keyboard_interrupt(self) -> bool:
        """Ended by an uncaught KeyboardInterrupt: Python re-raises SIGINT on itself (status -2) after printing it."""
        return self.status in (-signal.SIGINT, 130) and "KeyboardInterrupt" in self.err


def interrupted(code: str) -> Interrupted:
    """Starts ``code``, which prints ``start`` when its long work begins and ``finished`` after it, sends it SIGINT
    as soon as ``start`` is read (no sleep: the marker, not a delay, says the work has begun) and waits for it to
    end (bounded by :data:`HANG_GUARD`)."""
    return interrupted_at_start([sys.executable, "-c", code])


# Put on the path of the command's interpreter as sitecustomize: holds the import of the module named in
# NGRAMEVAL_TEST_HOLD after printing "start", so a signal sent on that marker lands during start-up, before the
# command line's handler exists.
HOLD_IMPORT = """
import os, sys, time


class Hold:
    def find_spec(self, name, path=None, target=None):
        if name == os.environ.get("NGRAMEVAL_TEST_HOLD"):
            print("start", flush=True)
            # ended by the test's SIGINT. Short waits in a loop, as a real import runs bytecode: the kernel may give
            # the signal to another thread (the early counting's), which does not interrupt a long sleep of this
            # one; Python then raises KeyboardInterrupt here at the next bytecode
            while True:
                time.sleep(0.01)
        return None


sys.meta_path.insert(0, Hold())
"""


def held_import(tmp_path: Path, module: str) -> dict[str, str]:
    """The environment of a child whose import of ``module`` prints ``start`` and waits (:data:`HOLD_IMPORT`)."""
    (tmp_path / "sitecustomize.py").write_text(HOLD_IMPORT)
    return {**os.environ, "PYTHONPATH": str(tmp_path), "NGRAMEVAL_TEST_HOLD": module}


def interrupted_at_start(argv: list[str], env: dict[str, str] | None = None) -> Interrupted:
    """:func:`interrupted` of the command ``argv`` (environment ``env``), which prints ``start`` on its own."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first == "start\n", (first, proc.stderr.read() if proc.stderr else "")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=HANG_GUARD)
        return Interrupted(proc.returncode, out, err)
    finally:
        proc.kill()


def pool_interrupted(argv: list[str], module: str, function: str, prelude: str = "") -> Interrupted:
    """:func:`interrupted` of ``ngrameval.cli.main(argv)`` in a child whose first call of ``module.function`` (work
    on a pool thread) prints ``start`` and goes on only once the SIGINT has reached the main thread's handler, so the
    run cannot end before the signal (no timing); ``prelude``: code run first."""
    code = textwrap.dedent(f"""
        import importlib, signal, sys, threading
        from ngrameval.cli import main
        {prelude}
        mod = importlib.import_module({module!r})
        got = threading.Event()
        def on_int(signum, frame):
            got.set()
            signal.default_int_handler(signum, frame)
        signal.signal(signal.SIGINT, on_int)
        work, first, lock = getattr(mod, {function!r}), [True], threading.Lock()
        def marked(*args):
            with lock:
                mine, first[0] = first[0], False
            if mine:
                print("start", flush=True)
                assert got.wait(300)  # a hang guard: the work goes on once the main thread has the interrupt
            return work(*args)
        setattr(mod, {function!r}, marked)
        sys.exit(main({argv!r}))
    """)
    return interrupted(code)


def interrupt(code: str) -> str:
    """:func:`interrupted` for a child that must stop by KeyboardInterrupt before finishing its work: checks that
    and returns its stderr."""
    ended = interrupted(code)
    assert ended.by_keyboard_interrupt, (ended.status, ended.err)
    assert "finished" not in ended.out, ended.out  # the work was cut short, not completed
    return ended.err


def ticks_beside(call: Callable[[], object], tries: int = 50) -> int:
    """How many steps another thread made while ``call`` ran: ``call`` is repeated (at most ``tries`` times) until
    one of its runs saw a step. The switch interval is raised to an hour meanwhile, so the counting thread can
    take the interpreter lock only when ``call`` gives it up (a kernel holding the lock gives 0, whatever the
    machine's speed or load), and the count read before and after each run counts only steps made during it."""
    ticks = 0
    started, done = threading.Event(), threading.Event()

    def count() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            started.set()
            time.sleep(0.001)  # gives up the lock; not a measurement

    interval = sys.getswitchinterval()
    worker = threading.Thread(target=count)
    sys.setswitchinterval(3600.0)
    try:
        worker.start()
        started.wait()
        for _ in range(tries):
            before = ticks
            call()
            during = ticks - before
            if during:
                return during
        return 0
    finally:
        done.set()
        worker.join()
        sys.setswitchinterval(interval)


def huge_pages_on_request() -> bool:
    """Transparent huge pages can be asked for (Linux, THP not switched off)."""
    try:
        return "[never]" not in Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text()
    except OSError:
        return False


def mapping_of(address: int) -> tuple[str, int]:
    """The permissions and the AnonHugePages (kB) of this process's mapping that holds ``address``."""
    perms, inside = "", False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()
        if "-" in head[0] and len(head) >= 5 and not head[0].endswith(":"):
            lo, hi = (int(x, 16) for x in head[0].split("-"))
            inside, perms = lo <= address < hi, head[1]
        elif inside and head[0] == "AnonHugePages:":
            return perms, int(head[1])
    raise AssertionError("no mapping holds the address")
