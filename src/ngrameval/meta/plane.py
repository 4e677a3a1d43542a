"""The evaluation-plane search (Soricut & Brill 2004, SPEC §2 and §5): how well every AEv(alpha, N) member
agrees with a human criterion at system level, all members from one counting pass.

The grid is kept as the paper lays it out (rows N = max .. 1, columns alpha ascending); the best cell is
the one with the highest coefficient (R^2 by default). Rendering: :mod:`ngrameval.report.plane`.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ngrameval import progress as _progress
from ngrameval.api import RefsLike, segment_major
from ngrameval.errors import ConfigError, InputError
from ngrameval.io.tables import html_table, to_pandas
from ngrameval.jobs import resolve_jobs, segment_chunks, thread_map
from ngrameval.meta.correlate import HumanScores, coefficient
from ngrameval.meta.resample import FloatArray
from ngrameval.metrics.aev import AEv
from ngrameval.ngrams.count import References, overlap_stats
from ngrameval.ngrams.stats import Stats
from ngrameval.text import validate
from ngrameval.text.pipeline import Preprocess
from ngrameval.text.validate import MAX_ORDER, integer, number

DEFAULT_ALPHAS = tuple(round(a / 10, 1) for a in range(11))
DEFAULT_ORDERS = (1, 2, 3, 4)
MAX_ALPHAS = 1001  # alpha columns of one plane: a step of 0.001 (the grid is at most 1,001 x 100 cells)
UNITS = ("word", "char")  # what a plane's n-grams are made of (``--unit``)


def unit_text(unit: str, pre: Preprocess) -> Preprocess:
    """The text setting of a plane over ``unit``: ``word`` keeps ``pre`` (n-grams of its tokenizer's tokens);
    ``char`` is the character plane, ``pre`` with the ``char`` tokenizer: every character a token, whitespace
    removed as chrF removes it (sacreBLEU's default ``whitespace=False``), ``pre.lowercase`` (chrF ``-lc``) and
    ``pre.normalize`` kept. The same as ``-tok char``; a character plane takes no other tokenizer, stop words or
    stemming.

    >>> unit_text("char", Preprocess(lowercase=True)).signature()
    'tok:char|case:lc|stop:no|stem:no'
    """
    if unit not in UNITS:
        raise ConfigError(f"unit must be one of {', '.join(UNITS)}, got {unit!r}")
    if unit == "word":
        return pre
    if pre.tokenize not in ("13a", "char") or pre.stopwords is not None or pre.stem:
        raise ConfigError(
            "a character plane (unit char) reads characters: leave the tokenizer at its default and give no "
            f"stop words or stemming (got {pre.signature()})"
        )
    return Preprocess("char", pre.lowercase, normalize=pre.normalize)


def alpha_grid(alpha_step: float) -> tuple[float, ...]:
    """The alphas 0, step, 2 step, ..., 1: ``alpha_step`` a finite number in [0.001, 1] with 1/step whole to 1e-9
    (0.1, 0.05, 0.001 ...), so the grid ends at exactly 1; at most MAX_ALPHAS columns.

    >>> alpha_grid(0.25)
    (0.0, 0.25, 0.5, 0.75, 1.0)
    """
    step = number(alpha_step, "alpha_step", 1.0 / (MAX_ALPHAS - 1), 1.0)
    n = round(1.0 / step)
    if abs(n * step - 1.0) > 1e-9:
        raise ConfigError(f"alpha_step must divide 1 (0.1, 0.05, 0.001 ...), got {step:g}")
    return tuple(round(i / n, 10) for i in range(n + 1))


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

    def __repr__(self) -> str:
        return (f"Plane({self.criterion!r}, {self.coefficient}, {len(self.alphas)} alphas x {len(self.orders)} orders, "
                f"best alpha={self.best_alpha:g} N={self.best_order}: {self.best_value:.4g})")  # fmt: skip

    def to_pandas(self) -> Any:
        """The grid: one row per N (as printed, highest first), one column per alpha."""
        rows = sorted(range(len(self.orders)), key=lambda i: -self.orders[i])
        return to_pandas(
            [{"N": self.orders[i], **dict(zip(self.alphas, self.values[i].tolist(), strict=True))} for i in rows], "N"
        )

    def _repr_html_(self) -> str:
        rows = [[f"N = {self.orders[i]}", *self.values[i].tolist()]
                for i in sorted(range(len(self.orders)), key=lambda i: -self.orders[i])]  # fmt: skip
        caption = (f"{self.criterion}: {self.coefficient} of AEv(alpha, N), {self.n_systems} systems; best alpha = "
                   f"{self.best_alpha:g}, N = {self.best_order} ({self.best_value:.4g})")  # fmt: skip
        return html_table(["N \\ alpha", *(f"{a:g}" for a in self.alphas)], rows, caption, 4)


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
    unit: str = "word",
    jobs: int | None = 1,
) -> Plane:
    """System-level ``coefficient_name`` of every AEv(alpha, N) against ``human`` (systems matched by name);
    ``unit`` ``"char"``: the character plane (n-grams of characters, see :func:`unit_text`; chrF's relation to
    it: :mod:`ngrameval.metrics.chrf`); ``jobs``: counting threads (``None``: every core), the same plane.

    >>> import numpy as np
    >>> h = HumanScores("q", ("a", "b", "c"), np.array([1.0, 2.0, 3.0]), None, 3, 0)
    >>> outs = {"a": ["x"], "b": ["x y"], "c": ["x y z"]}
    >>> p = plane(outs, ["x y z w"], h, alphas=(0.0, 1.0), orders=(1,))
    >>> p.best_alpha, p.best_order, round(p.best_value, 3)
    (0.0, 1, 1.0)
    """
    (one,) = planes(systems, refs, [(human, coefficient_name)], pre=pre, alphas=alphas, orders=orders,
                    brevity=brevity, wordiness=wordiness, unit=unit, jobs=jobs)  # fmt: skip
    return one


def planes(
    systems: Mapping[str, Sequence[str]],
    refs: RefsLike,
    cells: Sequence[tuple[HumanScores, str]],
    *,
    pre: Preprocess | None = None,
    alphas: Sequence[float] = DEFAULT_ALPHAS,
    orders: Sequence[int] = DEFAULT_ORDERS,
    brevity: float = 1.0,
    wordiness: float = 2.0,
    unit: str = "word",
    jobs: int | None = 1,
) -> list[Plane]:
    """:func:`plane` for each (human scores, coefficient) of ``cells``, from one count of the systems any of
    them judges (several criteria and coefficients cost one counting pass)."""
    pre = unit_text(unit, pre or Preprocess())
    alphas, orders = checked_grid(alphas, orders, brevity, wordiness)
    systems = validate.systems(systems)
    judged = list(dict.fromkeys(s for human, _ in cells for s in human.systems))
    missing = [s for s in judged if s not in systems]
    if missing:
        raise InputError(f"no output for judged system(s) {', '.join(missing)}")
    totals = corpus_totals([systems[s] for s in judged], refs, pre, max(orders), jobs)
    return planes_of_totals(totals, judged, cells, pre, alphas, orders, brevity, wordiness)


def planes_of_totals(
    totals: Stats,
    names: Sequence[str],
    cells: Sequence[tuple[HumanScores, str]],
    pre: Preprocess,
    alphas: tuple[float, ...],
    orders: tuple[int, ...],
    brevity: float,
    wordiness: float,
) -> list[Plane]:
    """:func:`planes` from the corpus totals of the systems ``names`` (one row each, order ``max(orders)`` or
    higher: counted here, or kept in a stats file) and the checked grid (:func:`checked_grid`)."""
    row = {s: k for k, s in enumerate(names)}
    missing = [s for human, _ in cells for s in human.systems if s not in row]
    if missing:
        raise InputError(f"no output for judged system(s) {', '.join(dict.fromkeys(missing))}")
    out = []
    for human, coef in cells:  # each in the judgments' order
        mine = Stats(totals.values[[row[s] for s in human.systems]], totals.max_order, totals.has_info)
        out.append(plane_of_totals(mine, human, pre, alphas, orders, coef, brevity, wordiness))
    return out


def checked_grid(
    alphas: Sequence[float], orders: Sequence[int], brevity: float, wordiness: float
) -> tuple[tuple[float, ...], tuple[int, ...]]:
    """The plane's alphas (in [0, 1]) and distinct orders (1 .. MAX_ORDER), B and W checked (ConfigError)."""
    alphas = tuple(number(a, f"alphas[{k}]", 0.0, 1.0) for k, a in enumerate(alphas))
    orders = tuple(integer(n, f"orders[{k}]", 1, MAX_ORDER) for k, n in enumerate(orders))
    if not 1 <= len(alphas) <= MAX_ALPHAS or not orders:
        raise ConfigError(f"the plane needs 1 to {MAX_ALPHAS} alphas and at least one order, got {len(alphas)} alphas")
    if len(set(orders)) != len(orders):
        raise ConfigError(f"orders must be distinct, got {list(orders)}")
    AEv(brevity=brevity, wordiness=wordiness)  # checks B (finite, > 0) and W (> 0, inf: no penalty)
    return alphas, orders


def corpus_totals(
    outputs: Sequence[Sequence[str]], refs: RefsLike, pre: Preprocess, max_order: int, jobs: int | None = 1
) -> Stats:
    """The summed n-gram statistics (orders 1 .. ``max_order``) of each output list, one row each. The columns
    AEv reads (lengths against the closest reference, n-gram matches and totals) are integer counts, so the
    totals of consecutive pieces of a corpus (chunks of segments on ``jobs`` threads, or Dask partitions) add
    up to the totals of the whole exactly."""
    seg_refs = segment_major(validate.references(refs, "refs"))
    n_jobs = resolve_jobs(jobs)
    # chunks of segments: one per thread's share (and ten at least while a bar shows; the counts are the same)
    chunks = segment_chunks(len(seg_refs), n_jobs) if n_jobs > 1 else [range(len(seg_refs))]
    if _progress.enabled() and len(chunks) < 10 and len(seg_refs) >= 10:
        chunks = [range(a, b) for a, b in itertools.pairwise(np.linspace(0, len(seg_refs), 11).astype(int).tolist())]

    def chunk(ch: range) -> FloatArray:
        built = References.build(seg_refs[ch.start : ch.stop], pre)
        stats = overlap_stats([o[ch.start : ch.stop] for o in outputs], built, max_order=max_order)
        advance(len(ch))
        return np.stack([s.total().values for s in stats])

    with _progress.task("counting", len(seg_refs), "seg") as advance:
        parts = thread_map(chunk, chunks, n_jobs)
    return Stats(np.sum(parts, axis=0), max_order)


def plane_of_totals(
    totals: Stats,
    human: HumanScores,
    pre: Preprocess,
    alphas: tuple[float, ...],
    orders: tuple[int, ...],
    coefficient_name: str,
    brevity: float,
    wordiness: float,
) -> Plane:
    """The plane of :func:`plane` from the corpus totals of the judged systems (``human.systems`` order) and
    the checked grid (:func:`checked_grid`); ``pre`` names the text setting in the signature."""
    keep = ~np.isnan(human.system)
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
