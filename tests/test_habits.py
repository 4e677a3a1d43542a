"""Habits from other tools answered with the spelling that works (issue 28): sacreBLEU's -i, space-separated
-m names, a paired test asked of `score` — one line, exit 2, the working spelling in it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ngrameval.cli import main


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    (tmp_path / "h.txt").write_text("the cat sat\n")
    (tmp_path / "r.txt").write_text("the cat sat on\n")
    return str(tmp_path / "h.txt"), str(tmp_path / "r.txt")


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["score", "-i", "{h}", "-r", "{r}"], "system outputs are positional arguments (sacreBLEU's -i)"),
        (["score", "{h}", "-r", "{r}", "-m", "bleu", "chrf"], "-m takes one comma-separated list: -m METRIC,chrf"),
        (["score", "-m", "bleu", "chrf", "{h}", "-r", "{r}"], "-m takes one comma-separated list: -m METRIC,chrf"),
        (["score", "{h}", "-r", "{r}", "--paired-bs"], "paired tests between systems are ngrameval compare's"),
    ],
)
def test_habits_get_the_spelling_that_works(
    files: tuple[str, str], argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    h, r = files
    assert main([a.format(h=h, r=r) for a in argv]) == 2
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1


def test_a_missing_file_that_is_no_metric_gets_no_hint(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["score", "nofile.txt", "-r", files[1]]) == 2
    assert "-m takes" not in capsys.readouterr().err


def test_messages_name_things_once_and_count_in_the_right_number(capsys: pytest.CaptureFixture[str]) -> None:
    import ngrameval as ne
    from ngrameval.errors import InputError

    hyps = ["the cat sat", "a dog", "it rains"]
    with pytest.raises(InputError) as info:
        ne.bleu(hyps, [hyps])  # sacreBLEU's layout: one stream of 3 references
    text = str(info.value)
    assert text.startswith("hyps has 3 segments but the references have 1") and "1 stream of 3" in text
    assert "system system" not in text and "1 streams" not in text


def test_judgment_note_counts_in_the_right_number() -> None:
    import numpy as np

    from ngrameval.cli.correlate import _judged_note
    from ngrameval.meta.correlate import HumanScores

    h = HumanScores("da", ("a", "b"), np.array([0.1, np.nan]), None, 1, 1)
    assert _judged_note(h) == "da: 1 judgment; 1 system without one"


def test_rouge_l_and_rouge_lsum_are_named_as_asked(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    """Under ROUGE-1.5.5's profile both read lines as sentences (the same numbers); they print as asked, not as
    ROUGE-L and ROUGE-L #2."""
    h, r = files
    assert main(["score", h, "-r", r, "-m", "rouge-l,rouge-lsum"]) == 0
    out = capsys.readouterr().out
    assert "ROUGE-Lsum" in out and "#2" not in out
