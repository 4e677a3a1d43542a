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

from ngrameval.errors import InputError

SPAN_KEYS = {"severities", "categories", "allow_overlap", "show_reference", "max_spans"}
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


def span_rules(table: dict[str, Any], kind: str) -> SpanRules:
    """The :class:`SpanRules` of ``[spans]`` for an ``esa`` or ``mqm`` study (see the module docstring)."""
    extra = sorted(set(table) - SPAN_KEYS)
    if extra:
        raise InputError(f"unknown key(s) {', '.join(extra)}; expected {', '.join(sorted(SPAN_KEYS))}")
    severities: tuple[str, ...]
    categories: tuple[tuple[str, tuple[str, ...]], ...]
    if kind == "esa":
        for key in ("severities", "categories"):
            if key in table:
                raise InputError(f"key {key!r} is for mqm studies; ESA's severities are minor and major")
        severities, categories = ESA_SEVERITIES, ()
    else:
        raw = table.get("severities", list(MQM_SEVERITIES))
        if not isinstance(raw, list) or not raw:
            raise InputError(f"key 'severities' must be a non-empty list of names, got {raw!r}")
        severities = _unique([_name(x, "severities") for x in raw], "severities")
        categories = _categories(table["categories"]) if "categories" in table else MQM_CATEGORIES
    n = table.get("max_spans", 50)
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_SPANS:
        raise InputError(f"key 'max_spans' must be a whole number 1..{MAX_SPANS}, got {n!r}")
    return SpanRules(severities, categories, _flag(table, "allow_overlap"), _flag(table, "show_reference"), n)
