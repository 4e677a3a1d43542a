"""Assignment designs for rating studies: Latin squares with a balanced (Williams) order, as Belz & Reiter
(2006, §3) ran their experiments — each judge rates every item once and sees every system equally often — and
the control trials of WMT's Direct Assessment (Graham et al. 2013): exact repeats and degraded "bad reference"
copies. Pure functions; randomness is a ``numpy.random.Generator`` argument."""

from __future__ import annotations

from collections.abc import Sequence
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


def degrade(text: str, donors: Sequence[str], rng: np.random.Generator) -> str:
    """``text`` with a random span of :func:`degrade_span` words replaced by a span as long taken from one of
    ``donors`` (other outputs of the study); a donor too short gives its words cycled."""
    words = text.split()
    k = degrade_span(len(words))
    pool = [d.split() for d in donors if d.split() and d != text] or [["xxx"]]
    donor = pool[int(rng.integers(len(pool)))]
    start = int(rng.integers(len(words) - k + 1)) if words else 0
    dstart = int(rng.integers(max(1, len(donor) - k + 1)))
    span = [donor[(dstart + j) % len(donor)] for j in range(k)]
    return " ".join([*words[:start], *span, *words[start + k :]])


def with_controls(
    trials: Sequence[Trial],
    outputs: dict[tuple[str, str], str],
    repeats: int,
    bad: int,
    rng: np.random.Generator,
    known: Sequence[Trial] = (),
) -> list[Trial]:
    """``trials`` with ``repeats`` exact repeats and ``bad`` degraded copies of distinct normal trials, each
    inserted at a random place after its original, and the ``known`` trials at random places."""
    out = list(trials)
    n = len(out)
    picks = rng.permutation(n)[: min(n, repeats + bad)].tolist()
    donors = list(outputs.values())
    extra: list[Trial] = []
    for j, pos in enumerate(picks):
        t = out[pos]
        if j < repeats:
            extra.append(Trial(t.item, t.system, "repeat", pos))
        else:
            extra.append(Trial(t.item, t.system, "bad", pos, degrade(outputs[t.item, t.system], donors, rng)))
    extra += list(known)
    for t in extra:
        lo = 0 if t.of is None else out.index(trials[t.of]) + 1
        out.insert(int(rng.integers(lo, len(out) + 1)), t)
    return out
