"""Soft pairwise accuracy: equal to mt-metrics-eval's own numbers (tests/golden/spa, made by running its code), and
the corpus-statistics side equal to re-scoring the permuted outputs."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import numpy as np
import pytest

import ngrameval as ne
from ngrameval import measure
from ngrameval.errors import InputError
from ngrameval.meta.spa import (
    corpus_p_values,
    filled_rows,
    pairwise_p_values,
    pooled_spa,
    sign_matrix,
    soft_pairwise_accuracy,
    spa_difference,
)

GOLDEN = Path(__file__).parent / "golden" / "spa"


def _matrix(name: str, column: str) -> np.ndarray:
    with gzip.open(GOLDEN / name, "rt", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    systems = list(dict.fromkeys(r["system"] for r in rows))
    return np.array([[float(r[column]) for r in rows if r["system"] == s] for s in systems])


FILES = {"summeval": "summeval-seg.tsv.gz", "wmt19-kk-en": "wmt19-kk-en-seg.tsv.gz"}
GOLD = json.loads((GOLDEN / "golden.json").read_text())


@pytest.mark.parametrize("entry", GOLD["sets"], ids=lambda e: f"{e['set']}-{e['criterion']}")
def test_spa_and_p_values_equal_mt_metrics_eval(entry: dict) -> None:
    human = _matrix(FILES[entry["set"]], entry["criterion"])
    for name, expected in entry["p_values"].items():
        got = np.nan_to_num(pairwise_p_values(_matrix(FILES[entry["set"]], name)), nan=-1)
        assert np.array_equal(got, np.array(expected)), name
    for metric, value in entry["spa"].items():
        got = soft_pairwise_accuracy(human, _matrix(FILES[entry["set"]], metric))
        assert got.value == value, metric  # bit for bit
        assert got.side == "segments"
        assert got.pairs == len(human) * (len(human) - 1) // 2


@pytest.mark.slow  # 5-9 s a set: thousands of resamples, as mt-metrics-eval draws them
@pytest.mark.parametrize("entry", GOLD["sets"], ids=lambda e: f"{e['set']}-{e['criterion']}")
def test_spa_permutation_test_equals_mt_metrics_eval(entry: dict) -> None:
    human = _matrix(FILES[entry["set"]], entry["criterion"])
    for d in entry["differences"]:
        better, worse = (_matrix(FILES[entry["set"]], d[k]) for k in ("better", "worse"))
        got = spa_difference(human, better, worse, seed=GOLD["seed"], n_resamples=d["k"])
        assert (got.p, got.delta) == (d["p"], d["delta"]), (d["better"], d["worse"])


def test_sign_matrix_is_plus_minus_one_shared() -> None:
    s = sign_matrix(50, 200)
    assert s.dtype == np.float32 and set(np.unique(s)) == {-1.0, 1.0}
    assert np.array_equal(s, sign_matrix(50, 200))
    assert not np.array_equal(s, sign_matrix(50, 200, seed=5))


def test_identical_scores_have_spa_one_and_p_values_of_reversed_systems_mirror() -> None:
    rng = np.random.default_rng(1)
    h = rng.normal(size=(5, 40))
    assert soft_pairwise_accuracy(h, h).value == 1.0
    p = pairwise_p_values(h)
    i, j = np.triu_indices(5, 1)
    assert np.all((p[i, j] >= 0) & (p[i, j] <= 1))
    assert np.all(np.isnan(p[j, i]))


def test_corpus_side_equals_rescoring_the_swapped_outputs() -> None:
    """Each permutation's corpus BLEU recomputed by scoring the swapped system outputs from scratch."""
    rng = np.random.default_rng(7)
    words = ["the", "a", "cat", "dog", "sat", "on", "mat", "ran", "fast", "slow", "house", "big", "small"]
    refs = [" ".join(rng.choice(words, size=8)) for _ in range(12)]
    systems = {f"s{k}": [" ".join(rng.choice(words, size=rng.integers(5, 10))) for _ in refs] for k in range(3)}
    (rows,) = measure(systems, [[r] for r in refs], "bleu")
    signs = sign_matrix(len(refs), 40, seed=3)
    got = corpus_p_values(rows, signs)
    names = list(systems)
    corpus = rows.corpus()
    for i, j in zip(*np.triu_indices(3, 1), strict=True):
        count = 0
        for row in signs:
            a = [systems[names[i]][k] if row[k] > 0 else systems[names[j]][k] for k in range(len(refs))]
            b = [systems[names[j]][k] if row[k] > 0 else systems[names[i]][k] for k in range(len(refs))]
            (r2,) = measure({"a": a, "b": b}, [[r] for r in refs], "bleu")
            x = r2.corpus()
            count += x[0] - x[1] >= corpus[i] - corpus[j] - 1e-12
        assert got[i, j] == count / len(signs)
    spa = soft_pairwise_accuracy(np.stack([np.asarray(rows.scorer(v)) for v in rows.values]), rows, 40, 3)
    assert spa.side == "statistics" and spa.metric == rows.metric


def test_pooled_spa_is_the_mean_over_all_pairs() -> None:
    rng = np.random.default_rng(2)
    h1, h2 = rng.normal(size=(3, 30)), rng.normal(size=(5, 30))
    a = soft_pairwise_accuracy(h1, h1 + rng.normal(size=h1.shape))
    b = soft_pairwise_accuracy(h2, h2 + rng.normal(size=h2.shape))
    assert pooled_spa([a, b]) == pytest.approx(1 - ((1 - a.value) * 3 + (1 - b.value) * 10) / 13)


def test_pooled_permutation_test_of_one_set_is_the_set_test() -> None:
    rng = np.random.default_rng(4)
    h = rng.normal(size=(4, 30))
    m1, m2 = h + rng.normal(size=h.shape), h + 3 * rng.normal(size=h.shape)
    one = spa_difference(h, m1, m2, seed=9, n_resamples=50, n_permutations=100)
    listed = spa_difference([h], [m1], [m2], seed=9, n_resamples=50, n_permutations=100)
    assert (one.p, one.delta) == (listed.p, listed.delta)


def test_bad_input_names_the_problem() -> None:
    with pytest.raises(InputError, match="same number of judged segments"):
        filled_rows(np.array([[1.0, np.nan], [1.0, 2.0]]))
    with pytest.raises(InputError, match="systems, segments"):
        pairwise_p_values(np.array([1.0, 2.0]))
    with pytest.raises(InputError, match="shape"):
        soft_pairwise_accuracy(np.ones((3, 4)), np.ones((3, 5)))


def test_lazy_top_level_name() -> None:
    assert ne.soft_pairwise_accuracy is soft_pairwise_accuracy


def _summeval_cli(tmp_path: Path) -> tuple[list[str], dict[str, list[str]], list[list[str]], list[str], str]:
    """The docs' example files (bundled SummEval sample: 16 systems, experts' scores) and correlate's arguments."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "make_files", Path(__file__).parents[1] / "docs/examples/make_files.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.make_files(tmp_path)
    from ngrameval.demo import load_sample

    systems, refs = load_sample()
    docs = (tmp_path / "ids.txt").read_text().split()
    files = [str(tmp_path / "sys" / name) for name in systems]
    args = [*files, "-r", str(tmp_path / "refs.tsv"), "--tsv", "-j", str(tmp_path / "summeval.jsonl"),
            "--segment-column", "doc_id", "--segment-ids", str(tmp_path / "ids.txt"),
            "--score-columns", "relevance"]  # fmt: skip
    return args, systems, refs, docs, str(tmp_path / "summeval.jsonl")


@pytest.mark.slow  # permutation tests through the command line: 1.5 s
def test_correlate_spa_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ngrameval.cli import main
    from ngrameval.io.judgments import read_judgments
    from ngrameval.meta.correlate import aggregate
    from ngrameval.meta.spa import spa_differences, spa_of_rows

    args, systems, refs, docs, path = _summeval_cli(tmp_path)
    code = main(["correlate", *args, "-m", "bleu,chrf", "--spa", "--compare-metrics", "--confidence-n", "50",
                 "--seed", "3", "-f", "json"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    got = json.loads(out)
    rows = measure(systems, refs, "bleu,chrf")
    judged = read_judgments(path, segment="doc_id", scores=["relevance"])
    human = aggregate(judged, "relevance", list(systems), docs)
    api = spa_of_rows(rows, human, ("segments", "statistics"))
    assert [(s["metric"], s["side"], s["value"]) for s in got["spa"]] == [(v.metric, v.side, v.value) for v in api]
    diffs = spa_differences(rows, human, 3, 50)
    assert [(d["better"], d["worse"], d["p"]) for d in got["spa_differences"]] == [
        (d.better, d.worse, d.p) for d in diffs
    ]
    assert {c["coefficient"] for c in got["clusters"]} == {"spa"}
    assert main(["correlate", *args, "-m", "bleu", "--spa"]) == 0
    text = capsys.readouterr().out
    assert "summed segment scores (mt-metrics-eval's)" in text
    assert "corpus metric from permuted sufficient statistics" in text


def test_correlate_spa_needs_segment_judgments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ngrameval.cli import main

    args, systems, *_ = _summeval_cli(tmp_path)
    (tmp_path / "sys.tsv").write_text("system\trelevance\n" + "".join(f"{s}\t{k}\n" for k, s in enumerate(systems)))
    at = args.index("-j")
    code = main(["correlate", *args[:at], "-j", str(tmp_path / "sys.tsv"), "--score-columns", "relevance", "-m",
                 "bleu", "--spa"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert "segment-level judgments" in err and "Traceback" not in err


def test_correlate_spa_over_sets_and_pooled(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """SummEval's golden segment scores split into two sets of 50 documents: per-set SPA, pooled SPA and the
    pooled permutation test equal the API's."""
    from ngrameval.cli import main

    with gzip.open(GOLDEN / "summeval-seg.tsv.gz", "rt", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    docs = sorted({r["doc"] for r in rows})
    half = {d: "first" if k < 50 else "second" for k, d in enumerate(docs)}
    judged, scores = tmp_path / "judged.tsv", tmp_path / "scores.tsv"
    judged.write_text("set\tsystem\tdoc\trelevance\n" + "".join(
        f"{half[r['doc']]}\t{r['system']}\t{r['doc']}\t{r['relevance']}\n" for r in rows))  # fmt: skip
    scores.write_text("set\tsystem\tdoc\tbleu\tchrf\n" + "".join(
        f"{half[r['doc']]}\t{r['system']}\t{r['doc']}\t{r['bleu']}\t{r['chrf']}\n" for r in rows))  # fmt: skip
    args = ["correlate", "-j", str(judged), "--score-columns", "relevance", "--segment-column", "doc", "--set-column",
            "set", "--scores", str(scores), "--spa", "--spa-side", "segments", "--compare-metrics", "--confidence-n",
            "30", "--seed", "2", "-f", "json"]  # fmt: skip
    assert main(args) == 0, capsys.readouterr().err
    out = json.loads(capsys.readouterr().out)
    systems = list(dict.fromkeys(r["system"] for r in rows))

    def mat(col: str, part: str) -> np.ndarray:
        return np.array([[float(r[col]) for r in rows if r["system"] == s and half[r["doc"]] == part] for s in systems])

    per = {(v["dataset"], v["metric"]): v["value"] for v in out["spa"]}
    api = {(p, m): soft_pairwise_accuracy(mat("relevance", p), mat(m, p)) for p in ("first", "second")
           for m in ("bleu", "chrf")}  # fmt: skip
    assert per == {k: v.value for k, v in api.items()}
    pooled = {v["metric"]: v["value"] for v in out["spa_pooled"]}
    assert pooled == {m: pooled_spa([api["first", m], api["second", m]]) for m in ("bleu", "chrf")}
    (test,) = out["spa_pooled_differences"]
    better, worse = sorted(pooled, key=lambda m: -pooled[m])
    hs = [mat("relevance", p) for p in ("first", "second")]
    expected = spa_difference(hs, [mat(better, p) for p in ("first", "second")],
                              [mat(worse, p) for p in ("first", "second")], seed=2, n_resamples=30)  # fmt: skip
    assert (test["better"], test["p"], test["delta"]) == (better, expected.p, expected.delta)
