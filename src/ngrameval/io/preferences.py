"""Side-by-side preferences read strictly from CSV, TSV or JSONL (as :mod:`ngrameval.io.judgments` reads files):
one row per comparison with columns ``item``, ``system_a``, ``system_b`` and ``winner`` in ``a``, ``b``, ``tie``
(case-insensitive). Every error names the file and the line."""

from __future__ import annotations

from dataclasses import dataclass

from ngrameval.errors import InputError
from ngrameval.io.records import records

COLUMNS = ("item", "system_a", "system_b", "winner")
WINNERS = ("a", "b", "tie")


@dataclass(frozen=True)
class Preference:
    """One comparison of ``system_a`` and ``system_b`` on ``item``; ``winner`` is ``a``, ``b`` or ``tie``."""

    item: str
    system_a: str
    system_b: str
    winner: str
    line: int = 0
    path: str = ""


def read_preferences(path: str) -> list[Preference]:
    """Every comparison of a preferences file (see the module docstring)."""
    out = []
    for line, rec in records(path):
        missing = [c for c in COLUMNS if c not in rec]
        if missing:
            raise InputError(f"{path}:{line}: missing column(s) {', '.join(missing)}; expected {', '.join(COLUMNS)}")
        item, a, b, winner = (str(rec[c]).strip() if rec[c] is not None else "" for c in COLUMNS)
        if not a or not b:
            raise InputError(f"{path}:{line}: system_a and system_b must be non-empty")
        if a == b:
            raise InputError(f"{path}:{line}: a system compared with itself ({a!r})")
        if winner.lower() not in WINNERS:
            raise InputError(f"{path}:{line}: column 'winner' must be a, b or tie, got {winner!r}")
        out.append(Preference(item, a, b, winner.lower(), line, path))
    if not out:
        raise InputError(f"{path}: no comparison found")
    return out
