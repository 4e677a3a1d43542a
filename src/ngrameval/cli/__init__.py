"""The command line: one module per subcommand (its options and its ``cmd_*`` function), the shared option groups
(:mod:`~ngrameval.cli.options`) and inputs (:mod:`~ngrameval.cli.inputs`), the parser that puts them together
(:mod:`~ngrameval.cli.parser`) and :func:`main`, the only place that prints errors and exits
(:mod:`~ngrameval.cli.run`)."""

from ngrameval.cli.options import KRIPPENDORFF_CHOICES
from ngrameval.cli.parser import build_parser
from ngrameval.cli.run import main

__all__ = ["KRIPPENDORFF_CHOICES", "build_parser", "main"]
