"""The command line's words for the library's parameters, in one table.

A library error names the parameter as the API spells it (``alpha_step must divide 1``, ``give them
(source=)``); where the command line reports an error (:func:`ngrameval.cli.run.main`) it names the option
instead, through :data:`PARAMETER_FLAGS`. A new library message naming a parameter an option sets gets its
row here, and a test in ``tests/test_cli_flags.py`` holding both spellings."""

from __future__ import annotations

import re

# (the library's words, the command line's words): each row's source message in the comment
PARAMETER_FLAGS: tuple[tuple[str, str], ...] = (
    ("alpha_step", "alpha step (--alpha-step)"),  # meta.plane.alpha_grid
    ("(judge= of read_judgments)", "(--judge-column)"),  # meta.agreement.judge_table
    ("give tier=None", "drop --tier"),  # corpus.select
    ("(source=)", "(--source / source=)"),  # api: PINC without source sentences
    ("with ngrameval.limits.set_max_cells()", "with --max-cells or ngrameval.limits.set_max_cells()"),  # limits
    ("bootstrap resamples (n_resamples=", "bootstrap resamples (--paired-bs-n "),  # meta.significance warning
    ("AR trials (n_resamples=", "AR trials (--paired-ar-n "),  # meta.significance warning
)

# words ending in "=" are followed by their value; others must not run on into a longer name
_PATTERN = re.compile(
    "|".join(rf"(?<![\w-]){re.escape(w)}" + ("" if w.endswith("=") else r"(?![\w-])") for w, _ in PARAMETER_FLAGS)
)
_FLAGS = dict(PARAMETER_FLAGS)


def in_flags(message: str) -> str:
    """``message`` (a library error's) with every parameter of :data:`PARAMETER_FLAGS` said as its option.

    >>> in_flags("alpha_step must divide 1 (0.1, 0.05, 0.001 ...), got 0.3")
    'alpha step (--alpha-step) must divide 1 (0.1, 0.05, 0.001 ...), got 0.3'
    """
    return _PATTERN.sub(lambda m: _FLAGS[m.group(0)], message)
