"""ROUGE options that keep defaults from misleading: the non-ASCII warning, sentence splitting (rougeLsum with
split_summaries), Unicode normalisation of every metric, and recall/precision/F in every output format -- each
against rouge-score where it has the same thing."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import unicodedata
import warnings
from pathlib import Path

import numpy as np
import pytest
from rouge_score import rouge_scorer

import ngrameval as ne
from ngrameval.cli import main
from ngrameval.errors import ConfigError, MissingDependencyError
from ngrameval.metrics.registry import parse_specs
from ngrameval.text import sentences as sentences_module
from ngrameval.text.normalize import normalize_texts
from ngrameval.text.sentences import split_line, split_sentences

SUMMEVAL = Path(__file__).resolve().parents[2] / "shared" / "data" / "summeval" / "summeval.jsonl"

HYPS = [
    "The cat sat on the mat. It was happy there!",
    "Dr. Smith arrived at 3 p.m. on Jan. 5. The U.S. team won 2-1. Fans cheered.",
    "short",
    "",
    "Markets fell. Oil rose 2.5% on Monday. Analysts expect more.",
]
REFS = [
    "A cat was sitting on the mat. The cat seemed happy.",
    "Smith came at 3 p.m. The U.S. side won the match 2-1. The crowd cheered loudly.",
    "a short text",
    "nothing here",
    "Oil rose 2.5% on Monday while markets fell. More is expected.",
]


def _texts() -> tuple[list[str], list[str]]:
    """SummEval summaries and their first reference (the real, detokenised-case texts) when present, else HYPS."""
    if not SUMMEVAL.is_file():
        return HYPS, REFS
    rows = [json.loads(x) for x in SUMMEVAL.read_text(encoding="utf-8").split("\n") if x][:120]
    return [r["summary"] for r in rows], [r["references"][0] for r in rows]


# ---------------------------------------------------------------- the non-ASCII warning


def test_warning_counts_segments_and_references_that_lose_every_token() -> None:
    hyps = ["привет мир", "a cat", "東京 2020", "café"]  # "東京 2020" keeps 2020, "café" keeps caf
    refs = ["мир", "Ελλάδα", "a cat", "x"]
    with pytest.warns(UserWarning) as rec:
        got = ne.rouge(hyps, refs, ["rouge-1"])
    (w,) = [str(r.message) for r in rec]
    assert "(rouge155 profile" in w and "1 of 4 system segments and 2 of 4 references" in w
    assert "lose all their tokens" in w and "--rouge-profile unicode" in w and "profile='unicode'" in w
    assert got["rouge-1"].items.f[0] == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the advice works: no warning, and the Cyrillic pair scores
        assert ne.rouge(hyps, refs, ["rouge-1"], profile="unicode")["rouge-1"].items.f[0] == pytest.approx(2 / 3)


def test_warning_on_the_command_line(tmp_path: Path) -> None:
    a, b, r = tmp_path / "a", tmp_path / "b", tmp_path / "r"
    a.write_text("привет\ncat\n", encoding="utf-8")
    b.write_text("мир\nдом\n", encoding="utf-8")
    r.write_text("привет\ncat\n", encoding="utf-8")
    argv = ["score", str(a), str(b), "-r", str(r), "-m", "rouge-1", "--rouge-profile", "rouge-score"]
    done = subprocess.run(
        [sys.executable, "-m", "ngrameval", *argv], capture_output=True, text=True
    )  # stderr as printed
    assert done.returncode == 0
    err = done.stderr
    assert err.count("warning") == 1
    assert "rouge-score profile" in err and "3 of 4 system segments and 1 of 2 references" in err


# ---------------------------------------------------------------- sentence splitting


def test_splitter_finds_sentences_and_changes_no_character() -> None:
    assert split_line("Mr. Smith went to Washington. He arrived at 3 p.m. today.") == [
        "Mr. Smith went to Washington.",
        "He arrived at 3 p.m. today.",
    ]
    assert split_line("The U.S. economy grew 2.5% in 2019.") == ["The U.S. economy grew 2.5% in 2019."]
    # pysbd rewrites this punctuation run (its own sentences overlap): nothing lost, no boundary invented
    odd = "He said . ` wanted ! ! ! ! !"
    assert "".join(split_line(odd)).replace(" ", "") == odd.replace(" ", "")
    assert split_sentences(["One. Two.\nThree. Four.", "", "  "]) == ["One.\nTwo.\nThree.\nFour.", "", "  "]
    texts, _ = _texts()
    for t, s in zip(texts, split_sentences(texts)):
        assert "".join(s.split()) == "".join(t.split())


def _rouge_score_split(monkeypatch: pytest.MonkeyPatch) -> rouge_scorer.RougeScorer:
    """rouge-score with split_summaries=True, its nltk.sent_tokenize (punkt: a download) replaced by our splitter:
    the same sentences, so its summary-level LCS must give the same numbers."""
    monkeypatch.setattr(rouge_scorer.nltk, "sent_tokenize", lambda text: split_sentences([text])[0].split("\n"))
    return rouge_scorer.RougeScorer(["rougeLsum"], split_summaries=True)


@pytest.mark.slow
def test_rouge_lsum_split_equals_rouge_score_split_summaries(monkeypatch: pytest.MonkeyPatch) -> None:
    hyps, refs = _texts()
    scorer = _rouge_score_split(monkeypatch)
    expected = [scorer.score(r, h)["rougeLsum"] for h, r in zip(hyps, refs)]
    got = ne.rouge(hyps, refs, ["rouge-lsum"], profile="rouge-score", sentences="pysbd")["rouge-lsum"]
    np.testing.assert_allclose(got.items.f, [s.fmeasure for s in expected], rtol=0, atol=1e-12)
    np.testing.assert_allclose(got.items.recall, [s.recall for s in expected], rtol=0, atol=1e-12)
    np.testing.assert_allclose(got.items.precision, [s.precision for s in expected], rtol=0, atol=1e-12)
    # and rouge-score on text already split by the splitter (split_summaries off: newlines)
    plain = rouge_scorer.RougeScorer(["rougeLsum"])
    pre = [plain.score(r, h)["rougeLsum"].fmeasure for h, r in zip(split_sentences(hyps), split_sentences(refs))]
    np.testing.assert_allclose(got.items.f, pre, rtol=0, atol=1e-12)
    # off by default: a line is one sentence, as rouge-score without split_summaries
    off = ne.rouge(hyps, refs, ["rouge-lsum"], profile="rouge-score")["rouge-lsum"]
    np.testing.assert_allclose(off.items.f, [plain.score(r, h)["rougeLsum"].fmeasure for h, r in zip(hyps, refs)])
    assert "sents:pysbd" in got.signature and "sents" not in off.signature
    assert not np.array_equal(off.items.f, got.items.f)


def test_sentences_option_in_spec_and_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (spec,) = parse_specs("rouge-l:sentences=pysbd")
    assert spec.metric.sentences == "pysbd"  # type: ignore[union-attr]
    with pytest.raises(ConfigError, match="expected one of lines, pysbd, got 'punkt'"):
        parse_specs("rouge-l:sentences=punkt")
    h, r = tmp_path / "h", tmp_path / "r"
    h.write_text("\n".join(HYPS) + "\n", encoding="utf-8")
    r.write_text("\n".join(REFS) + "\n", encoding="utf-8")
    assert main(["score", str(h), "-r", str(r), "-m", "rouge-l", "--rouge-sentences", "pysbd", "-f", "json"]) == 0
    (rec,) = json.loads(capsys.readouterr().out)
    assert "|sents:pysbd|" in rec["signature"]
    want = ne.rouge(HYPS, REFS, ["rouge-l"], sentences="pysbd")["rouge-l"].f
    assert rec["score"] == pytest.approx(100 * want, abs=1e-12)


def test_sentences_without_pysbd_say_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pysbd", None)
    monkeypatch.setattr(sentences_module, "_local", type(sentences_module._local)())
    with pytest.raises(MissingDependencyError, match=r"pip install 'ngrameval\[sentences\]'"):
        ne.rouge(["A b. C d."], ["A b."], ["rouge-l"], sentences="pysbd")


# ---------------------------------------------------------------- Unicode normalisation


COMPOSED = ["Le café est fermé. Où est Zoë?", "naïve résumé"]
DECOMPOSED = [unicodedata.normalize("NFD", t) for t in COMPOSED]


@pytest.mark.parametrize(
    "spec", ["bleu", "nist", "chrf", "chrf++", "ter", "rouge-1:profile=unicode", "rouge-l:profile=unicode", "cider-d"]
)
def test_nfc_makes_composed_and_decomposed_score_alike(spec: str) -> None:
    refs = [[t] for t in COMPOSED]
    for norm in (None, "nfc"):
        (s,) = parse_specs(spec, ne.Preprocess(normalize=norm))
        same = ne.score({"x": COMPOSED}, refs, [s])[0]
        other = ne.score({"x": DECOMPOSED}, refs, [s])[0]
        if norm is None:
            assert other.score != same.score and "nf:" not in same.signature
        else:
            assert other.score == same.score and "|nf:nfc|" in same.signature


def test_normalize_in_api_functions_spec_and_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert ne.bleu(DECOMPOSED, COMPOSED, normalize="nfc").score == 1.0
    assert ne.bleu(DECOMPOSED, COMPOSED).score < 1.0
    assert ne.nist(DECOMPOSED, COMPOSED, normalize="nfc").score == ne.nist(COMPOSED, COMPOSED).score
    assert ne.aev(DECOMPOSED, COMPOSED, normalize="nfc").score == ne.aev(COMPOSED, COMPOSED).score
    got = ne.rouge(DECOMPOSED, COMPOSED, ["rouge-1"], profile="unicode", normalize="nfc")["rouge-1"]
    assert got.f == 1.0 and "|nf:nfc|" in got.signature
    # NFKC folds compatibility forms (ligature, full-width letters); NFC does not
    folded = ["ﬁne ＡＢ ｃ d", "the ﬁrst ２ cats"]
    plain = ["fine AB c d", "the first 2 cats"]
    assert ne.bleu(folded, plain, normalize="nfkc").score == 1.0
    assert ne.bleu(folded, plain, normalize="nfc").score < 0.2
    (spec,) = parse_specs("bleu:normalize=nfkc")
    assert spec.pre.normalize == "nfkc"
    with pytest.raises(ConfigError, match="unknown Unicode normalisation 'nfd'"):
        parse_specs("bleu:normalize=nfd")
    h, r = tmp_path / "h", tmp_path / "r"
    h.write_text("\n".join(DECOMPOSED) + "\n", encoding="utf-8")
    r.write_text("\n".join(COMPOSED) + "\n", encoding="utf-8")
    assert main(["score", str(h), "-r", str(r), "-m", "bleu,chrf", "--normalize", "nfc", "-f", "json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    assert [x["score"] for x in recs] == [100.0, 100.0] and all("|nf:nfc|" in x["signature"] for x in recs)
    assert main(["score", str(h), "-r", str(r), "--normalize", "nfd"]) == 2
    assert "invalid choice: 'nfd'" in capsys.readouterr().err
    assert normalize_texts(COMPOSED, None) is COMPOSED


@pytest.mark.parametrize("unit", ["word", "char"])
def test_plane_honours_normalize(unit: str) -> None:
    """The API's plane normalises like every scorer (the character plane too): decomposed outputs against
    composed references give the plane of composed outputs under NFC, another one without it."""
    from ngrameval.meta.correlate import HumanScores
    from ngrameval.meta.plane import plane

    human = HumanScores("q", ("a", "b", "c"), np.array([1.0, 2.0, 3.0]), None, 3, 0)
    composed = {"a": ["café fermé"], "b": ["le café est fermé"], "c": COMPOSED[:1]}
    decomposed = {k: [unicodedata.normalize("NFD", t) for t in v] for k, v in composed.items()}
    refs = [[COMPOSED[0]]]
    grid = {"alphas": (0.0, 0.5, 1.0), "orders": (1, 2), "unit": unit, "coefficient_name": "pearson"}
    want = plane(composed, refs, human, **grid)
    nfc = plane(decomposed, refs, human, pre=ne.Preprocess(normalize="nfc"), **grid)
    raw = plane(decomposed, refs, human, **grid)
    assert np.array_equal(nfc.values, want.values, equal_nan=True)
    assert not np.array_equal(raw.values, want.values, equal_nan=True)


# ---------------------------------------------------------------- recall, precision and F


RPF = ["--rouge-profile", "rouge-score", "--rouge-stats", "rpf", "-m", "rouge-1,rouge-2,rouge-l,rouge-lsum"]
TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
NAMES = ["ROUGE-1", "ROUGE-2", "ROUGE-L-sent", "ROUGE-Lsum"]


def _rouge_score_means() -> dict[tuple[str, str], float]:
    """(ngrameval's metric name, R/P/F) -> rouge-score's mean x100 over the segments."""
    scorer = rouge_scorer.RougeScorer(TYPES)
    per = [scorer.score(r, h) for h, r in zip(HYPS, REFS)]
    out = {}
    for t, name in zip(TYPES, NAMES):
        out[f"{name}-R", "r"] = 100 * float(np.mean([s[t].recall for s in per]))
        out[f"{name}-P", "p"] = 100 * float(np.mean([s[t].precision for s in per]))
        out[name, "f"] = 100 * float(np.mean([s[t].fmeasure for s in per]))
    return out


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    h, r = tmp_path / "sys", tmp_path / "ref"
    h.write_text("\n".join(HYPS) + "\n", encoding="utf-8")
    r.write_text("\n".join(REFS) + "\n", encoding="utf-8")
    return str(h), str(r)


def test_rpf_equals_rouge_score_in_json_and_csv(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    h, r = files
    want = _rouge_score_means()
    assert main(["score", h, "-r", r, *RPF, "-f", "json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    assert [x["metric"] for x in recs] == [m for name in NAMES for m in (f"{name}-R", f"{name}-P", name)]
    for x in recs:
        stat = x["signature"].split("|stat:")[1][0]
        assert x["score"] == pytest.approx(want[x["metric"], stat], abs=1e-9), x["metric"]
    assert main(["score", h, "-r", r, *RPF, "-f", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(row["metric"], float(row["score"])) for row in rows] == [(x["metric"], x["score"]) for x in recs]


@pytest.mark.parametrize("fmt", ["text", "markdown", "latex"])
def test_rpf_tables(files: tuple[str, str], capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    h, r = files
    want = _rouge_score_means()
    assert main(["score", h, "-r", r, *RPF, "-f", fmt, "-w", "4"]) == 0
    out = capsys.readouterr().out
    for (metric, _), value in want.items():
        assert metric in out
        assert f"{value:.4f}" in out, (metric, value)


def test_rpf_score_only_and_defaults(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    h, r = files
    assert main(["score", h, "-r", r, "-m", "rouge-1,rouge-l:stat=p,bleu", "--rouge-stats", "rpf", "-b"]) == 0
    lines = capsys.readouterr().out.split()
    assert len(lines) == 3 + 1 + 1  # R, P, F of rouge-1; the spec's own stat=p; BLEU
    assert main(["score", h, "-r", r, "-m", "rouge-1", "-f", "json"]) == 0  # default: F only
    assert [x["metric"] for x in json.loads(capsys.readouterr().out)] == ["ROUGE-1"]
    specs = parse_specs("rouge-2", rouge={"stats": "rpf", "profile": "rouge-score"})
    assert [s.metric.display_name() for s in specs] == ["ROUGE-2-R", "ROUGE-2-P", "ROUGE-2"]
    with pytest.raises(ConfigError, match="ROUGE stats must be one of f, rpf"):
        parse_specs("rouge-2", rouge={"stats": "pr"})
    rows = ne.measure({"s": HYPS}, REFS, specs)
    api = ne.rouge(HYPS, REFS, ["rouge-2"], profile="rouge-score")["rouge-2"]
    assert [float(x.corpus()[0]) for x in rows] == pytest.approx([api.recall, api.precision, api.f], abs=1e-15)
