"""Deprecated alias of :mod:`ngrameval.scale.dask.nist`: moved in 0.1.0, removed in 0.2.0 (docs/deprecations.md)."""

import importlib
import sys
import warnings

NEW = "ngrameval.scale.dask.nist"
warnings.warn(f"{__name__} is deprecated: import {NEW}", DeprecationWarning, stacklevel=2)
sys.modules[__name__] = importlib.import_module(NEW)
