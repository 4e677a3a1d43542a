"""Charts as inline SVG written directly: no plotting library, text kept as text (searchable, crisp at any zoom),
a ``<title>`` on every point so a browser shows its values on hover.

A figure is data first: :class:`Figure` holds :class:`Panel` s, each with its axes and marks (frozen dataclasses,
so tests read what is drawn without parsing SVG); :meth:`Figure.svg` writes the markup. Geometry is in CSS
pixels; label sizes are estimated from the font size (0.6 em per character, the width of an average sans-serif
glyph), which is what :func:`place_labels` needs to keep labels apart.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]

# Colour tables read from the colour maps' published values: tab20 (matplotlib's Tableau 20, even hues first
# so neighbours differ), viridis and ColorBrewer's RdBu (reversed: blue low, red high) at evenly spaced stops.
TAB20 = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
         "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#c7c7c7",
         "#dbdb8d", "#9edae5")  # fmt: skip
MAPS = {
    "viridis": ("#440154", "#472d7b", "#3b528b", "#2c728e", "#21918c", "#28ae80", "#5ec962", "#addc30", "#fde725"),
    "RdBu_r": ("#053061", "#2166ac", "#4393c3", "#92c5de", "#d1e5f0", "#f7f7f7", "#fddbc7", "#f4a582", "#d6604d",
               "#b2182b", "#67001f"),
}  # fmt: skip
SHAPES = ("circle", "square", "triangle", "diamond")
FONT = 11.0  # px: tick labels; titles are 12, point labels 9
CHAR = 0.6  # estimated glyph width in em


def series_style(i: int) -> tuple[str, str]:
    """The colour and marker shape of the ``i``-th series: 20 colours, then a new shape for each further 20."""
    return TAB20[i % 20], SHAPES[(i // 20) % len(SHAPES)]


def _rgb(hex_colour: str) -> tuple[float, float, float]:
    return tuple(int(hex_colour[k : k + 2], 16) / 255 for k in (1, 3, 5))  # type: ignore[return-value]


def colour_at(cmap: str, t: float) -> str:
    """The colour at ``t`` in [0, 1] of ``cmap`` (linear between its stops); grey for NaN."""
    if math.isnan(t):
        return "#dddddd"
    stops = MAPS[cmap]
    x = min(max(t, 0.0), 1.0) * (len(stops) - 1)
    k = min(int(x), len(stops) - 2)
    a, b = _rgb(stops[k]), _rgb(stops[k + 1])
    f = x - k
    return "#" + "".join(f"{round((u + (v - u) * f) * 255):02x}" for u, v in zip(a, b))


def is_dark(colour: str) -> bool:
    """Whether white text reads better than black on ``colour`` (luma 0.299 R + 0.587 G + 0.114 B < 0.5)."""
    r, g, b = _rgb(colour)
    return 0.299 * r + 0.587 * g + 0.114 * b < 0.5


def nice_ticks(low: float, high: float, n: int = 5) -> tuple[float, ...]:
    """About ``n`` round tick values (steps of 1, 2 or 5 x 10^k) covering [low, high]."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return ()
    if high <= low:
        return (low,)
    raw = (high - low) / max(n, 1)
    if not (raw > 0 and math.isfinite(raw)):
        return (low,)
    exp = math.floor(math.log10(raw))
    step = next(m * 10.0**exp for m in (1, 2, 5, 10) if m * 10.0**exp >= raw)
    digits = max(0, 1 - exp)  # enough decimals for the step: 0.05 keeps 2, 20 keeps none
    first = math.ceil(low / step - 1e-9)
    return tuple(round(k * step, digits) for k in range(first, math.floor(high / step + 1e-9) + 1))


def padded(values: Sequence[float] | FloatArray, pad: float = 0.06) -> tuple[float, float]:
    """The range of the finite ``values`` widened by ``pad`` of its span on each side (a point never sits on
    the frame); (0, 1) when nothing is finite, +-0.5 around a single value."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if not len(v):
        return 0.0, 1.0
    low, high = float(v.min()), float(v.max())
    if high == low:
        return low - 0.5, high + 0.5
    span = high - low
    return low - pad * span, high + pad * span


def fmt_tick(v: float) -> str:
    """A tick value as short as it reads: 20, 2.5, 0.05."""
    return f"{v:.6g}"


@dataclass(frozen=True)
class Frame:
    """Where a panel's plot area sits (left ``ox``, top ``oy``, size ``w`` x ``h`` in pixels) and the data ranges
    it shows; marks draw themselves into it."""

    ox: float
    oy: float
    w: float
    h: float
    x: tuple[float, float]
    y: tuple[float, float]

    def px(self, x: float) -> float:
        """Pixel column of data ``x``."""
        return self.ox + _scale(x, self.x[0], self.x[1], 0, self.w)

    def py(self, y: float) -> float:
        """Pixel row of data ``y`` (up is larger)."""
        return self.oy + _scale(y, self.y[0], self.y[1], self.h, 0)


@dataclass(frozen=True)
class Points:
    """Markers at (x, y) in data units; ``tips`` are the hover texts."""

    xs: tuple[float, ...]
    ys: tuple[float, ...]
    colour: str = TAB20[0]
    shape: str = "circle"
    tips: tuple[str, ...] = ()
    radius: float = 3.5

    def svg(self, f: Frame) -> str:
        """The markers, each with its hover text."""
        out = []
        for k, (x, y) in enumerate(zip(self.xs, self.ys)):
            if not (math.isfinite(x) and math.isfinite(y)):
                continue
            opening = _marker(self.shape, f.px(x), f.py(y), self.radius, self.colour)
            tip = f"<title>{_e(self.tips[k])}</title>" if k < len(self.tips) else ""
            out.append(f'{opening[:-1]} class="pt">{tip}{_close(opening)}')
        return "".join(out)


@dataclass(frozen=True)
class Line:
    """A polyline through (x, y) in data units (NaN points break it); ``label`` names it in the legend."""

    xs: tuple[float, ...]
    ys: tuple[float, ...]
    colour: str = TAB20[0]
    label: str = ""
    width: float = 1.5

    def svg(self, f: Frame) -> str:
        """One polyline per run of finite points."""
        runs: list[list[str]] = [[]]
        for x, y in zip(self.xs, self.ys):
            if math.isfinite(x) and math.isfinite(y):
                runs[-1].append(f"{f.px(x):.1f},{f.py(y):.1f}")
            elif runs[-1]:
                runs.append([])
        tip = f"<title>{_e(self.label)}</title>" if self.label else ""
        return "".join(f'<polyline class="line" points="{" ".join(r)}" fill="none" stroke="{self.colour}" '
                       f'stroke-width="{self.width:g}">{tip}</polyline>' for r in runs if r)  # fmt: skip


@dataclass(frozen=True)
class HBars:
    """Horizontal error bars from ``lows`` to ``highs`` at heights ``ys``."""

    lows: tuple[float, ...]
    highs: tuple[float, ...]
    ys: tuple[float, ...]
    colour: str = "#666666"

    def svg(self, f: Frame) -> str:
        """A bar with end ticks per finite interval."""
        return "".join(
            f'<path d="M{f.px(lo):.1f},{f.py(y):.1f}H{f.px(hi):.1f}M{f.px(lo):.1f},{f.py(y) - 3:.1f}v6M{f.px(hi):.1f},'
            f'{f.py(y) - 3:.1f}v6" stroke="{self.colour}" fill="none"/>'
            for lo, hi, y in zip(self.lows, self.highs, self.ys)
            if math.isfinite(lo) and math.isfinite(hi))  # fmt: skip


@dataclass(frozen=True)
class Label:
    """A text whose left-bottom corner is ``(dx, dy)`` pixels from the data point (x, y); ``box`` its estimated
    extent in panel pixels (left, top, right, bottom)."""

    x: float
    y: float
    text: str
    dx: float
    dy: float
    box: tuple[float, float, float, float]
    size: float = 9.0

    def svg(self, f: Frame) -> str:
        """The text at its offset from the point."""
        return (f'<text class="label" x="{f.px(self.x) + self.dx:.1f}" y="{f.py(self.y) + self.dy:.1f}" '
                f'font-size="{self.size:g}">{_e(self.text)}</text>')  # fmt: skip


@dataclass(frozen=True)
class Cells:
    """A heat map: ``colours[i][j]`` fills the cell of row i (top to bottom) and column j, ``texts`` printed in
    it; ``outline`` is the (row, column) drawn with a red frame."""

    colours: tuple[tuple[str, ...], ...]
    texts: tuple[tuple[str, ...], ...]
    tips: tuple[tuple[str, ...], ...]
    outline: tuple[int, int] | None = None

    def svg(self, f: Frame) -> str:
        """The cells filling the frame, their texts, and the outlined cell."""
        rows, cols = len(self.colours), len(self.colours[0]) if self.colours else 0
        cw, ch = f.w / max(cols, 1), f.h / max(rows, 1)
        out = []
        for i in range(rows):
            for j in range(cols):
                x, y, c = f.ox + j * cw, f.oy + i * ch, self.colours[i][j]
                out.append(f'<rect class="cell" x="{x:.1f}" y="{y:.1f}" width="{cw:.1f}" height="{ch:.1f}" fill="{c}">'
                           f"<title>{_e(self.tips[i][j])}</title></rect>")  # fmt: skip
                if self.texts[i][j]:
                    out.append(f'<text x="{x + cw / 2:.1f}" y="{y + ch / 2 + 3.5:.1f}" font-size="10" '
                               f'text-anchor="middle" fill="{"#ffffff" if is_dark(c) else "#000000"}">'
                               f"{_e(self.texts[i][j])}</text>")  # fmt: skip
        if self.outline is not None:
            i, j = self.outline
            out.append(f'<rect class="best" x="{f.ox + j * cw + 1:.1f}" y="{f.oy + i * ch + 1:.1f}" '
                       f'width="{cw - 2:.1f}" height="{ch - 2:.1f}" fill="none" stroke="#d00000" '
                       'stroke-width="2.5"/>')  # fmt: skip
        return "".join(out)


Mark = Points | Line | HBars | Label | Cells


@dataclass(frozen=True)
class Axis:
    """An axis: its data range, ticks (value, label) and title. ``categories`` axes put tick k at value k."""

    low: float
    high: float
    ticks: tuple[tuple[float, str], ...]
    title: str = ""
    grid: bool = True


@dataclass(frozen=True)
class Panel:
    """One chart: a title, two axes and the marks drawn in it."""

    title: str
    x: Axis
    y: Axis
    marks: tuple[Mark, ...]


@dataclass(frozen=True)
class Figure:
    """Panels laid out ``cols`` to a row, each ``width`` x ``height`` pixels of plotting area; an optional legend
    (label, colour) on the right and a colour bar (low, high, cmap, title) under the panels."""

    panels: tuple[Panel, ...]
    cols: int = 1
    width: float = 300.0
    height: float = 200.0
    legend: tuple[tuple[str, str], ...] = ()
    colourbar: tuple[float, float, str, str] | None = None
    left: float = 60.0  # room for the y tick labels and title
    bottom: float = 44.0
    top: float = 24.0
    right: float = 14.0
    notes: tuple[str, ...] = field(default=())

    def size(self) -> tuple[float, float]:
        """The whole picture's width and height in pixels."""
        rows = -(-len(self.panels) // self.cols)
        legend = (34 + CHAR * 10 * max(len(t) for t, _ in self.legend)) if self.legend else 0.0
        bar = 56.0 if self.colourbar else 0.0
        cell_w, cell_h = self.left + self.width + self.right, self.top + self.height + self.bottom
        return self.cols * cell_w + legend, max(rows * cell_h + bar, self.top + 14 * len(self.legend) + 8)

    def svg(self, alt: str = "") -> str:
        """The figure as an ``<svg>`` element (``alt`` as its accessible name)."""
        w, h = self.size()
        out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {w:.0f} {h:.0f}" '
               f'width="{w:.0f}" height="{h:.0f}" role="img" aria-label="{_e(alt)}" '
               'font-family="sans-serif">']  # fmt: skip
        cell_w, cell_h = self.left + self.width + self.right, self.top + self.height + self.bottom
        for k, p in enumerate(self.panels):
            ox, oy = (k % self.cols) * cell_w + self.left, (k // self.cols) * cell_h + self.top
            out.append(_panel_svg(p, ox, oy, self.width, self.height))
        if self.legend:
            lx = self.cols * cell_w + 8
            for k, (text, colour) in enumerate(self.legend):
                y = self.top + 10 + 14 * k
                out.append(f'<line x1="{lx:.1f}" y1="{y - 3:.1f}" x2="{lx + 14:.1f}" y2="{y - 3:.1f}" '
                           f'stroke="{colour}" stroke-width="2"/><text x="{lx + 18:.1f}" y="{y:.1f}" '
                           f'font-size="10">{_e(text)}</text>')  # fmt: skip
        if self.colourbar:
            out.append(_colourbar_svg(*self.colourbar, self.left, h - 46, self.width))
        out.append("</svg>")
        return "".join(out)

    def _repr_svg_(self) -> str:  # Jupyter shows the figure
        return self.svg()


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _scale(v: float, low: float, high: float, a: float, b: float) -> float:
    return a + (v - low) / ((high - low) or 1.0) * (b - a)


def _panel_svg(p: Panel, ox: float, oy: float, w: float, h: float) -> str:
    frame = Frame(ox, oy, w, h, (p.x.low, p.x.high), (p.y.low, p.y.high))
    px, py = frame.px, frame.py

    out = [f'<g class="panel" data-title="{_e(p.title)}">']
    out.append(f'<text x="{ox + w / 2:.1f}" y="{oy - 8:.1f}" font-size="12" text-anchor="middle" '
               f'class="title">{_e(p.title)}</text>')  # fmt: skip
    for v, text in p.x.ticks:
        x = px(v)
        if p.x.grid:
            out.append(f'<line x1="{x:.1f}" y1="{oy:.1f}" x2="{x:.1f}" y2="{oy + h:.1f}" stroke="#e5e5e5"/>')
        for k, part in enumerate(text.split("\n")):
            out.append(f'<text class="xtick" x="{x:.1f}" y="{oy + h + 14 + 12 * k:.1f}" font-size="{FONT:g}" '
                       f'text-anchor="middle">{_e(part)}</text>')  # fmt: skip
    for v, text in p.y.ticks:
        y = py(v)
        if p.y.grid:
            out.append(f'<line x1="{ox:.1f}" y1="{y:.1f}" x2="{ox + w:.1f}" y2="{y:.1f}" stroke="#e5e5e5"/>')
        out.append(f'<text class="ytick" x="{ox - 5:.1f}" y="{y + 4:.1f}" font-size="{FONT:g}" '
                   f'text-anchor="end">{_e(text)}</text>')  # fmt: skip
    out.append(f'<rect x="{ox:.1f}" y="{oy:.1f}" width="{w:.1f}" height="{h:.1f}" fill="none" stroke="#888"/>')
    lines = max(t.count("\n") for _, t in p.x.ticks) + 1 if p.x.ticks else 1
    out.append(f'<text class="xtitle" x="{ox + w / 2:.1f}" y="{oy + h + 16 + 12 * lines:.1f}" font-size="{FONT:g}" '
               f'text-anchor="middle">{_e(p.x.title)}</text>')  # fmt: skip
    out.append(f'<text class="ytitle" transform="translate({ox - 44:.1f},{oy + h / 2:.1f}) rotate(-90)" '
               f'font-size="{FONT:g}" text-anchor="middle">{_e(p.y.title)}</text>')  # fmt: skip
    for m in p.marks:
        out.append(m.svg(frame))
    out.append("</g>")
    return "".join(out)


def _marker(shape: str, x: float, y: float, r: float, colour: str) -> str:
    if shape == "square":
        return f'<rect x="{x - r:.1f}" y="{y - r:.1f}" width="{2 * r:.1f}" height="{2 * r:.1f}" fill="{colour}">'
    if shape in ("triangle", "diamond"):
        pts = ([(x, y - r * 1.2), (x + r * 1.1, y + r * 0.8), (x - r * 1.1, y + r * 0.8)] if shape == "triangle"
               else [(x, y - r * 1.3), (x + r, y), (x, y + r * 1.3), (x - r, y)])  # fmt: skip
        return f'<polygon points="{" ".join(f"{a:.1f},{b:.1f}" for a, b in pts)}" fill="{colour}">'
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:g}" fill="{colour}">'


def _close(opening: str) -> str:
    return "</" + opening[1:].split(" ", 1)[0] + ">"


def _colourbar_svg(low: float, high: float, cmap: str, title: str, x: float, y: float, w: float) -> str:
    n = 48
    out = [f'<g class="colourbar" data-low="{low:.6g}" data-high="{high:.6g}" data-cmap="{cmap}">']
    out += [f'<rect x="{x + k * w / n:.1f}" y="{y:.1f}" width="{w / n + 0.5:.1f}" height="10" '
            f'fill="{colour_at(cmap, (k + 0.5) / n)}"/>' for k in range(n)]  # fmt: skip
    for v in nice_ticks(low, high, 4):
        tx = x + _scale(v, low, high, 0, w)
        out.append(f'<text x="{tx:.1f}" y="{y + 22:.1f}" font-size="10" text-anchor="middle">{fmt_tick(v)}</text>')
    out.append(f'<text x="{x + w / 2:.1f}" y="{y + 36:.1f}" font-size="10" text-anchor="middle">{_e(title)}</text>')
    out.append("</g>")
    return "".join(out)


def categories(labels: Sequence[str], title: str = "") -> Axis:
    """A category axis: tick k at value k, labelled ``labels[k]``, no grid lines."""
    return Axis(-0.5, len(labels) - 0.5, tuple((float(k), s) for k, s in enumerate(labels)), title, grid=False)


def place_labels(
    xs: Sequence[float], ys: Sequence[float], labels: Sequence[str], x: Axis, y: Axis, w: float, h: float,
    size: float = 9.0,
) -> tuple[Label, ...]:  # fmt: skip
    """Label each point where its label overlaps no other label and no marker (greedy, in order, trying eight
    spots around the point), leaving out a label that fits nowhere inside the panel."""
    gap, text_h, r = 4.0, size * 1.2, 4.0
    pts = [(_scale(a, x.low, x.high, 0, w), _scale(b, y.low, y.high, h, 0)) for a, b in zip(xs, ys)]
    taken = [(px - r, py - r, px + r, py + r) for px, py in pts]
    out = []
    for (a, b), (px, py), text in zip(zip(xs, ys), pts, labels):
        width = CHAR * size * len(text)
        for dx, dy in ((gap, text_h / 2 - 2), (gap, -2 - gap), (gap, text_h + gap), (-gap - width, text_h / 2 - 2),
                       (-gap - width, -2 - gap), (-gap - width, text_h + gap), (-width / 2, -gap - 4),
                       (-width / 2, text_h + gap + 4)):  # fmt: skip
            box = (px + dx, py + dy - size, px + dx + width, py + dy + 0.2 * size)  # baseline at dy
            if box[0] < 0 or box[2] > w or box[1] < 0 or box[3] > h:
                continue
            if any(box[0] < q[2] and q[0] < box[2] and box[1] < q[3] and q[1] < box[3] for q in taken):
                continue
            taken.append(box)
            out.append(Label(a, b, text, dx, dy, box, size))
            break
    return tuple(out)
