"""Load on ``ngrameval collect serve``: N concurrent simulated annotators describe text stimuli for S seconds
against a local uvicorn (loopback only); every other submission is POSTed twice (a retry). Afterwards the
database must hold exactly the acknowledged submissions: none lost, none counted twice. Prints p50/p95 latency.

    python benchmarks/bench_collect.py                       # SQLite, 50 annotators, 60 s
    python benchmarks/bench_collect.py --postgres SOCKETDIR  # PostgreSQL through its Unix socket
"""

from __future__ import annotations

import argparse
import asyncio
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

STUDY = """
[study]
name = "load"
kind = "describe"
target = 1000
manifest = "stimuli.csv"
"""


def write_load_study(root: Path, n_stimuli: int = 300) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    rows = ["id,kind,src,start,end,text", *(f"t{i},text,,,,sentence number {i}" for i in range(n_stimuli))]
    (root / "stimuli.csv").write_text("\n".join(rows) + "\n")
    (root / "study.toml").write_text(STUDY)
    return root / "study.toml"


def _field(html: str, name: str) -> str:
    m = re.search(rf'name="{name}" value="([^"]*)"', html)
    if not m:
        raise RuntimeError(f"no field {name} in the page")
    return m[1]


@dataclass
class Result:
    acknowledged: dict[str, set[str]] = field(default_factory=dict)  # annotator -> stimulus ids acknowledged
    latencies: list[float] = field(default_factory=list)  # seconds per POST
    errors: int = 0


async def annotator(url: str, name: str, until: float, res: Result) -> None:
    import httpx

    acked = res.acknowledged.setdefault(name, set())
    async with httpx.AsyncClient(base_url=url, timeout=60, follow_redirects=False) as c:
        await c.get(f"/start?PROLIFIC_PID={name}&STUDY_ID=load&SESSION_ID=s")
        k = 0
        while time.monotonic() < until:
            page = await c.get("/task")
            if page.status_code != 200:
                break  # /done: nothing left
            form = {f: _field(page.text, f) for f in ("csrf", "token", "stimulus")}
            form["description"] = f"{name} describes {form['stimulus']}"
            for _ in range(2 if k % 2 else 1):  # every other submission is retried
                t0 = time.perf_counter()
                r = await c.post("/task", data=form)
                res.latencies.append(time.perf_counter() - t0)
                if r.status_code == 303:
                    acked.add(form["stimulus"])
                else:
                    res.errors += 1
            k += 1


async def simulate(url: str, n: int, seconds: float) -> Result:
    res = Result()
    until = time.monotonic() + seconds
    await asyncio.gather(*(annotator(url, f"sim{i:03d}", until, res) for i in range(n)))
    return res


def stored(study: Path, database: str | None) -> dict[str, set[str]]:
    """Annotator -> stimulus ids in the database (descriptions), read through the store."""
    from ngrameval.collect.store import Store
    from ngrameval.collect.study import load_study

    store = Store(load_study(study), database)
    out: dict[str, set[str]] = {}
    for d, _, a in store.descriptions():
        out.setdefault(a.external_id, set()).add(str(d.stimulus_id))
    return out


def percentile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=50, help="concurrent annotators (50)")
    ap.add_argument("--seconds", type=float, default=60, help="duration (60)")
    ap.add_argument("--postgres", metavar="SOCKETDIR", help="a running PostgreSQL's socket dir (db 'postgres')")
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "collect"))
    from collect_server import free_port, start, stop

    with tempfile.TemporaryDirectory() as tmp:
        study = write_load_study(Path(tmp))
        database = None
        if args.postgres:
            import uuid

            import psycopg

            name = "bench" + uuid.uuid4().hex[:8]
            with psycopg.connect(f"host={args.postgres} user=postgres dbname=postgres", autocommit=True) as conn:
                conn.execute(f'CREATE DATABASE "{name}"')  # a generated identifier
            database = f"postgresql+psycopg://postgres@/{name}?host={args.postgres}"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "ngrameval",
                "collect",
                "init",
                str(study),
                *(["--database", database] if database else []),
            ],
            check=True,
        )
        port = free_port()
        proc = start(study, port, database)
        try:
            res = asyncio.run(simulate(f"http://127.0.0.1:{port}", args.n, args.seconds))
        finally:
            stop(proc)
        db = stored(study, database)
    acked = sum(len(v) for v in res.acknowledged.values())
    rows = sum(len(v) for v in db.values())
    lost = sum(len(v - db.get(k, set())) for k, v in res.acknowledged.items())
    print(
        f"{'postgresql' if args.postgres else 'sqlite'}: {args.n} annotators x {args.seconds:g} s: "
        f"{len(res.latencies)} POSTs, {acked} acknowledged submissions, {rows} rows stored, {lost} lost, "
        f"{res.errors} errors; latency p50 {1000 * percentile(res.latencies, 0.5):.1f} ms, "
        f"p95 {1000 * percentile(res.latencies, 0.95):.1f} ms"
    )
    return 0 if lost == 0 and rows == acked and res.errors == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
