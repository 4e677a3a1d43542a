"""CIDEr and CIDEr-D on Dask (a LocalCluster of 2 single-threaded worker processes): each partition's reference
document frequencies counted on its worker and added, each partition scored against them
(ngrameval.scale.dask.sides): ``score``, ``compare``, ``stats`` and the per-shard sentence scores give the bytes
of one machine, for any partitioning (an empty partition too), several references and every order; the sentence
scores are pycocoevalcap's and vrama91's. Before, each partition used its own document frequencies (0.6618 for
the serial 0.6574), and CIDEr was refused on Dask."""

from __future__ import annotations

import csv
import io
import itertools
import json
import random
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

pytest.importorskip("distributed")

import dask
from distributed import Client

from ngrameval.api import checked_specs, measure, score
from ngrameval.cli import main
from ngrameval.errors import ConfigError, InputError
from ngrameval.metrics.cider import Cider, CiderCounts
from ngrameval.metrics.registry import MetricSpec
from ngrameval.scale import dask as nd
from ngrameval.scale.dask import gather
from ngrameval.scale.dask.cluster import Partition, Partitions, check_specs
from ngrameval.text.pipeline import Preprocess

GOLDEN = json.loads((Path(__file__).parent / "golden" / "coco" / "golden.json").read_text())["generated"]
SPECS = "cider-d:tok=none,cider:tok=none,cider-d:n=2,cider:n=5,cider-d:sigma=3,bleu,nist"
WORDS = ["the", "cat", "sat", "on", "mat", "dog", "ran", ",", ".", "über", "“quoted”", "naïve", "3.5", "a"]


@pytest.fixture(scope="module")
def client(dask_client: Client) -> Client:
    return dask_client


def partitions(systems: dict[str, list[str]], refs: list[list[str]], bounds: list[int]) -> Partitions:
    """Delayed partitions of the segments between consecutive ``bounds`` (an empty one where two are equal)."""
    parts = [
        dask.delayed(Partition, pure=True)(f"part-{a}", {s: h[a:b] for s, h in systems.items()}, refs[a:b])
        for a, b in itertools.pairwise(bounds)
    ]
    return Partitions(parts, list(systems))


def golden() -> tuple[dict[str, list[str]], list[list[str]]]:
    """The generated set of tests/golden/coco (1 to 6 references a segment) and a second system."""
    hyps, refs = GOLDEN["hyps"], GOLDEN["refs"]
    return {"a": hyps, "b": [r[0] for r in refs]}, refs


def plain(scores: list) -> list[tuple[str, str, float, str]]:  # type: ignore[type-arg]
    return [(x.system, x.metric, x.score, x.signature) for x in scores]


@pytest.mark.slow
@pytest.mark.parametrize("bounds", [[0, 200], [0, 0, 37, 38, 120, 200], [0, *range(10, 200, 10), 200, 200]])
def test_partitions_score_as_one_machine(client: Client, bounds: list[int]) -> None:
    """One partition, uneven ones with an empty one, twenty: corpus scores equal (==) and every segment's rows
    bit for bit, for CIDEr and CIDEr-D of several orders and sigmas beside BLEU and NIST."""
    systems, refs = golden()
    parts = partitions(systems, refs, bounds)
    assert plain(nd.score(parts, SPECS, client)) == plain(score(systems, refs, SPECS))
    got = client.compute(gather.segment_rows(parts, SPECS.replace(",nist", ""))).result()
    want = measure(systems, refs, checked_specs(SPECS.replace(",nist", "")))
    assert [r.signature for r in got] == [r.signature for r in want]
    for g, w in zip(got, want, strict=True):
        assert [v.tobytes() for v in g.values] == [v.tobytes() for v in w.values], g.metric


def test_sentence_scores_on_dask_are_pycocoevalcaps_and_vrama91s(client: Client) -> None:
    """The segments' CIDEr-D from Dask partitions equal pycocoevalcap 1.2's (==), and CIDEr the authors' golden
    values (as tests/test_cider.py checks one machine)."""
    systems, refs = golden()
    parts = partitions(systems, refs, [0, 50, 51, 140, 200])
    d, c = client.compute(gather.segment_rows(parts, "cider-d:tok=none,cider:tok=none")).result()
    np.testing.assert_allclose(c.values[0][:, 0], GOLDEN["cider_original_sent"], rtol=1e-12, atol=1e-15)
    pytest.importorskip("pycocoevalcap")
    from pycocoevalcap.cider.cider import Cider as TheirCider

    theirs, sent = TheirCider().compute_score(dict(enumerate(refs)), {i: [h] for i, h in enumerate(systems["a"])})
    assert np.array_equal(d.values[0][:, 0], np.asarray(sent))
    assert d.values[0][:, 0].mean() == pytest.approx(theirs, rel=1e-12)


@dataclass(frozen=True)
class _Shards:
    whole: Path
    shards: Path
    bounds: tuple[int, ...]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> _Shards:
    """Two systems, two reference streams (some lines empty) and their shards of uneven sizes."""
    d = tmp_path_factory.mktemp("dask_cider")
    rng = random.Random(32)
    bounds = (0, 23, 24, 71, 130)
    texts = {name: [" ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 11))) for _ in range(bounds[-1])]
             for name in ("a", "b", "r1", "r2")}  # fmt: skip
    texts["r1"] = [x or "the cat" for x in texts["r1"]]  # every segment has a reference
    for name, lines in texts.items():
        (d / "whole").mkdir(exist_ok=True)
        (d / "whole" / name).write_text("".join(f"{x}\n" for x in lines), "utf-8")
        (d / "shards" / name).mkdir(parents=True)
        for k, (a, b) in enumerate(itertools.pairwise(bounds)):
            (d / "shards" / name / f"shard-{k}.txt").write_text("".join(f"{x}\n" for x in lines[a:b]), "utf-8")
    return _Shards(d / "whole", d / "shards", bounds)


def _files(root: Path) -> list[str]:
    return [str(root / "a"), str(root / "b"), "-r", str(root / "r1"), str(root / "r2"), "--names", "a", "b"]


def _out(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(argv) == 0, capsys.readouterr().err
    return capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.parametrize("blocksize", ["0", "200"])  # a partition per shard; shards cut into blocks of lines
def test_cli_on_dask_prints_the_bytes_of_one_machine(
    client: Client, corpus: _Shards, tmp_path: Path, capsys: pytest.CaptureFixture[str], blocksize: str
) -> None:
    dask_ = ["--scheduler", client.scheduler.address, "--blocksize", blocksize]
    metrics = ["-m", "cider,cider-d,bleu,nist"]
    for extra in (["-f", "json"], ["--confidence", "--confidence-n", "40"]):
        m = metrics if extra[0] == "-f" else ["-m", "cider-d,cider"]  # --confidence gathers rows: no NIST there
        want = _out(["score", *_files(corpus.whole), *m, *extra], capsys)
        assert _out(["score", *_files(corpus.shards), *m, *extra, *dask_], capsys) == want, extra
    compare = ["-m", "cider-d,bleu", "--paired-ar-n", "100", "-f", "json"]
    assert _out(["compare", *_files(corpus.shards), *compare, *dask_], capsys) == _out(
        ["compare", *_files(corpus.whole), *compare], capsys
    )
    serial, on_dask = tmp_path / "serial.parquet", tmp_path / "dask.parquet"
    stats = ["-m", "cider-d,cider:n=3,nist,bleu", "--texts", "-q"]
    assert main(["stats", *_files(corpus.whole), *stats, "-o", str(serial)]) == 0
    assert main(["stats", *_files(corpus.shards), *stats, *dask_, "-o", str(on_dask)]) == 0
    assert on_dask.read_bytes() == serial.read_bytes()


def _rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))[1:]


def test_sentence_scores_per_shard_are_the_whole_corpus_scores(
    client: Client, corpus: _Shards, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each shard's file holds the sentence scores of the whole corpus's run for its segments (numbered from 1
    in the shard), not those of the shard scored alone."""
    out = tmp_path / "out"
    out.mkdir()
    argv = ["score", "-m", "cider-d,cider", "--sentence", "-f", "csv"]
    corpus_scores = _out([*argv, *_files(corpus.shards), "--scheduler", client.scheduler.address,
                          "--shard-output", str(out)], capsys)  # fmt: skip
    serial = _rows(_out([*argv, *_files(corpus.whole)], capsys))
    want: dict[tuple[str, str, int], str] = {(s, m, int(k)): v for s, m, k, v in serial}
    for k, (a, b) in enumerate(itertools.pairwise(corpus.bounds)):
        got = _rows((out / f"shard-{k}.txt.csv").read_text("utf-8"))
        assert len(got) == 2 * 2 * (b - a)
        assert all(want[(s, m, int(i) + a)] == v for s, m, i, v in got), k
    last = [str(corpus.shards / n / "shard-3.txt") for n in ("a", "b", "r1", "r2")]
    shard_alone = _rows(_out([*argv, *last[:2], "-r", *last[2:], "--names", "a", "b"], capsys))
    assert shard_alone != _rows((out / "shard-3.txt.csv").read_text("utf-8"))  # its own df would differ
    assert corpus_scores == _out(["score", "-m", "cider-d,cider", "-f", "csv", *_files(corpus.whole)], capsys)


def test_merged_counts_are_exact_and_checked() -> None:
    """The document frequencies of pieces added in any grouping are those of the whole; a side made against
    counts that lack a reference n-gram, or of another order, is refused."""
    refs = golden()[1]
    pre = Preprocess(tokenize="none")
    metric = Cider()
    whole = metric.reference_counts(refs, pre)
    pieces = [metric.reference_counts(refs[a:b], pre) for a, b in itertools.pairwise([0, 0, 60, 61, 200])]
    halves = [metric.merged_counts(pieces[:2]), metric.merged_counts(pieces[2:])]
    for grouped in (metric.merged_counts(pieces), metric.merged_counts(halves)):
        assert isinstance(grouped, CiderCounts) and grouped.segments == 200
        assert _table(grouped) == _table(whole)
    side = metric.reference_side(refs[60:61], pre, whole)  # one segment of the corpus, kept and read back
    back = metric.side_from(side.arrays())
    assert back.documents == side.documents == 200
    hyp = [GOLDEN["hyps"][60:61]]
    assert (
        metric.rows_against(back, hyp, pre).values[0].tobytes()
        == metric.rows_against(side, hyp, pre).values[0].tobytes()
    )
    with pytest.raises(InputError, match="references changed"):
        metric.reference_side([["an unseen word"]], pre, whole)
    with pytest.raises(TypeError):
        Cider(n=2).reference_side(refs, pre, whole)


def _table(c: CiderCounts) -> set[tuple[tuple[str, ...], int]]:
    """The counts as (n-gram strings, df) pairs, whatever the token ids."""
    out = set()
    grams: list[list[tuple[str, ...]]] = []
    for j, (keys, df) in enumerate(zip(c.keys, c.df, strict=True)):
        w = max(len(c.names), 1)
        now = [(c.names[k],) if j == 0 else (*grams[-1][k // w], c.names[k % w]) for k in keys.tolist()]
        out |= set(zip(now, df.tolist(), strict=True))
        grams.append(now)
    return out


def test_what_cannot_be_exact_on_dask_is_still_refused_by_name() -> None:
    """A corpus-wide metric without a counting pass (neither NIST's weights nor a reference side) is refused."""

    @dataclass(frozen=True)
    class Unkept(Cider):
        keeps_references: ClassVar[bool] = False

        def display_name(self) -> str:
            return "Unkept"

    with pytest.raises(ConfigError, match="Unkept cannot be counted on Dask partitions"):
        check_specs([MetricSpec(Unkept(), Preprocess())], nist=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_specs(checked_specs("cider,cider-d"), nist=False)  # no refusal, no warning
