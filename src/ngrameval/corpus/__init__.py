"""Highly parallel corpora: clusters of independent descriptions of one item (MSVD, Chen & Dolan 2011)."""

from ngrameval.corpus.baseline import BaselineResult, human_baseline
from ngrameval.corpus.msvd import (
    ClusterStats,
    Description,
    cluster,
    cluster_stats,
    export,
    make_test_set,
    read_corpus,
    select,
    split,
    training_pairs,
)

__all__ = [
    "BaselineResult",
    "ClusterStats",
    "Description",
    "cluster",
    "cluster_stats",
    "export",
    "human_baseline",
    "make_test_set",
    "read_corpus",
    "select",
    "split",
    "training_pairs",
]
