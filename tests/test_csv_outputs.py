"""Every CSV output of every subcommand is written by the csv module: a system or criterion name holding a comma, a
double quote and a line break comes back unchanged through Python's csv reader, in rows as long as the header.
Also: the text footer names the scales of the metrics shown, and no others."""

from __future__ import annotations

import csv
import io
import json
import random

import pytest

from ngrameval.cli import main

# a comma, a quote, a line break (and a tab, which the sentence-level CSV once turned into a comma)
WEIRD = 'sys,"one"\nline\ttab'
NAMES = [f"{WEIRD} {k}" for k in range(4)]
CRITERION = 'fluency, "overall"\nscore'
WORDS = ["the", "cat", "sat", "on", "a", "mat", "dog", "barks", "at", "night", "birds", "sing"]


def _rows(text: str) -> list[list[str]]:
    """``text`` read by Python's csv reader; every row as long as the header."""
    rows = list(csv.reader(io.StringIO(text)))
    assert rows and all(len(r) == len(rows[0]) for r in rows), rows
    return rows


def _cells(text: str) -> set[str]:
    return {cell for row in _rows(text) for cell in row}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Four systems of 12 segments, two reference streams, a source, and system-level judgments (JSONL, long layout:
    the criterion column holds the odd criterion name, the system column the odd system names)."""
    tmp = tmp_path_factory.mktemp("csv")
    rng = random.Random(3)

    def lines(name: str) -> str:
        path = tmp / name
        path.write_text("".join(" ".join(rng.choices(WORDS, k=rng.randint(3, 9))) + "\n" for _ in range(12)))
        return str(path)

    out = {f"sys{k}": lines(f"sys{k}.txt") for k in range(4)}
    out |= {"ref1": lines("ref1.txt"), "ref2": lines("ref2.txt"), "src": lines("src.txt")}
    judg = tmp / "judgments.jsonl"
    records = [{"system": n, "criterion": c, "score": s} for c in (CRITERION, "other")
               for n, s in zip(NAMES, (0.9, 0.2, 0.5, 0.7))]  # fmt: skip
    judg.write_text("".join(json.dumps(r) + "\n" for r in records))
    out["judg"] = str(judg)
    agree = tmp / "agree.jsonl"
    ratings = [(f"item{i}", f'judge {j}, "{j}"\n', (i * (j + 2)) % 5) for i in range(6) for j in range(3)]
    agree.write_text("".join(json.dumps({"system": s, "judge": j, "criterion": CRITERION, "score": v}) + "\n"
                             for s, j, v in ratings))  # fmt: skip
    out["agree"] = str(agree)
    return out


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    status = main(argv)
    out, err = capsys.readouterr()
    assert status == 0, err
    return out


def _systems(f: dict[str, str]) -> list[str]:
    return [f[f"sys{k}"] for k in range(4)]


@pytest.mark.parametrize("sentence", [False, True], ids=["corpus", "sentence"])
def test_score_csv_round_trips_odd_system_names(
    files: dict[str, str], capsys: pytest.CaptureFixture[str], sentence: bool
) -> None:
    argv = ["score", *_systems(files), "-r", files["ref1"], files["ref2"], "-m", "bleu,ter", "--names", *NAMES]
    rows = _rows(_run([*argv, "-f", "csv", *(["--sentence"] if sentence else [])], capsys))
    assert {r[0] for r in rows[1:]} == set(NAMES)
    assert len(rows) == 1 + len(NAMES) * 2 * (12 if sentence else 1)


def test_compare_csv_round_trips_odd_system_names(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["compare", *_systems(files), "-r", files["ref1"], "--names", *NAMES, "--paired-ar-n", "50",
            "--confidence-n", "20", "-f", "csv"]  # fmt: skip
    rows = _rows(_run(argv, capsys))
    head = rows[0]
    systems = {r[head.index("system")] for r in rows[1:]} | {r[head.index("other")] for r in rows[1:]}
    assert set(NAMES) <= systems


@pytest.mark.parametrize("sentence", [False, True], ids=["corpus", "sentence"])
def test_paraphrase_csv_round_trips_odd_system_names(
    files: dict[str, str], capsys: pytest.CaptureFixture[str], sentence: bool
) -> None:
    argv = ["paraphrase", *_systems(files), "--source", files["src"], "-r", files["ref1"], "--names", *NAMES, "-f",
            "csv", *(["--sentence"] if sentence else [])]  # fmt: skip
    rows = _rows(_run(argv, capsys))
    assert {r[0] for r in rows[1:]} == set(NAMES)


def test_correlate_csv_round_trips_odd_criterion_names(
    files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["correlate", *_systems(files), "-r", files["ref1"], "--names", *NAMES, "-j", files["judg"],
            "--criterion-column", "criterion", "-m", "bleu,nist", "--coefficients", "pearson",
            "--confidence-n", "20", "-f", "csv"]  # fmt: skip
    rows = _rows(_run(argv, capsys))
    assert {r[rows[0].index("criterion")] for r in rows[1:]} == {CRITERION, "other"}


def test_plane_csv_round_trips_odd_criterion_names(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["plane", *_systems(files), "-r", files["ref1"], "--names", *NAMES, "-j", files["judg"],
            "--criterion-column", "criterion", "--alpha-step", "0.5", "--max-order", "2", "-f", "csv"]  # fmt: skip
    rows = _rows(_run(argv, capsys))
    assert {r[0] for r in rows[1:]} == {CRITERION, "other"}
    assert len(rows) == 1 + 2 * 2 * 3  # two planes of 2 orders x 3 alphas under one header


def test_refcurve_csv_round_trips_odd_criterion_names(
    files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["refcurve", *_systems(files), "-r", files["ref1"], files["ref2"], "--names", *NAMES, "-j", files["judg"],
            "--criterion-column", "criterion", "-m", "bleu", "--subsets", "2", "-f", "csv"]  # fmt: skip
    rows = _rows(_run(argv, capsys))
    assert {r[1] for r in rows[1:]} == {CRITERION, "other"}


def test_agreement_csv_round_trips_odd_criterion_names(
    files: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["agreement", "-j", files["agree"], "--judge-column", "judge", "--criterion-column", "criterion",
            "--krippendorff", "none", "-f", "csv"]  # fmt: skip
    assert CRITERION in _cells(_run(argv, capsys))


@pytest.mark.parametrize(
    ("metrics", "footer"),
    [
        ("bleu", "(0-100: BLEU)"),
        ("nist", "(own scale: NIST)"),
        ("bleu,ter,nist", "(0-100: BLEU, TER; own scale: NIST)"),
    ],
)
def test_text_footer_names_only_the_scales_shown(
    files: dict[str, str], capsys: pytest.CaptureFixture[str], metrics: str, footer: str
) -> None:
    out = _run(["score", files["sys0"], "-r", files["ref1"], "-m", metrics], capsys)
    assert out.rstrip("\n").splitlines()[-1] == footer
