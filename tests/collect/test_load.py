"""Load and faults against a real uvicorn: concurrent simulated annotators (with retried POSTs) lose no
submission and double-count none, on SQLite and PostgreSQL (a reduced form of benchmarks/bench_collect.py);
killing the server (SIGKILL) mid-study loses nothing that was acknowledged."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
import time
from pathlib import Path

import pytest

from collect.collect_server import free_port, start, stop

pytest.importorskip("httpx", reason="needs httpx (the test extra)")
_spec = importlib.util.spec_from_file_location(
    "bench_collect", Path(__file__).resolve().parents[2] / "benchmarks" / "bench_collect.py"
)
assert _spec and _spec.loader
bench = importlib.util.module_from_spec(_spec)
sys.modules["bench_collect"] = bench
_spec.loader.exec_module(bench)


def _init(study: Path, url: str) -> None:
    from ngrameval.collect.store import Store
    from ngrameval.collect.study import load_study

    Store(load_study(study), url).init()


def test_concurrent_annotators_lose_nothing(tmp_path: Path, db_url: str) -> None:
    study = bench.write_load_study(tmp_path)
    _init(study, db_url)
    port = free_port()
    proc = start(study, port, db_url)
    try:
        res = asyncio.run(bench.simulate(f"http://127.0.0.1:{port}", 8, 4.0))
    finally:
        stop(proc)
    db = bench.stored(study, db_url)
    assert res.errors == 0
    assert sum(len(v) for v in res.acknowledged.values()) > 10
    assert db == {k: v for k, v in res.acknowledged.items() if v}  # exactly the acknowledged, each once


def test_kill_and_restart_keeps_acknowledged(tmp_path: Path) -> None:
    study = bench.write_load_study(tmp_path, 40)
    url = f"sqlite:///{tmp_path / 'study.db'}"
    _init(study, url)
    port = free_port()
    proc = start(study, port, url)
    res = bench.Result()
    try:
        asyncio.run(bench.annotator(f"http://127.0.0.1:{port}", "k1", time.monotonic() + 1.0, res))
    finally:
        stop(proc, kill=True)  # SIGKILL: no shutdown handler runs
    first = set(res.acknowledged["k1"])
    assert first and bench.stored(study, url)["k1"] == first
    proc = start(study, port, url)
    try:  # the same annotator carries on after the restart and never gets a stimulus twice
        asyncio.run(bench.annotator(f"http://127.0.0.1:{port}", "k1", time.monotonic() + 0.5, res))
    finally:
        stop(proc)
    stored = bench.stored(study, url)["k1"]
    assert first <= stored and stored == res.acknowledged["k1"]
