"""The admin page of ``ngrameval collect`` at scale: a describe study filled with N descriptions (5 per stimulus,
50 per annotator, written straight into the database), then GET /admin in-process (Starlette's test client, no
network): the first load (every description checked), a second load with nothing new, and a load after one new
description (only its stimulus re-checked); and the progress page (/admin/progress, 100 stimuli a page, least
filled first), first and last page. Prints seconds per load.

    python benchmarks/bench_collect_admin.py                        # 2,000 and 100,000 descriptions, SQLite
    python benchmarks/bench_collect_admin.py -n 2000 --postgres SOCKETDIR
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import sys
import tempfile
import time
import warnings
from pathlib import Path

PER_STIMULUS = 5
PER_ANNOTATOR = 50
STUDY = """
[study]
name = "admin-bench"
kind = "describe"
target = 6
manifest = "stimuli.csv"
"""
WORDS = "a man woman cat dog slices plays cuts rides eats the tomato piano guitar bike apple in kitchen park"


def sentence(k: int) -> str:
    """A short description, different for different k (deterministic)."""
    words = WORDS.split()
    return " ".join(words[(k * p + p) % len(words)] for p in (1, 3, 5, 7, 11, 13, 17))


def fill(root: Path, n: int, url: str | None):  # type: ignore[no-untyped-def]
    """A study directory with n descriptions in its database; the store."""
    from sqlalchemy import insert, select, update

    from ngrameval.collect.models import Annotator, DescriptionRow, Lease, StimulusRow
    from ngrameval.collect.store import Store
    from ngrameval.collect.study import load_study

    n_stim = -(-n // PER_STIMULUS)
    rows = ["id,kind,src,start,end,text", *(f"s{i},text,,,,sentence {i}" for i in range(n_stim))]
    (root / "stimuli.csv").write_text("\n".join(rows) + "\n")
    (root / "study.toml").write_text(STUDY)
    store = Store(load_study(root / "study.toml"), url)
    store.init()
    store.add_admin("admin", "correct horse")
    # description k: stimulus k // 5, by annotator (block of 50 stimuli) * 5 + k % 5: each annotator describes
    # 50 stimuli, nobody one twice
    n_ann = -(-n_stim // PER_ANNOTATOR) * PER_STIMULUS
    now = dt.datetime(2026, 1, 1)
    with store.write() as s:
        s.execute(insert(Annotator), [{"platform": "prolific", "external_id": f"P{a}"} for a in range(n_ann)])
        ids = dict(s.execute(select(Annotator.external_id, Annotator.id)).all())
        stims = list(s.scalars(select(StimulusRow.id).order_by(StimulusRow.id)))
        batch = [
            {
                "annotator_id": ids[f"P{k // PER_STIMULUS // PER_ANNOTATOR * PER_STIMULUS + k % PER_STIMULUS}"],
                "stimulus_id": stims[k // PER_STIMULUS],
                "token": f"tok{k}",
                "text": sentence(k),
                "language": "English",
            }
            for k in range(n)
        ]
        s.execute(insert(DescriptionRow), batch)
        s.execute(  # what the app keeps beside each description: its closed lease, its stimulus' count
            insert(Lease),
            [
                {
                    "annotator_id": b["annotator_id"],
                    "stimulus_id": b["stimulus_id"],
                    "token": b["token"],
                    "expires": now,
                    "closed": now,
                }
                for b in batch
            ],
        )
        s.execute(update(StimulusRow).values(done=PER_STIMULUS))
    return store


def timed(client, path: str, marker: str = "Annotators") -> float:  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    r = client.get(path)
    elapsed = time.perf_counter() - t
    if r.status_code != 200 or marker not in r.text:
        raise RuntimeError(f"GET {path}: {r.status_code}")
    return elapsed


def run(n: int, url: str | None) -> dict[str, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient
    from ngrameval.collect.app import create_app

    with tempfile.TemporaryDirectory(prefix="nge-admin-bench-") as tmp:
        store = fill(Path(tmp), n, url)
        client = TestClient(create_app(store), follow_redirects=True)
        page = client.get("/admin/login").text
        csrf = re.search(r'name="csrf" value="([^"]*)"', page)[1]  # type: ignore[index]
        login = {"csrf": csrf, "username": "admin", "password": "correct horse"}
        client.post("/admin/login", data=login, follow_redirects=False)  # not yet /admin: that is timed
        out = {"first": timed(client, "/admin"), "again": timed(client, "/admin")}
        aid = store.annotator_for("prolific", "late")
        got = store.lease_stimulus(aid)
        if got is not None:
            store.submit_description(aid, got[1].token, sentence(n + 1), "English", "")
        out["one new"] = timed(client, "/admin")
        out["last page"] = timed(client, "/admin?page=1000000")
        out["progress"] = timed(client, "/admin/progress", "least filled first")
        out["progress last"] = timed(client, f"/admin/progress?page={-(-n // PER_STIMULUS // 100)}", "least filled")
        store.engine.dispose()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, action="append", help="descriptions (repeatable; default 2000 and 100000)")
    ap.add_argument("--postgres", help="socket directory of a PostgreSQL server (database created per run)")
    args = ap.parse_args()
    print(
        f"{'descriptions':>12} {'database':>10} {'first':>8} {'again':>8} {'one new':>8} {'last page':>9} "
        f"{'progress':>9} {'its last':>9}"
    )
    for n in args.n or [2000, 100_000]:
        url = None
        if args.postgres:
            sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "collect"))
            from collect_server import pg_database  # a fresh database in that cluster

            url = pg_database(args.postgres)
        t = run(n, url)
        db = "PostgreSQL" if url else "SQLite"
        print(
            f"{n:>12} {db:>10} {t['first']:>7.3f}s {t['again']:>7.3f}s {t['one new']:>7.3f}s {t['last page']:>8.3f}s "
            f"{t['progress']:>8.3f}s {t['progress last']:>8.3f}s",
            flush=True,
        )


if __name__ == "__main__":
    main()
