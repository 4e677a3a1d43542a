"""A study definition (``STUDY.toml``) read into frozen dataclasses, with errors that name the key or the line.

Layout (every key but ``study.name`` and ``study.kind`` has a default)::

    [study]
    name = "msvd-pilot"
    kind = "describe"            # describe | paraphrase | rate | da
    title = "Describe a short video"
    database = "sqlite:///study.db"   # relative to the study file; or postgresql+psycopg://...
    language = "English"         # the language annotators write in
    target = 3                   # annotators per stimulus (describe, paraphrase)
    max_length = 400             # characters of a description / comment
    completion_code = "NGE-1234" # shown at the end (MTurk / Prolific)
    manifest = "stimuli.csv"     # describe/paraphrase: id,kind,src,start,end,text ; rate/da: item,system,output,source
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
    [rating]
    systems_per_judge = 0        # 0: all systems (a Latin square of n systems)
    repeats = 2                  # control items per judge: exact repeats
    bad_references = 2           # da: degraded copies per judge
    seed = 1
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomllib

from ngrameval.errors import InputError

KINDS = ("describe", "paraphrase", "rate", "da")
STIMULUS_KINDS = ("video", "image", "text")
MAX_TEXT = 4000
DA_QUESTION = "How much do you agree that the text to rate adequately expresses the meaning of the reference?"


class StudyError(InputError):
    """A malformed study file or manifest: the message names the file, the key or line, and what was expected."""


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


@dataclass(frozen=True)
class Item:
    """One system output to rate; ``source`` is what it is judged against (a reference or the paraphrased
    sentence); ``expected`` makes it a known-answer control item."""

    item: str
    system: str
    output: str
    source: str = ""
    expected: float | None = None


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
    repeats: int = 0
    bad_references: int = 0
    seed: int = 1
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def rating(self) -> bool:
        return self.kind in ("rate", "da")

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
        "source_label",
    },
    "instructions": {"text", "good", "bad"},
    "tiers": {"tier1_rate", "tier2_rate", "currency"},
    "rating": {"repeats", "bad_references", "seed"},
    "criteria": {"name", "scale", "points", "labels", "question"},
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
    ``text`` may be empty where the kind has none)."""
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
        out.append(Stimulus(key, kind, src, start, end, text))
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
        out.append(Item(key[0], key[1], r["output"], r.get("source", ""), expected))
    systems = dict.fromkeys(i.system for i in out)
    items = dict.fromkeys(i.item for i in out)
    have = {(i.item, i.system) for i in out}
    lacking = [(it, s) for it in items for s in systems if (it, s) not in have]
    if lacking:
        raise StudyError(f"{path}: every item needs an output of every system; missing {lacking[:3]}")
    return tuple(out)


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
    for name in ("study", "instructions", "tiers", "rating"):
        t = raw.get(name, {})
        if not isinstance(t, dict):
            raise StudyError(f"{p}: {name!r} must be a table ([{name}])")
        _unknown(t, name, f"{p}: [{name}]")
        tables[name] = t
    s, ins, tiers, rating = (tables[k] for k in ("study", "instructions", "tiers", "rating"))
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
    source_label = _get(s, "source_label", w, str, "Reference").strip()
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
    if kind in ("rate", "da"):
        items = read_items(mpath)
        if not criteria:
            if kind == "da":
                criteria = (Criterion("adequacy", "slider", 101, question=DA_QUESTION),)
            else:
                raise StudyError(f"{p}: a 'rate' study needs at least one [[criteria]] table")
        if kind == "da" and any(c.scale != "slider" for c in criteria):
            raise StudyError(f"{p}: criteria: a 'da' study rates on a 0-100 slider (scale = 'slider')")
    else:
        stimuli = read_stimuli(mpath)
        if kind == "paraphrase" and any(x.kind != "text" for x in stimuli):
            raise StudyError(f"{mpath}: a 'paraphrase' study shows sentences: every stimulus must be of kind text")
    rw = f"{p}: [rating]"
    repeats, bad_refs, seed = (
        _get(rating, k, rw, int, d) for k, d in (("repeats", 0), ("bad_references", 0), ("seed", 1))
    )
    if repeats < 0 or bad_refs < 0:
        raise StudyError(f"{rw}: 'repeats' and 'bad_references' must not be negative")
    return Study(
        name=name,
        kind=kind,
        path=p.resolve(),
        title=_get(s, "title", w, str, name),
        database=_get(s, "database", w, str, ""),
        language=_get(s, "language", w, str, "English"),
        target=target,
        max_length=max_length,
        completion_code=_get(s, "completion_code", w, str, ""),
        source_label=source_label,
        instructions=_get(ins, "text", f"{p}: [instructions]", str, ""),
        good=_strings(ins, "good", f"{p}: [instructions]"),
        bad=_strings(ins, "bad", f"{p}: [instructions]"),
        tier1_rate=rates["tier1_rate"],
        tier2_rate=rates["tier2_rate"],
        currency=_get(tiers, "currency", f"{p}: [tiers]", str, "USD"),
        criteria=criteria,
        stimuli=stimuli,
        items=items,
        repeats=repeats,
        bad_references=bad_refs,
        seed=seed,
    )
