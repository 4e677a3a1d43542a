"""Side-by-side (pairwise) studies: the ``[pairwise]`` settings of a ``kind = "pairwise"`` study and its balanced
pair schedule. Pure functions; randomness is a ``numpy.random.Generator`` argument.

A judge compares, for one item, the outputs of two systems shown side by side (A on the left, B on the right)
and answers "A better", "B better" or (when allowed) "tie". The schedule follows the Latin-square rotation of
:func:`ngrameval.collect.design.latin_square` with the ``P = n(n-1)/2`` system pairs in place of the systems:
judge ``j`` sees item ``i`` with pair ``(i + j) mod P``. So every judge sees every item at most once and every
pair ``floor(I/P)`` or ``ceil(I/P)`` times (equally often when ``P`` divides the ``I`` items), and the judges
``j, j+1, ..., j+P-1`` together see every pair of every item once: an item's pairs are spread over judges.
Sides are balanced per judge and pair (each pair's trials alternate which system is on the left, starting at a
random side) and the trial order is random.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from ngrameval.errors import InputError

CHOICES = ("left", "right", "tie")  # what the page sends: A (left) better, B (right) better, tie
REASONS = ("off", "optional", "required")


@dataclass(frozen=True)
class PairwiseSettings:
    """``[pairwise]``: ``ties`` allows the "tie" answer; ``reason`` asks for a free-text reason (off, optional,
    required) of at most ``reason_length`` characters; ``trials`` per judge (0: one per item)."""

    ties: bool = True
    reason: str = "optional"
    reason_length: int = 300
    trials: int = 0
    question: str = "Which output is better?"


def read_settings(table: dict[str, Any], where: str) -> PairwiseSettings:
    """The ``[pairwise]`` table of a study file; errors name the key."""
    known = {"ties", "reason", "reason_length", "trials", "question"}
    extra = sorted(set(table) - known)
    if extra:
        raise InputError(f"{where}: unknown key(s) {', '.join(extra)}; expected {', '.join(sorted(known))}")
    d = PairwiseSettings()
    types: dict[str, type] = {"ties": bool, "reason": str, "reason_length": int, "trials": int, "question": str}
    values = {k: table.get(k, getattr(d, k)) for k in known}
    for k, v in values.items():
        if not isinstance(v, types[k]) or (types[k] is int and isinstance(v, bool)):
            raise InputError(f"{where}: key {k!r} must be {types[k].__name__}, got {v!r}")
    if values["reason"] not in REASONS:
        raise InputError(f"{where}: key 'reason' must be one of {', '.join(REASONS)}, got {values['reason']!r}")
    if not 1 <= values["reason_length"] <= 2000:
        raise InputError(f"{where}: key 'reason_length' must be 1..2000 characters, got {values['reason_length']}")
    if values["trials"] < 0:
        raise InputError(f"{where}: key 'trials' must be 0 (one per item) or more, got {values['trials']}")
    if not 1 <= len(values["question"].strip()) <= 200:
        raise InputError(f"{where}: key 'question' must be 1..200 characters")
    return PairwiseSettings(**values)


@dataclass(frozen=True)
class PairTrial:
    """One comparison: ``item`` with systems ``system_a`` and ``system_b`` (in the study's system order);
    ``left`` is ``a`` or ``b``: which of them the page shows on the left (as "A")."""

    item: str
    system_a: str
    system_b: str
    left: str


def system_pairs(systems: Sequence[str]) -> list[tuple[str, str]]:
    """Every unordered pair of ``systems`` (in their order), as ``itertools.combinations``."""
    return list(combinations(systems, 2))


def pair_schedule(
    items: Sequence[str], systems: Sequence[str], judge: int, rng: np.random.Generator, trials: int = 0
) -> list[PairTrial]:
    """The comparisons of judge number ``judge`` (0, 1, ...), as the module docstring says: item ``i`` with pair
    ``(i + judge) mod P``. ``trials`` (0: one per item) more than the ``I`` items go round the items again: trial
    ``t`` is item ``t mod I`` with pair ``(t + judge + floor(t / L)) mod P``, ``L = lcm(I, P)``; within a block of
    ``L`` trials no (item, pair) comes twice and every pair comes ``L / P`` times, and the shift from block to
    block gives an item new pairs. Sides alternate within each pair from a random start."""
    pairs = system_pairs(systems)
    if not pairs or not items:
        raise ValueError("a pair schedule needs at least one item and two systems")
    n, block = trials or len(items), math.lcm(len(items), len(pairs))
    chosen = [(items[t % len(items)], pairs[(t + judge + t // block) % len(pairs)]) for t in range(n)]
    start = rng.integers(0, 2, size=len(pairs))
    seen = [0] * len(pairs)
    out = []
    for item, pair in chosen:
        k = pairs.index(pair)
        left = "a" if (start[k] + seen[k]) % 2 == 0 else "b"
        seen[k] += 1
        out.append(PairTrial(item, pair[0], pair[1], left))
    return [out[k] for k in rng.permutation(len(out)).tolist()]


def winner_of(choice: str, left: str) -> str:
    """The winner in system terms (``a``, ``b``, ``tie``) of a page answer ``choice`` (left, right, tie) when
    system ``left`` was shown on the left."""
    if choice == "tie":
        return "tie"
    right = "b" if left == "a" else "a"
    return left if choice == "left" else right
