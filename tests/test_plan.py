"""Planning a study (issue 31, item 4): ``ngrameval.meta.plan`` and ``ngrameval collect plan``.

The simulated power is checked against the closed form of the paired test (two systems, normal noise) and against
resampling SummEval's expert ratings (the bundled first 20 documents; the 100 of ../shared/data when present)."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pytest

from ngrameval.cli import main
from ngrameval.errors import InputError
from ngrameval.io.records import Judgment
from ngrameval.meta.plan import pilot_noise, plan_study, simulate_power, studies_power

SAMPLE = Path(__file__).resolve().parents[1] / "src" / "ngrameval" / "data" / "summeval_sample.jsonl"
FULL = Path(__file__).resolve().parents[2] / "shared" / "data" / "summeval" / "summeval.jsonl"
CRITERION = "coherence"


def analytic_power(delta: float, sd_d: float, n: int, alpha: float) -> float:
    """Power of the two-sided paired z-test: Phi(delta sqrt(n) / sd_d - z) + Phi(-delta sqrt(n) / sd_d - z), z the
    1 - alpha/2 normal quantile and sd_d the SD of one item's difference between the two systems."""
    nd = NormalDist()
    z = nd.inv_cdf(1 - alpha / 2)
    shift = delta * math.sqrt(n) / sd_d
    return nd.cdf(shift - z) + nd.cdf(-shift - z)


@pytest.mark.parametrize(("n", "delta"), [(80, 0.3), (120, 0.25)])
def test_closed_form_two_systems(n: int, delta: float) -> None:
    # per-item means of each system: N(mu, item_sd^2 + judge_sd^2 / k); difference SD sqrt(2) times that.
    # n is large enough that the t and z quantiles are close (the AR test behaves like the t-test).
    item_sd, judge_sd, judges = 0.6, 0.8, 2
    sd_d = math.sqrt(2 * (item_sd**2 + judge_sd**2 / judges))
    want = analytic_power(delta, sd_d, n, 0.05)
    got, se = simulate_power(
        [0.0, delta], judge_sd, item_sd, n, judges, n_sim=1500, n_resamples=399, rng=np.random.default_rng(7)
    )
    assert 0.2 < want < 0.9  # a power where the check has teeth
    assert abs(got - want) <= 3 * se, (got, want, se)


def test_closed_form_plan_picks_the_first_design_reaching_the_power() -> None:
    plan = plan_study(
        delta=0.5, judge_sd=1.0, item_sd=0.5, n_systems=2, items=(10, 40, 80), judges=(1, 2), n_sim=300, seed=1
    )
    assert plan.chosen is not None and plan.chosen.power >= 0.8
    cheaper = [d for d in plan.designs if d.judgments < plan.chosen.judgments]
    assert cheaper and all(d.power < 0.8 for d in cheaper)
    # the chosen design's closed-form power is near the target too
    sd_d = math.sqrt(2 * (0.5**2 + 1.0 / plan.chosen.judges))
    assert abs(analytic_power(0.5, sd_d, plan.chosen.items, 0.05) - plan.chosen.power) <= 3 * plan.chosen.se + 0.02
    assert all(d.latin == 2 and d.items % 2 == 0 for d in plan.designs)
    assert "plan:" in plan.table() and "<- chosen" in plan.table()


def test_seeded_plans_repeat() -> None:
    kw = {"delta": 1.0, "judge_sd": 1.0, "item_sd": 1.0, "n_systems": 3, "items": (9, 30), "n_sim": 50}
    assert plan_study(seed=3, **kw) == plan_study(seed=3, **kw)  # type: ignore[arg-type]


def _sample() -> tuple[list[str], list[str], np.ndarray]:
    rows = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    systems = sorted(rows[0]["systems"])
    docs = [r["doc_id"] for r in rows]
    return systems, docs, np.array([[r["systems"][s][CRITERION] for r in rows] for s in systems])


def _judgments(systems: list[str], docs: list[str], scores: np.ndarray) -> list[Judgment]:
    return [Judgment(s, d, None, CRITERION, float(scores[a, i]), 1) for a, s in enumerate(systems) for i, d in
            enumerate(docs)]  # fmt: skip


def _drawn_power(scores: np.ndarray, items: int, seed: int) -> tuple[float, float]:
    """Power of new studies of ``items`` documents drawn with replacement from ``scores`` (systems x docs)."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, scores.shape[1], size=(1000, items))
    return studies_power(scores[:, draws].transpose(1, 0, 2), scores.mean(axis=1), rng=rng)


PICK = ("M10", "M11", "M5")  # three SummEval systems some 0.6 apart in coherence (bundled sample)


@pytest.mark.slow
@pytest.mark.parametrize("pilot_docs", [slice(0, 20), slice(0, 10)])
def test_resampling_summeval_reaches_the_planned_power(pilot_docs: slice) -> None:
    systems, docs, x = _sample()
    idx = [systems.index(s) for s in PICK]
    scores = x[idx]
    truth = scores.mean(axis=1)  # the systems' true means in the world the new studies are drawn from
    pilot = _judgments(list(PICK), docs[pilot_docs], scores[:, pilot_docs])
    plan = plan_study(pilot, delta=0.5, means=truth, n_sim=400, seed=3, items=range(3, 91, 3))
    c = plan.chosen
    assert c is not None and c.judges == 1 and plan.notes  # the sample has one (mean) rating per output
    got, se = _drawn_power(scores, c.items, 4)
    if pilot_docs == slice(0, 20):  # the pilot is the population: only Monte-Carlo error between the two
        assert abs(got - c.power) <= 3 * math.hypot(se, c.se), (got, c.power)
    else:  # a pilot subset: the drawn studies reach the target power
        assert got >= plan.target - 3 * se, (got, c.power)


@pytest.mark.slow
@pytest.mark.skipif(not FULL.exists(), reason="../shared/data/summeval not here")
def test_bundled_pilot_plans_studies_drawn_from_all_100_documents() -> None:
    full: dict[str, dict[str, float]] = {}
    for line in FULL.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        full.setdefault(r["system"], {})[r["doc_id"]] = r[CRITERION]
    _, docs, _ = _sample()  # the pilot: the bundled first 20 documents
    every = sorted(full["M0"])
    got, planned = [], []
    for k, pick in enumerate([("M10", "M5", "M8"), ("M10", "M15", "M9"), ("M0", "M14", "M5"), ("M10", "M8", "M9")]):
        scores = np.array([[full[s][d] for d in every] for s in pick])
        pilot = [Judgment(s, d, None, CRITERION, full[s][d], 1) for s in pick for d in docs]
        plan = plan_study(pilot, delta=0.1, means=scores.mean(axis=1), n_sim=300, seed=k, items=range(6, 301, 6))
        assert plan.chosen is not None
        power, _ = _drawn_power(scores, plan.chosen.items, 10 + k)
        got.append(power)
        planned.append(plan.chosen.power)
    # a 20-document pilot estimates the noise only roughly: each set scatters, on average the target is reached
    assert float(np.mean(got)) >= 0.8 - 3 * math.sqrt(0.8 * 0.2 / (4 * 1000)) - 0.02, (got, planned)


def test_pilot_noise_separates_judge_and_item_noise() -> None:
    rng = np.random.default_rng(11)
    js = []
    for s, mu in (("a", 0.0), ("b", 1.0), ("c", 2.0)):
        for i in range(200):
            m = mu + 0.5 * rng.standard_normal()
            js += [Judgment(s, str(i), f"j{j}", "q", float(m + rng.standard_normal()), 1) for j in range(3)]
    noise = pilot_noise(js)
    assert noise.systems == ("a", "b", "c") and noise.outputs == 600
    assert abs(noise.judge_sd - 1.0) < 0.05 and abs(noise.item_sd - 0.5) < 0.1


def _write_pilot(path: Path, rows: int = 12) -> Path:
    rng = np.random.default_rng(5)
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["system", "segment", "judge", "score"])
        for s, mu in (("A", 50.0), ("B", 60.0), ("C", 70.0)):
            for i in range(rows):
                item = mu + 8 * rng.standard_normal()
                for j in range(2):
                    w.writerow([s, f"d{i}", f"j{j}", f"{item + 10 * rng.standard_normal():.1f}"])
    return path


STUDY = """# a rating study
[study]
name = "pilot"   # the name
kind = "rate"
target = 3
manifest = "items.csv"

[[criteria]]
name = "quality"
scale = "slider"
"""


def _plan_cli(tmp_path: Path, *extra: str) -> int:
    pilot = _write_pilot(tmp_path / "pilot.csv")
    args = ["collect", "plan", str(tmp_path / "STUDY.toml"), "--pilot", str(pilot), "--delta", "10"]
    return main([*args, "--simulations", "60", "--seed", "2", "--max-items", "60", *extra])


def test_cli_plan_prints_the_table_and_writes_only_target(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    study = tmp_path / "STUDY.toml"
    study.write_bytes(STUDY.encode())
    assert _plan_cli(tmp_path) == 0
    out = capsys.readouterr().out
    assert "power" in out and "plan:" in out and "Latin squares of 3" in out
    assert study.read_bytes() == STUDY.encode()  # nothing written without --write
    assert _plan_cli(tmp_path, "--write") == 0
    new = study.read_text(encoding="utf-8").splitlines(keepends=True)
    old = STUDY.splitlines(keepends=True)
    added = [line for line in new if line not in old]
    assert [x.split(":")[0] for x in added] == ["# ngrameval collect plan", added[1].split(":")[0]]
    assert added[1].startswith("target = ") and [line for line in new if line in old] == [
        line for line in old if not line.startswith("target")
    ]
    # a second plan replaces the first's lines: the file keeps one plan comment and one target
    assert _plan_cli(tmp_path, "--write", "--power", "0.5") == 0
    text = study.read_text(encoding="utf-8")
    assert text.count("# ngrameval collect plan") == 1 and text.count("\ntarget = ") == 1


def test_write_inserts_target_and_keeps_crlf(tmp_path: Path) -> None:
    from ngrameval.collect.study import write_target

    study = tmp_path / "STUDY.toml"
    original = STUDY.replace("target = 3\n", "").replace("\n", "\r\n").encode()
    study.write_bytes(original)
    write_target(study, 4, "a note")
    new = study.read_bytes()
    assert b"# ngrameval collect plan: a note\r\ntarget = 4\r\n" in new
    assert new.replace(b"# ngrameval collect plan: a note\r\ntarget = 4\r\n", b"") == original


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--delta", "0"], "delta must be a finite number > 0"),
        (["--delta", "-3"], "delta must be a finite number > 0"),
        (["--power", "1"], "power must be between 0 and 1"),
        (["--power", "0"], "power must be between 0 and 1"),
        (["--alpha", "1.5"], "alpha must be between 0 and 1"),
    ],
)
def test_cli_bad_numbers_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], says: str
) -> None:
    (tmp_path / "STUDY.toml").write_text(STUDY, encoding="utf-8")
    assert _plan_cli(tmp_path, *extra) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1


def test_cli_missing_column_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "STUDY.toml").write_text(STUDY, encoding="utf-8")
    (tmp_path / "pilot.csv").write_text("system,judge,score\nA,j1,3\n", encoding="utf-8")
    args = ["collect", "plan", str(tmp_path / "STUDY.toml"), "--pilot", str(tmp_path / "pilot.csv"), "--delta", "1"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "pilot.csv:2: no column 'segment'" in err and err.count("\n") == 1


def test_cli_missing_study_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _plan_cli(tmp_path) == 2
    err = capsys.readouterr().err
    assert "STUDY.toml" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("kw", "says"),
    [
        ({"delta": 0.0}, "delta"),
        ({"delta": float("nan")}, "delta"),
        ({"delta": 1.0, "power": 1.2}, "power"),
        ({"delta": 1.0, "judge_sd": -1.0}, "judge_sd"),
        ({"delta": 1.0, "item_sd": None}, "judge_sd and item_sd"),
        ({"delta": 1.0, "n_systems": 1}, "n_systems"),
        ({"delta": 1.0, "means": [1.0, 1.0]}, "all systems are equal"),
        ({"delta": 1.0, "judges": [0]}, "judges"),
        ({"delta": 1.0, "test": "t"}, "test"),
    ],
)
def test_api_bad_input(kw: dict[str, object], says: str) -> None:
    args: dict[str, object] = {"judge_sd": 1.0, "item_sd": 1.0, "items": (4,), "n_sim": 5, "seed": 0}
    with pytest.raises(InputError, match=says):
        plan_study(**{**args, **kw})  # type: ignore[arg-type]


def test_pilot_bad_input() -> None:
    one = [Judgment("a", "1", "j", "q", 1.0, 1), Judgment("a", "2", "j", "q", 2.0, 2)]
    with pytest.raises(InputError, match="at least two systems"):
        pilot_noise(one)
    with pytest.raises(InputError, match="segment"):
        pilot_noise([Judgment("a", None, None, "q", 1.0, 3, "p.csv")])
    with pytest.raises(InputError, match="several criteria"):
        pilot_noise([Judgment("a", "1", None, "q", 1.0, 1), Judgment("b", "1", None, "r", 1.0, 1)])


def test_write_refuses_a_study_table_it_cannot_edit_in_place(tmp_path: Path) -> None:
    from ngrameval.collect.study import StudyError, write_target

    study = tmp_path / "STUDY.toml"
    for text in ('study.name = "x"\nstudy.kind = "rate"\n', '[study]\nname = """\n[x]\n"""\nkind = "rate"\n'):
        study.write_text(text, encoding="utf-8")
        with pytest.raises(StudyError, match=r"STUDY.toml: (no \[study\] table|cannot place 'target')"):
            write_target(study, 2, "note")
        assert study.read_text(encoding="utf-8") == text and list(tmp_path.iterdir()) == [study]
