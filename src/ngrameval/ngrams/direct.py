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
    rows = np.empty((len(systems), len(refs), stats_width(max_order, False)))
    _direct.counts(hyps, refs, mode, pre.lowercase, max_order, partial(prep, lowercase=pre.lowercase), rows)
    return [Stats(values, max_order) for values in rows]
