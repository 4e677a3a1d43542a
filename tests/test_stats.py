"""Issue 32 item 4: ``ngrameval stats`` counts once and keeps every metric's per-segment statistics (Parquet); a
stats file scores, compares and merges exactly as the text does, and refuses what does not fit, in one line."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ngrameval as ne
from ngrameval.cli import main
from ngrameval.io.stats import SCHEMA_VERSION, read_table, to_bytes
from ngrameval.scale.stored import to_table

pytest.importorskip("pyarrow")

# every metric family: counted (BLEU, NIST, AEv, COCO BLEU), own rows (chrF, TER, ROUGE, CIDEr), sentence means
# against the source or references (PINC, SE), and specs sharing a name (NIST and NIST profile:plain)
EVERY = ("bleu,nist,aev,pinc,se,chrf,chrf++,ter,rouge-1,rouge-l,rouge-su4,rouge-w,cider-d,cider,coco-bleu,"
         "coco-rouge-l,bleu:smooth=floor,nist:profile=plain")  # fmt: skip
SPLITTABLE = "bleu,aev,pinc,chrf++,ter,rouge-2,rouge-l,coco-bleu,coco-rouge-l"  # no corpus-wide metric
WORDS = [
    "the",
    "cat",
    "sat",
    "on",
    "a",
    "mat",
    "dog",
    "ran",
    "fast",
    "über",
    "“quoted”",
    "—",
    "naïve",
    "0",
    "1",
    ",",
    ".",
]


def _line(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 14)))


@pytest.fixture(scope="module")
def corpus() -> dict[str, list[str] | list[list[str]]]:
    rng = random.Random(32)
    n = 60
    return {"refs": [[_line(rng), _line(rng)] for _ in range(n)], "A": [_line(rng) for _ in range(n)],
            "B": [_line(rng) for _ in range(n)], "src": [_line(rng) for _ in range(n)]}  # fmt: skip


@pytest.fixture(scope="module")
def files(corpus: dict[str, list], tmp_path_factory: pytest.TempPathFactory) -> Path:  # type: ignore[type-arg]
    d = tmp_path_factory.mktemp("stats")
    (d / "A.txt").write_text("".join(f"{x}\n" for x in corpus["A"]), "utf-8")
    (d / "B.txt").write_text("".join(f"{x}\n" for x in corpus["B"]), "utf-8")
    (d / "src.txt").write_text("".join(f"{x}\n" for x in corpus["src"]), "utf-8")
    for k in range(2):
        (d / f"ref{k}.txt").write_text("".join(f"{r[k]}\n" for r in corpus["refs"]), "utf-8")
    return d


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _inputs(d: Path) -> list[str]:
    return [str(d / "A.txt"), str(d / "B.txt"), "-r", str(d / "ref0.txt"), str(d / "ref1.txt"), "--source",
            str(d / "src.txt")]  # fmt: skip


@pytest.fixture(scope="module")
def stats_file(files: Path) -> Path:
    path = files / "run.parquet"
    assert main(["stats", *_inputs(files), "-m", EVERY, "-o", str(path), "-q"]) == 0
    return path


def test_every_metric_scores_the_same_from_kept_statistics(corpus: dict[str, list], tmp_path: Path) -> None:  # type: ignore[type-arg]
    systems = {"A": corpus["A"], "B": corpus["B"]}
    with pytest.warns(ne.UndefinedMetricWarning):
        run_stats = ne.count_stats(systems, corpus["refs"], EVERY, source=corpus["src"])
        text = ne.score(systems, corpus["refs"], ne.parse_specs(EVERY), sentence=True, source=corpus["src"])
    ne.write_stats(run_stats, tmp_path / "r.parquet")
    back = ne.read_stats(tmp_path / "r.parquet")
    with pytest.warns(ne.UndefinedMetricWarning):  # AEv of sentences: undefined, as from the text
        kept = back.scores(sentence=True)
    assert len(kept) == len(text) == 2 * 18
    for a, b in zip(text, kept, strict=True):
        assert (a.system, a.metric, a.signature, a.score, a.details) == (b.system, b.metric, b.signature, b.score,
                                                                          b.details)  # fmt: skip
        assert a.sentences is not None and b.sentences is not None and np.array_equal(a.sentences, b.sentences)
    assert back.fingerprints() == run_stats.fingerprints()
    assert back.fingerprints()["refs"].startswith("sha256:")


@pytest.mark.parametrize("fmt", ["text", "json", "csv", "markdown", "latex"])
def test_score_prints_the_same_bytes_from_a_stats_file(
    fmt: str, files: Path, stats_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for extra in ([], ["--sentence"]):
        code, from_text, _ = run(["score", *_inputs(files), "-m", EVERY, "-f", fmt, "-q", *extra], capsys)
        assert code == 0
        code, from_stats, err = run(["score", str(stats_file), "-f", fmt, "-q", *extra], capsys)
        assert code == 0 and err == ""
        assert from_stats == from_text
    if fmt == "json":
        assert {r["metric"] for r in json.loads(from_stats)} >= {
            "BLEU smooth:exp",
            "NIST",
            "NIST profile:plain",
            "CIDEr-D",
        }


@pytest.mark.slow  # bootstrap intervals of 18 metrics, twice
def test_score_only_confidence_and_a_subset_of_metrics(
    files: Path, stats_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for options in (["-b"], ["--confidence", "--confidence-n", "40", "--seed", "7"], ["-m", "nist,chrf++,bleu"]):
        metrics = [] if "-m" in options else ["-m", EVERY]
        code, from_text, _ = run(["score", *_inputs(files), *metrics, "-q", *options], capsys)
        assert code == 0
        # -r/--source given with the stats file: checked against its fingerprints, then the same output
        code, from_stats, err = run(["score", str(stats_file), *_inputs(files)[2:], "-q", *options], capsys)
        assert (code, err) == (0, "") and from_stats == from_text
    assert "NIST profile" not in from_stats  # a subset is named as a run of that subset names it


@pytest.mark.parametrize("test", ["--paired-ar", "--paired-bs"])
def test_compare_gives_the_same_p_values_from_a_stats_file(
    test: str, files: Path, stats_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    opts = [test, "--paired-ar-n", "200", "--paired-bs-n", "100", "--confidence-n", "50", "--seed", "3", "-f", "json"]
    metrics = "bleu,chrf,ter,rouge-l,cider-d"
    code, from_text, _ = run(["compare", *_inputs(files), "-m", metrics, "-q", *opts], capsys)
    assert code == 0
    code, from_stats, err = run(["compare", str(stats_file), "-m", metrics, "-q", *opts], capsys)
    assert (code, err) == (0, "") and from_stats == from_text
    assert "p" in json.dumps(json.loads(from_stats))


def test_shards_merge_to_the_whole_bit_for_bit(
    corpus: dict[str, list],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],  # type: ignore[type-arg]
) -> None:
    def write(lo: int, hi: int, name: str) -> Path:
        systems = {"A": corpus["A"][lo:hi], "B": corpus["B"][lo:hi]}
        refs = corpus["refs"][lo:hi]
        if lo == 0:  # a shard whose segments all have one reference: nrefs differs between shards
            refs = [r[:1] for r in refs]
        run_stats = ne.count_stats(systems, refs, SPLITTABLE, source=corpus["src"][lo:hi])
        ne.write_stats(run_stats, tmp_path / name)
        return tmp_path / name

    with pytest.warns(ne.UndefinedMetricWarning):
        head, tail = write(0, 23, "a.parquet"), write(23, 60, "b.parquet")
        systems = {"A": corpus["A"], "B": corpus["B"]}
        whole_refs = [r[:1] if i < 23 else r for i, r in enumerate(corpus["refs"])]
        whole = ne.count_stats(systems, whole_refs, SPLITTABLE, source=corpus["src"])
    merged = ne.merge_stats([ne.read_stats(head), ne.read_stats(tail)])
    assert to_bytes(to_table(merged)) == to_bytes(to_table(whole))  # values, digests, signatures: the same file
    assert merged.rows[0].signature.startswith("BLEU|nrefs:var|")
    code, _, err = run(["stats", "--merge", str(head), str(tail), "-o", str(tmp_path / "all.parquet")], capsys)
    assert (code, err) == (0, "")
    assert (tmp_path / "all.parquet").read_bytes() == to_bytes(to_table(whole))


def test_merge_refuses_what_differs_naming_it(
    corpus: dict[str, list],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],  # type: ignore[type-arg]
) -> None:
    refs = corpus["refs"][:10]
    one = ne.count_stats({"A": corpus["A"][:10]}, refs, "bleu,chrf")
    other_system = ne.count_stats({"C": corpus["A"][:10]}, refs, "bleu,chrf")
    other_metric = ne.count_stats({"A": corpus["A"][:10]}, refs, "bleu:smooth=floor,chrf")
    nist = ne.count_stats({"A": corpus["A"][:10]}, refs, "bleu,nist")
    with pytest.raises(ne.InputError, match=r"b: systems differ from a's: \['C'\] and \['A'\]"):
        ne.merge_stats([one, other_system], ["a", "b"])
    with pytest.raises(ne.InputError, match=r"b: metric 1 differs from a's: BLEU\|.*smooth:floor.* and BLEU\|.*exp"):
        ne.merge_stats([one, other_metric], ["a", "b"])
    with pytest.raises(ne.InputError, match="NIST cannot be merged from shards: its statistics depend on every"):
        ne.merge_stats([nist, nist])
    for k, r in enumerate((one, other_metric)):
        ne.write_stats(r, tmp_path / f"{k}.parquet")
    code, _, err = run(["stats", "--merge", str(tmp_path / "0.parquet"), str(tmp_path / "1.parquet"), "-o",
                        str(tmp_path / "m.parquet")], capsys)  # fmt: skip
    assert code == 2 and err.count("\n") == 1 and "1.parquet: metric 1 differs from " in err
    assert not (tmp_path / "m.parquet").exists()


def test_mismatched_references_source_or_signature_is_an_error(
    files: Path, stats_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    swapped = ["-r", str(files / "ref1.txt"), str(files / "ref0.txt")]
    code, out, err = run(["score", str(stats_file), *swapped], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "ref1.txt: references differ from those" in err and "(first at segment 1)" in err
    assert err.count("sha256:") == 2
    code, out, err = run(["score", str(stats_file), "--source", str(files / "A.txt")], capsys)
    assert code == 2 and "A.txt: source differ" in err and err.count("sha256:") == 2
    code, out, err = run(["compare", str(stats_file), "-m", "bleu:n=3"], capsys)
    assert code == 2 and err.count("\n") == 1
    assert "no statistics of BLEU-3|nrefs:2|" in err and "(the nearest it holds: BLEU|" in err and "|n:4|" in err
    code, out, err = run(["score", str(stats_file), "-m", "bleu", "-lc"], capsys)
    assert code == 2 and "case:lc" in err and "case:mixed" in err
    code, out, err = run(["score", str(stats_file), "-lc"], capsys)
    assert code == 2 and "-lc picks statistics of" in err and "only with -m" in err


def _edited(path: Path, out: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    """``path`` written to ``out`` with its ngrameval.stats metadata changed by ``edit``."""
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    header = json.loads(table.schema.metadata[b"ngrameval.stats"])
    edit(header)
    pq.write_table(table.replace_schema_metadata({b"ngrameval.stats": json.dumps(header).encode()}), out)


def _future(header: dict[str, Any]) -> None:
    header["schema"] = SCHEMA_VERSION + 1


def _other_order(header: dict[str, Any]) -> None:
    header["metrics"][0]["fields"]["max_order"] = 3  # BLEU-3 in a record signed BLEU (n:4)


def _no_signature(header: dict[str, Any]) -> None:
    del header["metrics"][1]["signature"]


def test_bad_stats_files_are_one_line_and_exit_2(
    files: Path, stats_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = stats_file.read_bytes()
    (tmp_path / "cut.parquet").write_bytes(data[: len(data) // 2])
    (tmp_path / "flip.parquet").write_bytes(data[:4] + bytes(64) + data[68:])
    pq.write_table(pa.table({"x": [1.0]}), tmp_path / "other.parquet")
    for name, edit in (("future", _future), ("order", _other_order), ("nosig", _no_signature)):
        _edited(stats_file, tmp_path / f"{name}.parquet", edit)
    expected = {
        "cut.parquet": "a damaged or truncated Parquet file",
        "flip.parquet": "a damaged or truncated Parquet file",
        "other.parquet": "a Parquet file, but not ngrameval statistics",
        "future.parquet": f"statistics of schema {SCHEMA_VERSION + 1} (written by ngrameval-",
        "order.parquet": "metric BLEU smooth:exp rebuilt with signature BLEU-3|nrefs:2|",
        "nosig.parquet": "its metrics' metadata is damaged (no or a bad 'signature')",
    }
    for name, said in expected.items():
        for command in ("score", "compare"):
            code, out, err = run([command, str(tmp_path / name)], capsys)
            assert (code, out) == (2, ""), (name, command)
            assert err.startswith(f"ngrameval: error: {tmp_path / name}: {said}") and err.count("\n") == 1, err
    with pytest.raises(ne.InputError, match="reads schema 1 and older: upgrade ngrameval"):
        read_table(tmp_path / "future.parquet")


def test_stats_writes_atomically_and_never_over_an_input(
    files: Path, stats_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (files / "A.txt").read_bytes()
    code, _, err = run(["stats", *_inputs(files), "-o", str(files / "A.txt")], capsys)
    assert code == 2 and "-o" in err and (files / "A.txt").read_bytes() == before
    code, _, err = run(["stats", str(stats_file), "-r", str(files / "ref0.txt"), "-o", str(files / "x.parquet")],
                       capsys)  # fmt: skip
    assert code == 2 and "a stats file, not system output (merge shards with ngrameval stats --merge)" in err
    code, _, err = run(["score", str(stats_file), str(files / "A.txt")], capsys)
    assert code == 2 and "a stats file is read alone" in err
    assert sorted(p.name for p in files.iterdir() if p.name.startswith(".")) == []  # no temporary file left


@pytest.mark.slow  # two correlations with intervals, twice
def test_correlate_gives_the_same_output_from_a_stats_file(
    files: Path, stats_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = random.Random(5)
    judged = files / "judgments.jsonl"
    judged.write_text("".join(json.dumps({"system": name, "seg": str(i), "quality": rng.randint(1, 5)}) + "\n"
                              for name in ("A.txt", "B.txt") for i in range(1, 61)))  # fmt: skip
    judge = ["-j", str(judged), "--segment-column", "seg", "--score-columns", "quality", "--confidence-n", "50"]
    for extra in (["--level", "segment"], ["--level", "segment", "--matrix", "--coefficients", "pearson"]):
        metrics = ["-m", "bleu,chrf,rouge-l,ter"]
        code, from_text, _ = run(["correlate", *_inputs(files), *metrics, *judge, *extra, "-q"], capsys)
        assert code == 0
        code, from_stats, err = run(["correlate", str(stats_file), *metrics, *judge, *extra, "-q"], capsys)
        assert (code, err) == (0, "") and from_stats == from_text
    code, _, err = run(["correlate", str(stats_file), *judge, "--given", "bleu"], capsys)
    assert code == 2 and "--given counts a metric on the text: give system files, not a stats file" in err


def test_reference_cache_skips_counting_the_references(
    files: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """--ref-cache: the first system counts NIST's reference n-grams and keeps them with every chunk's weights; the
    next system against the same references reads them (counting would fail here) and prints what scoring without
    a cache prints."""
    from ngrameval.scale import refspill

    refs = ["-r", str(files / "ref0.txt"), str(files / "ref1.txt")]
    cache = tmp_path / "cache"
    opts = ["-m", "nist,bleu,nist:profile=plain", "--chunk-size", "13", "-q"]
    code, first, _ = run(["score", str(files / "A.txt"), *refs, *opts, "--ref-cache", str(cache)], capsys)
    assert code == 0 and first == run(["score", str(files / "A.txt"), *refs, *opts], capsys)[1]
    (entry,) = cache.iterdir()
    assert entry.name.startswith("nist-") and (entry / "meta.json").is_file()
    assert sorted(p.name for p in entry.glob("chunk*.npz")) == ["chunk0.npz", "chunk1.npz", "chunk2.npz", "chunk3.npz",
                                                                 "chunk4.npz"]  # 60 segments, 13 a chunk  # fmt: skip
    expected = run(["score", str(files / "B.txt"), *refs, *opts], capsys)[1]

    def no_counting(*args: object) -> None:
        raise AssertionError("the references were counted again")

    monkeypatch.setattr(refspill.SpilledCounts, "add", no_counting)  # the references' n-grams, counted
    monkeypatch.setattr(refspill.SpilledWeights, "chunk", no_counting)  # a chunk's n-grams, interned and weighted
    code, second, err = run(["score", str(files / "B.txt"), *refs, *opts, "--ref-cache", str(cache)], capsys)
    assert (code, err) == (0, "") and second == expected
    # other references, or another chunk size (the weights are kept chunk by chunk): another entry, counted
    monkeypatch.undo()
    run(["score", str(files / "B.txt"), *refs, *opts[:-2], "7", "-q", "--ref-cache", str(cache)], capsys)
    assert len(list(cache.iterdir())) == 2
    (entry / "tables.npz").write_bytes(b"damaged")
    code, _, err = run(["score", str(files / "B.txt"), *refs, *opts, "--ref-cache", str(cache)], capsys)
    assert code == 2 and err.count("\n") == 1 and f"{entry}: a damaged reference cache entry" in err


def test_stats_streamed_in_chunks_writes_the_same_file(files: Path, tmp_path: Path) -> None:
    """``stats --chunk-size`` (bounded memory; ``--ref-cache`` streams too) takes the digests chunk by chunk and keeps
    every segment's rows: the same file, byte for byte, as counting the texts in memory."""
    metrics = ["-m", "bleu,nist,chrf,rouge-l,ter,pinc"]
    assert main(["stats", *_inputs(files), *metrics, "-o", str(tmp_path / "mem.parquet"), "-q"]) == 0
    assert main(["stats", *_inputs(files), *metrics, "--chunk-size", "13", "-o", str(tmp_path / "chunks.parquet"),
                 "-q"]) == 0  # fmt: skip
    assert main(["stats", *_inputs(files), *metrics, "--ref-cache", str(tmp_path / "cache"), "-o",
                 str(tmp_path / "cached.parquet"), "-q"]) == 0  # fmt: skip
    whole = (tmp_path / "mem.parquet").read_bytes()
    assert (tmp_path / "chunks.parquet").read_bytes() == whole == (tmp_path / "cached.parquet").read_bytes()


@pytest.mark.slow  # two planes with a counting pass, twice
def test_plane_gives_the_same_output_from_a_stats_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``plane STATS``: the (alpha, N) plane from the corpus totals of a kept block of n-gram statistics (``-m
    aev:n=4``: orders up to 4) is the plane counted from the text; a plane the file cannot give is named."""
    from ngrameval.cli.demo import load_sample

    systems, refs = load_sample()
    rng = random.Random(9)
    judged = tmp_path / "judged.jsonl"
    judged.write_text("".join(json.dumps({"system": f"{name}.txt", "quality": rng.randint(1, 5) + k / 4}) + "\n"
                              for k, name in enumerate(systems)))  # fmt: skip
    paths = []
    for name, outs in systems.items():
        (tmp_path / f"{name}.txt").write_text("".join(f"{x}\n" for x in outs), "utf-8")
        paths.append(str(tmp_path / f"{name}.txt"))
    (tmp_path / "refs.tsv").write_text("".join("\t".join(r) + "\n" for r in refs), "utf-8")
    inputs = [*paths, "-r", str(tmp_path / "refs.tsv"), "--tsv"]
    stats = str(tmp_path / "run.parquet")
    assert main(["stats", *inputs, "-m", "aev:n=4,rouge-l", "-o", stats, "-q"]) == 0
    judge = ["-j", str(judged), "--score-columns", "quality", "--coefficients", "r2,kendall-b"]
    for fmt in ("text", "json"):
        code, from_text, _ = run(["plane", *inputs, *judge, "-f", fmt, "-q"], capsys)
        assert code == 0
        code, from_stats, err = run(["plane", stats, *judge, "-f", fmt, "-q"], capsys)
        assert (code, err) == (0, "") and from_stats == from_text
    code, _, err = run(["plane", stats, *judge, "--max-order", "5"], capsys)
    assert code == 2 and "no n-gram statistics counted under tok:13a|case:mixed|stop:no|stem:no at order 5" in err
