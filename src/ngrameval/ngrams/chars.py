"""Character and word n-gram counting for chrF / chrF++ (NumPy, no Python loop over n-grams).

Text becomes *units* — Unicode code points (characters) or interned word ids — as :class:`Texts`;
every n-gram of orders 1..N of every text is given an id that is equal for equal n-grams within one
call (order n interns the pair (id of its (n-1)-gram prefix, last unit), so ids are exact, never
hashes). Per (reference, order) the clipped matches ``sum_g min(count in hyp, count in ref)`` are one
sort, one ``searchsorted`` and one ``bincount``.

Units follow sacreBLEU 2.x (``sacrebleu/metrics/helpers.py`` and ``chrf.py``): characters of the line
with every ``str.split()`` whitespace removed (kept when ``whitespace``); words of chrF++ are
``str.split()`` fields with one punctuation character split off the end, or else off the start, of each
field longer than one character (``_remove_punctuation``, including its ``'(hi)'`` -> ``'(hi'``, ``')'``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ngrameval.ngrams.texts import IntArray, Texts

PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def char_units(lines: Sequence[str], whitespace: bool) -> Texts:
    """Code points of each line (whitespace removed unless ``whitespace``).

    >>> t = char_units(["a b", "é"], whitespace=False)
    >>> t.ids.tolist(), t.off.tolist()
    ([97, 98, 233], [0, 2, 3])
    """
    kept = list(lines) if whitespace else ["".join(x.split()) for x in lines]
    off = np.zeros(len(kept) + 1, dtype=np.int64)
    np.cumsum([len(x) for x in kept], out=off[1:])
    ids = np.frombuffer("".join(kept).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    return Texts(ids.astype(np.int32), off)


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
    """Word ids (from ``vocab``, which grows) of each line's :func:`split_punctuation` words."""
    ids: list[int] = []
    off = np.zeros(len(lines) + 1, dtype=np.int64)
    for i, line in enumerate(lines):
        ids.extend(vocab.setdefault(w, len(vocab)) for w in split_punctuation(line))
        off[i + 1] = len(ids)
    return Texts(np.asarray(ids, dtype=np.int32), off)


@dataclass(frozen=True)
class Grams:
    """Every n-gram occurrence: the text it is in, its id (equal n-grams, equal ids) and its order - 1."""

    text: IntArray
    gram: IntArray
    order: IntArray
    n_grams: int  # ids run 0 .. n_grams - 1


def gram_occurrences(units: Texts, max_order: int) -> Grams:
    """The n-grams of orders 1..``max_order`` of every text of ``units`` (none crosses a text boundary).

    >>> g = gram_occurrences(Texts(np.array([5, 5, 5], dtype=np.int32), np.array([0, 3])), 2)
    >>> g.gram.tolist(), g.order.tolist()
    ([0, 0, 0, 1, 1], [0, 0, 0, 1, 1])
    """
    lens = units.lens
    tix = np.repeat(np.arange(len(lens), dtype=np.int64), lens)
    vocab, unit = np.unique(units.ids.astype(np.int64), return_inverse=True)
    base = max(len(vocab), 1)
    pos = np.arange(len(unit), dtype=np.int64)  # start positions of the current order's n-grams
    cur = unit.reshape(-1)
    texts, grams, orders = [], [], []
    offset = 0
    for n in range(1, max_order + 1):
        if n > 1:
            last = pos + n - 1
            ok = last < len(unit)
            ok[ok] = tix[last[ok]] == tix[pos[ok]]
            pos = pos[ok]
            keys = cur[ok] * base + unit[pos + n - 1]
            uniq, cur = np.unique(keys, return_inverse=True)
            cur = cur.reshape(-1)
            count = len(uniq)
        else:
            count = len(vocab)
        texts.append(tix[pos])
        grams.append(cur + offset)
        orders.append(np.full(len(pos), n - 1, dtype=np.int64))
        offset += count
    return Grams(np.concatenate(texts), np.concatenate(grams), np.concatenate(orders), offset)


def ngram_counts(lens: IntArray, max_order: int) -> IntArray:
    """``(texts, max_order)``: how many n-grams of each order a text of each length has."""
    out: IntArray = np.maximum(lens[:, None] - np.arange(max_order)[None, :], 0)
    return out


def clipped_matches(
    grams: Grams, ref_texts: NDArray[np.bool_], hyp_of: IntArray, n_orders: int, n_refs: int
) -> NDArray[np.int64]:
    """``(n_refs, n_orders)``: for reference ``r`` (text ``r`` of ``grams``) and each order,
    ``sum_g min(count of g in r, count of g in text hyp_of[r])``.

    ``ref_texts`` marks the occurrences that belong to references (texts ``0 .. n_refs - 1``).
    """
    big = np.int64(grams.n_grams)
    on_ref = ref_texts
    r_keys, r_counts = np.unique(grams.text[on_ref] * big + grams.gram[on_ref], return_counts=True)
    h_keys, h_counts = np.unique(grams.text[~on_ref] * big + grams.gram[~on_ref], return_counts=True)
    ref = r_keys // big
    gram = r_keys % big
    want = hyp_of[ref] * big + gram
    at = np.searchsorted(h_keys, want)
    found = at < len(h_keys)
    found[found] = h_keys[at[found]] == want[found]
    hyp_count = np.where(found, h_counts[np.minimum(at, max(len(h_keys) - 1, 0))], 0) if len(h_keys) else 0
    order_of = np.zeros(grams.n_grams, dtype=np.int64)
    order_of[grams.gram] = grams.order
    clipped = np.minimum(r_counts, hyp_count)
    flat = np.bincount(ref * n_orders + order_of[gram], weights=clipped, minlength=n_refs * n_orders)
    return flat.astype(np.int64).reshape(n_refs, n_orders)
