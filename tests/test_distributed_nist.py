"""NIST on Dask in bucket groups (ngrameval.scale.dask.nist): equal (==) to one machine for orders 1..5, both
reference lengths, several references, empty lines and mteval's bigrams after "0", for any partitioning and any
number of groups; no group's weight table holds every n-gram, and a partition receives the weights of its own
reference n-grams only."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("distributed")

import dask
from distributed import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ngrameval.api import Score, checked_specs, measure, score
from ngrameval.cli import main
from ngrameval.errors import ConfigError, InputError
from ngrameval.ngrams.stats import MetricRows
from ngrameval.scale import dask as nd
from ngrameval.scale.chunks import add_references, nist_orders
from ngrameval.scale.dask import nist as dn
from ngrameval.scale.dask.cluster import Partition, Partitions
from ngrameval.scale.refcounts import RefCounts

WORDS = ["the", "cat", "sat", "on", "mat", "dog", "0", "0.5", ",", ".", "a", "is", "Über", "x-ray", "don't"]
ORDERS = ",".join(f"nist:n={n}" for n in range(1, 6))
METRICS = f"{ORDERS},nist:ref_len=average,nist:n=3,lc=yes,bleu"

Row = tuple[str, str, float, str]


def corpus(n: int, seed: int, max_refs: int = 3) -> tuple[dict[str, list[str]], list[list[str]]]:
    """Two systems and 1..max_refs references a segment, lines of 0-11 words (empty ones too), some references
    starting with "0" (mteval's extra weight); the hypotheses are references with a few words changed, so n-grams
    of every order match."""
    rng = np.random.default_rng(seed)

    def line() -> str:
        return " ".join(rng.choice(WORDS, size=int(rng.integers(0, 12))).tolist())

    def edited(ref: str) -> str:
        words = [w if rng.random() > 0.2 else str(rng.choice(WORDS)) for w in ref.split()]
        return " ".join(words) if rng.random() > 0.1 else line()

    refs = [[line() for _ in range(int(rng.integers(1, max_refs + 1)))] for _ in range(n)]
    for r in refs[::7]:
        r[0] = "0 " + r[0]
    return {s: [edited(str(rng.choice(r))) for r in refs] for s in ("a", "b")}, refs


def partitions(systems: dict[str, list[str]], refs: list[list[str]], cuts: list[int]) -> Partitions:
    """Delayed partitions cut at ``cuts`` (segment indices), in order."""
    bounds = [0, *sorted(set(cuts)), len(refs)]
    parts = [
        dask.delayed(Partition, pure=True)(f"part-{a}", {s: h[a:b] for s, h in systems.items()}, refs[a:b])
        for a, b in itertools.pairwise(bounds)
        if b > a
    ]
    return Partitions(parts, list(systems))


def one_machine(systems: dict[str, list[str]], refs: list[list[str]], metrics: str) -> list[Row]:
    return plain(score(systems, refs, metrics))


def plain(scores: list[Score]) -> list[Row]:
    return [(x.system, x.metric, x.score, x.signature) for x in scores]


@pytest.fixture(scope="module")
def client(dask_client: Client) -> Client:
    return dask_client


def same_rows(got: list[MetricRows], systems: dict[str, list[str]], refs: list[list[str]], metrics: str) -> None:
    """The corpus rows are one machine's per-segment rows summed over the axis of segments, bit for bit."""
    expected = measure(systems, refs, metrics)
    assert [(r.metric, r.signature) for r in got] == [(r.metric, r.signature) for r in expected]
    for g, e in zip(got, expected, strict=True):
        for a, b in zip(g.values, e.values, strict=True):
            assert np.array_equal(a[0], b.sum(axis=0)), (g.metric, np.flatnonzero(a[0] != b.sum(axis=0)))


@pytest.mark.parametrize("groups", [None, 1, 4, 9])
def test_equals_one_machine(client: Client, groups: int | None) -> None:
    systems, refs = corpus(900, 1)
    parts = partitions(systems, refs, [50, 51, 300, 420, 700])  # uneven, one partition of a single segment
    got = plain(nd.score(parts, METRICS, client, nist_groups=groups))
    assert got == one_machine(systems, refs, METRICS)
    assert [s for s in got if s[1] == "NIST"]  # NIST was scored, not dropped
    same_rows(client.compute(nd.corpus_rows(parts, METRICS, nist_groups=groups)).result(), systems, refs, METRICS)


def test_groups_split_the_ngrams_and_partitions_get_their_own(client: Client) -> None:
    systems, refs = corpus(600, 2)
    cuts = [150, 300, 450]
    parts = partitions(systems, refs, cuts)
    specs = checked_specs("nist")
    graph = dn.weights_graph(parts, specs, 4)
    weights, unigrams, found = client.gather(client.compute([graph.weights, graph.unigrams, graph.found]))
    pre = next(iter(unigrams))
    whole, uni = RefCounts(5), RefCounts(1)
    add_references({pre: whole}, refs)
    add_references({pre: uni}, refs)
    higher = whole.distinct - uni.distinct  # distinct reference n-grams of orders 2..5 of the corpus
    sizes = [w[pre].distinct for w in weights]
    assert sum(sizes) == higher and len(sizes) == 4
    assert min(sizes) > 0 and max(sizes) < higher  # no group's table holds every n-gram
    assert len(unigrams[pre].vocab) == uni.distinct and unigrams[pre].total_words == uni.total_words
    for k, (a, b) in enumerate(zip([0, *cuts], [*cuts, len(refs)], strict=True)):
        own, own_uni = RefCounts(5), RefCounts(1)
        add_references({pre: own}, refs[a:b])
        add_references({pre: own_uni}, refs[a:b])
        received = sum(len(v) for f in found[k] for v in f[pre])
        assert received == own.distinct - own_uni.distinct  # exactly the partition's own n-grams
    # the lookups made on the workers place the same weights in this process (another hash() salt)
    part = client.compute(parts[1]).result()
    here = dn.nist_rows(part, specs, None, unigrams, found[1])[0]
    there = client.compute(dask.delayed(dn.nist_rows)(parts[1], specs, None, graph.unigrams, graph.found[1]))
    assert all(np.array_equal(a, b) for a, b in zip(here[0].values, there.result()[0][0].values, strict=True))


def test_command_line_equals_one_machine(client: Client, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    systems, refs = corpus(500, 3, max_refs=1)
    for name, lines in [*systems.items(), ("ref", [r[0] for r in refs])]:
        (tmp_path / name).mkdir()
        for k, a in enumerate(range(0, 500, 120)):
            (tmp_path / name / f"{k:02d}.txt").write_text("\n".join(lines[a : a + 120]) + "\n", encoding="utf-8")
        (tmp_path / f"{name}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    metrics = ["-m", "nist,nist:n=2,bleu", "-b"]
    argv = ["score", str(tmp_path / "a"), str(tmp_path / "b"), "-r", str(tmp_path / "ref"), *metrics]
    assert main([*argv, "--scheduler", client.scheduler.address]) == 0
    on_dask = capsys.readouterr().out
    argv = ["score", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), "-r", str(tmp_path / "ref.txt"), *metrics]
    assert main([*argv, "--jobs", "1"]) == 0
    assert on_dask == capsys.readouterr().out


def test_token_hashes_same_in_every_process(client: Client) -> None:
    """Workers are processes with their own salted ``hash()``: the groups must not depend on it."""
    names = [*WORDS, "", "naïve", "\udcff"]
    mine = dn.token_hashes(names)
    theirs = client.run(dn.token_hashes, names)
    assert len(theirs) == 2 and all(np.array_equal(mine, h) for h in theirs.values())
    assert len(set(mine.tolist())) == len(names)


def test_auto_groups_and_bad_groups() -> None:
    assert [dn.auto_groups(p) for p in (1, 2, 3, 10, 10_000)] == [1, 1, 2, 5, dn.MAX_GROUPS]
    systems, refs = corpus(10, 4)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ConfigError, match="nist_groups"):
            nd.corpus_rows(partitions(systems, refs, [5]), "nist", nist_groups=bad)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    n=st.integers(1, 40),
    seed=st.integers(0, 2**32 - 1),
    cuts=st.lists(st.integers(0, 40), max_size=6),
    groups=st.integers(1, 6),
    order=st.integers(1, 5),
)
def test_any_partitioning_and_groups(n: int, seed: int, cuts: list[int], groups: int, order: int) -> None:
    """The same graph run in this process (Dask's synchronous scheduler): equal to one machine."""
    systems, refs = corpus(n, seed)
    metrics = f"nist:n={order},nist:n={order},ref_len=average"
    parts = partitions(systems, refs, [c for c in cuts if c < n])
    with dask.config.set(scheduler="sync"):
        got = plain(nd.score(parts, metrics, nist_groups=groups))
        rows = nd.corpus_rows(parts, metrics, nist_groups=groups).compute()
    assert got == one_machine(systems, refs, metrics)
    same_rows(rows, systems, refs, metrics)


def test_changed_references_are_an_input_error() -> None:
    """References that differ between the counting and the scoring pass are refused, never weighted wrongly."""
    orders = nist_orders(checked_specs("nist"))
    counted = dn.partition_groups(Partition("a", {"s": ["x"]}, [["the cat sat on the mat"]]), orders, 1)
    weights = dn.weighed_groups(counted[1], counted[0])
    with pytest.raises(InputError, match=r"^b: the references changed"):  # "dog" was not counted
        dn.partition_needs(Partition("b", {"s": ["x"]}, [["the dog sat on the mat"]]), orders, 1, counted[0])
    (needs,) = dn.partition_needs(Partition("c", {"s": ["x"]}, [["the mat sat on the cat"]]), orders, 1, counted[0])
    with pytest.raises(InputError, match="the references changed"):  # the same tokens, other n-grams
        dn.looked_up_groups(needs, weights)


@pytest.mark.parametrize("cuts", [[1], [1, 2], [2, 3], []])
def test_partitions_of_empty_references(cuts: list[int]) -> None:
    """A partition whose references are all empty (no words, no n-grams), more groups than n-grams."""
    systems = {"a": ["x y", "", "0 a b", "a b c d e f"], "b": ["", "", "", "a"]}
    refs = [["x y z"], [""], ["", "0 a b c"], ["a b c d e f", ""]]
    metrics = "nist,nist:n=2,nist:ref_len=average"
    for groups in (1, 3, 8):
        with dask.config.set(scheduler="sync"):
            got = plain(nd.score(partitions(systems, refs, cuts), metrics, nist_groups=groups))
        assert got == one_machine(systems, refs, metrics), groups
