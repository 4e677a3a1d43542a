"""Score matrices: ngrameval.matrices against sacreBLEU's ``sentence_score`` per cell and fastChrF, one process.

Rows printed (a markdown table):

1. a 1,024 x 1,024 chrF matrix of real sentences (the WMT19 de-en English references in ../shared/data when
   present, else generated text): ngrameval with --jobs 1 and 2, fastChrF (``pairwise_chrf``, when installed),
   and sacreBLEU's ``CHRF().sentence_score`` per cell — timed on a sample of rows and **extrapolated** to the
   whole matrix (said in the row). Every cell of the sampled rows must equal sacreBLEU's (|diff| <= 1e-9 x100)
   before any time is printed; fastChrF's time is taken on the same sample rows and extrapolated too, its largest
   difference from ours printed beside it.
2. the same for sentence BLEU (``BLEU(effective_order=True)``, sacreBLEU's sentence_bleu settings).
3. MBR with chrF over 1,000 segments x 128 candidates (candidates: the segment's reference with ~15 % of its
   words dropped and a neighbouring pair swapped in half of them), the sacreBLEU time extrapolated from its
   per-cell time on this data.
4. memory: tracemalloc's peak while MBR runs (one thread) over 100 and over 1,000 segments (matrices are streamed
   per group, so the peak must not grow with the number of segments), and the process's peak RSS.

Usage: python benchmarks/bench_pairwise.py [--size 1024] [--segments 1000] [--candidates 128] [--sample-rows 8]
       [--parts chrf,bleu,mbr,memory]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import time
import tracemalloc
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

WMT = Path(__file__).resolve().parents[2] / "shared" / "data" / "wmt19" / "de-en" / "newstest2019-deen-ref.en"


def sentences(n: int, seed: int = 0) -> tuple[list[str], str]:
    """``n`` real sentences when the WMT19 file is there, else generated ones; and where they came from."""
    if WMT.exists():
        lines = [x for x in WMT.read_text(encoding="utf-8").splitlines() if x.strip()]
        if len(lines) >= n:
            return lines[:n], f"WMT19 de-en references ({WMT.name})"
    rng = np.random.default_rng(seed)
    vocab = [f"w{i}" for i in range(5000)] + [",", ".", "the", "a", "of"]
    p = 1.0 / np.arange(1, len(vocab) + 1) ** 1.1
    p /= p.sum()
    return [" ".join(rng.choice(vocab, int(rng.integers(8, 40)), p=p)) for _ in range(n)], "generated (Zipfian words)"


def candidates(bases: list[str], k: int, seed: int = 0) -> list[str]:
    """``k`` MBR candidates per base sentence: ~15 % of the words dropped, a neighbouring pair swapped in half."""
    rng = np.random.default_rng(seed)
    out = []
    for base in bases:
        words = base.split()
        for _ in range(k):
            keep = [w for w in words if rng.random() > 0.15]
            if len(keep) > 2 and rng.random() < 0.5:
                i = int(rng.integers(0, len(keep) - 1))
                keep[i], keep[i + 1] = keep[i + 1], keep[i]
            out.append(" ".join(keep))
    return out


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def sacre_rows(metric: object, texts: list[str], rows: list[int]) -> tuple[float, np.ndarray]:
    """sacreBLEU's sentence_score of every cell of ``rows``: seconds and the scores (x100)."""
    t = time.perf_counter()
    out = np.array([[metric.sentence_score(texts[i], [r]).score for r in texts] for i in rows])  # type: ignore[attr-defined]
    return time.perf_counter() - t, out


def matrix_rows(
    name: str, spec: str, make: Callable[[], object], texts: list[str], sample: int
) -> tuple[list[str], float]:
    """Table rows for one metric's n x n matrix; returns them and sacreBLEU's seconds per cell."""
    import ngrameval as ne

    n = len(texts)
    ne.pairwise(texts[:32], metric=spec)  # imports and first-call set-up out of the timings
    t1, m1 = timed(lambda: ne.pairwise(texts, metric=spec, jobs=1).to_numpy())
    t2, m2 = timed(lambda: ne.pairwise(texts, metric=spec, jobs=2).to_numpy())
    assert np.array_equal(m1, m2), "jobs=2 must give jobs=1's bits"
    rows = np.linspace(0, n - 1, sample).astype(int).tolist()
    t_ref, ref = sacre_rows(make(), texts, rows)
    diff = float(np.abs(np.asarray(m1)[rows] * 100 - ref).max())
    assert diff <= 1e-9, f"{name}: a cell differs from sacreBLEU's sentence_score by {diff}"
    per_cell = t_ref / (sample * n)
    t_sacre = per_cell * n * n
    out = [
        f"| {name} {n:,} x {n:,} | ngrameval --jobs 1 | {t1:.2f} | {t_sacre / t1:,.0f}x |",
        f"| {name} {n:,} x {n:,} | ngrameval --jobs 2 | {t2:.2f} | {t_sacre / t2:,.0f}x |",
        f"| {name} {n:,} x {n:,} | sacreBLEU sentence_score per cell (timed on {sample} rows = {sample * n:,} cells,"
        f" extrapolated; max diff from ours {diff:.1e}) | {t_sacre:.1f} | 1x |",
    ]
    if spec == "chrf":
        try:
            import fastchrf
        except ImportError:
            out.append(f"| {name} {n:,} x {n:,} | fastChrF | not installed | - |")
        else:
            fastchrf.pairwise_chrf([texts[:8]], [texts[:8]])
            few = [texts[i] for i in rows]  # fastChrF too would take minutes on 2 cores: timed on the sample rows
            tf, fm = timed(lambda: fastchrf.pairwise_chrf([few], [texts]))
            fdiff = float(np.abs(np.asarray(fm)[0] - np.asarray(m1)[rows] * 100).max())
            tf *= n / sample
            what = f"fastChrF pairwise_chrf (timed on the same {sample} rows, extrapolated; max diff from ours "
            what += f"{fdiff:.1e})"
            out.append(f"| {name} {n:,} x {n:,} | {what} | {tf:.1f} | {t_sacre / tf:,.0f}x |")
    return out, per_cell


def mbr_rows(segments: int, k: int, per_cell: float) -> list[str]:
    from ngrameval.matrices import mbr

    bases, _ = sentences(segments, seed=1)
    texts = candidates(bases, k)
    labels = np.repeat(np.arange(segments), k).tolist()
    out = []
    for jobs in (1, 2):
        t, result = timed(partial(mbr, texts, "chrf", labels, jobs=jobs))
        assert len(result.choices) == segments  # type: ignore[attr-defined]
        t_sacre = per_cell * segments * k * (k - 1)
        out.append(f"| MBR chrF {segments:,} x {k} | ngrameval --jobs {jobs} | {t:.2f} | {t_sacre / t:,.0f}x |")
    out.append(f"| MBR chrF {segments:,} x {k} | sacreBLEU sentence_score per cell (extrapolated from the chrF row's "
               f"per-cell time) | {per_cell * segments * k * (k - 1):,.0f} | 1x |")  # fmt: skip
    return out


def memory_rows(k: int, sizes: tuple[int, ...]) -> list[str]:
    from ngrameval.matrices import iter_mbr

    out = []
    for segments in sizes:
        bases, _ = sentences(segments, seed=2)
        texts = candidates(bases, k, seed=3)
        labels = np.repeat(np.arange(segments), k).tolist()
        tracemalloc.start()
        for _ in iter_mbr(texts, "chrf", labels, jobs=1):  # one thread: the peak of one batch, not of two overlapping
            pass
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        out.append(f"| MBR chrF {segments:,} x {k} | tracemalloc peak while running (inputs excluded) "
                   f"| {peak / 2**20:.1f} MiB | - |")  # fmt: skip
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out.append(f"| whole run | peak RSS of this process | {rss:.0f} MiB | - |")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--segments", type=int, default=1000)
    ap.add_argument("--candidates", type=int, default=128)
    ap.add_argument("--sample-rows", type=int, default=8)
    ap.add_argument("--parts", default="chrf,bleu,mbr,memory", help="which rows (memory alone needs no sacreBLEU time)")
    args = ap.parse_args()
    parts = set(args.parts.split(","))
    texts, source = sentences(args.size)
    from sacrebleu.metrics import BLEU, CHRF

    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, load average {load[0]:.1f} at start;"
          f" texts: {source}, mean {np.mean([len(t) for t in texts]):.0f} characters")  # fmt: skip
    print("| task | tool | seconds | vs sacreBLEU |\n|---|---|---:|---:|")
    if parts & {"chrf", "mbr"}:
        chrf_rows, per_cell = matrix_rows("chrF", "chrf", CHRF, texts, args.sample_rows)
        print("\n".join(chrf_rows), flush=True)
    if "bleu" in parts:
        bleu_rows, _ = matrix_rows("BLEU", "bleu:eff=yes", lambda: BLEU(effective_order=True), texts, args.sample_rows)
        print("\n".join(bleu_rows), flush=True)
    if "mbr" in parts:
        print("\n".join(mbr_rows(args.segments, args.candidates, per_cell)), flush=True)
    if "memory" in parts:
        print("\n".join(memory_rows(args.candidates, (max(1, args.segments // 10), args.segments))), flush=True)
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    print(f"load average {load[0]:.1f} at the end")


if __name__ == "__main__":
    main()
