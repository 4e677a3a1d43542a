"""The evaluation plane as text (the paper's layout) and as a heat-map image (matplotlib, optional)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ngrameval.meta.plane import Plane
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


def plot_plane(p: Plane, path: str) -> None:
    """Draw the plane as a heat map (rows N, columns alpha, best cell outlined) into ``path`` (png, svg, pdf)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Rectangle
    except ImportError:
        from ngrameval.errors import MissingDependencyError

        raise MissingDependencyError("matplotlib", "plot") from None
    fig, ax = plt.subplots(figsize=(1.0 + 0.6 * len(p.alphas), 1.2 + 0.6 * len(p.orders)))
    img = ax.imshow(p.values * 100, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(p.alphas)), [f"{a:g}" for a in p.alphas])
    ax.set_yticks(range(len(p.orders)), [str(n) for n in p.orders])
    ax.set_xlabel("alpha (0 = recall family, 1 = precision family)")
    ax.set_ylabel("N")
    i, j = p.orders.index(p.best_order), p.alphas.index(p.best_alpha)
    ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="red", linewidth=2))
    ax.set_title(f"{p.criterion}: {p.coefficient} x100 (best alpha={p.best_alpha:g}, N={p.best_order})")
    fig.colorbar(img, ax=ax)
    fig.tight_layout()
    target = Path(path)
    tmp = target.with_name(f".{target.name}.tmp{target.suffix}")  # written whole, then renamed over the target
    try:
        fig.savefig(tmp)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
        plt.close(fig)
