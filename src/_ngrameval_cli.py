"""The ``ngrameval`` command's entry point, outside the package on purpose: importing ``ngrameval`` loads numpy and
the kernels (a second or more on a busy machine), and a Ctrl-C then would end in a traceback, since the command
line's own handler (:func:`ngrameval.cli.run.main`) is not reached yet. This module imports nothing heavy, so the
handler below covers the package's import too: exit status 130 and one line, as after it."""

from __future__ import annotations

import sys


def main() -> int:
    """Imports the command line and runs it; Ctrl-C during the import exits 130 with one line on stderr."""
    try:
        from ngrameval.scale.early import start  # the standard library and one kernel: no NumPy yet

        start(sys.argv[1:])  # a plain `score` on threads: its files counted while the rest loads
        from ngrameval.cli import main as run
    except KeyboardInterrupt:
        print("ngrameval: interrupted", file=sys.stderr)
        return 130
    return run()
