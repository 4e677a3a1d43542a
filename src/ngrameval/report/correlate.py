"""Correlation tables as text (one block per criterion and level), JSON or CSV."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ngrameval.io.write import dumps_json
from ngrameval.meta.correlate import Correlation
from ngrameval.report.meta import to_csv
from ngrameval.report.table import table


def _cell(c: Correlation, digits: int) -> str:
    if math.isnan(c.value):
        return "n/a"
    return f"{c.value:.{digits}f} ({c.ci_low:.{digits}f}, {c.ci_high:.{digits}f})"


def render_correlations(
    results: Sequence[Correlation], fmt: str = "text", notes: Sequence[str] = (), digits: int = 3
) -> str:
    """Metrics x coefficients per criterion, each value with its bootstrap interval (text: ``digits`` decimals);
    JSON (NaN as ``null``) or CSV (one row per correlation, every field, NaN as an empty cell)."""
    if fmt == "json":
        return dumps_json(list(results))
    if fmt == "csv":
        return to_csv(results, Correlation)
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
