"""The (alpha, N) plane search vs scoring one BLEU, from text, on SummEval: 16 systems x 100 documents x 11 references.

Issue #5's target: the whole 44-cell grid (counting, 44 AEv members, 44 correlations) in under 2x the time
of one corpus BLEU of the 16 systems on the same data. Both sides start from the texts; median of runs in
one process after a warm-up call. Usage: python benchmarks/bench_plane.py [../shared/data/summeval/summeval.jsonl]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bench_bleu import timed


def load(path: Path) -> tuple[dict[str, list[str]], list[list[str]], dict[str, dict[str, list[float]]]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    docs = list(dict.fromkeys(r["doc_id"] for r in rows))
    by = {(r["system"], r["doc_id"]): r for r in rows}
    names = list(dict.fromkeys(r["system"] for r in rows))
    systems = {s: [by[s, d]["summary"] for d in docs] for s in names}
    refs = [by[names[0], d]["references"] for d in docs]
    human = {c: {s: [by[s, d][c] for d in docs] for s in names} for c in ("relevance", "coherence")}
    return systems, refs, human


def main() -> None:
    import numpy as np

    from ngrameval import MetricSpec, Preprocess, parse_specs, score
    from ngrameval.meta.correlate import HumanScores
    from ngrameval.meta.plane import plane

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", default="../shared/data/summeval/summeval.jsonl", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    systems, refs, judged = load(args.data)
    seg = np.array(list(judged["relevance"].values()))
    human = HumanScores("relevance", tuple(systems), seg.mean(axis=1), seg, seg.size, 0)
    n_docs, n_refs = len(refs), len(refs[0])
    print(f"{len(systems)} systems x {n_docs} documents x {n_refs} references, median of {args.repeat} runs\n")
    print("| text setting | one BLEU (s) | 44-cell plane (s) | plane / BLEU | target |")
    print("|---|---:|---:|---:|---|")
    for label, pre in (
        ("13a, cased", Preprocess()),
        ("13a, lower-case, Porter stem, SMART stop words (the paper's)", Preprocess("13a", True, "smart", True)),
    ):
        specs = parse_specs("bleu", pre)

        def one_bleu(specs: list[MetricSpec] = specs) -> object:
            return score(systems, refs, specs)

        def grid(pre: Preprocess = pre) -> object:
            return plane(systems, refs, human, pre=pre)

        one_bleu(), grid()  # warm-up: imports, stemmer caches
        t_bleu, _ = timed(one_bleu, args.repeat)
        t_plane, _ = timed(grid, args.repeat)
        ratio = t_plane / t_bleu
        print(f"| {label} | {t_bleu:.3f} | {t_plane:.3f} | {ratio:.2f}x | {'met' if ratio < 2 else 'NOT met'} (< 2x) |")


if __name__ == "__main__":
    main()
