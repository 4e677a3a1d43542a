"""Score tables as text (0-100, like sacreBLEU), JSON or CSV."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from ngrameval.api import Score
from ngrameval.io.write import dumps_json
from ngrameval.report.table import table

FORMATS = ("text", "json", "csv")


def _shown(s: Score, value: float) -> float:
    return value * 100 if s.fraction else value


def _text(scores: Sequence[Score], width: int) -> str:
    systems = list(dict.fromkeys(s.system for s in scores))
    metrics = list(dict.fromkeys(s.metric for s in scores))
    cell = {(s.system, s.metric): s for s in scores}
    head = ["system", *metrics]
    rows = [[sys, *(f"{_shown(cell[sys, m], cell[sys, m].score):.{width}f}" for m in metrics)] for sys in systems]
    lines = [*table(head, rows), ""]
    sigs = dict.fromkeys(s.signature for s in scores)
    lines += [f"  {sig}" for sig in sigs]
    lines.append(_scales(scores))
    return "\n".join(lines) + "\n"


def _scales(scores: Sequence[Score]) -> str:
    """The footer naming the scale of each metric shown: ``(0-100: BLEU, chrF2; own scale: NIST)``."""
    hundred = list(dict.fromkeys(s.metric for s in scores if s.fraction))
    own = list(dict.fromkeys(s.metric for s in scores if not s.fraction))
    parts = [f"0-100: {', '.join(hundred)}"] if hundred else []
    parts += [f"own scale: {', '.join(own)}"] if own else []
    return f"({'; '.join(parts)})"


def _sentences(scores: Sequence[Score], width: int) -> str:
    out = io.StringIO()
    w = csv.writer(out, delimiter="\t", lineterminator="\n")
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
            return _sentences(scores, width).replace("\t", ",")
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(["system", "metric", "score", "scale", "signature"])
        for s in scores:
            w.writerow([s.system, s.metric, repr(_shown(s, s.score)), "0-100" if s.fraction else "raw", s.signature])
        return out.getvalue()
    if sentence:
        return _sentences(scores, width)
    return _text(scores, width)
