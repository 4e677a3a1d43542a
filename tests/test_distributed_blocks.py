"""Partitions sized automatically (ngrameval.scale.dask.blocks): line offsets against a plain count, blocked
shards scoring exactly as whole files on a LocalCluster, errors naming the file's own line, misaligned files
refused before any scoring, and compressed shards kept whole."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("distributed")

from distributed import Client

from ngrameval.api import score
from ngrameval.cli import main
from ngrameval.errors import InputError
from ngrameval.io import read_lines
from ngrameval.scale import dask as nd
from ngrameval.scale.dask.blocks import Block, block_offsets, line_count, read_block

WORDS = ["the", "cat", "sat", "on", "mat", "dog", "ran", ",", ".", "Über", "東京"]


@pytest.fixture(scope="module")
def client(dask_client: Client) -> Client:
    return dask_client


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.text(alphabet="ab é\r", max_size=6), max_size=40),
    st.booleans(),
    st.integers(1, 7),
)
def test_blocks_are_the_file_s_lines(tmp_path_factory: pytest.TempPathFactory, lines: list[str], final: bool,
                                     per: int) -> None:  # fmt: skip
    lines = [x.replace("\r", "") for x in lines]  # bare CRs are errors: tested below
    path = tmp_path_factory.mktemp("b") / "f.txt"
    body = "\n".join(lines) + ("\n" if final and lines else "")
    path.write_bytes(body.encode())
    want = read_lines(path)
    assert line_count(str(path))[0] == len(want)
    offsets = block_offsets(str(path), per)
    n_blocks = len(offsets) - 1
    assert n_blocks == -(-len(want) // per)
    got: list[str] = []
    for j in range(n_blocks):
        got += read_block(str(path), offsets, Block(j, j * per + 1, j == n_blocks - 1))
    assert got == want


def test_bad_bytes_name_the_file_line(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_bytes(b"a\nb\nc\nd\xff\ne\nf\r\n")
    offsets = block_offsets(str(path), 2)
    with pytest.raises(InputError, match=r"f\.txt:4: not valid UTF-8"):
        read_block(str(path), offsets, Block(1, 3, False))
    path.write_bytes(b"a\nb\nc\nd\re\n")
    offsets = block_offsets(str(path), 2)
    with pytest.raises(InputError, match=r"f\.txt:4: bare CR"):
        read_block(str(path), offsets, Block(1, 3, True))


def corpus(root: Path, n: int, seed: int, gz: bool = False) -> dict[str, str]:
    """One shard of systems a, b, two reference streams and a source, ``n`` lines each; the file of each."""
    rng = np.random.default_rng(seed)
    out = {}
    for name in ("a", "b", "r1", "r2", "src"):
        (root / name).mkdir(exist_ok=True)
        text = "".join(" ".join(rng.choice(WORDS, size=int(rng.integers(0, 9)))) + "\n" for _ in range(n))
        path = root / name / (f"{seed:03d}.txt.gz" if gz else f"{seed:03d}.txt")
        path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
        out[name] = str(path)
    return out


def test_blocked_shards_score_as_whole_files(client: Client, tmp_path: Path) -> None:
    shards = [corpus(tmp_path, 700, 1), corpus(tmp_path, 30, 2), corpus(tmp_path, 500, 3, gz=True)]
    pattern = {k: str(tmp_path / k / "*") for k in ("a", "b", "r1", "r2", "src")}
    parts = nd.from_text_shards({"a": pattern["a"], "b": pattern["b"]}, [pattern["r1"], pattern["r2"]],
                                pattern["src"], blocksize=2000)  # fmt: skip
    assert len(parts) > 5  # the plain 700-line shard is cut; the small and the compressed ones are not
    assert parts.labels[0] == "001.txt@1" and "002.txt" in parts.labels and parts.labels[-1] == "003.txt.gz"
    whole = {k: [x for s in shards for x in read_lines(s[k])] for k in ("a", "b", "r1", "r2", "src")}
    refs = list(zip(whole["r1"], whole["r2"]))
    metrics = "bleu,rouge-l,chrf,pinc,se"
    want = score({"a": whole["a"], "b": whole["b"]}, refs, metrics, source=whole["src"])
    got = nd.score(parts, metrics, client)
    assert [(s.system, s.metric, s.score, s.signature) for s in got] == [
        (s.system, s.metric, s.score, s.signature) for s in want
    ]


def test_errors_before_and_during_the_job(client: Client, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = corpus(tmp_path, 400, 4)
    with open(files["b"], "a", encoding="utf-8") as f:
        f.write("one line too many\n")
    with pytest.raises(InputError, match=r"aligned shards differ in length \(004.txt: 400, 004.txt: 401"):
        nd.from_text_shards({"a": files["a"], "b": files["b"]}, [files["r1"]], blocksize=1000)
    data = Path(files["a"]).read_bytes().split(b"\n")
    data[301] = b"bad \xc3("
    Path(files["a"]).write_bytes(b"\n".join(data))
    argv = ["score", files["a"], "-r", files["r1"], "--scheduler", client.scheduler.address, "--blocksize", "1K"]
    assert main(argv) == 2
    assert f"{files['a']}:302: not valid UTF-8" in capsys.readouterr().err
    assert main([*argv[:-1], "1X"]) == 2
    assert "--blocksize" in capsys.readouterr().err
