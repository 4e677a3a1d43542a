"""ROUGE-1.5.5 ``-f B``: the model each measure keeps (golden values in tests/data/rouge155/best_model_per_measure)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from ngrameval import rouge
from ngrameval.metrics.rouge import Rouge, best_model_key, item_scores
from ngrameval.ngrams.texts import flatten
from ngrameval.text.pipeline import Preprocess

GOLD = Path(__file__).parent / "data" / "rouge155" / "best_model_per_measure"
MSVD = Path(__file__).resolve().parents[2] / "shared" / "data" / "msvd" / "msvd2sent.json"
METRICS = [
    *(Rouge("n", n=n, round5=True, multi="B") for n in range(1, 5)),
    Rouge("l", round5=True, multi="B"),
    Rouge("w", round5=True, multi="B"),
    Rouge("s", round5=True, multi="B"),
    Rouge("su", round5=True, multi="B"),
]


def test_every_item_equals_rouge155_best_model() -> None:
    items = [json.loads(line) for line in (GOLD / "items.jsonl").read_text("utf-8").splitlines()]
    with open(GOLD / "scores.tsv", encoding="utf-8") as f:
        gold = {(r["metric"], int(r["item"])): (r["R"], r["P"], r["F"]) for r in csv.DictReader(f, delimiter="\t")}
    (scores,) = item_scores(
        METRICS, [[it["hyp"] for it in items]], *flatten([it["refs"] for it in items]), Preprocess("rouge155")
    )
    compared = 0
    for metric, s in zip(METRICS, scores):
        for i, item in enumerate(items):
            ours = tuple(f"{x:.5f}" for x in (s.recall[i], s.precision[i], s.f[i]))
            assert ours == gold[metric.display_name(), item["item"]], (metric.display_name(), item["item"])
            compared += 1
    assert compared == len(gold) == 8 * 85


@pytest.mark.parametrize(
    ("refs", "precision"),
    [
        (["two teenaged girls are dancing", "Two girls are dancing.", "girls are dancing"], 1.0),
        (["two teenaged girls are dancing", "girls are dancing", "Two girls are dancing."], 0.75),
    ],
)
def test_msvd_rouge_w_ties_keep_the_first_model(refs: list[str], precision: float) -> None:
    # both full matches score (hits / sum len^w)^(1/w) = 1.0; undoing the second power of the model total in
    # floating point used to make the 3-token model win by 2e-16
    got = rouge(["Two girls are dancing."], [refs], ["rouge-w"], multi="B")["rouge-w"].items
    assert got.precision[0] == precision
    assert got.recall[0] == (0.75786 if precision == 1.0 else 0.80274)


def test_keys_round_n_but_not_l_or_w() -> None:
    hits, total = np.array([1.0, 2.0]), np.array([451.0, 900.0])  # recalls 0.0022173 and 0.0022222
    assert np.array_equal(best_model_key(Rouge("n", multi="B"), hits, total), [0.00222, 0.00222])
    assert np.array_equal(best_model_key(Rouge("s", multi="B"), hits, total), [0.00222, 0.00222])
    assert best_model_key(Rouge("l", multi="B"), hits, total).tolist() == [1 / 451, 2 / 900]
    w = best_model_key(Rouge("w", multi="B"), np.array([3.0**1.2, 4.0**1.2]), np.array([3.0**1.2, 4.0**1.2]))
    assert w.tolist() == [1.0, 1.0]


def test_real_msvd_clip() -> None:
    if not MSVD.is_file():
        pytest.skip("shared/data/msvd is not beside the repository")
    descriptions = json.loads(MSVD.read_text("utf-8"))["vMoOpQQy6sI_22_55"]
    assert descriptions[0] == "two girls are dancing"
    got = rouge([descriptions[0]], [descriptions[1:]], ["rouge-w"], multi="B")["rouge-w"].items
    # ROUGE-1.5.5 -f B: ROUGE-W-1.2 R 0.75786 P 1.00000 F 0.86225 (the identical description, listed first)
    assert (got.recall[0], got.precision[0], got.f[0]) == (0.75786, 1.0, 0.86225)
