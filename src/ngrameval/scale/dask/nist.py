"""NIST on Dask without any process holding every distinct reference n-gram of the corpus (mteval-v13a.pl:
info(w1..wn) = log2(count(w1..wn-1) / count(w1..wn)) over every reference of the test set).

The reference n-grams of orders 2..n are cut into ``G`` bucket groups by a deterministic hash of the *strings* of
their first two tokens (CRC-32 of each token's UTF-8, the pair mixed by :func:`ngrameval.scale.refspill.fibonacci`),
so an n-gram and its prefix from the bigram up share a group, as in :mod:`ngrameval.scale.refspill`:

1. ``partition_groups(p)``: a partition's distinct reference n-grams with their counts, one
   :class:`GroupCounts` per group (token strings as keys: token ids are the partition's own), and its unigram
   counts and words (:class:`Unigrams`).
2. Per group g: the partitions' counts added in a tree (integer sums: exact), weighted once
   (:func:`group_weights`, the floats of :func:`ngrameval.ngrams.count.nist_info`: bigrams take their context
   from the corpus unigram counts, merged in a tree too).
3. Per partition p: its n-grams again (:func:`partition_needs`, once the counting pass is done), and per group g
   a task that looks them up in group g's weights (:func:`looked_up`). The partition's scoring task puts the G
   answers in place (:class:`PartitionWeights`) and scores as one machine does
   (:func:`ngrameval.scale.chunks.chunk_rows`): the rows are the single-machine rows bit for bit.

Only the scoring matches need weights, and a match is a reference n-gram of its segment, so a partition needs
the weights of its own reference n-grams only. Held at once: a group's counts and weights where its tasks run
(about 1/G of the corpus's distinct n-grams each), a partition's n-grams where it is counted and scored, and the
corpus unigram counts (vocabulary-sized) on every worker that scores. Tasks: P counting, about P/3 merges per
group, and P x G lookups (P partitions).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from ngrameval.errors import ConfigError, InputError
from ngrameval.ngrams.count import ChunkWeights
from ngrameval.scale.refcounts import SHIFT, IntArray, find_sorted, token_map
from ngrameval.scale.refspill import (
    REFS_CHANGED,
    ChunkGrams,
    chunk_grams,
    fibonacci,
    prefix_info,
    summed_keys,
    weighted,
)

if TYPE_CHECKING:
    from dask.delayed import Delayed

    from ngrameval.metrics.registry import MetricSpec
    from ngrameval.scale.dask.cluster import Partition
    from ngrameval.scale.dask.sides import Counts
    from ngrameval.text.pipeline import Preprocess

PARTITIONS_PER_GROUP = 2  # the automatic G: one bucket group per this many partitions ...
MAX_GROUPS = 64  # ... and at most this many (P x G lookup tasks)
FAN_IN = 4  # pieces added by one merge task
_TOKEN = (1 << SHIFT) - 1


def auto_groups(partitions: int) -> int:
    """G for ``partitions`` partitions: ceil(P / :data:`PARTITIONS_PER_GROUP`), at most :data:`MAX_GROUPS` (1
    for a small corpus: then the one group is today's whole-corpus table, without its copy on every worker)."""
    return max(1, min(MAX_GROUPS, -(-partitions // PARTITIONS_PER_GROUP)))


def checked_groups(groups: int | None, partitions: int) -> int:
    """``groups`` (None: :func:`auto_groups`), or ConfigError when it is not a whole number >= 1."""
    if groups is None:
        return auto_groups(partitions)
    if isinstance(groups, bool) or not isinstance(groups, int | np.integer) or groups < 1:
        raise ConfigError(f"nist_groups must be a whole number >= 1, got {groups!r}")
    return int(groups)


def token_hashes(names: Sequence[str]) -> NDArray[np.uint32]:
    """CRC-32 of each token's UTF-8 bytes: the same in every process (unlike ``hash()``, salted per process)."""
    return np.fromiter(
        (zlib.crc32(n.encode("utf-8", "surrogatepass")) for n in names), dtype=np.uint32, count=len(names)
    )


def grouping(names: Sequence[str], groups: int) -> Callable[[NDArray[np.int32], NDArray[np.int32]], NDArray[np.int64]]:
    """The bucket group of n-grams whose first two tokens are ``first``, ``second`` (indices into ``names``):
    the high 32 bits of the Fibonacci hash of their strings' CRC-32s, scaled to 0..groups - 1."""
    hashes = token_hashes(names)

    def group(first: NDArray[np.int32], second: NDArray[np.int32]) -> NDArray[np.int64]:
        high = fibonacci(hashes[first], hashes[second]) >> np.uint64(32)
        return ((high * np.uint64(groups)) >> np.uint64(32)).astype(np.int64)

    return group


@dataclass(frozen=True)
class Unigrams:
    """Reference unigram counts by token string (``counts[vocab[token]]``, ids in the dict's order) and the
    reference words."""

    vocab: dict[str, int] = field(repr=False)
    counts: IntArray = field(repr=False)
    total_words: int

    def count_of(self, names: Sequence[str]) -> IntArray:
        """The count of each token of ``names`` (-1: not a reference token)."""
        at = token_map(self.vocab, names, grow=False)
        out = np.full(len(names), -1, dtype=np.int64)
        out[at >= 0] = self.counts[at[at >= 0]]
        return out


def merged_unigrams(*parts: dict[Preprocess, Unigrams]) -> dict[Preprocess, Unigrams]:
    """The unigram counts of several pieces added, per text setting (new objects: Dask may run a task twice)."""
    out = {}
    for pre in parts[0]:
        vocab: dict[str, int] = {}
        at = [token_map(vocab, list(p[pre].vocab), grow=True) for p in parts]
        counts = np.zeros(len(vocab), dtype=np.int64)
        for p, ids in zip(parts, at, strict=True):
            counts[ids] += p[pre].counts  # a piece's tokens are distinct: no repeated index
        out[pre] = Unigrams(vocab, counts, sum(p[pre].total_words for p in parts))
    return out


@dataclass(frozen=True)
class GroupCounts:
    """Reference n-grams of orders 2..n of one bucket group and their counts, per order n (index n - 2) a list:
    ``keys`` (``first << SHIFT | second`` for bigrams, tokens as indices into ``names``, the token strings; for n
    >= 3 ``(index of the prefix in the list of order n - 1) << SHIFT | last token``) and ``counts``; ``summed``:
    keys distinct and sorted (a merge's output, see :func:`merged_group`)."""

    names: list[str] = field(repr=False)
    keys: list[IntArray] = field(repr=False)
    counts: list[IntArray] = field(repr=False)
    summed: bool = False

    @property
    def distinct(self) -> int:
        return sum(len(c) for c in self.counts)


@dataclass(frozen=True)
class GroupWeights:
    """A bucket group's information weights: per order n >= 2 the sorted keys of a summed :class:`GroupCounts`
    over ``vocab`` and ``info`` in key order."""

    vocab: dict[str, int] = field(repr=False)
    keys: list[IntArray] = field(repr=False)
    info: list[NDArray[np.float64]] = field(repr=False)

    @property
    def distinct(self) -> int:
        return sum(len(k) for k in self.keys)


def _encoded(refs: Sequence[Sequence[str]], pre: Preprocess) -> tuple[list[str], NDArray[np.int32], IntArray]:
    """The references' token strings, ids and text offsets, encoded as :func:`ngrameval.scale.chunks.nist_values`
    encodes a chunk's (so both passes see the same ids)."""
    from ngrameval.ngrams.count import References

    built = References.build(refs, pre, chunk_size=max(len(refs), 1))
    (ch,) = built.chunks
    return built.encoder.names(), ch.ids, ch.off


def _grouped(ids: NDArray[np.int32], off: IntArray, order: int, names: list[str], groups: int) -> ChunkGrams:
    """The interned references, n-grams of order >= 2 in group order (:func:`ngrameval.scale.refspill.chunk_grams`)."""
    return chunk_grams(ids, off, order, np.arange(len(names), dtype=np.int64), grouping(names, groups))


def _split(p: ChunkGrams, names: list[str], groups: int) -> list[GroupCounts]:
    """The n-grams of orders >= 2 of ``p`` (in its group order) and their counts, one :class:`GroupCounts` per
    group."""
    where = np.empty(len(p.interned.count), dtype=np.int64)  # a local n-gram id's index in its group's list
    at, heads, lasts, counts = [], [], [], []
    for j in range(1, len(p.sel)):
        ids = p.sel[j][p.perm[j]]
        a = np.searchsorted(p.bucket[j][p.perm[j]], np.arange(groups + 1))
        where[ids] = np.arange(len(ids)) - np.repeat(a[:-1], np.diff(a))
        heads.append(p.tokens[j][p.perm[j], 0].astype(np.int64) if j == 1 else where[p.interned.prefix[ids]])
        lasts.append(p.interned.token[ids].astype(np.int64))
        counts.append(p.interned.count[ids])
        at.append(a)

    def cut(xs: list[IntArray], g: int) -> list[IntArray]:
        return [x[a[g] : a[g + 1]] for x, a in zip(xs, at, strict=True)]

    return [_group(names, cut(heads, g), cut(lasts, g), cut(counts, g)) for g in range(groups)]


def _group(names: list[str], heads: list[IntArray], lasts: list[IntArray], counts: list[IntArray]) -> GroupCounts:
    """A group's :class:`GroupCounts` from its n-grams' first token (bigrams) or prefix index (higher orders) and
    last token per order, the tokens renumbered over the strings the group uses."""
    used = np.zeros(len(names), dtype=bool)
    for k, last in enumerate(lasts):
        used[last] = True
        if k == 0:
            used[heads[0]] = True
    tokens = np.flatnonzero(used)
    index = np.zeros(len(names), dtype=np.int64)
    index[tokens] = np.arange(len(tokens))
    keys = [
        ((index[h] if k == 0 else h) << SHIFT) | index[t] for k, (h, t) in enumerate(zip(heads, lasts, strict=True))
    ]
    return GroupCounts([names[i] for i in tokens.tolist()], keys, counts)


Counted = tuple[Any, ...]  # (dict[Preprocess, Unigrams], then per group g a dict[Preprocess, GroupCounts])


def _pieces(
    part: Partition, orders: dict[Preprocess, int], groups: int
) -> Iterator[tuple[Preprocess, list[str], int, ChunkGrams]]:
    """Per text setting: the partition's reference token strings, words and interned n-grams in group order (an
    input error names the partition)."""
    from ngrameval.scale.dask.cluster import named_errors

    with named_errors(part):
        for pre, order in orders.items():
            names, ids, off = _encoded(part.refs, pre)
            yield pre, names, int(off[-1] - off[0]), _grouped(ids, off, order, names, groups)


def partition_groups(part: Partition, orders: dict[Preprocess, int], groups: int) -> Counted:
    """NIST's counting pass on a worker: a partition's unigram counts and per group its n-grams with counts."""
    unigrams: dict[Preprocess, Unigrams] = {}
    per_group: list[dict[Preprocess, GroupCounts]] = [{} for _ in range(groups)]
    for pre, names, words, p in _pieces(part, orders, groups):
        vocab = {names[t]: k for k, t in enumerate(p.tokens[0][:, 0].tolist())}
        unigrams[pre] = Unigrams(vocab, p.interned.count[p.sel[0]].copy(), words)
        for g, piece in enumerate(_split(p, names, groups)):
            per_group[g][pre] = piece
    return (unigrams, *per_group)


def partition_needs(
    part: Partition, orders: dict[Preprocess, int], groups: int, unigrams: dict[Preprocess, Unigrams]
) -> Counted:
    """A partition's n-grams per group (a tuple of G) again, for the lookups: counted anew rather than kept since
    the counting pass, so they are held only while needed (``unigrams``, the end of that pass, comes first);
    InputError when a reference token was not counted."""
    per_group: list[dict[Preprocess, GroupCounts]] = [{} for _ in range(groups)]
    for pre, names, _, p in _pieces(part, orders, groups):
        if (unigrams[pre].count_of([names[t] for t in p.tokens[0][:, 0].tolist()]) < 0).any():
            raise InputError(f"{part.name}: {REFS_CHANGED}")
        for g, piece in enumerate(_split(p, names, groups)):
            per_group[g][pre] = piece
    return tuple(per_group)


def merged_group(*pieces: GroupCounts) -> GroupCounts:
    """The counts of one group's pieces added (integer sums: exact), the distinct keys sorted, order by order: an
    n-gram's key names its prefix by the prefix's index among the distinct (n-1)-grams just summed."""
    if len(pieces) == 1 and pieces[0].summed:
        return pieces[0]
    vocab: dict[str, int] = {}
    tokens = [token_map(vocab, p.names, grow=True) for p in pieces]
    rows: list[IntArray] = []  # per piece, each of its n-grams of the order below: its index among the distinct
    keys, counts = [], []
    for j in range(len(pieces[0].keys)):
        parts = []
        for i, p in enumerate(pieces):
            k = p.keys[j]
            head = tokens[i][k >> SHIFT] if j == 0 else rows[i][k >> SHIFT]
            parts.append((head << SHIFT) | tokens[i][k & _TOKEN])
        uniq, count, row = summed_keys(np.concatenate(parts), np.concatenate([p.counts[j] for p in pieces]), j + 2)
        rows = np.split(row, np.cumsum([len(p.keys[j]) for p in pieces])[:-1])
        keys.append(uniq)
        counts.append(count)
    return GroupCounts(list(vocab), keys, counts, summed=True)


def merged_groups(*parts: dict[Preprocess, GroupCounts]) -> dict[Preprocess, GroupCounts]:
    """:func:`merged_group` per text setting."""
    return {pre: merged_group(*(p[pre] for p in parts)) for pre in parts[0]}


def group_weights(piece: GroupCounts, unigrams: Unigrams) -> GroupWeights:
    """The information weight of every n-gram of a group: log2(count(prefix) / count), a bigram's prefix count
    from the corpus unigrams (:func:`ngrameval.scale.refspill.prefix_info`: the floats of ``nist_info``)."""
    piece = merged_group(piece)
    prev = unigrams.count_of(piece.names)
    info = []
    for uniq, count in zip(piece.keys, piece.counts, strict=True):
        info.append(prefix_info(prev, uniq, count))
        prev = count
    return GroupWeights({n: k for k, n in enumerate(piece.names)}, piece.keys, info)


def weighed_groups(
    parts: dict[Preprocess, GroupCounts], unigrams: dict[Preprocess, Unigrams]
) -> dict[Preprocess, GroupWeights]:
    """:func:`group_weights` per text setting."""
    return {pre: group_weights(piece, unigrams[pre]) for pre, piece in parts.items()}


def looked_up(piece: GroupCounts, weights: GroupWeights) -> list[NDArray[np.float64]]:
    """The weights of ``piece``'s n-grams (per order, in its order) in ``weights`` (of the same group)."""
    tokens = token_map(weights.vocab, piece.names, grow=False)
    if (tokens < 0).any():
        raise InputError(REFS_CHANGED)
    out = []
    at = np.zeros(0, dtype=np.int64)
    for j, k in enumerate(piece.keys):
        head = tokens[k >> SHIFT] if j == 0 else at[k >> SHIFT]
        at, found = find_sorted(weights.keys[j], (head << SHIFT) | tokens[k & _TOKEN])
        if not found.all():
            raise InputError(REFS_CHANGED)
        out.append(weights.info[j][at])
    return out


def looked_up_groups(
    needs: dict[Preprocess, GroupCounts], weights: dict[Preprocess, GroupWeights]
) -> dict[Preprocess, list[NDArray[np.float64]]]:
    """:func:`looked_up` per text setting."""
    return {pre: looked_up(piece, weights[pre]) for pre, piece in needs.items()}


@dataclass(frozen=True)
class PartitionWeights:
    """One partition's NIST weights: the corpus ``unigrams`` and ``found[g][n - 2]``, the weights of its n-grams
    of order n in group g in the order of :func:`partition_needs`; :meth:`chunk` is what
    :func:`ngrameval.scale.chunks.nist_values` asks of it."""

    max_order: int
    unigrams: Unigrams = field(repr=False)
    found: list[list[NDArray[np.float64]]] = field(repr=False)

    def chunk(self, index: int, names: Sequence[str], ids: NDArray[np.int32], off: IntArray) -> ChunkWeights:
        """The weights of the partition's references ``ids[off[i]:off[i + 1]]`` (strings ``names``; ``index`` is
        not needed: the partition is one chunk)."""
        groups = len(self.found)
        p = _grouped(ids, off, self.max_order, list(names), groups)
        unigrams = self.unigrams.count_of(names)
        uni = unigrams[p.tokens[0][:, 0]]
        higher = []
        for j in range(1, self.max_order):
            sizes = np.bincount(p.bucket[j], minlength=groups)
            if sizes.tolist() != [len(f[j - 1]) for f in self.found]:
                raise InputError(REFS_CHANGED)
            higher.append(np.concatenate([f[j - 1] for f in self.found]))
        if (uni < 0).any():
            raise InputError(REFS_CHANGED)
        zero = list(names).index("0") if "0" in names else -1
        zero_count = unigrams[zero] if zero >= 0 else np.int64(0)
        return weighted(p, uni, higher, self.unigrams.total_words, zero, zero_count)


def nist_rows(
    part: Partition,
    specs: Sequence[MetricSpec],
    max_cells: int | None,
    unigrams: dict[Preprocess, Unigrams],
    found: Sequence[dict[Preprocess, list[NDArray[np.float64]]]],
    whole: Counts | None = None,
) -> Any:
    """:func:`ngrameval.scale.dask.cluster.partition_rows` with NIST weighted by the lookups ``found`` (one per
    group) and the corpus ``unigrams`` (``whole``: the reference sides' corpus counts, as there)."""
    from ngrameval.scale.chunks import nist_orders
    from ngrameval.scale.dask.cluster import partition_rows

    weights = {
        pre: PartitionWeights(order, unigrams[pre], [f[pre] for f in found])
        for pre, order in nist_orders(specs).items()
    }
    return partition_rows(part, specs, max_cells, weights, whole)


def tree(dask: Any, items: list[Delayed], merge: Callable[..., Any]) -> Delayed:
    """``merge`` over ``items`` in a tree, :data:`FAN_IN` at a time."""
    while len(items) > 1:
        batches = [items[i : i + FAN_IN] for i in range(0, len(items), FAN_IN)]
        items = [dask.delayed(merge, pure=True)(*b) if len(b) > 1 else b[0] for b in batches]
    return items[0]


@dataclass(frozen=True)
class Graph:
    """The lazy NIST pieces of :func:`weights_graph`: the corpus ``unigrams``, each partition's lookups
    (``found[p][g]``) and, for inspection, each group's weights."""

    unigrams: Delayed
    found: list[list[Delayed]]
    weights: list[Delayed]


def weights_graph(partitions: Sequence[Delayed], specs: Sequence[MetricSpec], groups: int) -> Graph:
    """Lazy: NIST's counting pass, per-group weights and per-partition lookups (see the module docstring)."""
    from ngrameval.scale.chunks import nist_orders
    from ngrameval.scale.dask.cluster import _dask

    dask = _dask()
    orders = nist_orders(specs)
    counted = [dask.delayed(partition_groups, pure=True)(p, orders, groups) for p in partitions]
    unigrams = tree(dask, [c[0] for c in counted], merged_unigrams)
    needs = [dask.delayed(partition_needs, pure=True)(p, orders, groups, unigrams) for p in partitions]
    found: list[list[Delayed]] = [[] for _ in partitions]
    weights = []
    for g in range(groups):
        merged = tree(dask, [c[1 + g] for c in counted], merged_groups)
        weights.append(dask.delayed(weighed_groups, pure=True)(merged, unigrams))
        for k, need in enumerate(needs):
            found[k].append(dask.delayed(looked_up_groups, pure=True)(need[g], weights[-1]))
    return Graph(unigrams, found, weights)
