"""ngrameval: n-gram co-occurrence metrics (AEv family, BLEU, NIST, ROUGE, PINC, SE) computed exactly and fast,
with significance tests between systems.

Scores are fractions in [0, 1] in this API (NIST has its own scale); text output shows 0-100.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ngrameval._version import __version__
from ngrameval.api import RougeScore, Score, aev, bleu, measure, nist, rouge, score
from ngrameval.errors import (
    ConfigError,
    InputError,
    InputTypeError,
    LimitError,
    MissingDependencyError,
    UndefinedMetricWarning,
)
from ngrameval.metrics import BLEU, NIST, AEv, Rouge
from ngrameval.metrics.registry import MetricSpec, parse_specs
from ngrameval.ngrams import MetricRows, References, Stats, overlap_stats
from ngrameval.paraphrase import ParaphraseResult, paraphrase, pinc, se
from ngrameval.text import Preprocess, preprocess, tokenize_lines

# Significance needs scipy (~1 s to import): loaded on first use, so that scoring starts fast. (A lazy name must
# not be a submodule's name too: importing the submodule would shadow it.)
_LAZY = {
    "Comparison": "ngrameval.meta.significance",
    "compare": "ngrameval.meta.significance",
    "paired_test": "ngrameval.meta.significance",
    "correlate": "ngrameval.meta.correlate",
    "pairwise_accuracy": "ngrameval.meta.mtme",
    "tie_calibrated": "ngrameval.meta.mtme",
    "assign_ranks": "ngrameval.meta.mtme_sets",
    "soft_pairwise_accuracy": "ngrameval.meta.spa",
    "mqm_segment_scores": "ngrameval.meta.mqm",
    "bradley_terry": "ngrameval.meta.bradley_terry",
    "sequential_status": "ngrameval.meta.sequential",
}

if TYPE_CHECKING:
    from ngrameval.meta.bradley_terry import bradley_terry
    from ngrameval.meta.correlate import correlate
    from ngrameval.meta.mqm import mqm_segment_scores
    from ngrameval.meta.mtme import pairwise_accuracy, tie_calibrated
    from ngrameval.meta.mtme_sets import assign_ranks
    from ngrameval.meta.sequential import sequential_status
    from ngrameval.meta.significance import Comparison, compare, paired_test
    from ngrameval.meta.spa import soft_pairwise_accuracy


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BLEU",
    "NIST",
    "AEv",
    "Comparison",
    "ConfigError",
    "InputError",
    "InputTypeError",
    "LimitError",
    "MetricRows",
    "MetricSpec",
    "MissingDependencyError",
    "ParaphraseResult",
    "Preprocess",
    "References",
    "Rouge",
    "RougeScore",
    "Score",
    "Stats",
    "UndefinedMetricWarning",
    "__version__",
    "aev",
    "assign_ranks",
    "bleu",
    "bradley_terry",
    "compare",
    "correlate",
    "measure",
    "mqm_segment_scores",
    "nist",
    "overlap_stats",
    "paired_test",
    "pairwise_accuracy",
    "paraphrase",
    "parse_specs",
    "pinc",
    "preprocess",
    "rouge",
    "score",
    "se",
    "sequential_status",
    "soft_pairwise_accuracy",
    "tie_calibrated",
    "tokenize_lines",
]
