"""``jobs=`` / ``--jobs``: threads over chunks of segments and blocks of resamples give the ``jobs=1`` numbers
bit for bit (rows, names, signatures, seeded p-values and intervals), and the serial error messages."""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from ngrameval import jobs as local
from ngrameval.api import measure, score
from ngrameval.cli import main
from ngrameval.errors import ConfigError, InputError
from ngrameval.meta import resample
from ngrameval.meta.significance import paired_test

WORDS = ["the", "cat", "sat", "on", "mat", "0", "dog", "ran", ",", ".", "running", "cats", "a", "is", "Über", "naïve"]
SPECS = (
    "bleu,nist,nist:n=3,profile=plain,rouge-l,rouge-2,rouge-su4,se,pinc,chrf,ter,aev,"
    "bleu:tok=intl,lc=yes,aev:alpha=0.3,n=2,stem=yes,stop=smart,rouge-l:multi=B"
)


def corpus(n: int, n_sys: int, seed: int) -> tuple[dict[str, list[str]], list[list[str]], list[str]]:
    """Systems, 1-3 references per segment (empty lines included) and a source, from a seeded generator."""
    rng = np.random.default_rng(seed)

    def line() -> str:
        return " ".join(rng.choice(WORDS, size=int(rng.integers(0, 14))).tolist())

    refs = [[line() for _ in range(int(rng.integers(1, 4)))] for _ in range(n)]
    systems = {f"s{k}": [line() for _ in range(n)] for k in range(n_sys)}
    return systems, refs, [line() for _ in range(n)]


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of a few segments and blocks of a few resamples, so small corpora cross many boundaries."""
    monkeypatch.setattr(local, "MIN_CHUNK", 7)
    monkeypatch.setattr(resample, "BLOCK_ENTRIES", 5 * 300)


@pytest.mark.parametrize("jobs", [2, 3, None])
def test_measure_identical_to_serial(small_chunks: None, jobs: int | None) -> None:
    systems, refs, source = corpus(300, 3, 1)
    serial = measure(systems, refs, SPECS, source)
    threaded = measure(systems, refs, SPECS, source, jobs=jobs)
    assert [r.metric for r in threaded] == [r.metric for r in serial]
    assert [r.signature for r in threaded] == [r.signature for r in serial]
    for a, b in zip(serial, threaded):
        assert a.fraction == b.fraction
        for x, y in zip(a.values, b.values, strict=True):
            assert x.shape == y.shape and np.array_equal(x, y), a.metric
        assert np.array_equal(a.corpus(), b.corpus())
    # metrics counted together still share their statistics (resampling multiplies them once)
    assert (threaded[0].values is threaded[1].values) == (serial[0].values is serial[1].values)


def test_score_identical_with_sentences(small_chunks: None) -> None:
    systems, refs, source = corpus(120, 2, 2)
    a = score(systems, refs, "bleu,rouge-l,se", sentence=True, source=source)
    b = score(systems, refs, "bleu,rouge-l,se", sentence=True, source=source, jobs=4)
    assert [(x.system, x.metric, x.score, x.signature) for x in a] == [
        (x.system, x.metric, x.score, x.signature) for x in b
    ]
    assert all(np.array_equal(x.sentences, y.sentences) for x, y in zip(a, b))


@pytest.mark.parametrize("test", ["ar", "bs"])
def test_paired_test_identical_to_serial(small_chunks: None, test: str) -> None:
    systems, refs, source = corpus(300, 3, 3)
    rows = measure(systems, refs, "bleu,rouge-l,nist,se", source)
    names = list(systems)
    serial = paired_test(rows, names, test=test, n_resamples=203, n_confidence=101, seed=7)
    for jobs in (2, 3):
        assert paired_test(rows, names, test=test, n_resamples=203, n_confidence=101, seed=7, jobs=jobs) == serial
    assert len(list(resample.blocks(203, 300))) > 10  # the threads really took many blocks


def test_errors_name_the_segment_as_serially(small_chunks: None) -> None:
    systems, refs, _ = corpus(100, 1, 4)
    refs[57] = []
    with pytest.raises(InputError) as serial:
        measure(systems, refs, "bleu")
    with pytest.raises(InputError) as threaded:
        measure(systems, refs, "bleu", jobs=3)
    assert str(threaded.value) == str(serial.value) and "58" in str(serial.value)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_bad_jobs(bad: object) -> None:
    systems, refs, _ = corpus(5, 1, 5)
    with pytest.raises(ConfigError, match="jobs"):
        measure(systems, refs, "bleu", jobs=bad)  # type: ignore[arg-type]


def test_chunks_cover_every_segment() -> None:
    for n in (0, 1, 1999, 2000, 100_001):
        for jobs in (1, 2, 7):
            chunks = local.segment_chunks(n, jobs)
            assert [i for ch in chunks for i in ch] == list(range(n))


def test_cli_jobs(small_chunks: None, tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    from pathlib import Path

    systems, refs, _ = corpus(80, 2, 6)
    d = Path(str(tmp_path))
    for name, hyps in systems.items():
        (d / name).write_text("\n".join(hyps) + "\n")
    (d / "ref").write_text("\n".join(r[0] for r in refs) + "\n")
    out = {}
    for jobs in ("1", "2"):
        for cmd in ("score", "compare"):
            argv = [cmd, str(d / "s0"), str(d / "s1"), "-r", str(d / "ref"), "-m", "bleu,rouge-l", "--jobs", jobs]
            assert main([*argv, *(["--paired-ar-n", "99"] if cmd == "compare" else [])]) == 0
            out[cmd, jobs] = capsys.readouterr().out
    assert out["score", "1"] == out["score", "2"] and out["compare", "1"] == out["compare", "2"]
    assert main(["score", str(d / "s0"), "-r", str(d / "ref"), "--jobs", "0"]) == 2


def test_plane_refcurve_and_baseline_identical_to_serial(small_chunks: None, monkeypatch: pytest.MonkeyPatch) -> None:
    import ngrameval.corpus.baseline as baseline
    from ngrameval.corpus.msvd import Description
    from ngrameval.meta.correlate import HumanScores
    from ngrameval.meta.plane import plane
    from ngrameval.meta.subsets import reference_curve
    from ngrameval.metrics.registry import parse_specs
    from ngrameval.text.pipeline import Preprocess

    systems, refs, _ = corpus(200, 4, 5)
    human = HumanScores("q", tuple(systems), np.array([0.1, 0.7, 0.4, 0.9]), None, 4, 0)
    for unit in ("word", "char"):
        a = plane(systems, refs, human, unit=unit, coefficient_name="pearson")
        b = plane(systems, refs, human, unit=unit, coefficient_name="pearson", jobs=3)
        assert np.array_equal(a.values, b.values, equal_nan=True)
        assert (a.best_alpha, a.best_order, a.best_value, a.signature) == (b.best_alpha, b.best_order, b.best_value,
                                                                           b.signature)  # fmt: skip
    three = [[*r, "x y", "y z"][:3] for r in refs]  # the curve needs one number of references per segment
    specs = parse_specs("bleu,rouge-l", Preprocess())
    serial = reference_curve(systems, three, human, specs, n_subsets=2)
    assert serial == reference_curve(systems, three, human, specs, n_subsets=2, jobs=2)
    rng = np.random.default_rng(6)
    clusters = {
        f"clip{c}": [Description(f"clip{c}", " ".join(rng.choice(WORDS, size=5)), "English", "clean", None, "-")
                     for _ in range(k)]
        for c, k in enumerate(rng.integers(1, 6, size=40))
    }  # fmt: skip
    monkeypatch.setattr(baseline, "BLOCK_PAIRS", 20)  # many blocks of clips
    assert baseline.human_baseline(clusters) == baseline.human_baseline(clusters, jobs=3)


def test_chunks_count_at_the_same_time(small_chunks: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two threads count two chunks at once: each chunk's counting waits for the other thread's at a barrier, which
    breaks (after minutes, not seconds: no timing is asserted) if the chunks take turns, as they did while each
    batch's shared products were ``functools.cached_property`` (one lock for every batch in Python < 3.12)."""
    from ngrameval.ngrams import direct

    meet = threading.Barrier(2, timeout=300)
    count = direct.direct_stats

    def together(*args: Any, **kwargs: Any) -> Any:
        meet.wait()
        return count(*args, **kwargs)

    systems, refs, _ = corpus(280, 2, 3)  # 8 chunks: an even number of meetings
    serial = measure(systems, refs, "bleu")
    monkeypatch.setattr(direct, "direct_stats", together)
    assert len(local.segment_chunks(280, 2)) % 2 == 0
    (threaded,) = measure(systems, refs, "bleu", jobs=2)
    assert all(np.array_equal(x, y) for x, y in zip(threaded.values, serial[0].values, strict=True))


def test_ahead_gives_every_item_in_order_made_one_ahead_on_a_thread() -> None:
    """Issue 32, item 6: ``ahead`` makes the next item (a file's next chunk) on a thread of its own while the caller
    uses the current one: the same items in order, and item 2 is being made while the caller still holds item 1
    (the caller waits, inside item 1, for the maker to reach item 2: without a thread running ahead it never would;
    the timeout is a hang guard)."""
    reached = threading.Event()
    makers: list[str] = []

    def items() -> Iterator[int]:
        for k in range(5):
            if k == 2:
                reached.set()
            makers.append(threading.current_thread().name)
            yield k

    got = []
    for k in local.ahead(items()):
        if k == 1:
            assert reached.wait(timeout=60)
        got.append(k)
    assert got == [0, 1, 2, 3, 4]
    assert all(name.startswith("ngrameval-ahead") for name in makers)


def test_ahead_raises_an_items_error_where_it_is_asked_for_and_closes_when_stopped() -> None:
    """An error making item k is raised when item k is asked for (after items 0..k-1 are used, as without the
    thread); a caller that stops early has the source closed, on its own thread, once no item is being made."""
    closed: list[str] = []

    def items(fail_at: int) -> Iterator[int]:
        try:
            for k in range(10):
                if k == fail_at:
                    raise InputError(f"item {k}")
                yield k
        finally:
            closed.append(threading.current_thread().name)

    got = []
    with pytest.raises(InputError, match="item 3"):
        for k in local.ahead(items(3)):
            got.append(k)
    assert got == [0, 1, 2]
    stopped = local.ahead(items(99))
    assert [next(stopped), next(stopped)] == [0, 1]
    stopped.close()  # the caller stops: the source is closed on the caller's thread
    assert closed[-1] == threading.current_thread().name


@pytest.fixture
def catches_seen(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each ``warnings.catch_warnings`` entered was on the main thread (it is not thread-safe: threads that
    enter and leave it in turn restore each other's hooks, and warnings of some chunks were lost)."""
    seen: list[bool] = []
    real = warnings.catch_warnings

    class Watched(real):  # type: ignore[misc, valid-type]
        def __enter__(self) -> Any:
            seen.append(threading.current_thread() is threading.main_thread())
            return super().__enter__()

    monkeypatch.setattr(warnings, "catch_warnings", Watched)
    return seen


def test_warnings_of_chunks_are_caught_on_the_calling_thread(small_chunks: None, catches_seen: list[bool]) -> None:
    """The chunks on the pool catch no warnings themselves; the calling thread catches and sums them, so the summed
    count is the serial one (with each chunk catching its own, PINC's count was short in 38 of 40 runs)."""
    rng = np.random.default_rng(8)
    hyps = [" ".join(rng.choice(WORDS[:4], size=int(rng.integers(0, 4))).tolist()) for _ in range(400)]
    refs = [" ".join(rng.choice(WORDS[:4], size=int(rng.integers(1, 6))).tolist()) for _ in range(400)]

    def said(jobs: int) -> list[str]:
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            measure({"a": hyps, "b": hyps[::-1]}, refs, "pinc,bleu", source=refs[::-1], jobs=jobs)
        return sorted(str(w.message) for w in got)

    serial = said(1)
    assert serial and all("PINC" in m for m in serial)
    catches_seen.clear()
    for _ in range(5):
        assert said(2) == serial
    assert catches_seen and all(catches_seen)


def test_score_read_while_counted_catches_warnings_on_the_main_thread(
    small_chunks: None, catches_seen: list[bool], monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    """``score --jobs 2`` counting chunks while it reads (cli.score.read_and_count): no pool thread catches warnings."""
    from pathlib import Path

    from ngrameval.cli import score as cli_score

    monkeypatch.setattr(cli_score, "PIPELINE_CHUNK", 7)
    systems, refs, _ = corpus(90, 1, 9)
    d = Path(str(tmp_path))
    (d / "s0").write_text("\n".join(systems["s0"]) + "\n")
    (d / "ref").write_text("\n".join(r[0] for r in refs) + "\n")
    catches_seen.clear()
    assert main(["score", str(d / "s0"), "-r", str(d / "ref"), "-m", "bleu,rouge-l", "--jobs", "2", "-q"]) == 0
    assert catches_seen and all(catches_seen)


def test_beside_runs_the_background_on_another_thread_and_raises_its_error_first() -> None:
    """``jobs.beside``: the background on a thread of its own while the caller runs the foreground (one job: one
    after the other, on the caller's thread); both results; an error of the background wins over the
    foreground's, and both have ended when either is raised."""
    here = threading.get_ident()
    ran: list[str] = []

    def background() -> int:
        ran.append("background")
        return threading.get_ident()

    assert local.beside(background, threading.get_ident, 1) == (here, here)
    there, mine = local.beside(background, threading.get_ident, 2)
    assert mine == here and there != here

    def fails(name: str) -> Any:
        def run() -> None:
            ran.append(name)
            raise ValueError(name)

        return run

    ran.clear()
    with pytest.raises(ValueError, match="background") as info:
        local.beside(fails("background"), fails("foreground"), 2)
    assert sorted(ran) == ["background", "foreground"]
    assert isinstance(info.value.__context__, ValueError) and str(info.value.__context__) == "foreground"
    with pytest.raises(ValueError, match="foreground"):
        local.beside(lambda: 1, fails("foreground"), 2)


def test_thread_map_of_no_more_items_than_threads_runs_each_on_its_own_thread() -> None:
    """Items <= jobs: no pool (``concurrent.futures`` not needed), the first item on the calling thread and each
    other on a thread of its own, results in order, each in a copy of the caller's context."""
    import contextvars

    seen: contextvars.ContextVar[str] = contextvars.ContextVar("seen", default="unset")
    seen.set("caller's")
    met = threading.Barrier(3)  # every item waits for the other two: they run at once, or this never passes

    def item(k: int) -> tuple[int, int, str]:
        met.wait(timeout=60)  # (a hang guard, not a measurement)
        was = seen.get()
        seen.set(f"item {k}")  # set in the item's copy: the caller's value stays
        return k * 10, threading.get_ident(), was

    got = local.thread_map(item, [0, 1, 2], 3)
    assert [g[0] for g in got] == [0, 10, 20]
    assert got[0][1] == threading.get_ident() and len({g[1] for g in got}) == 3
    assert [g[2] for g in got] == ["caller's"] * 3 and seen.get() == "caller's"


@pytest.mark.parametrize("failing", [(0,), (1,), (1, 2)])
def test_thread_map_without_a_pool_raises_the_first_error_once_every_item_ended(failing: tuple[int, ...]) -> None:
    ended: list[int] = []

    def item(k: int) -> int:
        if k in failing:
            raise ValueError(f"item {k}")
        ended.append(k)
        return k

    with pytest.raises(ValueError, match=f"item {failing[0]}"):
        local.thread_map(item, [0, 1, 2], 4)
    assert sorted(ended) == [k for k in range(3) if k not in failing]


@pytest.mark.parametrize("jobs", [1, 2])
def test_let_go_drops_the_last_references_on_a_thread_of_its_own_with_jobs(jobs: int) -> None:
    """With two jobs or more the objects are freed (their memory unmapped) on another thread, beside the caller's
    work; with one job at once, on the calling thread."""
    freed: list[int] = []
    done = threading.Event()

    class Held:
        def __del__(self) -> None:
            freed.append(threading.get_ident())
            done.set()

    held: list[object] = [Held()]
    local.let_go(held, jobs)
    assert done.wait(timeout=60)  # (a hang guard, not a measurement)
    assert (freed[0] == threading.get_ident()) is (jobs == 1)
    assert held == []
