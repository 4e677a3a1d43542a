"""Score tables as text (0-100, like sacreBLEU), JSON or CSV."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from typing import Any

from ngrameval.api import Score
from ngrameval.io.write import dumps_json
from ngrameval.report.table import table

FORMATS = ("text", "json", "csv")
TABLE_FORMATS = (*FORMATS, "markdown", "latex")  # score tables only


def _shown(s: Score, value: float) -> float:
    return value * 100 if s.fraction else value


def _text(scores: Sequence[Score], width: int) -> str:
    lines = [*table(*_grid(scores, width)), ""]
    sigs = dict.fromkeys(s.signature for s in scores)
    lines += [f"  {sig}" for sig in sigs]
    lines += [f"  {s.system} {s.metric}: {breakdown(s.details)}" for s in scores if s.details]
    lines.append(_scales(scores))
    return "\n".join(lines) + "\n"


def _grid(scores: Sequence[Score], width: int) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the systems x metrics table (text, Markdown, LaTeX)."""
    systems = list(dict.fromkeys(s.system for s in scores))
    metrics = list(dict.fromkeys(s.metric for s in scores))
    cell = {(s.system, s.metric): s for s in scores}
    rows = [[sys, *(_cell(cell[sys, m], width) for m in metrics)] for sys in systems]
    return ["system", *metrics], rows


def _cell(s: Score, width: int) -> str:
    """``47.01``, or with a bootstrap interval ``47.01 (39.20-55.03)``."""
    text = f"{_shown(s, s.score):.{width}f}"
    if s.interval is not None:
        text += f" ({_shown(s, s.interval[0]):.{width}f}-{_shown(s, s.interval[1]):.{width}f})"
    return text


def _markdown(scores: Sequence[Score], width: int) -> str:
    """A GitHub Markdown table, numbers right-aligned, signatures and scales below it."""

    def cell(text: str) -> str:
        return text.replace("\\", "\\\\").replace("|", "\\|")

    head, rows = _grid(scores, width)
    lines = ["| " + " | ".join(map(cell, head)) + " |", "|---|" + "---:|" * (len(head) - 1)]
    lines += ["| " + " | ".join(map(cell, r)) + " |" for r in rows]
    lines += ["", *(f"`{sig}`  " for sig in dict.fromkeys(s.signature for s in scores)), _scales(scores)]
    return "\n".join(lines) + "\n"


_LATEX_SPECIAL = {c: "\\" + c for c in "&%$#_{}"} | {"~": r"\textasciitilde{}", "^": r"\^{}", "\\": r"\textbackslash{}"}


def _latex(scores: Sequence[Score], width: int) -> str:
    """A booktabs ``tabular`` (systems x metrics), special characters escaped, signatures as comments."""

    def cell(text: str) -> str:
        return "".join(_LATEX_SPECIAL.get(c, c) for c in text)

    head, rows = _grid(scores, width)
    lines = [f"% {sig}" for sig in dict.fromkeys(s.signature for s in scores)]
    lines += [r"\begin{tabular}{l" + "r" * (len(head) - 1) + "}", r"\toprule"]
    lines += [" & ".join(map(cell, head)) + r" \\", r"\midrule"]
    lines += [" & ".join(map(cell, r)) + r" \\" for r in rows]
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def score_only(scores: Sequence[Score], width: int) -> str:
    """``-b``: the numbers alone, one a line (system by system, metrics in order), as sacreBLEU's ``-b``."""
    return "".join(f"{_shown(s, s.score):.{width}f}\n" for s in scores)


def breakdown(details: Mapping[str, Any]) -> str:
    """sacreBLEU's BLEU breakdown line: ``87.5/66.7/50.0/33.3 (BP = 0.882 ratio = 0.889 hyp_len = 8 ref_len = 9)``."""
    precisions = "/".join(f"{p:.1f}" for p in details["precisions"])
    return (f"{precisions} (BP = {details['bp']:.3f} ratio = {details['ratio']:.3f} "
            f"hyp_len = {details['hyp_len']:.0f} ref_len = {details['ref_len']:.0f})")  # fmt: skip


def _scales(scores: Sequence[Score]) -> str:
    """The footer naming the scale of each metric shown: ``(0-100: BLEU, chrF2; own scale: NIST)``."""
    hundred = list(dict.fromkeys(s.metric for s in scores if s.fraction))
    own = list(dict.fromkeys(s.metric for s in scores if not s.fraction))
    parts = [f"0-100: {', '.join(hundred)}"] if hundred else []
    parts += [f"own scale: {', '.join(own)}"] if own else []
    return f"({'; '.join(parts)})"


def _sentences(scores: Sequence[Score], width: int, delimiter: str = "\t") -> str:
    out = io.StringIO()
    w = csv.writer(out, delimiter=delimiter, lineterminator="\n")
    w.writerow(["system", "metric", "segment", "score"])
    for s in scores:
        if s.sentences is None:
            continue
        for i, v in enumerate(s.sentences):
            w.writerow([s.system, s.metric, i + 1, f"{_shown(s, float(v)):.{width}f}"])
    return out.getvalue()


def render(scores: Sequence[Score], fmt: str = "text", width: int = 2, sentence: bool = False) -> str:
    """Render scores; ``sentence`` lists per-segment scores instead of (text) or beside (json/csv) totals."""
    if fmt == "json":
        records = [
            {
                "system": s.system,
                "metric": s.metric,
                "score": _shown(s, s.score),
                "scale": "0-100" if s.fraction else "raw",
                "signature": s.signature,
                **({"details": s.details} if s.details else {}),
                **({"interval": [_shown(s, v) for v in s.interval]} if s.interval else {}),
                **(
                    {"sentences": [_shown(s, float(v)) for v in s.sentences]}
                    if sentence and s.sentences is not None
                    else {}
                ),
            }
            for s in scores
        ]
        return dumps_json(records)
    if fmt == "csv":
        if sentence:
            return _sentences(scores, width, ",")  # quoted by the csv module, not tabs turned into commas
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(["system", "metric", "score", "scale", "signature"])
        for s in scores:
            w.writerow([s.system, s.metric, repr(_shown(s, s.score)), "0-100" if s.fraction else "raw", s.signature])
        return out.getvalue()
    if sentence:
        return _sentences(scores, width)
    if fmt == "markdown":
        return _markdown(scores, width)
    if fmt == "latex":
        return _latex(scores, width)
    return _text(scores, width)
