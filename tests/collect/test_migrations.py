"""A study survives an upgrade of ngrameval: a database made by revision 0001, with work in it, is upgraded by
`collect init` (to the newest revision: 0002's crowd tables with the work carried over, 0003's error spans, 0004's
side-by-side table) and by `collect serve` when a later revision ships (a throw-away revision 9999 in a copy of the
migrations folder), on SQLite and PostgreSQL; a database from a newer ngrameval is a clear error."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import inspect, text

with warnings.catch_warnings():  # starlette >= 0.50 suggests httpx2; httpx is what it still runs on
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from collect.collect_studies import write_study
from ngrameval.cli import main
from ngrameval.collect import models as store_module
from ngrameval.collect.store import Store
from ngrameval.collect.study import load_study


def _head() -> str:
    """The newest revision this ngrameval ships (the one `collect init` upgrades to)."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    cfg = Config()
    cfg.set_main_option("script_location", str(store_module.MIGRATIONS))
    head = ScriptDirectory.from_config(cfg).get_current_head()
    assert head is not None
    return head


HEAD = _head()
LATER = "9999"  # a throw-away revision after HEAD: what a later ngrameval would ship
REVISION_LATER = '''"""a later schema: a note per annotator

Revision ID: 9999
"""

import sqlalchemy as sa
from alembic import op

revision = "9999"
down_revision = "{head}"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("annotator") as batch:
        batch.add_column(sa.Column("note", sa.Text(), nullable=False, server_default="kept"))


def downgrade() -> None:
    with op.batch_alter_table("annotator") as batch:
        batch.drop_column("note")
'''


def _old_database(tmp_path: Path, url: str) -> tuple[Path, Store]:
    """A describe study at revision 0001 with one description stored (as ngrameval of that revision wrote it)."""
    study = write_study(tmp_path / "study")
    store = Store(load_study(study), url)
    store_module.upgrade(url, "0001")
    with store.engine.begin() as conn:
        conn.execute(
            text(
                'INSERT INTO annotator (id, platform, external_id, session_info, status, "group", created) '
                "VALUES (1, 'invite', 'early-bird', '', 'new', '', :t)"
            ),
            {"t": "2026-11-20 10:00:00"},
        )
        for st in store.study.stimuli:  # as its init loaded them
            conn.execute(
                text('INSERT INTO stimulus (key, kind, src, start, "end", text) VALUES (:k, :kind, :src, :s, :e, :t)'),
                {"k": st.key, "kind": st.kind, "src": st.src, "s": st.start, "e": st.end, "t": st.text},
            )
        conn.execute(
            text(
                "INSERT INTO description (annotator_id, stimulus_id, token, tier, skipped, text, language, comment, "
                "seconds, created) VALUES (1, (SELECT id FROM stimulus WHERE key = 'txt1'), 'tok-before-upgrade', 1, "
                "false, 'a cat plays', 'English', '', 2.0, '2026-11-20 10:01:00')"
            )
        )
    return study, store


def _revision(store: Store) -> str:
    with store.engine.connect() as conn:
        return str(conn.execute(text("SELECT version_num FROM alembic_version")).scalar_one())


def _later_migrations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """This process's ngrameval now ships revision 9999 after HEAD (a copy of the migrations plus one file)."""
    mig = tmp_path / "migrations"
    shutil.copytree(store_module.MIGRATIONS, mig, ignore=shutil.ignore_patterns("__pycache__"))
    (mig / "versions" / "9999_annotator_note.py").write_text(REVISION_LATER.replace("{head}", HEAD))
    monkeypatch.setattr(store_module, "MIGRATIONS", mig)


def _upgraded(store: Store, revision: str = LATER) -> None:
    assert _revision(store) == revision
    d, s, a = store.descriptions()[0]
    assert (d.text, d.token, a.external_id, s.key) == ("a cat plays", "tok-before-upgrade", "early-bird", "txt1")
    assert store.lease_of(a.id, s.id) is not None  # carried over: shown to them, never again
    assert {r.key: r.done for r, _ in store.stimulus_progress()}["txt1"] == 1
    assert "span" in inspect(store.engine).get_table_names()  # 0003: ESA / MQM spans
    if revision != LATER:
        return
    columns = {c["name"] for c in inspect(store.engine).get_columns("annotator")}
    assert "note" in columns
    with store.engine.connect() as conn:
        assert conn.execute(text("SELECT note FROM annotator")).scalars().all() == ["kept"]


def test_init_upgrades_an_old_database(tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    study, store = _old_database(tmp_path, db_url)
    assert _revision(store) == "0001"
    assert main(["collect", "init", str(study), "--database", db_url]) == 0  # 0001 -> head with the work
    _upgraded(store, HEAD)
    assert "pair" in inspect(store.engine).get_table_names()  # 0004: side-by-side trials
    aid = store.annotator_for("invite", "early-bird")
    seen = set()
    while (got := store.lease_stimulus(aid)) is not None:
        seen.add(got[0].key)
        assert store.submit_description(aid, got[1].token, "a dog", "English", "").outcome == "stored"
    assert seen == {"vid1_2_5", "txt2"}  # not txt1 again
    _later_migrations(tmp_path, monkeypatch)
    assert main(["collect", "init", str(study), "--database", db_url]) == 0
    _upgraded(store)
    assert main(["collect", "init", str(study), "--database", db_url]) == 0  # at head: a no-op
    _upgraded(store)


def test_serve_upgrades_before_it_listens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"sqlite:///{tmp_path / 'study.db'}"
    study, store = _old_database(tmp_path, url)
    _later_migrations(tmp_path, monkeypatch)
    served: dict[str, Any] = {}
    uvicorn = pytest.importorskip("uvicorn")
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: served.update(app=app, **kw))
    assert main(["collect", "serve", str(study), "--database", url, "--port", "8123"]) == 0
    assert served["port"] == 8123 and served["host"] == "127.0.0.1"
    _upgraded(store)
    client = TestClient(served["app"])
    assert "descriptions" in client.get("/status").text  # the app runs on the upgraded schema


def test_database_from_a_newer_version_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'study.db'}"
    study, store = _old_database(tmp_path, url)
    with monkeypatch.context() as m:  # a newer ngrameval upgraded it to 9999 ...
        _later_migrations(tmp_path, m)
        store_module.upgrade(url)
    assert _revision(store) == LATER
    # ... and this older one (which knows only up to HEAD) is started on it
    assert main(["collect", "serve", str(study), "--database", url]) != 0
    err = capsys.readouterr().err
    assert "newer ngrameval" in err and LATER in err and "Traceback" not in err
    assert _revision(store) == LATER


def test_init_does_not_print_a_database_password(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    study = write_study(tmp_path / "study")
    monkeypatch.setattr(store_module, "upgrade", lambda url: None)  # no server behind this URL
    monkeypatch.setattr(Store, "init", lambda self, update_manifest=False: store_module.upgrade(self.url))
    assert main(["collect", "init", str(study), "--database", "postgresql+psycopg://u:s3cret@db.example/x"]) == 0
    out = capsys.readouterr().out
    assert "s3cret" not in out and "postgresql+psycopg://u:***@db.example/x" in out
