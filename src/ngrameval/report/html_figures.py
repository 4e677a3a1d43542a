"""The report's figures: each function returns a matplotlib Figure (a notebook shows it; a user can restyle
it) made without pyplot, so no backend is switched and no global state changes; :func:`svg_uri` turns a
Figure into an SVG ``data:`` URI for a page that needs no network."""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ngrameval.meta.analysis import Bucketed, WordAccuracy
from ngrameval.meta.correlate import HumanScores
from ngrameval.meta.resample import FloatArray
from ngrameval.meta.significance import MetricComparison
from ngrameval.report.plane import figure_class

MAX_PANELS = 8  # metrics drawn side by side in one figure; the tables hold the rest
MIN_BUCKET = 5  # a bucket of fewer segments is left out of the line charts (its numbers stay in the table)
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def line_style(i: int) -> dict[str, Any]:
    """The colour and marker of the ``i``-th system: 20 distinct colours (tab20, pairs of hues kept apart:
    the even ones first), then a new marker for each further 20 systems."""
    from matplotlib import colormaps

    order = [*range(0, 20, 2), *range(1, 20, 2)]
    return {"color": colormaps["tab20"](order[i % 20]), "marker": _MARKERS[(i // 20) % len(_MARKERS)]}


def place_labels(ax: Any, xs: FloatArray, ys: FloatArray, labels: Sequence[str], fontsize: float = 6) -> int:
    """Label each point where its label overlaps no other label (greedy, in drawing order, trying eight spots
    around the point), leaving out a label that fits nowhere; returns the number drawn. Sizes are estimated in
    axes fractions from the font size and the axes' size in points."""
    fig = ax.get_figure()
    box = ax.get_position()
    w_pt, h_pt = box.width * fig.get_figwidth() * 72, box.height * fig.get_figheight() * 72
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    char_w, text_h, gap = 0.62 * fontsize / w_pt, 1.2 * fontsize / h_pt, 3 / w_pt
    fxs, fys = (np.asarray(xs) - x0) / (x1 - x0 or 1), (np.asarray(ys) - y0) / (y1 - y0 or 1)
    rx, ry = 2.5 / w_pt, 2.5 / h_pt  # every marker is an obstacle too
    placed = [(fx - rx, fy - ry, fx + rx, fy + ry) for fx, fy in zip(fxs, fys)]
    drawn = 0
    for fx, fy, label in zip(fxs, fys, labels):
        width = char_w * len(label)
        spots = [(gap, -text_h / 2), (gap, text_h * 0.4), (gap, -text_h * 1.4), (-gap - width, -text_h / 2),
                 (-gap - width, text_h * 0.4), (-gap - width, -text_h * 1.4), (-width / 2, text_h * 0.6),
                 (-width / 2, -text_h * 1.6)]  # fmt: skip
        for dx, dy in spots:
            r = (fx + dx, fy + dy, fx + dx + width, fy + dy + text_h)
            if r[0] < 0 or r[2] > 1.02 or r[1] < -0.02 or r[3] > 1.02:
                continue
            if any(r[0] < q[2] and q[0] < r[2] and r[1] < q[3] and q[1] < r[3] for q in placed):
                continue
            placed.append(r)
            ax.text(r[0], r[1], label, fontsize=fontsize, transform=ax.transAxes, va="bottom", ha="left")
            drawn += 1
            break
    return drawn


def svg_uri(fig: Any) -> str:
    """``fig`` as a ``data:image/svg+xml;base64,...`` URI: text kept as text, ids and metadata deterministic."""
    from matplotlib import rc_context

    buf = io.BytesIO()
    with rc_context({"svg.fonttype": "none", "svg.hashsalt": "ngrameval"}):
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": "ngrameval"})
    return "data:image/svg+xml;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _panels(n: int, width: float = 3.0, height: float = 2.6) -> tuple[Any, list[Any]]:
    cols = min(n, 4)
    rows = -(-n // cols)
    fig = figure_class()(figsize=(0.4 + width * cols, 0.3 + height * rows), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False).ravel().tolist()
    for ax in axes[n:]:
        ax.set_visible(False)
    return fig, axes[:n]


def _k(fraction: bool) -> float:
    return 100.0 if fraction else 1.0


def scores_figure(metrics: Sequence[MetricComparison], confidence: float) -> Any:
    """Each metric's score per system (x100 on the 0-1 scale) with its bootstrap interval, best on top (the
    lowest score of a lower-is-better metric such as TER)."""
    shown = list(metrics)[:MAX_PANELS]
    fig, axes = _panels(len(shown), height=0.6 + 0.28 * len(shown[0].systems))
    for ax, m in zip(axes, shown):
        k = _k(m.fraction)
        sign = 1.0 if m.higher_is_better else -1.0
        systems = sorted(m.systems, key=lambda s: sign * s.score)  # worst first: drawn at the bottom
        y = np.arange(len(systems))
        x = np.array([s.score for s in systems]) * k
        err = np.array([[s.score - s.ci_low, s.ci_high - s.score] for s in systems]).T * k
        ax.errorbar(x, y, xerr=np.maximum(err, 0), fmt="o", color="C0", ecolor="0.4", capsize=3, markersize=4)
        ax.set_yticks(y, [s.system for s in systems], fontsize=8)
        ax.set_title(m.metric + ("" if m.higher_is_better else " (lower is better)"), fontsize=9)
        ax.set_xlabel(f"score{' x100' if m.fraction else ''}, {confidence * 100:g}% CI", fontsize=8)
        ax.grid(axis="x", alpha=0.3)
    return fig


def bucket_figure(b: Bucketed) -> Any:
    """The metric per system (lines) across buckets (x), with the segment count of each bucket in its label."""
    fig = figure_class()(figsize=(6.4, 3.4), layout="constrained")
    ax = fig.add_subplot()
    counts = np.asarray(b.counts)
    keep = np.flatnonzero(counts >= MIN_BUCKET)
    if not len(keep):
        keep = np.arange(len(b.labels))
    x = np.arange(len(keep))
    for i, (s, row) in enumerate(zip(b.systems, b.values)):
        ax.plot(x, np.asarray(row)[keep] * _k(b.fraction), markersize=3, label=s, **line_style(i))
    ax.set_xticks(x, [f"{b.labels[j]}\n({counts[j]})" for j in keep], fontsize=8)
    left_out = len(b.labels) - len(keep)
    ax.set_xlabel(f"{b.by} (segments)" + (f"; {left_out} bucket(s) under {MIN_BUCKET} segments left out"
                                          if left_out else ""))  # fmt: skip
    ax.set_ylabel(f"{b.metric}{' x100' if b.fraction else ''}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    return fig


def word_figure(w: WordAccuracy) -> Any:
    """Word F-measure (x100) per system across reference-frequency buckets."""
    fig = figure_class()(figsize=(6.4, 3.4), layout="constrained")
    ax = fig.add_subplot()
    x = np.arange(len(w.labels))
    for i, (s, f) in enumerate(zip(w.systems, w.fmeasure)):
        ax.plot(x, f * 100, markersize=3, label=s, **line_style(i))
    ax.set_xticks(x, list(w.labels), fontsize=8)
    ax.set_xlabel("frequency of the word in the references")
    ax.set_ylabel("word F-measure x100")
    ax.set_ylim(0, 100)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    return fig


def human_figure(
    human: HumanScores, scores: Mapping[str, FloatArray], fractions: Mapping[str, bool], lower: Sequence[str] = ()
) -> Any:
    """Metric (y) against the mean human score (x), a labelled point per judged system, one panel per metric;
    the metrics named in ``lower`` are lower-is-better (their titles say so: agreement slopes down)."""
    names = list(scores)[:MAX_PANELS]
    fig, axes = _panels(len(names))
    keep = ~np.isnan(human.system)
    for ax, name in zip(axes, names):
        y = scores[name] * _k(fractions[name])
        ax.scatter(human.system[keep], y[keep], s=16, color="C0")
        ax.set_title(name + (" (lower is better)" if name in lower else ""), fontsize=9)
        ax.set_xlabel(f"human {human.criterion} (mean)", fontsize=8)
        ax.set_ylabel(f"{name}{' x100' if fractions[name] else ''}", fontsize=8)
        ax.grid(alpha=0.3)
    fig.get_layout_engine().execute(fig)  # final axes sizes, so the labels are placed where they will be drawn
    for ax, name in zip(axes, names):
        y = scores[name] * _k(fractions[name])
        place_labels(ax, human.system[keep], y[keep], [str(s) for s in np.array(human.systems)[keep]])
    fig.set_layout_engine("none")
    return fig


def bleu_pinc_figure(systems: Sequence[str], bleu: FloatArray, pinc: FloatArray) -> Any:
    """PINC (x, novelty) against BLEU (y, adequacy) x100 per system, over the contours of the geometric mean
    sqrt(BLEU PINC) (Chen & Dolan 2011's combination) at 10, 20, ... 90."""
    fig = figure_class()(figsize=(5.6, 4.4), layout="constrained")
    ax = fig.add_subplot()
    grid = np.linspace(0, 100, 201)
    gx, gy = np.meshgrid(grid, grid)
    cs = ax.contour(gx, gy, np.sqrt(gx * gy), levels=np.arange(10, 100, 10), colors="0.7", linewidths=0.8)
    ax.clabel(cs, fontsize=7, fmt="%g")
    ax.scatter(pinc * 100, bleu * 100, s=20, color="C3", zorder=3)
    for s, px, by in zip(systems, pinc * 100, bleu * 100):
        ax.annotate(str(s), (px, by), fontsize=7, xytext=(3, 2), textcoords="offset points")
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 100)
    ax.set_xlabel("PINC x100 (novelty against the source)")
    ax.set_ylabel("BLEU x100 (adequacy against the references)")
    ax.set_title("BLEU vs PINC; contours: geometric mean sqrt(BLEU x PINC)", fontsize=9)
    return fig
