"""Text of soft pairwise accuracy (SPA) results: one table per (data set, criterion), and the permutation tests."""

from __future__ import annotations

from collections.abc import Sequence

from ngrameval.meta.spa import SoftPairwiseAccuracy, SpaDifference
from ngrameval.report.table import table

SIDE_NOTE = {
    "segments": "summed segment scores (mt-metrics-eval's)",
    "statistics": "corpus metric from permuted sufficient statistics",
}


def spa_text(values: Sequence[SoftPairwiseAccuracy], differences: Sequence[SpaDifference], digits: int = 3) -> str:
    """SPA per metric and side (the side says how the metric's pairwise p-values were made), then each
    tested pair of metrics: SPA difference and one-sided permutation p."""
    out: list[str] = []
    for dataset, crit in dict.fromkeys((v.dataset, v.criterion) for v in values):
        block = [v for v in values if (v.dataset, v.criterion) == (dataset, crit)]
        where = f"{dataset}: " if dataset else ""
        out.append(f"{where}{crit}: soft pairwise accuracy over {block[0].pairs} system pairs, "
                   f"{block[0].permutations} paired permutations")  # fmt: skip
        rows = [[v.metric, SIDE_NOTE[v.side], f"{v.value:.{digits}f}"] for v in block]
        out += [*table(["metric", "metric p-values from", "SPA"], rows, 2), ""]
        tests = [d for d in differences if (d.dataset, d.criterion) == (dataset, crit)]
        if tests:
            out.append(f"{where}{crit}: SPA differences (permutation test of segment scores, {tests[0].trials} trials)")
            rows = [[d.better, d.worse, f"{d.delta:.{digits}f}", f"{d.p:.{digits}f}"] for d in tests]
            out += [*table(["metric a", "metric b", "SPA a - b", "p (a higher)"], rows, 2), ""]
    return "\n".join(out) + ("\n" if out else "")
