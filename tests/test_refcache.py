"""The reference cache beyond NIST (issue 32 item 4): a metric that ``keeps_references`` (CIDEr, CIDEr-D) makes its
reference side once, ``--ref-cache`` keeps it, and the next system is counted against it: the same numbers, bit for
bit, as scoring the texts in memory; a damaged or foreign entry is a one-line error naming it."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import numpy as np
import pytest

import ngrameval as ne
from ngrameval.cli import main
from ngrameval.errors import InputError
from ngrameval.metrics.cider import Cider, CiderSide
from ngrameval.metrics.registry import parse_specs
from ngrameval.scale.chunks import Chunk
from ngrameval.scale.files import Files, reference_sides, score_files
from ngrameval.text.pipeline import Preprocess

WORDS = [f"w{i}" for i in range(25)] + ["a", "the", "0", "."]
METRICS = "cider-d,cider:n=3,bleu"


def _line(rng: random.Random) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(0, 12)))


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = random.Random(32)
    d = tmp_path_factory.mktemp("refcache")
    for name in ("A", "B", "ref0", "ref1"):
        (d / f"{name}.txt").write_text("".join(f"{_line(rng)}\n" for _ in range(45)), "utf-8")
    return d


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _refs(files: Path) -> list[str]:
    return ["-r", str(files / "ref0.txt"), str(files / "ref1.txt")]


def test_side_then_systems_equals_rows_for_any_cut() -> None:
    """``rows_against`` a reference side on any run of segments gives the rows of the whole corpus's ``rows``
    (what streaming chunk by chunk relies on), for both variants and orders 1..5."""
    rng = random.Random(7)
    pre = Preprocess(tokenize="none")
    for _ in range(40):
        n_seg = rng.randint(1, 9)
        refs = [[_line(rng) for _ in range(rng.randint(1, 3))] for _ in range(n_seg)]
        systems = [[_line(rng) for _ in range(n_seg)] for _ in range(rng.randint(1, 3))]
        metric = Cider(n=rng.randint(1, 5), defended=rng.random() < 0.5)
        side = metric.reference_side(refs, pre)
        full = metric.rows_against(side, systems, pre).values
        cut = rng.randint(0, n_seg)
        head = metric.rows_against(side, [s[:cut] for s in systems], pre, 0).values
        tail = metric.rows_against(side, [s[cut:] for s in systems], pre, cut).values
        for f, h, t in zip(full, head, tail, strict=True):
            assert np.array_equal(f, np.concatenate([h, t]))
        kept = metric.side_from(side.arrays())  # the arrays the cache keeps give the same side back
        for f, k in zip(full, metric.rows_against(kept, systems, pre).values, strict=True):
            assert np.array_equal(f, k)


def test_cold_then_warm_equals_in_memory(
    files: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first system makes CIDEr's reference side and keeps it (one entry per metric); the next system reads
    it (making it again would fail here) and prints what scoring in memory prints."""
    cache = tmp_path / "cache"
    opts = ["-m", METRICS, "--chunk-size", "13", "-q"]
    code, cold, _ = run(["score", str(files / "A.txt"), *_refs(files), *opts, "--ref-cache", str(cache)], capsys)
    assert code == 0 and cold == run(["score", str(files / "A.txt"), *_refs(files), "-m", METRICS, "-q"], capsys)[1]
    names = sorted(p.name for p in cache.iterdir())  # one entry per side kept (CIDEr n=3 and n=4; not BLEU)
    assert len(names) == 2 and all(n.startswith("cider-") and n.endswith(".npz") for n in names)
    expected = run(["score", str(files / "B.txt"), *_refs(files), "-m", METRICS, "-q"], capsys)[1]

    def no_counting(*args: object) -> None:
        raise AssertionError("the references' side was made again")

    monkeypatch.setattr(Cider, "reference_side", no_counting)
    code, warm, err = run(["score", str(files / "B.txt"), *_refs(files), *opts, "--ref-cache", str(cache)], capsys)
    assert (code, err) == (0, "") and warm == expected
    # the side is the whole corpus's: another chunk size reads the same entries
    code, other, _ = run(["score", str(files / "B.txt"), *_refs(files), *opts[:-2], "5", "-q", "--ref-cache",
                          str(cache)], capsys)  # fmt: skip
    assert code == 0 and other == expected and len(list(cache.iterdir())) == 2


def test_damaged_or_foreign_entry_is_named(files: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache = tmp_path / "cache"
    argv = ["score", str(files / "A.txt"), *_refs(files), "-m", "cider-d,cider", "-q", "--ref-cache", str(cache)]
    assert run(argv, capsys)[0] == 0
    (defended,) = cache.iterdir()  # CIDEr and CIDEr-D of one order share their side
    kept = defended.read_bytes()
    assert run(["score", str(files / "A.txt"), *_refs(files), "-m", "cider:n=3", "-q", "--ref-cache", str(cache)],
               capsys)[0] == 0  # fmt: skip
    (other,) = (p for p in cache.iterdir() if p != defended)
    shutil.copyfile(other, defended)  # a well-formed entry of another order under this one's name
    code, _, err = run(argv, capsys)
    assert code == 2 and err.count("\n") == 1
    assert f"{defended}: a reference cache entry made with other metric parameters than this run's" in err
    defended.write_bytes(kept)
    with np.load(defended) as arrays:
        parts = {name: arrays[name] for name in arrays.files}
    parts["ref2"] = parts["ref2"] + 10**6  # well formed, but naming references the corpus does not have
    with defended.open("wb") as fh:
        np.savez(fh, **parts)
    code, _, err = run(argv, capsys)
    assert code == 2 and err.count("\n") == 1
    assert f"{defended}: a damaged reference cache entry (its order-2 tables disagree)" in err
    defended.write_bytes(kept[: len(kept) // 2])  # cut short
    code, _, err = run(argv, capsys)
    assert code == 2 and err.count("\n") == 1 and f"{defended}: a damaged reference cache entry" in err
    defended.write_bytes(b"damaged")
    code, _, err = run(argv, capsys)
    assert code == 2 and err.count("\n") == 1 and f"{defended}: a damaged reference cache entry" in err
    with pytest.raises(InputError, match="a damaged reference cache entry"):  # the API says it too
        score_files(Files({"A": str(files / "A.txt")}, _refs(files)[1:]), "cider-d", 13, ref_cache=str(cache))
    assert not [p for p in cache.iterdir() if p.name.endswith(".tmp")]


def test_streamed_cider_equals_in_memory_and_checks_each_chunk(files: Path) -> None:
    """CIDEr streams now (``--chunk-size`` was refused before): its reference side of the whole corpus first, then
    the chunks; a chunk whose references are not those the side was made of is an error."""
    given = Files({"A": str(files / "A.txt"), "B": str(files / "B.txt")}, _refs(files)[1:])
    streamed = score_files(given, METRICS, 8, jobs=2)
    systems = {name: Path(path).read_text("utf-8").splitlines() for name, path in given.systems.items()}
    streams = [Path(p).read_text("utf-8").splitlines() for p in given.refs]
    seg_refs = [list(r) for r in zip(*streams, strict=True)]
    in_memory = ne.score(systems, seg_refs, METRICS)
    assert [s.score for s in streamed.scores()] == [s.score for s in in_memory]
    sides = reference_sides(given, parse_specs(METRICS), 8)
    assert sorted(sides.sides) == [0, 1] and isinstance(sides.sides[0], CiderSide)
    sides.check(Chunk(8, {}, seg_refs[8:16], None))
    with pytest.raises(InputError, match="the references changed"):
        sides.check(Chunk(8, {}, seg_refs[9:17], None))


def test_stats_with_a_filled_cache_writes_the_same_file(files: Path, tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    inputs = [str(files / "A.txt"), *_refs(files), "-m", METRICS, "-q"]
    cache = str(tmp_path / "cache")
    assert main(["stats", *inputs, "-o", str(tmp_path / "mem.parquet")]) == 0
    assert main(["stats", *inputs, "--ref-cache", cache, "-o", str(tmp_path / "cold.parquet")]) == 0
    assert main(["stats", *inputs, "--ref-cache", cache, "-o", str(tmp_path / "warm.parquet")]) == 0
    whole = (tmp_path / "mem.parquet").read_bytes()
    assert (tmp_path / "cold.parquet").read_bytes() == whole == (tmp_path / "warm.parquet").read_bytes()


def test_a_cut_short_nist_entry_is_named(files: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A NIST entry whose ``tables.npz`` (or a chunk's weights) is cut short is named, exit 2 (it was an internal
    error: numpy's BadZipFile)."""
    cache = tmp_path / "cache"
    argv = ["score", str(files / "B.txt"), *_refs(files), "-m", "nist", "--chunk-size", "20", "--ref-cache",
            str(cache), "-q"]  # fmt: skip
    assert run(argv, capsys)[0] == 0
    (entry,) = cache.iterdir()
    for part in (entry / "chunk1.npz", entry / "tables.npz"):
        part.write_bytes(part.read_bytes()[:300])
        code, _, err = run(argv, capsys)
        assert code == 2 and err.count("\n") == 1 and "a damaged reference cache entry" in err and str(entry) in err
