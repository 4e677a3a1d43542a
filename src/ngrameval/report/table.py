"""Aligned plain-text tables, the one layout every text report uses."""

from __future__ import annotations

from collections.abc import Sequence


def table(head: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1, rule: bool = True) -> list[str]:
    """Lines of a table: the first ``left`` columns left-aligned (names), the rest right-aligned (numbers),
    two spaces apart, with a dashed rule under the header when ``rule``.

    >>> table(["system", "BLEU"], [["a", "9.5"], ["bb", "10.25"]])
    ['system   BLEU', '------  -----', 'a         9.5', 'bb      10.25']
    """
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]

    def fmt(r: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()

    return [fmt(head), *([fmt(["-" * w for w in widths])] if rule else []), *map(fmt, rows)]
