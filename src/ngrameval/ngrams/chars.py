"""The units of chrF / chrF++: text becomes Unicode code points (characters) or interned word ids, as
:class:`Texts`, and :func:`ngram_counts` says how many n-grams of each order a text of each length has (the
clipped matches are counted by the C kernel ``ngrameval._overlap``, called from :mod:`ngrameval.metrics.chrf`).

Units follow sacreBLEU 2.x (``sacrebleu/metrics/helpers.py`` and ``chrf.py``): characters of the line
with every ``str.split()`` whitespace removed (kept when ``whitespace``); words of chrF++ are
``str.split()`` fields with one punctuation character split off the end, or else off the start, of each
field longer than one character (``_remove_punctuation``, including its ``'(hi)'`` -> ``'(hi'``, ``')'``).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import numpy as np
from numpy.typing import NDArray

from ngrameval import _text
from ngrameval.ngrams.texts import IntArray, Texts
from ngrameval.text.tokenize import PLAIN

PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


@cache
def _bmp_spaces() -> NDArray[np.bool_]:
    """``str.isspace`` of every code point of the Basic Multilingual Plane, and a final ``False``."""
    return np.array([chr(c).isspace() for c in range(0x10000)] + [False], dtype=bool)


def _is_space(cp: NDArray[np.int32]) -> NDArray[np.bool_]:
    """``str.isspace`` (the whitespace of ``str.split``) of every code point, by table lookup."""
    out: NDArray[np.bool_] = _bmp_spaces()[np.minimum(cp, 0x10000)]
    astral = np.unique(cp[cp > 0xFFFF])  # no whitespace there today; asked, not assumed
    spaces = [c for c in astral.tolist() if chr(c).isspace()]
    if spaces:
        out |= np.isin(cp, spaces)
    return out


def char_units(lines: Sequence[str], whitespace: bool) -> Texts:
    """Code points of each line (whitespace removed unless ``whitespace``).

    >>> t = char_units(["a b", "é"], whitespace=False)
    >>> t.ids.tolist(), t.off.tolist()
    ([97, 98, 233], [0, 2, 3])
    """
    off = np.zeros(len(lines) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, lines), dtype=np.int64, count=len(lines)), out=off[1:])
    ids = np.frombuffer("".join(lines).encode("utf-32-le", "surrogatepass"), dtype=np.int32)
    if whitespace:
        return Texts(ids, off)
    space = _is_space(ids)
    gone = np.flatnonzero(space)  # a line's offset moves back by the whitespace before it
    return Texts(ids[~space], off - np.searchsorted(gone, off))


def split_punctuation(line: str) -> list[str]:
    """chrF++'s words: whitespace fields, one edge punctuation character split off (end first).

    >>> split_punctuation("(hi) you, !")
    ['(hi', ')', 'you', ',', '!']
    """
    words: list[str] = []
    for w in line.split():
        if len(w) > 1 and w[-1] in PUNCTUATION:
            words += [w[:-1], w[-1]]
        elif len(w) > 1 and w[0] in PUNCTUATION:
            words += [w[0], w[1:]]
        else:
            words.append(w)
    return words


def word_units(lines: Sequence[str], vocab: dict[str, int]) -> Texts:
    """Word ids (from ``vocab``, which grows) of each line's :func:`split_punctuation` words (reference
    implementation of :class:`WordUnits`, one Python step per word)."""
    ids: list[int] = []
    off = np.zeros(len(lines) + 1, dtype=np.int64)
    for i, line in enumerate(lines):
        ids.extend(vocab.setdefault(w, len(vocab)) for w in split_punctuation(line))
        off[i + 1] = len(ids)
    return Texts(np.asarray(ids, dtype=np.int32), off)


class WordUnits:
    """chrF++'s words as ids, equal words equal ids across every call of one instance.

    The whitespace fields of the lines are interned in C (``ngrameval._text``, which splits on
    ``str.split``'s whitespace); :func:`split_punctuation` depends on the field alone, so it runs once
    per distinct field and each field id maps to one or two word ids, expanded with NumPy.

    >>> w = WordUnits()
    >>> t = w(["(hi) you, !", "you"])
    >>> t.ids.tolist(), t.off.tolist()
    ([0, 1, 2, 3, 4, 2], [0, 5, 6])
    """

    def __init__(self) -> None:
        self._vocab = _text.vocab_new()
        self._words: dict[str, int] = {}
        self._first = np.zeros(0, dtype=np.int32)  # field id -> its first word id
        self._second = np.zeros(0, dtype=np.int32)  # field id -> its second word id, or -1

    def _extend(self) -> None:
        new = _text.tokens(self._vocab, len(self._first))
        if not new:
            return
        words = self._words
        first, second = np.empty(len(new), dtype=np.int32), np.full(len(new), -1, dtype=np.int32)
        for i, field in enumerate(new):
            pieces = split_punctuation(field)
            first[i] = words.setdefault(pieces[0], len(words))
            if len(pieces) > 1:
                second[i] = words.setdefault(pieces[1], len(words))
        self._first = np.concatenate([self._first, first])
        self._second = np.concatenate([self._second, second])

    def __call__(self, lines: Sequence[str]) -> Texts:
        if not lines:
            return Texts(np.zeros(0, dtype=np.int32), np.zeros(1, dtype=np.int64))
        text = "\n".join(ln.replace("\n", " ") if "\n" in ln else ln for ln in lines)
        ids_b, off_b = _text.encode(self._vocab, text, PLAIN, True)
        fields, field_off = np.frombuffer(ids_b, dtype=np.int32), np.frombuffer(off_b, dtype=np.int64)
        self._extend()
        first, second = self._first[fields], self._second[fields]
        two = second >= 0
        starts = np.zeros(len(fields) + 1, dtype=np.int64)
        np.cumsum(1 + two, out=starts[1:])
        ids = np.empty(int(starts[-1]), dtype=np.int32)
        ids[starts[:-1]] = first
        ids[starts[:-1][two] + 1] = second[two]
        return Texts(ids, starts[field_off])


def ngram_counts(lens: IntArray, max_order: int) -> IntArray:
    """``(texts, max_order)``: how many n-grams of each order a text of each length has."""
    out: IntArray = np.maximum(lens[:, None] - np.arange(max_order)[None, :], 0)
    return out
