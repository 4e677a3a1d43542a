"""ngrameval vs sacreBLEU's paired tests (--paired-ar, --paired-bs), same data, one process (docs/benchmarks.md)."""

from __future__ import annotations

import argparse
import glob
import logging
import math
import os
import subprocess
import sys
from collections.abc import Sequence

sys.path.insert(0, os.path.dirname(__file__))
from bench_bleu import make_corpus, timed

logging.getLogger("sacrebleu").setLevel(logging.ERROR)

WMT17 = "../shared/data/wmt17-en-de"
BASELINE = "newstest2017.LIUM-NMT.4900.en-de"


def sacrebleu_test(named: list[tuple[str, list[str]]], ref: list[str], test: str, n: int, tok: str) -> list[float]:
    """sacreBLEU's PairedTest (as its CLI runs it): p-values of systems 2.. against the first."""
    from sacrebleu.metrics import BLEU
    from sacrebleu.significance import PairedTest

    os.environ["SACREBLEU_SEED"] = "12345"
    metrics = {"BLEU": BLEU(references=[ref], tokenize=tok)}
    scores = PairedTest(named, metrics, references=None, test_type=test, n_samples=n)()[1]
    return [r.p_value for r in scores["BLEU"][1:]]


def ours_test(
    named: list[tuple[str, list[str]]], ref: list[str], test: str, n: int, tok: str, baseline: bool
) -> list[float]:
    from ngrameval.meta import compare

    res = compare(
        dict(named),
        ref,
        "bleu",
        tokenize=tok,
        test=test,
        n_resamples=n,
        correction="none",
        baseline=named[0][0] if baseline else None,
    )
    return [p.p_value for p in res.metrics[0].pairs]


def check(ours: Sequence[float], peer: Sequence[float], n: int, test: str) -> str:
    """Largest |p difference| and how many of them exceed 4 Monte-Carlo standard errors of the difference."""
    worst = max(abs(a - b) for a, b in zip(ours, peer))
    se = [4 * math.sqrt(2 * max(b * (1 - b), 1 / n) / n) + 2 / (n + 1) for b in peer]
    bad = sum(abs(a - b) > s for a, b, s in zip(ours, peer, se))
    return (
        f"max \\|Δp\\| {worst:.4f}"
        + ("" if not bad else f", {bad} beyond 4 s.e.")
        + (" (identical draws)" if test == "bs" and worst < 1e-12 else "")
    )


def read(path: str) -> list[str]:
    with open(path, encoding="utf-8") as fh:
        return fh.read().split("\n")[:-1]


def row(task: str, t_peer: float | None, t_ours: float, note: str) -> None:
    peer = "—" if t_peer is None else f"{t_peer:.2f}"
    ratio = "—" if t_peer is None else f"{t_peer / t_ours:.1f}x"
    print(f"| {task} | {peer} | {t_ours:.2f} | {ratio} | {note} |", flush=True)


def peak_memory(wmt: str) -> float:
    """Peak RSS (MB) of a fresh process running all-pairs AR over the 16 WMT17 systems."""
    files = sorted(glob.glob(os.path.join(wmt, "newstest2017.*.txt")))
    code = (
        "from ngrameval.cli import main; import os; "
        f"main(['compare', *{files!r}, '-r', {os.path.join(wmt, 'reference.txt')!r}, '-tok', 'none', "
        "'-o', os.devnull]); "
        "print(next(int(ln.split()[1]) for ln in open('/proc/self/status') if ln.startswith('VmHWM')) / 1024)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--segments", type=int, default=10_000, help="segments of the generated 2-system corpus")
    ap.add_argument("--wmt17", default=WMT17, help="directory with the 16 WMT17 en-de systems and reference.txt")
    args = ap.parse_args()
    print("| task | sacreBLEU (s) | ngrameval (s) | speed-up | check |")
    print("|---|---:|---:|---:|---|")

    hyps, refs = make_corpus(args.segments, 2, seed=11)
    named = [("A", hyps), ("B", [r[1] for r in refs])]
    ref = [r[0] for r in refs]
    for test, n in (("ar", 10_000), ("bs", 1_000)):
        t_peer, p_peer = timed(lambda t=test, k=n: sacrebleu_test(named, ref, t, k, "13a"), 1)
        t_ours, p_ours = timed(lambda t=test, k=n: ours_test(named, ref, t, k, "13a", True), 3)
        task = f"2 systems x {args.segments:,} segments, {'AR 10,000 trials' if test == 'ar' else 'bootstrap 1,000'}"
        row(task, t_peer, t_ours, check(p_ours, p_peer, n, test))

    files = sorted(glob.glob(os.path.join(args.wmt17, "newstest2017.*.txt")))
    if not files:
        print(f"\n(no WMT17 systems under {args.wmt17}: skipped the 16-system rows)")
        return
    systems = {os.path.basename(f)[:-4]: read(f) for f in files}
    ref17 = read(os.path.join(args.wmt17, "reference.txt"))
    order = [BASELINE, *(s for s in systems if s != BASELINE)]
    named17 = [(s, systems[s]) for s in order]
    for test, n in (("ar", 10_000), ("bs", 1_000)):
        t_peer, p_peer = timed(lambda t=test, k=n: sacrebleu_test(named17, ref17, t, k, "none"), 1)
        t_ours, p_ours = timed(lambda t=test, k=n: ours_test(named17, ref17, t, k, "none", True), 3)
        task = f"16 WMT17 systems x 3,004, baseline vs 15, {'AR 10,000' if test == 'ar' else 'bootstrap 1,000'}"
        row(task, t_peer, t_ours, check(p_ours, p_peer, n, test))
    t_all, _ = timed(lambda: ours_test(named17, ref17, "ar", 10_000, "none", False), 3)
    row("16 WMT17 systems, all 120 pairs, AR 10,000 (sacreBLEU: baseline only)", None, t_all, "target < 30 s")
    print(f"\npeak RSS of `ngrameval compare` on all 120 pairs (AR 10,000): {peak_memory(args.wmt17):.0f} MB")


if __name__ == "__main__":
    main()
