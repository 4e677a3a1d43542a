"""Streaming ``ngrameval score`` (``--chunk-size``): wall time and peak RSS of a subprocess scoring BLEU, ROUGE-L
and NIST on the synthetic corpus of bench_bleu.py (Zipfian words, 15-35 a segment, one reference with 60% of
the hypothesis's words), written to disk once per size (gzip with ``--gzip``), in memory and streamed.

    python benchmarks/bench_stream.py --segments 1000000 3000000      # RSS flat in the size when streamed
    python benchmarks/bench_stream.py --segments 10000000 --gzip --no-memory

Peak RSS is the child's VmHWM (/proc/self/status), measured per run in a fresh interpreter. Streamed NIST keeps
its reference n-gram counts on disk (ngrameval.scale.refspill: up to 104 bytes a reference token under TMPDIR), so
its RSS does not grow with the corpus either.
"""

from __future__ import annotations

import argparse
import gzip
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO

sys.path.insert(0, str(Path(__file__).parent))
from bench_bleu import make_corpus_fast

PIECE = 500_000  # segments generated at a time (the generator holds one piece)


def write_corpus(root: Path, n_seg: int, packed: bool) -> tuple[Path, Path]:
    """The hypotheses and references of ``n_seg`` segments, generated piece by piece."""
    suffix = ".txt.gz" if packed else ".txt"
    hyp_path, ref_path = root / f"sys{n_seg}{suffix}", root / f"ref{n_seg}{suffix}"

    def opener(path: Path) -> IO[str]:
        if packed:  # level 1: level 9 takes minutes per million segments
            return gzip.open(path, "wt", encoding="utf-8", compresslevel=1)
        return open(path, "w", encoding="utf-8")

    with opener(hyp_path) as h, opener(ref_path) as r:
        for k, start in enumerate(range(0, n_seg, PIECE)):
            hyps, refs = make_corpus_fast(min(PIECE, n_seg - start), 7 + k)
            h.write("\n".join(hyps) + "\n")
            r.write("\n".join(refs) + "\n")
    return hyp_path, ref_path


# VmHWM, the peak RSS of this process image: ru_maxrss would also count the parent's memory at fork (Linux
# carries the forked image's high-water mark across exec)
_CHILD = (
    "import re, sys, time\n"
    "from ngrameval.cli import main\n"
    "t = time.perf_counter()\n"
    "rc = main(sys.argv[1:])\n"
    "hwm = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read())\n"
    "print(time.perf_counter() - t, int(hwm[1]) / 1024, file=sys.stderr)\n"
    "sys.exit(rc)\n"
)


def run(hyp: Path, ref: Path, metric: str, extra: list[str]) -> tuple[float, float, str]:
    """(seconds, peak RSS MB, score line) of one ``ngrameval score`` in a fresh interpreter."""
    argv = ["score", str(hyp), "-r", str(ref), "-m", metric, "-b", "-w", "6", *extra]
    done = subprocess.run([sys.executable, "-c", _CHILD, *argv], capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"failed: {' '.join(argv)}\n{done.stderr}")
    secs, rss = map(float, done.stderr.strip().splitlines()[-1].split())
    return secs, rss, done.stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--segments", type=int, nargs="+", default=[100_000, 300_000], help="corpus sizes")
    ap.add_argument("--metrics", default="bleu,rouge-l,nist", help="one run per metric (default bleu,rouge-l,nist)")
    ap.add_argument("--chunk-size", type=int, default=50_000, help="segments a chunk when streaming (50000)")
    ap.add_argument("--jobs", type=int, default=1, help="--jobs of every run (1)")
    ap.add_argument("--gzip", action="store_true", help="write the corpus gzipped")
    ap.add_argument("--no-memory", action="store_true", help="skip the in-memory runs (large sizes)")
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; --jobs {args.jobs}")
    print(f"{'segments':>10} {'metric':>8} {'mode':>9} {'seconds':>8} {'peak RSS MB':>12}  score")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.segments:
            t = time.perf_counter()
            hyp, ref = write_corpus(Path(tmp), n, args.gzip)
            size = (hyp.stat().st_size + ref.stat().st_size) / 2**20
            print(f"# {n:,} segments: {size:,.0f} MB on disk, written in {time.perf_counter() - t:.0f} s")
            for metric in args.metrics.split(","):
                modes = [("streamed", ["--chunk-size", str(args.chunk_size)])]
                if not args.no_memory:
                    modes.insert(0, ("in memory", []))
                shown = set()
                for mode, extra in modes:
                    secs, rss, line = run(hyp, ref, metric, [*extra, "--jobs", str(args.jobs)])
                    shown.add(line)
                    print(f"{n:>10,} {metric:>8} {mode:>9} {secs:>8.1f} {rss:>12.0f}  {line}", flush=True)
                if len(shown) > 1:
                    print("  SCORES DIFFER between in memory and streamed")
            hyp.unlink()
            ref.unlink()
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
