"""Reports of the meta-evaluation analyses: correlation matrix, metric-vs-metric tests, conditional correlations,
judge agreement and reference-count curves — as text tables, JSON (NaN -> null) or CSV."""

from __future__ import annotations

import csv
import dataclasses
import io
import math
from collections.abc import Sequence
from typing import Any

from ngrameval.io.write import dumps_json
from ngrameval.meta.agreement import Agreement, CorrelationMatrix
from ngrameval.meta.metric_difference import MetricDifference
from ngrameval.meta.subsets import ConditionalCorrelation, ReferenceCurve
from ngrameval.report.table import table
from ngrameval.report.tabular import p_text


def to_json(results: Sequence[Any]) -> str:
    """Frozen result dataclasses as a JSON list."""
    return dumps_json(list(results))


def to_csv(results: Sequence[Any], kind: type[Any] | None = None) -> str:
    """Flat result dataclasses (no nested fields) as CSV, one row each, every field a column (those of ``kind``,
    else of the first result); an undefined number (NaN) is an empty cell, as JSON writes it ``null`` (Python's
    csv module would write ``nan``)."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    template = kind if kind is not None else (results[0] if results else None)
    fields = [f.name for f in dataclasses.fields(template)] if template is not None else []
    w.writerow(fields)
    for r in results:
        w.writerow(["" if isinstance(v, float) and math.isnan(v) else v for v in (getattr(r, f) for f in fields)])
    return out.getvalue()


def _num(v: float | None, digits: int = 3) -> str:
    return "n/a" if v is None or math.isnan(v) else f"{v:.{digits}f}"


def matrix_text(m: CorrelationMatrix, title: str, digits: int = 3) -> str:
    """The full matrix, lower triangle (the upper one mirrors it)."""
    short = [f"({i + 1})" for i in range(len(m.names))]
    rows = [
        [f"({i + 1}) {name}", *(_num(m.values[i, j], digits) if j <= i else "" for j in range(len(m.names)))]
        for i, name in enumerate(m.names)
    ]
    return "\n".join([f"{title}: {m.coefficient} between every pair", *table(["", *short], rows), ""]) + "\n"


def differences_text(diffs: Sequence[MetricDifference], digits: int = 3) -> str:
    """One line per pair: both correlations, r between the metrics, Williams' t and p, permutation p."""
    if not diffs:
        return ""
    d0 = diffs[0]
    head = ["metric A (higher)", "metric B", d0.coefficient + " A", d0.coefficient + " B", "r(A,B)", "Williams t",
            "p", "permutation p"]  # fmt: skip
    rows = [[d.metric_a, d.metric_b, _num(d.value_a, digits), _num(d.value_b, digits), _num(d.r_ab, digits),
             _num(d.williams_t, 2), p_text(d.williams_p), p_text(d.permutation_p)] for d in diffs]  # fmt: skip
    title = (
        f"{d0.criterion}: is A's correlation higher than B's? ({d0.level} level, n = {d0.n}; one-sided;"
        f" permutation test {d0.n_resamples} trials, seed {d0.seed})"
    )
    return "\n".join([title, *table(head, rows, left=2), ""]) + "\n"


def conditional_text(results: Sequence[ConditionalCorrelation], digits: int = 3) -> str:
    """Rows: metric; columns: thresholds, each cell ``value (n)``."""
    if not results:
        return ""
    c0 = results[0]
    thresholds = list(dict.fromkeys(c.threshold for c in results))
    metrics = list(dict.fromkeys(c.metric for c in results))
    cell = {(c.metric, c.threshold): c for c in results}
    head = ["metric", *(f"{c0.condition} > {t:g}" for t in thresholds)]
    rows = [[m, *(f"{_num(cell[m, t].value, digits)} ({cell[m, t].n})" for t in thresholds)] for m in metrics]
    title = f"{c0.criterion}: segment-level {c0.coefficient} where {c0.condition} exceeds a threshold (n segments)"
    return "\n".join([title, *table(head, rows), ""]) + "\n"


def agreement_text(results: Sequence[Agreement], digits: int = 3) -> str:
    """One row per criterion."""
    loo = any(a.leave_one_out for a in results)
    head = ["criterion", "judges", "items", "judgments", "items judged 2+", "pairwise r (pairs)",
            f"single vs {'others’ ' if loo else ''}mean (min..max)", "Krippendorff alpha"]  # fmt: skip
    rows = []
    for a in results:
        kalpha = (
            "not computed"
            if a.krippendorff_alpha is None
            else f"{_num(a.krippendorff_alpha, digits)} ({a.krippendorff_level})"
        )
        rows.append([a.criterion, str(a.judges), str(a.items), str(a.judgments), str(a.items_judged_twice),
                     f"{_num(a.pairwise_pearson, digits)} ({a.pairs})",
                     f"{_num(a.single_vs_mean, digits)} ({_num(a.single_vs_mean_min, digits)}.."
                     f"{_num(a.single_vs_mean_max, digits)})",
                     kalpha])  # fmt: skip
    return "\n".join(table(head, rows)) + "\n"


def curves_text(curves: Sequence[ReferenceCurve], digits: int = 3) -> str:
    """Rows: metric (with/without the source); columns: k references, each cell the mean over subsets."""
    if not curves:
        return ""
    c0 = curves[0]
    ks = [p.k for p in c0.points]
    head = ["metric", *(f"k={k}" for k in ks)]
    rows = [
        [c.metric + (" + source" if c.with_source else ""), *(_num(p.mean, digits) for p in c.points)] for c in curves
    ]
    subsets = ", ".join(f"{p.k}:{p.subsets}" for p in c0.points)
    title = (
        f"{c0.criterion}: {c0.level}-level {c0.coefficient} with k references, mean over subsets"
        f" (subsets per k: {subsets}; seed {c0.seed})"
    )
    return "\n".join([title, *table(head, rows), ""]) + "\n"
