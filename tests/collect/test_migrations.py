"""A study survives an upgrade of ngrameval: a database made by revision 0001, with work in it, is upgraded by
`collect init` and by `collect serve` when a later revision ships (a throw-away revision 0002 in a copy of the
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
from ngrameval.collect import store as store_module
from ngrameval.collect.store import Store
from ngrameval.collect.study import load_study

REVISION_2 = '''"""a later schema: a note per annotator

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
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
    """A describe study at revision 0001 with one description stored."""
    study = write_study(tmp_path / "study")
    store = Store(load_study(study), url)
    store.init()
    aid = store.annotator_for("invite", "early-bird")
    st = store.next_stimulus(aid)
    assert st is not None
    assert store.submit_description(aid, st.id, "tok-before-upgrade", "a cat plays", "English", "", 2.0)
    return study, store


def _revision(store: Store) -> str:
    with store.engine.connect() as conn:
        return str(conn.execute(text("SELECT version_num FROM alembic_version")).scalar_one())


def _later_migrations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """This process's ngrameval now ships revision 0002 (a copy of the migrations plus one file)."""
    mig = tmp_path / "migrations"
    shutil.copytree(store_module.MIGRATIONS, mig, ignore=shutil.ignore_patterns("__pycache__"))
    (mig / "versions" / "0002_annotator_note.py").write_text(REVISION_2)
    monkeypatch.setattr(store_module, "MIGRATIONS", mig)


def _upgraded(store: Store) -> None:
    assert _revision(store) == "0002"
    columns = {c["name"] for c in inspect(store.engine).get_columns("annotator")}
    assert "note" in columns
    with store.engine.connect() as conn:
        assert conn.execute(text("SELECT note FROM annotator")).scalars().all() == ["kept"]
    d, _, a = store.descriptions()[0]
    assert (d.text, d.token, a.external_id) == ("a cat plays", "tok-before-upgrade", "early-bird")


def test_init_upgrades_an_old_database(tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    study, store = _old_database(tmp_path, db_url)
    assert _revision(store) == "0001"
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
    with monkeypatch.context() as m:  # a newer ngrameval upgraded it to 0002 ...
        _later_migrations(tmp_path, m)
        store_module.upgrade(url)
    assert _revision(store) == "0002"
    # ... and this older one (which knows only 0001) is started on it
    assert main(["collect", "serve", str(study), "--database", url]) != 0
    err = capsys.readouterr().err
    assert "newer ngrameval" in err and "0002" in err and "Traceback" not in err
    assert _revision(store) == "0002"


def test_init_does_not_print_a_database_password(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    study = write_study(tmp_path / "study")
    monkeypatch.setattr(store_module, "upgrade", lambda url: None)  # no server behind this URL
    monkeypatch.setattr(Store, "init", lambda self: store_module.upgrade(self.url))
    assert main(["collect", "init", str(study), "--database", "postgresql+psycopg://u:s3cret@db.example/x"]) == 0
    out = capsys.readouterr().out
    assert "s3cret" not in out and "postgresql+psycopg://u:***@db.example/x" in out
