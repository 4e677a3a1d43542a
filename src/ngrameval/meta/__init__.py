"""Meta-evaluation: significance of differences between systems (and, later, agreement with people)."""

from ngrameval.meta.significance import (
    Comparison,
    MetricComparison,
    PairTest,
    RankEntry,
    SystemScore,
    adjust_p,
    compare,
    paired_test,
    rank,
)

__all__ = [
    "Comparison",
    "MetricComparison",
    "PairTest",
    "RankEntry",
    "SystemScore",
    "adjust_p",
    "compare",
    "paired_test",
    "rank",
]
