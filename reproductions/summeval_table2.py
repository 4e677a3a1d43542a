"""SummEval, Fabbri et al. (2021) Table 2 beside ngrameval (docs/reproductions.md).

    python reproductions/summeval_table2.py ../shared/data/summeval [--out repro/summeval-table2]

Computed the way the authors did (their script, SummEval issue #13; their ``rouge_metric.py`` defaults):
system score = the mean over documents of the per-document score; human score = the per-system mean of the
expert scores; Kendall tau-b (scipy's ``kendalltau`` default) between the two over the systems. ROUGE: F,
ROUGE-1.5.5 ``-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a -m`` (pyrouge's default in SummEval): the 11 references
pooled (``-f A``), Porter stemming (``-m``), the summary one sentence; run both with and without ``-m`` to show
the stemming's effect, and with every text split into sentences (``split_sentences``) to test what moves
ROUGE-L/W; ROUGE-SU* also with stop words removed (``-s``) and without unigrams (ROUGE-S*, no ``-U``).
BLEU: the mean of sacreBLEU-style sentence BLEU (13a, cased, exp smoothing, effective order; ``bleu``) and
corpus BLEU (``bleu-corpus``) per system. chrF: ngrameval's ``chrf`` (sacreBLEU 2.x's chrF2, cased, the best of
the 11 references per summary), the mean of sentence chrF (``chrf``) and corpus chrF (``chrf-corpus``).

The public data has 16 of the paper's 17 systems (M23 twice there). With ``n`` systems tau is S / (n(n-1)/2)
(without ties): adding one system adds ``n`` pairs, so tau_17 lies within ``tau_16 * 120/136 +- 16/136``;
a published value outside that band differs by more than one missing system can explain. Writes
``<out>/table2.tsv``.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from scipy.stats import kendalltau

import ngrameval as ne

CRITERIA = ("coherence", "consistency", "fluency", "relevance")
ROUGE = ("rouge-1", "rouge-2", "rouge-3", "rouge-4", "rouge-l", "rouge-su*", "rouge-w")


def read_published(path: Path) -> dict[str, dict[str, float]]:
    """Table 2 as copied in ``tests/data/published/summeval-table2.tsv`` (metric -> criterion -> tau)."""
    with path.open(encoding="utf-8") as f:
        return {r["metric"]: {c: float(r[c]) for c in CRITERIA} for r in csv.DictReader(f, delimiter="\t")}


def load(data: Path, docs: int | None = None) -> tuple[dict[str, list[str]], list[list[str]], dict[str, np.ndarray]]:
    """Per system: summaries in document order; references per document; per-system mean expert scores."""
    rows = [json.loads(x) for x in (data / "summeval.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    order = list(dict.fromkeys(r["doc_id"] for r in rows))[:docs]
    keep = set(order)
    by_sys: dict[str, dict[str, str]] = defaultdict(dict)
    refs: dict[str, list[str]] = {}
    human: dict[str, list[list[float]]] = defaultdict(list)
    for r in rows:
        if r["doc_id"] in keep:
            by_sys[r["system"]][r["doc_id"]] = r["summary"]
            refs[r["doc_id"]] = list(r["references"])
            human[r["system"]].append([float(r[c]) for c in CRITERIA])
    systems = {s: [d[k] for k in order] for s, d in sorted(by_sys.items(), key=lambda kv: int(kv[0][1:]))}
    return systems, [refs[k] for k in order], {s: np.mean(human[s], axis=0) for s in systems}


def split_sentences(text: str) -> str:
    """One sentence a line: split after ``.``, ``!`` or ``?`` followed by white space (a hypothesis about the
    authors' input: pyrouge gives ROUGE-1.5.5 one sentence a line, and ROUGE-L/W are summary-level over them)."""
    return "\n".join(s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s)


def metric_scores(systems: dict[str, list[str]], refs: Sequence[Sequence[str]]) -> dict[str, dict[str, float]]:
    """metric -> system -> score (means over documents; ``bleu-corpus``: corpus BLEU)."""
    out: dict[str, dict[str, float]] = defaultdict(dict)
    chrf = ne.parse_specs("chrf")
    for name, hyps in systems.items():
        split_refs = [[split_sentences(x) for x in r] for r in refs]
        for label, texts, rr, stem in (
            ("", hyps, refs, True),
            (" (no -m)", hyps, refs, False),
            (" (sentence-split)", [split_sentences(x) for x in hyps], split_refs, True),
        ):
            for spec, r in ne.rouge(texts, rr, list(ROUGE), stem=stem).items():
                out[spec + label][name] = r.f
        # hypotheses about ROUGE-SU*'s relevance value: stop words removed (-s), skip bigrams without unigrams (no -U)
        out["rouge-su* (-m -s)"][name] = ne.rouge(hyps, refs, ["rouge-su*"], stem=True, stopwords="smart")[
            "rouge-su*"
        ].f
        out["rouge-su* (no -U: rouge-s*)"][name] = ne.rouge(hyps, refs, ["rouge-s*"], stem=True)["rouge-s*"].f
        sentences = ne.bleu(hyps, refs, eff=True).sentences
        if sentences is None:
            raise RuntimeError("ngrameval.bleu returned no sentence scores")
        out["bleu"][name] = float(np.mean(sentences))
        out["bleu-corpus"][name] = ne.bleu(hyps, refs).score
        c = ne.score({name: hyps}, refs, chrf, sentence=True)[0]
        if c.sentences is None:
            raise RuntimeError("ngrameval.score returned no sentence chrF")
        out["chrf"][name] = float(np.mean(c.sentences))
        out["chrf-corpus"][name] = c.score
    return out


def table(
    systems: dict[str, list[str]], refs: Sequence[Sequence[str]], human: dict[str, np.ndarray]
) -> dict[str, dict[str, float]]:
    """metric -> criterion -> Kendall tau-b over the systems."""
    names = list(systems)
    h = np.array([human[s] for s in names])
    res: dict[str, dict[str, float]] = {}
    for metric, by_sys in metric_scores(systems, refs).items():
        x = np.array([by_sys[s] for s in names])
        res[metric] = {c: float(kendalltau(x, h[:, i]).statistic) for i, c in enumerate(CRITERIA)}
    return res


def one_system_band(tau16: float, n: int = 16) -> tuple[float, float]:
    """Where tau over n + 1 systems can lie given tau over n (no ties): (S + s) / P(n+1), |s| <= n."""
    p0, p1 = n * (n - 1) / 2, (n + 1) * n / 2
    return (tau16 * p0 - n) / p1, (tau16 * p0 + n) / p1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="../shared/data/summeval")
    parser.add_argument("--out", type=Path, default=Path("repro/summeval-table2"))
    parser.add_argument("--published", type=Path, default=Path("tests/data/published/summeval-table2.tsv"))
    args = parser.parse_args()
    systems, refs, human = load(args.data)
    res = table(systems, refs, human)
    pub = read_published(args.published)
    key = {
        "rouge-su*": "ROUGE-su*",
        "rouge-w": "ROUGE-w",
        "bleu": "BLEU",
        "bleu-corpus": "BLEU",
        "chrf": "chrF",
        "chrf-corpus": "chrF",
    }
    args.out.mkdir(parents=True, exist_ok=True)
    with (args.out / "table2.tsv").open("w", encoding="utf-8") as f:
        f.write("metric\tcriterion\tngrameval_16\tpublished_17\tband_low\tband_high\toutside\n")
        for metric, row in res.items():
            p = pub.get(key.get(metric.split(" (")[0], metric.split(" (")[0].upper()))
            for c, t in row.items():
                lo, hi = one_system_band(t)
                pv = "" if p is None else f"{p[c]:.4f}"
                outside = "" if p is None else str(not lo - 5e-5 <= p[c] <= hi + 5e-5)  # published: 4 decimals
                f.write(f"{metric}\t{c}\t{t:.4f}\t{pv}\t{lo:.4f}\t{hi:.4f}\t{outside}\n")
    print((args.out / "table2.tsv").read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
