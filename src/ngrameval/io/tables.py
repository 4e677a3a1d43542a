"""Result objects as tables in notebooks: an escaped HTML table (``_repr_html_``) and a pandas DataFrame
(``to_pandas``; pandas is optional and imported only here, when asked for). Here, below the API, because the
result objects of every floor (``Score``, ``Comparison``, ``Plane``, ...) show themselves with these; the
reports themselves are rendered by :mod:`ngrameval.report`.

>>> html_table(["system", "BLEU"], [["a<b", 0.5]])
'<table><thead><tr><th>system</th><th>BLEU</th></tr></thead><tbody><tr><td>a&lt;b</td><td>0.5</td></tr></tbody></table>'
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from typing import Any

from ngrameval.errors import MissingDependencyError


def _cell(value: object, digits: int) -> str:
    if isinstance(value, float):
        return "n/a" if not math.isfinite(value) else f"{value:.{digits}g}"
    return html.escape("" if value is None else str(value))


def html_table(head: Sequence[str], rows: Sequence[Sequence[object]], caption: str = "", digits: int = 6) -> str:
    """A plain HTML table; every cell escaped, floats to ``digits`` significant digits, NaN as ``n/a``."""
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{_cell(v, digits)}</td>" for v in r) + "</tr>" for r in rows)
    return f"<table>{cap}<thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def to_pandas(records: Sequence[Mapping[Any, Any]], index: str | Sequence[str] | None = None) -> Any:
    """``records`` (one dict per row) as a ``pandas.DataFrame`` (``pip install 'ngrameval[pandas]'``)."""
    try:
        import pandas as pd
    except ImportError:
        raise MissingDependencyError("pandas", "pandas") from None
    frame = pd.DataFrame.from_records(list(records))
    return frame.set_index(index) if index is not None and len(frame) else frame
