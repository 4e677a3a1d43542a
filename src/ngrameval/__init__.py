"""ngrameval: n-gram co-occurrence metrics (AEv family, BLEU, NIST, ROUGE, PINC, SE) computed exactly and fast,
with significance tests between systems.

Scores are fractions in [0, 1] in this API (NIST has its own scale); text output shows 0-100.
"""

from ngrameval._version import __version__
from ngrameval.api import RougeScore, Score, aev, bleu, measure, nist, rouge, score
from ngrameval.errors import ConfigError, InputError, MissingDependencyError, UndefinedMetricWarning
from ngrameval.meta.significance import Comparison, compare, paired_test
from ngrameval.metrics import BLEU, NIST, AEv, Rouge
from ngrameval.metrics.registry import MetricSpec, parse_specs
from ngrameval.ngrams import MetricRows, References, Stats, overlap_stats
from ngrameval.paraphrase import ParaphraseResult, paraphrase, pinc, se
from ngrameval.text import Preprocess, preprocess, tokenize_lines

__all__ = [
    "BLEU",
    "NIST",
    "AEv",
    "Comparison",
    "ConfigError",
    "InputError",
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
    "bleu",
    "compare",
    "measure",
    "nist",
    "overlap_stats",
    "paired_test",
    "paraphrase",
    "parse_specs",
    "pinc",
    "preprocess",
    "rouge",
    "score",
    "se",
    "tokenize_lines",
]
