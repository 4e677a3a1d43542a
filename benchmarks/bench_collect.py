"""Load on ``ngrameval collect serve``: N concurrent simulated annotators describe text stimuli against a local
uvicorn (loopback only) until the study is full or the time is up; every other submission is POSTed twice (a
retry) and a share of annotators give up after being shown an item (their leases expire later). Afterwards the
database must hold exactly the acknowledged submissions (none lost, none counted twice) and no stimulus more
descriptions than its target. Prints, per database and crowd size: acknowledged, stored, lost, per-stimulus
max - target, POST latency p50/p95.

    python benchmarks/bench_collect.py                   # SQLite and a throw-away PostgreSQL, 50 and 200 annotators
    python benchmarks/bench_collect.py -n 50 --db sqlite
"""

from __future__ import annotations

import argparse
import asyncio
import random
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
target = {target}
manifest = "stimuli.csv"
"""


def write_load_study(root: Path, n_stimuli: int = 300, target: int = 3) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    rows = ["id,kind,src,start,end,text", *(f"t{i},text,,,,sentence number {i}" for i in range(n_stimuli))]
    (root / "stimuli.csv").write_text("\n".join(rows) + "\n")
    (root / "study.toml").write_text(STUDY.format(target=target))
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
    gave_up: int = 0


async def annotator(
    url: str, name: str, until: float, res: Result, give_up: float = 0.0, most: int | None = None, seed: int = 0
) -> None:
    """One annotator: arrives from Prolific, then describes what /task gives until the study is full (or only
    others' leases are left), ``until`` (a monotonic time) passes, or ``most`` submissions are acknowledged."""
    import httpx

    rng = random.Random(f"{seed}:{name}")
    acked = res.acknowledged.setdefault(name, set())
    # An idle connection is not reused after 1 s: the server closes one after 5 s (uvicorn's keep-alive), and a
    # client reusing it at that moment reads a closed socket (a browser retries then; httpx does not).
    limits = httpx.Limits(keepalive_expiry=1.0)
    async with httpx.AsyncClient(base_url=url, timeout=120, follow_redirects=False, limits=limits) as c:
        await c.get(f"/start?PROLIFIC_PID={name}&STUDY_ID=load&SESSION_ID={name}")
        k = 0
        while time.monotonic() < until and (most is None or len(acked) < most):
            page = await c.get("/task")
            if page.status_code != 200 or 'name="token"' not in page.text:
                break  # /done, or only items others are working on
            if rng.random() < give_up:
                res.gave_up += 1
                break
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


async def simulate(url: str, n: int, seconds: float, give_up: float = 0.0) -> Result:
    res = Result()
    until = time.monotonic() + seconds
    await asyncio.gather(*(annotator(url, f"sim{i:03d}", until, res, give_up) for i in range(n)))
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


def fills(study: Path, database: str | None) -> list[int]:
    """Descriptions per stimulus."""
    from ngrameval.collect.store import Store
    from ngrameval.collect.study import load_study

    store = Store(load_study(study), database)
    return [r.done for r, _ in store.stimulus_progress(limit=10**6)]


def percentile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


def run(db: str, n: int, seconds: float, give_up: float, n_stimuli: int, target: int, socket_dir: str | None) -> bool:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "collect"))
    from collect_server import free_port, pg_database, start, stop

    with tempfile.TemporaryDirectory() as tmp:
        study = write_load_study(Path(tmp), n_stimuli, target)
        database = pg_database(socket_dir) if db == "postgresql" and socket_dir else None
        cmd = [sys.executable, "-m", "ngrameval", "collect", "init", str(study)]
        subprocess.run([*cmd, *(["--database", database] if database else [])], check=True, capture_output=True)
        port = free_port()
        proc = start(study, port, database)
        t0 = time.perf_counter()
        try:
            res = asyncio.run(simulate(f"http://127.0.0.1:{port}", n, seconds, give_up))
        finally:
            stop(proc)
        wall = time.perf_counter() - t0
        db_rows = stored(study, database)
        per = fills(study, database)
    acked = sum(len(v) for v in res.acknowledged.values())
    rows = sum(len(v) for v in db_rows.values())
    lost = sum(len(v - db_rows.get(k, set())) for k, v in res.acknowledged.items())
    over = max(per) - target
    print(
        f"{db:10} {n:4d} annotators: {acked:5d} acknowledged, {rows:5d} stored, {lost} lost, "
        f"max - target {over:+d} ({sum(x == target for x in per)}/{len(per)} stimuli full), "
        f"{res.gave_up} gave up, {res.errors} errors; {len(res.latencies)} POSTs in {wall:.1f} s, "
        f"p50 {1000 * percentile(res.latencies, 0.5):.0f} ms, p95 {1000 * percentile(res.latencies, 0.95):.0f} ms",
        flush=True,
    )
    return lost == 0 and rows == acked and res.errors == 0 and over <= 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, nargs="+", default=[50, 200], help="concurrent annotators (50 200)")
    ap.add_argument("--db", nargs="+", default=["sqlite", "postgresql"], choices=["sqlite", "postgresql"])
    ap.add_argument("--seconds", type=float, default=120, help="at most this long per run (120)")
    ap.add_argument("--stimuli", type=int, default=300, help="stimuli (300)")
    ap.add_argument("--target", type=int, default=3, help="descriptions per stimulus (3)")
    ap.add_argument("--give-up", type=float, default=0.05, help="chance an annotator leaves at each item (0.05)")
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "collect"))
    from collect_server import pg_cluster

    ok = True
    for db in args.db:
        if db == "postgresql":
            with pg_cluster() as sock:
                for n in args.n:
                    ok &= run(db, n, args.seconds, args.give_up, args.stimuli, args.target, sock)
        else:
            for n in args.n:
                ok &= run(db, n, args.seconds, args.give_up, args.stimuli, args.target, None)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
