"""Deprecated alias of :mod:`ngrameval.scale.files`: moved in 0.1.0, removed in 0.2.0 (docs/deprecations.md)."""

import importlib
import warnings
from typing import Any

NEW = "ngrameval.scale.files"
warnings.warn(f"{__name__} is deprecated: import {NEW}", DeprecationWarning, stacklevel=2)
_new = importlib.import_module(NEW)


def __getattr__(name: str) -> Any:
    return getattr(_new, name)  # every name of the new module, the same objects


def __dir__() -> list[str]:
    return dir(_new)
