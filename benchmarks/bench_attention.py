"""The pass mark of the collect app's attention checks on describe studies: sentence BLEU (sacreBLEU's: exp
smoothing, effective order) of a description against ``--golds`` gold descriptions of a control clip, for honest
answers (another description of the same MSVD clip) and off-task ones (a description of another clip). Prints the
share that passes at several marks.

    python benchmarks/bench_attention.py [msvd2sent.json] [--clips 1000] [--golds 5] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from ngrameval.api import bleu

MARKS = (0.05, 0.1, 0.15, 0.2, 0.3)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = Path(__file__).resolve().parents[2] / "shared" / "data" / "msvd" / "msvd2sent.json"
    ap.add_argument("corpus", nargs="?", type=Path, default=default)
    ap.add_argument("--clips", type=int, default=1000)
    ap.add_argument("--golds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    clips = json.loads(args.corpus.read_text())
    keys = [k for k in sorted(clips) if len(clips[k]) > args.golds + 1]
    keys = [keys[i] for i in rng.permutation(len(keys))[: args.clips]]
    golds = [clips[k][: args.golds] for k in keys]
    honest = [clips[k][args.golds + int(rng.integers(len(clips[k]) - args.golds))] for k in keys]
    off = [clips[keys[(i + 1) % len(keys)]][-1] for i in range(len(keys))]
    print(f"share of answers with sentence BLEU >= the mark ({len(keys)} clips, {args.golds} golds each)")
    print("| answer | " + " | ".join(f">= {m:g}" for m in MARKS) + " |")
    print("|---|" + "---:|" * len(MARKS))
    for name, texts in (("honest (same clip)", honest), ("off-task (another clip)", off)):
        sent = bleu(texts, golds, smooth="exp", eff=True).sentences
        assert sent is not None
        print(f"| {name} | " + " | ".join(f"{float(np.mean(sent >= m)):.3f}" for m in MARKS) + " |")


if __name__ == "__main__":
    main()
