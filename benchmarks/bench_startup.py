"""Start-up: a whole ``ngrameval score`` process on a 100-segment file beside ``sacrebleu`` on the same files.

Both commands run as fresh processes (what a shell loop over checkpoints pays), ``--runs`` times each, alternating;
the median wall time of each is printed with their ratio, and the scores are checked equal. Also the import time of
``ngrameval.cli`` alone and whether scipy was imported (it must not be: scoring does not need it).

    python benchmarks/bench_startup.py [--runs 15] [--segments 100]
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent
WORDS = ["the", "cat", "sat", "on", "a", "mat", "dog", "barks", "at", "night", "while", "birds", "sing", "in", "old"]


def corpus(path: Path, n: int, seed: int) -> None:
    rng = random.Random(seed)
    path.write_text("".join(" ".join(rng.choices(WORDS, k=rng.randint(5, 25))) + " .\n" for _ in range(n)))


def wall(cmd: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return time.perf_counter() - start, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--segments", type=int, default=100)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        hyp, ref = Path(tmp) / "hyp.txt", Path(tmp) / "ref.txt"
        corpus(hyp, args.segments, 1)
        corpus(ref, args.segments, 2)
        ours_cmd = [str(BIN / "ngrameval"), "score", str(hyp), "-r", str(ref), "-b"]
        peer_cmd = [str(BIN / "sacrebleu"), str(ref), "-i", str(hyp), "-b", "-w", "2"]
        ours, peer = [], []
        for _ in range(args.runs):
            t, ours_out = wall(ours_cmd)
            ours.append(t)
            t, peer_out = wall(peer_cmd)
            peer.append(t)
        assert abs(float(ours_out) - float(peer_out)) < 0.01, (ours_out, peer_out)
        probe = "import sys, time; t = time.perf_counter(); import ngrameval.cli; "
        probe += "print(time.perf_counter() - t, 'scipy' in sys.modules)"
        imp, scipy = subprocess.run(
            [sys.executable, "-c", probe], check=True, capture_output=True, text=True
        ).stdout.split()
    o, p = statistics.median(ours), statistics.median(peer)
    print(f"score, {args.segments} segments, median of {args.runs} processes: ngrameval {o:.3f} s, sacrebleu {p:.3f} s")
    print(f"ratio sacrebleu / ngrameval: {p / o:.2f}x; same BLEU: {ours_out.strip()} vs {peer_out.strip()}")
    print(f"import ngrameval.cli: {float(imp):.3f} s; scipy imported: {scipy}")


if __name__ == "__main__":
    main()
