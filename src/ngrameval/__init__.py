"""ngrameval: n-gram co-occurrence metrics (AEv family, BLEU, NIST, ROUGE, PINC, SE) computed exactly and fast,
with significance tests between systems.

Scores are fractions in [0, 1] in this API (NIST has its own scale); text output shows 0-100.
"""

from __future__ import annotations

import importlib
import sys
import types
import warnings

from ngrameval._version import __version__

# typing (with re and enum, ~8 ms) and importlib.util (~3 ms) load only when used: the command's entry point imports
# this package before it begins counting a `score` run's files (ngrameval.scale.early). mypy reads the name below
# as typing's TYPE_CHECKING.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# ``python -m ngrameval``: Python imports this package (numpy, the kernels: a second or more) before __main__ and
# its Ctrl-C handler; a Ctrl-C meanwhile exits 130 with the command's one line, not a traceback (sys.argv[0] is
# "-m" while Python locates the module). Imported any other way, the interrupt propagates as usual.
_ARGV = getattr(sys, "orig_argv", [])
_STARTING = sys.argv[:1] == ["-m"] and any(
    a == "-mngrameval" or (a == "-m" and _ARGV[i + 1 : i + 2] == ["ngrameval"]) for i, a in enumerate(_ARGV)
)
try:
    from ngrameval.errors import (
        ConfigError,
        InputError,
        InputTypeError,
        LimitError,
        MissingDependencyError,
        UndefinedMetricWarning,
    )
except KeyboardInterrupt:
    if not _STARTING:
        raise
    print("ngrameval: interrupted", file=sys.stderr)
    raise SystemExit(130) from None

# Every name below is imported on first use (``ngrameval.bleu``, ``from ngrameval import score``): ``import
# ngrameval`` loads no metric, no numpy, and the command line loads only what its subcommand uses (``score -m bleu``
# neither the paraphrase tools, the matrices nor the stored statistics; significance not scipy, ~1 s). A lazy name
# must not be a submodule's name too: importing the submodule would shadow it.
_LAZY = {
    "RougeScore": "ngrameval.api",
    "Score": "ngrameval.api",
    "aev": "ngrameval.api",
    "bleu": "ngrameval.api",
    "measure": "ngrameval.api",
    "nist": "ngrameval.api",
    "rouge": "ngrameval.api",
    "score": "ngrameval.api",
    "ParaphraseResult": "ngrameval.corpus.paraphrase",
    "paraphrase": "ngrameval.corpus.paraphrase",
    "pinc": "ngrameval.corpus.paraphrase",
    "se": "ngrameval.corpus.paraphrase",
    "pairwise": "ngrameval.matrices.matrix",
    "BLEU": "ngrameval.metrics",
    "NIST": "ngrameval.metrics",
    "AEv": "ngrameval.metrics",
    "Rouge": "ngrameval.metrics",
    "MetricSpec": "ngrameval.metrics.registry",
    "parse_specs": "ngrameval.metrics.registry",
    "MetricRows": "ngrameval.ngrams",
    "References": "ngrameval.ngrams",
    "Stats": "ngrameval.ngrams",
    "overlap_stats": "ngrameval.ngrams",
    "RunStats": "ngrameval.scale.stored",
    "count_stats": "ngrameval.scale.stored",
    "merge_stats": "ngrameval.scale.stored",
    "read_stats": "ngrameval.scale.stored",
    "write_stats": "ngrameval.scale.stored",
    "Preprocess": "ngrameval.text",
    "preprocess": "ngrameval.text",
    "tokenize_lines": "ngrameval.text",
    "Comparison": "ngrameval.meta.significance",
    "compare": "ngrameval.meta.significance",
    "paired_test": "ngrameval.meta.significance",
    "correlate": "ngrameval.meta.correlate",
    "pairwise_accuracy": "ngrameval.meta.mtme",
    "tie_calibrated": "ngrameval.meta.mtme",
    "assign_ranks": "ngrameval.meta.mtme_sets",
    "soft_pairwise_accuracy": "ngrameval.meta.spa",
    "mqm_segment_scores": "ngrameval.meta.mqm",
    "bradley_terry": "ngrameval.meta.bradley_terry",
    "sequential_status": "ngrameval.meta.sequential",
    "plan_study": "ngrameval.meta.plan",
}

if TYPE_CHECKING:
    from ngrameval.api import RougeScore, Score, aev, bleu, measure, nist, rouge, score
    from ngrameval.corpus.paraphrase import ParaphraseResult, paraphrase, pinc, se
    from ngrameval.matrices.matrix import pairwise
    from ngrameval.meta.bradley_terry import bradley_terry
    from ngrameval.meta.correlate import correlate
    from ngrameval.meta.mqm import mqm_segment_scores
    from ngrameval.meta.mtme import pairwise_accuracy, tie_calibrated
    from ngrameval.meta.mtme_sets import assign_ranks
    from ngrameval.meta.plan import plan_study
    from ngrameval.meta.sequential import sequential_status
    from ngrameval.meta.significance import Comparison, compare, paired_test
    from ngrameval.meta.spa import soft_pairwise_accuracy
    from ngrameval.metrics import BLEU, NIST, AEv, Rouge
    from ngrameval.metrics.registry import MetricSpec, parse_specs
    from ngrameval.ngrams import MetricRows, References, Stats, overlap_stats
    from ngrameval.scale.stored import RunStats, count_stats, merge_stats, read_stats, write_stats
    from ngrameval.text import Preprocess, preprocess, tokenize_lines


# Modules that moved (the floors of docs/contributing.md): the old path still imports, as a module that forwards
# every name to the new one and raises a FutureWarning naming it (docs/deprecations.md). Kept here, one table,
# so no stub file sits in the package.
MOVED: dict[str, str] = {
    "ngrameval.demo": "ngrameval.cli.demo",
    "ngrameval.distributed": "ngrameval.scale.dask",
    "ngrameval.distributed.blocks": "ngrameval.scale.dask.blocks",
    "ngrameval.distributed.cluster": "ngrameval.scale.dask.cluster",
    "ngrameval.distributed.commands": "ngrameval.cli.scheduler",
    "ngrameval.distributed.gather": "ngrameval.scale.dask.gather",
    "ngrameval.distributed.local": "ngrameval.jobs",
    "ngrameval.distributed.nist": "ngrameval.scale.dask.nist",
    "ngrameval.meta.mtme_report": "ngrameval.report.mtme",
    "ngrameval.paraphrase": "ngrameval.corpus.paraphrase",
    "ngrameval.refcounts": "ngrameval.scale.refcounts",
    "ngrameval.refspill": "ngrameval.scale.refspill",
    "ngrameval.report.html_data": "ngrameval.meta.report_data",
    "ngrameval.stream": "ngrameval.scale.batches",
    "ngrameval.streaming": "ngrameval.scale.files",
    "ngrameval.tabular": "ngrameval.report.tabular",
    "ngrameval.validate": "ngrameval.text.validate",
}


class _Moved(types.ModuleType):
    """The old import path of a moved module: every name is the new module's (imported on first use, so an old path
    costs nothing at start-up), with one FutureWarning naming the new path. Registered in ``sys.modules`` rather than
    found by an import hook, so importing it never rebinds the parent's attribute (``ngrameval.paraphrase`` stays the
    function)."""

    def __init__(self, old: str, new: str) -> None:
        super().__init__(old, f"Deprecated alias of :mod:`{new}` (to be removed in 0.2.0).")
        self.moved_to = new
        self.warned = False

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name != "__all__":  # probes (inspect, pickle, doctest) import nothing
            raise AttributeError(name)
        if not self.warned:
            self.warned = True
            message = f"{self.__name__} is deprecated and will be removed in 0.2.0: import {self.moved_to} instead"
            warnings.warn(message, FutureWarning, stacklevel=2)
        new = importlib.import_module(self.moved_to)
        try:
            return getattr(new, name)
        except AttributeError:
            if f"{self.__name__}.{name}" in MOVED:  # a moved package's moved submodule
                return sys.modules[f"{self.__name__}.{name}"]
            raise


for _old, _new in MOVED.items():
    sys.modules.setdefault(_old, _Moved(_old, _new))


def _find_spec(name: str) -> object:
    """``importlib.util.find_spec(name)``, importing importlib.util only when a name is looked up."""
    import importlib.util

    return importlib.util.find_spec(name)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value  # found: later uses skip this function
        return value
    if f"{__name__}.{name}" in MOVED:  # ``ngrameval.tabular.html_table`` after ``import ngrameval``
        return sys.modules[f"{__name__}.{name}"]
    if not name.startswith("__") and _find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")  # ``ngrameval.api`` after ``import ngrameval`` alone
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BLEU",
    "NIST",
    "AEv",
    "Comparison",
    "ConfigError",
    "InputError",
    "InputTypeError",
    "LimitError",
    "MetricRows",
    "MetricSpec",
    "MissingDependencyError",
    "ParaphraseResult",
    "Preprocess",
    "References",
    "Rouge",
    "RougeScore",
    "RunStats",
    "Score",
    "Stats",
    "UndefinedMetricWarning",
    "__version__",
    "aev",
    "assign_ranks",
    "bleu",
    "bradley_terry",
    "compare",
    "correlate",
    "count_stats",
    "measure",
    "merge_stats",
    "mqm_segment_scores",
    "nist",
    "overlap_stats",
    "paired_test",
    "pairwise",
    "pairwise_accuracy",
    "paraphrase",
    "parse_specs",
    "pinc",
    "plan_study",
    "preprocess",
    "read_stats",
    "rouge",
    "score",
    "se",
    "sequential_status",
    "soft_pairwise_accuracy",
    "tie_calibrated",
    "tokenize_lines",
    "write_stats",
]
