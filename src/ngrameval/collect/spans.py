"""Error spans of ESA and MQM studies: the marks a page sends, checked against the trial's output on the server;
stored with the trial's answer (table ``span``, :class:`~ngrameval.collect.models.SpanRow`); exported in Google's
MQM TSV layout, which :func:`ngrameval.io.spans.read_spans` reads back and :mod:`ngrameval.meta.mqm` scores.

A page sends its marks as one form field, a JSON list of objects ``{"start": s, "end": e, "severity": ...,
"category": ...}`` (an omission: ``{"missing": true, "severity": ..., "category": ...}``, no offsets). Offsets
count characters as Python ``str`` indices do — Unicode code points, so an emoji is one character (the page counts
with ``Array.from``, which iterates code points) — and ``end`` is exclusive."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ngrameval.collect.export import cell
from ngrameval.collect.models import Annotator, RatingRow, SpanRow, TrialRow
from ngrameval.collect.repo import Submitted
from ngrameval.collect.span_rules import SpanRules
from ngrameval.collect.study import Study
from ngrameval.collect.trials import Trials
from ngrameval.errors import InputError
from ngrameval.meta.mqm import MQM_WEIGHTS, span_weight

MISSING = "[missing]"  # how the page and the export's target show an omission
NO_ERROR = "No-error"  # Google's MQM category and severity of a segment a rater found no error in
COLUMNS = ("system", "doc", "doc_id", "item", "rater", "source", "target", "category", "severity", "start", "end")
TARGET = COLUMNS.index("target")


@dataclass(frozen=True)
class Mark:
    """One span of the output (``start``/``end``: character offsets, end exclusive) or an omission (both None)."""

    start: int | None
    end: int | None
    severity: str
    category: str = ""

    @property
    def missing(self) -> bool:
        return self.start is None


def _int(value: Any, k: int, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"mark {k + 1}: {key!r} must be a whole number of characters, got {value!r}")
    return value


def _mark(entry: Any, k: int, text: str, rules: SpanRules) -> Mark:
    """One entry of the page's list, checked against ``text`` and ``rules``."""
    if not isinstance(entry, dict):
        raise InputError(f"mark {k + 1}: expected an object, got {type(entry).__name__}")
    extra = sorted(set(entry) - {"start", "end", "severity", "category", "missing"})
    if extra:
        raise InputError(f"mark {k + 1}: unknown field(s) {', '.join(map(str, extra))[:80]}")
    severity, category = entry.get("severity", ""), entry.get("category", "")
    if severity not in rules.severities:
        raise InputError(f"mark {k + 1}: choose a severity ({', '.join(rules.severities)}), got {str(severity)[:40]!r}")
    if rules.categories and category not in rules.leaves:
        raise InputError(f"mark {k + 1}: choose a category from the list, got {str(category)[:60]!r}")
    if not rules.categories and category not in ("", None):
        raise InputError(f"mark {k + 1}: this study has no categories, got {str(category)[:60]!r}")
    if entry.get("missing", False) is True:
        if entry.get("start") is not None or entry.get("end") is not None:
            raise InputError(f"mark {k + 1}: an omission ({MISSING}) has no offsets")
        return Mark(None, None, severity, category or "")
    if "missing" in entry and entry["missing"] is not False:
        raise InputError(f"mark {k + 1}: 'missing' must be true or false")
    start, end = _int(entry.get("start"), k, "start"), _int(entry.get("end"), k, "end")
    if not 0 <= start < end <= len(text):
        raise InputError(
            f"mark {k + 1}: characters {start}..{end} are not a span of the text (0 <= start < end <= {len(text)})"
        )
    return Mark(start, end, severity, category or "")


def parse_marks(raw: str, text: str, rules: SpanRules) -> tuple[Mark, ...]:
    """The marks of the page's JSON field ``raw`` on output ``text``: offsets within the text, severities and
    categories of ``rules``, at most ``rules.max_spans``, no two spans sharing a character unless
    ``rules.allow_overlap`` (never the same span twice). An :class:`InputError` says what is wrong."""
    try:
        data = json.loads(raw or "[]", parse_constant=lambda c: c)  # NaN / Infinity stay strings: refused below
    except (ValueError, RecursionError):
        raise InputError("the marks are not readable (reload the page)") from None
    if not isinstance(data, list):
        raise InputError("the marks must be a list")
    if len(data) > rules.max_spans:
        raise InputError(f"at most {rules.max_spans} marks per text, got {len(data)}")
    marks = tuple(_mark(e, k, text, rules) for k, e in enumerate(data))
    placed = sorted((m.start, m.end, k) for k, m in enumerate(marks) if m.start is not None and m.end is not None)
    for (s1, e1, k1), (s2, e2, k2) in pairwise(placed):
        if (s1, e1) == (s2, e2):
            raise InputError(f"marks {min(k1, k2) + 1} and {max(k1, k2) + 1} are the same span")
        if s2 < e1 and not rules.allow_overlap:
            raise InputError(f"marks {min(k1, k2) + 1} and {max(k1, k2) + 1} overlap; this study does not allow it")
    return marks


def submit_marks(
    store: Trials, aid: int, lease: str, raw: str, scores: dict[str, float], assignment: int | None = None
) -> Submitted:
    """Answer the trial of form token ``lease`` with the marks of ``raw`` (checked against that trial's output:
    an :class:`InputError`, nothing stored) and ``scores`` (ESA: ``{"esa": 0..100}``), in one transaction and
    once, as :meth:`~ngrameval.collect.trials.Trials.submit_rating` answers a rating. An MQM answer also gets
    the rating ``mqm`` = :func:`mqm_score` of its marks, so that judgments.csv, the judge checks (repeats), the
    ledger and the datasheet count it as they count any rating."""
    rules = store.study.spans
    if rules is None:
        raise InputError(f"a {store.study.kind!r} study has no spans")

    def add(s: Session, t: TrialRow) -> None:
        marks = parse_marks(raw, t.output, rules)
        s.add_all(
            SpanRow(trial_id=t.id, position=k, start=m.start, end=m.end, severity=m.severity, category=m.category)
            for k, m in enumerate(marks)
        )
        if store.study.kind == "mqm":
            s.add(RatingRow(trial_id=t.id, criterion="mqm", score=mqm_score(marks, rules.weight_map)))

    return store.submit_rating(aid, lease, scores, assignment, extra=add)


def mqm_score(marks: Sequence[Mark], weights: Mapping[str, float] = MQM_WEIGHTS) -> float:
    """One rater's MQM score of a segment: minus the sum of the weights of its marks (the study's ``[spans]
    weights``, by default Google's, :data:`ngrameval.meta.mqm.MQM_WEIGHTS`; 0 for no error, higher is better)."""
    return 0.0 - math.fsum(span_weight(m.severity, m.category, weights) for m in marks)


Answer = tuple[TrialRow, Annotator, tuple[Mark, ...], float | None]


def answers(store: Trials, aid: int | None = None, controls: bool = False) -> list[Answer]:
    """Every answered normal trial (of annotator ``aid``; with ``controls`` also repeats and other controls) with
    its annotator, its marks (in the annotator's order) and its ESA score (None in MQM)."""
    with store.session() as s:
        q = (
            select(TrialRow, Annotator)
            .join(Annotator, Annotator.id == TrialRow.annotator_id)
            .where(TrialRow.token.is_not(None))
            .order_by(TrialRow.annotator_id, TrialRow.position)
        )
        q = q if controls else q.where(TrialRow.kind == "normal")
        rows = s.execute(q if aid is None else q.where(TrialRow.annotator_id == aid)).all()
        marks: dict[int, list[Mark]] = defaultdict(list)
        for r in s.scalars(select(SpanRow).order_by(SpanRow.trial_id, SpanRow.position)):
            marks[r.trial_id].append(Mark(r.start, r.end, r.severity, r.category))
        score = {
            t: v for t, v in s.execute(select(RatingRow.trial_id, RatingRow.score).where(RatingRow.criterion == "esa"))
        }
    return [(t, a, tuple(marks[t.id]), score.get(t.id)) for t, a in rows]


def tone(severity: str) -> str:
    """The page's colour class of a severity: ``m-major``, ``m-minor`` or ``m-other``."""
    low = severity.lower()
    return f"m-{low}" if low in ("major", "minor") else "m-other"


def pieces(text: str, marks: Sequence[Mark]) -> list[tuple[str, str]]:
    """``text`` cut where its marks begin and end: (piece, colour class of the last mark covering it, or "")
    in order (for the admin's review; the pieces join to ``text``)."""
    cls = [""] * len(text)
    for m in marks:
        if m.start is not None and m.end is not None:
            cls[m.start : m.end] = [tone(m.severity)] * (m.end - m.start)
    out: list[tuple[str, str]] = []
    for k, ch in enumerate(text):
        if out and out[-1][1] == cls[k]:
            out[-1] = (out[-1][0] + ch, cls[k])
        else:
            out.append((ch, cls[k]))
    return out


def segments(items: Sequence[tuple[str, str]]) -> dict[str, tuple[str, int]]:
    """Item -> (doc, doc_id) of the export: the manifest's ``doc`` with the item's 1-based place among that doc's
    items (manifest order); an item without a doc is a document of its own (doc = the item, doc_id = 1)."""
    out: dict[str, tuple[str, int]] = {}
    count: dict[str, int] = defaultdict(int)
    for item, doc in items:
        if item in out:
            continue
        if doc:
            count[doc] += 1
            out[item] = (doc, count[doc])
        else:
            out[item] = (item, 1)
    return out


def segment_names(study: Study) -> list[str]:
    """``doc:doc_id`` of every item (manifest order): the segment names ``--judgments-layout mqm|esa`` gives."""
    seg = segments([(i.item, i.doc) for i in study.items if i.expected is None])
    return [f"{doc}:{k}" for doc, k in seg.values()]


def _flat(text: str) -> str:
    """Tabs and line breaks as spaces, one for one (a TSV cell without quoting; offsets unchanged)."""
    return text.translate({ord(c): " " for c in "\t\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"})


def marked(text: str, m: Mark) -> str:
    """``text`` with ``m`` between ``<v>`` and ``</v>`` (an omission: the text as it is)."""
    if m.start is None or m.end is None:
        return text
    return f"{text[: m.start]}<v>{text[m.start : m.end]}</v>{text[m.end :]}"


def spans_tsv(store: Trials, rater: Callable[[Annotator], str]) -> str:
    """The answers as Google's MQM TSV (columns :data:`COLUMNS`, ESA adds ``score``): one row per mark, a trial
    without marks one row of severity ``No-error`` (MQM) or an empty one (ESA); ``rater`` names an annotator.
    Rows in the order system, doc, doc_id, rater (manifest order). Cells that a spreadsheet would run get a
    leading quote (:func:`ngrameval.collect.export.cell`), but for the target, which the offsets point into."""
    st = store.study
    esa = st.kind == "esa"
    seg = segments([(i.item, i.doc) for i in st.items if i.expected is None])
    systems = {name: k for k, name in enumerate(st.systems)}
    docs = {d: k for k, d in enumerate(dict.fromkeys(d for d, _ in seg.values()))}
    lines = ["\t".join([*COLUMNS, *(["score"] if esa else [])])]
    named = [(t, rater(a), marks, score) for t, a, marks, score in answers(store)]
    named.sort(key=lambda x: (systems.get(x[0].system, 0), docs[seg[x[0].item][0]], seg[x[0].item][1], x[1]))
    for t, who, marks, score in named:
        doc, doc_id = seg[t.item]
        target, source = _flat(t.output), _flat(t.source)
        rows = marks or (Mark(None, None, "" if esa else NO_ERROR, "" if esa else NO_ERROR),)
        for m in rows:
            cells = [t.system, doc, str(doc_id), t.item, who, source, marked(target, m), m.category]
            cells += [m.severity, "" if m.start is None else str(m.start), "" if m.end is None else str(m.end)]
            cells += [f"{score:g}" if score is not None else ""] if esa else []
            lines.append("\t".join(_flat(c if j == TARGET else str(cell(c))) for j, c in enumerate(cells)))
    return "\n".join(lines) + "\n"
