"""Score matrices (every text against every other, group by group), MBR selection and diversity measures.

A floor above :mod:`ngrameval.api`: it imports the API and the layers below, never the other way round."""

from ngrameval.pairwise.matrix import GroupMatrix, Pairwise, iter_pairwise, pairwise

__all__ = ["GroupMatrix", "Pairwise", "iter_pairwise", "pairwise"]
