"""The command line: scores, formats, and a clear one-line error with exit status 2 for bad input."""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
import sacrebleu

import ngrameval.cli.score
import ngrameval.io.read
from ngrameval.cli import build_parser, main


def write(p: Path, text: str | bytes) -> str:
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text, encoding="utf-8")
    return str(p)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    return {
        "ref": write(tmp_path / "ref.txt", "the cat sat on the mat\n\nhello world\n"),
        "ref2": write(tmp_path / "ref2.txt", "a cat sat on a mat\nnothing\nhello there world\n"),
        "sys": write(tmp_path / "sys.txt", "the cat sat on a mat\n\nhello world\n"),
        "short": write(tmp_path / "short.txt", "one line\n"),
    }


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_score_matches_sacrebleu(files, capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(["score", files["sys"], "-r", files["ref"], files["ref2"], "-f", "json"], capsys)
    assert code == 0
    (rec,) = json.loads(out)
    hyps = Path(files["sys"]).read_text().splitlines()
    refs = [Path(files[k]).read_text().splitlines() for k in ("ref", "ref2")]
    assert rec["score"] == pytest.approx(sacrebleu.corpus_bleu(hyps, refs).score, rel=1e-12)
    assert rec["signature"].startswith("BLEU|nrefs:2|tok:13a|case:mixed")


def test_several_metrics_and_systems_text_table(files, capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(
        ["score", files["sys"], files["ref2"], "-r", files["ref"], "-m", "bleu,nist,aev:alpha=0.3,n=2"], capsys
    )
    assert code == 0
    head = out.splitlines()[0].split()
    assert head == ["system", "BLEU", "NIST", "AEv(0.3,2)"]
    assert "sys.txt" in out and "ref2.txt" in out and "alpha:0.3|n:2" in out


def test_sentence_scores_keep_empty_lines(files, capsys) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = run(["score", files["sys"], "-r", files["ref"], "--sentence", "-m", "bleu:eff=yes"], capsys)
    lines = out.splitlines()
    assert code == 0 and lines[0] == "system\tmetric\tsegment\tscore" and len(lines) == 4
    assert [ln.split("\t")[2] for ln in lines[1:]] == ["1", "2", "3"]


def test_bom_and_crlf(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    ref = write(tmp_path / "r.txt", "\ufeffthe cat sat on the mat\r\nwe sat here all day\r\n")
    hyp = write(tmp_path / "h.txt", "the cat sat on the mat\nwe sat here all day\n")
    code, out, _ = run(["score", hyp, "-r", ref, "-f", "csv"], capsys)
    assert code == 0 and ",100.0," in out


def test_output_file_is_written_whole(files, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "out.json"
    code, out, _ = run(["score", files["sys"], "-r", files["ref"], "-f", "json", "-o", str(target)], capsys)
    assert code == 0 and out == "" and json.loads(target.read_text())[0]["metric"] == "BLEU"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.json")] == []


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["score", "{short}", "-r", "{ref}"], r"short.txt has 1 lines but the references \(.*ref.txt\) have 3"),
        (
            ["score", "{sys}", "-r", "{ref}", "{short}"],
            "reference files differ in length: .*ref.txt has 3 lines, .*short.txt has 1",
        ),
        (["score", "{sys}", "-r", "{missing}"], "missing.txt: no such file"),
        (["score", "{sys}", "-r", "{bad}"], r"bad.txt:2: not valid UTF-8"),
        (["score", "{sys}", "-r", "{ref}", "-m", "blue"], "unknown metric 'blue'; valid: bleu, nist, aev"),
        (["score", "{sys}", "-r", "{ref}", "-m", "bleu:smooth=magic"], "unknown BLEU smoothing 'magic'; valid: none"),
        (["score", "{sys}", "-r", "{ref}", "-m", "aev:beta=2"], "unknown option 'beta' for aev; valid: alpha"),
        (["score", "{sys}", "-r", "{ref}", "-tok", "moses"], "unknown tokenizer 'moses'; valid: 13a, intl"),
        (["score", "{sys}", "-r", "{ref}", "-m", "pinc"], "PINC is measured against the source sentences"),
        (
            ["score", "{sys}", "-r", "{ref}", "-m", "pinc", "--source", "{short}"],
            r"short.txt has 1 lines but the refer",
        ),
        (["score", "{sys}", "-r", "{ref}", "-m", "pinc:avg=some"], "expected one of present, all, got 'some'"),
        (["compare", "{sys}", "-r", "{ref}"], "a paired test needs at least two systems; got 1"),
        (
            ["compare", "{sys}", "{short}", "-r", "{ref}"],
            r"short.txt has 1 lines but the references \(.*ref.txt\) have 3",
        ),
        (
            ["compare", "{sys}", "{sys}", "-r", "{ref}", "--paired-ar-n", "0"],
            r"argument --paired-ar-n: expected a whole number from 1 to",
        ),
    ],
)
def test_bad_input_is_one_clear_line(argv, message, files, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    paths = {**files, "missing": str(tmp_path / "missing.txt"), "bad": write(tmp_path / "bad.txt", b"ok\n\xff\xfe\n")}
    code, out, err = run([a.format(**paths) for a in argv], capsys)
    assert code == 2 and out == ""
    assert err.startswith("ngrameval: error: ") and err.count("\n") == 1
    assert __import__("re").search(message, err), err


def test_missing_empty_refs_gives_variable_reference_counts(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    r1 = write(tmp_path / "r1.txt", "a b c d\nx y z w\n")
    r2 = write(tmp_path / "r2.txt", "\nx y\n")
    hyp = write(tmp_path / "h.txt", "a b c d\nx y z w\n")
    code, out, _ = run(["score", hyp, "-r", r1, r2, "--missing-empty-refs", "-f", "json"], capsys)
    assert code == 0 and "nrefs:var" in json.loads(out)[0]["signature"]
    assert json.loads(out)[0]["score"] == pytest.approx(100.0)


@pytest.mark.slow
def test_demo_and_module_entry_point() -> None:
    done = subprocess.run([sys.executable, "-m", "ngrameval", "demo"], capture_output=True, text=True, check=True)
    assert "M23" in done.stdout and "AEv:mt-adequacy" in done.stdout and "NIST" in done.stdout
    assert "approximate randomisation (10000 trials, seed 12345)" in done.stdout and "rank" in done.stdout
    assert "relevance: r2 (x100) of AEv(alpha, N) at system level, 16 systems" in done.stdout
    assert "best: alpha = " in done.stdout and "stop:smart|stem:porter|B:1|W:2" in done.stdout
    version = subprocess.run([sys.executable, "-m", "ngrameval", "--version"], capture_output=True, text=True)
    assert version.stdout.startswith("ngrameval ")


def test_paraphrase_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = write(tmp_path / "src.txt", "the cat sat on the mat\na dog runs in the park\nhe eats an apple\n")
    ref = write(tmp_path / "ref.tsv", "a cat sat on a mat\tcat on mat\nthe dog is running\nhe is eating an apple\n")
    sys1 = write(tmp_path / "copy.txt", "the cat sat on the mat\na dog runs in the park\nhe eats an apple\n")
    sys2 = write(tmp_path / "para.txt", "a cat is on the mat\nthe dog is running\nan apple is eaten\n")
    r1 = write(tmp_path / "copy.r", "1\n2\n\n")
    r2 = write(tmp_path / "para.r", "4\n5\n3\n")
    code, out, err = run(["paraphrase", "--source", src, "-r", ref, "--tsv", sys1, sys2, "--ratings", r1, r2], capsys)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == [
        "system", "BLEU", "BLEU+src", "PINC", "SE", "AM(BLEU,PINC)", "GM(BLEU,PINC)", "HM(BLEU,PINC)", "PINC*sig(BLEU)"
    ]  # fmt: skip
    assert lines[2].split()[3] == "0.00"  # the copy has PINC 0
    assert "logistic fitted to 5 rated sentences" in out
    bad = write(tmp_path / "bad.r", "1\nlots\n2\n")
    code, _, err = run(["paraphrase", "--source", src, "-r", ref, "--tsv", sys1, "--ratings", bad], capsys)
    assert code == 2 and "bad.r:2: expected a number" in err
    code, _, err = run(["paraphrase", "--source", src, "-r", ref, "--tsv", sys1, sys2, "--ratings", r1], capsys)
    assert code == 2 and "one ratings file per system" in err


def test_score_pinc_and_se_with_a_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import ngrameval as ne

    src_lines = ["the cat sat on the mat", "", "a dog runs in the park"]
    out_lines = ["a cat is on the mat", "", "the dog is running in a park"]
    src = write(tmp_path / "src.txt", "\n".join(src_lines) + "\n")
    ref = write(tmp_path / "ref.txt", "a cat sat on a mat\nsomething\nthe dog is running\n")
    hyp = write(tmp_path / "hyp.txt", "\n".join(out_lines) + "\n")
    with pytest.warns(ne.UndefinedMetricWarning, match="empty candidate"):
        code, out, err = run(["score", hyp, "-r", ref, "--source", src, "-m", "pinc,se:lc=yes", "-f", "json"], capsys)
    assert code == 0, err
    pinc, se = json.loads(out)
    refs = Path(ref).read_text().splitlines()
    with pytest.warns(ne.UndefinedMetricWarning):
        assert pinc["score"] == pytest.approx(ne.pinc(out_lines, src_lines).score * 100, abs=1e-12)
    assert se["score"] == pytest.approx(ne.se(out_lines, refs, lowercase=True).score * 100, abs=1e-12)
    assert pinc["signature"].startswith("PINC|nrefs:src|") and "|case:lc|" in se["signature"]


def test_compare_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    refs = [f"the cat number {i} sat on the mat today" for i in range(40)]
    ref = write(tmp_path / "ref.txt", "\n".join(refs) + "\n")
    good = write(tmp_path / "good.txt", "\n".join(refs) + "\n")
    near = write(tmp_path / "near.txt", "\n".join(r.replace("today", "now") for r in refs) + "\n")
    bad = write(tmp_path / "bad.txt", "\n".join(f"dogs {i} ran away" for i in range(40)) + "\n")
    code, out, err = run(["compare", good, near, bad, "-r", ref, "-m", "bleu,se", "--paired-ar-n", "999"], capsys)
    assert code == 0, err
    assert out.count("approximate randomisation (999 trials, seed 12345), p holm-corrected") == 2
    assert out.count("|ar:999|bs:1000|seed:12345|correction:holm|") == 2
    table = out.split("rank  ")[1].splitlines()
    assert [row.split()[:2] for row in table[2:5]] == [["1", "good.txt"], ["2", "near.txt"], ["3", "bad.txt"]]
    code, out, _ = run(
        ["compare", good, near, bad, "-r", ref, "--paired-bs", "--paired-bs-n", "200", "--baseline", "-f", "json"],
        capsys,
    )
    rec = json.loads(out)
    assert rec["test"] == "bs" and rec["baseline"] == "good.txt" and rec["n_resamples"] == 200
    (m,) = rec["metrics"]
    assert m["ranking"] is None and [p["system_b"] for p in m["pairs"]] == ["near.txt", "bad.txt"]
    assert m["systems"][0]["score"] == pytest.approx(100.0) and m["scale"] == "0-100"
    code, out, _ = run(
        ["compare", good, near, "-r", ref, "-f", "csv", "--seed", "none", "--correction", "none"], capsys
    )
    rows = out.splitlines()
    assert rows[0].startswith("metric,kind,system,other,score") and len(rows) == 1 + 2 + 1
    assert rows[3].startswith("BLEU,pair,good.txt,near.txt,100.0,")


def test_scoring_does_not_import_scipy(tmp_path: Path) -> None:
    """`ngrameval score` starts fast: scipy (~1 s) is imported only by the commands that need it."""
    hyp = write(tmp_path / "h.txt", "a b c\n")
    code = (
        "import sys; from ngrameval.cli import main; "
        f"rc = main(['score', {hyp!r}, '-r', {hyp!r}, '-m', 'bleu,nist,rouge-l']); "
        "assert rc == 0; assert 'scipy' not in sys.modules, 'scipy imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def test_import_and_score_load_only_what_they_use(tmp_path: Path) -> None:
    """Issue 32, item 6 (the serial start of every process): ``import ngrameval`` loads no metric and no numpy, every
    public name still resolves (to its module's object), and ``score -m bleu`` loads neither the paraphrase tools,
    the matrices, the stored statistics, the corpus tools, the HTML tables nor the `regex` module and ptb-coco's
    lexer (compiled on first use: ~30 ms), nor any other metric's module (TER's rapidfuzz, CIDEr, coco-caption's,
    ROUGE's ...), the judgment readers, the stemmers or NIST's spill files."""
    hyp, out = write(tmp_path / "h.txt", "a b c\n"), str(tmp_path / "out.txt")
    others = sorted(f"ngrameval.metrics.{m}" for m in METRIC_MODULES - {"bleu"})
    code = (
        f"import sys, importlib, ngrameval\nMETRICS = {others!r}\n"
        "assert 'numpy' not in sys.modules and 'ngrameval.api' not in sys.modules, sorted(sys.modules)\n"
        "from ngrameval.cli import main\n"
        f"assert main(['score', {hyp!r}, '-r', {hyp!r}, '-m', 'bleu', '--jobs', '1', '-o', {out!r}]) == 0\n"
        "unused = ['ngrameval.corpus', 'ngrameval.matrices', 'ngrameval.scale.stored', 'ngrameval.io.tables', "
        "'concurrent.futures', 'html', 'regex', 'ngrameval.text.ptb', 'rapidfuzz', 'Stemmer', 'ngrameval.text.stem', "
        "'ngrameval.io.judgments', 'ngrameval.scale.refspill', 'ngrameval.scale.refcounts', *METRICS]\n"
        "print(*[m for m in unused if m in sys.modules])\n"
        "for name in ngrameval.__all__:\n"
        "    value = getattr(ngrameval, name)\n"
        "    home = ngrameval._LAZY.get(name)\n"
        "    assert home is None or value is getattr(importlib.import_module(home), name), name\n"
        "assert ngrameval.api.measure is ngrameval.measure  # a submodule the package imported eagerly before\n"
    )
    run = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert run.stdout.split() == []


def test_meta_loads_an_analysis_only_when_it_is_used() -> None:
    """``ngrameval.meta`` loads its names on first use: the collection app's span rules (``meta.mqm``) do not import
    scipy.stats (~0.7 s of every `collect` command); every public name resolves to its module's object, and the names
    a submodule shares (``correlate``, ``agreement``, ``plane``) stay the functions once that submodule is loaded."""
    code = (
        "import sys, importlib\n"
        "import ngrameval.meta.mqm\n"
        "assert 'scipy.stats' not in sys.modules and 'ngrameval.meta.correlate' not in sys.modules\n"
        "import ngrameval.meta as meta\n"
        "import ngrameval.meta.correlate, ngrameval.meta.agreement, ngrameval.meta.plane\n"
        "from ngrameval.meta import agreement, correlate, plane\n"
        "assert callable(correlate) and callable(agreement) and callable(plane), (correlate, agreement, plane)\n"
        "for name in meta.__all__:\n"
        "    assert getattr(meta, name) is getattr(importlib.import_module(meta._LAZY[name]), name), name\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)


# every module of a metric the registry builds (ngrameval.metrics.<module>)
METRIC_MODULES = {"aev", "bleu", "chrf", "cider", "coco", "nist", "pinc", "rouge", "se", "ter"}


@pytest.mark.parametrize(
    ("metrics", "loaded"),
    [("bleu", {"bleu"}), ("rouge-l", {"rouge"}), ("chrf,ter", {"chrf", "ter"}), ("aev:mt-adequacy", {"aev"})],
)
def test_a_run_loads_the_modules_of_its_metrics_only(tmp_path: Path, metrics: str, loaded: set[str]) -> None:
    """Issue 32, item 6: the registry imports a metric's module when a spec names it (``--help``'s list of metrics
    and every option's valid values come from ``metrics/choices.py``, which imports nothing)."""
    from ngrameval.metrics.registry import _FACTORIES

    homes = {type(make()).__module__ for make in _FACTORIES.values()}
    assert {m.removeprefix("ngrameval.metrics.") for m in homes} == METRIC_MODULES
    hyp, out = write(tmp_path / "h.txt", "a b c\n"), str(tmp_path / "out.txt")
    code = (
        "import sys; from ngrameval.cli import main\n"
        f"assert main(['score', {hyp!r}, '-r', {hyp!r}, '-m', {metrics!r}, '-o', {out!r}]) == 0\n"
        "print(*sorted(m for m in sys.modules if m.startswith('ngrameval.metrics.')))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert {m.removeprefix("ngrameval.metrics.") for m in run.stdout.split()} & METRIC_MODULES == loaded


@pytest.mark.slow
def test_public_functions_are_not_shadowed_by_their_modules() -> None:
    """A package name that is also a submodule's (``meta.plane``, ``ngrameval.paraphrase``, now a deprecated alias
    of ``ngrameval.corpus.paraphrase``) stays the function after the submodule is imported, whichever is imported
    first."""
    code = (
        "import ngrameval.meta.plane, ngrameval.meta.correlate, ngrameval.meta.agreement, ngrameval.paraphrase; "
        "import ngrameval.corpus.paraphrase; "
        "import ngrameval as ne; from ngrameval.meta import plane, correlate, agreement; "
        "import inspect; bad = [f for f in (plane, correlate, agreement, ne.paraphrase, ne.compare) "
        "if not inspect.isfunction(f)]; assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def test_krippendorff_choices_follow_the_levels() -> None:
    from ngrameval.cli import KRIPPENDORFF_CHOICES
    from ngrameval.meta.agreement import KRIPPENDORFF_LEVELS

    assert ("auto", "none", *KRIPPENDORFF_LEVELS) == KRIPPENDORFF_CHOICES


def _cli(args: list[str], stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "ngrameval", *args], input=stdin, capture_output=True)


@pytest.mark.slow
def test_standard_input_as_system_or_reference(tmp_path: Path) -> None:
    """sacreBLEU's habit: `cat hyp | ngrameval score -r ref`, `-r -`; a file given twice is scored once."""
    hyp = write(tmp_path / "hyp.txt", "the cat sat on the mat\na dog\n")
    ref = write(tmp_path / "ref.txt", "the cat sat on a mat\na dog barks\n")
    expected = json.loads(_cli(["score", hyp, "-r", ref, "-f", "json"], b"").stdout)[0]["score"]
    piped = _cli(["score", "-r", ref, "-f", "json"], Path(hyp).read_bytes())
    out = json.loads(piped.stdout)[0]
    assert piped.returncode == 0 and out["system"] == "stdin" and out["score"] == expected
    as_ref = _cli(["score", hyp, "-r", "-", "-f", "json"], Path(ref).read_bytes())
    assert json.loads(as_ref.stdout)[0]["score"] == expected
    twice = _cli(["score", hyp, hyp, "-r", ref, "-f", "json"], b"")
    assert len(json.loads(twice.stdout)) == 1 and b"given twice; scored once" in twice.stderr
    both = _cli(["score", "-", "-r", "-"], b"x\n")
    assert both.returncode == 2 and b"standard input ('-') can be read once" in both.stderr
    swallowed = _cli(["score", "-r", ref, hyp], b"")  # -r took the system file too; stdin is empty
    assert swallowed.returncode == 2 and b"-r takes every file after it" in swallowed.stderr


def test_no_system_and_a_terminal_says_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    class Terminal:
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stdin", Terminal())
    ref = write(tmp_path / "ref.txt", "a\n")
    assert main(["score", "-r", ref, ref]) == 2
    assert "no system file given" in capsys.readouterr().err


def test_score_only_markdown_and_latex(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hyp = write(tmp_path / "hyp.txt", "the cat sat on the mat\n")
    odd = write(tmp_path / "a|b_&.txt", "the cat sat\n")
    ref = write(tmp_path / "ref.txt", "the cat sat on a mat\n")
    assert main(["score", hyp, odd, "-r", ref, "-m", "bleu,nist", "-f", "json"]) == 0
    scores = [r["score"] for r in json.loads(capsys.readouterr().out)]
    assert main(["score", hyp, odd, "-r", ref, "-m", "bleu,nist", "-b", "-w", "4"]) == 0
    assert capsys.readouterr().out.split() == [f"{v:.4f}" for v in scores]
    assert main(["score", hyp, odd, "-r", ref, "-m", "bleu,nist", "-f", "markdown"]) == 0
    md = capsys.readouterr().out.splitlines()
    assert md[:2] == ["| system | BLEU | NIST |", "|---|---:|---:|"]
    assert md[3] == f"| a\\|b_&.txt | {scores[2]:.2f} | {scores[3]:.2f} |"
    assert main(["score", hyp, odd, "-r", ref, "-m", "bleu,nist", "-f", "latex"]) == 0
    tex = capsys.readouterr().out
    assert r"a|b\_\&.txt & " + f"{scores[2]:.2f} & {scores[3]:.2f}" + r" \\" in tex
    assert tex.count(r"\begin{tabular}{lrr}") == 1 and tex.startswith("% BLEU|nrefs:1|")


def test_score_says_its_scale() -> None:
    import ngrameval as ne

    b, n = ne.bleu(["a b c d"], ["a b c e"]), ne.nist(["a b c d"], ["a b c e"])
    assert (b.scale, n.scale) == ("0-1", "raw")
    assert b.score100 == b.score * 100 and n.score100 == n.score
    assert b.to_dict()["sentences"] == [b.score] and json.dumps(b.to_dict())
    assert "BLEU 0.594604 on 0-1" in repr(b) and "array" not in repr(b)


@pytest.mark.slow
def test_renamed_options_keep_working_with_a_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--alpha` (compare) is `--sig-level`, `--coefficient` (plane, refcurve) is `--coefficients`."""
    a = write(tmp_path / "a.txt", "the cat sat\na dog ran\nhello there\n")
    b = write(tmp_path / "b.txt", "the cat\na dog\nhello\n")
    ref = write(tmp_path / "ref.txt", "the cat sat\na dog ran\nhello there\n")
    base = ["compare", a, b, "-r", ref, "--paired-ar-n", "99", "-f", "json"]
    assert main([*base, "--sig-level", "0.2"]) == 0
    new = capsys.readouterr()
    with pytest.warns(FutureWarning, match="--alpha is deprecated and will be removed: use --sig-level"):
        assert main([*base, "--alpha", "0.2"]) == 0
    assert capsys.readouterr().out == new.out
    assert json.loads(new.out)["alpha"] == 0.2
    shown = subprocess.run([sys.executable, "-m", "ngrameval", *base, "--alpha", "0.2"], capture_output=True, text=True)
    assert "ngrameval: warning: --alpha is deprecated and will be removed: use --sig-level" in shown.stderr


@pytest.mark.slow
def test_demo_writes_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`ngrameval demo --report FILE` (the README's set-up command) writes the sample's self-contained report."""
    from ngrameval.cli.report import _demo_report

    out = tmp_path / "demo.html"
    _demo_report(str(out), 2)
    page = out.read_text(encoding="utf-8").replace("|<wbr>", "|")  # signatures wrap only after their separators
    assert "ngrameval demo: the SummEval sample" in page and "M23" in page and "relevance" in page
    assert "BLEU|nrefs:11|tok:13a" in page and "ngrameval demo --report" in page
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "") and "https://" not in page
    assert f"wrote {out}" in capsys.readouterr().err
    # the report is the demo: the same metrics and the plane under the same text settings (best cell and value)
    from ngrameval.cli.demo import run_demo

    scores, _, best = run_demo()
    for s in scores:
        assert f"<b>{s.metric}</b>" in page, s.metric
    assert "chrF2" not in page
    assert f"best member AEv(alpha={best.best_alpha:g}, N={best.best_order}), r2 = {best.best_value * 100:.1f}" in page
    assert best.signature in page


def test_bleu_breakdown_as_sacrebleu_prints_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hyps = ["the cat sat on the mat", "a dog", "it is raining today"]
    refs = ["the cat sat on a mat", "a dog barks", "it rains today"]
    hyp, ref = write(tmp_path / "h.txt", "\n".join(hyps) + "\n"), write(tmp_path / "r.txt", "\n".join(refs) + "\n")
    assert main(["score", hyp, "-r", ref, "-m", "bleu,chrf"]) == 0
    out = capsys.readouterr().out
    want = str(sacrebleu.corpus_bleu(hyps, [refs])).split(" ", 3)[3]  # "BLEU = 31.17 <breakdown>"
    assert f"  h.txt BLEU: {want}\n" in out and out.count("BP = ") == 1
    assert main(["score", hyp, "-r", ref, "-f", "json"]) == 0
    details = json.loads(capsys.readouterr().out)[0]["details"]
    assert details["precisions"] == sacrebleu.corpus_bleu(hyps, [refs]).precisions


def test_confidence_intervals_are_the_bootstrap_of_compare(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`score --confidence`: each score's percentile interval over the same seeded bootstrap resamples as
    `compare --paired-bs` draws; the signature records them."""
    import ngrameval as ne

    hyps = {"a.txt": ["the cat sat on the mat", "a dog", "it rains", "hello there"],
            "b.txt": ["the cat", "a dog barks", "it is raining", "hello"]}  # fmt: skip
    refs = ["the cat sat on a mat", "a dog barks", "it rains today", "hello there"]
    files = [write(tmp_path / name, "\n".join(lines) + "\n") for name, lines in hyps.items()]
    ref = write(tmp_path / "ref.txt", "\n".join(refs) + "\n")
    args = ["score", *files, "-r", ref, "-m", "bleu,chrf", "--confidence", "--confidence-n", "200", "--seed", "7"]
    assert main([*args, "-f", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    cmp = ne.compare(hyps, refs, "bleu,chrf", test="bs", n_resamples=200, seed=7)
    for rec in got:
        m = next(m for m in cmp.metrics if m.metric == rec["metric"])
        s = next(s for s in m.systems if s.system == rec["system"])
        assert rec["interval"] == [s.ci_low * 100, s.ci_high * 100] and "|bs:200|seed:7|" in rec["signature"]
    assert main(args) == 0
    assert re.search(r"a\.txt\s+\d+\.\d\d \(\d+\.\d\d-\d+\.\d\d\)", capsys.readouterr().out)


def test_options_that_do_not_apply_are_reported(tmp_path: Path) -> None:
    """The global -tok/-lc/--stem reach only the metrics that use them; the others say so (one warning each)."""
    hyp = write(tmp_path / "h.txt", "The cat sat\n")
    argv = ["score", hyp, "-r", hyp, "-m", "bleu,rouge-l,chrf,ter", "-tok", "intl", "-lc", "--stem"]
    done = subprocess.run([sys.executable, "-m", "ngrameval", *argv], capture_output=True, text=True)
    warned = [ln for ln in done.stderr.splitlines() if "does not apply" in ln]
    assert done.returncode == 0 and not any("to BLEU" in ln for ln in warned)
    assert "ngrameval: warning: -tok intl does not apply to ROUGE-L: it tokenizes with rouge155" in done.stderr
    assert any("--stem does not apply to chrF2" in ln for ln in warned)
    assert any("-lc does not apply to TER" in ln for ln in warned) and len(warned) == 7
    quiet = subprocess.run([sys.executable, "-m", "ngrameval", "score", hyp, "-r", hyp, "-m", "bleu,rouge-l,chrf,ter"],
                           capture_output=True, text=True)  # fmt: skip
    assert "does not apply" not in quiet.stderr


def test_metrics_lists_every_option_with_its_default(capsys: pytest.CaptureFixture[str]) -> None:
    from ngrameval.metrics.registry import _FACTORIES, _KEYS, parse_spec

    assert main(["metrics", "-f", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    listed = {(r["metric"], r["option"]) for r in rows}
    assert listed == {(name, key) for name in _FACTORIES for key in _KEYS.get(name, {})}
    for r in rows:  # the listed default is what a spec setting it explicitly gives
        if r["default"] != "-" and r["metric"] != "rouge":
            name = r["metric"]
            assert parse_spec(f"{name}:{r['option']}={r['default']}").metric == parse_spec(name).metric, r
    assert main(["metrics"]) == 0
    out = capsys.readouterr().out
    assert "nist          profile       mteval   mteval|plain" in out and "Text options" in out


def test_names_and_strip_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ref = write(tmp_path / "ref.txt", "the cat sat\na dog\n")
    a = write(tmp_path / "newstest2019.uedin.6749.de-en", "the cat sat\na dog\n")
    b = write(tmp_path / "newstest2019.online-A.0.de-en", "the cat\na dog barks\n")
    assert main(["score", a, b, "-r", ref, "--strip-names", "-f", "json"]) == 0
    assert [r["system"] for r in json.loads(capsys.readouterr().out)] == ["uedin.6749", "online-A.0"]
    assert main(["compare", a, b, "-r", ref, "--names", "base", "new", "--paired-ar-n", "9", "-f", "json"]) == 0
    assert {s["system"] for s in json.loads(capsys.readouterr().out)["metrics"][0]["systems"]} == {"base", "new"}
    assert main(["score", a, b, "-r", ref, "--names", "x", "x"]) == 2
    assert "--names: 'x' given twice" in capsys.readouterr().err
    assert main(["score", a, "-r", ref, "--strip-names", "-f", "json"]) == 0  # one file: nothing to strip
    assert json.loads(capsys.readouterr().out)[0]["system"] == "newstest2019.uedin.6749.de-en"


@pytest.mark.parametrize("where", ["before", "after"])
def test_quiet_silences_warnings_not_errors(tmp_path: Path, where: str) -> None:
    hyp = write(tmp_path / "h.txt", "The cat sat\n")
    cmd = ["score", hyp, "-r", hyp, "-m", "rouge-l", "-tok", "intl"]
    argv = ["-q", *cmd] if where == "before" else [*cmd, "-q"]
    done = subprocess.run([sys.executable, "-m", "ngrameval", *argv], capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr == "" and "ROUGE-L" in done.stdout
    bad = subprocess.run([sys.executable, "-m", "ngrameval", *argv, "-w", "99"], capture_output=True, text=True)
    assert bad.returncode == 2 and "ngrameval: error:" in bad.stderr


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    found = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(found[0].choices) if found else {}


def test_a_command_line_builds_only_its_subcommand_and_it_is_the_whole_one() -> None:
    """Issue 32, item 6 (start-up): given the command line, the parser builds the options of the subcommand it runs
    only (the others are listed with their help line); that subcommand (and its own subcommands) is the one of the
    whole parser, option for option, and ``ngrameval --help`` is unchanged."""
    whole = build_parser()
    names = _subcommands(whole)
    assert {"score", "stats", "corpus", "collect", "report", "plane", "refcurve"} <= set(names)
    for name, full in names.items():
        built = build_parser([name, "x"])
        one = _subcommands(built)
        assert list(one) == list(names) and built.format_help() == whole.format_help()
        assert one[name].format_help() == full.format_help(), name
        assert sorted(one[name]._defaults) == sorted(full._defaults), name
        inner = [(k, p.format_help()) for k, p in _subcommands(one[name]).items()]
        assert inner == [(k, p.format_help()) for k, p in _subcommands(full).items()], name
        other = next(n for n in names if n != name)
        assert not [a for a in one[other]._actions if a.dest not in ("help", "quiet")]  # listed, not built
    typo = _subcommands(build_parser(["-q", "scor", "a.txt"]))  # not a subcommand: every one built, argparse says so
    assert all(typo[n].format_help() == p.format_help() for n, p in names.items())


def _corpus(rng: random.Random, n: int, seed_words: list[str]) -> list[str]:
    return [" ".join(rng.choices(seed_words, k=rng.randint(0, 9))) for _ in range(n)]


def _score_both(
    argv: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> list[tuple[int, bytes, str, list[str]]]:
    """``score argv`` with one job (read, then counted) and with three (counted while read): status, output, stderr
    and the warnings said."""
    out = []
    for jobs in ("1", "3"):
        target = tmp_path / f"out{jobs}.txt"
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            code = main([*argv, "--jobs", jobs, "-o", str(target)])
        told = [f"{w.category.__name__}: {w.message}" for w in said]
        out.append((code, target.read_bytes() if target.exists() else b"", capsys.readouterr().err, told))
    return out


@pytest.mark.parametrize(
    "extra",
    [[], ["--sentence", "-f", "json"], ["--names", "x", "y", "-m", "bleu,rouge-l,chrf,ter"], ["--strip-names"],
     ["-m", "pinc"], ["--confidence", "--confidence-n", "20"], ["--stem", "-m", "bleu,chrf"]],
)  # fmt: skip
def test_score_counted_while_read_is_the_serial_score(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], extra: list[str]
) -> None:
    """Issue 32, item 6: with --jobs >= 2 `score` counts chunks of aligned lines on the pool while it reads the next
    blocks; the output and the warnings are those of reading first and counting after, byte for byte (many small
    chunks here, two references, empty and non-ASCII lines, a CRLF file)."""
    monkeypatch.setattr(ngrameval.cli.score, "PIPELINE_CHUNK", 7)
    monkeypatch.setattr(ngrameval.io.read, "BLOCK", 64)
    rng = random.Random(3)
    words = ["the", "cat", "sat", "on", "mat", "été", "naïve", "dog", "0"]
    files = {}
    for name in ("sys.a.txt", "sys.b.txt", "r1.txt", "r2.txt"):
        text = "\n".join(_corpus(rng, 61, words)) + "\n"
        files[name] = write(tmp_path / name, text.replace("\n", "\r\n") if name == "r2.txt" else text)
    chunks: list[int] = []

    def spy(real: Any) -> Any:
        def counted(systems: Any, *args: Any, **kwargs: Any) -> Any:
            chunks.append(len(next(iter(systems.values()))))
            return real(systems, *args, **kwargs)

        return counted

    for name in ("measure", "measure_piece"):  # read first, then one call / a chunk on the pool
        monkeypatch.setattr(ngrameval.cli.score, name, spy(getattr(ngrameval.cli.score, name)))
    argv = ["score", files["sys.a.txt"], files["sys.b.txt"], "-r", files["r1.txt"], files["r2.txt"], *extra]
    if "-m" not in extra:
        argv += ["-m", "bleu,rouge-l,chrf"]
    pinc = "pinc" in extra  # needs --source: read first, as before
    if pinc:
        argv += ["--source", files["r1.txt"]]
    one, three = _score_both(argv, capsys, tmp_path)
    assert one == three and one[0] == 0
    assert bool(one[3]) == ("--stem" in extra or pinc)  # said once, as reading first says them
    assert chunks == ([61, 61] if pinc else [61, *[7] * 8, 5])  # one job: one call; three: chunks of 7


@pytest.mark.parametrize(
    "case",
    ["short-ref", "long-system", "bad-utf8-late", "bare-cr", "missing", "twice", "empty", "bad-names"],
)
def test_score_counted_while_read_says_the_serial_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    """Issue 32, item 6: whatever breaks while the files are read side by side (files of different lengths, a bad
    byte in a late block of the second system while the first chunks are counted, a file given twice, no line) is
    said as reading first says it: the same exit status, the same one line (or warning), nothing written."""
    monkeypatch.setattr(ngrameval.cli.score, "PIPELINE_CHUNK", 5)
    monkeypatch.setattr(ngrameval.io.read, "BLOCK", 32)
    lines = "".join(f"line {k} a b c\n" for k in range(40))
    a, b, r = (write(tmp_path / n, lines) for n in ("a.txt", "b.txt", "r.txt"))
    argv = ["score", a, b, "-r", r, "-m", "bleu"]
    if case == "short-ref":
        write(tmp_path / "r.txt", lines[: lines.index("line 30")])
    elif case == "long-system":
        write(tmp_path / "b.txt", lines + "one more\n")
    elif case == "bad-utf8-late":
        write(tmp_path / "b.txt", lines.encode() + b"\xff\n")
        write(tmp_path / "a.txt", lines[:20] + "\r" + lines[20:])  # an earlier fault, in a file read first
    elif case == "bare-cr":
        write(tmp_path / "r.txt", lines[:-1] + "\r")  # a CR at the very end: a line end, as ever
        write(tmp_path / "b.txt", lines.replace("line 33", "line\r33"))
    elif case == "missing":
        argv[2] = str(tmp_path / "nope.txt")
    elif case == "twice":
        argv[2] = a
    elif case == "empty":
        argv = ["score", write(tmp_path / "e1.txt", ""), write(tmp_path / "e2.txt", ""), "-r", r, "-m", "bleu"]
        write(tmp_path / "r.txt", "")
    elif case == "bad-names":
        argv += ["--names", "x"]
    one, three = _score_both(argv, capsys, tmp_path)
    assert one == three
    assert (one[0] == 0) == (case in ("twice", "empty")), one
    if one[0]:  # one line, nothing written
        assert one[2].startswith("ngrameval: error: ") and one[2].count("\n") == 1 and one[1] == b"", one
