"""The ``[spans]`` table of an ESA or MQM study (``STUDY.toml``): severities, the MQM category tree, overlap and
size limits. Errors are :class:`~ngrameval.errors.InputError` naming the key; :func:`ngrameval.collect.study.
load_study` prefixes the file and table.

* **ESA** (Error Span Annotation, Kocmi et al. 2024): severities ``minor`` and ``major``, no categories, and a
  0-100 score of the whole segment after the spans.
* **MQM** (Lommel et al. 2014; Freitag et al. 2021): a category and a severity per span. The default category
  tree and severities are those of Google's MQM data (``mqm_newstest2020_ende.tsv`` and later) — the core
  typology: Accuracy/{Addition, Omission, Mistranslation, Untranslated text}, Fluency/{Grammar, Spelling,
  Punctuation, Register, Inconsistency, Character encoding}, Terminology, Style, Locale convention,
  Non-translation (spelt ``Non-translation!`` as Google's data does, which mt-metrics-eval weighs 25), Other;
  severities Major, Minor, Neutral. :mod:`ngrameval.meta.mqm` scores exports with these names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ngrameval.errors import ConfigError, InputError
from ngrameval.meta.mqm import MQM_WEIGHTS, weight

SPAN_KEYS = {"severities", "categories", "weights", "allow_overlap", "show_reference", "max_spans"}
ESA_SEVERITIES = ("minor", "major")
MQM_SEVERITIES = ("Major", "Minor", "Neutral")
MQM_CATEGORIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Accuracy", ("Addition", "Omission", "Mistranslation", "Untranslated text")),
    ("Fluency", ("Grammar", "Spelling", "Punctuation", "Register", "Inconsistency", "Character encoding")),
    ("Terminology", ()),
    ("Style", ()),
    ("Locale convention", ()),
    ("Non-translation!", ()),
    ("Other", ()),
)
MAX_SPANS = 200  # the largest max_spans a study may set (a form field holds at most 8000 characters)
MAX_NAME = 64  # characters of a severity or category name
ESA_QUESTION = "How good is the translation, given the errors you marked? (0: no meaning kept, 100: perfect)"
OMISSION = "Accuracy/Omission"  # the category the page proposes for a [missing] mark
GOOGLE_WEIGHTS = tuple(MQM_WEIGHTS.items())  # the default [spans] weights: Google's, as mt-metrics-eval weighs


@dataclass(frozen=True)
class SpanRules:
    """What an annotator may mark: ``severities``; ``categories`` the tree as (category, subcategories) (empty
    for ESA); ``allow_overlap``: spans may share characters; ``show_reference``: the manifest's ``reference``
    is shown; ``max_spans``: marks per segment, omissions included."""

    severities: tuple[str, ...]
    categories: tuple[tuple[str, tuple[str, ...]], ...] = ()
    allow_overlap: bool = False
    show_reference: bool = False
    max_spans: int = 50
    weights: tuple[tuple[str, float], ...] = GOOGLE_WEIGHTS  # MQM: (lower-case severity[/category], weight)

    @property
    def weight_map(self) -> dict[str, float]:
        """The MQM weights as :func:`ngrameval.meta.mqm.span_weight` takes them."""
        return dict(self.weights)

    @property
    def weights_option(self) -> str:
        """The weights as ``ngrameval correlate --mqm-weights`` takes them (``major=5,minor=1,...``)."""
        return ",".join(f"{k}={v:g}" for k, v in self.weights)

    @property
    def leaves(self) -> tuple[str, ...]:
        """The categories an annotator picks from: ``Category/Subcategory``, or ``Category`` without any."""
        return tuple(f"{c}/{sub}" if sub else c for c, subs in self.categories for sub in (subs or ("",)))


def label(category: str) -> str:
    """A category as the page shows it (Google's ``Non-translation!`` without its mark)."""
    return category.rstrip("!")


def _name(value: Any, key: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_NAME or "\t" in value or "/" in value:
        raise InputError(f"key {key!r}: names must be non-empty strings of at most {MAX_NAME} characters without "
                         f"'/' or tabs, got {value!r}")  # fmt: skip
    return value.strip()


def _unique(names: list[str], key: str) -> tuple[str, ...]:
    low = [n.lower() for n in names]
    if len(set(low)) != len(low):
        raise InputError(f"key {key!r}: a name is repeated in {names}")
    return tuple(names)


def _categories(raw: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(raw, dict) or not raw:
        raise InputError("key 'categories' must be a table: category = [subcategories] (an empty list for none)")
    out = []
    for cat, subs in raw.items():
        if not isinstance(subs, list):
            raise InputError(f"key 'categories': {cat!r} must be a list of subcategories, got {subs!r}")
        name = _name(cat, "categories")
        out.append((name, _unique([_name(x, f"categories.{name}") for x in subs], f"categories.{name}")))
    _unique([c for c, _ in out], "categories")
    return tuple(out)


def _flag(table: dict[str, Any], key: str) -> bool:
    value = table.get(key, False)
    if not isinstance(value, bool):
        raise InputError(f"key {key!r} must be true or false, got {value!r}")
    return value


def _toml_key(name: str) -> str:
    """``name`` as a TOML key: bare when it can be, else quoted."""
    return name if name.replace("-", "").replace("_", "").isalnum() and name.isascii() else f'"{name}"'


def _weights(raw: Any, severities: tuple[str, ...]) -> tuple[tuple[str, float], ...]:
    """``weights`` of an MQM study (absent: Google's), checked: numbers >= 0 keyed by ``severity[/category[/sub]]``
    of the study's severities, and a weight for every severity (no mark weighs 0 unsaid)."""
    if raw is None:
        got = dict(MQM_WEIGHTS)
    else:
        if not isinstance(raw, dict) or not raw:
            raise InputError("key 'weights' must be a table: severity[/category] = weight (e.g. Critical = 10)")
        got = {}
        known = {x.lower() for x in severities}
        for key, value in raw.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise InputError(f"key 'weights': the weight of {key!r} must be a number, got {value!r}")
            try:
                name, number = weight(str(key), repr(float(value)), "key 'weights'")
            except ConfigError as exc:
                raise InputError(str(exc)) from None
            if name.split("/")[0] not in known:
                raise InputError(f"key 'weights': {key!r} is not a severity of the study ({', '.join(severities)})")
            if name in got:
                raise InputError(f"key 'weights': {key!r} is given twice")
            got[name] = number
    missing = [x for x in severities if x.lower() not in got]
    if missing:
        how = "give it one in" if raw is not None else "Google's weights have none: add"
        example = ", ".join(f"{_toml_key(x)} = {MQM_WEIGHTS.get(x.lower(), 10):g}" for x in severities)
        raise InputError(
            f"key 'weights': severity {missing[0]!r} has no weight ({how} [spans] weights, e.g. "
            f"weights = {{ {example} }})"
        )
    return tuple(got.items())


def span_rules(table: dict[str, Any], kind: str) -> SpanRules:
    """The :class:`SpanRules` of ``[spans]`` for an ``esa`` or ``mqm`` study (see the module docstring)."""
    extra = sorted(set(table) - SPAN_KEYS)
    if extra:
        raise InputError(f"unknown key(s) {', '.join(extra)}; expected {', '.join(sorted(SPAN_KEYS))}")
    severities: tuple[str, ...]
    categories: tuple[tuple[str, tuple[str, ...]], ...]
    weights = GOOGLE_WEIGHTS
    if kind == "esa":
        for key in ("severities", "categories", "weights"):
            if key in table:
                raise InputError(f"key {key!r} is for mqm studies; ESA's severities are minor and major")
        severities, categories = ESA_SEVERITIES, ()
    else:
        raw = table.get("severities", list(MQM_SEVERITIES))
        if not isinstance(raw, list) or not raw:
            raise InputError(f"key 'severities' must be a non-empty list of names, got {raw!r}")
        severities = _unique([_name(x, "severities") for x in raw], "severities")
        categories = _categories(table["categories"]) if "categories" in table else MQM_CATEGORIES
        weights = _weights(table.get("weights"), severities)
    n = table.get("max_spans", 50)
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_SPANS:
        raise InputError(f"key 'max_spans' must be a whole number 1..{MAX_SPANS}, got {n!r}")
    return SpanRules(severities, categories, _flag(table, "allow_overlap"), _flag(table, "show_reference"), n, weights)
