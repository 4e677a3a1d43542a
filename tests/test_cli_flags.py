"""Library errors name the API's parameters; the command line says its options instead, through one table
(``ngrameval.cli.flags.PARAMETER_FLAGS``), so its messages are the same bytes as before (issue 30, item 4)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import ngrameval as ne
from ngrameval.cli import main
from ngrameval.cli.flags import PARAMETER_FLAGS, in_flags
from ngrameval.corpus import read_corpus, select
from ngrameval.errors import ConfigError, InputError
from ngrameval.io.judgments import Judgment
from ngrameval.meta.agreement import judge_table
from ngrameval.meta.plane import alpha_grid

SRC = Path(ne.__file__).parent


def api_message(call: object) -> str:
    assert callable(call)
    with pytest.raises((ConfigError, InputError)) as info:
        call()
    return str(info.value)


def test_library_messages_name_parameters_not_options(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps({"v1": ["a man slices a tomato"]}))
    said = {
        "divide": api_message(lambda: alpha_grid(0.3)),
        "range": api_message(lambda: alpha_grid(2.0)),
        "judge": api_message(lambda: judge_table([Judgment("a", "1", None, "q", 3.0, 2)], "q")),
        "tier": api_message(lambda: select(read_corpus(corpus), tier="clean")),
        "source": api_message(lambda: ne.measure({"a": ["x y"]}, [["x y"]], "pinc")),
    }
    assert said["divide"] == "alpha_step must divide 1 (0.1, 0.05, 0.001 ...), got 0.3"
    assert said["range"] == "alpha_step must be a finite number in [0.001, 1], got 2"
    assert said["judge"].endswith(": agreement needs a judge column (judge= of read_judgments)")
    assert said["tier"] == "this corpus has no tier column (the JSON form); give tier=None"
    assert said["source"] == "PINC is measured against the source sentences: give them (source=)"
    assert not any("--" in m for m in said.values())


def test_every_row_translates_a_library_message_to_the_old_cli_words() -> None:
    assert in_flags("alpha_step must divide 1 (0.1, 0.05, 0.001 ...), got 0.3") == (
        "alpha step (--alpha-step) must divide 1 (0.1, 0.05, 0.001 ...), got 0.3"
    )
    assert in_flags("j.csv:2: agreement needs a judge column (judge= of read_judgments)") == (
        "j.csv:2: agreement needs a judge column (--judge-column)"
    )
    assert in_flags("x; give tier=None") == "x; drop --tier"
    assert in_flags("give them (source=)") == "give them (--source / source=)"
    # words inside a longer name are left alone (a file called my_alpha_step.txt)
    assert in_flags("my_alpha_step.txt: no such file") == "my_alpha_step.txt: no such file"


@pytest.mark.parametrize(("words", "flag"), PARAMETER_FLAGS)
def test_every_row_is_still_said_by_the_library(words: str, flag: str) -> None:
    """A row whose library message has gone is dead weight: each row's words appear in a library module."""
    library = [p for p in SRC.rglob("*.py") if "cli" not in p.relative_to(SRC).parts]
    assert any(words in p.read_text(encoding="utf-8") for p in library), words
    assert flag.count("--") == 1


def test_cli_messages_are_the_same_bytes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name, text in {
        "sys.txt": "the cat sat on the mat\na dog barks\n",
        "sys2.txt": "the cat sat on a mat\na dog barked\n",
        "ref.txt": "the cat sat on the mat\na dog is barking\n",
        "judg.csv": "system,score\nsys.txt,0.9\nsys2.txt,0.5\n",
        "corpus.json": json.dumps({"v1": ["a man slices a tomato"]}),
    }.items():
        (tmp_path / name).write_text(text)
    p = {k: str(tmp_path / k) for k in ("sys.txt", "sys2.txt", "ref.txt", "judg.csv", "corpus.json")}
    runs = [
        (
            ["plane", p["sys.txt"], p["sys2.txt"], "-r", p["ref.txt"], "-j", p["judg.csv"], "--alpha-step", "0.3"],
            "ngrameval: error: alpha step (--alpha-step) must divide 1 (0.1, 0.05, 0.001 ...), got 0.3\n",
        ),
        (
            ["corpus", "stats", p["corpus.json"], "--tier", "clean"],
            "ngrameval: error: this corpus has no tier column (the JSON form); drop --tier\n",
        ),
        (
            ["score", p["sys.txt"], "-r", p["ref.txt"], "-m", "pinc"],
            "ngrameval: error: PINC is measured against the source sentences: give them (--source / source=)\n",
        ),
    ]
    for argv, err in runs:
        assert main(argv) == 2
        assert capsys.readouterr() == ("", err)


@pytest.mark.slow  # a subprocess: the command line's own warning format
def test_warnings_and_limits_say_the_option_on_the_command_line(tmp_path: Path) -> None:
    assert in_flags("use at least 40 bootstrap resamples (n_resamples=40)") == (
        "use at least 40 bootstrap resamples (--paired-bs-n 40)"
    )
    assert in_flags("use at least 12 AR trials (n_resamples=12)") == "use at least 12 AR trials (--paired-ar-n 12)"
    assert in_flags("x; raise the bound with ngrameval.limits.set_max_cells()") == (
        "x; raise the bound with --max-cells or ngrameval.limits.set_max_cells()"
    )
    for name, text in {"a": "the cat sat\na dog\n", "b": "the cat sat down\ndogs\n", "c": "a cat\nthe dog\n"}.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "ref").write_text("the cat sat on the mat\na dog barks\n")
    systems = [str(tmp_path / n) for n in "abc"]
    argv = ["compare", *systems, "-r", str(tmp_path / "ref"), "-m", "bleu", "--paired-bs", "--paired-bs-n", "10"]
    done = subprocess.run([sys.executable, "-m", "ngrameval", *argv], capture_output=True, text=True, check=False)
    warned = [line for line in done.stderr.splitlines() if "smallest reachable p" in line]
    assert done.returncode == 0 and len(warned) == 1, done.stderr
    assert warned[0].startswith("ngrameval: warning: with 10 bootstrap resamples and holm correction over 3 pairs")
    assert warned[0].endswith("use at least 60 bootstrap resamples (--paired-bs-n 60)")  # 3 x 1/11 > 0.05
