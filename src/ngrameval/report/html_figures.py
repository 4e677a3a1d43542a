"""The report's figures, drawn as inline SVG by :mod:`ngrameval.report.svg` (no plotting library needed; a
notebook shows each returned :class:`~ngrameval.report.svg.Figure`). Every figure's numbers are also in a table
of the report; hover a point to read its values."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from ngrameval.meta.analysis import Bucketed, WordAccuracy
from ngrameval.meta.correlate import HumanScores
from ngrameval.meta.resample import FloatArray
from ngrameval.meta.significance import MetricComparison
from ngrameval.report.plane import plane_chart
from ngrameval.report.svg import (
    Axis,
    Figure,
    HBars,
    Line,
    Panel,
    Points,
    categories,
    fmt_tick,
    nice_ticks,
    padded,
    place_labels,
    series_style,
)

__all__ = ["bleu_pinc_figure", "bucket_figure", "human_figure", "plane_chart", "scores_figure", "word_figure"]

MAX_PANELS = 8  # metrics drawn side by side in one figure; the tables hold the rest
MIN_BUCKET = 5  # a bucket of fewer segments is left out of the line charts (its numbers stay in the table)
_ACCENT = "#1f77b4"


def _k(fraction: bool) -> float:
    return 100.0 if fraction else 1.0


def _value_axis(values: Sequence[float] | FloatArray, title: str, low: float | None = None,
                high: float | None = None) -> Axis:  # fmt: skip
    lo, hi = padded(values)
    lo, hi = lo if low is None else low, hi if high is None else high
    return Axis(lo, hi, tuple((t, fmt_tick(t)) for t in nice_ticks(lo, hi) if lo <= t <= hi), title)


def scores_figure(metrics: Sequence[MetricComparison], confidence: float) -> Figure:
    """Each metric's score per system (x100 on the 0-1 scale) with its bootstrap interval, best on top (the
    lowest score of a lower-is-better metric such as TER)."""
    shown = list(metrics)[:MAX_PANELS]
    panels = []
    for m in shown:
        k = _k(m.fraction)
        sign = 1.0 if m.higher_is_better else -1.0
        systems = sorted(m.systems, key=lambda s: sign * s.score)  # worst first: drawn at the bottom
        y = tuple(float(i) for i in range(len(systems)))
        x = tuple(s.score * k for s in systems)
        lows, highs = tuple(s.ci_low * k for s in systems), tuple(s.ci_high * k for s in systems)
        tips = tuple(f"{s.system}: {s.score * k:.2f} ({s.ci_low * k:.2f}–{s.ci_high * k:.2f})" for s in systems)
        panels.append(Panel(
            m.metric + ("" if m.higher_is_better else " (lower is better)"),
            _value_axis([*lows, *highs, *x], f"score{' x100' if m.fraction else ''}, {confidence * 100:g}% CI"),
            categories([s.system for s in systems]),
            (HBars(lows, highs, y), Points(x, y, _ACCENT, tips=tips)),
        ))  # fmt: skip
    n = max((len(m.systems) for m in shown), default=1)
    longest = max((len(s.system) for m in shown for s in m.systems), default=4)
    return Figure(tuple(panels), cols=min(len(panels), 3) or 1, width=240, height=24 + 18 * n,
                  left=min(20 + 6.6 * longest, 220))  # fmt: skip


def _lines(labels: Sequence[str], systems: Sequence[str], rows: FloatArray, title: str, y_title: str,
           x_title: str, low: float | None = None, high: float | None = None) -> Figure:  # fmt: skip
    x = tuple(float(i) for i in range(len(labels)))
    marks: list[Line | Points] = []
    legend = []
    for i, (s, row) in enumerate(zip(systems, rows)):
        colour, shape = series_style(i)
        ys = tuple(float(v) for v in row)
        marks.append(Line(x, ys, colour, s))
        marks.append(Points(x, ys, colour, shape, tuple(f"{s}, {lab}: {v:.2f}" for lab, v in zip(labels, ys)), 2.5))
        legend.append((s, colour))
    axis = _value_axis(np.asarray(rows, dtype=float).ravel(), y_title, low, high)
    panel = Panel(title, categories(labels, x_title), axis, tuple(marks))
    return Figure((panel,), width=max(360, 70 * len(labels)), height=220, bottom=58, legend=tuple(legend))


def bucket_figure(b: Bucketed) -> Figure:
    """The metric per system (lines) across buckets (x), with the segment count of each bucket in its label."""
    counts = np.asarray(b.counts)
    keep = np.flatnonzero(counts >= MIN_BUCKET)
    if not len(keep):
        keep = np.arange(len(b.labels))
    left_out = len(b.labels) - len(keep)
    x_title = f"{b.by} (segments)" + (f"; {left_out} bucket(s) under {MIN_BUCKET} segments left out"
                                      if left_out else "")  # fmt: skip
    values = np.asarray(b.values, dtype=float)[:, keep] * _k(b.fraction)
    return _lines([f"{b.labels[j]}\n({counts[j]})" for j in keep], b.systems, values, b.metric,
                  f"{b.metric}{' x100' if b.fraction else ''}", x_title)  # fmt: skip


def word_figure(w: WordAccuracy) -> Figure:
    """Word F-measure (x100) per system across reference-frequency buckets."""
    return _lines(w.labels, w.systems, np.asarray(w.fmeasure, dtype=float) * 100, "word F-measure",
                  "word F-measure x100", "frequency of the word in the references", 0.0, 100.0)  # fmt: skip


def human_figure(
    human: HumanScores, scores: Mapping[str, FloatArray], fractions: Mapping[str, bool], lower: Sequence[str] = ()
) -> Figure:
    """Metric (y) against the mean human score (x), a labelled point per judged system, one panel per metric;
    the metrics named in ``lower`` are lower-is-better (their titles say so: agreement slopes down). A label
    that would overlap another label or a point is left out."""
    names = list(scores)[:MAX_PANELS]
    keep = ~np.isnan(human.system)
    hx = human.system[keep].astype(float)
    who = [str(s) for s in np.array(human.systems)[keep]]
    width, height = 260.0, 200.0
    panels = []
    for name in names:
        y = (np.asarray(scores[name], dtype=float) * _k(fractions[name]))[keep]
        xa = _value_axis(hx, f"human {human.criterion} (mean)")
        ya = _value_axis(y, f"{name}{' x100' if fractions[name] else ''}")
        tips = tuple(f"{s}: human {a:.3g}, {name} {b:.2f}" for s, a, b in zip(who, hx, y))
        labels = place_labels(hx.tolist(), y.tolist(), who, xa, ya, width, height)
        panels.append(Panel(name + (" (lower is better)" if name in lower else ""), xa, ya,
                            (Points(tuple(hx.tolist()), tuple(y.tolist()), _ACCENT, tips=tips), *labels)))  # fmt: skip
    return Figure(tuple(panels), cols=min(len(panels), 3) or 1, width=width, height=height)


def bleu_pinc_figure(systems: Sequence[str], bleu: FloatArray, pinc: FloatArray) -> Figure:
    """PINC (x, novelty) against BLEU (y, adequacy) x100 per system, over the contours of the geometric mean
    sqrt(BLEU PINC) (Chen & Dolan 2011's combination) at 10, 20, ... 90: the curve y = c^2 / x."""
    contours: list[Line | Points] = []
    for c in range(10, 100, 10):
        xs = np.geomspace(c * c / 100, 100, 40)
        contours.append(Line(tuple(xs.tolist()), tuple((c * c / xs).tolist()), "#bbbbbb", f"sqrt(BLEU x PINC) = {c}",
                             0.8))  # fmt: skip
    x, y = (pinc * 100).astype(float), (bleu * 100).astype(float)
    axis = Axis(0.0, 100.0, tuple((float(t), str(t)) for t in range(0, 101, 20)))
    xa = replace(axis, title="PINC x100 (novelty against the source)")
    ya = replace(axis, title="BLEU x100 (adequacy against the references)")
    tips = tuple(f"{s}: PINC {a:.2f}, BLEU {b:.2f}" for s, a, b in zip(systems, x, y))
    width = height = 320.0
    labels = place_labels(x.tolist(), y.tolist(), [str(s) for s in systems], xa, ya, width, height)
    points = Points(tuple(x.tolist()), tuple(y.tolist()), "#d62728", tips=tips)
    panel = Panel("BLEU vs PINC; contours: geometric mean sqrt(BLEU x PINC)", xa, ya, (*contours, points, *labels))
    return Figure((panel,), width=width, height=height)
