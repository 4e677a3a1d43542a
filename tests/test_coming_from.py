"""docs/guides/mt.md "Checked against the tools" (sacreBLEU, rouge-score, evaluate): every equivalence the table
states, run against the real tool on the same files (sacreBLEU's command line, rouge-score's scorer) and compared as
printed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ngrameval.scale.batches import load

WORDS = ["the", "cat", "sat", "on", "mat", "Dog", "ran", ",", ".", "running", "cats", "a", "is", "Über", "don't", "5.2"]


def lines(rng: np.random.Generator, n: int) -> list[str]:
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(1, 15))).tolist()) for _ in range(n)]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    rng = np.random.default_rng(20261123)
    root = tmp_path_factory.mktemp("coming-from")
    base = lines(rng, 120)
    out = {}
    for name in ("hyp", "ref", "ref2"):  # edited copies of one text: scores far from 0
        edited = [" ".join(w for w in x.split() if rng.random() > 0.2) or x for x in base]
        out[name] = root / f"{name}.txt"
        out[name].write_text("".join(f"{x}\n" for x in edited), encoding="utf-8")
    return out


def run(argv: list[str], stdin: bytes | None = None) -> str:
    done = subprocess.run(argv, input=stdin, capture_output=True, check=True)
    return done.stdout.decode()


SACREBLEU = str(Path(sys.executable).parent / "sacrebleu")
NGRAMEVAL = [sys.executable, "-m", "ngrameval"]


@pytest.mark.parametrize(
    ("theirs", "ours"),
    [
        ([], ["-w", "1"]),  # sacreBLEU 2 prints 1 decimal by default, ngrameval 2
        (["-tok", "intl", "-lc", "-w", "3"], ["-tok", "intl", "-lc", "-w", "3"]),
        (["-m", "chrf", "-w", "4"], ["-m", "chrf", "-w", "4"]),
        (["-m", "chrf", "--chrf-word-order", "2", "-w", "4"], ["-m", "chrf++", "-w", "4"]),
        (["-m", "ter", "-w", "4"], ["-m", "ter", "-w", "4"]),
    ],
)
@pytest.mark.slow
def test_sacrebleu_command_lines(files: dict[str, Path], theirs: list[str], ours: list[str]) -> None:
    refs = [str(files["ref"]), str(files["ref2"])]
    want = run([SACREBLEU, *refs, "-i", str(files["hyp"]), "-b", *theirs])
    assert run([*NGRAMEVAL, "score", str(files["hyp"]), "-r", *refs, "-b", *ours]) == want
    # the system on standard input, as `cat hyp | sacrebleu ref`
    piped = files["hyp"].read_bytes()
    assert run([*NGRAMEVAL, "score", "-r", *refs, "-b", *ours], piped) == run([SACREBLEU, *refs, "-b", *theirs], piped)


def test_sacrebleu_python_and_evaluate_style(files: dict[str, Path]) -> None:
    from sacrebleu.metrics import BLEU, CHRF

    import ngrameval as ne

    hyps = files["hyp"].read_text(encoding="utf-8").splitlines()
    refs = [files[r].read_text(encoding="utf-8").splitlines() for r in ("ref", "ref2")]
    expected = BLEU().corpus_score(hyps, refs)
    got = ne.bleu(hyps, list(zip(*refs)))  # sacreBLEU's stream-major [refs] -> refs[i] per segment
    assert got.score100 == expected.score
    metric = load("bleu,chrf")
    result = metric.compute(predictions=hyps, references=[list(r) for r in zip(*refs)])
    assert result["BLEU"]["score"] == expected.score
    assert result["chrF2"]["score"] == CHRF().corpus_score(hyps, refs).score


@pytest.mark.slow
def test_rouge_score_scorer(files: dict[str, Path]) -> None:
    from rouge_score import rouge_scorer

    hyps = files["hyp"].read_text(encoding="utf-8").splitlines()
    refs = files["ref"].read_text(encoding="utf-8").splitlines()
    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL", "rougeLsum"], use_stemmer=True)
    argv = [*NGRAMEVAL, "score", str(files["hyp"]), "-r", str(files["ref"]), "-m", "rouge-1,rouge-2,rouge-l,rouge-lsum",
            "--rouge-profile", "rouge-score", "--stem", "--sentence", "-f", "json"]  # fmt: skip
    rows = json.loads(run(argv))  # in the order of -m; rougeL is ROUGE-L-sent (whole texts), rougeLsum ROUGE-Lsum
    assert [r["metric"] for r in rows] == ["ROUGE-1", "ROUGE-2", "ROUGE-L-sent", "ROUGE-Lsum"]
    pairs = [scorer.score(r, h) for h, r in zip(hyps, refs)]
    for row, key in zip(rows, ("rouge1", "rouge2", "rougeL", "rougeLsum")):
        assert row["sentences"] == pytest.approx([100 * p[key].fmeasure for p in pairs], abs=1e-9), key
