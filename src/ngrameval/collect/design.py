"""Assignment designs for rating studies: Latin squares with a balanced (Williams) order, as Belz & Reiter
(2006, §3) ran their experiments — each judge rates every item once and sees every system equally often — and
the control trials of WMT's Direct Assessment (Graham et al. 2013): exact repeats and degraded "bad reference"
copies. Pure functions; randomness is a ``numpy.random.Generator`` argument."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np


def williams_rows(n: int) -> list[list[int]]:
    """Rows of a Williams design for ``n`` treatments: each row is an order of 0..n-1, each treatment is in
    each position equally often and (for even ``n``; for odd ``n`` over the 2n rows) each treatment
    follows every other exactly as often (carry-over balance).

    >>> williams_rows(4)
    [[0, 1, 3, 2], [1, 2, 0, 3], [2, 3, 1, 0], [3, 0, 2, 1]]
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    first, lo, hi = [0], 1, n - 1
    while len(first) < n:
        first.append(lo)
        lo += 1
        if len(first) < n:
            first.append(hi)
            hi -= 1
    rows = [[(t + r) % n for t in first] for r in range(n)]
    if n % 2:
        rows += [row[::-1] for row in rows]
    return rows


@dataclass(frozen=True)
class Trial:
    """One thing a judge rates: ``kind`` is ``normal``, ``repeat`` (an exact copy of trial ``of``),
    ``bad`` (a degraded copy of trial ``of``) or ``known`` (an item with a known answer)."""

    item: str
    system: str
    kind: str = "normal"
    of: int | None = None  # the position of the original trial, for repeat and bad
    output: str | None = None  # a degraded output (kind bad); None: the item's own output


def latin_square(items: Sequence[str], systems: Sequence[str], judge: int, rng: np.random.Generator) -> list[Trial]:
    """The trials of judge number ``judge`` (0, 1, ...): item ``i`` is shown with system ``(i + judge) mod n``,
    so every judge sees every item once and, when ``n`` divides the number of items, every system equally
    often; judges ``judge`` and ``judge + n`` see the same pairs. Items go in blocks of ``n`` (one of each
    system); blocks come in a random order and the systems inside a block in the judge's Williams row order."""
    n = len(systems)
    if n == 0 or not items:
        raise ValueError("a Latin square needs at least one item and one system")
    rows = williams_rows(n)
    order = rows[judge % len(rows)]
    blocks = [list(range(b, min(b + n, len(items)))) for b in range(0, len(items), n)]
    out: list[Trial] = []
    for b in rng.permutation(len(blocks)).tolist():
        pairs = {(i + judge) % n: i for i in blocks[b]}
        out += [Trial(items[pairs[s]], systems[s]) for s in order if s in pairs]
    return out


def degrade_span(n_words: int) -> int:
    """Words replaced in a bad reference of ``n_words`` words (WMT DA's rule): 1 -> 1, 2-5 -> 2, 6-8 -> 3,
    9-15 -> 4, 16-20 -> 5, longer -> floor(n / 4)."""
    for top, k in ((1, 1), (5, 2), (8, 3), (15, 4), (20, 5)):
        if n_words <= top:
            return k if n_words else 0
    return n_words // 4


def degrade(text: str, donors: Sequence[str], rng: np.random.Generator, tries: int = 20) -> str:
    """``text`` with a random span of :func:`degrade_span` words replaced by a span as long taken from one of
    ``donors`` (other outputs of the study); a donor too short gives its words cycled. A replacement that
    leaves the text as it was (a donor span equal to the replaced one) is drawn again, up to ``tries`` times,
    and then the span is deleted: a bad reference always differs from its original."""
    words = text.split()
    k = degrade_span(len(words))
    pool = [d.split() for d in donors if d.split() and d != text] or [["xxx"]]
    for _ in range(tries):
        donor = pool[int(rng.integers(len(pool)))]
        start = int(rng.integers(len(words) - k + 1)) if words else 0
        dstart = int(rng.integers(max(1, len(donor) - k + 1)))
        span = [donor[(dstart + j) % len(donor)] for j in range(k)]
        if span != words[start : start + k]:
            return " ".join([*words[:start], *span, *words[start + k :]])
    return " ".join([*words[:start], *words[start + k :]]) if words else "xxx"


@dataclass(frozen=True)
class Controls:
    """The control trials of a judge's batches, as WMT's Direct Assessment and Appraise lay them out (Graham et
    al. 2013, 2017; Appraise's HITs of 100 items): ``repeats`` exact repeats and ``bad`` degraded "bad reference"
    copies per batch of at most ``batch_size`` trials. Each is a count per batch (an ``int``) or a share of each
    batch's trials (a ``float`` in [0, 1)); WMT's ~10 % of each is ``Controls(100, 0.1, 0.1)``."""

    batch_size: int = 100
    repeats: int | float = 0
    bad: int | float = 0


def control_count(share: int | float, total: float) -> int:
    """A count as given, or a share of ``total`` trials rounded half up."""
    return share if isinstance(share, int) else int(share * total + 0.5)


def batch_plan(n: int, controls: Controls) -> list[tuple[int, int, int]]:
    """(normal trials, repeats, bad references) of each batch of a judge with ``n`` normal trials.

    A full batch holds ``m = batch_size - repeats - bad`` normal trials (controls of a full batch); the ``n``
    trials go into ``ceil(n / m)`` batches of as equal sizes as can be. A batch of ``k`` normal trials gets the
    counts as given and, for a share ``f``, ``round(f t)`` controls with ``t = (k + counts) / (1 - shares)`` its
    total size; controls copy distinct trials, bad references first, so a batch never has more controls than
    normal trials.

    >>> batch_plan(200, Controls(100, 0.1, 0.1))
    [(67, 8, 8), (67, 8, 8), (66, 8, 8)]
    >>> batch_plan(6, Controls(100, 1, 5))
    [(6, 1, 5)]
    """
    if n == 0:
        return []
    full = controls.batch_size
    m = full - control_count(controls.repeats, full) - control_count(controls.bad, full)
    if m < 1:
        raise ValueError(f"controls fill the whole batch of {full} trials")
    k = -(-n // m)
    shares = sum(x for x in (controls.repeats, controls.bad) if not isinstance(x, int))
    counts = sum(x for x in (controls.repeats, controls.bad) if isinstance(x, int))
    out = []
    for size in (n // k + (i < n % k) for i in range(k)):
        total = (size + counts) / (1 - shares)
        bad = min(size, control_count(controls.bad, total))
        out.append((size, min(size - bad, control_count(controls.repeats, total)), bad))
    return out


def controls_for(
    trials: Sequence[Trial],
    outputs: Mapping[tuple[str, str], str],
    controls: Controls,
    rng: np.random.Generator,
    known: Sequence[Trial] = (),
) -> list[Trial]:
    """A judge's ``trials`` in batches (:func:`batch_plan`) with their controls, and the ``known`` trials spread
    over the batches. In each batch the normal trials keep their order; each control copies a distinct normal
    trial of its batch, taken from the batch's first half where there are enough, and comes at a random place
    after it and after the middle of the batch (Appraise puts a control half a batch after its original), so
    a judge rarely sees a copy next to its original. The normal trials are the objects of ``trials``; a
    control's ``of`` is its original's index in ``trials``; a bad reference is ``outputs[item, system]``
    degraded (:func:`degrade`, the other outputs as donors)."""
    plan = batch_plan(len(trials), controls)
    donors = list(outputs.values())
    known_at = rng.permutation(len(known)) % max(1, len(plan))
    out: list[Trial] = []
    start = 0
    for b, (size, n_rep, n_bad) in enumerate(plan):
        keyed: list[tuple[float, int, Trial]] = [(float(j), 0, trials[start + j]) for j in range(size)]
        pool = (size + 1) // 2 if n_rep + n_bad <= (size + 1) // 2 else size
        for c, j in enumerate(rng.permutation(pool)[: n_rep + n_bad].tolist()):
            t = trials[start + j]
            if c < n_bad:
                ctl = Trial(t.item, t.system, "bad", start + j, degrade(outputs[t.item, t.system], donors, rng))
            else:
                ctl = Trial(t.item, t.system, "repeat", start + j)
            keyed.append((float(rng.uniform(max(j, (size - 1) / 2), size)), 1, ctl))
        for i in np.flatnonzero(known_at == b).tolist():
            keyed.append((float(rng.uniform(0, size)), 1, known[i]))
        out += [t for _, _, t in sorted(keyed, key=lambda x: (x[0], x[1]))]
        start += size
    return out
