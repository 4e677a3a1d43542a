"""Deprecated alias of :mod:`ngrameval.scale.dask` (threads: :mod:`ngrameval.jobs`; the command line's
``--scheduler``: :mod:`ngrameval.cli.scheduler`); moved in 0.1.0, removed in 0.2.0 (see docs/deprecations.md)."""

from __future__ import annotations

import warnings
from typing import Any

warnings.warn("ngrameval.distributed is deprecated: import ngrameval.scale.dask", DeprecationWarning, stacklevel=2)


def __getattr__(name: str) -> Any:
    from ngrameval.scale import dask

    return getattr(dask, name)  # dask itself is imported only when the cluster API is used
