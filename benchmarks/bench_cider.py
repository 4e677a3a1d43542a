"""CIDEr-D and coco BLEU / ROUGE-L: ngrameval vs pycocoevalcap 1.2 on one generated, pre-tokenized corpus, in
one process (no Java: both read whitespace-tokenized text). Prints times, the ratio and checks the scores.

    python benchmarks/bench_cider.py [segments] [references per segment]
"""

from __future__ import annotations

import random
import sys
import time

import numpy as np
from pycocoevalcap.bleu.bleu import Bleu
from pycocoevalcap.cider.cider import Cider
from pycocoevalcap.rouge.rouge import Rouge

from ngrameval.api import score
from ngrameval.metrics.registry import parse_specs
from ngrameval.text.pipeline import Preprocess


def corpus(n: int, refs: int, seed: int = 0) -> tuple[list[str], list[list[str]]]:
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(2000)]
    weights = [1 / (i + 1) for i in range(len(vocab))]  # Zipf-like, as captions

    def sent() -> str:
        return " ".join(rng.choices(vocab, weights, k=rng.randint(5, 14)))

    return [sent() for _ in range(n)], [[sent() for _ in range(refs)] for _ in range(n)]


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    k = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    hyps, refs = corpus(n, k)
    gts, res = dict(enumerate(refs)), {i: [h] for i, h in enumerate(hyps)}
    rows = [
        ("CIDEr-D", "cider-d:tok=none", lambda: Cider().compute_score(gts, res)),
        ("BLEU-4 (coco)", "coco-bleu:tok=none", lambda: Bleu(4).compute_score(gts, res, verbose=0)),
        ("ROUGE-L (coco)", "coco-rouge-l:tok=none", lambda: Rouge().compute_score(gts, res)),
    ]
    print(f"{n} segments, {k} references each")
    for name, spec, reference in rows:
        t0 = time.perf_counter()
        theirs, theirs_sent = reference()
        t1 = time.perf_counter()
        (mine,) = score({"s": hyps}, refs, parse_specs(spec, Preprocess()), sentence=True)
        t2 = time.perf_counter()
        if name.startswith("BLEU"):
            theirs, theirs_sent = theirs[3], theirs_sent[3]
        identical = bool(np.array_equal(mine.sentences, np.asarray(theirs_sent)))
        diff = abs(mine.score - float(theirs))
        print(
            f"{name:15s} pycocoevalcap {t1 - t0:7.2f} s  ngrameval {t2 - t1:6.2f} s  "
            f"ratio {(t1 - t0) / (t2 - t1):6.1f}x"
            f"  corpus {mine.score:.10f} vs {float(theirs):.10f} (|diff| {diff:.1e})  sentences identical: {identical}"
        )


if __name__ == "__main__":
    main()
