"""Bradley–Terry results (:mod:`ngrameval.meta.bradley_terry`) as text (a ranking), JSON or CSV."""

from __future__ import annotations

import csv
import io
from typing import Any

from ngrameval.io.write import dumps_json
from ngrameval.meta.bradley_terry import BradleyTerry
from ngrameval.report.table import table

COLUMNS = ("system", "theta", "low", "high", "win_rate", "comparisons")


def preference_records(bt: BradleyTerry) -> list[dict[str, Any]]:
    """One record per system, best (highest θ) first; an interval bound without resamples is None."""
    rows = zip(bt.systems, bt.theta, bt.low, bt.high, bt.win_rate, bt.comparisons, strict=True)
    ranked = sorted(rows, key=lambda r: -r[1])
    return [dict(zip(COLUMNS, r, strict=True)) for r in ranked]


def _fixed(v: float, width: int) -> str:
    return "" if v != v else f"{v:+.{width}f}"


def render_preferences(bt: BradleyTerry, fmt: str, width: int = 2, source: str = "") -> str:
    """``bt`` as ``text`` (ranked table with intervals and win rates), ``json`` or ``csv``."""
    records = preference_records(bt)
    if fmt == "json":
        head = {k: getattr(bt, k) for k in ("confidence", "resamples", "dropped", "seed", "iterations")}
        return dumps_json({"model": "bradley-terry", "ties": "half a win each", **head, "systems": records})
    if fmt == "csv":
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(COLUMNS)
        w.writerows([r[c] if r[c] == r[c] else "" for c in COLUMNS] for r in records)
        return out.getvalue()
    n = sum(bt.comparisons) // 2
    ci = f"{bt.confidence * 100:g}% CI"
    rows = [[str(k), r["system"], _fixed(r["theta"], width),
             f"({_fixed(r['low'], width)}, {_fixed(r['high'], width)})" if r["low"] == r["low"] else "-",
             f"{r['win_rate']:.3f}", str(r["comparisons"])] for k, r in enumerate(records, 1)]  # fmt: skip
    lines = [
        f"Bradley-Terry scores{f' of {source}' if source else ''}: {n} comparison{'' if n == 1 else 's'}, "
        f"{len(bt.systems)} systems (ties count half a win to each side)",
        "",
        *table(["rank", "system", "theta", ci, "win rate", "comparisons"], rows, 2),
        "",
        "theta: log-strength, mean 0 (P(A beats B) = 1 / (1 + exp(theta_B - theta_A)));",
        f"{ci}: percentile bootstrap over comparisons ({bt.resamples} resamples, seed {bt.seed}"
        f"{f'; {bt.dropped} resamples without an MLE dropped' if bt.dropped else ''});",
        "win rate: (wins + ties / 2) / comparisons",
    ]
    return "\n".join(lines) + "\n"
