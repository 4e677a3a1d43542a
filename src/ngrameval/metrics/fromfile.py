"""What the kernel that counts straight from a file's UTF-8 bytes (``ngrameval._direct.count_bytes``, see
``_lines.h``) serves, and its counts as a metric's :class:`~ngrameval.metrics.rows.Batch`.

A text setting is served when every metric measured under it reads the shared n-gram statistics counted straight
from the lines (BLEU and the BLEU family under ``13a`` or ``none``, no NIST weights, no stop words, stemming or
Unicode normalisation), or when every one is a ROUGE-N/L variant that ``_direct.rouge`` counts alone. The kernel
writes each chunk's counts in place into arrays of the whole corpus (:meth:`Plan.arrays`); a chunk it declines (a
ROUGE text above ASCII, a segment past its 32-bit bounds) is counted from its ``str`` by the in-memory kernels
(:meth:`Plan.count_text`), with the warnings they give. The rows are :func:`~ngrameval.api.measure`'s bit for bit
(``tests/test_fromfile.py``).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ngrameval import _direct
from ngrameval.metrics.rows import Batch, CountedBatch, RowMetric
from ngrameval.ngrams import direct
from ngrameval.ngrams.stats import stats_width
from ngrameval.text.pipeline import Preprocess
from ngrameval.text.tokenize import line_prep

ROUGE_MODE = 2  # _direct.count_bytes' mode for ROUGE (0 plain, 1 v13a: the BLEU family)
Arrays = tuple[NDArray[Any], ...]


@dataclass(frozen=True)
class Plan:
    """How one text setting ``pre`` (its ``metrics``) is counted from bytes: ``mode`` of ``_direct.count_bytes``,
    its lower-casing, n-gram order and LCS, and the tokenizer's preprocessing of one line (BLEU family)."""

    pre: Preprocess
    metrics: tuple[RowMetric, ...]
    mode: int
    lowercase: bool
    order: int
    want_lcs: bool
    prep: Any

    def arrays(self, n_systems: int, n_segments: int, n_refs: int) -> Arrays:
        """The corpus' output arrays, filled chunk by chunk: the Stats rows (BLEU family) or ROUGE's pair counts.
        NumPy's memory, not :func:`ngrameval.memory.empty`'s: a file streamed in chunks gets each chunk's arrays
        from the heap that the last chunk's arrays freed, already faulted in and in cache (2 x 1M segments of BLEU,
        20 chunks: 2.3 s with one job; 2.7 s with fresh huge pages for every chunk)."""
        if self.mode != ROUGE_MODE:
            return (np.empty((n_systems, n_segments, stats_width(self.order, False))),)
        pairs = n_segments * n_refs
        return (
            np.empty(n_systems * n_segments, dtype=np.int64),
            np.empty(pairs, dtype=np.int64),
            np.empty(n_systems * pairs * self.order, dtype=np.int64),
            np.empty(n_systems * pairs, dtype=np.int64),
        )

    def count(self, texts: tuple[memoryview, ...], n_refs: int, n: int, first: int, out: Arrays) -> bool:
        """Segments ``first .. first + n`` from ``texts`` (the chunk's lines: ``n_refs`` reference files, then the
        systems) into ``out``; False: declined (count them with :meth:`count_text`)."""
        total = out[0].shape[1] if self.mode != ROUGE_MODE else len(out[1]) // n_refs
        raw = tuple(a.reshape(-1) for a in out)
        return bool(
            _direct.count_bytes(texts, n_refs, n, first, total, self.mode, self.lowercase, self.order,
                                self.want_lcs, self.prep, raw)
        )  # fmt: skip

    def count_text(
        self, systems: Sequence[Sequence[str]], seg_refs: Sequence[Sequence[str]], first: int, out: Arrays
    ) -> tuple[int, int]:
        """:meth:`count` of segments given as ``str`` (every segment ``n_refs`` references), by the in-memory
        kernels: the same numbers; ROUGE's system segments and references that lose every token (:meth:`warn`
        says their sums), else (0, 0)."""
        n = len(seg_refs)
        if self.mode != ROUGE_MODE:
            for k, st in enumerate(direct.direct_stats(systems, seg_refs, self.pre, self.order)):
                out[0][k, first : first + n] = st.values
            return 0, 0
        from ngrameval.metrics import rouge

        metrics = [m for m in self.metrics if isinstance(m, rouge.Rouge)]
        lost = rouge.lost_texts(self.pre, [r for rs in seg_refs for r in rs], systems)
        full_lower, top, want_lcs = rouge.direct_profile(self.pre, metrics)
        raw = _direct.rouge(systems, seg_refs, full_lower, top, want_lcs)
        hyp_len, ref_len, _, hits, lcs = (np.frombuffer(b, dtype=np.int64) for b in raw[:5])
        k_sys, f = len(systems), len(ref_len) // n
        total = len(out[1]) // f
        out[0].reshape(k_sys, total)[:, first : first + n] = hyp_len.reshape(k_sys, n)
        out[1][first * f : (first + n) * f] = ref_len
        out[2].reshape(k_sys, total * f, top)[:, first * f : (first + n) * f] = hits.reshape(k_sys, n * f, top)
        out[3].reshape(k_sys, total * f)[:, first * f : (first + n) * f] = lcs.reshape(k_sys, n * f)
        return lost

    def warn(self, lost: tuple[int, int], n_systems: int, n_segments: int, n_refs: int) -> None:
        """The in-memory path's warning of the corpus' texts that lose every token (``lost``: summed over the chunks
        :meth:`count_text` counted; none can be lost in a chunk the bytes kernel counted: every text was ASCII)."""
        if self.mode == ROUGE_MODE:
            from ngrameval.metrics import rouge

            rouge.warn_lost(self.pre, lost[0], n_systems * n_segments, lost[1], n_segments * n_refs)

    def batch(self, out: Arrays, n_refs: int, jobs: int = 1) -> Batch:
        """The batch whose metrics' rows are those of the counted corpus (ROUGE's scores made on ``jobs``
        threads)."""
        if self.mode != ROUGE_MODE:
            values = tuple(out[0][k] for k in range(len(out[0])))
            return CountedBatch(self.pre, self.metrics, counted=(values, self.order, False))
        from ngrameval.metrics import rouge

        kinds = rouge.variants(self.metrics)
        n_seg = len(out[1]) // n_refs
        seg = np.arange(0, n_seg * n_refs + 1, n_refs, dtype=np.int64)
        k_sys = len(out[0]) // n_seg if n_seg else 0
        counts = rouge.KernelCounts(out[0], out[1], out[2], out[3])
        scores = rouge.scores_of_counts(kinds, k_sys, counts, seg, jobs)
        return CountedBatch(self.pre, self.metrics, shared={"rouge": scores})


def plan(pre: Preprocess, metrics: Sequence[RowMetric]) -> Plan | None:
    """How the bytes kernel counts the text setting ``pre`` of ``metrics``; None when it does not serve it."""
    ms = tuple(metrics)
    if all(m.counted and not m.needs_info and not m.reads_tokens for m in ms) and not pre.normalize:
        fast = line_prep(pre.tokenize)
        if fast is None or not direct.applies(pre, False):
            return None
        mode, prep = fast
        order = max(m.order_needed for m in ms)
        return Plan(pre, ms, mode, pre.lowercase, order, False, partial(prep, lowercase=pre.lowercase))
    if "ngrameval.metrics.rouge" not in sys.modules:  # no metric can be a ROUGE variant (chrF, TER: not served)
        return None
    from ngrameval.metrics import rouge  # (here: a run of BLEU or chrF does not load ROUGE)

    kinds = [m for m in ms if isinstance(m, rouge.Rouge)]
    if len(kinds) != len(ms) or not rouge.counted_directly(pre, rouge.variants(kinds)):
        return None
    full_lower, top, want_lcs = rouge.direct_profile(pre, rouge.variants(kinds))
    return Plan(pre, ms, ROUGE_MODE, full_lower, top, want_lcs, None)
