"""Latin squares and Williams orders (properties), DA degradation, the quality checks, and the study file's
errors (key / line)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from collect.collect_studies import write_study
from ngrameval.collect import design, quality
from ngrameval.collect.study import StudyError, load_study


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_williams_rows_balanced(n: int) -> None:
    rows = design.williams_rows(n)
    assert all(sorted(r) == list(range(n)) for r in rows)
    for pos in range(n):  # each treatment equally often in each position
        assert len(set(Counter(r[pos] for r in rows).values())) == 1
    follows = Counter((r[i], r[i + 1]) for r in rows for i in range(n - 1))
    if n > 1:  # carry-over balance: every ordered pair of distinct treatments adjacent equally often
        assert len(follows) == n * (n - 1) and len(set(follows.values())) == 1


@pytest.mark.parametrize(("n_items", "n_systems"), [(6, 3), (12, 4), (10, 5), (8, 2)])
def test_latin_square_properties(n_items: int, n_systems: int) -> None:
    items = [f"i{k}" for k in range(n_items)]
    systems = [f"S{k}" for k in range(n_systems)]
    cover: Counter[tuple[str, str]] = Counter()
    for judge in range(n_systems):
        trials = design.latin_square(items, systems, judge, np.random.default_rng(judge))
        assert sorted(t.item for t in trials) == sorted(items)  # each item once
        per_system = Counter(t.system for t in trials)
        assert set(per_system) == set(systems) and len(set(per_system.values())) == 1  # each system equally often
        cover.update((t.item, t.system) for t in trials)
    assert len(cover) == n_items * n_systems and set(cover.values()) == {1}  # n judges: the full square once


def test_degrade_and_controls() -> None:
    rng = np.random.default_rng(0)
    assert [design.degrade_span(n) for n in (0, 1, 3, 7, 12, 18, 40)] == [0, 1, 2, 3, 4, 5, 10]
    text = "the quick brown fox jumps over the lazy dog"
    bad = design.degrade(text, ["alpha beta gamma delta epsilon zeta"], rng)
    assert len(bad.split()) == 9 and sum(a != b for a, b in zip(bad.split(), text.split())) == 4
    trials = design.latin_square(["a", "b", "c"], ["X", "Y", "Z"], 0, rng)
    outputs = {(i, s): f"{i} {s} words here" for i in "abc" for s in "XYZ"}
    full = design.with_controls(trials, outputs, 1, 2, rng)
    assert Counter(t.kind for t in full) == {"normal": 3, "repeat": 1, "bad": 2}
    for k, t in enumerate(full):
        if t.of is not None:  # a control comes after its original
            assert full.index(trials[t.of]) < k


def test_judge_check_and_z() -> None:
    good = quality.judge_check([(3, 3), (4, 5)], [(5, 5)], [(80, 20), (70, 30), (90, 10), (60, 50), (75, 5)])
    assert good.repeat_diff == 0.5 and good.known_error == 0 and good.bad_p == pytest.approx(1 / 32)
    assert not good.flagged
    bad = quality.judge_check([], [], [(50, 50), (40, 60), (30, 30), (20, 80), (70, 71)])
    assert bad.flagged and bad.bad_p is not None and bad.bad_p > 0.5
    m = quality.z_scores({"j": [10, 20, 30], "flat": [5, 5]})
    assert m["j"] == (20.0, 10.0) and quality.z(30, *m["j"]) == 1.0 and quality.z(5, *m["flat"]) == 0.0


def test_description_checks_flag_outliers() -> None:
    by = {
        "c1": [("a man slices a tomato", "English"), ("a man is slicing a tomato", "English"), ("zzz qqq", "English")],
        "c2": [
            ("a cat plays a piano", "English"),
            ("the cat is playing the piano", "English"),
            ("un gato toca", "Spanish"),
        ],
    }
    checks = quality.description_checks(by, "English")
    assert checks["c1", 0].bleu is not None and checks["c1", 0].bleu > checks["c1", 2].bleu  # type: ignore[operator]
    assert checks["c2", 2].other_language and not checks["c2", 0].other_language
    ann = quality.annotator_checks(
        {
            "good": [checks["c1", 0], checks["c2", 0]],
            "ok": [checks["c1", 1], checks["c2", 1]],
            "odd": [checks["c1", 2], checks["c2", 2]],
        }
    )
    assert ann["good"].flags == () and set(ann["odd"].flags) == {"low-bleu", "short", "language"}


def _study(tmp_path: Path, text: str) -> Path:
    path = write_study(tmp_path)
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[study]\nname = "x"\nkind = "describe"\nmanifest = "stimuli.csv"\ntarget = \n', "line 5"),
        ('[study]\nname = "x"\nkind = "survey"\nmanifest = "stimuli.csv"\n', "key 'kind' must be one of"),
        (
            '[study]\nname = "x"\nkind = "describe"\nmanifest = "stimuli.csv"\ntarget = "3"\n',
            "key 'target' must be int",
        ),
        ('[study]\nkind = "describe"\nmanifest = "stimuli.csv"\n', "missing key 'name'"),
        ('[study]\nname = "x"\nkind = "describe"\nmanifest = "stimuli.csv"\ncolour = 1\n', "unknown key(s) colour"),
        ('[study]\nname = "x"\nkind = "describe"\nmanifest = "nope.csv"\n', "key 'manifest'"),
        ('[study]\nname = "x"\nkind = "rate"\nmanifest = "stimuli.csv"\n', "header lacks column(s) item"),
    ],
)
def test_malformed_study(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(StudyError) as err:
        load_study(_study(tmp_path, text))
    where = "stimuli.csv:1" if "header" in message else "study.toml"
    assert message in str(err.value) and where in str(err.value)


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        ("id,kind,src,start,end,text\nv1,video,,1,2,\n", "stimuli.csv:2: a video needs column 'src'"),
        ("id,kind,src,start,end,text\nv1,audio,a.mp3,,,\n", "stimuli.csv:2: column 'kind' must be one of"),
        ("id,kind,src,start,end,text\nv1,video,a.mp4,5,2,\n", "stimuli.csv:2: end (2) must be after start (5)"),
        ("id,kind,src,start,end,text\nt1,text,,,,a\nt1,text,,,,b\n", "stimuli.csv:3: id 't1' repeated"),
        ("id,kind,src,start,end,text\nt1,text,,,\n", "stimuli.csv:2: expected 6 fields"),
        ("id,kind,src,start,end,text\nv1,video,a.mp4,x,2,\n", "stimuli.csv:2: column 'start' must be whole seconds"),
    ],
)
def test_malformed_manifest(tmp_path: Path, manifest: str, message: str) -> None:
    path = write_study(tmp_path)
    (tmp_path / "stimuli.csv").write_text(manifest)
    with pytest.raises(StudyError) as err:
        load_study(path)
    assert message in str(err.value)


def test_cli_reports_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ngrameval.cli import main

    path = _study(tmp_path, '[study]\nname = "x"\nkind = "describe"\nmanifest = "stimuli.csv"\ntarget = 0\n')
    assert main(["collect", "init", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "key 'target' must be at least 1" in err
