"""Makes tests/golden/mtme/: ngrameval's scores of the shared WMT data as scores files, and mt-metrics-eval's own
statistics on them (golden.json). Run from the repository root with mt-metrics-eval's tree extracted at MTME:

    .venv/bin/python tests/golden/mtme/make_mtme_golden.py /tmp/mtme

Only mt-metrics-eval's functions compute the golden numbers; this script feeds them (see README.md here).
"""

from __future__ import annotations

import csv
import json
import sys
import types
from collections import Counter
from pathlib import Path

import numpy as np

from ngrameval import measure
from ngrameval.meta.correlate import sentence_matrix

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
from wmt19 import DATA, read_wmt19  # noqa: E402  (tests/golden/wmt19.py, shared by the golden-making scripts)

LPS19 = ("de-en", "fi-en", "gu-en", "kk-en", "lt-en", "ru-en", "zh-en")
LPS17 = ("cs-en", "de-en", "fi-en", "lv-en", "ru-en", "tr-en", "zh-en")
K, SEED, PVAL = 1000, 1, 0.05


def wmt19_scores() -> None:
    """lp, system, BLEU, chrF, TER (ngrameval's corpus scores, 0-1) of every WMT19 to-English output."""
    with open(HERE / "wmt19-sys-scores.tsv", "w", newline="") as f:
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        w.writerow(["lp", "system", "BLEU", "chrF", "TER"])
        for lp in LPS19:
            ref, outs = read_wmt19(lp)
            rows = measure(outs, [[r] for r in ref], "bleu,chrf,ter")
            for k, name in enumerate(outs):
                w.writerow([lp, name, *(repr(float(r.corpus()[k])) for r in rows)])


def wmt17_segments() -> None:
    """lp, system, segment, sentBLEU (WMT17's official column), BLEU and chrF (ngrameval, sentence level) of
    WMT17 to-English segment (item) judged for two systems or more, and its DA z-score (the testset rows matched
    to DA-seglevel.csv by score: each matches exactly one row)."""
    da = [line.split() for line in (DATA / "wmt17-seglevel" / "DA-seglevel.csv").read_text().splitlines()[1:]]
    with (
        open(HERE / "wmt17-seg-scores.tsv", "w", newline="") as f,
        open(HERE / "wmt17-seg-da.tsv", "w", newline="") as g,
    ):
        w, h = csv.writer(f, delimiter="\t", lineterminator="\n"), csv.writer(g, delimiter="\t", lineterminator="\n")
        w.writerow(["lp", "system", "segment", "sentBLEU", "BLEU", "chrF"])
        h.writerow(["lp", "system", "segment", "da"])
        for lp in LPS17:
            by_score = {round(float(r[4]), 9): r for r in da if r[0] == lp}
            with open(DATA / "wmt17-seglevel" / f"testset_{lp}.tsv", newline="") as t:
                test = list(csv.reader(t, delimiter="\t", quoting=csv.QUOTE_NONE))[1:]
            rows = measure({"all": [r[2] for r in test]}, [[r[3]] for r in test], "bleu,chrf")
            sent = [sentence_matrix(r)[0] for r in rows]
            matched = [by_score[round(float(r[4]), 9)] for r in test]
            judged = Counter(d[3] for d in matched)
            for k, (r, d) in enumerate(zip(test, matched)):
                if judged[d[3]] < 2:  # items judged for one system only have no pair (mtme's pairs test needs one)
                    continue
                w.writerow([lp, d[2], d[3], r[5], repr(float(sent[0][k])), repr(float(sent[1][k]))])
                h.writerow([lp, d[2], d[3], d[4]])


def _read(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def golden(mtme: str) -> dict[str, object]:
    sys.path.insert(0, mtme)
    for stub in ("apache_beam", "dacite"):  # beam: its parallel mode only; dacite: its ratings files only
        sys.modules.setdefault(stub, types.ModuleType(stub))
    from mt_metrics_eval import data, stats

    out: dict[str, object] = {}
    # system level: every lp's systems with a DA score (gu-en's online-B.0 has none: gold None, as mtme does)
    da = {(r["lp"], r["system"]): float(r["da_z"]) for r in _read(DATA / "wmt19" / "DA-syslevel.tsv")}
    scores = _read(HERE / "wmt19-sys-scores.tsv")
    metrics = ("BLEU", "chrF", "TER")
    per_lp: dict[str, object] = {}
    merged: dict[str, tuple[list[float | None], list[float]]] = {m: ([], []) for m in metrics}
    sizes = []
    for lp in LPS19:
        rows = [r for r in scores if r["lp"] == lp]
        gold = [da.get((lp, r["system"])) for r in rows]
        corrs = {m: stats.Correlation(len(rows), gold, [float(r[m]) for r in rows]) for m in metrics}
        for m in metrics:
            merged[m][0].extend(gold)
            merged[m][1].extend(corrs[m].metric_scores)
        sizes.append(len(rows))

        def accuracy(g: list[float | None], x: list[float]) -> tuple[float, int]:
            agree, pairs = stats.Agreement(g, x)
            return agree / pairs, pairs

        np.random.seed(SEED)
        ranks, sig, _, _ = data.CompareMetrics(corrs, accuracy, "none", K, pval=PVAL)
        per_lp[lp] = {
            m: {
                "accuracy": accuracy(corrs[m].gold_scores, corrs[m].metric_scores)[0],
                "agreement": list(stats.Agreement(corrs[m].gold_scores, corrs[m].metric_scores)),
                "pearson": corrs[m].Pearson()[0],
                "kendall_b": corrs[m].Kendall()[0],
            }
            for m in metrics
        }
        per_lp[lp]["clusters"] = {m: [v[0], v[1]] for m, v in ranks.items()}  # type: ignore[index]
        per_lp[lp]["sig_matrix"] = sig.tolist()  # type: ignore[index]
    out["wmt19_system"] = per_lp

    def pooled(g: list[float | None], x: list[float]) -> tuple[float, int]:  # CompareMetricsWithGlobalAccuracy's sum
        agree = pairs = start = 0
        for n in sizes:
            a, p = stats.Agreement(g[start : start + n], x[start : start + n])
            agree, pairs, start = agree + a, pairs + p, start + n
        return agree / pairs, pairs

    merged_corrs = {m: stats.Correlation(sum(sizes), g, x) for m, (g, x) in merged.items()}
    np.random.seed(SEED)
    ranks_and_corrs = {m: [pooled(c.gold_scores, c.metric_scores)[0], 0] for m, c in merged_corrs.items()}
    ranks_and_corrs = dict(sorted(ranks_and_corrs.items(), key=lambda x: (-x[1][0], x[0])))
    sig, _, _ = data.ComputeSigMatrix(
        merged_corrs, ranks_and_corrs, pooled, "none", K, stats.PermutationSigDiffParams(), False, "scores"
    )
    ranks = data.AssignRanks(sig, PVAL)
    out["wmt19_pooled"] = {m: [v[0], r] for (m, v), r in zip(ranks_and_corrs.items(), ranks)}
    out["wmt19_pooled_sig_matrix"] = sig.tolist()

    # segment level: acc*_eq, grouped by item (segment) as WMT23, and over all pairs; clusters by the pairs test
    for key, digits in (("wmt17_segment", None), ("wmt17_segment_rounded", 0)):
        out[key] = _segment(stats, data, digits)
    return out


def _segment(stats: types.ModuleType, data: types.ModuleType, digits: int | None) -> dict[str, object]:
    """``digits``: DA rounded to so many decimals (ties in the human scores, so that calibration matters)."""
    seg = _read(HERE / "wmt17-seg-scores.tsv")
    gold_rows = _read(HERE / "wmt17-seg-da.tsv")
    seg_metrics = ("sentBLEU", "BLEU", "chrF")
    per_seg: dict[str, object] = {}
    for lp in LPS17:
        rows = [r for r in seg if r["lp"] == lp]
        golds = {
            (r["system"], r["segment"]): float(r["da"]) if digits is None else round(float(r["da"]), digits)
            for r in gold_rows
            if r["lp"] == lp
        }
        systems = list(dict.fromkeys(r["system"] for r in rows))
        items = list(dict.fromkeys(r["segment"] for r in rows))
        cell = {(r["system"], r["segment"]): r for r in rows}
        gold = [golds.get((s, i)) for s in systems for i in items]
        corrs = {}
        for m in seg_metrics:
            vec = [float(cell[s, i][m]) if (s, i) in cell else None for s in systems for i in items]
            corrs[m] = stats.Correlation(len(systems), gold, vec)
        res: dict[str, object] = {}
        for m, c in corrs.items():
            item = c.KendallWithTiesOpt(average_by="item", variant="acc23", sample_rate=1.0)
            opt_none = stats.KendallWithTiesOpt(c.gold_scores, c.metric_scores, "acc23", c.num_sys, "none", 1.0)
            opt_tau = stats.KendallWithTiesOpt(c.gold_scores, c.metric_scores, "23", c.num_sys, "item", 1.0)
            opt_item = stats.KendallWithTiesOpt(c.gold_scores, c.metric_scores, "acc23", c.num_sys, "item", 1.0)
            res[m] = {
                "acc_eq_item": item,
                "epsilon_item": opt_item[1],
                "acc_eq_none": opt_none[0],
                "epsilon_none": opt_none[1],
                "tau_eq_item": opt_tau[0],
                "tau_epsilon_item": opt_tau[1],
            }
        np.random.seed(SEED)
        ranks, sig, _, _ = data.CompareMetrics(
            corrs, stats.KendallWithTiesOpt, "item", K, pval=PVAL, perm_test="pairs", variant="acc23", sample_rate=1.0
        )
        res["clusters"] = {m: [v[0], v[1]] for m, v in ranks.items()}
        res["sig_matrix"] = sig.tolist()
        per_seg[lp] = res
    return per_seg


if __name__ == "__main__":
    wmt19_scores()
    wmt17_segments()
    result = golden(sys.argv[1])
    (HERE / "golden.json").write_text(json.dumps(result, indent=1, default=lambda v: v.item()) + "\n")
