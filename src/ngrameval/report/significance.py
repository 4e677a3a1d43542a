"""Significance results as text (rankings and pair tables), JSON or CSV; scores 0-100 like sacreBLEU."""

from __future__ import annotations

import csv
import dataclasses
import io
from typing import Any

from ngrameval.io.write import dumps_json
from ngrameval.meta.significance import Comparison, MetricComparison
from ngrameval.report.table import table
from ngrameval.report.tabular import p_text

_SCALED = ("score", "mean", "ci_low", "ci_high", "score_a", "score_b", "delta")
_TESTS = {"ar": "approximate randomisation", "bs": "paired bootstrap"}


def _scaled(m: MetricComparison, record: dict[str, Any]) -> dict[str, Any]:
    k = 100.0 if m.fraction else 1.0
    return {key: (v * k if key in _SCALED and isinstance(v, float) else v) for key, v in record.items()}


def _interval(low: float, high: float, k: float, width: int) -> str:
    return f"({low * k:.{width}f}, {high * k:.{width}f})"


def _text_metric(c: Comparison, m: MetricComparison, width: int, pairs: bool) -> list[str]:
    k = 100.0 if m.fraction else 1.0
    n = f"{c.n_resamples} {'trials' if c.test == 'ar' else 'resamples'}"
    corr = "uncorrected" if c.correction == "none" else f"{c.correction}-corrected"
    direction = "" if m.higher_is_better else " (lower is better: the best system has the lowest score)"
    lines = [f"{m.metric}{direction}: {_TESTS[c.test]} ({n}, seed {c.seed}), p {corr}, significance level {c.alpha:g}",
             ""]  # fmt: skip
    ci = f"{c.confidence * 100:g}% CI"
    if m.ranking is not None:
        score = {s.system: s for s in m.systems}
        rows = [
            [
                str(e.rank_low) if e.rank_low == e.rank_high else f"{e.rank_low}-{e.rank_high}",
                e.system,
                f"{e.score * k:.{width}f}",
                _interval(score[e.system].ci_low, score[e.system].ci_high, k, width),
                e.groups,
            ]
            for e in m.ranking
        ]
        lines += table(["rank", "system", m.metric, ci, "group"], rows, 2)
        lines += [
            "",
            "rank: 1 + systems significantly better .. n - systems significantly worse;",
            "group: systems sharing a letter do not differ significantly; systems with no letter in common do "
            "(compact letter display of the pairwise tests, Piepho 2004)",
        ]
    else:
        # baseline layout (sacreBLEU's): every system's score and interval, then its test against the first
        rows = [[s.system, f"{s.score * k:.{width}f}", _interval(s.ci_low, s.ci_high, k, width)] for s in m.systems]
        lines += table(["system", m.metric, ci], rows, 1)
    if pairs or m.ranking is None:
        pair_rows = [
            [
                p.system_a,
                p.system_b,
                f"{p.delta * k:+.{width}f}",
                p_text(p.p_value),
                *([] if c.correction == "none" else [p_text(p.p_adjusted)]),
                "*" if p.significant else "",
                *([] if p.win_rate is None else [f"{p.win_rate:.3f}"]),
            ]
            for p in m.pairs
        ]
        wins = [] if c.test == "ar" else ["A wins"]
        adjusted = [] if c.correction == "none" else [f"p ({c.correction})"]  # none: p is the p tested
        lines += [
            "",
            *table(["system A", "system B", "A - B", "p", *adjusted, "sig", *wins], pair_rows, 2),
        ]
    return [*lines, "", f"  {m.signature}", ""]


def _csv(c: Comparison) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    cols = ["metric", "kind", "system", "other", "score", "other_score", "delta", "mean", "ci_low", "ci_high"]
    cols += ["rank_low", "rank_high", "groups", "p_value", "p_adjusted", "significant", "win_rate"]
    w.writerow(cols)
    for m in c.metrics:
        ranks = {e.system: e for e in m.ranking or ()}
        for s in m.systems:
            rec = _scaled(m, dataclasses.asdict(s))
            e = ranks.get(s.system)
            rank = [e.rank_low, e.rank_high, e.groups] if e else ["", "", ""]
            w.writerow(
                [
                    m.metric,
                    "system",
                    s.system,
                    "",
                    rec["score"],
                    "",
                    "",
                    rec["mean"],
                    rec["ci_low"],
                    rec["ci_high"],
                    *rank,
                    "",
                    "",
                    "",
                    "",
                ]
            )
        for p in m.pairs:
            rec = _scaled(m, dataclasses.asdict(p))
            w.writerow(
                [
                    m.metric,
                    "pair",
                    p.system_a,
                    p.system_b,
                    rec["score_a"],
                    rec["score_b"],
                    rec["delta"],
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                    p.p_value,
                    p.p_adjusted,
                    p.significant,
                    "" if p.win_rate is None else p.win_rate,
                ]
            )
    return out.getvalue()


def render_comparison(c: Comparison, fmt: str = "text", width: int = 2, pairs: bool = True) -> str:
    """Render a :class:`Comparison`; fraction metrics are shown 0-100 in every format. ``pairs=False`` leaves
    the pair table out of the text format when there is a ranking."""
    if fmt == "json":
        record = dataclasses.asdict(c)
        record["metrics"] = [
            {
                **{k: v for k, v in dataclasses.asdict(m).items() if k not in ("systems", "pairs", "ranking")},
                "scale": "0-100" if m.fraction else "raw",
                "systems": [_scaled(m, dataclasses.asdict(s)) for s in m.systems],
                "pairs": [_scaled(m, dataclasses.asdict(p)) for p in m.pairs],
                "ranking": None if m.ranking is None else [_scaled(m, dataclasses.asdict(e)) for e in m.ranking],
            }
            for m in c.metrics
        ]
        return dumps_json(record)
    if fmt == "csv":
        return _csv(c)
    lines = [line for m in c.metrics for line in _text_metric(c, m, width, pairs)]
    return "\n".join(lines)
