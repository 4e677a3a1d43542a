"""The ``[spans]`` table of an ESA or MQM study's STUDY.toml: the kinds, the default MQM typology and severities
(Google's MQM data, scored by ``meta.mqm``), a custom category tree, and errors that name the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from collect.span_studies import write_span_study
from ngrameval.collect.span_rules import MQM_SEVERITIES, SpanRules
from ngrameval.collect.study import StudyError, load_study
from ngrameval.meta.mqm import span_weight


def test_study_kinds_and_defaults(tmp_path: Path) -> None:
    esa = load_study(write_span_study(tmp_path / "esa", "esa"))
    assert esa.rating and esa.spans is not None and esa.spans.severities == ("minor", "major")
    assert [c.name for c in esa.criteria] == ["esa"] and esa.criteria[0].scale == "slider"
    assert esa.spans.categories == () and not esa.spans.allow_overlap and not esa.spans.show_reference
    assert esa.source_label == "Source" and esa.items[0].reference and esa.items[0].doc == "doc0"
    mqm = load_study(write_span_study(tmp_path / "mqm", "mqm"))
    assert mqm.criteria == () and mqm.spans is not None and mqm.spans.severities == MQM_SEVERITIES
    assert mqm.spans.show_reference
    leaves = mqm.spans.leaves
    assert leaves[:4] == ("Accuracy/Addition", "Accuracy/Omission", "Accuracy/Mistranslation",
                          "Accuracy/Untranslated text")  # fmt: skip
    assert "Fluency/Character encoding" in leaves and "Terminology" in leaves and "Other" in leaves
    assert span_weight("Major", "Non-translation!") == 25 and "Non-translation!" in leaves  # Google's spelling
    assert span_weight("Minor", "Fluency/Punctuation") == 0.1 and "Fluency/Punctuation" in leaves


def test_custom_tree(tmp_path: Path) -> None:
    extra = 'severities = ["Critical", "Minor"]\nallow_overlap = true\nmax_spans = 3\n'
    extra += "weights = { Critical = 10, Minor = 1 }\n"  # a severity Google's weights lack needs its weight
    extra += '[spans.categories]\nAccuracy = ["Omission"]\n"Made up" = []\n'
    st = load_study(write_span_study(tmp_path, "mqm", extra))
    tree = (("Accuracy", ("Omission",)), ("Made up", ()))
    assert st.spans == SpanRules(("Critical", "Minor"), tree, True, True, 3, (("critical", 10.0), ("minor", 1.0)))
    assert st.spans.leaves == ("Accuracy/Omission", "Made up")


@pytest.mark.parametrize(
    ("kind", "extra", "message"),
    [
        ("esa", '[spans]\nseverities = ["minor"]\n', r"\[spans\]: key 'severities' is for mqm"),
        ("esa", "[spans]\ncategories = {}\n", r"\[spans\]: key 'categories' is for mqm"),
        ("mqm", "[spans]\ncolour = 1\n", r"\[spans\]: unknown key\(s\) colour"),
        ("mqm", "[spans]\nseverities = []\n", r"key 'severities' must be a non-empty list"),
        ("mqm", '[spans]\nseverities = ["Major", "major"]\n', r"key 'severities': a name is repeated"),
        ("mqm", '[spans]\nseverities = ["A/B"]\n', r"key 'severities': names must be"),
        ("mqm", "[spans]\nmax_spans = 0\n", r"key 'max_spans' must be a whole number 1..200"),
        ("mqm", "[spans]\nmax_spans = true\n", r"key 'max_spans'"),
        ("mqm", '[spans]\nallow_overlap = "yes"\n', r"key 'allow_overlap' must be true or false"),
        ("mqm", '[spans]\ncategories = ["Accuracy"]\n', r"key 'categories' must be a table"),
        ("mqm", '[spans.categories]\nAccuracy = "Omission"\n', r"key 'categories': 'Accuracy' must be a list"),
        ("mqm", '[spans.categories]\nAccuracy = ["x", "X"]\n', r"key 'categories.Accuracy': a name is repeated"),
        ("mqm", '[[criteria]]\nname = "x"\n', r"\[\[criteria\]\] is for rate and da"),
        ("esa", "[training]\nitems = 1\n", r"\[training\]"),
    ],
)
def test_bad_span_settings_name_the_key(tmp_path: Path, kind: str, extra: str, message: str) -> None:
    if kind == "mqm":
        extra = extra.removeprefix("[spans]\n")  # the MQM study's file ends in its [spans] table
    with pytest.raises(StudyError, match=message):
        load_study(write_span_study(tmp_path, kind, extra))


def test_spans_table_only_for_span_kinds(tmp_path: Path) -> None:
    from collect.collect_studies import write_study

    path = write_study(tmp_path, "rate")
    path.write_text(path.read_text() + "[spans]\nmax_spans = 3\n")
    with pytest.raises(StudyError, match=r"\[spans\] is for esa and mqm studies, not 'rate'"):
        load_study(path)


def test_show_reference_needs_references(tmp_path: Path) -> None:
    path = write_span_study(tmp_path, "esa", "[spans]\nshow_reference = true\n")
    items = tmp_path / "items.csv"
    items.write_text(items.read_text(encoding="utf-8").replace("Der Bär läuft über die Straße.", ""), encoding="utf-8")
    with pytest.raises(StudyError, match=r"\[spans\]: key 'show_reference' needs references"):
        load_study(path)
