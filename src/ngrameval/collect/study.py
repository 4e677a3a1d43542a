"""A study definition (``STUDY.toml``) read into frozen dataclasses, with errors that name the key or the line.

Layout (every key but ``study.name`` and ``study.kind`` has a default)::

    [study]
    name = "msvd-pilot"
    kind = "describe"            # describe | paraphrase | rate | da | pairwise | esa | mqm
    title = "Describe a short video"
    database = "sqlite:///study.db"   # relative to the study file; or postgresql+psycopg://...
    language = "English"         # the language annotators write in
    target = 3                   # annotators per stimulus (describe, paraphrase)
    max_length = 400             # characters of a description / comment
    completion_code = "NGE-1234" # the prefix of each assignment's own code; Prolific's study code
    lease_minutes = 20           # a task shown to an annotator is reserved for them this long
    min_answers = 1              # real answers (not skips) before an assignment gets its completion code
    manifest = "stimuli.csv"     # id,kind,src,start,end,text[,control] ; rate/da: item,system,output,source[,expected]
                                 # esa/mqm: item,system,output,source[,reference,doc]
    [consent]
    text = "I agree that my answers are used for research ..."   # optional: a consent page before the task
    source_label = "Reference"   # rate/da: what the page calls the source column (e.g. "Source", "Original sentence")
    [instructions]
    text = "Write one sentence that describes the main action."
    good = ["A man slices a tomato."]
    bad = ["cooking", "A man is in a kitchen and he is cutting some red thing with a knife."]
    [tiers]
    tier1_rate = 0.01            # per accepted submission
    tier2_rate = 0.05
    currency = "USD"
    [[criteria]]                 # rate / da
    name = "fluency"
    scale = "likert"             # likert (points, labels) | slider (0-100)
    points = 5
    [training]                   # rate / da / pairwise: a qualification phase before the real task
    items = 3                    # known-answer items (manifest column 'expected') shown first; pairwise:
                                 # comparisons of an output with its own degraded copy
    max_error = 1.0              # pass: mean absolute error on them at most this (scale units); pairwise: the
                                 # share of training comparisons answered wrong (a tie is wrong), default 0
    qualify = false              # passing also qualifies the judge (tier 2)
    [rating]                     # a judge's trials come in batches with control trials (WMT / Appraise)
    batch_size = 100             # trials in a full batch, controls included
    repeats = 0.1                # exact repeats per batch: a count (10) or a share of the batch (0.1)
    bad_references = 0.1         # da, pairwise: degraded copies per batch, likewise (default 0.1 for da, else 0)
    alpha = 0.05                 # da, pairwise: level of the one-sided bad-reference test; init refuses a design whose
                                 # judges get fewer bad references than the test needs (5 at 0.05)
    seed = 1
    [pairwise]                   # pairwise: two systems' outputs of one item side by side (no [[criteria]])
    ties = true                  # offer "tie" beside "A better" / "B better"
    reason = "optional"          # a free-text reason: off | optional | required
    reason_length = 300          # its characters at most
    trials = 0                   # comparisons per judge (0: one per item)
    question = "Which output is better?"
    [quality]
    copy_pinc = 0.1              # paraphrase: PINC against the source below this marks a copy (0: no check)
    control_metric = "bleu"      # attention checks (manifest column control = "gold 1 | gold 2"): bleu | keywords
    pass_mark = 0.1              # an answer passes with a score >= this
    control_every = 5            # one item in this many is a control (while the annotator has unseen ones)
    min_controls = 3             # qualification decides after this many control answers ...
    pass_rate = 0.66             # ... passed if at least this share of them passed (2 of 3)
    language_check = true        # identify each description's language (py3langid, extra langid / collect)
    language_code = "en"         # the study's language as ISO 639-1 (default: looked up from study.language)
    language_confidence = 0.7    # flag another language identified with at least this probability
    language_min_words = 3       # ... in a description of at least this many words
    languages = ["en", "de"]     # what the identifier may answer (default: 45 widely written languages)
    [stopping]                   # rate/da/pairwise/esa: the running ranking, when to stop (ngrameval.collect.settle)
    when = "settled"             # "settled": no new work once every adjacent pair is settled; "never" (default)
    criterion = "fluency"        # the criterion ranked (default: the first)
    alpha = 0.05                 # chance of ever calling a pair of equal systems settled, however often one looks
    planned = 100                # ratings per system at which the intervals are tightest
    budget = 25.0                # no new work once answers paid plus trials on screen would cost more ([tiers])
    max_answers = 2000           # ... or would be more answers than this
    [spans]                      # esa / mqm: error spans (see :mod:`ngrameval.collect.spans`)
    severities = ["Major", "Minor", "Neutral"]   # mqm (esa: always minor, major)
    weights = { Major = 5, Minor = 1, Neutral = 0 }  # mqm: each severity's weight (default: Google's MQM weights)
    allow_overlap = false
    show_reference = false       # show the manifest's column 'reference' beside the source
    max_spans = 50
    [spans.categories]           # mqm: the category tree, a list of subcategories per category
    Accuracy = ["Addition", "Omission", "Mistranslation", "Untranslated text"]
    Terminology = []
"""

from __future__ import annotations

import csv
import os
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomllib

from ngrameval.collect import design
from ngrameval.collect.pairwise import PairwiseSettings, read_settings
from ngrameval.collect.quality import CONTROL_METRICS, Rules, language_code, min_pairs
from ngrameval.collect.span_rules import ESA_QUESTION, SPAN_KEYS, SpanRules, span_rules
from ngrameval.errors import InputError

#: what a side-by-side study's running ranking ranks (:mod:`ngrameval.collect.settle`)
WIN_RATE = "win-rate"
KINDS = ("describe", "paraphrase", "rate", "da", "pairwise", "esa", "mqm")
SPAN_KINDS = ("esa", "mqm")  # error-span studies: rating trials whose answers are spans (collect.spans)
STIMULUS_KINDS = ("video", "image", "text")
MAX_TEXT = 4000
DA_QUESTION = "How much do you agree that the text to rate adequately expresses the meaning of the reference?"


class StudyError(InputError):
    """A malformed study file or manifest: the message names the file, the key or line, and what was expected."""


@dataclass(frozen=True)
class Stopping:
    """``[stopping]``: which criterion the running ranking uses and when the study stops giving out work
    (:mod:`ngrameval.collect.stopping`); ``budget`` is money in the ``[tiers]`` currency, None for no limit."""

    when: str = "never"  # "never" | "settled"
    criterion: str = ""  # "" : the first criterion
    alpha: float = 0.05
    planned: int = 100
    budget: float | None = None
    max_answers: int | None = None


@dataclass(frozen=True)
class Criterion:
    name: str
    scale: str  # "likert" | "slider"
    points: int = 5
    labels: tuple[str, ...] = ()
    question: str = ""


@dataclass(frozen=True)
class Stimulus:
    """One thing to describe: a video segment (``src`` file or URL, ``start``-``end`` seconds), an image or a text."""

    key: str
    kind: str
    src: str = ""
    start: int | None = None
    end: int | None = None
    text: str = ""
    control: tuple[str, ...] = ()  # an attention check: its gold answers (or keywords), from column 'control'


@dataclass(frozen=True)
class Item:
    """One system output to rate; ``source`` is what it is judged against (a reference or the paraphrased
    sentence); ``expected`` makes it a known-answer control item."""

    item: str
    system: str
    output: str
    source: str = ""
    expected: float | None = None
    reference: str = ""  # esa / mqm: a reference translation, shown when ``[spans] show_reference``
    doc: str = ""  # esa / mqm: the document the item belongs to (the span export's ``doc``)


@dataclass(frozen=True)
class Study:
    name: str
    kind: str
    path: Path
    title: str = ""
    database: str = ""
    language: str = "English"
    target: int = 3
    max_length: int = 400
    completion_code: str = ""
    lease_minutes: int = 20
    min_answers: int = 1
    consent: str = ""
    training_items: int = 0
    training_max_error: float = 0.0
    training_qualifies: bool = False
    source_label: str = "Reference"
    instructions: str = ""
    good: tuple[str, ...] = ()
    bad: tuple[str, ...] = ()
    tier1_rate: float = 0.0
    tier2_rate: float = 0.0
    currency: str = "USD"
    criteria: tuple[Criterion, ...] = ()
    stimuli: tuple[Stimulus, ...] = ()
    items: tuple[Item, ...] = ()
    repeats: int = 0  # exact repeats per judge, in all (see ``controls`` for the batches)
    bad_references: int = 0  # bad references per judge, in all
    seed: int = 1
    controls: design.Controls = field(default_factory=design.Controls)
    alpha: float = 0.05
    quality: Rules = field(default_factory=Rules)
    stopping: Stopping = field(default_factory=Stopping)
    spans: SpanRules | None = None  # esa / mqm: the span settings of ``[spans]``

    @property
    def controls_gold(self) -> dict[str, tuple[str, ...]]:
        """Control stimulus -> its gold answers (for :func:`ngrameval.collect.quality.control_checks`)."""
        return {x.key: x.control for x in self.stimuli if x.control}

    extra: dict[str, Any] = field(default_factory=dict, compare=False)
    pairwise: PairwiseSettings = field(default_factory=PairwiseSettings)  # kind pairwise: [pairwise]

    @property
    def rating(self) -> bool:
        """Whether judges get trials of an items manifest (rate, da, esa, mqm; pairwise: two outputs a trial)."""
        return self.kind in ("rate", "da", "pairwise", *SPAN_KINDS)

    @property
    def systems(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(i.system for i in self.items))

    def database_url(self) -> str:
        """The SQLAlchemy URL; a relative SQLite path is taken relative to the study file."""
        url = self.database or "sqlite:///study.db"
        prefix = "sqlite:///"
        if url.startswith(prefix) and url != "sqlite:///:memory:":
            p = Path(url[len(prefix) :])
            if not p.is_absolute():
                return prefix + str((self.path.parent / p).resolve())
        return url


_SECTIONS: dict[str, set[str]] = {
    "study": {
        "name",
        "kind",
        "title",
        "database",
        "language",
        "target",
        "max_length",
        "completion_code",
        "manifest",
        "lease_minutes",
        "min_answers",
        "source_label",
    },
    "consent": {"text"},
    "training": {"items", "max_error", "qualify"},
    "instructions": {"text", "good", "bad"},
    "tiers": {"tier1_rate", "tier2_rate", "currency"},
    "rating": {"repeats", "bad_references", "seed", "batch_size", "alpha"},
    "pairwise": {"ties", "reason", "reason_length", "trials", "question"},
    "criteria": {"name", "scale", "points", "labels", "question"},
    "quality": {
        "copy_pinc",
        "control_metric",
        "pass_mark",
        "min_controls",
        "control_every",
        "pass_rate",
        "language_check",
        "language_code",
        "language_confidence",
        "language_min_words",
        "languages",
    },
    "stopping": {"when", "criterion", "alpha", "planned", "budget", "max_answers"},
    "spans": SPAN_KEYS,
}


def _get(table: dict[str, Any], key: str, where: str, kind: type | tuple[type, ...], default: Any = None) -> Any:
    if key not in table:
        if default is None:
            raise StudyError(f"{where}: missing key {key!r}")
        return default
    value = table[key]
    if isinstance(value, bool) and kind in (int, float, (int, float)):
        raise StudyError(f"{where}: key {key!r} must be a number, got {value!r}")
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise StudyError(f"{where}: key {key!r} must be {names}, got {type(value).__name__} {value!r}")
    return value


def _strings(table: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = _get(table, key, where, list, [])
    if not all(isinstance(v, str) for v in value):
        raise StudyError(f"{where}: key {key!r} must be a list of strings")
    return tuple(value)


def _unknown(table: dict[str, Any], section: str, where: str) -> None:
    extra = sorted(set(table) - _SECTIONS[section])
    if extra:
        raise StudyError(
            f"{where}: unknown key(s) {', '.join(extra)}; expected {', '.join(sorted(_SECTIONS[section]))}"
        )


def _criteria(raw: Any, path: Path) -> tuple[Criterion, ...]:
    if not isinstance(raw, list):
        raise StudyError(f"{path}: [[criteria]] must be an array of tables")
    out = []
    for i, c in enumerate(raw):
        where = f"{path}: criteria[{i}]"
        _unknown(c, "criteria", where)
        scale = _get(c, "scale", where, str, "likert")
        if scale not in ("likert", "slider"):
            raise StudyError(f"{where}: key 'scale' must be 'likert' or 'slider', got {scale!r}")
        points = _get(c, "points", where, int, 5 if scale == "likert" else 101)
        if scale == "likert" and not 2 <= points <= 11:
            raise StudyError(f"{where}: key 'points' must be 2..11, got {points}")
        labels = _strings(c, "labels", where)
        if labels and len(labels) != points:
            raise StudyError(f"{where}: key 'labels' has {len(labels)} labels for {points} points")
        out.append(Criterion(_get(c, "name", where, str), scale, points, labels, _get(c, "question", where, str, "")))
    names = [c.name for c in out]
    if len(set(names)) != len(names):
        raise StudyError(f"{path}: criteria: a name is repeated in {names}")
    return tuple(out)


def _int_cell(value: str, where: str, column: str) -> int | None:
    if value.strip() == "":
        return None
    if not value.strip().isdigit():
        raise StudyError(f"{where}: column {column!r} must be whole seconds, got {value!r}")
    return int(value)


def _rows(path: Path, required: tuple[str, ...]) -> list[tuple[str, dict[str, str]]]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise StudyError(f"{path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise StudyError(f"{path}: not valid UTF-8 ({exc.reason})") from None
    reader = csv.reader(text.splitlines(), strict=True)
    try:
        header = next(reader, None)
        if header is None:
            raise StudyError(f"{path}: empty manifest, expected a header with {', '.join(required)}")
        missing = [c for c in required if c not in header]
        if missing:
            raise StudyError(f"{path}:1: header lacks column(s) {', '.join(missing)}; got {', '.join(header)}")
        out = []
        for row in reader:
            where = f"{path}:{reader.line_num}"
            if len(row) != len(header):
                raise StudyError(f"{where}: expected {len(header)} fields (as in the header), got {len(row)}")
            out.append((where, dict(zip(header, row))))
    except csv.Error as exc:
        raise StudyError(f"{path}:{reader.line_num}: malformed CSV ({exc})") from None
    if not out:
        raise StudyError(f"{path}: the manifest has a header but no rows")
    return out


def _local_src(src: str) -> bool:
    """Whether ``src`` names a file below the study's directory (no absolute path, ``..``, dotfile or URL)."""
    parts = src.split("/")
    return ":" not in src and "\\" not in src and all(p and not p.startswith(".") for p in parts)


def read_stimuli(path: Path) -> tuple[Stimulus, ...]:
    """Stimuli of a manifest CSV with columns ``id,kind,src,start,end,text`` (``start``/``end`` and ``src`` /
    ``text`` may be empty where the kind has none) and optionally ``control``: the gold answers (or keywords)
    of an attention-check stimulus, separated by ``|``."""
    out: list[Stimulus] = []
    seen: dict[str, str] = {}
    for where, r in _rows(path, ("id", "kind")):
        key, kind = r["id"].strip(), r["kind"].strip()
        if not key:
            raise StudyError(f"{where}: empty id")
        if key in seen:
            raise StudyError(f"{where}: id {key!r} repeated (first at {seen[key]})")
        seen[key] = where
        if kind not in STIMULUS_KINDS:
            raise StudyError(f"{where}: column 'kind' must be one of {', '.join(STIMULUS_KINDS)}, got {kind!r}")
        src, text = r.get("src", "").strip(), r.get("text", "")
        start, end = _int_cell(r.get("start", ""), where, "start"), _int_cell(r.get("end", ""), where, "end")
        if kind in ("video", "image") and not src:
            raise StudyError(f"{where}: a {kind} needs column 'src' (a file or an http(s) URL)")
        if src and not src.startswith(("http://", "https://")) and not _local_src(src):
            raise StudyError(
                f"{where}: column 'src' must be an http(s) URL or a file below the study's directory (a relative "
                f"path without '..', hidden parts or backslashes), got {src!r}"
            )
        if kind == "text" and not text.strip():
            raise StudyError(f"{where}: a text stimulus needs column 'text'")
        if start is not None and end is not None and end <= start:
            raise StudyError(f"{where}: end ({end}) must be after start ({start})")
        if len(text) > MAX_TEXT:
            raise StudyError(f"{where}: text longer than {MAX_TEXT} characters")
        control = tuple(g.strip() for g in r.get("control", "").split("|")) if r.get("control", "").strip() else ()
        if any(not g for g in control):
            raise StudyError(f"{where}: column 'control' has an empty answer; separate gold answers with '|'")
        out.append(Stimulus(key, kind, src, start, end, text, control))
    return tuple(out)


def read_items(path: Path) -> tuple[Item, ...]:
    """Rating items of a manifest CSV with columns ``item,system,output`` and optionally ``source`` and
    ``expected`` (a known answer: a control item)."""
    out: list[Item] = []
    seen: dict[tuple[str, str], str] = {}
    for where, r in _rows(path, ("item", "system", "output")):
        key = (r["item"].strip(), r["system"].strip())
        if not all(key):
            raise StudyError(f"{where}: empty item or system")
        if key in seen:
            raise StudyError(f"{where}: item {key[0]!r} of system {key[1]!r} repeated (first at {seen[key]})")
        seen[key] = where
        expected = None
        if r.get("expected", "").strip():
            try:
                expected = float(r["expected"])
            except ValueError:
                raise StudyError(f"{where}: column 'expected' must be a number, got {r['expected']!r}") from None
        if len(r["output"]) > MAX_TEXT or len(r.get("source", "")) > MAX_TEXT:
            raise StudyError(f"{where}: text longer than {MAX_TEXT} characters")
        if len(r.get("reference", "")) > MAX_TEXT:
            raise StudyError(f"{where}: text longer than {MAX_TEXT} characters")
        out.append(
            Item(key[0], key[1], r["output"], r.get("source", ""), expected, r.get("reference", ""), r.get("doc", ""))
        )
    systems = dict.fromkeys(i.system for i in out)
    items = dict.fromkeys(i.item for i in out)
    have = {(i.item, i.system) for i in out}
    lacking = [(it, s) for it in items for s in systems if (it, s) not in have]
    if lacking:
        raise StudyError(f"{path}: every item needs an output of every system; missing {lacking[:3]}")
    return tuple(out)


def _share(table: dict[str, Any], key: str, where: str, default: int | float) -> int | float:
    """A control count (a whole number) or share of a batch (a number in [0, 1))."""
    value = _get(table, key, where, (int, float), default)
    if value < 0 or (isinstance(value, float) and value >= 1):
        raise StudyError(
            f"{where}: key {key!r} must be a count (a whole number >= 0) or a share of a batch (0 <= x < 1), "
            f"got {value!r}"
        )
    return value  # type: ignore[no-any-return]


def normal_trials(kind: str, items: tuple[Item, ...], pair_trials: int = 0) -> int:
    """A judge's normal trials: one per item (known-answer items aside); a side-by-side study's
    ``[pairwise] trials`` when set."""
    return (kind == "pairwise" and pair_trials) or len({i.item for i in items if i.expected is None})


def _training(where: str, kind: str, items: tuple[Item, ...], n: int, max_error: float) -> None:
    """A training phase the manifest can fill: rate / da, known-answer items (column ``expected``); pairwise,
    outputs to compare with their own degraded copies (at most one per output), ``max_error`` a share of them."""
    if kind == "pairwise":
        outputs = sum(bool(i.output.split()) for i in items)
        if n > outputs:
            raise StudyError(
                f"{where}: key 'items' asks for {n} training comparisons (an output against its degraded copy), "
                f"but the manifest has {outputs} non-empty outputs"
            )
        if max_error >= 1:
            raise StudyError(
                f"{where}: key 'max_error' is the share of training comparisons a judge may get wrong in a "
                f"pairwise study: 0 <= x < 1, got {max_error}"
            )
        return
    if kind not in ("rate", "da"):
        raise StudyError(
            f"{where}: a training phase of known-answer items is for rate and da studies (and pairwise ones, "
            "which compare an output with its own degraded copy)"
        )
    known = sum(i.expected is not None for i in items)
    if known < n:
        raise StudyError(
            f"{where}: key 'items' asks for {n} known-answer items, but the manifest has {known} "
            "(rows with a value in column 'expected')"
        )


def _rating(
    table: dict[str, Any], where: str, kind: str, items: tuple[Item, ...], pair_trials: int = 0
) -> tuple[design.Controls, float, int]:
    """The control design of ``[rating]`` and its level and seed; a DA or side-by-side design whose
    bad-reference test could never reach ``alpha`` (a judge gets fewer bad references than :func:`min_pairs`) is
    refused."""
    default = 0.1 if kind == "da" else 0
    size = _get(table, "batch_size", where, int, 100)
    if size < 2:
        raise StudyError(f"{where}: key 'batch_size' must be at least 2, got {size}")
    repeats = _share(table, "repeats", where, default)
    bad = _share(table, "bad_references", where, default) if kind in ("da", "pairwise") else 0
    alpha = float(_get(table, "alpha", where, (int, float), 0.05))
    if not 0 < alpha < 1:
        raise StudyError(f"{where}: key 'alpha' must be in (0, 1), got {alpha}")
    controls = design.Controls(size, repeats, bad)
    normal = size - sum(design.control_count(x, size) for x in (repeats, bad))
    if 2 * normal < size:
        raise StudyError(
            f"{where}: keys 'repeats' and 'bad_references' take {size - normal} of a batch of {size}; "
            "at least half of a batch must be normal trials"
        )
    n = normal_trials(kind, items, pair_trials)
    got = sum(b for _, _, b in design.batch_plan(n, controls))
    need = min_pairs(alpha)
    if bad and got < need:
        more = "more trials ([pairwise] trials)" if kind == "pairwise" else "more items"
        unit = "comparisons" if kind == "pairwise" else "items"
        hint = f"a count of at least {need}" if n >= need else f"{more} (each judge rates {n})"
        raise StudyError(
            f"{where}: key 'bad_references' = {bad!r} gives each judge {got} bad reference(s) ({n} {unit}, batches "
            f"of {size}); the one-sided test at alpha = {alpha} needs at least {need} (its smallest p is 0.5 ** n): "
            f"use {hint}, or bad_references = 0 for no test"
        )
    return controls, alpha, _get(table, "seed", where, int, 1)


def _fraction(table: dict[str, Any], key: str, where: str, default: float) -> float:
    value = float(_get(table, key, where, (int, float), default))
    if not 0 <= value <= 1:
        raise StudyError(f"{where}: key {key!r} must be in [0, 1], got {value}")
    return value


def _quality(table: dict[str, Any], where: str, language: str) -> Rules:
    """The quality-control rules of ``[quality]``; ``language`` is the study's (its code is looked up unless
    ``language_code`` gives it)."""
    check = _get(table, "language_check", where, bool, True)
    code = _get(table, "language_code", where, str, "") or language_code(language) or ""
    if check and language_code(code) is None:
        raise StudyError(
            f"{where}: key 'language_code' is needed for the language check: the ISO 639-1 code of {language!r} "
            "(e.g. 'en'), or language_check = false"
        )
    min_words = _get(table, "language_min_words", where, int, Rules.language_min_words)
    if min_words < 1:
        raise StudyError(f"{where}: key 'language_min_words' must be at least 1, got {min_words}")
    languages = _strings(table, "languages", where) or Rules.languages
    bad = [x for x in languages if language_code(x) != x.lower()]
    if bad:
        raise StudyError(f"{where}: key 'languages' takes ISO 639-1 codes such as 'en'; got {bad[:3]}")
    metric = _get(table, "control_metric", where, str, Rules.control_metric)
    if metric not in CONTROL_METRICS:
        raise StudyError(f"{where}: key 'control_metric' must be one of {', '.join(CONTROL_METRICS)}, got {metric!r}")
    min_controls = _get(table, "min_controls", where, int, Rules.min_controls)
    if min_controls < 1:
        raise StudyError(f"{where}: key 'min_controls' must be at least 1, got {min_controls}")
    every = _get(table, "control_every", where, int, Rules.control_every)
    if every < 2:
        raise StudyError(f"{where}: key 'control_every' must be at least 2 (one item in that many), got {every}")
    return Rules(
        control_every=every,
        copy_pinc=_fraction(table, "copy_pinc", where, Rules.copy_pinc),
        control_metric=metric,
        pass_mark=_fraction(table, "pass_mark", where, Rules.pass_mark),
        min_controls=min_controls,
        pass_rate=_fraction(table, "pass_rate", where, Rules.pass_rate),
        language_check=check,
        language_code=code.lower(),
        language_confidence=_fraction(table, "language_confidence", where, Rules.language_confidence),
        language_min_words=min_words,
        languages=tuple(dict.fromkeys([*(x.lower() for x in languages), code.lower()] if code else languages)),
    )


def _stopping(
    raw: Any, where: str, kind: str, criteria: tuple[Criterion, ...], rates: dict[str, float], items: tuple[Item, ...]
) -> Stopping:
    """``[stopping]``, checked: a rating study's, a criterion it has, a budget its tiers can spend, systems to
    rank."""
    if not isinstance(raw, dict):
        raise StudyError(f"{where}: 'stopping' must be a table ([stopping])")
    _unknown(raw, "stopping", where)
    if raw and kind in ("describe", "paraphrase"):
        raise StudyError(
            f"{where}: stopping applies to rating and side-by-side studies (rate, da, pairwise), not to kind {kind!r}"
        )
    when = _get(raw, "when", where, str, "never")
    if when not in ("never", "settled"):
        raise StudyError(f"{where}: key 'when' must be 'settled' or 'never', got {when!r}")
    if when == "settled" and len({i.system for i in items if i.expected is None}) < 2:
        raise StudyError(f"{where}: key 'when' = 'settled' needs a ranking: at least 2 systems in the manifest")
    criterion = _get(raw, "criterion", where, str, "")
    names = [WIN_RATE] if kind == "pairwise" else [c.name for c in criteria]
    if criterion and names and criterion not in names:
        raise StudyError(f"{where}: key 'criterion' must name a criterion ({', '.join(names)}), got {criterion!r}")
    alpha = float(_get(raw, "alpha", where, (int, float), 0.05))
    if not 0 < alpha < 1:
        raise StudyError(f"{where}: key 'alpha' must be in (0, 1), got {alpha}")
    planned = _get(raw, "planned", where, int, 100)
    if planned < 1:
        raise StudyError(f"{where}: key 'planned' must be at least 1 (ratings per system), got {planned}")
    budget = raw.get("budget")
    if budget is not None:
        budget = float(_get(raw, "budget", where, (int, float)))
        if not 0 < budget < float("inf"):
            raise StudyError(f"{where}: key 'budget' must be a positive amount, got {budget}")
        if not max(rates.values()) > 0:
            raise StudyError(f"{where}: key 'budget' needs a paid tier ([tiers] tier1_rate or tier2_rate > 0)")
    most = raw.get("max_answers")
    if most is not None and _get(raw, "max_answers", where, int) < 1:
        raise StudyError(f"{where}: key 'max_answers' must be at least 1, got {most}")
    return Stopping(when, criterion, alpha, planned, budget, most)


def _spans(table: dict[str, Any], where: str, kind: str, items: tuple[Item, ...]) -> SpanRules | None:
    """The ``[spans]`` settings of an esa / mqm study (None for other kinds)."""
    if kind not in SPAN_KINDS:
        return None
    try:
        rules = span_rules(table, kind)
    except InputError as exc:
        raise StudyError(f"{where}: {exc}") from None
    if rules.show_reference and not any(i.reference.strip() for i in items):
        raise StudyError(f"{where}: key 'show_reference' needs references: the manifest has no column 'reference'")
    return rules


def load_study(path: str | Path) -> Study:
    """The study of ``path``; a TOML syntax error names the line, a schema error names the key."""
    p = Path(path)
    try:
        raw = tomllib.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise StudyError(f"{p}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise StudyError(f"{p}: not valid TOML ({exc})") from None
    except UnicodeDecodeError as exc:
        raise StudyError(f"{p}: not valid UTF-8 ({exc.reason})") from None
    unknown = sorted(set(raw) - set(_SECTIONS))
    if unknown:
        raise StudyError(f"{p}: unknown table(s) {', '.join(unknown)}; expected {', '.join(sorted(_SECTIONS))}")
    tables = {}
    for name in ("study", "consent", "training", "instructions", "tiers", "rating", "quality", "spans"):
        t = raw.get(name, {})
        if not isinstance(t, dict):
            raise StudyError(f"{p}: {name!r} must be a table ([{name}])")
        _unknown(t, name, f"{p}: [{name}]")
        tables[name] = t
    s, consent, training, ins, tiers, rating = (
        tables[k] for k in ("study", "consent", "training", "instructions", "tiers", "rating")
    )
    rules = _quality(
        tables["quality"], f"{p}: [quality]", _get(tables["study"], "language", f"{p}: [study]", str, "English")
    )
    w = f"{p}: [study]"
    kind = _get(s, "kind", w, str)
    if kind not in KINDS:
        raise StudyError(f"{w}: key 'kind' must be one of {', '.join(KINDS)}, got {kind!r}")
    name = _get(s, "name", w, str)
    target = _get(s, "target", w, int, 3)
    max_length = _get(s, "max_length", w, int, 400)
    if target < 1:
        raise StudyError(f"{w}: key 'target' must be at least 1, got {target}")
    if not 1 <= max_length <= MAX_TEXT:
        raise StudyError(f"{w}: key 'max_length' must be 1..{MAX_TEXT}, got {max_length}")
    lease_minutes = _get(s, "lease_minutes", w, int, 20)
    if not 1 <= lease_minutes <= 24 * 60:
        raise StudyError(f"{w}: key 'lease_minutes' must be 1..1440 (minutes), got {lease_minutes}")
    min_answers = _get(s, "min_answers", w, int, 1)
    if min_answers < 0:
        raise StudyError(f"{w}: key 'min_answers' must not be negative, got {min_answers}")
    code = _get(s, "completion_code", w, str, "")
    if len(code) > 40 or any(not (c.isalnum() or c in "-_") for c in code):
        raise StudyError(f"{w}: key 'completion_code' must be at most 40 letters, digits, '-' or '_', got {code!r}")
    source_label = _get(s, "source_label", w, str, "Source" if kind in SPAN_KINDS else "Reference").strip()
    if not 1 <= len(source_label) <= 64:
        raise StudyError(f"{w}: key 'source_label' must be 1..64 characters, got {source_label!r}")
    rates = {}
    for key in ("tier1_rate", "tier2_rate"):
        rates[key] = float(_get(tiers, key, f"{p}: [tiers]", (int, float), 0.0))
        if rates[key] < 0:
            raise StudyError(f"{p}: [tiers]: key {key!r} must not be negative")
    criteria = _criteria(raw.get("criteria", []), p)
    stimuli: tuple[Stimulus, ...] = ()
    items: tuple[Item, ...] = ()
    manifest = _get(s, "manifest", w, str, "")
    if not manifest:
        raise StudyError(f"{w}: missing key 'manifest' (the stimuli or items CSV)")
    mpath = (p.parent / manifest) if not Path(manifest).is_absolute() else Path(manifest)
    if not mpath.is_file():
        raise StudyError(f"{w}: key 'manifest': {mpath}: no such file")
    if kind in SPAN_KINDS:
        if raw.get("criteria"):
            raise StudyError(f"{p}: [[criteria]] is for rate and da studies; an {kind!r} study asks for spans")
        criteria = (Criterion("esa", "slider", 101, question=ESA_QUESTION),) if kind == "esa" else ()
    elif tables["spans"]:
        raise StudyError(f"{p}: [spans] is for esa and mqm studies, not {kind!r}")
    if kind == "pairwise":
        items, criteria = _pairwise_items(mpath, criteria, p)
    elif kind in ("rate", "da", *SPAN_KINDS):
        items = read_items(mpath)
        if not criteria and kind in ("rate", "da"):
            if kind == "da":
                criteria = (Criterion("adequacy", "slider", 101, question=DA_QUESTION),)
            else:
                raise StudyError(f"{p}: a 'rate' study needs at least one [[criteria]] table")
        if kind == "da" and any(c.scale != "slider" for c in criteria):
            raise StudyError(f"{p}: criteria: a 'da' study rates on a 0-100 slider (scale = 'slider')")
    else:
        stimuli = read_stimuli(mpath)
        local = [x for x in stimuli if x.src and not x.src.startswith(("http://", "https://"))]
        missing = [x for x in local if not (p.parent / x.src).is_file()]
        if missing:
            names = ", ".join(f"{x.key} ({x.src})" for x in missing[:3])
            raise StudyError(
                f"{mpath}: {len(missing)} local media file(s) not found relative to {p.parent}: {names}"
                f"{' …' if len(missing) > 3 else ''}"
            )
        if kind == "paraphrase" and any(x.kind != "text" for x in stimuli):
            raise StudyError(f"{mpath}: a 'paraphrase' study shows sentences: every stimulus must be of kind text")
    tw = f"{p}: [training]"
    training_items = _get(training, "items", tw, int, 0)
    max_error = float(_get(training, "max_error", tw, (int, float), 0.0 if kind == "pairwise" else 1.0))
    qualify = _get(training, "qualify", tw, bool, False)
    if training_items < 0 or not max_error >= 0:
        raise StudyError(f"{tw}: 'items' and 'max_error' must not be negative")
    if training_items:
        _training(tw, kind, items, training_items, max_error)
    pairwise = _pairwise_settings(raw.get("pairwise", {}), p, kind)
    controls, alpha, seed = _rating(rating, f"{p}: [rating]", kind, items, pairwise.trials)
    per_judge = design.batch_plan(normal_trials(kind, items, pairwise.trials), controls)
    return Study(
        name=name,
        kind=kind,
        path=p.resolve(),
        title=_get(s, "title", w, str, name),
        database=_get(s, "database", w, str, ""),
        language=_get(s, "language", w, str, "English"),
        target=target,
        max_length=max_length,
        completion_code=code,
        source_label=source_label,
        lease_minutes=lease_minutes,
        min_answers=min_answers,
        consent=_get(consent, "text", f"{p}: [consent]", str, ""),
        training_items=training_items,
        training_max_error=max_error,
        training_qualifies=qualify,
        instructions=_get(ins, "text", f"{p}: [instructions]", str, ""),
        good=_strings(ins, "good", f"{p}: [instructions]"),
        bad=_strings(ins, "bad", f"{p}: [instructions]"),
        tier1_rate=rates["tier1_rate"],
        tier2_rate=rates["tier2_rate"],
        currency=_get(tiers, "currency", f"{p}: [tiers]", str, "USD"),
        criteria=criteria,
        stimuli=stimuli,
        items=items,
        repeats=sum(r for _, r, _ in per_judge),
        bad_references=sum(b for _, _, b in per_judge),
        seed=seed,
        controls=controls,
        alpha=alpha,
        quality=rules,
        stopping=_stopping(raw.get("stopping", {}), f"{p}: [stopping]", kind, criteria, rates, items),
        pairwise=pairwise,
        spans=_spans(tables["spans"], f"{p}: [spans]", kind, items),
    )


def _pairwise_items(mpath: Path, criteria: tuple[Criterion, ...], p: Path) -> tuple[tuple[Item, ...], tuple[()]]:
    """A pairwise study's items (every item an output of every system, at least two systems, no known answers)."""
    if criteria:
        raise StudyError(f"{p}: a 'pairwise' study asks which output is better: no [[criteria]] (see [pairwise])")
    items = read_items(mpath)
    if len({i.system for i in items}) < 2:
        raise StudyError(f"{mpath}: a 'pairwise' study compares systems: the manifest needs at least two")
    if any(i.expected is not None for i in items):
        raise StudyError(
            f"{mpath}: column 'expected' (known-answer items) does not apply to a 'pairwise' study: its [training] "
            "compares outputs with their own degraded copies"
        )
    return items, ()


def _pairwise_settings(table: Any, p: Path, kind: str) -> PairwiseSettings:
    """``[pairwise]`` (only in a pairwise study)."""
    if not isinstance(table, dict):
        raise StudyError(f"{p}: 'pairwise' must be a table ([pairwise])")
    if table and kind != "pairwise":
        raise StudyError(f"{p}: [pairwise] is for kind = 'pairwise' studies")
    try:
        return read_settings(table, f"{p}: [pairwise]")
    except InputError as exc:
        raise StudyError(str(exc)) from None


_TABLE = re.compile(r"^\s*\[")
_STUDY = re.compile(r"^\s*\[\s*study\s*\]\s*(#.*)?$")
_TARGET = re.compile(r"^\s*target\s*=")
PLAN_COMMENT = "# ngrameval collect plan:"


def write_target(path: str | Path, target: int, note: str) -> None:
    """Set ``target`` in ``path``'s ``[study]`` table to ``target`` with a comment line ``# ngrameval collect plan:
    note`` above it (replacing an earlier plan's line), every other byte of the file unchanged. The new text must
    parse to the old tables with only ``study.target`` changed, else nothing is written; it replaces the file
    atomically (a temporary file in the same directory, then a rename), keeping its permissions."""
    p = Path(path)
    try:
        data = p.read_bytes()
        text = data.decode("utf-8")
        before = tomllib.loads(text)
    except OSError as exc:
        raise StudyError(f"{p}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise StudyError(f"{p}: not valid UTF-8 ({exc.reason})") from None
    except tomllib.TOMLDecodeError as exc:
        raise StudyError(f"{p}: not valid TOML ({exc})") from None
    if "\n" in note or "\r" in note:
        raise StudyError(f"{p}: the plan note must be one line")
    lines = text.splitlines(keepends=True)
    head = next((k for k, line in enumerate(lines) if _STUDY.match(line)), None)
    if head is None or not isinstance(before.get("study"), dict):
        raise StudyError(f"{p}: no [study] table to write the plan into")
    end = next((k for k in range(head + 1, len(lines)) if _TABLE.match(lines[k])), len(lines))
    eol = "\r\n" if lines[head].endswith("\r\n") else "\n"
    body = [(k, line) for k, line in enumerate(lines[head + 1 : end], head + 1)]
    drop = {k for k, line in body if line.startswith(PLAN_COMMENT) or _TARGET.match(line)}
    keys = [k for k, line in body if line.strip() and not line.lstrip().startswith("#")]
    at = min(drop) if drop else (max(keys) + 1 if keys else head + 1)
    if at > 0 and not lines[at - 1].endswith(("\n", "\r")):
        lines[at - 1] += eol  # the table's last line ended the file without a newline
    new = [f"{PLAN_COMMENT} {note}{eol}", f"target = {int(target)}{eol}"]
    out = "".join([*(x for k, x in enumerate(lines[:at]) if k not in drop), *new,
                   *(x for k, x in enumerate(lines[at:], at) if k not in drop)])  # fmt: skip
    expected = {**before, "study": {**before["study"], "target": int(target)}}
    try:
        after = tomllib.loads(out)
    except tomllib.TOMLDecodeError:
        after = None
    if after != expected:
        raise StudyError(f"{p}: cannot place 'target' in [study] safely (edit the file by hand: target = {target})")
    tmp = p.with_name(f".{p.name}.{secrets.token_hex(4)}.tmp")
    try:
        tmp.write_bytes(out.encode("utf-8"))
        os.chmod(tmp, p.stat().st_mode & 0o7777)
        os.replace(tmp, p)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise StudyError(f"{p}: cannot write the plan ({exc.strerror})") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
