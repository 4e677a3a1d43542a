"""Bad input through the command line: every case gets one line on stderr (what is wrong, the file and line
where there is one) and exit status 2 — never a traceback, never a half-written or replaced file.

Two parts: a table of the cases users met (each row: the command, the expected exit status and a pattern the
one-line message must contain), and a sweep over every option of every subcommand with values of the wrong
kind, read off the parser itself so that a new option is covered the day it is added.
"""

from __future__ import annotations

import argparse
import bz2
import contextlib
import gzip
import json
import lzma
import os
import re
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from tests.conftest import HANG_GUARD, held_import, interrupted, interrupted_at_start, pool_interrupted

from ngrameval.cli import build_parser, main

SYS = "the cat sat on the mat\na dog barks\nhello world\nfine day today\n"
SYS2 = "the cat sat on a mat\na dog barked\nhello there\nnice day today\n"
SYS3 = "cat mat\ndog\nworld\nday\n"
REF = "the cat sat on the mat\na dog is barking\nhello world\na fine day today\n"
REF2 = "a cat sat on the mat\nthe dog barks\nhello to the world\nfine day\n"
CORPUS = (
    ",VideoID,Start,End,WorkerID,Source,AnnotationTime,Language,Description\n"
    "0,v1,1,5,w1,clean,10,English,a man is slicing a tomato\n"
    "1,v1,1,5,w2,clean,12,English,someone slices a tomato\n"
    "2,v1,1,5,w3,unverified,9,English,a man cuts a tomato\n"
    "3,v2,0,4,w1,clean,11,English,a cat plays with a ball\n"
    "4,v2,0,4,w2,clean,8,English,a kitten is playing\n"
)


SEG5, SEG4 = range(1, 6), range(1, 5)  # judged segments, scored segments (segment 5 has no score)


@pytest.fixture
def d(tmp_path: Path) -> dict[str, str]:
    """Valid inputs of every kind, as paths; a case breaks exactly one thing."""
    files = {
        "sys": SYS,
        "sys2": SYS2,
        "sys3": SYS3,
        "ref": REF,
        "ref2": REF2,
        "src": REF2,
        "judg": "system,score\nsys.txt,0.9\nsys2.txt,0.5\nsys3.txt,0.1\n",
        "agree": "system,judge,score\na,j1,1\nb,j1,2\nc,j1,3\na,j2,2\nb,j2,2\nc,j2,4\na,j3,1\nb,j3,3\nc,j3,3\n",
        "flat": "system,judge,score\na,j1,3\nb,j1,3\nc,j1,3\na,j2,3\nb,j2,3\nc,j2,3\n",
        "segj": "system,seg,score\nsys.txt,1,1\nsys.txt,2,2\nsys2.txt,1,3\nsys2.txt,9,4\n",
        "segj_ok": "system,seg,score\n"
        + "".join(f"sys{s}.txt,{i},{i * (j + 1) % 5}\n" for j, s in enumerate(["", "2"]) for i in range(1, 5)),
        "ids": "1\n2\n3\n3\n",
        "corpus": CORPUS,
        "ratings": "1\n2\ninf\n3\n",
        "ratings_nan": "1\nnan\n2\n3\n",
        "ragged": "system,score\nsys.txt,0.9\nsys2.txt,0.5,7\nsys3.txt,0.1\n",
        "boolj": '{"system": "sys.txt", "score": true}\n{"system": "sys2.txt", "score": 0.5}\n',
        "multiline": 'system,note,score\nsys.txt,"two\nlines",0.9\nsys2.txt,x,oops\nsys3.txt,y,0.1\n',
        "empty": "",
        "empty2": "",
        "empty_ref": "",
        "hj": "system,score\nA,1\nB,2\nC,3\nD,4\n",
        "sc_no_d": "system,m1\nA,0.1\nB,0.5\nC,0.2\n",
        "sc_blank": "system,m1\nA,0.1\nB,\nC,0.2\nD,0.3\n",
        "hseg": "system,seg,score\n"
        + "".join(f"{s},{i},{i * k % 7}\n" for k, s in ((3, "A"), (5, "B")) for i in range(1, 6)),
        "sseg": "system,seg,m1\n"
        + "".join(f"{s},{i},0.{i * k % 9}\n" for k, s in ((2, "A"), (4, "B")) for i in range(1, 5)),
    }
    suffix = {
        "judg": ".csv",
        "agree": ".csv",
        "flat": ".csv",
        "segj": ".csv",
        "segj_ok": ".csv",
        "corpus": ".csv",
        "ragged": ".csv",
        "boolj": ".jsonl",
        "multiline": ".csv",
        "hj": ".csv",
        "sc_no_d": ".csv",
        "sc_blank": ".csv",
        "hseg": ".csv",
        "sseg": ".csv",
    }
    out = {}
    for name, text in files.items():
        path = tmp_path / f"{name}{suffix.get(name, '.txt')}"
        path.write_text(text, encoding="utf-8")
        out[name] = str(path)
    (tmp_path / "cr.txt").write_bytes(SYS.replace("\n", "\r").encode())
    out["cr"] = str(tmp_path / "cr.txt")
    (tmp_path / "bom2.txt").write_bytes(("\ufeff\ufeff" + SYS).encode())
    out["bom2"] = str(tmp_path / "bom2.txt")
    (tmp_path / "latin1.txt").write_bytes(SYS.replace("cat", "caf\xe9").encode("latin-1"))
    out["latin1"] = str(tmp_path / "latin1.txt")
    for suffix, compress in ((".gz", gzip.compress), (".bz2", bz2.compress), (".xz", lzma.compress)):
        (tmp_path / f"sys.txt{suffix}").write_bytes(compress(SYS.encode()) + b"trailing bytes")
        out[f"garbage_{suffix[1:]}"] = str(tmp_path / f"sys.txt{suffix}")
    (tmp_path / "adir").mkdir()
    out["dir"] = str(tmp_path / "adir")
    out["missing"] = str(tmp_path / "missing.txt")
    out["nodir_out"] = str(tmp_path / "no" / "such" / "dir" / "out.txt")
    out["nodir_png"] = str(tmp_path / "no" / "such" / "dir" / "out.png")
    out["file_as_dir"] = str(Path(out["ref"]) / "out.txt")
    out["tmp"] = str(tmp_path)
    return out


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own exits (--help, errors) go through SystemExit
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def error_lines(err: str) -> list[str]:
    """stderr without warnings: what must be exactly one line."""
    return [ln for ln in err.splitlines() if ln.strip() and "warning:" not in ln]


SCORE = ["score", "{sys}", "-r", "{ref}"]
JUDGED = ["{sys}", "{sys2}", "{sys3}", "-r", "{ref}", "-j", "{judg}"]

# (id, argv with {file} placeholders, exit status, regex the one error line must match)
CASES: list[tuple[str, list[str], int, str]] = [
    # n above the kernels' limit, and orders that overflow
    ("bleu-n-101", [*SCORE, "-m", "bleu:n=101"], 2, r"\b100\b"),
    ("rouge-101", [*SCORE, "-m", "rouge-101"], 2, r"\b100\b"),
    ("plane-max-order", ["plane", *JUDGED, "--max-order", "101"], 2, r"--max-order.*1 to 100"),
    ("pinc-order-0", ["paraphrase", "{sys}", "--source", "{src}", "-r", "{ref}", "--pinc-order", "0"], 2, "pinc"),
    # parameters that gave silently wrong numbers
    ("rouge-w-0.5", [*SCORE, "-m", "rouge-w:w=0.5"], 2, r"w"),
    ("rouge-w-inf", [*SCORE, "-m", "rouge-w:w=inf"], 2, r"w"),
    ("aev-b-nan", [*SCORE, "-m", "aev:b=nan"], 2, r"\bb\b"),
    ("aev-weights-nan", [*SCORE, "-m", "aev:weights=nan/1/1/1"], 2, r"weights"),
    ("bleu-smooth-inf", [*SCORE, "-m", "bleu:smooth=floor,smooth_value=inf"], 2, r"smooth_value"),
    ("plane-B-nan", ["plane", *JUDGED, "-B", "nan"], 2, r"--brevity"),
    ("unknown-metric", [*SCORE, "-m", "blue"], 2, r"unknown metric"),
    ("unknown-tokenizer", [*SCORE, "-tok", "wmt19"], 2, r"tokeni[sz]er"),
    # output paths: every OSError is one line naming the path; nothing replaced
    ("out-missing-dir", [*SCORE, "-o", "{nodir_out}"], 2, r"out\.txt"),
    ("out-is-dir", [*SCORE, "-o", "{dir}"], 2, r"adir"),
    ("out-file-as-dir", [*SCORE, "-o", "{file_as_dir}"], 2, r"ref\.txt"),
    ("out-proc", [*SCORE, "-o", "/proc/version"], 2, r"/proc"),
    ("out-is-input", [*SCORE, "-o", "{sys}"], 2, r"sys\.txt"),
    ("out-is-ref", [*SCORE, "-o", "{ref}"], 2, r"ref\.txt"),
    ("plot-missing-dir", ["plane", *JUDGED, "--plot", "{nodir_png}"], 2, r"out\.png"),
    ("plot-not-an-image", ["plane", *JUDGED, "--plot", "{tmp}/plane.txt"], 2, r"--plot.*png"),
    ("export-out-is-file", ["corpus", "export", "{corpus}", "--out", "{ref}"], 2, r"ref\.txt"),
    ("stopwords-dir", [*SCORE, "--stopwords", "{dir}"], 2, r"adir"),
    # input files
    ("missing-system", ["score", "{missing}", "-r", "{ref}"], 2, r"missing\.txt: no such file"),
    ("system-is-dir", ["score", "{dir}", "-r", "{ref}"], 2, r"adir: is a directory"),
    ("not-utf8", ["score", "{latin1}", "-r", "{ref}"], 2, r"latin1\.txt:1: not valid UTF-8"),
    ("length-mismatch", ["score", "{sys}", "-r", "{corpus}"], 2, r"lines"),
    ("cr-only", ["score", "{cr}", "-r", "{ref}"], 2, r"cr\.txt.*CR"),
    ("second-bom", ["score", "{bom2}", "-r", "{ref}"], 2, r"bom2\.txt:1.*BOM"),
    ("no-refs", ["score", "{sys}"], 2, r"-r/--refs"),
    # number options
    ("width-negative", [*SCORE, "-w", "-1"], 2, r"-w/--width"),
    ("seed-negative", ["compare", "{sys}", "{sys2}", "-r", "{ref}", "--seed", "-5"], 2, r"--seed"),
    ("alpha-step-0", ["plane", *JUDGED, "--alpha-step", "0"], 2, r"--alpha-step"),
    ("alpha-step-nan", ["plane", *JUDGED, "--alpha-step", "nan"], 2, r"--alpha-step"),
    ("alpha-step-tiny", ["plane", *JUDGED, "--alpha-step", "1e-6"], 2, r"--alpha-step"),
    ("coefficients-empty", ["correlate", *JUDGED, "--coefficients", ","], 2, r"--coefficients"),
    ("coefficients-unknown", ["correlate", *JUDGED, "--coefficients", "pearsn"], 2, r"pearsn"),
    (
        "thresholds-words",
        [
            "correlate",
            "{sys}",
            "{sys2}",
            "-r",
            "{ref}",
            "-j",
            "{segj_ok}",
            "--segment-column",
            "seg",
            "--level",
            "segment",
            "--given",
            "bleu",
            "--thresholds",
            "a,b",
        ],
        2,
        r"--thresholds",
    ),
    ("pairs-word", ["corpus", "export", "{corpus}", "--out", "{tmp}/e", "--pairs", "x"], 2, r"--pairs"),
    ("pairs-negative", ["corpus", "export", "{corpus}", "--out", "{tmp}/e", "--pairs", "-1"], 2, r"--pairs"),
    ("pairs-zero", ["corpus", "export", "{corpus}", "--out", "{tmp}/e", "--pairs", "0"], 2, r"--pairs"),
    # judgments and ratings
    (
        "ratings-inf",
        ["paraphrase", "{sys}", "--source", "{src}", "-r", "{ref}", "--ratings", "{ratings}"],
        2,
        r"ratings\.txt:3",
    ),
    (
        "ratings-nan",
        ["paraphrase", "{sys}", "--source", "{src}", "-r", "{ref}", "--ratings", "{ratings_nan}"],
        2,
        r"ratings_nan\.txt:2",
    ),
    ("judgments-ragged", ["correlate", *JUDGED[:-1], "{ragged}"], 2, r"ragged\.csv:3"),
    ("judgments-bool", ["correlate", "{sys}", "{sys2}", "-r", "{ref}", "-j", "{boolj}"], 2, r"boolj\.jsonl:1"),
    ("judgments-line-after-multiline", ["correlate", *JUDGED[:-1], "{multiline}"], 2, r"multiline\.csv:4"),
    (
        "unknown-segment-id",
        [
            "correlate",
            "{sys}",
            "{sys2}",
            "-r",
            "{ref}",
            "-j",
            "{segj}",
            "--segment-column",
            "seg",
            "--level",
            "segment",
        ],
        2,
        r"segj\.csv",
    ),
    (
        "repeated-segment-id",
        [
            "correlate",
            "{sys}",
            "{sys2}",
            "-r",
            "{ref}",
            "-j",
            "{segj}",
            "--segment-column",
            "seg",
            "--segment-ids",
            "{ids}",
            "--level",
            "segment",
        ],
        2,
        r"ids\.txt:4",
    ),
    # issue 29: extreme spec values, values that do not parse, options that would be dropped, repeated options
    ("chrf-beta-1e200", [*SCORE, "-m", "chrf:beta=1e200"], 2, r"'chrf:beta=1e200': chrF beta .*\[0, 1e\+100\]"),
    ("coco-rouge-beta-1e200", [*SCORE, "-m", "coco-rouge-l:beta=1e200"], 2, r"coco ROUGE-L beta"),
    ("cider-sigma-1e200", [*SCORE, "-m", "cider-d:sigma=1e200"], 2, r"CIDEr-D sigma .*\[1e-100, 1e\+100\]"),
    ("cider-sigma-1e-300", [*SCORE, "-m", "cider-d:sigma=1e-300"], 2, r"CIDEr-D sigma"),
    ("chrf-nc-1.5", [*SCORE, "-m", "chrf:nc=1.5"], 2, r"'chrf:nc=1\.5': nc: expected a whole number"),
    ("chrf-eps-nan", [*SCORE, "-m", "chrf:eps=nan"], 2, r"'chrf:eps=nan': eps: expected yes/no"),
    ("ter-case-maybe", [*SCORE, "-m", "ter:case=maybe"], 2, r"'ter:case=maybe': case:"),
    ("ter-normalize-nfd", [*SCORE, "-m", "ter:normalize=nfd"], 2, r"'ter:normalize=nfd': normalize:"),
    ("ter-tok", [*SCORE, "-m", "ter:tok=intl"], 2, r"'ter:tok=intl': option 'tok' has no effect"),
    ("ter-lc", [*SCORE, "-m", "ter:lc=no"], 2, r"'lc' has no effect.*ter:case"),
    ("chrf-tok", [*SCORE, "-m", "chrf:tok=char"], 2, r"'tok' has no effect: chrF reads raw characters"),
    ("chrf-stem", [*SCORE, "-m", "chrf:stem=yes"], 2, r"'stem' has no effect"),
    ("chrf-stop", [*SCORE, "-m", "chrf:stop=smart"], 2, r"'stop' has no effect"),
    ("chrf-nc-twice", [*SCORE, "-m", "chrf:nc=6,nc=2"], 2, r"option 'nc' given twice"),
    # issue 29, item 7: no segments at all, where intervals resample them (an internal error before)
    ("report-empty", ["report", "{empty}", "-r", "{empty_ref}", "-o", "{tmp}/r.html"], 2, r"no segments to resample"),
    ("report-empty-2", ["report", "{empty}", "{empty2}", "-r", "{empty_ref}"], 2, r"no segments to resample"),
    ("score-confidence-empty", ["score", "{empty}", "-r", "{empty_ref}", "--confidence"], 2, r"no segments"),
    # item 8: a gap in a --scores file is blamed on it (the judgment file was named), with the line of an empty cell
    (
        "scores-no-system",
        ["correlate", "-j", "{hj}", "--scores", "{sc_no_d}"],
        2,
        r"^ngrameval: error: \S*sc_no_d\.csv: metric 'm1' has no score for system 'D'",
    ),
    (
        "scores-empty-cell",
        ["correlate", "-j", "{hj}", "--scores", "{sc_blank}"],
        2,
        r"^ngrameval: error: \S*sc_blank\.csv:3: metric 'm1': empty score for system 'B'",
    ),
    (
        "scores-no-segment",
        ["correlate", "-j", "{hseg}", "--segment-column", "seg", "--scores", "{sseg}", "--level", "segment"],
        2,
        r"^ngrameval: error: \S*sseg\.csv: metric 'm1' has no score for system 'A', segment '5'",
    ),
    # item 13: a significance level is not a confidence level (both were "e.g. 0.95")
    (
        "sig-level-tiny",
        ["compare", "{sys}", "{sys2}", "-r", "{ref}", "--sig-level", "1e-320"],
        2,
        r"--sig-level: expected a significance level from 1e-9 to 1 - 1e-9 \(e\.g\. 0\.05\)",
    ),
    ("alpha-tiny", ["compare", "{sys}", "{sys2}", "-r", "{ref}", "--alpha", "0"], 2, r"a significance level"),
    (
        "ci-above-1",
        ["compare", "{sys}", "{sys2}", "-r", "{ref}", "--ci", "2"],
        2,
        r"--ci: expected a confidence level .*\(e\.g\. 0\.95\)",
    ),
    # compressed files with trailing garbage: refused for every format, as .gz always was
    ("gz-trailing-garbage", ["score", "{garbage_gz}", "-r", "{ref}"], 2, r"sys\.txt\.gz: .*trailing garbage"),
    ("bz2-trailing-garbage", ["score", "{garbage_bz2}", "-r", "{ref}"], 2, r"sys\.txt\.bz2: .*trailing garbage"),
    ("xz-trailing-garbage", ["score", "{sys}", "-r", "{garbage_xz}"], 2, r"sys\.txt\.xz: .*trailing garbage"),
    # argparse's own errors: one line, not the usage block; no prefix abbreviations
    ("unknown-option", [*SCORE, "--frobnicate"], 2, r"unrecognized arguments: --frobnicate"),
    ("abbreviated-tok", [*SCORE, "-t", "intl"], 2, r"unrecognized arguments: -t"),
    ("abbreviated-lc", [*SCORE, "-l"], 2, r"unrecognized arguments: -l"),
    ("abbreviated-long", [*SCORE, "--token", "intl"], 2, r"unrecognized arguments: --token"),
    ("no-command", [], 2, r"required"),
    ("bad-choice", [*SCORE, "-f", "xml"], 2, r"-f/--format"),
]


# fixed in work under way; strict: an xfail that passes fails, so this set must shrink to nothing
PENDING: set[str] = set()


@pytest.mark.parametrize(
    ("argv", "code", "pattern"),
    [pytest.param(*c[1:], marks=pytest.mark.xfail(strict=True)) if c[0] in PENDING else c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_bad_input_gets_one_line_and_exit_2(
    d: dict[str, str], capsys: pytest.CaptureFixture[str], argv: list[str], code: int, pattern: str
) -> None:
    before = {p: Path(p).read_bytes() for p in d.values() if Path(p).is_file()}
    status, _, err = run([a.format(**d) for a in argv], capsys)
    lines = error_lines(err)
    assert status == code, err
    assert len(lines) == 1, err
    assert lines[0].startswith("ngrameval"), err
    assert re.search(pattern, lines[0]), lines[0]
    assert "Traceback" not in err
    for p, content in before.items():  # no input replaced or touched
        assert Path(p).read_bytes() == content, p
    assert not list(Path(d["tmp"]).glob("**/.*.tmp")), "a temporary file was left behind"


def test_huge_skip_distance_is_unlimited(d: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    """A skip distance beyond any sentence (it once allocated a table of that size) equals ROUGE-S* exactly."""
    status, huge, err = run([*(a.format(**d) for a in SCORE), "-m", "rouge-s99999999999", "-f", "json"], capsys)
    assert status == 0, err
    status, star, err = run([*(a.format(**d) for a in SCORE), "-m", "rouge-s*", "-f", "json"], capsys)
    assert status == 0, err
    score = [json.loads(t)[0]["score"] for t in (huge, star)]
    assert score[0] == score[1] > 0


def test_agreement_when_every_score_is_equal(d: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    """Krippendorff's alpha is 0/0 when every score is the same: undefined (n/a), not a crash."""
    status, out, err = run(["agreement", "-j", d["flat"], "--judge-column", "judge"], capsys)
    assert status == 0, err
    assert "n/a" in out


# Every option of every subcommand with values of the wrong kind: base commands that are valid on their own.
BASE: dict[str, list[str]] = {
    "score": SCORE,
    "compare": ["compare", "{sys}", "{sys2}", "-r", "{ref}"],
    "paraphrase": ["paraphrase", "{sys}", "--source", "{src}", "-r", "{ref}"],
    "pairwise": ["pairwise", "{sys}", "--group-size", "2"],
    "correlate": ["correlate", *JUDGED],
    "plane": ["plane", *JUDGED],
    "refcurve": ["refcurve", *JUDGED[:4], "{ref2}", *JUDGED[4:]],
    "agreement": ["agreement", "-j", "{agree}", "--judge-column", "judge"],
    "corpus stats": ["corpus", "stats", "{corpus}"],
    "corpus export": ["corpus", "export", "{corpus}", "--out", "{tmp}/export"],
    "corpus baseline": ["corpus", "baseline", "{corpus}"],
    "demo": ["demo"],
    "report": ["report", "{sys}", "{sys2}", "-r", "{ref}", "-o", "{tmp}/report.html"],
    "metrics": ["metrics"],
}
BAD_NUMBERS = ["x", "nan", "inf", "-1", "1e999", ""]


def _subparsers(parser: argparse.ArgumentParser, prefix: str = "") -> dict[str, argparse.ArgumentParser]:
    out = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                full = f"{prefix}{name}"
                nested = _subparsers(sub, f"{full} ")
                out.update(nested or {full: sub})
    return out


def _bad_values() -> list[tuple[str, str, str]]:
    """(subcommand, option, bad value) for every option that takes a number or a choice."""
    cases = []
    for name, sub in _subparsers(build_parser()).items():
        if name not in BASE:
            continue
        for action in sub._actions:
            if not action.option_strings or action.nargs == 0 or action.dest == "help":
                continue
            opt = action.option_strings[-1]
            if action.choices:
                cases.append((name, opt, "no-such-choice"))
            elif action.type is not None and action.type is not str and opt != "--plot":
                # W = inf is AEv's documented "no wordiness penalty"
                cases.extend((name, opt, v) for v in BAD_NUMBERS if not (opt == "--wordiness" and v == "inf"))
    return cases


BAD_VALUES = _bad_values()


def test_the_sweep_covers_the_options() -> None:
    options = {(n, o) for n, o, _ in BAD_VALUES}
    for expected in [
        ("score", "--width"),
        ("compare", "--paired-bs-n"),
        ("plane", "--alpha-step"),
        ("correlate", "--n-resamples"),
        ("corpus export", "--test-fraction"),
        ("agreement", "--min-overlap"),
        ("refcurve", "--subsets"),
        ("paraphrase", "--pinc-order"),
        ("score", "--rouge-profile"),
    ]:
        assert expected in options, expected


@pytest.mark.parametrize(("command", "option", "value"), BAD_VALUES, ids=[f"{c}{o}={v}" for c, o, v in BAD_VALUES])
def test_every_option_rejects_values_of_the_wrong_kind(
    d: dict[str, str], capsys: pytest.CaptureFixture[str], command: str, option: str, value: str
) -> None:
    argv = [a.format(**d) for a in BASE[command]] + [f"{option}={value}"]
    status, _, err = run(argv, capsys)
    lines = error_lines(err)
    assert status == 2, f"{command} {option}={value!r}: exit {status}: {err}"
    assert len(lines) == 1 and option in lines[0], err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "command",
    [pytest.param(c, marks=pytest.mark.slow) if c == "demo" else c for c in BASE],  # demo: the full report
)
def test_base_commands_are_valid(d: dict[str, str], capsys: pytest.CaptureFixture[str], command: str) -> None:
    """The sweep means something only if the commands it breaks are valid before one option is broken."""
    status, _, err = run([a.format(**d) for a in BASE[command]], capsys)
    assert status == 0, err


def test_memory_error_is_one_line(
    d: dict[str, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import ngrameval.cli.score as cli

    def boom(*args: object, **kwargs: object) -> None:
        raise MemoryError

    from ngrameval import _direct

    for name in ("measure", "measure_piece"):  # read first and counted, or counted on the pool while read
        monkeypatch.setattr(cli, name, boom)
    monkeypatch.setattr(_direct, "count_bytes", boom)  # or counted straight from the files' bytes
    status, _, err = run([a.format(**d) for a in SCORE], capsys)
    assert status == 2 and error_lines(err) == [err.strip()] and "out of memory" in err


def interrupted_cli(argv: list[str], module: str, function: str) -> tuple[int, str]:
    """Runs ``main(argv)`` in a child that prints a marker when ``module.function`` (the long work) is entered, sends
    it SIGINT once the marker is read, and returns its exit status and stderr."""
    code = textwrap.dedent(f"""
        import importlib, sys
        from ngrameval.cli import main
        mod = importlib.import_module({module!r})
        work = getattr(mod, {function!r})
        def marked(*args, **kwargs):
            print("start", flush=True)
            return work(*args, **kwargs)
        setattr(mod, {function!r}, marked)
        sys.exit(main({argv!r}))
    """)
    ended = interrupted(code)
    return ended.status, ended.err


def _long_compare(tmp_path: Path) -> tuple[list[str], Path]:
    """A ``compare`` whose approximate randomisation (10M trials of 4,000 long segments) runs for minutes, and the
    output file it would write."""
    big = "the quick brown fox jumps over the lazy dog " * 20
    hyp, ref, out = tmp_path / "h.txt", tmp_path / "r.txt", tmp_path / "out.txt"
    hyp.write_text((big + "\n") * 4000)
    ref.write_text((big + "x\n") * 4000)
    return ["compare", str(hyp), str(ref), "-r", str(ref), "--paired-ar-n", "10000000", "-o", str(out)], out


def test_ctrl_c_exits_130_without_traceback(tmp_path: Path) -> None:
    """SIGINT during a long run: exit status 130, one line, no traceback, no output file, no temporary file. The
    signal is sent once the significance test has started (it was sent after a fixed 3 s, which on a loaded machine
    could land before the work)."""
    argv, out = _long_compare(tmp_path)
    status, err = interrupted_cli(argv, "ngrameval.meta.significance", "paired_test")
    assert status == 130, err
    assert err.strip() == "ngrameval: interrupted", err
    assert not out.exists()
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_a_ctrl_c_swallowed_during_the_work_still_exits_130(tmp_path: Path) -> None:
    """A Ctrl-C whose KeyboardInterrupt is swallowed where it lands (as Cython's initialisation of numpy.random did
    when ``compare`` imported it just as the signal came: the run went on to its end) still ends the run at the
    next step of its loop: status 130, one line, no output file."""
    argv, out = _long_compare(tmp_path)
    code = textwrap.dedent(f"""
        import signal, sys
        from ngrameval.cli import main
        from ngrameval.meta import significance
        work = significance.paired_test
        def swallowed(*args, **kwargs):
            try:
                signal.raise_signal(signal.SIGINT)
            except BaseException:
                pass
            return work(*args, **kwargs)
        significance.paired_test = swallowed
        sys.exit(main({argv!r}))
    """)
    ended = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG_GUARD)
    assert ended.returncode == 130, ended.stderr
    assert ended.stderr == "ngrameval: interrupted\n"
    assert not out.exists()


@pytest.mark.parametrize(
    ("entry", "held"),
    [
        ([str(Path(sys.executable).parent / "ngrameval")], "ngrameval.errors"),  # the installed command: the package
        ([sys.executable, "-m", "ngrameval"], "ngrameval.cli"),  # python -m: the package is imported before __main__
        ([sys.executable, "-m", "ngrameval"], "ngrameval.errors"),  # python -m, while Python imports the package
    ],
    ids=["command", "python-m", "python-m-package"],
)
def test_ctrl_c_during_start_up_exits_130_with_one_line(tmp_path: Path, entry: list[str], held: str) -> None:
    """Issue 30: SIGINT while ``ngrameval`` is still importing (its handler in ``main`` not yet installed) exits 130
    with one line, not a traceback; without the hold the same command runs. The installed command is held while
    it imports the package; ``python -m ngrameval`` imports the package before running ``__main__``, so it is held
    while it imports the command line."""
    ended = interrupted_at_start([*entry, "--version"], held_import(tmp_path, held))
    assert ended.status == 130, ended.err
    assert ended.err == "ngrameval: interrupted\n" and ended.out == ""
    assert subprocess.run([*entry, "--version"], capture_output=True, text=True, check=False).returncode == 0


@pytest.mark.parametrize("metric", ["chrf", "chrf++"])
def test_ctrl_c_inside_chrf_exits_130(tmp_path: Path, metric: str) -> None:
    """Issue 29, item 1: SIGINT while chrF's kernel counts one long line (the signal is sent once the kernel has
    started: the child wraps it to print a marker) stops the command with exit 130 and one line."""
    rng = np.random.default_rng(0)
    ref = "".join(map(chr, rng.integers(0x4E00, 0x9FFF, 200_000)))  # CJK: distinct character n-grams
    (tmp_path / "r.txt").write_text(ref + "\n", encoding="utf-8")
    (tmp_path / "h.txt").write_text(ref * 10 + "\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    argv = ["score", str(tmp_path / "h.txt"), "-r", str(tmp_path / "r.txt"), "-m", metric, "-o", str(out)]
    status, err = interrupted_cli(argv, "ngrameval._overlap", "overlap")
    assert status == 130 and err.strip() == "ngrameval: interrupted", err
    assert not out.exists()


@pytest.mark.parametrize("metric", ["bleu", "rouge-l"])
def test_ctrl_c_while_the_pool_counts_the_files_bytes_exits_130(tmp_path: Path, metric: str) -> None:
    """SIGINT while ``score --jobs 2`` counts plain files straight from their bytes on the pool (the main thread
    waiting for the pieces): exit 130, one line, no output file. The child's first piece waits until the signal
    has reached the main thread, so the run cannot end before it (no timing)."""
    rng = np.random.default_rng(5)
    words = np.array(["the", "a", "cat", "sat", "on", "mat", ",", "."])
    for name in ("h", "r"):
        lines = [" ".join(rng.choice(words, 12).tolist()) for _ in range(20_000)]
        (tmp_path / f"{name}.txt").write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.txt"
    argv = ["score", str(tmp_path / "h.txt"), "-r", str(tmp_path / "r.txt"), "-m", metric, "--jobs", "2"]
    ended = pool_interrupted([*argv, "-o", str(out)], "ngrameval._direct", "count_bytes")
    assert ended.status == 130 and ended.err == "ngrameval: interrupted\n", ended.err
    assert not out.exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["compare", "{sys}", "{sys2}", "{sys3}", "-r", "{ref}", "--paired-ar-n", "300"],
        ["compare", "{sys}", "{sys2}", "-r", "{ref}", "--paired-bs", "--paired-bs-n", "300"],
        ["score", "{sys}", "{sys2}", "-r", "{ref}", "--confidence", "--confidence-n", "300"],
    ],
    ids=["compare-ar", "compare-bs", "score-confidence"],
)
def test_seed_none_prints_a_seed_that_replays_the_run(
    d: dict[str, str], capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    """Issue 29, item 11: ``--seed none`` draws a seed, prints it, and ``--seed`` with the printed seed is accepted and
    gives the same output (about half the drawn seeds were above 2**63-1, which --seed refuses; score --confidence
    printed ``seed:None``). Eight draws: each would have passed before with probability 1/2."""
    args = [a.format(**d) for a in argv]
    for _ in range(8):
        status, out, err = run([*args, "--seed", "none"], capsys)
        assert status == 0, err
        seeds = set(re.findall(r"seed:(\w+)", out))
        assert len(seeds) == 1, out
        (seed,) = seeds
        assert seed.isdigit() and int(seed) < 2**63, seed
        again = run([*args, "--seed", seed], capsys)
        assert again == (0, out, err)


@contextlib.contextmanager
def _peer(kind: str) -> Iterator[int]:
    """A local TCP service that is not a Dask scheduler, on a free port: ``silent`` accepts and never answers,
    ``http`` is Python's HTTP server, ``garbage`` sends bytes that look like a frame length and then nonsense."""
    import http.server
    import socket
    import threading

    if kind == "http":
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield server.server_address[1]
        finally:
            server.shutdown()
            server.server_close()
        return
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []

    def serve() -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = listener.accept()
                accepted.append(conn)
                if kind == "garbage":
                    conn.sendall((24).to_bytes(8, "little") + b"\xff" * 24)

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield listener.getsockname()[1]
    finally:
        listener.close()
        for conn in accepted:
            conn.close()


@pytest.mark.parametrize("kind", ["silent", "http", "garbage"])
def test_scheduler_that_is_not_dask(d: dict[str, str], kind: str) -> None:
    """Issue 29, items 2 and 4: ``--scheduler`` at a listener that never answers waited for ever; at an HTTP server
    it said "out of memory" (Dask read the reply as a 3 EiB frame); at a peer sending garbage, an internal error.
    Now one line naming the address and "not a Dask scheduler (handshake failed ...)", exit 2, within Dask's connect
    timeout (set to 1 s here through Dask's environment variable)."""
    pytest.importorskip("distributed")
    env = {**os.environ, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "1s"}
    with _peer(kind) as port:
        address = f"tcp://127.0.0.1:{port}"
        argv = [sys.executable, "-m", "ngrameval", "score", d["sys"], "-r", d["ref"], "--scheduler", address]
        out = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 2, out.stderr
    assert error_lines(out.stderr) == [out.stderr.strip()], out.stderr
    assert out.stderr.startswith(f"ngrameval: error: --scheduler {address}: not a Dask scheduler (handshake failed")
    if kind != "garbage":
        assert "no answer within 1 s" in out.stderr


@pytest.mark.parametrize(
    ("address", "pattern"),
    [
        ("bogus", r"--scheduler 'bogus': not an address \(missing port"),
        ("tcp://[::1", r"--scheduler 'tcp://\[::1': not an address"),
        ("tcp://127.0.0.1:99999", r"port 99999 is not from 1 to 65535"),
        ("", r"argument --scheduler: expected local, local:N or a scheduler's address"),
        (" ", r"argument --scheduler: expected local, local:N"),
        ("local:x", r"local:N takes a number of workers"),
    ],
)
def test_scheduler_address_that_does_not_parse(
    d: dict[str, str], capsys: pytest.CaptureFixture[str], address: str, pattern: str
) -> None:
    """Issue 29, item 5: an address that does not parse is one line naming it (an internal error before), and an
    empty ``--scheduler`` is refused (it ran the job here, silently)."""
    pytest.importorskip("distributed")
    status, out, err = run(["score", d["sys"], "-r", d["ref"], "--scheduler", address], capsys)
    assert status == 2 and not out, err
    assert len(error_lines(err)) == 1 and re.search(pattern, err), err


def test_corpus_export_removes_an_earlier_exports_other_pairings(
    d: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 29, item 13: a second export with other ``--pairs`` into the same folder removes the first one's
    ``train.K.*`` files (and says so), and nothing else: the folder holds one split (train.10.* were left)."""
    out = Path(d["tmp"]) / "split"
    assert run(["corpus", "export", d["corpus"], "--out", str(out)], capsys)[0] == 0
    (out / "notes.txt").write_text("mine\n")
    (out / "train.x.src").write_text("not an export name\n")
    status, printed, err = run(["corpus", "export", d["corpus"], "--out", str(out), "--pairs", "1,5"], capsys)
    assert status == 0, err
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(["notes.txt", "train.x.src", "test.src", "test.refs.tsv", "test.clips",
                            "train.1.src", "train.1.tgt", "train.5.src", "train.5.tgt"])  # fmt: skip
    assert printed.count("removed ") == 4 and f"removed {out / 'train.all.src'}" in printed


# The command line run with `_direct.watch` wrapped: once the named file is mapped and watched, it is truncated to
# 10 bytes, as another program rewriting it would, so the next read of a page past the first faults.
_TRUNCATING = """
import os, sys
import ngrameval._direct as _direct
watch, victim = _direct.watch, os.fsencode(sys.argv[1])
def truncating(buf, path):
    watch(buf, path)
    if path == victim:
        os.truncate(path, 10)
_direct.watch = truncating
sys.argv = ["ngrameval", *sys.argv[2:]]
import _ngrameval_cli
sys.exit(_ngrameval_cli.main())
"""


@pytest.mark.parametrize("jobs", ["1", "2"])  # 2: counted while the command line loads (ngrameval.scale.early)
@pytest.mark.parametrize("metric", ["bleu", "rouge-l"])
@pytest.mark.parametrize("victim", ["ref", "sys"])
def test_a_file_truncated_while_mapped_gets_one_line_not_sigbus(
    tmp_path: Path, jobs: str, metric: str, victim: str
) -> None:
    """A file truncated by another program while ``score`` has it mapped (a corpus being rewritten): its lost pages
    fault with SIGBUS, which ended the process with no word said (exit -7). Now: exit 2, one line naming the file
    and the byte, nothing written."""
    paths = {"ref": tmp_path / "ref.txt", "sys": tmp_path / "sys.txt"}
    paths["ref"].write_text(REF * 5000)
    paths["sys"].write_text(SYS * 5000)
    out = tmp_path / "out.txt"
    argv = ["score", str(paths["sys"]), "-r", str(paths["ref"]), "-m", metric, "--jobs", jobs, "-o", str(out)]
    code = [sys.executable, "-c", _TRUNCATING, str(paths[victim]), *argv]
    got = subprocess.run(code, capture_output=True, text=True, check=False)
    assert got.returncode == 2, (got.returncode, got.stderr)
    assert re.fullmatch(
        rf"ngrameval: error: {re.escape(str(paths[victim]))}: the file was truncated while it was being read "
        r"\(byte \d+ is gone\): another program changed it; nothing was written\n",
        got.stderr,
    ), got.stderr
    assert got.stdout == "" and not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ref.txt", "sys.txt"]


def test_the_library_leaves_sigbus_to_its_host(tmp_path: Path) -> None:
    # the handler is the process's, so the package never installs it: a host application keeps its own (here the
    # default action, so the read of a truncated mapped file still ends the process with SIGBUS)
    ref = tmp_path / "ref.txt"
    ref.write_text(REF * 5000)
    code = textwrap.dedent(
        """
        import os, resource, sys
        import ngrameval as ne
        from ngrameval import _direct
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # (no core file)
        from ngrameval.scale.fromfile import mapped
        ne.score({"a": ["x"]}, [["x"]], "bleu")
        m = mapped(sys.argv[1])
        os.truncate(sys.argv[1], 10)
        _direct.lines(m, 1 << 62, False, 512)
        """
    )
    got = subprocess.run([sys.executable, "-c", code, str(ref)], capture_output=True, text=True, check=False)
    assert got.returncode == -signal.SIGBUS, (got.returncode, got.stderr)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the handler removes directories on Linux")
@pytest.mark.parametrize("metric", ["bleu", "rouge-l"])
def test_a_streamed_run_truncated_while_mapped_leaves_no_spill_files(tmp_path: Path, metric: str) -> None:
    """``--sentence`` streamed in chunks spills the sentence scores to a temporary directory; a reference truncated
    while mapped ends the run in the fault's handler (no ``finally`` runs), which removes that directory too."""
    spill_root = tmp_path / "tmp"
    spill_root.mkdir()
    ref, hyp = tmp_path / "ref.txt", tmp_path / "sys.txt"
    ref.write_text(REF * 5000)
    hyp.write_text(SYS * 5000)
    out = tmp_path / "out.txt"
    argv = ["score", str(hyp), "-r", str(ref), "-m", metric, "--chunk-size", "1000", "--sentence", "-o", str(out)]
    got = subprocess.run([sys.executable, "-c", _TRUNCATING, str(ref), *argv], capture_output=True, text=True,
                         check=False, env={**os.environ, "TMPDIR": str(spill_root)})  # fmt: skip
    assert got.returncode == 2, (got.returncode, got.stderr)
    assert "the file was truncated while it was being read" in got.stderr and len(got.stderr.splitlines()) == 1
    assert list(spill_root.iterdir()) == [] and not out.exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the handler removes directories on Linux")
def test_the_fault_handler_removes_a_recorded_directory_with_its_files(tmp_path: Path) -> None:
    """The handler empties and removes every directory recorded with ``remove_on_fault`` (here 300 files, more than
    one read of the directory's entries) and none that ``keep_on_fault`` forgot or that was never recorded."""
    ref = tmp_path / "ref.txt"
    ref.write_text(REF * 5000)
    code = textwrap.dedent(
        """
        import mmap, os, sys
        from ngrameval import _direct
        root = sys.argv[2]
        for name, files in (("spill", 300), ("kept", 2), ("other", 1)):
            os.mkdir(os.path.join(root, name))
            for k in range(files):
                open(os.path.join(root, name, f"part{k:03d}.f64"), "wb").close()
        assert _direct.remove_on_fault(os.fsencode(os.path.join(root, "spill")))
        assert _direct.remove_on_fault(os.fsencode(os.path.join(root, "kept")))
        _direct.keep_on_fault(os.fsencode(os.path.join(root, "kept")))
        assert not _direct.remove_on_fault(b"x" * 5000)  # too long to keep: left, as before
        _direct.exit_on_bus_error()
        with open(sys.argv[1], "rb") as fh:
            m = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        _direct.watch(m, os.fsencode(sys.argv[1]))
        os.truncate(sys.argv[1], 10)
        _direct.lines(m, 1 << 62, False, 512)
        """
    )
    got = subprocess.run([sys.executable, "-c", code, str(ref), str(tmp_path)], capture_output=True, text=True,
                         check=False)  # fmt: skip
    assert got.returncode == 2, (got.returncode, got.stderr)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept", "other", "ref.txt"]
    assert len(list((tmp_path / "kept").iterdir())) == 2
