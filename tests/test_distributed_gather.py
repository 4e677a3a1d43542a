"""ngrameval.scale.dask beyond corpus sums, on a LocalCluster of 2 worker processes: paired significance,
paraphrase scores, the (alpha, N) plane and per-shard sentence scores equal the one-machine results (seeded
resamples included), through the API and the command line; --max-cells reaches the workers; dask.dataframe
(from Parquet) partitions score as the bag does."""

from __future__ import annotations

import functools
import itertools
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("distributed")

import dask.bag as db
from distributed import Client

from ngrameval.api import measure, score
from ngrameval.cli import main
from ngrameval.corpus.paraphrase import paraphrase
from ngrameval.errors import LimitError
from ngrameval.meta.correlate import HumanScores
from ngrameval.meta.plane import plane
from ngrameval.meta.significance import paired_test
from ngrameval.metrics.pinc import PINC
from ngrameval.ngrams.stats import MetricRows
from ngrameval.report.render import render
from ngrameval.scale import dask as nd

WORDS = ["the", "cat", "sat", "on", "mat", "dog", "ran", ",", ".", "running", "cats", "a", "is", "Über"]


@pytest.fixture(scope="module")
def client(dask_client: Client) -> Client:
    return dask_client


def generated(n: int, seed: int, systems: tuple[str, ...] = ("a", "b", "c")) -> list[dict[str, object]]:
    """Records of ``systems``, 1-3 references (empty lines included) and a source."""
    rng = np.random.default_rng(seed)

    def line() -> str:
        return " ".join(rng.choice(WORDS, size=int(rng.integers(0, 12))).tolist())

    out: list[dict[str, object]] = []
    for _ in range(n):
        rec: dict[str, object] = {s: line() for s in systems}
        rec["ref"] = [line() for _ in range(int(rng.integers(1, 4)))]
        rec["src"] = line()
        out.append(rec)
    return out


def columns(records: list[dict[str, object]], systems: tuple[str, ...] = ("a", "b", "c")) -> tuple[
    dict[str, list[str]], list[list[str]], list[str]
]:  # fmt: skip
    return (
        {s: [str(r[s]) for r in records] for s in systems},
        [list(r["ref"]) for r in records],  # type: ignore[call-overload]
        [str(r["src"]) for r in records],
    )


def bag_parts(records: list[dict[str, object]], npartitions: int) -> nd.cluster.Partitions:
    return nd.from_bag(db.from_sequence(records, npartitions=npartitions), ["a", "b", "c"], "ref", "src")


@pytest.mark.parametrize("test", ["ar", "bs"])
def test_compare_equals_one_machine(client: Client, test: str) -> None:
    records = generated(700, 11)
    systems, refs, src = columns(records)
    metrics = "bleu,rouge-l,chrf,pinc,ter"
    options = {"test": test, "n_resamples": 200, "n_confidence": 100, "seed": 7}
    want = paired_test(score_rows(systems, refs, metrics, src), list(systems), **options)
    got = nd.compare(bag_parts(records, 5), metrics, client, **options)
    assert got == want
    assert [m.metric for m in got.metrics] == ["BLEU", "ROUGE-L", "chrF2", "PINC", "TER"]


def score_rows(systems: dict[str, list[str]], refs: list[list[str]], metrics: str, src: list[str]) -> list[MetricRows]:
    return measure(systems, refs, metrics, src)


def test_paraphrase_equals_one_machine(client: Client) -> None:
    records = generated(600, 12)
    systems, refs, src = columns(records)
    pinc = PINC(3, False, "all")
    rng = np.random.default_rng(3)
    ratings = {s: rng.uniform(1, 5, size=len(records)).tolist() for s in systems}
    want = paraphrase(systems, src, refs, ratings=ratings, lowercase=True, pinc=pinc)
    got = nd.paraphrase(bag_parts(records, 4), client, ratings=ratings, lowercase=True, pinc=pinc)
    assert got.logistic == want.logistic
    for g, w in zip(got.scores, want.scores, strict=True):
        assert (g.system, g.metric, g.score, g.signature) == (w.system, w.metric, w.score, w.signature)
        assert np.array_equal(g.sentences, w.sentences) if w.sentences is not None else g.sentences is None


def test_plane_equals_one_machine(client: Client) -> None:
    records = generated(500, 13)
    systems, refs, _ = columns(records)
    human = HumanScores("q", ("c", "a", "b"), np.array([0.2, 0.9, 0.4]), None, 3, 0)
    for unit in ("word", "char"):
        want = plane(systems, refs, human, unit=unit, orders=(1, 2, 3), coefficient_name="pearson")
        got = nd.plane(bag_parts(records, 3), human, client, unit=unit, orders=(1, 2, 3), coefficient_name="pearson")
        assert np.array_equal(got.values, want.values, equal_nan=True)
        assert (got.best_alpha, got.best_order, got.best_value, got.signature) == (
            want.best_alpha, want.best_order, want.best_value, want.signature
        )  # fmt: skip


def write_shards(root: Path, records: list[dict[str, object]], bounds: list[int]) -> dict[str, str]:
    """Text shards of systems a, b, the first reference and the source; the pattern of each."""
    fields = {"a": "a", "b": "b", "ref": "ref", "src": "src"}
    for name in fields:
        (root / name).mkdir()
        for k, (lo, hi) in enumerate(itertools.pairwise(bounds)):
            lines = [r[name][0] if name == "ref" else r[name] for r in records[lo:hi]]  # type: ignore[index]
            (root / name / f"part-{k:02d}.txt").write_text("".join(f"{x}\n" for x in lines), encoding="utf-8")
    return {name: str(root / name / "*.txt") for name in fields}


def test_cli_compare_paraphrase_sentences(client: Client, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = [{**r, "ref": [r["ref"][0]]} for r in generated(400, 14)]  # type: ignore[index]
    bounds = [0, 150, 151, 400]
    pat = write_shards(tmp_path, records, bounds)
    whole = tmp_path / "whole"
    whole.mkdir()
    for name in ("a", "b", "ref", "src"):
        text = "".join(Path(p).read_text(encoding="utf-8") for p in sorted((tmp_path / name).iterdir()))
        (whole / name).write_text(text, encoding="utf-8")
    address = client.scheduler.address
    on_dask = ["--scheduler", address]
    cases = [
        ["compare", pat["a"], pat["b"], "-r", pat["ref"], "--source", pat["src"], "-m", "bleu,pinc", "--paired-ar-n",
         "300", "--names", "A", "B", "-f", "json"],
        ["paraphrase", pat["a"], pat["b"], "-r", pat["ref"], "--source", pat["src"], "--names", "A", "B"],
        ["score", pat["a"], pat["b"], "-r", pat["ref"], "-m", "bleu,chrf", "--confidence", "--confidence-n", "50",
         "--names", "A", "B", "-f", "json"],
        ["paraphrase", pat["a"], pat["b"], "-r", pat["ref"], "--source", pat["src"], "--sentence", "-f", "csv",
         "--names", "A", "B", "--pinc-counts"],
    ]  # fmt: skip
    for argv in cases:
        assert main([*argv, *on_dask]) == 0
        got = capsys.readouterr().out
        one = [str(whole / Path(x).parent.name) if x in pat.values() else x for x in argv]
        assert main(one) == 0
        want = capsys.readouterr().out
        assert got == want, argv[0]
    # sentence scores per shard, written by the workers; corpus scores on stdout
    out = tmp_path / "sentences"
    out.mkdir()
    argv = ["score", pat["a"], "-r", pat["ref"], "-m", "bleu,rouge-l", "--sentence", "--shard-output", str(out)]
    assert main([*argv, *on_dask, "-f", "csv"]) == 0
    corpus = capsys.readouterr().out
    assert sorted(p.name for p in out.iterdir()) == [f"part-{k:02d}.txt.csv" for k in range(3)]
    for k in range(len(bounds) - 1):
        shard_a, shard_r = tmp_path / "a" / f"part-{k:02d}.txt", tmp_path / "ref" / f"part-{k:02d}.txt"
        assert main(["score", str(shard_a), "-r", str(shard_r), "-m", "bleu,rouge-l", "--sentence", "-f", "csv",
                     "--names", pat["a"]]) == 0  # fmt: skip
        assert (out / f"part-{k:02d}.txt.csv").read_text(encoding="utf-8") == capsys.readouterr().out
    assert main(["score", str(whole / "a"), "-r", str(whole / "ref"), "-m", "bleu,rouge-l", "-f", "csv", "--names",
                 pat["a"]]) == 0  # fmt: skip
    assert corpus == capsys.readouterr().out
    # the API: the corpus rows of corpus_rows, the files written again alike
    parts = nd.from_text_shards({"a": pat["a"]}, [pat["ref"]])
    api = tmp_path / "api"
    api.mkdir()
    as_csv = functools.partial(render, fmt="csv", sentence=True)
    (rows,) = client.compute(nd.write_sentences(parts, "bleu", str(api), as_csv, ext="csv")).result()
    (want_rows,) = client.compute(nd.corpus_rows(parts, "bleu")).result()
    assert rows.values[0].tobytes() == want_rows.values[0].tobytes()
    assert sorted(p.name for p in api.iterdir()) == [f"part-{k:02d}.txt.csv" for k in range(3)]
    # without a directory, or a directory without --sentence: a one-line error
    assert main([*argv[:-2], *on_dask]) == 2
    assert "--shard-output" in capsys.readouterr().err


def test_max_cells_reaches_the_workers(client: Client) -> None:
    records = [{"a": "x " * 40, "b": "y", "c": "z", "ref": ["x " * 40], "src": "s"}] * 4
    parts = bag_parts(records, 2)
    assert nd.score(parts, "se", client)[0].score == pytest.approx(1.0)
    with pytest.raises(LimitError, match="max_cells=100"):
        nd.score(parts, "se", client, max_cells=100)
    with pytest.raises(LimitError, match="max_cells=100"):
        nd.compare(parts, "se", client, max_cells=100, n_resamples=10)


def test_dataframe_from_parquet_equals_bag(client: Client, tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    import dask.dataframe as dd

    records = generated(900, 15)
    frame = pd.DataFrame([{**r, "ref": list(r["ref"])} for r in records])  # type: ignore[call-overload]
    frame.to_parquet(tmp_path / "data.parquet", row_group_size=200)
    df = dd.read_parquet(tmp_path / "data.parquet", split_row_groups=True)
    assert df.npartitions > 1
    parts = nd.from_dataframe(df, ["a", "b", "c"], "ref", "src")
    metrics = "bleu,rouge-2,chrf,pinc"
    systems, refs, src = columns(records)
    want = [(x.system, x.metric, x.score, x.signature) for x in score(systems, refs, metrics, source=src)]
    assert [(x.system, x.metric, x.score, x.signature) for x in nd.score(parts, metrics, client)] == want


def test_workers_warnings_are_said_on_the_client(client: Client, tmp_path: Path) -> None:
    """PINC's undefined scores (empty candidates) in one of two partitions: one warning on the client, the counts
    of both added up (the partition without any counts in the total), as one machine says it — for score,
    --confidence, --sentence and paraphrase."""
    import subprocess
    import sys

    hyps = ["a b c", "d", "x y", "p q", "", ""]
    refs = ["a b d", "q", "x y z", "p q r", "s", "t"]
    src = ["a b c", "q r", "x", "p", "u v", "w"]
    for name, lines in (("h", hyps), ("r", refs), ("s", src)):
        (tmp_path / name).mkdir()
        for k in range(2):
            (tmp_path / name / f"{k}.txt").write_text("\n".join(lines[3 * k : 3 * k + 3]) + "\n")
            (tmp_path / f"{name}.txt").write_text("\n".join(lines) + "\n")
    (tmp_path / "out").mkdir()
    dask = ["--scheduler", client.scheduler.address]
    one = [str(tmp_path / "h.txt"), "-r", str(tmp_path / "r.txt"), "--source", str(tmp_path / "s.txt")]
    shards = [str(tmp_path / "h"), "-r", str(tmp_path / "r"), "--source", str(tmp_path / "s")]
    runs = {
        "score": (["score", "-m", "pinc,bleu"], []),
        "confidence": (["score", "-m", "pinc", "--confidence", "--confidence-n", "20"], []),
        "sentence": (["score", "-m", "pinc", "--sentence"], ["--shard-output", str(tmp_path / "out")]),
    }
    for name, (argv, extra) in runs.items():
        said = []
        for files, more in ((one, []), (shards, [*dask, *extra])):
            run = subprocess.run([sys.executable, "-m", "ngrameval", *argv, *files, *more], capture_output=True,
                                 text=True, check=True)  # fmt: skip
            said.append([line for line in run.stderr.splitlines() if "warning" in line])
        assert said[0] == said[1] == ["ngrameval: warning: PINC: 2 of 6 score(s) undefined (empty candidate); "
                                      "reported as 0"], (name, said)  # fmt: skip
    parts = nd.from_text_shards({"h": str(tmp_path / "h")}, [str(tmp_path / "r")], source=str(tmp_path / "s"))
    with pytest.warns(UserWarning, match="PINC: 2 of 6 score") as caught:
        nd.paraphrase(parts, client)
    assert sum("PINC" in str(w.message) for w in caught) == 1
