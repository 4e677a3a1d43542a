"""Load and faults against a real uvicorn: 100 concurrent simulated annotators (with retried POSTs, some giving
up) lose no submission, double-count none and overshoot no target, on SQLite and PostgreSQL (a reduced form of
benchmarks/bench_collect.py); killing the server (SIGKILL) mid-study loses nothing that was acknowledged. Each
run ends when its work is done, never after a fixed time."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
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


@pytest.mark.slow
def test_crowd_of_100_over_http(tmp_path: Path, db_url: str) -> None:
    """100 annotators at once against a real uvicorn, every other POST sent twice, some giving up after being
    shown an item: exactly the acknowledged descriptions are stored, no stimulus passes its target, and every
    stimulus not held by an abandoned lease is full."""
    study = bench.write_load_study(tmp_path, 60, 3)
    _init(study, db_url)
    port = free_port()
    proc = start(study, port, db_url)
    res = bench.Result()
    try:
        url = f"http://127.0.0.1:{port}"

        async def crowd() -> None:
            await asyncio.gather(
                *(bench.annotator(url, f"c{i:03d}", float("inf"), res, give_up=0.05, seed=1) for i in range(100))
            )

        asyncio.run(crowd())
    finally:
        stop(proc)
    db = bench.stored(study, db_url)
    assert res.errors == 0
    assert db == {k: v for k, v in res.acknowledged.items() if v}  # exactly the acknowledged, each once
    per = bench.fills(study, db_url)
    assert max(per) <= 3  # never past the target
    assert sum(per) == sum(len(v) for v in db.values())
    assert sum(x == 3 for x in per) >= 60 - res.gave_up  # only the abandoned leases' stimuli may be short


@pytest.mark.slow
def test_kill_and_restart_keeps_acknowledged(tmp_path: Path) -> None:
    study = bench.write_load_study(tmp_path, 40)
    url = f"sqlite:///{tmp_path / 'study.db'}"
    _init(study, url)
    port = free_port()
    proc = start(study, port, url)
    res = bench.Result()
    try:
        asyncio.run(bench.annotator(f"http://127.0.0.1:{port}", "k1", float("inf"), res, most=5))
    finally:
        stop(proc, kill=True)  # SIGKILL: no shutdown handler runs
    first = set(res.acknowledged["k1"])
    assert len(first) == 5 and bench.stored(study, url)["k1"] == first
    proc = start(study, port, url)
    try:  # the same annotator carries on after the restart and never gets a stimulus twice
        asyncio.run(bench.annotator(f"http://127.0.0.1:{port}", "k1", float("inf"), res, most=10))
    finally:
        stop(proc)
    stored = bench.stored(study, url)["k1"]
    assert first <= stored and stored == res.acknowledged["k1"] and len(stored) == 10
