"""The reference n-gram counts of a whole corpus, gathered piece by piece, for NIST's information weights
(mteval-v13a.pl: info(w1..wn) = log2(count(w1..wn-1) / count(w1..wn)) over every reference of the test set).

A piece (a chunk of a streamed file, a Dask partition) is interned (:func:`ngrameval.ngrams.count.intern`); its
distinct n-grams are added to per-order tables keyed by ``(id of the (n-1)-gram prefix) << 31 | token id``,
tokens named by their strings, so pieces tokenized by different encoders (other chunks, other processes) and
tables of different pieces (:meth:`RefCounts.merge`) add up exactly: counts are integers.

Memory: per order a sorted key array (int64), the ids in key order (int32) and the counts by id (int64): 20
bytes per distinct reference n-gram of orders 1..n, up to ~40 while one order grows or the tables are frozen,
plus the token strings. :meth:`RefCounts.weights` freezes them into :class:`NistWeights` (key, id, order and
one float64 weight: 21 bytes per n-gram) that give every reference position of a piece its global n-gram id, so
the counting kernel's matches are weighted as on the whole corpus at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from ngrameval import _overlap
from ngrameval.errors import InputError, LimitError
from ngrameval.ngrams.count import ChunkWeights, intern, nist_info

IntArray = NDArray[np.int64]
SHIFT = 31  # token ids and prefix ids stay below 2**31 (the kernel's int32 ids)
_TOKEN = (1 << SHIFT) - 1


class WeightSource(Protocol):
    """Where a chunk's NIST weights come from (:class:`NistWeights`, :class:`ngrameval.scale.refspill.SpilledWeights`,
    :class:`ngrameval.scale.dask.nist.PartitionWeights`)."""

    @property
    def max_order(self) -> int: ...

    def chunk(self, index: int, names: Sequence[str], ids: NDArray[np.int32], off: IntArray) -> ChunkWeights:
        """The weights of chunk ``index``, whose references are ``ids[off[i]:off[i + 1]]`` (strings ``names``)."""
        ...


@dataclass(frozen=True)
class Interned:
    """A piece's distinct reference n-grams: per local id its order (1-based), prefix (local id, -1 for
    unigrams), count and last token (an id of the piece's own vocabulary); ``gid``: the kernel's per-position ids."""

    gid: NDArray[np.int32]
    order: NDArray[np.int8]
    prefix: NDArray[np.int32]
    count: IntArray
    token: NDArray[np.int32]


def intern_grams(ids: NDArray[np.int32], off: IntArray, max_order: int) -> Interned:
    grams = intern(ids, off, max_order)
    gid, count = grams.gid, grams.count
    token = np.zeros(len(count), dtype=np.int32)
    grid = gid.reshape(-1, max_order)
    for n in range(max_order):  # the n-gram's last token, an order at a time (small temporaries)
        col = grid[:, n]
        at = np.flatnonzero(col >= 0)
        token[col[at]] = ids[at + n]
    return Interned(gid, grams.order, grams.prefix, count, token)


def token_map(vocab: dict[str, int], names: Sequence[str], grow: bool) -> IntArray:
    """The table's id of every name (new names get the next ids when ``grow``, else -1)."""
    if grow:
        return np.fromiter((vocab.setdefault(n, len(vocab)) for n in names), dtype=np.int64, count=len(names))
    return np.fromiter((vocab.get(n, -1) for n in names), dtype=np.int64, count=len(names))


def find_sorted(keys: IntArray, want: IntArray) -> tuple[IntArray, NDArray[np.bool_]]:
    """Positions of ``want`` in the sorted ``keys`` and which of them are there."""
    order = np.argsort(want)
    pos = np.empty(len(want), dtype=np.int64)
    pos[order] = np.searchsorted(keys, want[order])  # sorted needles: each search starts where the last ended
    found = np.zeros(len(want), dtype=bool)
    inside = pos < len(keys)
    found[inside] = keys[pos[inside]] == want[inside]
    return pos, found


@dataclass
class RefCounts:
    """Counts of every reference n-gram of orders 1..``max_order`` seen so far (see the module docstring)."""

    max_order: int
    total_words: int = 0
    vocab: dict[str, int] = field(default_factory=dict, repr=False)
    _keys: list[IntArray] = field(default_factory=list, repr=False)
    _ids: list[NDArray[np.int32]] = field(default_factory=list, repr=False)
    _counts: list[IntArray] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        empty = np.zeros(0, dtype=np.int64)
        self._keys = [empty] * self.max_order
        self._ids = [np.zeros(0, dtype=np.int32)] * self.max_order
        self._counts = [empty] * self.max_order

    @property
    def distinct(self) -> int:
        """Distinct reference n-grams counted (all orders)."""
        return sum(len(c) for c in self._counts)

    def _insert(self, j: int, key: IntArray, count: IntArray) -> IntArray:
        """Add ``count`` to the n-grams of order ``j + 1`` with the distinct ``key``; their ids."""
        keys, ids = self._keys[j], self._ids[j]
        pos, found = find_sorted(keys, key)
        out = np.empty(len(key), dtype=np.int64)
        out[found] = ids[pos[found]]
        new = np.flatnonzero(~found)
        if len(new):
            base = len(self._counts[j])
            if base + len(new) > _TOKEN:
                raise LimitError(f"more than {_TOKEN} distinct reference {j + 1}-grams: NIST cannot count them")
            out[new] = base + np.arange(len(new))
            order = np.argsort(key[new], kind="stable")
            fresh = key[new][order]
            at = np.searchsorted(keys, fresh)
            self._keys[j] = np.insert(keys, at, fresh)
            self._ids[j] = np.insert(ids, at, out[new][order].astype(np.int32))
            self._counts[j] = np.concatenate([self._counts[j], np.zeros(len(new), dtype=np.int64)])
        self._counts[j][out] += count
        return out

    def add(self, names: Sequence[str], ids: NDArray[np.int32], off: IntArray) -> None:
        """Count the reference texts ``ids[off[i]:off[i + 1]]`` (token ids whose strings are ``names``)."""
        piece = intern_grams(ids, off, self.max_order)
        tokens = token_map(self.vocab, names, grow=True)[piece.token]
        table_id = np.empty(len(piece.count), dtype=np.int64)
        for j in range(self.max_order):
            sel = np.flatnonzero(piece.order == j + 1)
            key = tokens[sel] if j == 0 else (table_id[piece.prefix[sel]] << SHIFT) | tokens[sel]
            table_id[sel] = self._insert(j, key, piece.count[sel])
        self.total_words += int(off[-1] - off[0])

    def merge(self, other: RefCounts) -> RefCounts:
        """``self`` with ``other``'s counts added (both of the same ``max_order``); returns ``self``."""
        if other.max_order != self.max_order:
            raise ValueError(f"cannot merge counts of orders {self.max_order} and {other.max_order}")
        names = sorted(other.vocab, key=other.vocab.__getitem__)
        tokens = token_map(self.vocab, names, grow=True)
        previous = np.zeros(0, dtype=np.int64)
        for j in range(self.max_order):
            keys, ids = other._keys[j], other._ids[j]
            key = tokens[keys & _TOKEN]
            if j:
                key |= previous[keys >> SHIFT] << SHIFT
            mine = self._insert(j, key, other._counts[j][ids])
            previous = np.empty(len(other._counts[j]), dtype=np.int64)
            previous[ids] = mine
        self.total_words += other.total_words
        return self

    def weights(self) -> NistWeights:
        """The information weight of every n-gram counted, as one id space over all orders."""
        offsets = np.zeros(self.max_order + 1, dtype=np.int64)
        np.cumsum([len(c) for c in self._counts], out=offsets[1:])
        if offsets[-1] > _overlap.MAX_ID:
            raise LimitError(
                f"{offsets[-1]} distinct reference n-grams: more than NIST's kernel ids ({_overlap.MAX_ID})"
            )
        count = np.concatenate(self._counts) if self.max_order else np.zeros(0, dtype=np.int64)
        prefix = np.full(len(count), -1, dtype=np.int32)
        for j in range(1, self.max_order):
            keys, ids = self._keys[j], self._ids[j]
            prefix[offsets[j] + ids] = offsets[j - 1] + (keys >> SHIFT)
        info = nist_info(count, prefix, self.total_words)
        del prefix
        zero_ids = np.zeros(0, dtype=np.int64)
        zero = np.zeros(0)
        z = self.vocab.get("0", -1)
        if self.max_order >= 2 and z >= 0:  # mteval's weight of bigrams "0 x" (see ngrams.count.nist_weights)
            pos, found = find_sorted(self._keys[0], np.array([z], dtype=np.int64))
            if found[0]:
                g0 = int(self._ids[0][pos[0]])
                zero_ids = np.sort(offsets[1] + self._ids[1][(self._keys[1] >> SHIFT) == g0])
                zero = np.full(len(zero_ids), np.log2(self.total_words / count[g0]))
        order = np.repeat(np.arange(self.max_order, dtype=np.int8), np.diff(offsets))
        return NistWeights(
            self.max_order, dict(self.vocab), self._keys, self._ids, offsets, info, zero_ids, zero, order
        )


@dataclass(frozen=True)
class NistWeights:
    """Frozen :class:`RefCounts`: ``info[g]`` and mteval's ``zero[g]`` extra of every global n-gram id ``g``."""

    max_order: int
    vocab: dict[str, int] = field(repr=False)
    keys: list[IntArray] = field(repr=False)
    ids: list[NDArray[np.int32]] = field(repr=False)
    offsets: IntArray = field(repr=False)
    info: NDArray[np.float64] = field(repr=False)
    zero_ids: IntArray = field(repr=False)  # the few n-grams with an extra weight (bigrams "0 x"), sorted
    zero_values: NDArray[np.float64] = field(repr=False)
    order: NDArray[np.int8] = field(repr=False)  # the order (0-based) of every global n-gram id

    def zero(self, gram: NDArray[np.int32]) -> NDArray[np.float64]:
        """mteval's extra weight of each n-gram id of ``gram`` (0 for all but bigrams ``0 x``)."""
        out = np.zeros(len(gram))
        if len(self.zero_ids):
            at = np.minimum(np.searchsorted(self.zero_ids, gram), len(self.zero_ids) - 1)
            hit = self.zero_ids[at] == gram
            out[hit] = self.zero_values[at[hit]]
        return out

    def chunk(self, index: int, names: Sequence[str], ids: NDArray[np.int32], off: IntArray) -> ChunkWeights:
        """The weights of a chunk's reference n-grams by global id (``index`` is not needed: every chunk is here)."""
        extra = float(self.zero_values[0]) if len(self.zero_values) else 0.0
        return ChunkWeights(
            self.global_ids(names, ids, off), self.info, self.order, self.zero_ids.astype(np.int32), extra
        )

    def global_ids(self, names: Sequence[str], ids: NDArray[np.int32], off: IntArray) -> NDArray[np.int32]:
        """Per position ``i`` and order ``n``, ``out[i * max_order + n - 1]``: the global id of the reference
        n-gram starting at token ``i`` (-1 past the end of its text), as
        :func:`ngrameval.ngrams.count.intern` lays its ids out."""
        piece = intern_grams(ids, off, self.max_order)
        tokens = token_map(self.vocab, names, grow=False)[piece.token]
        table_id = np.empty(len(piece.count), dtype=np.int64)
        out = np.empty(len(piece.count), dtype=np.int64)
        for j in range(self.max_order):
            sel = np.flatnonzero(piece.order == j + 1)
            key = tokens[sel] if j == 0 else (table_id[piece.prefix[sel]] << SHIFT) | tokens[sel]
            pos, found = find_sorted(self.keys[j], key)
            if not found.all() or (tokens[sel] < 0).any():
                raise InputError("the references changed between the two passes of NIST (counting, then scoring)")
            table_id[sel] = self.ids[j][pos]
            out[sel] = self.offsets[j] + table_id[sel]
        gid = np.full(len(piece.gid), -1, dtype=np.int32)
        at = piece.gid >= 0
        gid[at] = out[piece.gid[at]]
        return gid
