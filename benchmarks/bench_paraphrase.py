"""The MSVD human baseline (85,550 descriptions, every one a paraphrase of the others in its clip):
ngrameval vs a plain-Python PINC and sacreBLEU's corpus BLEU on the same leave-one-out data."""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

import numpy as np

logging.getLogger("sacrebleu").setLevel(logging.ERROR)

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "msvd" / "msvd2sent.json"


def plain_pinc(src: list[str], cand: list[str], n_max: int = 4) -> float:
    """PINC as the usual scripts compute it with Python sets (orders the candidate has)."""
    changes = []
    for n in range(1, n_max + 1):
        c = {tuple(cand[i : i + n]) for i in range(len(cand) - n + 1)}
        if c:
            s = {tuple(src[i : i + n]) for i in range(len(src) - n + 1)}
            changes.append(1 - len(c & s) / len(c))
    return sum(changes) / len(changes) if changes else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("corpus", nargs="?", default=str(DEFAULT), help="msvd2sent.json or an MSVD CSV")
    args = ap.parse_args()
    import sacrebleu
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    from ngrameval.corpus import cluster, human_baseline, read_corpus

    clusters = cluster(read_corpus(args.corpus))
    t = time.perf_counter()
    ours = human_baseline(clusters)
    t_ours = time.perf_counter() - t

    tok = Tokenizer13a()
    hyps, refs, pinc = [], [], []
    t = time.perf_counter()
    for descs in clusters.values():
        texts = [d.text for d in descs]
        toks = [tok(x).split() for x in texts]
        for i, text in enumerate(texts):
            hyps.append(text)
            refs.append(texts[:i] + texts[i + 1 :])
            pinc.append(np.mean([plain_pinc(toks[j], toks[i]) for j in range(len(texts)) if j != i]))
    t_pinc = time.perf_counter() - t
    k = max(map(len, refs))
    streams = [[r[i] if i < len(r) else None for r in refs] for i in range(k)]
    t = time.perf_counter()
    bleu = sacrebleu.BLEU().corpus_score(hyps, streams).score
    t_bleu = time.perf_counter() - t
    same_b = "identical" if abs(bleu - ours.bleu * 100) < 1e-9 else f"DIFF {bleu} vs {ours.bleu * 100}"
    same_p = "identical" if abs(float(np.mean(pinc)) - ours.pinc) < 1e-12 else f"DIFF {np.mean(pinc)} vs {ours.pinc}"
    scores = f"BLEU {ours.bleu * 100:.2f}, PINC {ours.pinc * 100:.2f}"
    print(f"{ours.descriptions:,} descriptions, {ours.clusters:,} clips: {scores}")
    print("| task | peer (s) | ngrameval (s) | speed-up | check |")
    print("|---|---:|---:|---:|---|")
    print(f"| human baseline, BLEU + PINC (ngrameval) vs sacreBLEU BLEU + Python-set PINC | {t_bleu + t_pinc:.2f} "
          f"| {t_ours:.2f} | {(t_bleu + t_pinc) / t_ours:.1f}x | BLEU {same_b}, PINC {same_p} |")  # fmt: skip


if __name__ == "__main__":
    main()
