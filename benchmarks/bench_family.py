"""chrF, chrF++ and TER: ngrameval vs sacreBLEU on the same segments, in one process (see docs/benchmarks.md).

Segments are real WMT19 newstest2019 to-English lines (the first system of every pair and its reference,
../shared/data/wmt19), repeated in order up to ``--segments``. Both sides score one system against one
reference; the scores are checked equal before timings are printed. Wall and CPU seconds are printed
(the CPU time is the fairer number on a shared machine).
"""

from __future__ import annotations

import argparse
import logging
import time
from collections.abc import Callable
from pathlib import Path

import sacrebleu

import ngrameval as ne

logging.getLogger("sacrebleu").setLevel(logging.ERROR)
DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "wmt19"


def load(n: int, data: Path) -> tuple[list[str], list[str]]:
    hyps: list[str] = []
    refs: list[str] = []
    for pair in sorted(p for p in data.iterdir() if p.is_dir() and (p / "system-outputs").is_dir()):
        ref = next(pair.glob("newstest2019-*-ref.en")).read_text("utf-8").splitlines()
        hyp = sorted((pair / "system-outputs").iterdir())[0].read_text("utf-8").splitlines()
        hyps += hyp
        refs += ref
    reps = -(-n // len(hyps))
    return (hyps * reps)[:n], (refs * reps)[:n]


def timed(fn: Callable[[], float]) -> tuple[float, float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    value = fn()
    return value, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--segments", type=int, default=100_000, help="segments for chrF and chrF++")
    ap.add_argument("--ter-segments", type=int, default=2_000, help="segments for TER (sacreBLEU's is slow)")
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--metrics", default="chrF2,chrF2++,TER", help="the rows to run (default: all three)")
    args = ap.parse_args()
    cases = [
        ("chrF2", "chrf", sacrebleu.CHRF(), args.segments),
        ("chrF2++", "chrf++", sacrebleu.CHRF(word_order=2), args.segments),
        ("TER", "ter", sacrebleu.TER(), args.ter_segments),
    ]
    head = ("metric", "segments", "ours wall", "ours cpu", "sacreBLEU wall", "cpu", "ratio cpu")
    print("{:8} {:>9} {:>10} {:>9} {:>15} {:>8} {:>10}".format(*head))
    wanted = args.metrics.split(",")
    unknown = set(wanted) - {c[0] for c in cases}
    if unknown:
        ap.error(f"unknown --metrics {', '.join(sorted(unknown))}; valid: chrF2, chrF2++, TER")
    for label, spec, sb, n in (c for c in cases if c[0] in wanted):
        hyps, refs = load(n, args.data)
        ne.score({"w": hyps[:100]}, refs[:100], spec)  # warm-up (imports)
        ours, w1, c1 = timed(lambda: ne.score({"s": hyps}, refs, spec)[0].score * 100)  # noqa: B023
        theirs, w2, c2 = timed(lambda: sb.corpus_score(hyps, [refs]).score)  # noqa: B023
        if abs(ours - theirs) > 1e-9 * max(1.0, abs(theirs)):
            raise SystemExit(f"{label}: ours {ours} != sacreBLEU {theirs}")
        print(f"{label:8} {n:>9,} {w1:>10.2f} {c1:>9.2f} {w2:>15.2f} {c2:>8.2f} {c2 / c1:>9.2f}x")


if __name__ == "__main__":
    main()
