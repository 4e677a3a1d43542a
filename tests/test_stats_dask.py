"""Issue 32 item 4 on Dask (a LocalCluster of 2 single-threaded worker processes): ``stats --scheduler`` counts each
partition on its worker and writes the merged statistics, bit for bit the ``stats`` file of the whole corpus on one
machine (NIST with the corpus's weights included); the stats files of shards (a directory or a glob of them) are
read on the workers where text shards go, and ``score``/``compare`` print what they print from the text."""

from __future__ import annotations

import itertools
import random
import warnings
from pathlib import Path

import pytest

pytest.importorskip("distributed")
pytest.importorskip("pyarrow")

from distributed import Client

from ngrameval.cli import main

SYSTEMS = ("a", "b")
BOUNDS = (0, 17, 52, 90)  # three shards of uneven sizes
WORDS = ["the", "cat", "sat", "on", "mat", "dog", "ran", ",", ".", "über", "“quoted”", "—", "naïve", "3.5"]
SPECS = "bleu,nist,chrf++,ter,rouge-l,pinc,aev:n=4,bleu:smooth=floor"  # NIST: weights of the whole corpus
SPLITTABLE = "bleu,chrf,ter,rouge-2,pinc"  # what per-shard `stats` runs can count (no corpus-wide metric)


@pytest.fixture(scope="module")
def client(dask_client: Client) -> Client:
    return dask_client


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Whole files (``a.txt``, ``b.txt``, ``r1.txt``, ``r2.txt``, ``src.txt``) and their shards
    (``shards/<name>/shard-0K.txt``)."""
    d = tmp_path_factory.mktemp("stats_dask")
    rng = random.Random(4)
    n = BOUNDS[-1]
    texts = {name: [" ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 12))) for _ in range(n)]
             for name in (*SYSTEMS, "r1", "r2", "src")}  # fmt: skip
    for name, lines in texts.items():
        (d / f"{name}.txt").write_text("".join(f"{x}\n" for x in lines), "utf-8")
        (d / "shards" / name).mkdir(parents=True)
        for k, (a, b) in enumerate(itertools.pairwise(BOUNDS)):
            (d / "shards" / name / f"shard-{k}.txt").write_text("".join(f"{x}\n" for x in lines[a:b]), "utf-8")
    return d


def _whole(d: Path) -> list[str]:
    return [*(str(d / f"{s}.txt") for s in SYSTEMS), "-r", str(d / "r1.txt"), str(d / "r2.txt"), "--source",
            str(d / "src.txt"), "--names", *SYSTEMS]  # fmt: skip


def _shards(d: Path) -> list[str]:
    s = d / "shards"
    return [*(str(s / x) for x in SYSTEMS), "-r", str(s / "r1"), str(s / "r2"), "--source", str(s / "src"),
            "--names", *SYSTEMS]  # fmt: skip


def _out(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(argv) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("blocksize", ["0", "300"])  # a partition per shard; shards cut into blocks of lines
def test_stats_on_dask_writes_the_file_of_the_whole_corpus(
    client: Client, corpus: Path, tmp_path: Path, blocksize: str
) -> None:
    serial, on_dask = tmp_path / "serial.parquet", tmp_path / "dask.parquet"
    assert main(["stats", *_whole(corpus), "-m", SPECS, "--texts", "-o", str(serial), "-q"]) == 0
    dask = ["--scheduler", client.scheduler.address, "--blocksize", blocksize]
    assert main(["stats", *_shards(corpus), "-m", SPECS, "--texts", *dask, "-o", str(on_dask), "-q"]) == 0
    assert on_dask.read_bytes() == serial.read_bytes()


def test_stats_files_of_shards_score_on_dask_as_the_text(
    client: Client, corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The documented workflow: ``stats`` on each shard (anywhere), then the directory of their files read on
    Dask where text shards go: the output of the text, and ``stats --merge`` on Dask the file of the whole."""
    shards = corpus / "shards"
    kept = tmp_path / "kept"
    kept.mkdir()
    for k in range(len(BOUNDS) - 1):
        one = [*(str(shards / s / f"shard-{k}.txt") for s in SYSTEMS), "-r", str(shards / "r1" / f"shard-{k}.txt"),
               str(shards / "r2" / f"shard-{k}.txt"), "--source", str(shards / "src" / f"shard-{k}.txt"),
               "--names", *SYSTEMS]  # fmt: skip
        assert main(["stats", *one, "-m", SPLITTABLE, "-o", str(kept / f"part-{k:05d}.parquet"), "-q"]) == 0
    dask = ["--scheduler", client.scheduler.address]
    for extra in (["-f", "json"], ["--sentence"], ["--confidence", "--confidence-n", "50"], ["-m", "chrf,bleu"]):
        text = _out(["score", *_whole(corpus), "-m", SPLITTABLE, *extra], capsys)
        if extra[0] == "-m":
            text = _out(["score", *_whole(corpus), *extra], capsys)
        assert _out(["score", str(kept), *dask, *extra], capsys) == text, extra
    glob = str(kept / "part-*.parquet")
    compare = ["-m", "bleu", "--paired-ar-n", "200", "-f", "json"]
    assert _out(["compare", glob, *dask, *compare], capsys) == _out(["compare", *_whole(corpus), *compare], capsys)
    merged, serial = tmp_path / "merged.parquet", tmp_path / "serial.parquet"
    assert main(["stats", "--merge", glob, *dask, "-o", str(merged), "-q"]) == 0
    assert main(["stats", *_whole(corpus), "-m", SPLITTABLE, "-o", str(serial), "-q"]) == 0
    assert merged.read_bytes() == serial.read_bytes()


def test_what_dask_cannot_do_with_statistics_is_refused_in_one_line(
    client: Client, corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dask = ["--scheduler", client.scheduler.address]
    shards = corpus / "shards"

    def refused(argv: list[str], *said: str) -> None:
        capsys.readouterr()
        assert main(argv) == 2
        err = "".join(x for x in capsys.readouterr().err.splitlines(True) if "Dask dashboard" not in x)
        assert err.count("\n") == 1 and "Traceback" not in err, err
        assert all(s in err for s in said), err

    out = str(tmp_path / "x.parquet")
    # CIDEr, refused here before, is counted with the corpus's document frequencies: tests/test_dask_cider.py
    kept = tmp_path / "kept"
    kept.mkdir()
    for k, metrics in ((0, "bleu"), (1, "bleu,chrf")):
        one = [str(shards / "a" / f"shard-{k}.txt"), "-r", str(shards / "r1" / f"shard-{k}.txt"), "--names", "a"]
        assert main(["stats", *one, "-m", metrics, "-o", str(kept / f"part-{k}.parquet"), "-q"]) == 0
    refused(["score", str(kept), *dask], f"{kept / 'part-1.parquet'}: metric 2 differs from {kept / 'part-0.parquet'}")
    refused(["score", str(kept), *dask, "-r", str(shards / "r1")], "-r/--source with --scheduler and stats files")
    refused(["score", str(kept), str(shards / "a"), *dask], f"{shards / 'a' / 'shard-0.txt'}: not a stats file")
    refused(["stats", str(kept), "-r", str(shards / "r1"), *dask, "-o", out], "a stats file, not system output")
    assert not Path(out).exists()


def test_counted_stats_of_many_partitions_equal_count_stats(client: Client, corpus: Path) -> None:
    """The API: shards cut into blocks of about 300 bytes (more partitions than shards), counted on the workers."""
    import ngrameval as ne
    from ngrameval.io.stats import to_bytes
    from ngrameval.scale import dask as nd
    from ngrameval.scale.dask.gather import counted_stats
    from ngrameval.scale.stored import to_table

    s = corpus / "shards"
    parts = nd.from_text_shards({x: str(s / x) for x in SYSTEMS}, [str(s / "r1"), str(s / "r2")], str(s / "src"),
                                blocksize=300)  # fmt: skip
    assert len(parts) > len(BOUNDS) - 1
    got = counted_stats(parts, SPECS, client, keep_texts=True)

    def lines(name: str) -> list[str]:
        return (corpus / f"{name}.txt").read_text("utf-8").splitlines()

    refs = [list(r) for r in zip(lines("r1"), lines("r2"), strict=True)]
    with pytest.warns(ne.UndefinedMetricWarning):  # PINC of empty outputs, as on the workers
        want = ne.count_stats({x: lines(x) for x in SYSTEMS}, refs, SPECS, lines("src"), keep_texts=True)
    assert to_bytes(to_table(got)) == to_bytes(to_table(want))
    with warnings.catch_warnings():  # undefined sentence scores (AEv, PINC), the same on both sides
        warnings.simplefilter("ignore")
        assert [s.score for s in got.scores(sentence=True)] == [s.score for s in want.scores(sentence=True)]
