"""A real server for the collect tests: ``ngrameval collect serve`` (uvicorn) in a subprocess on a free
loopback port."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
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
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited: {proc.stderr.read().decode() if proc.stderr else ''}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/status", timeout=2):
                return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("the server did not come up in 30 s")


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
