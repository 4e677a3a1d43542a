"""Sentence splitting for ROUGE-L/W over sentences (``rouge-lsum:sentences=pysbd``, ``--rouge-sentences pysbd``).

rouge-score's ``split_summaries=True`` runs NLTK's punkt, whose English model is a download at run time; here
pysbd (Sadvilkar & Neumann 2020, rule-based "Golden Rules" segmentation; its rules ship with the package:
``pip install 'ngrameval[sentences]'``) finds the boundaries. Each existing line is split on its own (a ``"\\n"``
stays a boundary); no character changes but the whitespace around a boundary, which becomes one ``"\\n"``:
pysbd's sentences are located in the original text in order, and one it cannot find there unchanged (pysbd
rewrites some punctuation runs) adds no boundary.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from typing import Any

from ngrameval.errors import MissingDependencyError

SPLITTERS = ("lines", "pysbd")  # lines: a sentence is a line (the default); pysbd: split every line further
_local = threading.local()  # pysbd's Segmenter keeps the text it works on: one per thread


def _segmenter() -> Any:
    seg = getattr(_local, "segmenter", None)
    if seg is None:
        try:
            import pysbd
        except ImportError as exc:
            raise MissingDependencyError("pysbd", "sentences") from exc
        seg = _local.segmenter = pysbd.Segmenter(language="en", clean=False)
    return seg


def split_line(line: str) -> list[str]:
    """The sentences of one line (stripped, none empty; ``[""]`` for a blank line)."""
    if not line.strip():
        return [line]
    starts, cursor = [0], 0
    for sent in _segmenter().segment(line):
        piece = sent.strip()
        at = line.find(piece, cursor) if piece else -1
        if at < 0:
            continue  # rewritten by pysbd: no boundary here
        if at > cursor or (at == cursor and cursor > 0):
            starts.append(at)
        cursor = at + len(piece)
    bounds = [*sorted(set(starts)), len(line)]
    out = [line[a:b].strip() for a, b in itertools.pairwise(bounds)]
    return [s for s in out if s] or [line.strip()]


def split_sentences(texts: Sequence[str]) -> list[str]:
    """Every text with its sentences one a line (``"\\n"``-separated), each distinct text split once."""
    done: dict[str, str] = {}
    out = []
    for t in texts:
        if t not in done:
            done[t] = "\n".join(s for line in t.split("\n") for s in split_line(line))
        out.append(done[t])
    return out
