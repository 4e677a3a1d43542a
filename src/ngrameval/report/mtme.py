"""Text of mt-metrics-eval style results (computed by :mod:`ngrameval.meta.mtme_sets`): significance clusters and
the summary over data sets."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ngrameval.meta.mtme_sets import ACCURACIES, Cluster, SetSummary
from ngrameval.report.table import table


def _num(v: float | None, digits: int) -> str:
    return "n/a" if v is None or math.isnan(v) else f"{v:.{digits}f}"


def clusters_text(found: Sequence[Cluster], digits: int = 3) -> str:
    """One table per (data set, criterion, coefficient): metric, value, rank (metrics sharing a rank are tied)."""
    out: list[str] = []
    keys = dict.fromkeys((c.dataset, c.criterion, c.coefficient) for c in found)
    for dataset, crit, coef in keys:
        block = [c for c in found if (c.dataset, c.criterion, c.coefficient) == (dataset, crit, coef)]
        where = f"{dataset}: " if dataset else ""
        out.append(f"{where}{crit}: significance clusters of {coef} ({block[0].level} level; a rank opens where a"
                   f" metric above it in the rank wins with permutation p <= {block[0].alpha:g})")  # fmt: skip
        out += [*table(["rank", "metric", coef], [[str(c.rank), c.metric, _num(c.value, digits)] for c in block], 2)]
        out.append("")
    return "\n".join(out) + ("\n" if out else "")


def _order(r: SetSummary) -> tuple[float, float]:
    return (r.average_rank if r.average_rank is not None else math.inf, -r.average_value)


def summary_text(rows: Sequence[SetSummary], digits: int = 3) -> str:
    """The summary over data sets: average value (an accuracy as it is; a correlation r as (r + 1) / 2, as
    mt-metrics-eval averages it, and the heading says so), average rank, pooled accuracy and its rank."""
    if not rows:
        return ""
    out: list[str] = []
    for crit, coef in dict.fromkeys((r.criterion, r.coefficient) for r in rows):
        block = sorted((r for r in rows if (r.criterion, r.coefficient) == (crit, coef)), key=_order)
        # mt-metrics-eval maps a correlation r in [-1, 1] to (r + 1) / 2 before averaging; accuracies stay as they are
        head = ["metric", "sets", "avg accuracy" if coef in ACCURACIES else f"avg ({coef} + 1) / 2", "avg rank"]
        pooled = any(r.pooled_accuracy is not None for r in block)
        if pooled:
            head += ["pooled accuracy", "pooled rank"]
        lines = []
        for r in block:
            line = [r.metric, str(r.sets), _num(r.average_value, digits), _num(r.average_rank, 2)]
            if pooled:
                line += [_num(r.pooled_accuracy, digits), "n/a" if r.pooled_rank is None else str(r.pooled_rank)]
            lines.append(line)
        out.append(f"{crit}: {coef} over {block[0].sets} data sets (mt-metrics-eval's average rank and value)")
        out += [*table(head, lines), ""]
    return "\n".join(out) + "\n"
