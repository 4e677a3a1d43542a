"""Argument checks shared by every public function: texts, references and numeric options.

Texts are lists (or tuples, or any sequence) of ``str``, one per segment; numpy/pandas arrays of ``str``
(dtype ``U`` or ``object`` holding ``str``) are accepted and read as lists. A bare ``str`` (which would be
scored as one segment per character), ``bytes``, ``None``, numbers, nested lists where a string is expected and
arrays of other dtypes raise :class:`~ngrameval.errors.InputTypeError` (a ``TypeError``) naming the argument
and the position. Numeric options outside their documented range raise
:class:`~ngrameval.errors.ConfigError` naming the option and the range.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ngrameval import _direct, _overlap
from ngrameval.errors import ConfigError, InputError, InputTypeError

MAX_ORDER: int = _overlap.MAX_ORDER  # the highest n-gram order the counting kernel takes (100)
# the largest magnitude of an option that is squared (chrF and coco ROUGE-L beta, CIDEr-D sigma; sigma at least its
# inverse): the square (<= 1e200) and its products with counts and lengths stay finite and non-zero
MAX_SQUARED = 1e100


def _kind(x: object) -> str:
    return "None" if x is None else type(x).__name__


def _short(x: object, width: int = 40) -> str:
    if isinstance(x, list | tuple) and len(x) > width:
        x = x[:width]  # the same first characters: repr of a whole corpus is slow and cut anyway
    text = repr(x)
    return text if len(text) <= width else text[: width - 3] + "..."


def _as_list(value: object, name: str) -> object:
    """A numpy/pandas array of ``str`` as a (nested) list; any other array dtype is an InputTypeError."""
    dtype = getattr(value, "dtype", None)
    if dtype is None or not hasattr(value, "tolist"):
        return value
    if getattr(dtype, "kind", None) not in ("U", "O"):
        raise InputTypeError(f"{name} must hold str (one per segment), got an array of dtype {dtype}")
    return value.tolist()


def _bad_element(seq: Sequence[Any], name: str) -> None:
    for i, x in enumerate(seq):
        if not isinstance(x, str):
            raise InputTypeError(f"{name}[{i}] must be a str (one segment), got {_kind(x)}: {_short(x)}")


def _sequence(value: object, name: str, example: str) -> Sequence[Any]:
    """A sequence of segments: arrays and Series as lists, a generator or iterator materialised once."""
    value = _as_list(value, name)
    if isinstance(value, Iterator) and not isinstance(value, str | bytes | bytearray):
        value = list(value)
    if isinstance(value, str):
        raise InputTypeError(
            f"{name} must be a list of segments, not a single str (it would be scored as one segment per "
            f"character); wrap it in a list: {example}"
        )
    if isinstance(value, bytes | bytearray) or not isinstance(value, Sequence):
        raise InputTypeError(f"{name} must be a list of str (one per segment), got {_kind(value)}: {_short(value)}")
    return value


def texts(value: object, name: str, example: str = "") -> Sequence[str]:
    """``value`` as a sequence of ``str`` (arrays become lists); InputTypeError naming ``name`` and the position.

    >>> texts(("a b", "c"), "hyps")
    ('a b', 'c')
    """
    seq = _sequence(value, name, example or f"{name}=[{_short(value)}]")
    if _direct.layout(seq) != 0:
        _bad_element(seq, name)
    return seq


def references(value: object, name: str = "refs", example: str = "") -> list[str] | list[list[str]]:
    """``value[i]``: the references of segment ``i``, a ``str`` (one reference) or a list of ``str``. Returns a flat
    list of ``str`` when every segment has one reference given as a ``str``, else one list per segment. Every
    segment needs at least one reference (InputError naming the segment).

    >>> references([["a", "b"], "c"])
    [['a', 'b'], ['c']]
    """
    kind, seq = _layout(value, name, example)
    if kind == 0:
        return seq if isinstance(seq, list) else list(seq)
    return list(seq) if kind == 1 else _segments_one_by_one(seq, name)


def segments(value: object, name: str = "refs", example: str = "") -> list[list[str]]:
    """:func:`references` one list per segment (``refs[i]``: the references of segment ``i``), from the same one
    C pass over the items (no second pass to tell a flat list from a segment-major one).

    >>> segments(["a", "b"])
    [['a'], ['b']]
    """
    kind, seq = _layout(value, name, example)
    if kind == 0:
        return [[r] for r in seq]
    return list(seq) if kind == 1 else _segments_one_by_one(seq, name)


def _layout(value: object, name: str, example: str) -> tuple[int, Sequence[Any]]:
    """The references as a sequence and its ``_direct.layout``: 0 every item a str, 1 every item a non-empty list
    of str, 2 anything else (checked one by one)."""
    seq = _sequence(value, name, example or f"{name}=[[{_short(value)}]]")
    return _direct.layout(seq), seq  # one C pass over the items


def _segments_one_by_one(seq: Sequence[Any], name: str) -> list[list[str]]:
    """References of any layout, one list per segment; InputTypeError / InputError naming the segment."""
    out: list[list[str]] = []
    for i, refs in enumerate(seq):
        if isinstance(refs, str):
            out.append([refs])
            continue
        refs = _as_list(refs, f"{name}[{i}]")
        if isinstance(refs, bytes | bytearray) or not isinstance(refs, Sequence):
            raise InputTypeError(
                f"{name}[{i}] must be a str or a list of str (the references of segment {i + 1}), "
                f"got {_kind(refs)}: {_short(refs)}"
            )
        if not set(map(type, refs)) <= {str}:
            _bad_element(refs, f"{name}[{i}]")
        if not refs:
            raise InputError(f"{name}: segment {i + 1} has no reference; every segment needs at least one")
        out.append(refs if isinstance(refs, list) else list(refs))
    return out


def stream_major_hint(seg_refs: Sequence[Sequence[str]], n_segments: int) -> str:
    """A hint when ``seg_refs`` looks like sacreBLEU's stream-major layout (one list per reference stream, each
    with a reference for every segment) rather than ngrameval's ``refs[i]`` = the references of segment ``i``."""
    if len(seg_refs) == n_segments or not seg_refs or any(len(r) != n_segments for r in seg_refs):
        return ""
    return (
        f"; refs looks stream-major (sacreBLEU's [[ref 1 of every segment], ...]: {len(seg_refs)} "
        f"stream{'s' if len(seg_refs) != 1 else ''} of "
        f"{n_segments}), but refs[i] must hold the references of segment i: pass list(zip(*refs))"
    )


def read_once_hint(given: object, name: str, n_items: int) -> str:
    """A hint for a length error when ``given`` (what the caller passed as ``name``) was a generator or iterator that
    gave no item: it is read once, so a second call finds it used up."""
    if isinstance(given, Iterator) and n_items == 0:
        return f"; {name} is a generator or iterator, read once: was it used up by an earlier call? Pass a list"
    return ""


def systems(value: object, name: str = "systems") -> dict[str, Sequence[str]]:
    """A mapping system name -> texts, every text checked (see :func:`texts`)."""
    if not isinstance(value, Mapping):
        raise InputTypeError(
            f"{name} must be a mapping of system name -> list of segments, e.g. {{'sys1': ['the cat']}}; "
            f"got {_kind(value)}: {_short(value)}"
        )
    out: dict[str, Sequence[str]] = {}
    for key, hyps in value.items():
        if not isinstance(key, str):
            raise InputTypeError(f"{name}: system names must be str, got {_kind(key)}: {_short(key)}")
        out[key] = texts(hyps, f"{name}[{key!r}]", f"{name}={{{key!r}: [{_short(hyps)}]}}")
    return out


def pair_example(fn: str, hyps: object, refs: object) -> str:
    """The right call of ``fn`` for a bare string: ``ngrameval.bleu(['the cat'], [['the cat']])``."""
    h = f"[{_short(hyps)}]" if isinstance(hyps, str) else "hyps"
    r = f"[[{_short(refs)}]]" if isinstance(refs, str) else "refs"
    return f"ngrameval.{fn}({h}, {r})"


def number(
    value: object,
    name: str,
    low: float,
    high: float = math.inf,
    *,
    low_open: bool = False,
    allow_inf: bool = False,
) -> float:
    """A real number in ``[low, high]`` (``(low, high]`` with ``low_open``); NaN always and infinity unless
    ``allow_inf`` are ConfigErrors naming ``name`` and the range."""
    lo = "(" if low_open else "["
    hi = "inf]" if allow_inf and high == math.inf else f"{high:g}]" if high != math.inf else "inf)"
    valid = f"a {'' if allow_inf else 'finite '}number in {lo}{low:g}, {hi}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ConfigError(f"{name} must be {valid}, got {_kind(value)}: {_short(value)}")
    x = float(value)
    bad = math.isnan(x) or (math.isinf(x) and not allow_inf)
    bad = bad or x < low or (low_open and x == low) or x > high
    if bad:
        raise ConfigError(f"{name} must be {valid}, got {x:g}")
    return x


def integer(value: object, name: str, low: int = 1, high: int = MAX_ORDER) -> int:
    """A whole number in ``[low, high]``; a ConfigError naming ``name`` and the range otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ConfigError(f"{name} must be a whole number from {low} to {high}, got {_kind(value)}: {_short(value)}")
    n = int(value)
    if not low <= n <= high:
        raise ConfigError(f"{name} must be a whole number from {low} to {high}, got {n}")
    return n
