"""Dask workers (:mod:`.cluster`, the ``ngrameval[dask]`` extra, imported only when used; threads on one machine:
:mod:`ngrameval.jobs`). Kernels and metrics know nothing of where they run: partitions of segments are mapped to
summable rows, and the rows reduced (:mod:`ngrameval.scale.chunks`). The command line's ``--scheduler`` runs
:mod:`.run`."""

from __future__ import annotations

from typing import Any

_CLUSTER = ("close", "connect", "corpus_rows", "from_bag", "from_dataframe", "from_text_shards", "score")
_GATHER = ("compare", "paraphrase", "plane", "segment_rows", "write_sentences")
__all__ = [*_CLUSTER, *_GATHER]


def __getattr__(name: str) -> Any:
    if name in __all__:  # dask is imported only when the cluster API is used
        from ngrameval.scale.dask import cluster, gather

        return getattr(cluster if name in _CLUSTER else gather, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
