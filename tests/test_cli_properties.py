"""Property-based tests of the command line (issue 15): arbitrary bytes as system, reference and judgment files,
and arbitrary option values, through ``ngrameval score``, ``compare`` and ``correlate``.

Properties: the exit status is 0 or 2 (never 1, an internal error, and never a traceback); on 2 stderr holds one
line starting ``ngrameval: error:``; on 0 the JSON output parses (no NaN) and every score is finite; no input file
is changed; no temporary file is left. ``NGRAMEVAL_SLOW=1`` runs 20x as many examples.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ngrameval.cli import main

EXAMPLES = 60 * (20 if os.environ.get("NGRAMEVAL_SLOW") else 1)
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))

# bytes that broke or could break readers: invalid UTF-8, BOMs, CR, NUL, U+2028 in UTF-8, tabs, quotes
SPECIAL = [b"\xff", b"\xef\xbb\xbf", b"\r", b"\r\n", b"\x00", b"\xe2\x80\xa8", b"\t", b'"', b",", b"0", b"\xed\xa0\x80"]
chunk = st.one_of(
    st.sampled_from(SPECIAL),
    st.sampled_from([b"the ", b"cat ", b"sat ", b"a ", b"b ", b"\n", b". "]),
    st.text(max_size=6).map(lambda t: t.encode("utf-8", "surrogatepass")),
)
content = st.lists(chunk, max_size=30).map(b"".join)
clean_line = st.lists(st.sampled_from(["the", "cat", "sat", "on", "a", "mat", "0"]), min_size=0, max_size=8).map(
    " ".join
)
METRICS = ["bleu", "nist", "rouge-l", "rouge-w", "rouge-su4", "chrf", "ter", "aev:alpha=0.3,n=2", "se", "bleu:eff=yes"]
option = st.sampled_from(
    [
        [],
        ["-lc"],
        ["--stem"],
        ["-tok", "intl"],
        ["-tok", "char"],
        ["--tsv"],
        ["--missing-empty-refs"],
        ["--sentence"],
        ["-w", "0"],
        ["--max-cells", "50"],
        ["--rouge-multi", "B"],
        ["--length-limit", "3"],
    ]
)


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exc:  # pragma: no cover - main() returns argparse's exits; kept as a guard
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def _check(code: int, out: str, err: str, files: dict[Path, bytes]) -> None:
    assert code in (0, 2), err
    assert "Traceback" not in err
    if code == 2:
        lines = [ln for ln in err.splitlines() if ln.strip() and "warning:" not in ln]
        assert len(lines) == 1 and lines[0].startswith("ngrameval: error:"), err
    for path, data in files.items():
        assert path.read_bytes() == data, path
    assert not [p for p in next(iter(files)).parent.iterdir() if p.name.endswith(".tmp")]


def _two_systems(d: Path, lines: list[tuple[str, str, str]], more: dict[str, bytes] | None = None) -> dict[Path, bytes]:
    """Writes a.txt, b.txt and ref.txt (the columns of ``lines``) and ``more`` into ``d``; returns them all."""
    files = {d / name: "".join(f"{row[k]}\n" for row in lines).encode() for k, name in enumerate(["a.txt", "b.txt",
             "ref.txt"])}  # fmt: skip
    files.update({d / name: data for name, data in (more or {}).items()})
    for path, data in files.items():
        path.write_bytes(data)
    return files


def _finite(value: object) -> None:
    if isinstance(value, float):
        assert math.isfinite(value)
    elif isinstance(value, dict):
        for v in value.values():
            _finite(v)
    elif isinstance(value, list):
        for v in value:
            _finite(v)


@SETTINGS
@given(hyp=content, ref=content, metrics=st.lists(st.sampled_from(METRICS), min_size=1, max_size=3), opts=option)
@pytest.mark.slow
def test_score_on_arbitrary_bytes(
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
    hyp: bytes,
    ref: bytes,
    metrics: list[str],
    opts: list[str],
) -> None:
    d = tmp_path_factory.mktemp("score")
    files = {d / "hyp.txt": hyp, d / "ref.txt": ref}
    for path, data in files.items():
        path.write_bytes(data)
    argv = ["score", str(d / "hyp.txt"), "-r", str(d / "ref.txt"), "-m", ",".join(metrics), "-f", "json", *opts]
    code, out, err = _run(argv, capsys)
    _check(code, out, err, files)
    if code == 0:
        _finite(json.loads(out))


@SETTINGS
@given(
    lines=st.lists(st.tuples(clean_line, clean_line, clean_line), min_size=1, max_size=6),
    judgments=content,
    extra=st.sampled_from([[], ["--level", "segment", "--segment-column", "seg"], ["--coefficients", "kendall-b"]]),
)
@pytest.mark.slow
def test_correlate_on_arbitrary_judgments(
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
    lines: list[tuple[str, str, str]],
    judgments: bytes,
    extra: list[str],
) -> None:
    d = tmp_path_factory.mktemp("correlate")
    files = _two_systems(d, lines, {"j.csv": b"system,seg,score\n" + judgments})
    argv = ["correlate", str(d / "a.txt"), str(d / "b.txt"), "-r", str(d / "ref.txt"), "-j", str(d / "j.csv")]
    code, out, err = _run([*argv, "-f", "json", *extra], capsys)
    _check(code, out, err, files)
    if code == 0:
        json.loads(out)


@SETTINGS
@given(
    lines=st.lists(st.tuples(clean_line, clean_line, clean_line), min_size=1, max_size=6),
    opts=st.sampled_from([[], ["--paired-bs", "--paired-bs-n", "30"], ["--paired-ar-n", "50"], ["--baseline"]]),
    metrics=st.lists(st.sampled_from(METRICS), min_size=1, max_size=2),
)
@pytest.mark.slow
def test_compare_on_small_corpora(
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
    lines: list[tuple[str, str, str]],
    opts: list[str],
    metrics: list[str],
) -> None:
    d = tmp_path_factory.mktemp("compare")
    files = _two_systems(d, lines)
    argv = ["compare", str(d / "a.txt"), str(d / "b.txt"), "-r", str(d / "ref.txt"), "-m", ",".join(metrics)]
    code, out, err = _run([*argv, "-f", "json", "--seed", "1", *opts], capsys)
    _check(code, out, err, files)
    if code == 0:
        json.loads(out)
