"""N-gram profiles counted once per text, and the clipped matches of every pair of texts from them.

A text's profile of order n is its multiset of n-grams. The clipped matches of two texts, the quantity every
n-gram metric is built from, are ``sum_g min(c_a(g), c_b(g))``. Writing a count ``c`` as ``c`` stacked levels
(``min(c_a, c_b) = sum_{k >= 1} [c_a >= k] [c_b >= k]``), each (n-gram, level) pair becomes a column of a 0/1
matrix ``L`` (texts x columns), and the clipped matches of every pair are one product ``L_a @ L_b.T`` — exact
integer arithmetic. With ``sets`` only level 1 is kept: the product counts the n-grams two texts share (PINC).

The product is split by column: a column held by many texts on both sides goes to a dense BLAS product
(float32: exact below 2**24), the long tail of rare columns to a sparse product (``scipy.sparse``), which
costs ``df_a * df_b`` per column. The split point is where one dense column costs as much as that sparse one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from ngrameval.ngrams.texts import IntArray, Texts

if TYPE_CHECKING:
    from scipy import sparse  # imported where used: scipy.sparse costs ~0.1 s, and the CLI starts without it

# A sparse multiply-add costs about this many dense (BLAS) multiply-adds; measured on this project's bench
# machine (benchmarks/bench_pairwise.py), not critical within a factor of a few.
SPARSE_COST = 1024.0


@dataclass(frozen=True)
class Profiles:
    """Per order, the level matrix of a set of texts (see the module text), and each text's n-gram counts.

    ``levels[n - 1]``: CSR ``(texts, columns)`` of 0/1; columns are shared by every text counted in one call.
    ``totals``: ``(texts, max_order)`` n-grams of each order (distinct n-grams when ``sets``)."""

    levels: tuple[sparse.csr_matrix, ...]
    totals: IntArray

    def __len__(self) -> int:
        return int(self.totals.shape[0])

    def rows(self, start: int, stop: int) -> Profiles:
        """The profiles of texts ``start .. stop - 1``."""
        return Profiles(tuple(m[start:stop] for m in self.levels), self.totals[start:stop])


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


def profiles(units: Texts, max_order: int, sets: bool = False) -> Profiles:
    """The profiles of orders 1..``max_order`` of every text of ``units`` (tokens, characters or words as ids).

    >>> p = profiles(Texts(np.array([1, 1, 2], dtype=np.int32), np.array([0, 2, 3])), 2)
    >>> p.totals.tolist(), p.levels[0].toarray().tolist()
    ([[2, 1], [1, 0]], [[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    """
    from scipy import sparse

    n_texts = len(units)
    grams = gram_occurrences(units, max_order)
    order_of = np.zeros(grams.n_grams, dtype=np.int64)
    order_of[grams.gram] = grams.order
    keys, counts = np.unique(grams.gram * np.int64(max(n_texts, 1)) + grams.text, return_counts=True)
    gram, text = keys // max(n_texts, 1), keys % max(n_texts, 1)
    if sets:
        counts = np.ones_like(counts)
    totals = np.zeros((n_texts, max_order), dtype=np.int64)
    np.add.at(totals, (text, order_of[gram]), counts)
    # one entry per (text, gram, level): level k of a count c for k = 0 .. c - 1
    entry = np.repeat(np.arange(len(keys)), counts)
    level = np.arange(len(entry)) - np.repeat(np.cumsum(counts) - counts, counts)
    depth = int(counts.max(initial=1))
    column = gram[entry] * depth + level
    order = order_of[gram[entry]]
    out = []
    for n in range(max_order):
        here = np.flatnonzero(order == n)
        cols, inverse = np.unique(column[here], return_inverse=True)
        data = np.ones(len(here), dtype=np.float32)
        out.append(sparse.csr_matrix((data, (text[entry[here]], inverse.reshape(-1))), shape=(n_texts, len(cols))))
    return Profiles(tuple(out), totals)


class SharedCounter:
    """The clipped matches (or shared n-grams) of rows ``start .. stop - 1`` of ``a`` with every row of ``b``:
    ``a @ b.T`` of two level matrices with the same columns. Columns frequent on both sides (chosen once, on all
    of ``a`` and ``b``) go through BLAS, the rest through a sparse product; both sides are split once, so a row
    block costs its products only."""

    def __init__(self, a: sparse.csr_matrix, b: sparse.csr_matrix) -> None:
        n, m, k = a.shape[0], b.shape[0], a.shape[1]
        df_a = np.bincount(a.indices, minlength=k).astype(np.float64)
        df_b = np.bincount(b.indices, minlength=k)
        dense = np.flatnonzero(df_a * df_b * SPARSE_COST > float(max(n, 1)) * m)
        rare = np.ones(k, dtype=bool)
        rare[dense] = False
        self.m = m
        self.a_dense = a.tocsc()[:, dense].toarray() if len(dense) else None
        self.b_dense_t = b.tocsc()[:, dense].toarray().T.copy() if len(dense) else None
        self.a_rare = _columns_only(a, rare) if len(dense) else a
        self.b_rare_t = (_columns_only(b, rare) if len(dense) else b).T.tocsr()

    def __call__(self, start: int, stop: int) -> NDArray[np.float32]:
        """``(stop - start, rows of b)``: the counts of each pair."""
        if stop <= start or self.m == 0:
            return np.zeros((max(stop - start, 0), self.m), dtype=np.float32)
        product = (self.a_rare[start:stop] @ self.b_rare_t).toarray()
        out: NDArray[np.float32] = np.asarray(product, dtype=np.float32)
        if self.a_dense is not None and self.b_dense_t is not None:
            out += self.a_dense[start:stop] @ self.b_dense_t
        return out


def shared_counts(a: sparse.csr_matrix, b: sparse.csr_matrix) -> NDArray[np.float32]:
    """``a @ b.T`` of two level matrices with the same columns, as a dense ``(rows of a, rows of b)`` array.

    >>> p = profiles(Texts(np.array([1, 1, 2, 1], dtype=np.int32), np.array([0, 3, 4])), 1)
    >>> shared_counts(p.levels[0], p.levels[0]).tolist()
    [[3.0, 1.0], [1.0, 1.0]]
    """
    return SharedCounter(a, b)(0, a.shape[0])


def _columns_only(m: sparse.csr_matrix, keep: NDArray[np.bool_]) -> sparse.csr_matrix:
    """``m`` with the entries of the columns not in ``keep`` dropped."""
    from scipy import sparse

    on = keep[m.indices]
    row = np.repeat(np.arange(m.shape[0]), np.diff(m.indptr))
    return sparse.csr_matrix((m.data[on], (row[on], m.indices[on])), shape=m.shape)


def group_products(
    units: Texts, sizes: IntArray, max_order: int, sets: bool = False
) -> list[list[NDArray[np.float32]]]:
    """Many small groups at once (consecutive texts of ``units``, ``sizes[g]`` in group ``g``): per group and order
    the ``(size, size)`` clipped matches (shared n-grams when ``sets``) of every pair of its texts.

    One n-gram count and one sort serve every group of the batch; each group's level matrix is then dense (its
    texts share most columns) and its pairs one BLAS product.

    >>> out = group_products(Texts(np.array([1, 1, 2, 1], dtype=np.int32), np.array([0, 2, 3, 4])), np.array([2, 1]), 1)
    >>> out[0][0].tolist(), out[1][0].tolist()
    ([[2.0, 0.0], [0.0, 1.0]], [[1.0]])
    """
    n_texts = len(units)
    grams = gram_occurrences(units, max_order)
    group_of = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
    first = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    big, n_grams = np.int64(max(n_texts, 1)), np.int64(max(grams.n_grams, 1))
    # one sort: (group, gram, text); gram ids grow with the order, so each (group, order) is one run. The key stays
    # below 2**62: groups and texts <= BATCH_TEXTS-sized batches, n-grams <= 100 x the units of the batch
    keys, counts = np.unique((group_of[grams.text] * n_grams + grams.gram) * big + grams.text, return_counts=True)
    text, run_key = keys % big, keys // big  # run_key: group * n_grams + gram
    if sets:
        counts = np.ones_like(counts)
    order_of = np.zeros(grams.n_grams, dtype=np.int64)
    order_of[grams.gram] = grams.order
    # a (group, gram) run holds as many columns as its largest count (levels 0 .. max - 1)
    starts = np.flatnonzero(np.concatenate([[True], run_key[1:] != run_key[:-1]])) if len(keys) else keys[:0]
    width = np.maximum.reduceat(counts, starts) if len(keys) else counts[:0]
    run_of = np.cumsum(np.isin(np.arange(len(keys)), starts)) - 1
    run_col = np.cumsum(width) - width  # the first column of each run
    entry = np.repeat(np.arange(len(keys)), counts)
    level = np.arange(len(entry)) - np.repeat(np.cumsum(counts) - counts, counts)
    col_id = run_col[run_of[entry]] + level
    t_of = text[entry]
    run_group = run_key[starts] // n_grams
    block = (run_group * max_order + order_of[run_key[starts] % n_grams])[run_of[entry]]
    bounds = np.searchsorted(block, np.arange(len(sizes) * max_order + 1))
    out: list[list[NDArray[np.float32]]] = []
    for g, size in enumerate(sizes.tolist()):
        per_order = []
        for n in range(max_order):
            a, b = bounds[g * max_order + n], bounds[g * max_order + n + 1]
            cols = col_id[a:b] - (col_id[a] if b > a else 0)  # a block's columns are contiguous, from its first
            dense = np.zeros((size, int(cols.max()) + 1 if b > a else 0), dtype=np.float32)
            dense[t_of[a:b] - first[g], cols] = 1.0
            per_order.append(dense @ dense.T)
        out.append(per_order)
    return out


def packed_group_products(
    units: Texts, sizes: IntArray, max_order: int, sets: bool = False
) -> list[list[NDArray[np.float32]]] | None:
    """:func:`group_products` with every n-gram packed into one integer (unit ids renumbered densely, ``bits`` each):
    per order one sort of (n-gram, text) keys, no interning pass. ``None`` when the packed key would not fit in 62
    bits (a large vocabulary or a high order): then :func:`group_products` counts them.

    >>> t = Texts(np.array([1, 1, 2, 1], dtype=np.int32), np.array([0, 2, 3, 4]))
    >>> out = packed_group_products(t, np.array([2, 1]), 1)
    >>> out is not None and out[0][0].tolist(), out[1][0].tolist()
    ([[2.0, 0.0], [0.0, 1.0]], [[1.0]])
    """
    ids, n_texts = units.ids.astype(np.int64), len(units)
    if len(ids) == 0 or n_texts == 0:
        return None
    present = np.zeros(int(ids.max()) + 1, dtype=bool)
    present[ids] = True
    dense_ids = (np.cumsum(present) - 1)[ids]
    bits = max(1, int(present.sum()).bit_length())
    tbits = max(1, (n_texts - 1).bit_length())
    if max_order * bits + tbits > 62:
        return None
    text_of = np.repeat(np.arange(n_texts, dtype=np.int64), units.lens)
    group_of = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
    first = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    end_of = units.off[1:][text_of]  # the end of each unit's text
    out: list[list[NDArray[np.float32]]] = [[] for _ in range(len(sizes))]
    packed = np.zeros(len(ids), dtype=np.int64)
    for n in range(1, max_order + 1):
        pos = np.flatnonzero(np.arange(len(ids)) + n <= end_of)
        packed[pos] |= dense_ids[pos + n - 1] << (bits * (n - 1))  # grows by one unit per order
        keys, counts = np.unique((packed[pos] << tbits) | text_of[pos], return_counts=True)
        text = keys & ((1 << tbits) - 1)
        gram, group = keys >> tbits, group_of[text]
        if sets:
            counts = np.ones_like(counts)
        new_run = np.ones(len(keys), dtype=bool)
        new_run[1:] = (gram[1:] != gram[:-1]) | (group[1:] != group[:-1])
        starts = np.flatnonzero(new_run)
        run_of = np.cumsum(new_run) - 1
        width = np.maximum.reduceat(counts, starts) if len(keys) else counts
        run_group = group[starts]
        # columns numbered within each group: runs taken group by group (stable: n-gram order kept)
        perm = np.argsort(run_group, kind="stable")
        w_sorted = width[perm]
        start_sorted = np.cumsum(w_sorted) - w_sorted
        k_g = np.bincount(run_group, weights=width, minlength=len(sizes)).astype(np.int64)
        group_start = np.cumsum(k_g) - k_g
        run_col = np.empty(len(starts), dtype=np.int64)
        run_col[perm] = start_sorted - group_start[run_group[perm]]
        entry = np.repeat(np.arange(len(keys)), counts)
        level = np.arange(len(entry)) - np.repeat(np.cumsum(counts) - counts, counts)
        e_group = group[entry]
        buf_off = np.concatenate([[0], np.cumsum(sizes * k_g)]).astype(np.int64)
        flat = np.zeros(int(buf_off[-1]), dtype=np.float32)
        row = text[entry] - first[e_group]
        flat[buf_off[e_group] + row * k_g[e_group] + run_col[run_of[entry]] + level] = 1.0
        for g, size in enumerate(sizes.tolist()):
            dense = flat[buf_off[g] : buf_off[g + 1]].reshape(size, int(k_g[g]))
            out[g].append(dense @ dense.T)
    return out
