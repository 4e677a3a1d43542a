"""Score matrices (every text against every other, group by group), MBR selection and diversity measures.

A floor above :mod:`ngrameval.api`: it imports the API and the layers below, never the other way round."""

from ngrameval.matrices.matrix import GroupMatrix, Pairwise, iter_pairwise, pairwise
from ngrameval.matrices.select import (
    Diversity,
    GroupDiversity,
    MbrChoice,
    MbrResult,
    distinct_n,
    diversity,
    iter_mbr,
    mbr,
    multi_reference_scores,
    self_scores,
)

__all__ = [
    "Diversity",
    "GroupDiversity",
    "GroupMatrix",
    "MbrChoice",
    "MbrResult",
    "Pairwise",
    "distinct_n",
    "diversity",
    "iter_mbr",
    "iter_pairwise",
    "mbr",
    "multi_reference_scores",
    "pairwise",
    "self_scores",
]
