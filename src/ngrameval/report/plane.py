"""The evaluation plane as text (the paper's layout) and as a heat map: SVG drawn directly, PNG/PDF by matplotlib
(optional)."""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path
from typing import Any

import numpy as np

from ngrameval.meta.plane import Plane
from ngrameval.report.svg import Axis, Cells, Figure, Panel, categories, colour_at
from ngrameval.report.table import table


def plane_text(p: Plane, width: int = 1) -> str:
    """The paper's layout: rows N (highest first), columns alpha, values x100 for R^2 and r; best cell in []."""
    head = ["N \\ alpha", *(f"{a:g}" for a in p.alphas)]
    rows = []
    for i, n in enumerate(p.orders):
        cells = []
        for j in range(len(p.alphas)):
            v = p.values[i, j]
            text = "n/a" if np.isnan(v) else f"{v * 100:.{width}f}"
            cells.append(f"[{text}]" if (n, p.alphas[j]) == (p.best_order, p.best_alpha) else text)
        rows.append([str(n), *cells])
    lines = table(head, rows, left=0, rule=False)
    return (
        f"{p.criterion}: {p.coefficient} (x100) of AEv(alpha, N) at system level, {p.n_systems} systems\n"
        + "\n".join(lines)
        + f"\nbest: alpha = {p.best_alpha:g}, N = {p.best_order} ({p.best_value * 100:.{width}f})\n  {p.signature}\n"
    )


# Fixed colour ranges, so that two planes of different data are compared by eye: R^2 on 0-1, the signed
# coefficients (r, rho, tau) on -1..1 with a diverging map centred on 0.
COLOUR_RANGES: dict[str, tuple[float, float, str]] = {
    "r2": (0.0, 1.0, "viridis"),
    "pearson": (-1.0, 1.0, "RdBu_r"),
    "spearman": (-1.0, 1.0, "RdBu_r"),
    "kendall-b": (-1.0, 1.0, "RdBu_r"),
    "kendall-c": (-1.0, 1.0, "RdBu_r"),
}


def figure_class() -> type[Any]:
    """matplotlib's ``Figure`` class (no pyplot: no backend switched, no global figure registry touched)."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        from ngrameval.errors import MissingDependencyError

        raise MissingDependencyError("matplotlib", "plot") from None
    return Figure


def colour_range(p: Plane, fixed: bool) -> tuple[float, float, str]:
    """(low, high, colour map) x100 of a plane's heat map: ``fixed`` the coefficient's whole range
    (:data:`COLOUR_RANGES`), else fitted to the defined values (a sequential map from their minimum to their
    maximum, so that 79.3-81.3 is not one flat colour; a constant plane gets +-0.5 around its value).

    >>> import numpy as np
    >>> colour_range(Plane("q", "r2", (0.0, 1.0), (1,), np.array([[0.793, 0.813]]), 1.0, 1, 0.813, 3, ""), False)
    (79.3, 81.3, 'viridis')
    """
    if fixed:
        low, high, cmap = COLOUR_RANGES.get(p.coefficient, (-1.0, 1.0, "RdBu_r"))
        return low * 100, high * 100, cmap
    ok = p.values[~np.isnan(p.values)] * 100
    if not len(ok):
        return 0.0, 1.0, "viridis"
    low, high = round(float(ok.min()), 10), round(float(ok.max()), 10)
    return (low, high, "viridis") if high > low else (low - 0.5, high + 0.5, "viridis")


def plane_figure(p: Plane, ax: Any = None, fixed: bool = False) -> Any:
    """The plane as a heat map: rows N, columns alpha, every cell's value x100 printed in it (white on dark
    cells), the best cell outlined in red. Colours fitted to the plane's values (:func:`colour_range`), or with
    ``fixed`` on the coefficient's whole range (R^2 0-1, r/rho/tau -1..1: planes of different data compared by
    eye). Draws into ``ax`` if given; returns the matplotlib Figure.
    """
    figure = figure_class()  # first: a missing matplotlib says how to install it
    from matplotlib.colors import Normalize
    from matplotlib.patches import Rectangle

    if ax is None:
        size = (1.2 + 0.62 * len(p.alphas), 1.4 + 0.5 * len(p.orders))
        ax = figure(figsize=size, layout="constrained").add_subplot()
    fig = ax.get_figure()
    low, high, cmap = colour_range(p, fixed)
    norm = Normalize(low, high)
    img = ax.imshow(p.values * 100, cmap=cmap, norm=norm, aspect="auto")
    colours = img.cmap(norm(p.values * 100))
    small = len(p.alphas) > 21
    for i in range(len(p.orders)):
        for j in range(len(p.alphas)):
            v = p.values[i, j]
            if small:
                continue  # too many columns to print every value legibly
            r, g, b = colours[i, j, :3]
            dark = 0.299 * r + 0.587 * g + 0.114 * b < 0.5
            text = "n/a" if np.isnan(v) else f"{v * 100:.1f}"
            ax.text(j, i, text, ha="center", va="center", fontsize=7, color="white" if dark else "black")
    ax.set_xticks(range(len(p.alphas)), [f"{a:g}" for a in p.alphas])
    ax.set_yticks(range(len(p.orders)), [str(n) for n in p.orders])
    ax.set_xlabel("alpha (0 = recall family, 1 = precision family)")
    ax.set_ylabel("N")
    i, j = p.orders.index(p.best_order), p.alphas.index(p.best_alpha)
    ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="red", linewidth=2.5))
    ax.set_title(f"{p.criterion}: {p.coefficient} x100 (best alpha={p.best_alpha:g}, N={p.best_order})", fontsize=9)
    scale = "fixed" if fixed else "fitted to the plane"
    fig.colorbar(img, ax=ax, label=f"{p.coefficient} x100 ({scale}: {low:.4g} to {high:.4g})")
    return fig


def plane_chart(p: Plane, fixed: bool = False) -> Figure:
    """The plane as a heat map: rows N, columns alpha, every cell's value x100 printed in it (white on dark
    cells; left out beyond 21 columns), the best cell outlined in red, a colour bar under it. Colours fitted to
    the plane's values, or with ``fixed`` on the coefficient's whole range (:func:`colour_range`)."""
    low, high, cmap = colour_range(p, fixed)
    v = p.values * 100
    t = (v - low) / ((high - low) or 1.0)
    colours = tuple(tuple(colour_at(cmap, float(c)) for c in row) for row in t)
    small = len(p.alphas) > 21
    texts = tuple(tuple("" if small else ("n/a" if np.isnan(c) else f"{c:.1f}") for c in row) for row in v)
    tips = tuple(tuple(f"alpha {a:g}, N {n}: " + ("n/a" if np.isnan(c) else f"{c:.2f}") for a, c in zip(p.alphas, row))
                 for n, row in zip(p.orders, v))  # fmt: skip
    best = (p.orders.index(p.best_order), p.alphas.index(p.best_alpha))
    xa = categories([f"{a:g}" for a in p.alphas], "alpha (0 = recall family, 1 = precision family)")
    rows = len(p.orders)
    ya = Axis(-0.5, rows - 0.5, tuple((float(rows - 1 - i), str(n)) for i, n in enumerate(p.orders)), "N", False)
    title = f"{p.criterion}: {p.coefficient} x100 (best alpha={p.best_alpha:g}, N={p.best_order})"
    scale = "fixed" if fixed else "fitted to the plane"
    bar = (low, high, cmap, f"{p.coefficient} x100 ({scale}: {low:.4g} to {high:.4g})")
    panel = Panel(title, xa, ya, (Cells(colours, texts, tips, best),))
    return Figure((panel,), width=max(300.0, 46.0 * len(p.alphas)), height=30.0 * rows + 10, colourbar=bar,
                  bottom=50)  # fmt: skip


def plot_plane(p: Plane, path: str) -> None:
    """Draw the plane into ``path`` (written whole, then renamed over the target): ``.svg`` by
    :func:`plane_chart` (no plotting library), ``.png``/``.pdf`` by matplotlib (:func:`plane_figure`)."""
    target = Path(path)
    tmp = target.with_name(f".{target.name}.tmp{target.suffix}")
    try:
        if target.suffix.lower() == ".svg":
            tmp.write_text(plane_chart(p).svg(f"{p.criterion}: {p.coefficient} of AEv(alpha, N)"), "utf-8")
        else:
            plane_figure(p).savefig(tmp)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def plane_csv(p: Plane) -> str:
    """The grid as CSV, one row per cell: criterion, coefficient, N, alpha, value (a fraction; empty when
    undefined), best (1 for the best cell).

    >>> import numpy as np
    >>> pl = Plane("q", "r2", (0.0, 1.0), (1,), np.array([[0.5, np.nan]]), 0.0, 1, 0.5, 3, "sig")
    >>> print(plane_csv(pl), end="")
    criterion,coefficient,N,alpha,value,best
    q,r2,1,0,0.5,1
    q,r2,1,1,,0
    """
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["criterion", "coefficient", "N", "alpha", "value", "best"])
    for i, n in enumerate(p.orders):
        for j, a in enumerate(p.alphas):
            v = p.values[i, j]
            best = int((n, a) == (p.best_order, p.best_alpha))
            w.writerow([p.criterion, p.coefficient, n, f"{a:g}", "" if np.isnan(v) else repr(float(v)), best])
    return out.getvalue()
