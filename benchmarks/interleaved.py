"""Wall time of whole commands, each a fresh process, run in interleaved rounds (A, B, C, A, B, C, ...) so that a
change of the machine's state during the run falls on every command alike; prints the fastest run, the first
quartile and the median of each. A command may start with ``VAR=value`` words (its environment).

    python benchmarks/interleaved.py 15 "ngrameval score a.txt b.txt -r ref.txt -m bleu --jobs 1 -o /dev/null" \\
        "ngrameval score a.txt b.txt -r ref.txt -m bleu --jobs 2 -o /dev/null"

Run it on idle cores with ``unset PYTHONDONTWRITEBYTECODE`` (else every import compiles from source)."""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("rounds", type=int, help="runs of every command")
    ap.add_argument("commands", nargs="+", help="shell-quoted commands")
    args = ap.parse_args()
    times: dict[str, list[float]] = {c: [] for c in args.commands}
    for _ in range(args.rounds):
        for command in args.commands:
            words, env = shlex.split(command), dict(os.environ)
            while words and "=" in words[0] and not words[0].startswith("-"):
                name, value = words.pop(0).split("=", 1)
                env[name] = value
            start = time.perf_counter()
            subprocess.run(words, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            times[command].append(time.perf_counter() - start)
    for command, ts in times.items():
        ts.sort()
        print(f"min {ts[0]:.3f}  q1 {ts[len(ts) // 4]:.3f}  median {statistics.median(ts):.3f}  {command}")


if __name__ == "__main__":
    main()
