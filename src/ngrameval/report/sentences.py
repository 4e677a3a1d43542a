"""The sentence-level output of ``score --sentence`` on files streamed in chunks (:mod:`ngrameval.scale.files`):
the sentence scores are read back from the spill files, block by block, and laid out exactly as
:func:`ngrameval.report.render.render` lays them out in memory."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import replace
from typing import TextIO

import numpy as np

from ngrameval.api import Score, Scores
from ngrameval.io.write import json_ready, open_atomic
from ngrameval.report.render import render
from ngrameval.scale.files import Streamed, sentence_values


def write_sentences(
    streamed: Streamed, scores: Sequence[Score], fmt: str, width: int, out: TextIO, block: int = 100_000
) -> None:
    """The sentence-level output of ``score --sentence`` (text/TSV, CSV or JSON) of ``scores`` (corpus scores,
    system-major, with intervals if any) with the sentence scores of the spill files, exactly as
    :func:`ngrameval.report.render.render` lays it out in memory."""
    n_metrics = len(streamed.rows)
    if fmt == "json":
        marked = Scores(replace(s, sentences=np.zeros(0)) for s in scores)
        pieces = render(marked, "json", width, sentence=True).split('"sentences": []')
        out.write(pieces[0])
        for k, (s, piece) in enumerate(zip(scores, pieces[1:], strict=True)):
            values = sentence_values(streamed, k // n_metrics, k % n_metrics, block)
            first = True
            for part in values:
                shown = part * 100 if s.fraction else part
                items = ",\n      ".join(json.dumps(json_ready(float(v))) for v in shown.tolist())
                out.write(('"sentences": [\n      ' if first else ",\n      ") + items)
                first = False
            out.write('"sentences": []' if first else "\n    ]")
            out.write(piece)
        return
    head = io.StringIO()
    csv.writer(head, delimiter="\t", lineterminator="\n").writerow(["system", "metric", "segment", "score"])
    _write_tsv(out, head.getvalue(), fmt)
    for k, s in enumerate(scores):
        segment = 1
        for part in sentence_values(streamed, k // n_metrics, k % n_metrics, block):
            buf = io.StringIO()
            w = csv.writer(buf, delimiter="\t", lineterminator="\n")
            shown = part * 100 if s.fraction else part
            for v in shown.tolist():
                w.writerow([s.system, s.metric, segment, f"{v:.{width}f}"])
                segment += 1
            _write_tsv(out, buf.getvalue(), fmt)


def _write_tsv(out: TextIO, text: str, fmt: str) -> None:
    out.write(text.replace("\t", ",") if fmt == "csv" else text)


def write_output(
    streamed: Streamed, scores: Sequence[Score], fmt: str, width: int, path: str | None, stdout: TextIO
) -> None:
    """Sentence-level output to ``path`` (atomically: nothing is left half-written) or ``stdout``."""
    if path:
        with open_atomic(path) as fh:
            write_sentences(streamed, scores, fmt, width, fh)
    else:
        write_sentences(streamed, scores, fmt, width, stdout)
