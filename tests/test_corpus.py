"""MSVD corpus tools: strict reading, seeded splits, pairs, test sets, export, and the human baseline."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
import sacrebleu
from tests.test_paraphrase import plain_pinc

from ngrameval.cli import main
from ngrameval.corpus import (
    cluster,
    cluster_stats,
    export,
    human_baseline,
    make_test_set,
    read_corpus,
    select,
    split,
    training_pairs,
)
from ngrameval.errors import InputError

HEADER = ",VideoID,Start,End,WorkerID,Source,AnnotationTime,Language,Description\n"
ROWS = [
    ("v1", 1, 5, "clean", "English", "A man is slicing a tomato."),
    ("v1", 1, 5, "clean", "English", "Someone slices a tomato."),
    ("v1", 1, 5, "unverified", "English", '"A man cuts, then slices, a tomato."'),
    ("v1", 1, 5, "clean", "German", "Ein Mann schneidet eine Tomate."),
    ("v2", 0, 9, "clean", "English", "A dog catches a frisbee."),
    ("v2", 0, 9, "clean", "English", "The dog is catching a frisbee."),
    ("v2", 0, 9, "clean", "English", "A dog jumps."),
    ("v3", 3, 4, "clean", "English", "A woman sings."),
]


def write_csv(path: Path, rows: list[tuple[str, int, int, str, str, str]] = ROWS) -> Path:
    body = "".join(f"{i},{v},{s},{e},{100 + i},{t},20,{lang},{d}\n" for i, (v, s, e, t, lang, d) in enumerate(rows))
    path.write_text(HEADER + body, encoding="utf-8")
    return path


def test_read_filter_cluster(tmp_path: Path) -> None:
    descs = read_corpus(write_csv(tmp_path / "c.csv"))
    assert len(descs) == 8 and descs[2].text == "A man cuts, then slices, a tomato."
    assert descs[0].clip == "v1_1_5" and descs[0].where.endswith("c.csv:2")
    clean_en = cluster(select(descs, "english", "clean"))
    assert {k: len(v) for k, v in clean_en.items()} == {"v1_1_5": 2, "v2_0_9": 3, "v3_3_4": 1}
    st = cluster_stats(cluster(descs))
    assert (st.clusters, st.descriptions, st.per_cluster_max, st.singletons) == (3, 8, 4, 1)
    assert dict(st.tiers) == {"clean": 7, "unverified": 1}


def test_malformed_rows_name_the_line(tmp_path: Path) -> None:
    p = tmp_path / "bad.csv"
    p.write_text(HEADER + "0,v1,1,5,7,clean,20,English,ok\n1,v1,x,5,7,clean,20,English,bad start\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.csv:3: Start and End"):
        read_corpus(p)
    p.write_text(HEADER + "0,v1,1,5,7,clean,20,English\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.csv:2: expected 9 fields, got 8"):
        read_corpus(p)
    p.write_text("VideoID,Description\n", encoding="utf-8")
    with pytest.raises(InputError, match="lacks column"):
        read_corpus(p)
    j = tmp_path / "bad.json"
    j.write_text(json.dumps({"clip": "not a list"}), encoding="utf-8")
    with pytest.raises(InputError, match="list of strings"):
        read_corpus(j)


def test_split_pairs_and_test_set(tmp_path: Path) -> None:
    clusters = {f"c{i}": read_corpus(write_csv(tmp_path / "c.csv"))[:3] for i in range(20)}
    train, test = split(clusters, 0.1, seed=3)
    assert len(test) == 2 and sorted(train + test) == sorted(clusters) and not set(train) & set(test)
    assert split(clusters, 0.1, seed=3) == (train, test) and split(clusters, 0.1, seed=4) != (train, test)
    assert len(training_pairs(clusters, train, 1)) == 18 * 3
    assert len(training_pairs(clusters, train, None)) == 18 * 3 * 2
    assert training_pairs(clusters, train, 1, seed=1) == training_pairs(clusters, train, 1, seed=1)
    sources, refs, owner = make_test_set(clusters, test, include_source=True)
    assert len(sources) == 6 and all(len(r) == 3 and r[-1] == s for s, r in zip(sources, refs))
    assert owner == [test[0]] * 3 + [test[1]] * 3
    with pytest.raises(InputError, match="single description"):
        make_test_set({"solo": clusters["c0"][:1]}, ["solo"])


def test_export_writes_aligned_files(tmp_path: Path) -> None:
    clusters = cluster(select(read_corpus(write_csv(tmp_path / "c.csv")), "English"))
    clusters.pop("v3_3_4")
    out = tmp_path / "out"
    assert export(clusters, out, test_fraction=0.5, seed=0, pairs=(1, None))[1] == []
    src = (out / "test.src").read_text(encoding="utf-8").splitlines()
    refs = (out / "test.refs.tsv").read_text(encoding="utf-8").splitlines()
    assert len(src) == len(refs) == len((out / "test.clips").read_text(encoding="utf-8").splitlines())
    assert all(s not in r.split("\t") for s, r in zip(src, refs))
    tgt = (out / "train.all.tgt").read_text(encoding="utf-8").splitlines()
    assert len(tgt) == len((out / "train.all.src").read_text(encoding="utf-8").splitlines())


def test_human_baseline_equals_direct_computation(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    vocab = ["a", "man", "dog", "is", "running", "cat", "the", "sits", "on", "mat", "."]
    clusters = {}
    for c in range(12):
        base = rng.choice(vocab, 6)
        texts = [" ".join(np.where(rng.random(6) < 0.7, base, rng.choice(vocab, 6))) for _ in range(rng.integers(2, 7))]
        clusters[f"c{c}"] = [d for d in read_corpus(_json(tmp_path, {f"c{c}": texts}))]
    clusters["solo"] = read_corpus(_json(tmp_path, {"solo": ["alone here"]}))
    res = human_baseline(clusters)
    hyps, refs, pincs = [], [], []
    for descs in clusters.values():
        texts = [d.text for d in descs]
        if len(texts) < 2:
            continue
        for i, t in enumerate(texts):
            others = texts[:i] + texts[i + 1 :]
            hyps.append(t)
            refs.append(others)
            pincs.append(np.mean([plain_pinc(o, t, 4, True, "present") for o in others]))
    k = max(map(len, refs))
    streams = [[r[i] if i < len(r) else None for r in refs] for i in range(k)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = sacrebleu.BLEU().corpus_score(hyps, streams).score
    assert res.bleu * 100 == pytest.approx(want, abs=1e-9)
    assert res.pinc == pytest.approx(np.mean(pincs), abs=1e-12)
    assert (res.descriptions, res.clusters, res.singletons_left_out) == (len(hyps), 12, 1)


def _json(tmp_path: Path, data: dict[str, list[str]]) -> Path:
    p = tmp_path / f"{next(iter(data))}.json"
    p.write_text(json.dumps(data), encoding="utf-8")
    return p


def test_corpus_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv_path = str(write_csv(tmp_path / "c.csv"))
    assert main(["corpus", "stats", csv_path, "--language", "English"]) == 0
    assert "clusters            3" in capsys.readouterr().out
    assert main(["corpus", "baseline", csv_path, "--language", "English", "--tier", "clean", "-f", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["descriptions"] == 5 and got["singletons_left_out"] == 1
    assert main(["corpus", "export", csv_path, "--language", "English", "--out", str(tmp_path / "o")]) == 0
    assert "left out 1 clip(s) with a single description: v3_3_4" in capsys.readouterr().out
    assert main(["corpus", "stats", str(tmp_path / "missing.csv")]) == 2
    assert "no such file" in capsys.readouterr().err
