"""ESA and MQM studies below the web pages: the server's check of the marks a page sends (offsets as Python str
indices, with non-ASCII letters and an emoji), the span store on SQLite and PostgreSQL (once per form, nothing
stored from a refused one, gone with its annotator), and the export in Google's MQM TSV layout read back by
``read_spans`` and scored by ``meta.mqm`` as the submitted marks score."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from collect.span_studies import output, write_span_study
from ngrameval.collect.span_rules import MQM_SEVERITIES, SpanRules
from ngrameval.collect.spans import Mark, answers, parse_marks, pieces, submit_marks
from ngrameval.collect.store import Store
from ngrameval.collect.study import load_study
from ngrameval.errors import InputError

TEXT = output(0, "A")  # "Der Bär 🐻 läuft über die Straße 0 — Aö café."
BEAR = TEXT.index("🐻")


ESA_RULES = SpanRules(("minor", "major"))
MQM_RULES = SpanRules(MQM_SEVERITIES, (("Accuracy", ("Omission", "Mistranslation")), ("Other", ())), max_spans=4)


def _j(*marks: dict[str, object]) -> str:
    return json.dumps(list(marks))


def test_offsets_are_python_string_indices() -> None:
    # the emoji is one character here (two UTF-16 units in a browser's .length, four UTF-8 bytes)
    got = parse_marks(_j({"start": BEAR, "end": BEAR + 1, "severity": "minor"}), TEXT, ESA_RULES)
    assert got == (Mark(BEAR, BEAR + 1, "minor", ""),) and TEXT[BEAR : BEAR + 1] == "🐻"
    end = len(TEXT)
    got = parse_marks(_j({"start": end - 5, "end": end, "severity": "major"}), TEXT, ESA_RULES)
    assert TEXT[got[0].start : got[0].end] == "café."  # type: ignore[misc]
    with pytest.raises(InputError, match=f"not a span of the text .*<= {end}"):
        parse_marks(_j({"start": end - 5, "end": end + 1, "severity": "major"}), TEXT, ESA_RULES)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (_j({"start": 3, "end": 3, "severity": "minor"}), "not a span"),
        (_j({"start": -1, "end": 2, "severity": "minor"}), "not a span"),
        (_j({"start": 1.0, "end": 2, "severity": "minor"}), "whole number"),
        (_j({"start": True, "end": 2, "severity": "minor"}), "whole number"),
        (_j({"start": "1", "end": 2, "severity": "minor"}), "whole number"),
        (_j({"start": 1, "end": 2, "severity": "critical"}), "choose a severity"),
        (_j({"start": 1, "end": 2, "severity": "Minor"}), "choose a severity"),  # ESA's names are lower case
        (_j({"start": 1, "end": 2}), "choose a severity"),
        (_j({"start": 1, "end": 2, "severity": "minor", "category": "Other"}), "no categories"),
        (_j({"start": 1, "end": 2, "severity": "minor", "colour": "red"}), "unknown field"),
        (_j({"start": 0, "end": 5, "severity": "minor"}, {"start": 4, "end": 8, "severity": "major"}), "overlap"),
        (_j({"start": 0, "end": 5, "severity": "minor"}, {"start": 0, "end": 5, "severity": "major"}), "same span"),
        (_j({"missing": True, "start": 1, "end": 2, "severity": "major"}), "no offsets"),
        (_j({"missing": "yes", "start": 1, "end": 2, "severity": "major"}), "'missing' must be"),
        ('{"start": 1}', "must be a list"),
        ("[1, 2", "not readable"),
        ('[{"start": NaN, "end": 2, "severity": "minor"}]', "whole number"),
        ("[" + "[" * 5000 + "]" * 5001, "not readable|expected an object"),
        (_j("x"), "expected an object"),
    ],
)
def test_bad_marks_are_refused(raw: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_marks(raw, TEXT, ESA_RULES)


def test_mqm_marks_overlap_and_limits() -> None:
    ok = _j({"start": 0, "end": 3, "severity": "Major", "category": "Accuracy/Mistranslation"},
            {"missing": True, "severity": "Minor", "category": "Accuracy/Omission"})  # fmt: skip
    assert parse_marks(ok, TEXT, MQM_RULES)[1] == Mark(None, None, "Minor", "Accuracy/Omission")
    for cat in ("", "Accuracy", "Accuracy/Grammar", "accuracy/omission"):
        with pytest.raises(InputError, match="choose a category"):
            parse_marks(_j({"start": 0, "end": 3, "severity": "Major", "category": cat}), TEXT, MQM_RULES)
    many = _j(*({"missing": True, "severity": "Minor", "category": "Other"} for _ in range(5)))
    with pytest.raises(InputError, match="at most 4 marks"):
        parse_marks(many, TEXT, MQM_RULES)
    both = _j({"start": 0, "end": 5, "severity": "Minor", "category": "Other"},
              {"start": 2, "end": 8, "severity": "Major", "category": "Other"})  # fmt: skip
    with pytest.raises(InputError, match="overlap"):
        parse_marks(both, TEXT, MQM_RULES)
    loose = SpanRules(MQM_RULES.severities, MQM_RULES.categories, allow_overlap=True)
    assert len(parse_marks(both, TEXT, loose)) == 2


def _store(tmp_path: Path, kind: str, url: str | None = None) -> Store:
    store = Store(load_study(write_span_study(tmp_path / kind, kind)), url)
    store.init()
    return store


def test_store_keeps_spans_once(tmp_path: Path, db_url: str) -> None:
    store = _store(tmp_path, "mqm", db_url)
    aid = store.annotator_for("invite", "j1")
    store.assign_trials(aid)
    t = store.next_trial(aid)
    assert t is not None and t.lease is not None
    bear = t.output.index("🐻")
    raw = _j({"start": bear, "end": bear + 1, "severity": "Minor", "category": "Other"},
             {"missing": True, "severity": "Major", "category": "Accuracy/Omission"})  # fmt: skip
    # a refused form stores nothing: neither the marks nor the answer
    bad = _j({"start": 0, "end": len(t.output) + 1, "severity": "Minor", "category": "Other"})
    with pytest.raises(InputError):
        submit_marks(store, aid, t.lease, bad, {})
    assert store.counts()["trials_answered"] == 0 and answers(store) == []
    assert submit_marks(store, aid, t.lease, raw, {}).outcome == "stored"
    assert submit_marks(store, aid, t.lease, raw, {}).outcome == "repeat"  # a double click: stored once
    assert submit_marks(store, aid, "made-up-lease-123", raw, {}).outcome == "foreign"
    other = store.annotator_for("invite", "j2")
    assert submit_marks(store, other, t.lease, raw, {}).outcome == "foreign"  # not theirs
    ((trial, who, marks, score),) = answers(store)
    assert trial.id == t.id and who.id == aid and score is None
    assert marks == (Mark(bear, bear + 1, "Minor", "Other"), Mark(None, None, "Major", "Accuracy/Omission"))
    ((_, rating, _),) = store.ratings()
    assert (rating.criterion, rating.score) == ("mqm", -6.0)  # Minor 1 + Major 5 (Google's weights)
    store.delete_annotator(aid)  # their spans go with their trials
    from sqlalchemy import func, select

    from ngrameval.collect.models import SpanRow

    with store.session() as s:
        assert s.scalar(select(func.count()).select_from(SpanRow)) == 0


def test_migration_0003_adds_and_drops_the_span_table(tmp_path: Path, db_url: str) -> None:
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import create_engine, inspect

    from ngrameval.collect.models import MIGRATIONS, upgrade

    upgrade(db_url, "0002")
    engine = create_engine(db_url)
    assert "span" not in inspect(engine).get_table_names()
    upgrade(db_url)
    columns = {c["name"]: c["nullable"] for c in inspect(engine).get_columns("span")}
    assert columns == {"id": False, "trial_id": False, "position": False, "start": True, "end": True,
                       "severity": False, "category": False}  # fmt: skip
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", db_url.replace("%", "%%"))
    command.downgrade(cfg, "0002")
    assert "span" not in inspect(engine).get_table_names()
    engine.dispose()


def test_pieces_colour_the_output_for_review() -> None:
    marks = [Mark(1, 3, "major"), Mark(None, None, "minor"), Mark(2, 5, "Minor", "Other"), Mark(6, 7, "Neutral")]
    got = pieces("ab🐻def g", marks)
    assert got == [("a", ""), ("b", "m-major"), ("🐻de", "m-minor"), ("f", ""), (" ", "m-other"), ("g", "")]
    assert "".join(p for p, _ in got) == "ab🐻def g" and pieces("", marks[1:2]) == []
