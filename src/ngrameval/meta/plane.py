"""The evaluation-plane search (Soricut & Brill 2004, SPEC §2 and §5): how well every AEv(alpha, N) member
agrees with a human criterion at system level, all members from one counting pass.

The grid is kept as the paper lays it out (rows N = max .. 1, columns alpha ascending); the best cell is
the one with the highest coefficient (R^2 by default). Rendering: :mod:`ngrameval.report.plane`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

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
