"""The one policy for undefined values (SPEC §2): a log of 0 or a 0/0 makes the score 0, and the
caller is told how many scores that hit through :class:`~ngrameval.errors.UndefinedMetricWarning`."""

from __future__ import annotations

import contextlib
import contextvars
import math
import re
import threading
import warnings
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ngrameval.errors import UndefinedMetricWarning
from ngrameval.text.validate import number

FloatArray = NDArray[np.float64]

# sacreBLEU's smoothing methods and their default values (Chen & Cherry 2014, methods 1-3).
SACREBLEU_SMOOTH = {"none": None, "floor": 0.1, "add-k": 1.0, "exp": None}


def check_smooth_value(method: str, value: float | None, name: str = "smooth_value") -> None:
    """ConfigError unless ``value`` is None or fits ``method``: ``floor`` in [0, 1] (a floored precision
    ``value / t`` stays <= 1), any other method a finite number >= 0 (``add-k``'s k)."""
    if value is not None:
        number(value, f"{name} (smoothing {method})", 0.0, 1.0 if method == "floor" else math.inf)


def smooth_label(method: str, value: float | None) -> str:
    """``exp``, ``floor[0.10]``: the smoothing as signatures print it (sacreBLEU's spelling)."""
    default = SACREBLEU_SMOOTH.get(method)
    return method if default is None else f"{method}[{(value if value is not None else default):.2f}]"


def exceed_penalty(over: FloatArray, limit: FloatArray) -> FloatArray:
    """1 if ``over <= limit``, else exp(1 - over / limit), 0 when limit = 0 < over.

    BLEU's and AEv's brevity penalty is ``exceed_penalty(|r|, B|c|)``; AEv's wordiness penalty
    ``exceed_penalty(|c|, W|r|)``.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = over / np.where(limit > 0, limit, 1.0)
    return np.where(over <= limit, 1.0, np.where(limit > 0, np.exp(1.0 - ratio), 0.0))


def warn_undefined(undefined: NDArray[np.bool_], metric: str, why: str) -> None:
    """Warn once, with the count, when any score was undefined and set to 0 (also when none was, inside
    :func:`counting_zeros`: a sum over pieces needs every piece's total)."""
    n = int(np.count_nonzero(undefined))
    if n or _zeros:
        total = undefined.size
        warn(f"{metric}: {n} of {total} score(s) undefined ({why}); reported as 0", UndefinedMetricWarning, 3)


Said = list[tuple[type[Warning], str]]  # warnings kept: (category, message)
_kept: contextvars.ContextVar[Said | None] = contextvars.ContextVar("ngrameval_kept_warnings", default=None)


def warn(message: str, category: type[Warning], stacklevel: int = 1) -> None:
    """``warnings.warn(message, category, stacklevel)``, or, inside :func:`keeping` (in this thread's context),
    the warning appended to that block's list: how ngrameval says a warning while measuring."""
    kept = _kept.get()
    if kept is None:
        warnings.warn(message, category, stacklevel=stacklevel + 1)
    else:
        kept.append((category, message))


@contextlib.contextmanager
def keeping() -> Iterator[Said]:
    """The warnings ngrameval says inside (:func:`warn`) in this thread's context, in the list yielded (filled as
    they are said), and not said. One task of a Dask worker running several at once on threads keeps its own
    warnings: unlike ``warnings.catch_warnings``, which swaps process-wide hooks (two threads entering and leaving
    it in turn restore each other's, and a warning lands in another task's list or none). Warnings of other
    libraries are not kept."""
    said: Said = []
    token = _kept.set(said)
    try:
        yield said
    finally:
        _kept.reset(token)


_COUNTED = re.compile(r"(\d+) of (\d+) ")
_zeros_lock = threading.Lock()
_zeros = 0  # open counting_zeros() blocks


@contextlib.contextmanager
def counting_zeros() -> Iterator[None]:
    """Inside, :func:`warn_undefined` also says ``"0 of M"``: the counts of pieces (systems, chunks, Dask
    partitions) are added up by :func:`say_summed`, and the total M must count the pieces without any."""
    global _zeros
    with _zeros_lock:
        _zeros += 1
    try:
        yield
    finally:
        with _zeros_lock:
            _zeros -= 1


@contextlib.contextmanager
def summed_warnings() -> Iterator[None]:
    """The warnings raised inside, each said once at the end: ``"PINC: 3 of 10 score(s) undefined ..."`` of
    several systems, chunks or partitions becomes one warning with the counts added (:func:`say_summed`), so
    scoring in memory, streamed or on Dask says the same. Inside :func:`keeping` (a task on a Dask worker) only
    ngrameval's own warnings of this thread are summed, and into that block's list: no process-wide hook is
    touched."""
    if _kept.get() is not None:
        with keeping() as said, counting_zeros():
            yield
        say_summed(said, stacklevel=4)
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with counting_zeros():
            yield
    say_summed([(w.category, str(w.message)) for w in caught], stacklevel=4)


def say_summed(items: Iterable[tuple[type[Warning], str]], stacklevel: int = 2) -> None:
    """Warn each message of ``items`` once, the counts of ``"N of M "`` messages alike added up; a count of 0
    is said only to an enclosing :func:`counting_zeros` (which adds it to its own)."""
    said: dict[tuple[type[Warning], str], list[int]] = {}
    for category, message in items:
        m = _COUNTED.search(message)
        key = (category, _COUNTED.sub("{} of {} ", message, count=1) if m else message)
        counts = said.setdefault(key, [0, 0])
        if m:
            counts[0] += int(m[1])
            counts[1] += int(m[2])
    for (category, text), (n, total) in said.items():
        counted = "{} of {} " in text
        if counted and n == 0 and not _zeros:
            continue
        warn(text.format(n, total) if counted else text, category, stacklevel=stacklevel)


def divide(num: FloatArray, den: FloatArray) -> FloatArray:
    """``num / den`` with 0 where ``den == 0``."""
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den != 0)
    return out


def accumulate_last(ufunc: np.ufunc, a: NDArray[Any]) -> NDArray[Any]:
    """``ufunc.accumulate(a, axis=-1)`` (cumulative sum, running and, ...) one column at a time: the same values,
    and for the few orders of many segments far faster than numpy's accumulate along a short last axis."""
    out = np.array(a, copy=True)
    for j in range(1, out.shape[-1]):
        ufunc(out[..., j - 1], out[..., j], out=out[..., j])
    return out


def reduce_last(ufunc: np.ufunc, a: NDArray[Any]) -> NDArray[Any]:
    """``ufunc.reduce(a, axis=-1)`` (sum, all, any) one column at a time, left to right: for the few orders of many
    segments far faster than numpy's reduction along a short last axis, and a sum in the same order as it (numpy
    adds fewer than 8 items one after the other)."""
    if a.shape[-1] < 2:
        return np.array(a[..., 0], copy=True)
    out = np.asarray(ufunc(a[..., 0], a[..., 1]))  # (of one row: a 0-d array, as the loop's out= needs)
    for j in range(2, a.shape[-1]):
        ufunc(out, a[..., j], out=out)
    return out


_ROW_WORDS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}  # a row of 1, 2, 4 or 8 bools as one word


def rows_all(a: NDArray[np.bool_]) -> NDArray[np.bool_]:
    """``a.all(axis=-1)`` of a boolean array: a C-contiguous row of 1, 2, 4 or 8 bools (BLEU's orders) read as one
    unsigned word (numpy stores True as the byte 1), else :func:`reduce_last`."""
    word = _ROW_WORDS.get(a.shape[-1]) if a.ndim == 2 and a.flags.c_contiguous else None
    if word is None:
        return np.asarray(reduce_last(np.logical_and, a))
    return np.asarray(a.view(word)[:, 0] == word(int.from_bytes(b"\x01" * a.shape[-1], "little")))


def rows_any(a: NDArray[np.bool_]) -> NDArray[np.bool_]:
    """``a.any(axis=-1)`` of a boolean array, as :func:`rows_all`."""
    word = _ROW_WORDS.get(a.shape[-1]) if a.ndim == 2 and a.flags.c_contiguous else None
    if word is None:
        return np.asarray(reduce_last(np.logical_or, a))
    return np.asarray(a.view(word)[:, 0] != 0)


def smoothed_precisions(
    correct: FloatArray, total: FloatArray, method: str, value: float | None = None
) -> tuple[FloatArray, NDArray[np.bool_]]:
    """Per-order precisions with sacreBLEU's smoothing (Chen & Cherry 2014, methods 1-3).

    ``none``: c/t; ``floor``: a zero c becomes ``value``; ``add-k``: orders >= 2 add ``value`` to c and
    t; ``exp``: the k-th order with c = 0 gets 1 / (2^k t). Orders from the first one with t = 0 on
    are not *valid* (as sacreBLEU stops there). Returns (precisions, valid); invalid orders hold 0.
    ``value`` None means the method's sacreBLEU default.
    """
    if value is None:
        value = SACREBLEU_SMOOTH.get(method) or 0.0
    # contiguous copies (add-k changes them; the columns of a Stats block are strided views, slow to compute on)
    correct = np.array(correct, dtype=np.float64, order="C")
    total = np.array(total, dtype=np.float64, order="C")
    if method == "add-k":
        correct[..., 1:] += value
        total[..., 1:] += value
    valid = accumulate_last(np.logical_and, total > 0)
    invalid = ~valid
    zero = valid & (correct == 0)
    # a valid order has t > 0 (valid runs while t > 0), so c / t there and 0 elsewhere, as divide() gives it; the
    # arrays are this call's own copies, computed in place (a fresh array of many segments costs its page faults)
    den = total
    np.copyto(den, 1.0, where=invalid)
    prec = np.divide(correct, den, out=correct)
    np.copyto(prec, 0.0, where=invalid)
    if method == "floor":
        np.copyto(prec, value / den, where=zero)
    elif method == "exp":
        k = accumulate_last(np.add, zero.astype(np.int32))
        scaled = np.ldexp(den, k, out=den)  # 2^k t, exactly (a power of two), where zero holds (den: not needed on)
        np.copyto(prec, np.divide(1.0, scaled, out=scaled), where=zero)
    return prec, valid


def weighted_log_mean(prec: FloatArray, weights: FloatArray) -> tuple[FloatArray, NDArray[np.bool_]]:
    """``exp(sum_n w_n log p_n)`` over orders with ``w_n > 0``; 0 (undefined) if any such p_n is 0."""
    used = weights > 0
    p = prec[..., used]
    undefined = np.any(p <= 0, axis=-1)
    with np.errstate(divide="ignore"):
        logs = np.where(p > 0, np.log(np.where(p > 0, p, 1.0)), 0.0)
    value = np.exp(logs @ weights[used])
    return np.where(undefined, 0.0, value), undefined
