"""Exceptions and warnings of ngrameval; each subclasses the builtin a caller would expect."""

from __future__ import annotations


class InputError(ValueError):
    """Bad user input: names the file, the line and what was expected."""


class LimitError(InputError):
    """An input would exceed a documented resource bound (ngrameval.limits); the message names the segment,
    what it would need and the option that raises the bound."""


class ConfigError(ValueError):
    """An unknown metric, option or option value; the message lists the valid ones."""


class MissingDependencyError(ImportError):
    """An optional dependency is not installed; the message gives the pip command."""

    def __init__(self, package: str, extra: str) -> None:
        super().__init__(f"{package} is needed for this; install it with: pip install 'ngrameval[{extra}]'")


class UndefinedMetricWarning(UserWarning):
    """A score was undefined (0/0 or log 0) and was set to 0, as the documented policy says."""


class InputTypeError(InputError, TypeError):
    """An argument of the wrong type (a bare ``str`` for a list of segments, None, bytes, a number ...);
    the message names the argument and the position and shows the right call."""
