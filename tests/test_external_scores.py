"""Any metric's scores (--scores / scores=) correlated beside ngrameval's, and hostile score files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ngrameval.cli import main
from ngrameval.errors import InputError
from ngrameval.meta.correlate import HumanScores, correlate

HYPS = {
    "s1": ["the cat sat on the mat", "a dog barks loudly", "it rains today"],
    "s2": ["the cat is on the mat", "the dog barks", "it is raining today"],
    "s3": ["cat mat", "dog", "rain"],
    "s4": ["the cat sat on a mat", "a dog barked loudly", "today it rains"],
}
REF = ["the cat sat on the mat", "a dog barks loudly", "it is raining today"]
DA = {"s1": 0.9, "s2": 0.5, "s3": -0.8, "s4": 0.6}
COMET = {"s1": 0.85, "s2": 0.7, "s3": 0.1, "s4": 0.72}


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    out = {}
    for name, lines in HYPS.items():
        (tmp_path / name).write_text("\n".join(lines) + "\n")
        out[name] = str(tmp_path / name)
    (tmp_path / "ref").write_text("\n".join(REF) + "\n")
    out["ref"] = str(tmp_path / "ref")
    (tmp_path / "da.tsv").write_text("system\tscore\n" + "".join(f"{s}\t{v}\n" for s, v in DA.items()))
    out["da"] = str(tmp_path / "da.tsv")
    (tmp_path / "comet.csv").write_text("system,COMET\n" + "".join(f"{s},{v}\n" for s, v in COMET.items()))
    out["comet"] = str(tmp_path / "comet.csv")
    out["dir"] = str(tmp_path)
    return out


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    got = capsys.readouterr()
    return code, got.out, got.err


def _systems(f: dict[str, str]) -> list[str]:
    return [f[s] for s in HYPS] + ["--names", *HYPS]


def test_external_beside_ngrameval_metrics(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "correlate", *_systems(files), "-r", files["ref"], "-j", files["da"], "-m", "bleu",
                        "--scores", files["comet"], "--coefficients", "pearson,accuracy", "--confidence-n", "50",
                        "-f", "json")  # fmt: skip
    assert code == 0
    got = {(c["metric"], c["coefficient"]): c for c in json.loads(out)}
    comet, da = np.array(list(COMET.values())), np.array(list(DA.values()))
    assert got["COMET", "pearson"]["value"] == pytest.approx(np.corrcoef(comet, da)[0, 1], abs=1e-12)
    assert got["COMET", "accuracy"]["value"] == 1.0  # COMET orders the four systems as DA does
    assert got["COMET", "pearson"]["signature"] == f"external:{files['comet']}"
    assert got["BLEU", "pearson"]["signature"].startswith("BLEU") or "nrefs" in got["BLEU", "pearson"]["signature"]


def test_external_only_and_compare(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    other = Path(files["dir"]) / "other.jsonl"
    other.write_text("".join(json.dumps({"system": s, "metric": "BLEURT", "score": -v}) + "\n" for s, v in DA.items()))
    code, out, _ = _run(capsys, "correlate", "-j", files["da"], "--scores", files["comet"], str(other),
                        "--scores-metric-column", "metric", "--coefficients", "accuracy")  # fmt: skip
    assert code == 2  # comet.csv has no metric column: the long form applies to every file
    code, out, err = _run(capsys, "correlate", "-j", files["da"], "--scores", str(other), "--scores-metric-column",
                          "metric", "--coefficients", "accuracy", "--confidence-n", "20")  # fmt: skip
    assert code == 0, err
    assert "BLEURT" in out and "0.000" in out  # reversed order: no pair agrees
    code, out, err = _run(capsys, "correlate", "-j", files["da"], "--scores", files["comet"], "--coefficients",
                          "pearson", "--confidence-n", "20", "--compare-metrics", *_systems(files), "-r",
                          files["ref"], "-m", "bleu,chrf")  # fmt: skip
    assert code == 0, err
    assert "significance clusters of pearson" in out and "COMET" in out.split("significance clusters")[1]


def test_api_scores_mapping() -> None:
    human = HumanScores("da", tuple(DA), np.array(list(DA.values())), None, 4, 0)
    (c,) = correlate([], human, coefficients=["accuracy"], scores={"COMET": COMET}, n_resamples=10)
    assert (c.metric, c.value, c.signature) == ("COMET", 1.0, "external:api")
    with pytest.raises(InputError, match="no score for system 's4'"):
        correlate([], human, scores={"COMET": {k: v for k, v in COMET.items() if k != "s4"}}, n_resamples=10)
    with pytest.raises(InputError, match="finite"):
        correlate([], human, scores={"COMET": {**COMET, "s1": float("nan")}}, n_resamples=10)
    with pytest.raises(TypeError, match="expected a number"):
        correlate([], human, scores={"COMET": {**COMET, "s1": "high"}}, n_resamples=10)


@pytest.mark.parametrize(
    "content, message",
    [
        ("system,COMET\ns1,0.8\ns2,nan\ns3,0.1\ns4,0.7\n", r"comet\.csv:3: column 'COMET': expected a finite number"),
        ("system,COMET\ns1,0.8\ns2,inf\ns3,0.1\ns4,0.7\n", r"comet\.csv:3: column 'COMET': expected a finite number"),
        ("system,COMET\ns1,0.8\ns1,0.7\ns3,0.1\ns4,0.7\n", r"comet\.csv:3: duplicate score"),
        ("system,COMET\ns1,0.8\ns2,0.7\ns3,0.1\ns9,0.7\n", r"comet\.csv:5: metric 'COMET': unknown system 's9'"),
        ("system,COMET\ns1,0.8\ns2,0.7\ns3,0.1\n", r"comet\.csv: metric 'COMET' has no score for system 's4'"),
        ("", r"comet\.csv: no score read"),
        ("system,COMET\n", r"comet\.csv: no score read"),
        ("system,BLEU\ns1,1\ns2,1\ns3,1\ns4,1\n", r"'BLEU' also computed by ngrameval"),
        ("system,COMET\ns1,0.8,9\n", r"comet\.csv:2: expected 2 fields"),
    ],
)
def test_hostile_score_files(
    files: dict[str, str], capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    Path(files["comet"]).write_text(content)
    code, _, err = _run(capsys, "correlate", *_systems(files), "-r", files["ref"], "-j", files["da"], "-m", "bleu",
                        "--scores", files["comet"], "--confidence-n", "10")  # fmt: skip
    assert code == 2
    assert len(err.strip().splitlines()) == 1, err
    assert __import__("re").search(message, err), err


def test_segment_scores_must_cover_judged_cells(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    seg = Path(files["dir"]) / "seg.tsv"
    da = Path(files["dir"]) / "segda.tsv"
    da.write_text(
        "system\tseg\tscore\n" + "".join(f"{s}\t{i}\t{v + i / 10}\n" for s, v in DA.items() for i in (1, 2, 3))
    )
    seg.write_text("system\tseg\tCOMET\n" + "".join(f"{s}\t{i}\t{v * i}\n" for s, v in COMET.items() for i in (1, 2)))
    args = ["correlate", "-j", str(da), "--segment-column", "seg", "--scores", str(seg), "--level", "segment",
            "--coefficients", "pearson,acc-eq", "--grouping", "item", "--confidence-n", "10"]  # fmt: skip
    code, _, err = _run(capsys, *args)
    # judged segment 3 has no score: the scores file's gap, named as such (issue 29: the judgment file was named)
    assert code == 2 and f"{seg}: metric 'COMET' has no score for system 's1', segment '3'" in err, err
    seg.write_text(seg.read_text() + "".join(f"{s}\t3\t{v * 3}\n" for s, v in COMET.items()))
    code, out, err = _run(capsys, *args, "-f", "json")
    assert code == 0, err
    got = {c["coefficient"]: c for c in json.loads(out)}
    assert got["acc-eq"]["epsilon"] is not None and 0 <= got["acc-eq"]["value"] <= 1


def test_where_filters_the_scores_files_too(files: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    """--where lp=x keeps the judgments and the --scores rows of x; the lp column is not read as a metric."""
    d = Path(files["dir"])
    (d / "da_lp.tsv").write_text("lp\tsystem\tscore\n" + "".join(f"x\t{s}\t{v}\n" for s, v in DA.items())
                                 + "".join(f"y\t{s}\t{-v}\n" for s, v in DA.items()))  # fmt: skip
    (d / "comet_lp.csv").write_text("lp,system,COMET\n" + "".join(f"x,{s},{v}\n" for s, v in COMET.items())
                                    + "".join(f"y,{s},{-v}\n" for s, v in COMET.items()))  # fmt: skip
    code, out, err = _run(
        capsys,
        "correlate",
        "-j",
        str(d / "da_lp.tsv"),
        "--where",
        "lp=x",
        "--scores",
        str(d / "comet_lp.csv"),
        "--coefficients",
        "pearson",
        "--confidence-n",
        "20",
        "-f",
        "json",
    )
    assert code == 0, err
    (c,) = json.loads(out)
    comet, da = np.array(list(COMET.values())), np.array(list(DA.values()))
    assert c["metric"] == "COMET" and c["value"] == pytest.approx(np.corrcoef(comet, da)[0, 1], abs=1e-12)
