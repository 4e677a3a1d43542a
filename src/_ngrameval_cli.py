"""The ``ngrameval`` command's entry point, outside the package on purpose: importing ``ngrameval`` loads numpy and
the kernels (a second or more on a busy machine), and a Ctrl-C then would end in a traceback, since the command
line's own handler (:func:`ngrameval.cli.run.main`) is not reached yet. This module imports nothing heavy, so the
handler below covers the package's import too: exit status 130 and one line, as after it."""

from __future__ import annotations

import atexit
import gc
import os
import sys

TYPE_CHECKING = False  # (typing is not loaded here: mypy reads this name as typing's)
if TYPE_CHECKING:
    from typing import NoReturn

# OpenBLAS (NumPy's BLAS) starts a thread a core when NumPy is imported, and each busy-waits 2**28 cycles (~0.1 s
# of a core here) for work before it sleeps, after start-up and after every product: a command that multiplies no
# matrix paid that core's time, taken from the counting threads of `score --jobs 2` (2 x 100k segments: 0.265 s ->
# 0.218 s whole, best of 15 with the spin cut to 2**4 cycles). The threads still serve the products (resampling);
# a woken thread costs microseconds. A value the user set is kept.
BLAS_SPIN = ("OPENBLAS_THREAD_TIMEOUT", "4")


def main() -> int:
    """Imports the command line and runs it; Ctrl-C during the import exits 130 with one line on stderr."""
    os.environ.setdefault(*BLAS_SPIN)  # before NumPy is imported
    # The imports make ~22k tracked objects that live as long as the process and hold few cycles: the collector is off
    # while they load (~57 passes, ~7 ms here), and then they are frozen, so that the run's full collections do not
    # walk them (NIST, 2 x 100k segments, two jobs: 0.73 -> 0.66 s; with them, one pass took 26 ms).
    gc.disable()
    try:
        import ngrameval._direct as _direct  # (the one kernel early loads: no NumPy yet)
        from ngrameval.scale.early import start  # the standard library and that kernel

        _direct.exit_on_bus_error()  # an input file truncated while mapped: one line naming it, exit 2 (not SIGBUS)
        start(sys.argv[1:])  # a plain `score` on threads: its files counted while the rest loads
        from ngrameval.cli import main as run
    except KeyboardInterrupt:
        print("ngrameval: interrupted", file=sys.stderr)
        return 130
    gc.freeze()
    gc.enable()
    status = run()
    # The interpreter's exit collects every tracked object once more (~10 ms of the ~16 ms it spends after a command
    # that loaded NumPy and the metrics). Every file the command wrote is closed by now and standard output is flushed
    # by the interpreter itself, so the objects left are only freed: they are moved out of the collector's sight.
    # (leave() skips that exit altogether; this serves its sys.exit and a caller of main().)
    gc.freeze()
    return status


def command() -> NoReturn:
    """The console script and ``python -m ngrameval``: :func:`main`, then :func:`leave` with its status."""
    leave(main())


def leave(status: int) -> NoReturn:
    """Ends the process with ``status``, as ``sys.exit`` does but without the interpreter's teardown of every module
    and object (~8 ms here after a command that loaded NumPy and the metrics: time on one core that ``score --jobs
    2`` cannot share). What that exit does for the command is done first: the exit functions run (``atexit``: the
    finalizers of temporary directories, logging, coverage) and the standard streams are flushed. When a thread
    that is not a daemon still runs (the interpreter would wait for it) or a flush fails (the interpreter reports it),
    this is ``sys.exit``. mypy ends its runs the same way (``mypy.util.hard_exit``)."""
    threads = sys.modules.get("threading")  # (loaded by any command that started a thread)
    if threads is not None and any(
        not t.daemon and t.is_alive() and t is not threads.main_thread() for t in threads.enumerate()
    ):
        sys.exit(status)
    atexit._run_exitfuncs()
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        sys.exit(status)
    os._exit(status)
