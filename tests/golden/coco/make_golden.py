"""Regenerate the coco-caption golden values (needs Java, pycocoevalcap 1.2 and a checkout of vrama91/cider).

    python tests/golden/coco/make_golden.py /path/to/vrama91-cider-checkout

Writes ``golden.json`` beside this file (see README.md).
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
import types
from pathlib import Path

from pycocoevalcap.bleu.bleu import Bleu
from pycocoevalcap.cider.cider import Cider
from pycocoevalcap.rouge.rouge import Rouge
from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parents[1]))
from test_cider import msvd_sample  # noqa: E402  (the same sample the test reads)


def generated(seed: int = 7, n: int = 200) -> tuple[list[str], list[list[str]]]:
    rng = random.Random(seed)
    vocab = ["a", "the", "man", "woman", "dog", "cat", "is", "are", "on", "in", "playing", "riding", "guitar"]

    def sent() -> str:
        return " ".join(rng.choice(vocab) for _ in range(rng.randint(0, 14)))

    return [sent() for _ in range(n)], [[sent() for _ in range(rng.randint(1, 6))] for _ in range(n)]


def vrama91_cider(checkout: Path, hyps: list[str], refs: list[list[str]]) -> list[float]:
    """The original CIDEr of the authors' release (Python 2 code, run after renaming xrange/iteritems)."""
    src = (checkout / "pyciderevalcap" / "cider" / "cider_scorer.py").read_text()
    mod = types.ModuleType("vrama91_cider_scorer")
    exec(compile(src.replace("xrange", "range").replace("iteritems", "items"), "cider_scorer.py", "exec"), mod.__dict__)
    scorer = mod.CiderScorer(n=4)
    for h, r in zip(hyps, refs):
        scorer += (h, r)
    _, scores = scorer.compute_score("corpus")
    return [float(x) for x in scores]


def coco_scores(hyps: list[str], refs: list[list[str]]) -> dict[str, object]:
    gts = {i: r for i, r in enumerate(refs)}
    res = {i: [h] for i, h in enumerate(hyps)}
    bleu, bleu_sent = Bleu(4).compute_score(gts, res, verbose=0)
    rouge, rouge_sent = Rouge().compute_score(gts, res)
    cider, cider_sent = Cider().compute_score(gts, res)
    return {
        "bleu": [float(x) for x in bleu], "bleu_sent": [[float(x) for x in b] for b in bleu_sent],
        "rouge_l": float(rouge), "rouge_l_sent": [float(x) for x in rouge_sent],
        "cider_d": float(cider), "cider_d_sent": [float(x) for x in cider_sent],
    }  # fmt: skip


def main() -> None:
    checkout = Path(sys.argv[1])
    clips = msvd_sample()
    # the human baseline: each description against the rest of its clip
    hyps = [d for c in clips for d in c]
    refs = [c[:k] + c[k + 1 :] for c in clips for k in range(len(c))]
    lines = {f"{i}": [{"caption": h}] for i, h in enumerate(hyps)}
    java = PTBTokenizer().tokenize(lines)
    tokenized_hyps = [java[f"{i}"][0] for i in range(len(hyps))]
    tok_of = dict(zip(hyps, tokenized_hyps))
    tokenized_refs = [[tok_of[r] for r in rs] for rs in refs]
    gen_h, gen_r = generated()
    out = {
        "msvd": {
            "java_tokens_sha256": [hashlib.sha256(t.encode()).hexdigest() for t in tokenized_hyps],
            "scores": coco_scores(tokenized_hyps, tokenized_refs),
            "cider_original_sent": vrama91_cider(checkout, tokenized_hyps, tokenized_refs),
        },
        "generated": {"hyps": gen_h, "refs": gen_r, "cider_original_sent": vrama91_cider(checkout, gen_h, gen_r)},
    }
    (HERE / "golden.json").write_text(json.dumps(out, indent=0) + "\n")


if __name__ == "__main__":
    main()
