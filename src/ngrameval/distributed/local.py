"""Deprecated alias of :mod:`ngrameval.jobs` (and :func:`ngrameval.api.measure_chunked`,
:func:`ngrameval.ngrams.stats.concatenated_rows`); moved in 0.1.0, removed in 0.2.0 (see docs/deprecations.md)."""

import warnings

from ngrameval.api import measure_chunked
from ngrameval.jobs import CHUNKS_PER_JOB, MIN_CHUNK, chunked_map, resolve_jobs, run_blocks, segment_chunks, thread_map
from ngrameval.ngrams.stats import concatenated_rows as concatenated

warnings.warn("ngrameval.distributed.local is deprecated: import ngrameval.jobs", DeprecationWarning, stacklevel=2)
__all__ = ["CHUNKS_PER_JOB", "MIN_CHUNK", "chunked_map", "concatenated", "measure_chunked", "resolve_jobs",
           "run_blocks", "segment_chunks", "thread_map"]  # fmt: skip
