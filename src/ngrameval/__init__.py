"""ngrameval: n-gram co-occurrence metrics (AEv family, BLEU, NIST, ROUGE, PINC, SE) computed exactly and fast,
with significance tests between systems.

Scores are fractions in [0, 1] in this API (NIST has its own scale); text output shows 0-100.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings
from importlib.machinery import ModuleSpec
from typing import TYPE_CHECKING, Any

from ngrameval._version import __version__
from ngrameval.api import RougeScore, Score, aev, bleu, measure, nist, rouge, score
from ngrameval.corpus.paraphrase import ParaphraseResult, paraphrase, pinc, se
from ngrameval.errors import (
    ConfigError,
    InputError,
    InputTypeError,
    LimitError,
    MissingDependencyError,
    UndefinedMetricWarning,
)
from ngrameval.metrics import BLEU, NIST, AEv, Rouge
from ngrameval.metrics.registry import MetricSpec, parse_specs
from ngrameval.ngrams import MetricRows, References, Stats, overlap_stats
from ngrameval.text import Preprocess, preprocess, tokenize_lines

# Significance needs scipy (~1 s to import): loaded on first use, so that scoring starts fast. (A lazy name must
# not be a submodule's name too: importing the submodule would shadow it.)
_LAZY = {
    "Comparison": "ngrameval.meta.significance",
    "compare": "ngrameval.meta.significance",
    "paired_test": "ngrameval.meta.significance",
    "correlate": "ngrameval.meta.correlate",
    "pairwise_accuracy": "ngrameval.meta.mtme",
    "tie_calibrated": "ngrameval.meta.mtme",
    "assign_ranks": "ngrameval.meta.mtme_sets",
}

if TYPE_CHECKING:
    from ngrameval.meta.correlate import correlate
    from ngrameval.meta.mtme import pairwise_accuracy, tie_calibrated
    from ngrameval.meta.mtme_sets import assign_ranks
    from ngrameval.meta.significance import Comparison, compare, paired_test


# Modules that moved (the floors of docs/contributing.md): the old path still imports, as a module that forwards
# every name to the new one and raises a FutureWarning naming it (docs/deprecations.md). Kept here, one table,
# so no stub file sits in the package root.
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


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports ``old`` of :data:`MOVED` as a forwarding module (a package if the new one is)."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> ModuleSpec | None:
        if name not in MOVED:
            return None
        new = importlib.util.find_spec(MOVED[name])
        return importlib.util.spec_from_loader(name, self, is_package=bool(new and new.submodule_search_locations))

    def create_module(self, spec: ModuleSpec) -> None:
        return None  # the default: a new, empty module

    def exec_module(self, module: types.ModuleType) -> None:
        new = MOVED[module.__name__]
        warnings.warn(f"{module.__name__} is deprecated and will be removed in 0.2.0: import {new} instead",
                      FutureWarning, stacklevel=2)  # fmt: skip
        target = importlib.import_module(new)
        module.__dict__.update({k: v for k, v in vars(target).items() if not k.startswith("__")})
        module.__doc__ = f"Deprecated alias of :mod:`{new}`."
        module.__getattr__ = lambda name: getattr(target, name)  # type: ignore[method-assign]


sys.meta_path.insert(0, _MovedModules())


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    if f"{__name__}.{name}" in MOVED:  # ``ngrameval.tabular.html_table`` after ``import ngrameval``
        return importlib.import_module(f"{__name__}.{name}")
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
    "Score",
    "Stats",
    "UndefinedMetricWarning",
    "__version__",
    "aev",
    "assign_ranks",
    "bleu",
    "compare",
    "correlate",
    "measure",
    "nist",
    "overlap_stats",
    "paired_test",
    "pairwise_accuracy",
    "paraphrase",
    "parse_specs",
    "pinc",
    "preprocess",
    "rouge",
    "score",
    "se",
    "tie_calibrated",
    "tokenize_lines",
]
