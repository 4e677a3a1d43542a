"""Correlation tables as text (one block per criterion and level), JSON or CSV."""

from __future__ import annotations

import csv
import dataclasses
import io
import math
from collections.abc import Sequence

from ngrameval.io.write import dumps_json
from ngrameval.meta.correlate import Correlation
from ngrameval.report.table import table


def _cell(c: Correlation, digits: int) -> str:
    if math.isnan(c.value):
        return "n/a"
    return f"{c.value:.{digits}f} ({c.ci_low:.{digits}f}, {c.ci_high:.{digits}f})"


def render_correlations(
    results: Sequence[Correlation], fmt: str = "text", notes: Sequence[str] = (), digits: int = 3
) -> str:
    """Metrics x coefficients per criterion, each value with its bootstrap interval (text: ``digits`` decimals)."""
    if fmt == "json":
        return dumps_json(list(results))
    if fmt == "csv":
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        fields = [f.name for f in dataclasses.fields(Correlation)]
        w.writerow(fields)
        for c in results:
            w.writerow([getattr(c, f) for f in fields])
        return out.getvalue()
    lines: list[str] = []
    for crit in dict.fromkeys(c.criterion for c in results):
        block = [c for c in results if c.criterion == crit]
        coefs = list(dict.fromkeys(c.coefficient for c in block))
        metrics = list(dict.fromkeys(c.metric for c in block))
        cell = {(c.metric, c.coefficient): c for c in block}
        first = block[0]
        where = first.level + ("" if first.level == "system" else f" level, grouping {first.grouping}")
        lines.append(
            f"{crit}: {where}, n = {first.n}, {first.n_resamples} bootstrap resamples (seed {first.seed}),"
            f" value ({first.confidence * 100:g}% interval)"
        )
        head = ["metric", *coefs]
        rows = [[m, *(_cell(cell[m, k], digits) for k in coefs)] for m in metrics]
        lines += [*table(head, rows), ""]
    return "\n".join([*lines, *notes, ""])
