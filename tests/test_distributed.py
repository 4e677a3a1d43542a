"""ngrameval.scale.dask on a real Dask cluster (a LocalCluster of 2 worker processes): exactly the serial
corpus scores on generated data and on WMT19 de-en, from bags and text shards, through the API and the CLI,
and the same numbers when a worker is killed in the middle of the job."""

from __future__ import annotations

import itertools
import os
import signal
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("distributed")

import dask
import dask.bag as db
from dask.delayed import Delayed
from distributed import Client

from ngrameval.api import Score, measure, score
from ngrameval.cli import main
from ngrameval.errors import ConfigError, InputError
from ngrameval.scale import dask as nd

WMT = Path("/work/shared/data/wmt19/de-en")
WORDS = ["the", "cat", "sat", "on", "mat", "dog", "ran", ",", ".", "running", "cats", "a", "is", "Über"]
METRICS = "bleu,rouge-l,rouge-2,rouge-su4,chrf,se,pinc,aev:alpha=0.3,n=2,bleu:tok=intl,lc=yes"


@pytest.fixture(scope="module")
def client(dask_client: Client) -> Client:
    return dask_client


def generated(n: int, seed: int) -> list[dict[str, object]]:
    """Records of two systems, 1-3 references (empty lines included) and a source."""
    rng = np.random.default_rng(seed)

    def line() -> str:
        return " ".join(rng.choice(WORDS, size=int(rng.integers(0, 12))).tolist())

    return [
        {"a": line(), "b": line(), "ref": [line() for _ in range(int(rng.integers(1, 4)))], "src": line()}
        for _ in range(n)
    ]


def serial(records: list[dict[str, object]], metrics: str) -> list[tuple[str, str, float, str]]:
    systems = {s: [str(r[s]) for r in records] for s in ("a", "b")}
    refs = [list(r["ref"]) for r in records]  # type: ignore[call-overload]
    out = score(systems, refs, metrics, source=[str(r["src"]) for r in records])
    return [(x.system, x.metric, x.score, x.signature) for x in out]


def plain(scores: list[Score]) -> list[tuple[str, str, float, str]]:
    return [(x.system, x.metric, x.score, x.signature) for x in scores]


@pytest.mark.parametrize(
    "layout",
    [["-f", "json"], [], ["--strip-names", "-f", "csv"], ["--confidence", "--confidence-n", "50", "-f", "json"]],
)
def test_system_names_as_one_machine_names_them(
    client: Client,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    layout: list[str],
) -> None:
    """Issue 29, item 14: the same command prints the same bytes with and without ``--scheduler`` -- system names
    included: a file given by an absolute path or in a directory is named by its file name, two files of the same
    name are told apart with a prime (Dask used the argument as typed: ``/abs/path/s1``, ``sub/s1``)."""
    records = generated(40, 5)
    (tmp_path / "sub").mkdir()
    paths = [tmp_path / "sys.a.txt", tmp_path / "sub" / "sys.a.txt", tmp_path / "sub" / "sys.b.txt"]
    for path, key in zip(paths, ["a", "b", "a"], strict=True):
        path.write_text("".join(f"{r[key]}\n" for r in records), encoding="utf-8")
    (tmp_path / "ref.txt").write_text("".join(f"{r['ref'][0]}\n" for r in records), encoding="utf-8")  # type: ignore[index]
    monkeypatch.chdir(tmp_path)  # relative paths too: the workers run elsewhere, the client makes them absolute
    argv = ["score", str(paths[0]), "sub/sys.a.txt", "sub/sys.b.txt", "-r", "ref.txt", "-m", "bleu,chrf", *layout]
    assert main([*argv, "--scheduler", client.scheduler.address]) == 0
    on_dask = capsys.readouterr().out
    assert main(argv) == 0
    here = capsys.readouterr().out
    assert on_dask == here
    assert "sub/" not in here and str(tmp_path) not in here
    assert "--strip-names" in layout or "sys.a.txt'" in here


def test_bag_equals_serial(client: Client) -> None:
    records = generated(1500, 1)
    bag = db.from_sequence(records, npartitions=7)  # uneven partitions
    parts = nd.from_bag(bag, ["a", "b"], "ref", "src")
    assert plain(nd.score(parts, METRICS, client)) == serial(records, METRICS)


def test_lazy_until_computed(client: Client) -> None:
    records = generated(50, 2)
    graph = nd.corpus_rows(nd.from_bag(db.from_sequence(records, npartitions=3), ["a", "b"], "ref", "src"), "bleu")
    assert isinstance(graph, Delayed)
    (rows,) = client.compute(graph).result()
    assert rows.values[0].shape == (1, 23)  # 3 + 5 * 4 columns, summed


def test_wmt19_shards_equal_serial(client: Client, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outputs = sorted((WMT / "system-outputs").iterdir())[:3]
    files = {p.name: p.read_text(encoding="utf-8").splitlines() for p in outputs}
    ref = (WMT / "newstest2019-deen-ref.en").read_text(encoding="utf-8").splitlines()
    bounds = [0, 300, 900, 1500, 2000]
    for name, lines in [*files.items(), ("ref", ref)]:
        (tmp_path / name).mkdir()
        for k, (a, b) in enumerate(itertools.pairwise(bounds)):
            (tmp_path / name / f"shard-{k:02d}.txt").write_text("\n".join(lines[a:b]) + "\n", encoding="utf-8")
    metrics = "bleu,chrf,rouge-l,aev"
    parts = nd.from_text_shards({n: str(tmp_path / n) for n in files}, [str(tmp_path / "ref" / "*.txt")])
    expected = [(x.system, x.metric, x.score, x.signature) for x in score(files, ref, metrics)]
    assert plain(nd.score(parts, metrics, client)) == expected
    # the command line, pointed at the running scheduler, prints what the serial run prints (BLEU's breakdown too)
    sys_args = [str(tmp_path / n) for n in files]
    for layout in (["-b"], ["--names", *files], ["--names", *files, "-f", "json"]):
        argv = ["score", *sys_args, "-r", str(tmp_path / "ref"), "-m", metrics, *layout]
        assert main([*argv, "--scheduler", client.scheduler.address]) == 0
        on_dask = capsys.readouterr().out
        assert main(["score", *(str(p) for p in outputs), "-r", str(WMT / "newstest2019-deen-ref.en"), "-m", metrics,
                     *layout, "--jobs", "1"]) == 0  # fmt: skip
        assert on_dask == capsys.readouterr().out, layout


def test_nist_equals_serial(client: Client) -> None:
    """NIST's first pass counts the references on the workers (merged in a tree), then scores with the weights:
    equal to one machine bit for bit, with mteval's bigrams after "0", two text settings and BLEU counted along."""
    records = generated(1200, 5)
    for r in records[::9]:
        r["ref"] = ["0 " + x for x in r["ref"]]  # type: ignore[attr-defined]
    metrics = "bleu,nist,nist:n=3,profile=plain,nist:lc=yes,rouge-l"
    parts = nd.from_bag(db.from_sequence(records, npartitions=5), ["a", "b"], "ref", "src")
    assert plain(nd.score(parts, metrics, client)) == serial(records, metrics)


def test_nist_and_misaligned_shards_refused(tmp_path: Path) -> None:
    from ngrameval.api import checked_specs
    from ngrameval.scale.dask.cluster import check_specs

    with pytest.raises(ConfigError, match="NIST"):  # callers that do not count the references first
        check_specs(checked_specs("bleu,nist"))
    for k in range(2):
        (tmp_path / f"h{k}").write_text("x\n")
    (tmp_path / "r0").write_text("x\n")
    with pytest.raises(InputError, match="numbers differ"):
        nd.from_text_shards({"h": str(tmp_path / "h*")}, [str(tmp_path / "r*")])


def _gated(records: list[dict[str, object]], k: int, marks: str) -> list[dict[str, object]]:
    """Chunk ``k``: chunks 0 and 1 pass at once; the others mark that they started and wait for the file ``go``
    (the test's event, not a delay), so the job cannot finish before the test lets it, and is running when it kills
    a worker."""
    root = Path(marks)
    if k >= 2:
        (root / f"started-{k}").touch()
        while not (root / "go").exists():
            time.sleep(0.05)  # polls the test's event
    (root / f"done-{k}").touch()
    return records


def test_worker_killed_mid_job(client: Client, tmp_path: Path) -> None:
    records = generated(2400, 4)
    chunks = [records[i : i + 100] for i in range(0, len(records), 100)]
    bag = db.from_delayed([dask.delayed(_gated, pure=True)(c, k, str(tmp_path)) for k, c in enumerate(chunks)])
    graph = nd.corpus_rows(nd.from_bag(bag, ["a", "b"], "ref", "src"), "bleu,rouge-l,se")
    future = client.compute(graph)
    deadline = time.monotonic() + 60  # a hang guard: waits for events, measures nothing
    while not any(tmp_path.glob("started-*")):
        assert time.monotonic() < deadline and not future.done()
        time.sleep(0.05)
    assert not future.done()  # a partition is running, held until "go"
    victim = sorted(client.scheduler_info()["workers"])[0]
    pid = client.run(os.getpid, workers=[victim])[victim]
    os.kill(pid, signal.SIGKILL)
    (tmp_path / "go").touch()
    rows = future.result(timeout=120)
    systems = {s: [str(r[s]) for r in records] for s in ("a", "b")}
    refs = [list(r["ref"]) for r in records]  # type: ignore[call-overload]
    expected = measure(systems, refs, "bleu,rouge-l,se", [str(r["src"]) for r in records])
    for got, want in zip(rows, expected):
        for v, w in zip(got.values, want.values):
            assert np.array_equal(v[0], w.sum(axis=0)), got.metric
    assert rows[1].values[0][0, 1] == len(records)  # ROUGE-L's count column: every segment once
