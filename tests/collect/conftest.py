"""Fixtures of the collect tests: small studies on disk, a store on SQLite or on a throw-away PostgreSQL
cluster (started here with Debian's postgresql 15 binaries; skipped only where initdb is absent)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy", reason="needs ngrameval[collect]")
pytest.importorskip("starlette", reason="needs ngrameval[collect]")

from collect.collect_server import PG_BIN, pg_cluster, pg_database

__all__ = ["pg_database"]


@pytest.fixture(scope="session")
def postgres() -> Iterator[str]:
    """A socket directory of a PostgreSQL 15 cluster (no TCP listener), for the whole test session."""
    if not (PG_BIN / "initdb").exists() or shutil.which("runuser") is None:
        pytest.skip("PostgreSQL 15 (initdb) is not installed")
    pytest.importorskip("psycopg", reason="needs ngrameval[postgres] (psycopg)")
    with pg_cluster() as sock:
        yield sock


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'study.db'}"
    return pg_database(request.getfixturevalue("postgres"))
