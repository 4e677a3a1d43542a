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
    x = np.arange(len(b.labels))
    for s, row in zip(b.systems, b.values):
        ax.plot(x, row * _k(b.fraction), marker="o", markersize=3, label=s)
    ax.set_xticks(x, [f"{lab}\n({n})" for lab, n in zip(b.labels, b.counts)], fontsize=8)
    ax.set_xlabel(f"{b.by} (segments)")
    ax.set_ylabel(f"{b.metric}{' x100' if b.fraction else ''}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    return fig


def word_figure(w: WordAccuracy) -> Any:
    """Word F-measure (x100) per system across reference-frequency buckets."""
    fig = figure_class()(figsize=(6.4, 3.4), layout="constrained")
    ax = fig.add_subplot()
    x = np.arange(len(w.labels))
    for s, f in zip(w.systems, w.fmeasure):
        ax.plot(x, f * 100, marker="o", markersize=3, label=s)
    ax.set_xticks(x, list(w.labels), fontsize=8)
    ax.set_xlabel("frequency of the word in the references")
    ax.set_ylabel("word F-measure x100")
    ax.set_ylim(0, 100)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    return fig


def human_figure(human: HumanScores, scores: Mapping[str, FloatArray], fractions: Mapping[str, bool]) -> Any:
    """Metric (y) against the mean human score (x), a labelled point per judged system, one panel per metric."""
    names = list(scores)[:MAX_PANELS]
    fig, axes = _panels(len(names))
    keep = ~np.isnan(human.system)
    for ax, name in zip(axes, names):
        y = scores[name] * _k(fractions[name])
        ax.scatter(human.system[keep], y[keep], s=16, color="C0")
        for s, hx, hy in zip(np.array(human.systems)[keep], human.system[keep], y[keep]):
            ax.annotate(str(s), (hx, hy), fontsize=6, xytext=(3, 2), textcoords="offset points")
        ax.set_title(name, fontsize=9)
        ax.set_xlabel(f"human {human.criterion} (mean)", fontsize=8)
        ax.set_ylabel(f"{name}{' x100' if fractions[name] else ''}", fontsize=8)
        ax.grid(alpha=0.3)
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
