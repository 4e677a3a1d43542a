"""Counting straight from the lines (``ngrameval._direct``): the BLEU-family :class:`Stats` of every system without
a vocabulary, for the ``13a`` and ``none`` tokenizers with no stop words, stemming or NIST.

Each segment's texts are tokenized and their tokens interned in a table of that segment alone, and its n-grams
counted there (see ``_direct.c``): the same integer statistics as :func:`~ngrameval.ngrams.count.overlap_stats`,
which tokenizes the references once into corpus-wide ids. Every segment is counted here: one whose texts hold a
code point above 255 is scanned in UTF-8 form (13a and plain splitting treat every character above ASCII as a
word character unless it is whitespace). ``tests/test_direct.py`` compares the rows with the vocabulary path and
the tokens with sacreBLEU's on generated and real text, wide characters included.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import numpy as np

from ngrameval import _direct
from ngrameval.errors import ConfigError
from ngrameval.ngrams.count import RefSide
from ngrameval.ngrams.stats import Stats, stats_width
from ngrameval.text.normalize import normalize_texts
from ngrameval.text.pipeline import Preprocess
from ngrameval.text.tokenize import line_prep


def applies(pre: Preprocess, nist: bool) -> bool:
    """Whether :func:`direct_stats` can count under ``pre`` (``nist``: NIST needs corpus-wide n-gram counts)."""
    return not nist and line_prep(pre.tokenize) is not None and pre.stopwords is None and not pre.stem


def direct_stats(
    systems: Sequence[Sequence[str]], seg_refs: Sequence[Sequence[str]], pre: Preprocess, max_order: int
) -> list[Stats]:
    """Per-segment :class:`Stats` of each system against ``seg_refs`` (``seg_refs[i]``: the references of segment
    ``i``), equal to ``overlap_stats(systems, References.build(seg_refs, pre), max_order)``."""
    fast = line_prep(pre.tokenize)
    if fast is None or not applies(pre, False):
        raise ConfigError(f"direct counting takes 13a or none without stop words or stemming, not {pre.signature()}")
    mode, prep = fast
    hyps = [normalize_texts(h, pre.normalize) for h in systems]
    refs = [normalize_texts(r, pre.normalize) for r in seg_refs] if pre.normalize else seg_refs
    hyp_len_b, ref_len_b, seg_b, match_b, rmatch_b = _direct.counts(
        hyps, refs, mode, pre.lowercase, max_order, partial(prep, lowercase=pre.lowercase)
    )
    seg = np.frombuffer(seg_b, dtype=np.int64)
    n_seg, n = len(seg) - 1, max_order
    hyp_len = np.frombuffer(hyp_len_b, dtype=np.int64).reshape(len(systems), n_seg)
    match = np.frombuffer(match_b, dtype=np.int64).reshape(len(systems), n_seg, n)
    rmatch = np.frombuffer(rmatch_b, dtype=np.int64).reshape(len(systems), n_seg, n)
    side = RefSide.of(np.frombuffer(ref_len_b, dtype=np.int64), seg, n)
    out = []
    for k in range(len(systems)):
        rows = np.zeros((n_seg, stats_width(n, False)))
        side.fill(rows, hyp_len[k], match[k], rmatch[k])
        out.append(rows)
    return [Stats(rows, n) for rows in out]
