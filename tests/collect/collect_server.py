"""A real server for the collect tests and benchmarks: ``ngrameval collect serve`` (uvicorn) in a subprocess on a
free loopback port, and a throw-away PostgreSQL 15 cluster (Debian's binaries, run as the ``postgres`` user, a Unix
socket in a temporary directory, no TCP listener)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(study: Path, port: int, database: str | None = None, *extra: str) -> subprocess.Popen[bytes]:
    cmd = [
        sys.executable,
        "-m",
        "ngrameval",
        "collect",
        "serve",
        str(study),
        "--port",
        str(port),
        "--log-level",
        "warning",
    ]
    if database:
        cmd += ["--database", database]
    cmd += extra
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120  # a hang guard, not a speed requirement: a loaded machine starts slowly
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited: {proc.stderr.read().decode() if proc.stderr else ''}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/status", timeout=2):
                return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("the server did not come up in 120 s")


def stop(proc: subprocess.Popen[bytes], kill: bool = False) -> None:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL if kill else signal.SIGTERM)
    proc.wait(timeout=20)


@contextmanager
def serving(study: Path, database: str | None = None, *extra: str) -> Iterator[str]:
    port = free_port()
    proc = start(study, port, database, *extra)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(proc)


PG_BIN = Path("/usr/lib/postgresql/15/bin")


@contextmanager
def pg_cluster() -> Iterator[str]:
    """Start a throw-away cluster; yields its socket directory; stops and removes it afterwards."""
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
    opts = f"-c listen_addresses='' -k {sock} -c fsync=off -c max_connections=300"
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
