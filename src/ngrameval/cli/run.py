"""``main``: parse, run one subcommand, and turn every error into one line and an exit status."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Sequence

from ngrameval import progress
from ngrameval.cli.flags import in_flags
from ngrameval.cli.inputs import input_paths
from ngrameval.cli.options import is_metric_name
from ngrameval.cli.parser import build_parser
from ngrameval.errors import ConfigError, InputError, MissingDependencyError, UndefinedMetricWarning
from ngrameval.io.read import STDIN
from ngrameval.io.write import check_not_input


def _fail(message: str, code: int = 2) -> int:
    print(f"ngrameval: error: {message}", file=sys.stderr)
    return code


def _run(args: argparse.Namespace) -> int:
    """The subcommand, with progress bars on standard error when it is a terminal and -q is not given, and a Ctrl-C
    remembered (:func:`ngrameval.progress.remembered_interrupts`)."""
    on = not getattr(args, "quiet", False) and sys.stderr is not None and sys.stderr.isatty()
    with progress.shown(on), progress.remembered_interrupts():
        return int(args.func(args))


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. Exit status: 0 done, 2 bad input or options (one line on stderr, nothing written),
    130 interrupted (Ctrl-C), 1 an internal error (a bug: one line, the traceback with NGRAMEVAL_TRACEBACK=1)."""
    try:
        warnings.formatwarning = lambda msg, cat, *a, **k: f"ngrameval: warning: {in_flags(str(msg))}\n"
        try:
            args = build_parser(sys.argv[1:] if argv is None else argv).parse_args(argv)
        except SystemExit as exc:  # --help, --version, or the one-line usage error already printed
            return int(exc.code or 0)
        warnings.simplefilter("default", UndefinedMetricWarning)
        if getattr(args, "quiet", False):
            warnings.simplefilter("ignore")
        if input_paths(args).count(STDIN) > 1:
            raise InputError("standard input ('-') can be read once: give the other inputs as files")
        check_not_input(getattr(args, "output", None), input_paths(args), "-o")
        if getattr(args, "max_cells", None) is None:
            return _run(args)
        from ngrameval.limits import set_max_cells

        previous = set_max_cells(args.max_cells)
        try:  # the bound is the process's: main() called from Python must not leave it changed
            return _run(args)
        finally:
            set_max_cells(previous)
    except (InputError, ConfigError, MissingDependencyError) as exc:
        said = in_flags(str(exc))  # the library names parameters; the command line says its options
        missing = said.removesuffix(": no such file")
        if missing != said and not os.path.exists(missing) and is_metric_name(missing):
            return _fail(f"{said} (a metric name? -m takes one comma-separated list: -m METRIC,{missing})")
        return _fail(said)
    except KeyboardInterrupt:
        print("ngrameval: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (| head): say nothing, and keep Python from complaining at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except MemoryError:
        return _fail("out of memory: the input is too large for this machine (split it, or use fewer systems)")
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        return _fail(f"{where}{exc.strerror or exc}")
    except RecursionError as exc:
        return _fail(f"input too deeply nested ({exc})")
    except Exception as exc:
        if os.environ.get("NGRAMEVAL_TRACEBACK"):
            raise
        return _fail(f"internal error ({type(exc).__name__}: {exc}); please report it with the command line", 1)
