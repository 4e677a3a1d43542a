"""Meta-evaluation: significance between systems, agreement with people (correlations, the (alpha, N) plane,
Belz & Reiter's and Chen & Dolan's analyses) and significance between two metrics' correlations."""

from __future__ import annotations

import importlib
import sys
import types

# The names below load their module when first used: ``ngrameval.meta.mqm`` (the collection app's span rules) or
# ``ngrameval.meta.resample`` alone no longer import scipy.stats with every analysis (~0.7 s of a `collect status`).
# mypy reads the name below as typing's TYPE_CHECKING.
TYPE_CHECKING = False
if TYPE_CHECKING:
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

_LAZY = {
    "Agreement": "ngrameval.meta.agreement",
    "CorrelationMatrix": "ngrameval.meta.agreement",
    "agreement": "ngrameval.meta.agreement",
    "correlation_matrix": "ngrameval.meta.agreement",
    "judge_table": "ngrameval.meta.agreement",
    "Correlation": "ngrameval.meta.correlate",
    "HumanScores": "ngrameval.meta.correlate",
    "aggregate": "ngrameval.meta.correlate",
    "correlate": "ngrameval.meta.correlate",
    "MetricDifference": "ngrameval.meta.metric_difference",
    "compare_correlations": "ngrameval.meta.metric_difference",
    "williams_test": "ngrameval.meta.metric_difference",
    "TieCalibration": "ngrameval.meta.mtme",
    "pairwise_accuracy": "ngrameval.meta.mtme",
    "pooled_accuracy": "ngrameval.meta.mtme",
    "tie_calibrated": "ngrameval.meta.mtme",
    "Cluster": "ngrameval.meta.mtme_sets",
    "SetSummary": "ngrameval.meta.mtme_sets",
    "assign_ranks": "ngrameval.meta.mtme_sets",
    "clusters": "ngrameval.meta.mtme_sets",
    "compare_tie_calibrated": "ngrameval.meta.mtme_sets",
    "summarize": "ngrameval.meta.mtme_sets",
    "Plane": "ngrameval.meta.plane",
    "plane": "ngrameval.meta.plane",
    "Comparison": "ngrameval.meta.significance",
    "MetricComparison": "ngrameval.meta.significance",
    "PairTest": "ngrameval.meta.significance",
    "RankEntry": "ngrameval.meta.significance",
    "SystemScore": "ngrameval.meta.significance",
    "adjust_p": "ngrameval.meta.significance",
    "compare": "ngrameval.meta.significance",
    "paired_test": "ngrameval.meta.significance",
    "rank": "ngrameval.meta.significance",
    "ConditionalCorrelation": "ngrameval.meta.subsets",
    "ReferenceCurve": "ngrameval.meta.subsets",
    "conditional_correlation": "ngrameval.meta.subsets",
    "reference_curve": "ngrameval.meta.subsets",
}


class _Package(types.ModuleType):
    """This package, whose names of :data:`_LAZY` stay the functions and classes even where a submodule has the same
    name (``correlate``, ``agreement``, ``plane``): the import system binds a submodule on its package once loaded,
    which would make ``from ngrameval.meta import correlate`` the module, as it never was."""

    def __setattr__(self, name: str, value: object) -> None:
        if name in _LAZY and isinstance(value, types.ModuleType) and value.__name__ == f"{__name__}.{name}":
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> object:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value  # found: later uses skip this function
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
