"""The evaluation-plane search (Soricut & Brill 2004, SPEC §2 and §5): how well every AEv(alpha, N) member
agrees with a human criterion at system level, all members from one counting pass.

The grid is printed as the paper lays it out (rows N = max .. 1, columns alpha ascending); the best cell is
the one with the highest coefficient (R^2 by default).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ngrameval.api import RefsLike, segment_major
from ngrameval.errors import ConfigError, InputError
from ngrameval.meta.correlate import HumanScores, coefficient
from ngrameval.meta.resample import FloatArray
from ngrameval.metrics.aev import AEv
from ngrameval.ngrams.count import References, overlap_stats
from ngrameval.ngrams.stats import Stats
from ngrameval.text.pipeline import Preprocess

DEFAULT_ALPHAS = tuple(round(a / 10, 1) for a in range(11))
DEFAULT_ORDERS = (1, 2, 3, 4)


@dataclass(frozen=True)
class Plane:
    """``values[i, j]``: the coefficient of AEv(alphas[j], orders[i]) against ``criterion``."""

    criterion: str
    coefficient: str
    alphas: tuple[float, ...]
    orders: tuple[int, ...]
    values: FloatArray
    best_alpha: float
    best_order: int
    best_value: float
    n_systems: int
    signature: str


def plane(
    systems: Mapping[str, Sequence[str]],
    refs: RefsLike,
    human: HumanScores,
    *,
    pre: Preprocess | None = None,
    alphas: Sequence[float] = DEFAULT_ALPHAS,
    orders: Sequence[int] = DEFAULT_ORDERS,
    coefficient_name: str = "r2",
    brevity: float = 1.0,
    wordiness: float = 2.0,
) -> Plane:
    """System-level ``coefficient_name`` of every AEv(alpha, N) against ``human`` (systems matched by name).

    >>> import numpy as np
    >>> h = HumanScores("q", ("a", "b", "c"), np.array([1.0, 2.0, 3.0]), None, 3, 0)
    >>> outs = {"a": ["x"], "b": ["x y"], "c": ["x y z"]}
    >>> p = plane(outs, ["x y z w"], h, alphas=(0.0, 1.0), orders=(1,))
    >>> p.best_alpha, p.best_order, round(p.best_value, 3)
    (0.0, 1, 1.0)
    """
    pre = pre or Preprocess()
    if not alphas or not orders or min(orders) < 1 or any(not 0 <= a <= 1 for a in alphas):
        raise ConfigError(f"need alphas in [0, 1] and orders >= 1; got {list(alphas)} and {list(orders)}")
    names = list(human.systems)
    missing = [s for s in names if s not in systems]
    if missing:
        raise InputError(f"no output for judged system(s) {', '.join(missing)}")
    keep = ~np.isnan(human.system)
    built = References.build(segment_major(refs), pre)
    stats = overlap_stats([systems[s] for s in names], built, max_order=max(orders))
    totals = Stats(np.stack([s.total().values for s in stats]), max(orders))
    values = np.empty((len(orders), len(alphas)))
    for i, n in enumerate(sorted(orders, reverse=True)):
        for j, a in enumerate(alphas):
            x = AEv(alpha=a, n=n, brevity=brevity, wordiness=wordiness)(totals)
            values[i, j] = coefficient(x[keep], human.system[keep], coefficient_name)[0]
    if np.all(np.isnan(values)):
        raise InputError(f"{human.criterion}: the {coefficient_name} is undefined in every cell (constant scores?)")
    best_i, best_j = (int(k) for k in np.unravel_index(np.nanargmax(values), values.shape))
    order_rows = tuple(sorted(orders, reverse=True))
    sig = f"AEv-plane|{pre.signature()}|B:{brevity:g}|W:{wordiness:g}|coef:{coefficient_name}"
    return Plane(
        human.criterion,
        coefficient_name,
        tuple(alphas),
        order_rows,
        values,
        float(alphas[best_j]),
        int(order_rows[best_i]),
        float(values[best_i, best_j]),
        int(keep.sum()),
        sig,
    )


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
    widths = [max(len(r[k]) for r in [head, *rows]) for k in range(len(head))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in [head, *rows]]
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
