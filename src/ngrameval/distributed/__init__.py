"""Jobs beyond one core: threads on this machine (:mod:`.local`, no dependency) and Dask workers
(:mod:`.cluster`, the ``ngrameval[dask]`` extra, imported only when used). Kernels and metrics know
nothing of where they run: partitions of segments are mapped to summable rows, and the rows reduced."""

from __future__ import annotations

from typing import Any

__all__ = ["connect", "corpus_rows", "from_bag", "from_dataframe", "from_text_shards", "score"]


def __getattr__(name: str) -> Any:
    if name in __all__:  # dask is imported only when the cluster API is used
        from ngrameval.distributed import cluster

        return getattr(cluster, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
