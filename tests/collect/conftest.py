"""Fixtures of the collect tests: small studies on disk, a store on SQLite or on a throw-away PostgreSQL
cluster (started here with Debian's postgresql 15 binaries; skipped only where initdb is absent)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy", reason="needs ngrameval[collect]")
pytest.importorskip("starlette", reason="needs ngrameval[collect]")

PG_BIN = Path("/usr/lib/postgresql/15/bin")


@pytest.fixture(scope="session")
def postgres() -> Iterator[str]:
    """A socket directory of a PostgreSQL 15 cluster (no TCP listener), for the whole test session."""
    if not (PG_BIN / "initdb").exists() or shutil.which("runuser") is None:
        pytest.skip("PostgreSQL 15 (initdb) is not installed")
    pytest.importorskip("psycopg", reason="needs ngrameval[postgres] (psycopg)")
    root = Path(tempfile.mkdtemp(prefix="ngrameval-pg-"))
    os.chmod(root, 0o755)
    data, sock = root / "data", root / "sock"
    sock.mkdir()
    subprocess.run(["chown", "-R", "postgres", str(root)], check=True)
    run = ["runuser", "-u", "postgres", "--"]
    if not stat.S_ISCHR(os.stat("/dev/null").st_mode):
        # this sandbox's /dev/null is a root-only regular file, which initdb and pg_ctl cannot write: give
        # them, in a private mount namespace, /dev/zero (which discards writes just the same) in its place
        run = ["unshare", "-m", "sh", "-c", 'mount --bind /dev/zero /dev/null && exec "$@"', "sh", *run]
    subprocess.run(
        [*run, str(PG_BIN / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres"],
        check=True,
        capture_output=True,
    )
    opts = f"-c listen_addresses='' -k {sock} -c fsync=off"
    subprocess.run(
        [*run, str(PG_BIN / "pg_ctl"), "-D", str(data), "-o", opts, "-w", "-l", str(root / "log"), "start"],
        check=True,
        capture_output=True,
    )
    try:
        yield str(sock)
    finally:
        subprocess.run([*run, str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


def pg_database(sock: str) -> str:
    """A fresh database in the cluster; its URL."""
    import psycopg

    name = "t" + uuid.uuid4().hex[:12]
    with psycopg.connect(f"host={sock} user=postgres dbname=postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')  # a generated identifier, not user input
    return f"postgresql+psycopg://postgres@/{name}?host={sock}"


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'study.db'}"
    return pg_database(request.getfixturevalue("postgres"))
