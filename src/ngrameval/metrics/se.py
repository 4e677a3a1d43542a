"""String-edit similarity SE (Belz & Reiter 2006), on token ids.

Word-level edit distance with substitution cost 2 and insertion/deletion cost 1 — the Indel
distance, ``|a| + |b| - 2 LCS(a, b)`` — normalised to [0, 1] with 1 for an exact match:

    SE(a, b) = 1 - d(a, b) / (|a| + |b|),   SE of two empty texts = 1.

With several references a segment's SE is the mean over its references; a system's SE is the mean
over segments. The distance comes from RapidFuzz's ``Indel`` (C++), pinned by property tests
against a plain dynamic program. One pair of ``len(a) * len(b)`` cells above ``ngrameval.limits.max_cells``
stops with a LimitError (the pairs are computed one call each, so Ctrl-C stops between two pairs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from rapidfuzz.distance import Indel

from ngrameval import limits
from ngrameval.errors import LimitError
from ngrameval.metrics.policy import FloatArray
from ngrameval.metrics.rows import Batch, RowMetric, Rows
from ngrameval.ngrams.stats import mean_of_rows
from ngrameval.ngrams.texts import IntArray, Texts


def se_scores(hyps: Texts, refs: Texts, seg: IntArray) -> FloatArray:
    """Mean SE of hypothesis ``s`` against references ``seg[s] .. seg[s + 1] - 1``.

    >>> from ngrameval.ngrams.texts import Texts
    >>> h = Texts(np.array([1, 2, 3], dtype=np.int32), np.array([0, 3]))
    >>> r = Texts(np.array([1, 3, 1, 2, 3], dtype=np.int32), np.array([0, 2, 5]))
    >>> se_scores(h, r, np.array([0, 2])).tolist()
    [0.9]
    """
    h_ids, h_off = hyps.ids.tolist(), hyps.off.tolist()
    r_ids, r_off = refs.ids.tolist(), refs.off.tolist()
    sim = Indel.normalized_similarity
    per_ref = np.empty(len(refs))
    owner = np.repeat(np.arange(len(hyps)), np.diff(seg))
    bound = limits.get_max_cells()
    for r, s in enumerate(owner.tolist()):
        cells = (h_off[s + 1] - h_off[s]) * (r_off[r + 1] - r_off[r])
        if cells > bound:
            raise LimitError(limits.limit_message(f"segment {s + 1}, reference {r + 1}", "SE (edit distance)", cells))
        per_ref[r] = sim(h_ids[h_off[s] : h_off[s + 1]], r_ids[r_off[r] : r_off[r + 1]])
    sums = np.bincount(owner, weights=per_ref, minlength=len(hyps))
    out: FloatArray = sums / np.diff(seg)
    return out


@dataclass(frozen=True)
class SE(RowMetric):
    """String-edit similarity as a metric configuration (no options: substitution 2, indel 1)."""

    higher_is_better: ClassVar[bool] = True
    reads_tokens: ClassVar[bool] = True

    def rows(self, batch: Batch) -> Rows:
        """Rows ``(SE, 1)`` of every hypothesis against its references (:func:`se_scores`)."""
        return Rows(batch.sentence_rows(lambda hyp, refs, seg, src: se_scores(hyp, refs, seg)), mean_of_rows)

    def display_name(self) -> str:
        return "SE"

    def signature(self) -> str:
        return "sub:2|indel:1|avg:refs"
