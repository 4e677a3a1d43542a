"""Makes tests/golden/spa/: ngrameval's segment scores of shared data as TSV files, and mt-metrics-eval's own soft
pairwise accuracy (SPA) statistics on them (golden.json). Run from the repository root with mt-metrics-eval's tree
extracted at MTME:

    .venv/bin/python tests/golden/spa/make_spa_golden.py /tmp/mtme

Only mt-metrics-eval's functions compute the golden numbers; this script feeds them (see README.md here).
"""

from __future__ import annotations

import csv
import functools
import gzip
import json
import sys
import types
from pathlib import Path

import numpy as np

from ngrameval import measure
from ngrameval.meta.correlate import sentence_matrix

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
from wmt19 import DATA, read_wmt19  # noqa: E402  (tests/golden/wmt19.py, shared by the golden-making scripts)

K, SEED = 1000, 1
SUMMEVAL = ("relevance", "coherence")
METRICS = ("bleu", "chrf", "rouge-l")


def summeval_scores() -> None:
    """system, doc, relevance, coherence (expert means) and ngrameval's sentence BLEU, chrF, ROUGE-L (11 refs)."""
    rows = [json.loads(line) for line in (DATA / "summeval" / "summeval.jsonl").read_text().splitlines()]
    systems = sorted({r["system"] for r in rows}, key=lambda s: int(s[1:]))
    docs = sorted({r["doc_id"] for r in rows})
    cell = {(r["system"], r["doc_id"]): r for r in rows}
    refs = [cell[systems[0], d]["references"] for d in docs]
    outs = {s: [cell[s, d]["summary"] for d in docs] for s in systems}
    got = measure(outs, refs, ",".join(METRICS))
    sent = [sentence_matrix(r) for r in got]
    with gzip.open(HERE / "summeval-seg.tsv.gz", "wt", newline="") as f:
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        w.writerow(["system", "doc", *SUMMEVAL, *METRICS])
        for i, s in enumerate(systems):
            for j, d in enumerate(docs):
                w.writerow([s, d, *(repr(float(cell[s, d][c])) for c in SUMMEVAL),
                            *(repr(float(m[i, j])) for m in sent)])  # fmt: skip


def wmt19_scores(lp: str) -> None:
    """system, segment, ngrameval's sentence chrF, BLEU and TER (negated: higher = better) of the WMT19 outputs
    of ``lp``."""
    ref, outs = read_wmt19(lp)
    got = measure(outs, [[r] for r in ref], "chrf,bleu,ter")
    sent = [sentence_matrix(r.oriented()) for r in got]
    with gzip.open(HERE / f"wmt19-{lp}-seg.tsv.gz", "wt", newline="") as f:
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        w.writerow(["system", "segment", "chrf", "bleu", "ter"])
        for i, s in enumerate(outs):
            for j in range(len(ref)):
                w.writerow([s, j + 1, *(repr(float(m[i, j])) for m in sent)])


def read(name: str) -> list[dict[str, str]]:
    with gzip.open(HERE / name, "rt", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def matrix(rows: list[dict[str, str]], key: str, column: str) -> list[list[float]]:
    systems = list(dict.fromkeys(r["system"] for r in rows))
    return [[float(r[column]) for r in rows if r["system"] == s] for s in systems]


def golden(mtme: str) -> dict[str, object]:
    sys.path.insert(0, mtme)
    for stub in ("apache_beam", "dacite"):  # used only by mt-metrics-eval's parallel mode and ratings files
        sys.modules.setdefault(stub, types.ModuleType(stub))
    from mt_metrics_eval import pce, stats

    out: dict[str, object] = {"k": K, "seed": SEED, "sets": []}
    sets = [("summeval", "summeval-seg.tsv.gz", "doc", SUMMEVAL, METRICS),
            ("wmt19-kk-en", "wmt19-kk-en-seg.tsv.gz", "segment", ("chrf",), ("bleu", "ter"))]  # fmt: skip
    for name, path, key, humans, metrics in sets:
        rows = read(path)
        for h in humans:
            gold = matrix(rows, key, h)
            n_sys = len(gold)
            flat_gold = [x for row in gold for x in row]
            entry: dict[str, object] = {"set": name, "criterion": h, "spa": {}, "p_values": {}, "differences": []}
            entry["p_values"][h] = np.nan_to_num(pce.compute_pairwise_p_values(np.asarray(gold)), nan=-1).tolist()
            corrs = {}
            for m in metrics:
                met = matrix(rows, key, m)
                flat = [x for row in met for x in row]
                corrs[m] = stats.Correlation(n_sys, flat_gold, flat)
                entry["spa"][m] = float(stats.PairwiseConfidenceError(flat_gold, flat, n_sys)[0])
                entry["p_values"][m] = np.nan_to_num(pce.compute_pairwise_p_values(np.asarray(met)), nan=-1).tolist()
            order = sorted(metrics, key=lambda m: (-entry["spa"][m], m))
            wrapper = functools.partial(stats.PairwiseConfidenceError, num_sys=n_sys)
            for i, better in enumerate(order):
                for worse in order[i + 1 :]:
                    np.random.seed(SEED)
                    p, delta, k_used, _ = stats.PermutationSigDiff(corrs[worse], corrs[better], wrapper, "none", K)
                    print(name, h, better, worse, p, file=sys.stderr, flush=True)
                    entry["differences"].append({"better": better, "worse": worse, "p": float(p),
                                                 "delta": float(delta), "k": int(k_used)})  # fmt: skip
            out["sets"].append(entry)  # type: ignore[attr-defined]
    return out


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[2] != "--reuse-scores":
        summeval_scores()
        wmt19_scores("kk-en")
    (HERE / "golden.json").write_text(json.dumps(golden(sys.argv[1]), indent=1) + "\n")
