"""ngrameval ROUGE vs rouge-score, rouge-score-rs and rouge-rust (fast_rouge) on the same pairs, one process.

Every peer's per-pair F must equal ours exactly (rouge-score profile) before its time is printed. ROUGE-S4 and
SU4 (which no peer has) are timed against our own ROUGE-2. Usage: python benchmarks/bench_rouge.py --pairs 10000
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence
from functools import partial

import numpy as np

import bench_bleu
from bench_bleu import make_corpus_fast, timed

TYPES = ("rouge1", "rouge2", "rougeL")
SPECS = ("rouge-1", "rouge-2", "rouge-l")


def ours(hyps: Sequence[str], refs: Sequence[str], stem: bool, specs: Sequence[str] = SPECS) -> list[np.ndarray]:
    from ngrameval import rouge

    out = rouge(hyps, refs, specs, profile="rouge-score", stem=stem)
    return [out[s].items.f for s in specs]


def google(hyps: Sequence[str], refs: Sequence[str], stem: bool) -> list[np.ndarray]:
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(list(TYPES), use_stemmer=stem)
    scores = [scorer.score(r, h) for h, r in zip(hyps, refs)]
    return [np.array([s[t].fmeasure for s in scores]) for t in TYPES]


def rs(hyps: Sequence[str], refs: Sequence[str], stem: bool) -> list[np.ndarray]:
    from rouge_score_rs import rouge_scorer

    scores = rouge_scorer.RougeScorer(list(TYPES), use_stemmer=stem).score_batch(list(refs), list(hyps))
    return [np.array([s[t].fmeasure for s in scores]) for t in TYPES]


def rust(hyps: Sequence[str], refs: Sequence[str], stem: bool) -> list[np.ndarray]:
    import fast_rouge

    out = fast_rouge.score_batch_flat(list(refs), list(hyps))
    return [np.array(out.rouge1_fmeasure), np.array(out.rouge2_fmeasure), np.array(out.rougeL_fmeasure)]


def rows(n: int, repeat: int, skip_google_above: int) -> list[str]:
    """Table rows for one corpus size (``functools.partial`` binds each call's arguments)."""
    hyps, refs = make_corpus_fast(n, seed=7)
    for fn in (ours, rs, rust, google):  # imports and first-call set-up stay out of the timings
        fn(hyps[:10], refs[:10], False)
    out = []
    for stem in (False, True):
        t_ours, mine = timed(partial(ours, hyps, refs, stem), repeat)
        out.append(f"| {n:,} | 1, 2, L | {'yes' if stem else 'no'} | ngrameval | {t_ours:.3f} | 1.00 | - |")
        for name, fn in (("rouge-score-rs", rs), ("rouge-rust", rust), ("rouge-score", google)):
            if (name == "rouge-rust" and stem) or (name == "rouge-score" and n > skip_google_above):
                continue
            t, theirs = timed(partial(fn, hyps, refs, stem), 1 if name == "rouge-score" else repeat)
            same = all(np.array_equal(a, b) for a, b in zip(mine, theirs))  # type: ignore[call-overload]
            yes = "yes" if stem else "no"
            out.append(f"| {n:,} | 1, 2, L | {yes} | {name} | {t:.3f} | {t / t_ours:.2f} | {same} |")
    t2, _ = timed(partial(ours, hyps, refs, False, ("rouge-2",)), repeat)
    for spec in ("rouge-s4", "rouge-su4"):
        t, _ = timed(partial(ours, hyps, refs, False, (spec,)), repeat)
        ratio = f"{t / t2:.2f} x ROUGE-2 ({t2:.3f} s)"
        out.append(f"| {n:,} | {spec} vs rouge-2 | no | ngrameval | {t:.3f} | {ratio} | - |")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--pairs", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-google-above", type=int, default=100_000, help="rouge-score is slow: skip it above this")
    ap.add_argument("--cpu", action="store_true", help="time CPU seconds of this process (run under taskset -c 0)")
    args = ap.parse_args()
    bench_bleu.CLOCK = time.process_time if args.cpu else time.perf_counter
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    clock = "CPU seconds of the process (--cpu)" if args.cpu else "wall seconds"
    print(f"load average at the start: {load}; cores this process may use: {cores}; times: {clock}\n")
    print("| pairs | ROUGE-1/2/L | stemming | tool | seconds | tool / ngrameval | identical F |")
    print("|---:|---|---|---|---:|---:|---|")
    for n in args.pairs:
        print("\n".join(rows(n, args.repeat, args.skip_google_above)), flush=True)


if __name__ == "__main__":
    main()
