"""Tables every report shares: p-values as every output prints them, and the notebook tables of
:mod:`ngrameval.io.tables` (re-exported here, where the rendering lives; the result objects use them from there)."""

from __future__ import annotations

import math

from ngrameval.io.tables import html_table, to_pandas

__all__ = ["html_table", "p_text", "to_pandas"]


def p_text(p: float | None) -> str:
    """A p-value as every output prints it (text, HTML, notebooks): 4 decimals from 0.001 up, below that 3
    significant digits, so a tiny p is never shown as 0.

    >>> p_text(0.13963), p_text(0.0112), p_text(1.92e-05), p_text(None)
    ('0.1396', '0.0112', '1.92e-05', 'n/a')
    """
    if p is None or math.isnan(p):
        return "n/a"
    return f"{p:.4f}" if p >= 0.001 else f"{p:.3g}"
