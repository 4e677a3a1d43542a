"""Output files: never onto an input, atomic for regular files, in place for anything else; JSON without NaN.

:func:`write_atomic` resolves the path (following symbolic links) and then

* a regular file, or a name that does not exist yet: writes a temporary file beside it and renames it over the
  target (readers see the old file or the whole new one); an existing file keeps its permission bits, a new one
  gets the usual ``0666 & ~umask``; a symbolic link stays a link and its target is replaced;
* ``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N``: writes to that open descriptor (no truncation of what it is
  redirected to);
* anything else (a FIFO, a device, a file under ``/proc`` or ``/sys``): opens and writes it in place.

SIGTERM and SIGHUP (when they have their default action) and SIGINT remove the temporary file before the process
ends. Every failure is an :class:`InputError` naming the path and the reason, in one line.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import math
import os
import re
import signal
import stat
import sys
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

from ngrameval.errors import InputError

_OWN_FD = re.compile(r"/proc/(\d+)/(?:task/\d+/)?fd/(\d+)")
_MAX_LINKS = 40
_REASONS = {
    errno.EISDIR: "is a directory",
    errno.ENOTDIR: "a part of the path is not a directory",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EROFS: "read-only file system",
    errno.ENOSPC: "no space left on device",
    errno.EDQUOT: "disk quota exceeded",
    errno.ENXIO: "no such device or address (a socket, or a FIFO without a reader?)",
    errno.ELOOP: "too many levels of symbolic links",
    errno.ENAMETOOLONG: "file name too long",
    errno.EBADF: "the descriptor is not open for writing",
}


def _error(path: str | Path, exc: OSError) -> InputError:
    if exc.errno == errno.ENOENT:
        parent = os.path.dirname(os.path.abspath(path))
        reason = f"directory {parent} does not exist" if not os.path.isdir(parent) else "no such file or directory"
    else:
        reason = _REASONS.get(exc.errno or 0) or (exc.strerror or str(exc)).lower()
    return InputError(f"{path}: cannot write ({reason})")


def check_not_input(output: str | Path | None, inputs: Iterable[str | Path | None], option: str = "-o") -> None:
    """Refuse an existing regular file ``output`` that is one of ``inputs`` (same file: through a symbolic
    or a hard link too), before anything is computed. A path that does not exist yet is fine; so are special
    files (``-o /dev/stdout`` with ``/dev/stdin`` as input on one terminal)."""
    if output is None:
        return
    try:
        out = os.stat(output)
    except (OSError, ValueError):
        return  # does not exist (fine) or cannot be stat'ed (the write reports it)
    if not stat.S_ISREG(out.st_mode):
        return
    for inp in inputs:
        if inp is None:
            continue
        try:
            st = os.stat(inp)
        except (OSError, ValueError):
            continue
        if (st.st_dev, st.st_ino) == (out.st_dev, out.st_ino):
            same = "" if os.path.abspath(inp) == os.path.abspath(output) else f" ({inp})"
            raise InputError(f"{option} {output}: is an input{same}; writing would replace it: choose another file")


@dataclasses.dataclass(frozen=True)
class _Target:
    path: str
    fd: int | None  # an open descriptor of this process (/dev/stdout, /dev/fd/N)
    in_place: bool


def _resolve(path: str | Path) -> _Target:
    """Follow the symbolic links of the last component of ``path``; directories are resolved as the kernel does."""
    p = os.path.abspath(path)
    for _ in range(_MAX_LINKS):
        parent = os.path.realpath(os.path.dirname(p))
        p = os.path.join(parent, os.path.basename(p))
        m = _OWN_FD.fullmatch(p)
        if m and int(m.group(1)) == os.getpid():
            return _Target(p, int(m.group(2)), True)
        if not os.path.islink(p):
            break
        p = os.path.join(parent, os.readlink(p))
    else:
        raise InputError(f"{path}: cannot write ({_REASONS[errno.ELOOP]})")
    if parent.split(os.sep)[1:2] in (["proc"], ["sys"]):
        return _Target(p, None, True)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        return _Target(p, None, False)
    except OSError as exc:
        raise _error(path, exc) from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{path}: cannot write ({_REASONS[errno.EISDIR]})")
    return _Target(p, None, not stat.S_ISREG(st.st_mode))


class _Signalled(BaseException):
    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def _signals_raise() -> Iterator[None]:
    """Turn SIGTERM/SIGHUP (if at their default action) into an exception while the body runs, so that its
    clean-up runs; then end the process by the same signal. SIGINT is Python's KeyboardInterrupt already."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        raise _Signalled(signum)

    saved = {}
    for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if sig is not None and signal.getsignal(sig) == signal.SIG_DFL:
            saved[sig] = signal.signal(sig, handler)
    try:
        yield
    except _Signalled as exc:
        for sig, old in saved.items():
            signal.signal(sig, old)
        saved = {}
        os.kill(os.getpid(), exc.signum)  # the default action: the process ends as if never caught
        raise
    finally:
        for sig, old in saved.items():
            signal.signal(sig, old)


@contextlib.contextmanager
def _replacing(target: str, binary: bool = False) -> Iterator[Any]:
    """A temporary file beside ``target`` to write (text, or bytes when ``binary``), renamed over ``target`` when
    the body ends without an error (removed otherwise)."""
    directory, name = os.path.split(target)
    try:
        mode: int | None = stat.S_IMODE(os.stat(target).st_mode) & 0o777
    except FileNotFoundError:
        mode = None
    if mode is not None and not os.access(target, os.W_OK):
        raise PermissionError(errno.EACCES, "permission denied")  # a read-only file stays read-only
    with _signals_raise():
        for _ in range(100):
            tmp = os.path.join(directory, f".{name}.{os.urandom(4).hex()}.tmp")
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
                break
            except FileExistsError:
                continue
        else:  # pragma: no cover - 100 collisions of 32 random bits
            raise FileExistsError(errno.EEXIST, "no free temporary name")
        try:
            if mode is not None:
                os.fchmod(fd, mode)
            with os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                yield fh
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def _replace(target: str, text: str | bytes) -> None:
    """Write a temporary file beside ``target`` and rename it over ``target``."""
    with _replacing(target, isinstance(text, bytes)) as fh:
        fh.write(text)


def _open(target: int | str, text: str | bytes) -> Any:
    """``target`` (a descriptor or a path) opened to write ``text``: in binary mode for bytes, else UTF-8."""
    return open(target, "wb") if isinstance(text, bytes) else open(target, "w", encoding="utf-8", newline="")


def _write_fd(fd: int, text: str | bytes) -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, OSError, ValueError):
            if stream.fileno() == fd:
                stream.flush()
    with _open(os.dup(fd), text) as fh:
        fh.write(text)


def write_atomic(path: str | Path, text: str | bytes) -> None:
    """Write ``text`` (UTF-8; bytes as they are) to ``path``: atomically if it is (or will be) a regular file, else
    in place.

    Raises :class:`InputError` naming ``path`` and the reason for every ``OSError`` but a broken pipe (which the
    command line treats as a reader that has had enough).
    """
    if str(path).endswith(("/", os.sep)):
        raise InputError(f"{path}: cannot write (names a directory)")
    target = _resolve(path)
    try:
        if target.fd is not None:
            _write_fd(target.fd, text)
        elif target.in_place:
            with _open(target.path, text) as fh:
                fh.write(text)
        else:
            _replace(target.path, text)
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise _error(path, exc) from None


@contextlib.contextmanager
def open_atomic(path: str | Path) -> Iterator[TextIO]:
    """:func:`write_atomic` for text written piece by piece: a file to write (UTF-8) that replaces ``path`` only
    when the body ends without an error (a regular file: a temporary file renamed; else written in place)."""
    if str(path).endswith(("/", os.sep)):
        raise InputError(f"{path}: cannot write (names a directory)")
    target = _resolve(path)
    try:
        if target.fd is not None:
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(AttributeError, OSError, ValueError):
                    if stream.fileno() == target.fd:
                        stream.flush()
            with os.fdopen(os.dup(target.fd), "w", encoding="utf-8", newline="") as fh:
                yield fh
        elif target.in_place:
            with open(target.path, "w", encoding="utf-8", newline="") as fh:
                yield fh
        else:
            with _replacing(target.path) as fh:
                yield fh
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise _error(path, exc) from None


def json_ready(x: Any) -> Any:
    """``x`` with dataclasses as dicts, arrays and numpy scalars as Python values and every non-finite float
    (NaN, +-inf) as ``None``, recursively: JSON has no NaN."""
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return json_ready(dataclasses.asdict(x))
    if isinstance(x, dict):
        return {k: json_ready(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [json_ready(v) for v in x]
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if hasattr(x, "tolist") and not isinstance(x, str | bytes):  # numpy arrays and scalars
        return json_ready(x.tolist())
    return x


def dumps_json(obj: Any, indent: int | None = 2) -> str:
    """``obj`` as JSON text ending in a newline, NaN/inf as ``null``; ``allow_nan=False`` guards the rest."""
    return json.dumps(json_ready(obj), indent=indent, ensure_ascii=False, allow_nan=False) + "\n"
