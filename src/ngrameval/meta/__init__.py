"""Meta-evaluation: significance between systems, agreement with people (correlations, the (alpha, N) plane,
Belz & Reiter's and Chen & Dolan's analyses) and significance between two metrics' correlations."""

from ngrameval.meta.agreement import Agreement, CorrelationMatrix, agreement, correlation_matrix, judge_table
from ngrameval.meta.correlate import Correlation, HumanScores, aggregate, correlate
from ngrameval.meta.metric_difference import MetricDifference, compare_correlations, williams_test
from ngrameval.meta.mtme import TieCalibration, pairwise_accuracy, pooled_accuracy, tie_calibrated
from ngrameval.meta.mtme_sets import Cluster, SetSummary, assign_ranks, clusters, compare_tie_calibrated, summarize
from ngrameval.meta.plane import Plane, plane
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
from ngrameval.meta.subsets import ConditionalCorrelation, ReferenceCurve, conditional_correlation, reference_curve

__all__ = [
    "Agreement",
    "Cluster",
    "Comparison",
    "ConditionalCorrelation",
    "Correlation",
    "CorrelationMatrix",
    "HumanScores",
    "MetricComparison",
    "MetricDifference",
    "PairTest",
    "Plane",
    "RankEntry",
    "ReferenceCurve",
    "SetSummary",
    "SystemScore",
    "TieCalibration",
    "adjust_p",
    "aggregate",
    "agreement",
    "assign_ranks",
    "clusters",
    "compare",
    "compare_correlations",
    "compare_tie_calibrated",
    "conditional_correlation",
    "correlate",
    "correlation_matrix",
    "judge_table",
    "paired_test",
    "pairwise_accuracy",
    "plane",
    "pooled_accuracy",
    "rank",
    "reference_curve",
    "summarize",
    "tie_calibrated",
    "williams_test",
]
