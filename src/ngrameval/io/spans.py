"""Error-span annotations (MQM, ESA) read strictly from TSV: one row per span, Google's MQM layout.

Columns (header row, tab-separated, no quoting — as Google's ``mqm_newstest*.tsv`` and mt-metrics-eval read them):
``system``, ``doc``, ``doc_id`` (the segment's 1-based number in its document; ``seg_id`` is accepted instead),
``rater``, ``category``, ``severity``; optional ``source``, ``target`` (a span marked ``<v>…</v>`` in the target
gives its character offsets), ``start``/``end`` (character offsets in the target, end exclusive; they win over
``<v>`` marks) and ``score`` (ESA: the rater's 0-100 score of the segment, the same on each of its rows). A
segment a rater found no error in has one row with severity ``No-error`` (MQM) or an empty severity (ESA). Every
error names the file and the line.
"""

from __future__ import annotations

from dataclasses import dataclass

from ngrameval.errors import InputError
from ngrameval.io.read import read_text
from ngrameval.io.records import cell_score

REQUIRED = ("system", "doc", "rater", "category", "severity")
NO_ERROR = ("", "no-error", "none")  # severities of a row that only records that the rater saw the segment


@dataclass(frozen=True)
class Span:
    """One annotated row: ``start``/``end`` are target character offsets (``None`` when the row has none, e.g.
    an omission or a no-error row); ``score`` the rater's ESA score of the segment (``None`` in MQM files)."""

    system: str
    doc: str
    doc_id: int
    rater: str
    category: str
    severity: str
    start: int | None
    end: int | None
    score: float | None
    line: int
    path: str = ""

    @property
    def segment(self) -> str:
        """``doc:doc_id``, the segment's name."""
        return f"{self.doc}:{self.doc_id}"

    @property
    def is_error(self) -> bool:
        return self.severity.strip().lower() not in NO_ERROR


def _marked(target: str) -> tuple[int, int] | None:
    """Offsets of the ``<v>…</v>`` span in ``target`` once the marks are removed."""
    a = target.find("<v>")
    b = target.find("</v>")
    if a < 0 or b < a:
        return None
    return a, b - 3


def _int(path: str, line: int, col: str, raw: str) -> int:
    try:
        v = int(raw)
    except ValueError:
        raise InputError(f"{path}:{line}: column {col!r} must be an integer, got {raw!r}") from None
    if v < 0:
        raise InputError(f"{path}:{line}: column {col!r} must be >= 0, got {v}")
    return v


def _offsets(path: str, line: int, rec: dict[str, str]) -> tuple[int | None, int | None]:
    if rec.get("start", "") != "" or rec.get("end", "") != "":
        start, end = _int(path, line, "start", rec.get("start", "")), _int(path, line, "end", rec.get("end", ""))
        if end < start:
            raise InputError(f"{path}:{line}: span end {end} is before its start {start}")
        return start, end
    got = _marked(rec.get("target", ""))
    return got if got else (None, None)


def read_spans(path: str) -> list[Span]:
    """Every row of an MQM/ESA span file (see the module docstring)."""
    lines = read_text(path).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        raise InputError(f"{path}: empty file; expected a header row with {', '.join(REQUIRED)}")
    header = lines[0].split("\t")
    seg_col = "doc_id" if "doc_id" in header else "seg_id"
    missing = [c for c in (*REQUIRED, seg_col) if c not in header]
    if missing:
        raise InputError(f"{path}:1: missing column(s) {', '.join(missing)} (found: {', '.join(header)})")
    out = []
    for k, text in enumerate(lines[1:], start=2):
        cells = text.split("\t")
        if len(cells) != len(header):
            raise InputError(f"{path}:{k}: {len(cells)} fields, the header has {len(header)}")
        rec = dict(zip(header, cells, strict=True))
        start, end = _offsets(path, k, rec)
        out.append(
            Span(rec["system"], rec["doc"], _int(path, k, seg_col, rec[seg_col]), rec["rater"], rec["category"],
                 rec["severity"], start, end, cell_score(path, k, "score", rec.get("score")), k, path)
        )  # fmt: skip
    return out
