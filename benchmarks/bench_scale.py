"""Scaling out: ``jobs`` 1 vs 2 threads on 100k segments (BLEU, ROUGE-L, paired AR) and Dask with 1 vs 2 local
worker processes on text shards, with wall time and peak RSS (VmHWM) of every process.

    python benchmarks/bench_scale.py                      # both parts
    python benchmarks/bench_scale.py --dist-segments 4000000 --skip-jobs
    python benchmarks/bench_scale.py --dist-segments 1000000 --dist-metrics nist --skip-jobs --check-serial
    python benchmarks/bench_scale.py --skip-jobs --skip-dist --whole-process   # the CLI process, --jobs 1 vs 2
    python benchmarks/bench_scale.py --skip-jobs --skip-dist --whole-process --segments 1000000  # start-up amortised

Every configuration of the first part runs in a fresh process (so its peak RSS is its own) and reports the best
of ``--repeat`` runs; the identity of the numbers with jobs=1 is checked on every run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_bleu import make_corpus_fast


def peak_rss_mb() -> float:
    """Peak resident memory of this process (VmHWM), MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def one_job(task: str, jobs: int, n_seg: int, repeat: int) -> dict[str, float]:
    """Best wall time of ``task`` with ``jobs`` threads (run in a child process by :func:`jobs_table`)."""
    from ngrameval.api import measure
    from ngrameval.meta.significance import paired_test

    hyps, refs = make_corpus_fast(n_seg, 1)
    other, _ = make_corpus_fast(n_seg, 2)
    systems = {"a": hyps, "b": other}
    metric = {"bleu": "bleu", "rouge-l": "rouge-l", "ar": "bleu"}[task]
    rows = measure(systems, refs, metric) if task == "ar" else None
    times, cpu, results = [], [], []
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        if rows is not None:
            res: object = paired_test(rows, ["a", "b"], test="ar", n_resamples=1000, n_confidence=100, jobs=jobs)
        else:
            res = [r.corpus().tolist() for r in measure(systems, refs, metric, jobs=jobs)]
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
        results.append(repr(res))
    assert len(set(results)) == 1
    digest = hashlib.sha256(results[0].encode()).hexdigest()[:16]  # compared across processes
    return {"seconds": min(times), "cpu": min(cpu), "peak_rss_mb": peak_rss_mb(), "result": digest}


def jobs_table(n_seg: int, repeat: int) -> None:
    print(f"## --jobs on {n_seg:,} segments, 2 systems (AR: 1,000 trials + 100 bootstrap resamples)")
    print("wall s: best run; cpu s: its CPU time (all threads); load on the cores slows jobs=2 first")
    print(
        f"{'task':<8} {'jobs=1 s':>9} {'jobs=2 s':>9} {'speed-up':>9} {'cpu1 s':>7} {'cpu2 s':>7} "
        f"{'RSS1 MB':>8} {'RSS2 MB':>8} same"
    )
    for task in ("bleu", "rouge-l", "ar"):
        out = {}
        for jobs in (1, 2):
            cmd = [sys.executable, __file__, "--one", task, "--jobs", str(jobs), "--segments", str(n_seg)]
            run = subprocess.run([*cmd, "--repeat", str(repeat)], capture_output=True, text=True, check=True)
            out[jobs] = json.loads(run.stdout.strip().splitlines()[-1])
        a, b = out[1], out[2]
        print(
            f"{task:<8} {a['seconds']:>9.3f} {b['seconds']:>9.3f} {a['seconds'] / b['seconds']:>8.2f}x "
            f"{a['cpu']:>7.3f} {b['cpu']:>7.3f} "
            f"{a['peak_rss_mb']:>8.0f} {b['peak_rss_mb']:>8.0f} {a['result'] == b['result']}"
        )


def whole_process_table(n_seg: int, repeat: int, metrics: tuple[str, ...]) -> None:
    """``ngrameval score a.txt b.txt -r ref.txt -m METRIC --jobs J`` as a fresh process, J = 1 and 2: the whole
    process (start-up, imports, reading the files, counting, output), wall seconds and the child's CPU seconds
    (user + sys of every thread), best of ``repeat`` runs made in interleaved rounds; the outputs of J = 1 and 2 must
    be the same bytes. The speed-up is a wall-clock ratio: run it on idle cores (``uptime`` below 0.2), nothing else
    running.

    ``start s`` is the same command on files of one line (the start-up ``S``: interpreter, imports, parser, output)
    and ``bound`` what two jobs could reach if ``S`` were serial and everything else halved (Amdahl): ``t1 / (S +
    (t1 - S) / 2)``. ``score`` counts during its start-up when it can (:mod:`ngrameval.scale.early`), so a run may
    pass it. The speed-up has three decimals, so that a goal such as 1.7x is not met by rounding; ``cpu2`` well above
    ``cpu1`` says the machine's other guests were busy (each core slower) during the run."""
    print(f"\n## whole process, `ngrameval score` of 2 systems x {n_seg:,} segments (1 reference), --jobs 1 vs 2")
    print(
        f"{'metric':<8} {'jobs=1 s':>9} {'jobs=2 s':>9} {'speed-up':>9} {'start s':>8} {'bound':>6} "
        f"{'cpu1 s':>7} {'cpu2 s':>7} same"
    )
    with tempfile.TemporaryDirectory() as tmp:
        hyps, refs = make_corpus_fast(n_seg, 1)
        other, _ = make_corpus_fast(n_seg, 2)
        files = {name: Path(tmp) / f"{name}.txt" for name in ("a", "b", "ref")}
        for name, lines in (("a", hyps), ("b", other), ("ref", refs)):
            files[name].write_text("\n".join(lines) + "\n", encoding="utf-8")
        tiny = {name: Path(tmp) / f"{name}1.txt" for name in ("a", "b", "ref")}
        for name, lines in (("a", hyps), ("b", other), ("ref", refs)):
            tiny[name].write_text(lines[0] + "\n", encoding="utf-8")
        for metric in metrics:
            wall: dict[int, float] = {}
            cpu: dict[int, float] = {}
            cmds = {}
            for jobs in (0, 1, 2):  # 0: the start-up, one job on the one-line files
                use = tiny if jobs == 0 else files
                cmd = [sys.executable, "-m", "ngrameval", "score", str(use["a"]), str(use["b"]), "-r"]
                cmds[jobs] = [*cmd, str(use["ref"]), "-m", metric, "--jobs", str(max(jobs, 1)), "-o"]
                cmds[jobs].append(str(Path(tmp) / f"out{jobs}.txt"))
            for _ in range(repeat):  # in rounds (0, 1, 2, 0, 1, 2, ...): the machine's ups and downs fall on all
                for jobs, cmd in cmds.items():
                    before = resource.getrusage(resource.RUSAGE_CHILDREN)
                    t = time.perf_counter()
                    subprocess.run(cmd, check=True)
                    secs = time.perf_counter() - t
                    after = resource.getrusage(resource.RUSAGE_CHILDREN)
                    used = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
                    wall[jobs], cpu[jobs] = min(wall.get(jobs, secs), secs), min(cpu.get(jobs, used), used)
            outs = {jobs: Path(cmd[-1]).read_bytes() for jobs, cmd in cmds.items()}
            bound = wall[1] / (wall[0] + (wall[1] - wall[0]) / 2)
            print(
                f"{metric:<8} {wall[1]:>9.3f} {wall[2]:>9.3f} {wall[1] / wall[2]:>8.3f}x {wall[0]:>8.3f} "
                f"{bound:>5.2f}x {cpu[1]:>7.3f} {cpu[2]:>7.3f} {outs[1] == outs[2]}"
            )


def write_shards(root: Path, n_seg: int, per_shard: int) -> None:
    """System and reference shards of the synthetic corpus, each shard from its own seed."""
    (root / "sys").mkdir()
    (root / "ref").mkdir()
    for k, start in enumerate(range(0, n_seg, per_shard)):
        hyps, refs = make_corpus_fast(min(per_shard, n_seg - start), 1000 + k)
        (root / "sys" / f"{k:05d}.txt").write_text("\n".join(hyps) + "\n", encoding="utf-8")
        (root / "ref" / f"{k:05d}.txt").write_text("\n".join(refs) + "\n", encoding="utf-8")


def serial_scores(root: str, metrics: str) -> list[float]:
    """The one-machine scores of the shards under ``root`` (run in a child process: its memory is its own)."""
    from ngrameval.api import score

    def lines(kind: str) -> list[str]:
        return [x for p in sorted((Path(root) / kind).iterdir()) for x in p.read_text(encoding="utf-8").splitlines()]

    return [s.score for s in score({"sys": lines("sys")}, lines("ref"), metrics, jobs=1)]


def dist_table(n_seg: int, per_shard: int, metrics: str, nist_groups: int | None, check: bool) -> None:
    from distributed import Client, LocalCluster

    from ngrameval.scale import dask as nd
    from ngrameval.scale.dask.nist import checked_groups

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t = time.perf_counter()
        write_shards(root, n_seg, per_shard)
        size = sum(p.stat().st_size for p in root.rglob("*.txt")) / 1e9
        n_parts = -(-n_seg // per_shard)
        groups = f", NIST in {checked_groups(nist_groups, n_parts)} bucket groups" if "nist" in metrics else ""
        print(f"\n## Dask: {n_seg:,} segments in {n_parts} shards ({size:.2f} GB of text), -m {metrics}{groups}")
        print(f"(shards written in {time.perf_counter() - t:.1f} s)")
        print(f"{'workers':>7} {'seconds':>8} {'segments/s':>11} {'peak RSS per worker MB':>24} {'client MB':>10}")
        seen = set()
        for n_workers in (1, 2):
            with (
                LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=":0") as lc,
                Client(lc) as client,
            ):
                client.run(lambda: None)  # workers up before the clock starts
                parts = nd.from_text_shards({"sys": str(root / "sys")}, [str(root / "ref")])
                t = time.perf_counter()
                scores = nd.score(parts, metrics, client, nist_groups=nist_groups)
                secs = time.perf_counter() - t
                rss = client.run(peak_rss_mb)
            seen.add(tuple(s.score for s in scores))
            per_worker = ", ".join(f"{v:.0f}" for v in rss.values())
            print(f"{n_workers:>7} {secs:>8.1f} {n_seg / secs:>11,.0f} {per_worker:>24} {peak_rss_mb():>10.0f}")
        shown = ", ".join(f"{s.metric} {s.score:.6f}" for s in scores)
        print(f"same scores with 1 and 2 workers: {len(seen) == 1}; {shown}")
        if check:
            t = time.perf_counter()
            code = f"import json, bench_scale; print(json.dumps(bench_scale.serial_scores({str(root)!r}, {metrics!r})))"
            run = subprocess.run(
                [sys.executable, "-c", f"{code}\nimport resource; print(resource.getrusage(0).ru_maxrss / 1024)"],
                capture_output=True, text=True, check=True, cwd=Path(__file__).parent,
            )  # fmt: skip
            out, rss = run.stdout.strip().splitlines()[-2:]
            same = tuple(json.loads(out)) in seen
            secs = time.perf_counter() - t
            print(f"one machine (in memory, jobs=1): {secs:.1f} s, peak RSS {float(rss):.0f} MB; same scores: {same}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--segments", type=int, default=100_000, help="segments of the --jobs part (100000)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per configuration, best taken (3)")
    ap.add_argument("--dist-segments", type=int, default=2_000_000, help="segments of the Dask part (2000000)")
    ap.add_argument("--per-shard", type=int, default=100_000, help="segments per shard (100000)")
    ap.add_argument("--dist-metrics", default="bleu,rouge-l", help="metrics of the Dask part (bleu,rouge-l)")
    ap.add_argument("--nist-groups", type=int, help="NIST's bucket groups G (default: automatic)")
    ap.add_argument("--check-serial", action="store_true", help="compare with one machine's in-memory scores")
    ap.add_argument("--skip-jobs", action="store_true")
    ap.add_argument("--whole-process", action="store_true", help="also time the whole `ngrameval score` process")
    ap.add_argument("--whole-metrics", default="bleu,rouge-l,nist", help="metrics of --whole-process")
    ap.add_argument("--skip-dist", action="store_true")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--jobs", type=int, default=1, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one_job(args.one, args.jobs, args.segments, args.repeat)))
        return
    print(f"cores: {os.cpu_count()}, load average before: {os.getloadavg()[0]:.2f}, numpy {np.__version__}")
    if not args.skip_jobs:
        jobs_table(args.segments, args.repeat)
    if args.whole_process:
        whole_process_table(args.segments, args.repeat, tuple(args.whole_metrics.split(",")))
    if not args.skip_dist:
        dist_table(args.dist_segments, args.per_shard, args.dist_metrics, args.nist_groups, args.check_serial)
    print(f"\nload average after: {os.getloadavg()[0]:.2f} (other processes share these cores)")


if __name__ == "__main__":
    main()
