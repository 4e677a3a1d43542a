"""Power of the DA bad-reference test: simulated judges rate a batch built by ``design.controls_for`` and the
per-judge check of ``quality`` (pairs, exact one-sided signed-rank test) decides who is flagged.

Every (item, system) has a true quality q ~ U(30, 100) on the 0-100 slider; its bad reference's is q - DROP.
A perfect judge gives the true quality; an honest judge with noise sd s gives round(q + e), e ~ N(0, s^2), clipped
to 0..100, independently on every trial (a repeat is scored again); a random clicker gives a uniform 0..100.
Prints P(pass) per judge and number of bad references (one batch: those, 10 repeats, the rest normal trials).

    python benchmarks/bench_da_controls.py [--judges 2000] [--drop 20] [--alpha 0.05] [--seed 1]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np

from ngrameval.collect import design, quality

Judge = Callable[[float, np.random.Generator], float]
DROP = 20.0  # how much lower a bad reference's true quality is, in slider points


def perfect(q: float, rng: np.random.Generator) -> float:
    return q


def clicker(q: float, rng: np.random.Generator) -> float:
    return float(rng.integers(0, 101))


def honest(sd: float) -> Judge:
    def judge(q: float, rng: np.random.Generator) -> float:
        return float(np.clip(round(q + rng.normal(0, sd)), 0, 100))

    return judge


def simulate(
    judge: Judge,
    controls: design.Controls,
    n_items: int,
    rng: np.random.Generator,
    drop: float = DROP,
    alpha: float = 0.05,
) -> quality.JudgeCheck:
    """One judge's check after rating ``n_items`` items (one system) with the controls of ``controls``."""
    trials = [design.Trial(f"i{k}", "S") for k in range(n_items)]
    outputs = {(t.item, t.system): " ".join(f"w{k}_{j}" for j in range(12)) for k, t in enumerate(trials)}
    truth = {t.item: float(rng.uniform(30, 100)) for t in trials}
    full = design.controls_for(trials, outputs, controls, rng)
    position = {id(t): k for k, t in enumerate(full)}
    rows = []
    for k, t in enumerate(full):
        q = truth[t.item] - (drop if t.kind == "bad" else 0.0)
        of = None if t.of is None else position[id(trials[t.of])]
        rows.append(("j", k, t.kind, of, None, judge(q, rng)))
    rep, known, bad = quality.pairs_by_judge(rows)["j"]
    return quality.judge_check(rep, known, bad, alpha)


def pass_rate(
    judge: Judge, bad: int, judges: int, rng: np.random.Generator, drop: float = DROP, alpha: float = 0.05
) -> float:
    """P(not flagged) over ``judges`` simulated judges, each with one batch of 100 holding ``bad`` bad
    references and 10 repeats."""
    controls = design.Controls(100, 10, bad)
    n_items = 100 - 10 - bad
    return sum(not simulate(judge, controls, n_items, rng, drop, alpha).flagged for _ in range(judges)) / judges


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--judges", type=int, default=2000)
    ap.add_argument("--drop", type=float, default=DROP)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bad", type=int, nargs="+", default=[5, 7, 10, 15, 20])
    ap.add_argument("--noise", type=float, nargs="+", default=[10, 20, 30, 40])
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    kinds: list[tuple[str, Judge]] = [("perfect", perfect)]
    kinds += [(f"honest sd {s:g}", honest(s)) for s in args.noise]
    kinds += [("random clicker", clicker)]
    print(
        f"P(pass) of the bad-reference test, alpha = {args.alpha}, bad references {args.drop:g} points lower, "
        f"{args.judges} judges a cell (seed {args.seed}); minimum bad references {quality.min_pairs(args.alpha)}"
    )
    print("| bad refs | " + " | ".join(name for name, _ in kinds) + " |")
    print("|---:|" + "---:|" * len(kinds))
    for bad in args.bad:
        cells = [pass_rate(judge, bad, args.judges, rng, args.drop, args.alpha) for _, judge in kinds]
        print(f"| {bad} | " + " | ".join(f"{c:.3f}" for c in cells) + " |")


if __name__ == "__main__":
    main()
