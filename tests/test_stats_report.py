"""Issue 32 item 4: ``ngrameval report`` reads a stats file where the system files go. With its texts kept
(``stats --texts``) the page is the page of the text, byte for byte (the command block, which repeats the command
typed, aside); without them, every part the statistics give is the text's and one line says which parts need the
texts; a file of other references or metrics is refused in one line."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from ngrameval.cli import main
from ngrameval.cli.demo import sample_documents
from ngrameval.errors import InputError
from ngrameval.io.stats import Texts, read_table, to_bytes

pytest.importorskip("pyarrow")

SYSTEMS = ("M0", "M11", "M20")
FAST = ["--paired-ar-n", "199", "--confidence-n", "100", "--correlation-confidence-n", "50", "-q"]
COMMAND = re.compile(r"<details><summary>Command</summary><pre>.*?</pre></details>", re.S)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three SummEval systems, 20 documents, 4 references, a source and expert relevance per document."""
    d = tmp_path_factory.mktemp("stats_report")
    docs = sample_documents()
    for name in SYSTEMS:
        (d / name).write_text("".join(doc["systems"][name]["summary"] + "\n" for doc in docs), "utf-8")
    for k in range(4):
        (d / f"ref{k}").write_text("".join(doc["references"][k] + "\n" for doc in docs), "utf-8")
    (d / "source").write_text("".join(doc["references"][5] + "\n" for doc in docs), "utf-8")
    rows = [f"{s},{i + 1},{doc['systems'][s]['relevance']}" for i, doc in enumerate(docs) for s in SYSTEMS]
    (d / "judgments.csv").write_text("system,segment,relevance\n" + "\n".join(rows) + "\n", "utf-8")
    return d


def _texts(d: Path, source: bool = True) -> list[str]:
    refs = [str(d / f"ref{k}") for k in range(4)]
    return [*(str(d / s) for s in SYSTEMS), "-r", *refs, *(["--source", str(d / "source")] if source else [])]


def _judged(d: Path) -> list[str]:
    return ["-j", str(d / "judgments.csv"), "--score-columns", "relevance", "--segment-column", "segment",
            "--scale", "1,5"]  # fmt: skip


def _page(argv: list[str], out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    """The page ``report`` writes to ``out`` with its command block blanked (it repeats the command typed, so a
    stats file's report shows another command), and what it said on stderr."""
    capsys.readouterr()
    assert main(["report", *argv, "-o", str(out)]) == 0
    err = capsys.readouterr().err
    page = out.read_text("utf-8")
    assert len(COMMAND.findall(page)) == 1  # there is one, and only it is blanked
    return COMMAND.sub("<details>COMMAND</details>", page), err


@pytest.mark.slow  # three reports from text and three from statistics
@pytest.mark.parametrize("metrics", ["bleu,rouge-l", "chrf++,ter,aev:n=4,pinc", "nist,cider-d,rouge-2,bleu"])
def test_the_report_of_a_stats_file_with_its_texts_is_the_report_of_the_text(
    metrics: str, inputs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stats = tmp_path / "run.parquet"
    assert main(["stats", *_texts(inputs), "-m", metrics, "--texts", "-o", str(stats), "-q"]) == 0
    from_text, _ = _page([*_texts(inputs), "-m", metrics, *_judged(inputs), *FAST], tmp_path / "t.html", capsys)
    from_stats, err = _page([str(stats), *_judged(inputs), *FAST], tmp_path / "s.html", capsys)
    assert from_stats == from_text
    assert err == f"ngrameval: wrote {tmp_path / 's.html'}\n"
    for part in ('<h2 id="analysis">', '<h2 id="paraphrase">', '<h2 id="human-0">', "example"):
        assert part in from_stats  # the whole report: examples of segments and the paraphrase section included


def _sections(page: str) -> dict[str, str]:
    """The page's sections by their heading's id (up to the next ``<h2 id=``)."""
    parts = page.split('<h2 id="')[1:]
    return {p.split('"', 1)[0]: p for p in parts}


@pytest.mark.slow  # a report from text and one from statistics
def test_without_its_texts_the_report_has_every_part_of_the_statistics_and_says_what_is_absent(
    inputs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    metrics = "bleu,aev:n=4,chrf"  # aev:n=4 keeps the n-gram totals the (alpha, N) plane needs, at order 4
    stats = tmp_path / "run.parquet"
    assert main(["stats", *_texts(inputs), "-m", metrics, "-o", str(stats), "-q"]) == 0
    from_text, _ = _page([*_texts(inputs), "-m", metrics, *_judged(inputs), *FAST], tmp_path / "t.html", capsys)
    from_stats, err = _page([str(stats), *_judged(inputs), *FAST], tmp_path / "s.html", capsys)
    said = (f"Not in this report: the scores by sentence length, word accuracy, the n-grams, the example segments "
            f"and the paraphrase scores, which are computed from the texts: {stats} holds statistics without them "
            "(write it with ngrameval stats --texts to have them).")  # fmt: skip
    assert err == f"ngrameval: {said}\nngrameval: wrote {tmp_path / 's.html'}\n"
    assert f'<p class="note">{said}</p>' in from_stats
    text, kept = _sections(from_text), _sections(from_stats)
    assert list(kept) == ["scores", "significance", "human-0"]
    assert {"analysis", "paraphrase"} <= set(text)
    assert kept["scores"] == text["scores"] and kept["significance"] == text["significance"]
    assert kept["human-0"].startswith(text["human-0"])  # correlations and the plane (then the page's foot)
    assert '<h2 id="plane-0"' in text["human-0"] or 'id="plane-0"' in text["human-0"]
    assert "Best (α, N) cell" in from_stats.replace('<a href="#plane-0">', "").replace("</a>", "")


@pytest.mark.slow  # a report
def test_without_the_plane_s_statistics_the_report_says_why(
    inputs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stats = tmp_path / "run.parquet"
    assert main(["stats", *_texts(inputs, source=False), "-m", "chrf", "-o", str(stats), "-q"]) == 0
    page, err = _page([str(stats), *_judged(inputs), *FAST], tmp_path / "s.html", capsys)
    assert err.count("\n") == 2 and "the paraphrase scores" not in err
    assert (f"(alpha, N) plane: {stats} holds no n-gram statistics counted under tok:13a|case:mixed|stop:no|stem:no "
            "at order 4 or higher (count them with -m aev:n=4, or keep the texts with ngrameval stats --texts)"
            ) in page.replace("|<wbr>", "|")  # fmt: skip


@pytest.mark.slow  # three reports refused, after a stats run
def test_a_stats_file_of_other_references_or_metrics_is_refused_in_one_line(
    inputs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stats = tmp_path / "run.parquet"
    assert main(["stats", *_texts(inputs), "-m", "bleu,chrf", "--texts", "-o", str(stats), "-q"]) == 0
    capsys.readouterr()
    other = tmp_path / "other_ref"
    lines = (inputs / "ref0").read_text("utf-8").splitlines()
    other.write_text("".join(f"{x}\n" for x in [*lines[:6], "another reference", *lines[7:]]), "utf-8")
    refs = [str(other), *(str(inputs / f"ref{k}") for k in range(1, 4))]
    assert main(["report", str(stats), "-r", *refs, *FAST]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"{other}: references differ from those {stats} was counted on (first at segment 7)" in err
    assert main(["report", str(stats), "-m", "bleu:smooth=floor", *FAST]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{stats}: no statistics of BLEU" in err and "smooth:floor" in err
    assert main(["report", str(stats), str(stats), *FAST]) == 2
    assert "a stats file is read alone" in capsys.readouterr().err
    assert not (tmp_path / "out.html").exists()


@pytest.mark.slow  # four stats runs
def test_kept_texts_are_checked_against_their_digests_and_merged_with_the_shards(
    inputs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    whole, halves = tmp_path / "whole.parquet", [tmp_path / "a.parquet", tmp_path / "b.parquet"]
    texts = _texts(inputs)
    assert main(["stats", *texts, "-m", "bleu,rouge-l", "--texts", "-o", str(whole), "-q"]) == 0
    for k, (a, b) in enumerate(((0, 8), (8, 20))):
        cut = []
        for arg in texts:
            if arg.startswith("-"):
                cut.append(arg)
                continue
            lines = Path(arg).read_text("utf-8").splitlines()[a:b]
            (tmp_path / f"{Path(arg).name}.{k}").write_text("".join(f"{x}\n" for x in lines), "utf-8")
            cut.append(str(tmp_path / f"{Path(arg).name}.{k}"))
        names = ["--names", *SYSTEMS]
        assert main(["stats", *cut, *names, "-m", "bleu,rouge-l", "--texts", "-o", str(halves[k]), "-q"]) == 0
    streamed = tmp_path / "streamed.parquet"  # read in chunks of 7 segments: the texts kept chunk by chunk
    assert main(["stats", *texts, "-m", "bleu,rouge-l", "--texts", "--chunk-size", "7", "-o", str(streamed), "-q"]) == 0
    assert streamed.read_bytes() == whole.read_bytes()
    merged = tmp_path / "merged.parquet"
    assert main(["stats", "--merge", *map(str, halves), "-o", str(merged), "-q"]) == 0
    assert merged.read_bytes() == whole.read_bytes()  # the texts too: one file, bit for bit
    table = read_table(whole)
    assert table.texts is not None and table.texts.hyps[1][3] == (inputs / "M11").read_text("utf-8").splitlines()[3]
    bare = tmp_path / "bare.parquet"
    assert main(["stats", *_texts(inputs), "-m", "bleu,rouge-l", "-o", str(bare), "-q"]) == 0
    assert read_table(bare).texts is None
    capsys.readouterr()
    assert main(["stats", "--merge", str(halves[0]), str(bare), "-o", str(tmp_path / "x.parquet")]) == 2
    assert f"{bare}: lacks the texts, unlike {halves[0]}" in capsys.readouterr().err
    hyps = [list(h) for h in table.texts.hyps]
    hyps[1][0] = "edited"
    edited = Texts(tuple(map(tuple, hyps)), table.texts.refs, table.texts.source)

    (tmp_path / "edited.parquet").write_bytes(to_bytes(replace(table, texts=edited)))
    with pytest.raises(InputError, match="its texts do not match their digests"):
        read_table(tmp_path / "edited.parquet")
    assert np.array_equal(read_table(merged).refs, table.refs)
