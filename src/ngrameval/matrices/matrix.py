"""Score matrices: the sentence score of every text against every other text (or against a second list), group
by group.

Cell ``(i, j)`` of a group's matrix is the metric's sentence score of text ``i`` as the hypothesis with text ``j``
as its one reference (PINC: text ``i`` as the candidate, text ``j`` as its source) — the number
``ngrameval.score(..., sentence=True)`` gives that pair, which is sacreBLEU's ``sentence_score`` (BLEU, chrF,
TER), rouge-score's (ROUGE, profile ``rouge-score``) and the project's own sentence scoring (PINC, AEv, CIDEr-D).

How a cell is computed:

- BLEU, AEv, chrF/chrF++ and PINC from profiles (:mod:`ngrameval.matrices.profiles`): each text's n-grams are
  counted once, the clipped matches of all pairs come from matrix products, and the metric scores the pairs'
  statistics in row blocks (bounded memory).
- Every other sentence metric (TER, ROUGE-N/L/W/S, CIDEr-D, SE, ...) through :func:`ngrameval.api.measure` on the
  pairs of a row block, each pair a segment with one reference. CIDEr-D's document frequencies are then those
  of the group's reference side (every column text once per row: the same ratios), so CIDEr-D is *within a
  group*.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ngrameval.api import checked_specs, measure, signature
from ngrameval.errors import ConfigError, InputError, InputTypeError
from ngrameval.io.tables import to_pandas
from ngrameval.jobs import awaited, resolve_jobs, thread_map
from ngrameval.matrices.blas import one_blas_thread
from ngrameval.matrices.profiles import SharedCounter, group_products, packed_group_products, profiles
from ngrameval.metrics.aev import AEv
from ngrameval.metrics.bleu import BLEU
from ngrameval.metrics.chrf import ChrF
from ngrameval.metrics.pinc import PINC
from ngrameval.metrics.policy import FloatArray, summed_warnings
from ngrameval.metrics.registry import MetricSpec
from ngrameval.ngrams.chars import WordUnits, char_units, ngram_counts
from ngrameval.ngrams.stats import Stats, stats_width
from ngrameval.ngrams.texts import IntArray, Texts
from ngrameval.text import validate
from ngrameval.text.normalize import normalize_texts
from ngrameval.text.pipeline import Encoder

BLOCK_CELLS = 1 << 18  # cells scored at once (chrF: its sparse products cost per block, larger blocks are faster)
STATS_BLOCK_CELLS = 1 << 15  # BLEU, AEv, PINC: their (cells, orders) statistics stay in cache (1.4x faster measured)
GENERIC_CELLS = 1 << 14  # pairs per call of the generic path (its texts are copied per pair)


@dataclass(frozen=True)
class GroupMatrix:
    """One group's matrix: ``scores[i, j]`` is text ``rows[i]`` scored against ``cols[j]`` (indices into the texts
    given, or into ``others``); fractions in [0, 1] (TER: edits per reference word)."""

    group: Hashable
    rows: IntArray
    cols: IntArray
    scores: FloatArray
    same: bool  # the columns are the rows' own texts (no ``others``): the diagonal is each text against itself

    def to_numpy(self) -> FloatArray:
        """The ``(len(rows), len(cols))`` matrix."""
        return self.scores

    def to_pandas(self) -> Any:
        """The matrix as a DataFrame, indexed by the texts' indices (pandas imported here)."""
        import pandas as pd

        return pd.DataFrame(self.scores, index=pd.Index(self.rows, name="row"), columns=pd.Index(self.cols, name="col"))

    def off_diagonal_means(self) -> FloatArray:
        """Per row, the mean over the other columns (the diagonal left out when ``same``; every column otherwise)."""
        n, m = self.scores.shape
        if not self.same:
            return np.asarray(self.scores.mean(axis=1)) if m else np.zeros(n)
        if m < 2:
            return np.zeros(n)
        total = self.scores.sum(axis=1) - np.diagonal(self.scores)
        return np.asarray(total / (m - 1))


@dataclass(frozen=True)
class Pairwise:
    """What :func:`pairwise` returns: every group's :class:`GroupMatrix`, in the order groups first appear."""

    metric: str
    signature: str
    groups: tuple[GroupMatrix, ...]

    def to_numpy(self) -> FloatArray:
        """The matrix of the one group (``groups=None``); with several groups, take ``.groups[k].to_numpy()``."""
        if len(self.groups) != 1:
            raise ConfigError(f"{len(self.groups)} groups: take .groups[k].to_numpy(), or .to_pandas() for all")
        return self.groups[0].scores

    def to_pandas(self) -> Any:
        """Every cell, one row each: ``group, row, col, score`` (``.pivot(index="row", columns="col",
        values="score")`` gives a group's matrix)."""
        records: list[dict[str, object]] = []
        for g in self.groups:
            r, c = np.meshgrid(g.rows, g.cols, indexing="ij")
            records.extend(
                {"group": g.group, "row": int(a), "col": int(b), "score": float(s)}
                for a, b, s in zip(r.ravel(), c.ravel(), g.scores.ravel())
            )
        return to_pandas(records)


def spec_of(metric: str | MetricSpec) -> MetricSpec:
    """One checked metric spec from a ``-m`` string (``"chrf"``, ``"bleu:smooth=floor"``) or a MetricSpec."""
    if isinstance(metric, MetricSpec):
        return checked_specs([metric])[0]
    if not isinstance(metric, str):
        raise InputTypeError(f"metric must be a spec string such as 'chrf' or a MetricSpec, got {metric!r}")
    specs = checked_specs(metric)
    if len(specs) != 1:
        raise ConfigError(f"metric: give one metric spec, got {len(specs)} in {metric!r}")
    return specs[0]


def group_index(labels: Sequence[Hashable] | None, n: int, name: str) -> dict[Hashable, IntArray]:
    """Label -> the indices holding it, in first-appearance order (``None``: one group of all ``n``)."""
    if labels is None:
        return {None: np.arange(n, dtype=np.int64)}
    if isinstance(labels, str) or not isinstance(labels, Sequence | np.ndarray):
        raise InputTypeError(f"{name} must be a list with one group label per text, got {type(labels).__name__}")
    if len(labels) != n:
        raise InputError(f"{name} has {len(labels)} labels but there are {n} texts; give one label per text")
    out: dict[Hashable, list[int]] = {}
    for i, label in enumerate(labels):
        try:
            out.setdefault(label.item() if isinstance(label, np.generic) else label, []).append(i)
        except TypeError:
            raise InputTypeError(
                f"{name}[{i}] must be a hashable label (str, int), got {type(label).__name__}"
            ) from None
    return {k: np.asarray(v, dtype=np.int64) for k, v in out.items()}


# ---------------------------------------------------------------------------------------------- cell scorers


class Cells:
    """The scorer of one group: ``cells(start, stop)`` -> rows ``start .. stop - 1`` of its matrix."""

    block_cells = BLOCK_CELLS

    def __init__(self, spec: MetricSpec, rows: Sequence[str], cols: Sequence[str] | None) -> None:
        self.spec, self.rows, self.cols = spec, rows, cols
        self.m = len(rows) if cols is None else len(cols)

    def __call__(self, start: int, stop: int) -> FloatArray:
        raise NotImplementedError


def _joint(rows: Sequence[str], cols: Sequence[str] | None) -> list[str]:
    return list(rows) if cols is None else [*rows, *cols]


def profile_units(spec: MetricSpec, texts: Sequence[str]) -> tuple[list[Texts], list[int], bool]:
    """The units a profile metric counts in (per kind: characters, words or tokens), each kind's highest order
    (0: kind unused) and whether n-grams count as sets (PINC)."""
    metric = spec.metric
    if isinstance(metric, ChrF):
        if spec.pre.normalize:
            texts = list(normalize_texts(texts, spec.pre.normalize))
        if spec.pre.lowercase:
            texts = [t.lower() for t in texts]
        chars = char_units(texts, metric.whitespace)
        return (
            [chars, WordUnits()(texts) if metric.word_order else chars],
            [metric.char_order, metric.word_order],
            False,
        )
    units = Texts(*Encoder(spec.pre).encode(list(texts)))
    if isinstance(metric, PINC):
        return [units], [metric.max_order], metric.sets
    assert isinstance(metric, BLEU | AEv)
    return [units], [int(metric.order_needed)], False


def units_slice(units: Texts, a: int, b: int) -> Texts:
    """Texts ``a .. b - 1`` of ``units``."""
    return Texts(units.ids[units.off[a] : units.off[b]], units.off[a : b + 1] - units.off[a])


Products = list[list[NDArray[np.float32]]]  # per unit kind, per order: a group's (n, n) counts of every pair


class _ProfileCells(Cells):
    """Cells from profiles counted once: per unit kind and order, a :class:`SharedCounter`, or the products of a
    batch of groups (:func:`~ngrameval.matrices.profiles.group_products`, no ``others``)."""

    def __init__(
        self,
        spec: MetricSpec,
        rows: Sequence[str],
        cols: Sequence[str] | None,
        batch: tuple[list[Texts], Products] | None = None,
    ) -> None:
        super().__init__(spec, rows, cols)
        n = len(rows)
        units, orders, sets = profile_units(spec, _joint(rows, cols)) if batch is None else (batch[0], *_orders(spec))
        self.kinds = [o for o in orders if o]
        kept = [u for u, o in zip(units, orders) if o]
        self.row_lens = [u.lens[:n] for u in kept]
        self.col_lens = [u.lens if cols is None else u.lens[n:] for u in kept]
        self.products = batch[1] if batch is not None else None
        self.counters: list[list[SharedCounter]] = []
        self.totals: list[IntArray] = []
        if self.products is not None:
            self.totals = [np.stack([np.diagonal(p) for p in per], axis=-1).astype(np.int64) for per in self.products]
            return
        for u, order in zip(kept, self.kinds):
            p = profiles(u, order, sets)
            rp, cp = (p, p) if cols is None else (p.rows(0, n), p.rows(n, len(p)))
            self.totals.append(rp.totals)
            self.counters.append([SharedCounter(a, b) for a, b in zip(rp.levels, cp.levels)])

    def shared_one(self, k: int, order: int, start: int, stop: int) -> NDArray[np.float64]:
        """``(stop - start, m)``: the counts of unit kind ``k``, order index ``order``, rows ``start .. stop - 1``."""
        if self.products is not None:
            return self.products[k][order][start:stop].astype(np.float64)
        return self.counters[k][order](start, stop).astype(np.float64)

    def shared(self, k: int, start: int, stop: int) -> NDArray[np.float64]:
        """``(stop - start, m, orders)``: the counts of unit kind ``k`` of rows ``start .. stop - 1``."""
        return np.stack([self.shared_one(k, o, start, stop) for o in range(self.kinds[k])], axis=-1)


def _orders(spec: MetricSpec) -> tuple[list[int], bool]:
    metric = spec.metric
    if isinstance(metric, ChrF):
        return [metric.char_order, metric.word_order], False
    if isinstance(metric, PINC):
        return [metric.max_order], metric.sets
    assert isinstance(metric, BLEU | AEv)
    return [int(metric.order_needed)], False


class _StatsCells(_ProfileCells):
    """BLEU and AEv: the :class:`Stats` of each pair (one reference: ``match = rmatch``)."""

    block_cells = STATS_BLOCK_CELLS

    def __call__(self, start: int, stop: int) -> FloatArray:
        n = order = self.kinds[0]
        hyp_len, ref_len = self.row_lens[0][start:stop], self.col_lens[0]
        match = self.shared(0, start, stop)
        values = np.zeros((stop - start, self.m, stats_width(n, False)))
        values[..., 0] = hyp_len[:, None]
        values[..., 1] = ref_len[None, :]
        values[..., 2] = ref_len[None, :]
        values[..., 3 : 3 + n] = match
        values[..., 3 + n : 3 + 2 * n] = ngram_counts(hyp_len, order)[:, None, :]
        values[..., 3 + 2 * n : 3 + 3 * n] = match
        values[..., 3 + 3 * n : 3 + 4 * n] = ngram_counts(ref_len, order)[None, :, :]
        metric = self.spec.metric
        assert isinstance(metric, BLEU | AEv)
        return np.asarray(metric(Stats(values, n)), dtype=np.float64)


class _ChrFCells(_ProfileCells):
    """chrF / chrF++: per order ``[h, r, m]`` of each pair (``h = 0`` where the reference has no n-gram of the
    order), scored in sacreBLEU's arithmetic (:meth:`ChrF.f_score`'s operations)."""

    def _counts(self, k: int, start: int, stop: int) -> tuple[IntArray, IntArray]:
        """The n-grams of each order of rows ``start .. stop - 1`` and of every column, for unit kind ``k``."""
        order = self.kinds[k]
        return ngram_counts(self.row_lens[k][start:stop], order), ngram_counts(self.col_lens[k], order)

    def __call__(self, start: int, stop: int) -> FloatArray:
        metric = self.spec.metric
        assert isinstance(metric, ChrF)
        if metric.eps_smoothing:
            return self._stacked(metric, start, stop)
        # ChrF.f_score's operations in its order, one order at a time on (rows, cols) arrays: the same bits
        factor = float(metric.beta) ** 2
        shape = (stop - start, self.m)
        avg_p, avg_r, eff = np.zeros(shape), np.zeros(shape), np.zeros(shape)
        for k, order in enumerate(self.kinds):
            h_all, r_all = self._counts(k, start, stop)
            for i in range(order):
                match = self.shared_one(k, i, start, stop)
                h, r = h_all[:, i].astype(np.float64), r_all[:, i].astype(np.float64)
                both = (h > 0)[:, None] & (r > 0)[None, :]
                avg_p += np.where(both, match / np.where(h > 0, h, 1.0)[:, None], 0.0)
                avg_r += np.where(both, match / np.where(r > 0, r, 1.0)[None, :], 0.0)
                eff += both
        with np.errstate(divide="ignore", invalid="ignore"):
            avg_p = np.where(eff > 0, avg_p / np.where(eff > 0, eff, 1.0), 0.0)
            avg_r = np.where(eff > 0, avg_r / np.where(eff > 0, eff, 1.0), 0.0)
            num = (1 + factor) * avg_p * avg_r
            den = factor * avg_p + avg_r
            return np.asarray(np.where(avg_p + avg_r != 0, 1.0 * (num / np.where(den != 0, den, 1.0)), 0.0))

    def _stacked(self, metric: ChrF, start: int, stop: int) -> FloatArray:
        """The pairs' ``[h, r, m]`` rows scored by :class:`ChrF` itself (its ``eps_smoothing`` variant)."""
        parts = []
        for k in range(len(self.kinds)):
            h_all, r_all = self._counts(k, start, stop)
            match = self.shared(k, start, stop)
            h = np.where(r_all[None, :, :] > 0, h_all[:, None, :], 0)
            r = np.broadcast_to(r_all[None, :, :], match.shape)
            parts.append(np.stack([np.broadcast_to(h, match.shape), r, match], axis=-1).reshape(*match.shape[:2], -1))
        return np.asarray(metric(np.concatenate(parts, axis=-1)), dtype=np.float64)


class _PincCells(_ProfileCells):
    """PINC of text ``i`` (the candidate) against text ``j`` (its source): shared n-grams from the profiles."""

    block_cells = STATS_BLOCK_CELLS

    def __call__(self, start: int, stop: int) -> FloatArray:
        metric = self.spec.metric
        assert isinstance(metric, PINC)
        shared = self.shared(0, start, stop).astype(np.int64)  # exact: counts below 2**24
        total = np.broadcast_to(self.totals[0][start:stop, None, :], shared.shape)
        return np.asarray(metric(shared, total), dtype=np.float64)


class _GenericCells(Cells):
    """Any sentence metric: the pairs of a row block measured as segments with one reference each."""

    def __call__(self, start: int, stop: int) -> FloatArray:
        cols = self.rows if self.cols is None else self.cols
        out = np.empty((stop - start, self.m))
        step = max(1, GENERIC_CELLS // max(self.m, 1))
        for a in range(start, stop, step):
            b = min(a + step, stop)
            hyps = [h for h in self.rows[a:b] for _ in range(self.m)]
            refs = list(cols) * (b - a)
            source = refs if isinstance(self.spec.metric, PINC) else None
            (rows,) = measure({"pairs": hyps}, refs, [self.spec], source=source)
            out[a - start : b - start] = rows.scorer(rows.values[0]).reshape(b - a, self.m)
        return out


_PROFILE_CELLS: tuple[tuple[type, type[_ProfileCells]], ...] = (
    (ChrF, _ChrFCells),
    (BLEU, _StatsCells),
    (AEv, _StatsCells),
    (PINC, _PincCells),
)


def _profile_class(spec: MetricSpec) -> type[_ProfileCells] | None:
    return next((cls for kind, cls in _PROFILE_CELLS if isinstance(spec.metric, kind)), None)


def cells_for(
    spec: MetricSpec,
    rows: Sequence[str],
    cols: Sequence[str] | None,
    fast: bool = True,
    batch: tuple[list[Texts], Products] | None = None,
) -> Cells:
    """The scorer of one group (``fast=False``: the generic path for every metric, the tests' second opinion;
    ``batch``: the group's units and products, counted with its batch)."""
    cls = _profile_class(spec) if fast else None
    return _GenericCells(spec, rows, cols) if cls is None else cls(spec, rows, cols, batch)


def _products(units: Texts, sizes: IntArray, order: int, sets: bool) -> Products:
    """Every group's products: n-grams packed into integers where they fit, else interned."""
    packed = packed_group_products(units, sizes, order, sets)
    return group_products(units, sizes, order, sets) if packed is None else packed


def batch_matrices(
    spec: MetricSpec, texts: Sequence[str], items: Sequence[tuple[Hashable, IntArray]]
) -> list[GroupMatrix]:
    """The matrices of many small groups (no ``others``) of a profile metric, counted together: one unit
    encoding, one n-gram count and one sort for the batch (:func:`group_products`), then per group its products."""
    order = np.concatenate([rows for _, rows in items])
    sizes = np.array([len(rows) for _, rows in items], dtype=np.int64)
    batch_texts = [texts[i] for i in order]
    units, orders, sets = profile_units(spec, batch_texts)
    kept = [(u, o) for u, o in zip(units, orders) if o]
    first = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    out = []
    with one_blas_thread():
        products = [_products(u, sizes, o, sets) for u, o in kept]
        for g, (label, rows) in enumerate(items):
            a, b = int(first[g]), int(first[g + 1])
            group_units = [units_slice(u, a, b) for u, _ in kept]
            if len(group_units) < len(orders):  # a kind left unused (chrF without words): keep the slots aligned
                group_units = [group_units[0]] * (len(orders) - len(group_units)) + group_units
            cells = cells_for(spec, batch_texts[a:b], None, True, (group_units, [p[g] for p in products]))
            out.append(GroupMatrix(label, rows, rows, cells(0, b - a), True))
    return out


def group_matrix(
    spec: MetricSpec,
    texts: Sequence[str],
    others: Sequence[str] | None,
    label: Hashable,
    rows: IntArray,
    cols: IntArray,
    jobs: int = 1,
    fast: bool = True,
) -> GroupMatrix:
    """The matrix of one group, in row blocks (on ``jobs`` threads when the group is large)."""
    row_texts = [texts[i] for i in rows]
    col_texts = None if others is None else [others[j] for j in cols]
    with one_blas_thread():
        cells = cells_for(spec, row_texts, col_texts, fast)
        step = max(1, cells.block_cells // max(cells.m, 1))
        if jobs > 1:  # a block per thread at least
            step = min(step, max(1, -(-len(rows) // jobs)))
        blocks = [(a, min(a + step, len(rows))) for a in range(0, len(rows), step)]
        parts = thread_map(lambda ab: cells(*ab), blocks, jobs)
    scores = np.concatenate(parts) if parts else np.zeros((0, cells.m))
    return GroupMatrix(label, rows, rows if others is None else cols, scores, others is None)


def iter_pairwise(
    texts: Sequence[str],
    others: Sequence[str] | None = None,
    metric: str | MetricSpec = "bleu",
    groups: Sequence[Hashable] | None = None,
    other_groups: Sequence[Hashable] | None = None,
    jobs: int | None = 1,
    fast: bool = True,
) -> Iterator[GroupMatrix]:
    """The matrices of :func:`pairwise` one group at a time, in first-appearance order of the groups. Small groups
    of a profile metric (no ``others``) are counted in batches of up to :data:`BATCH_TEXTS` texts; at most
    ``2 * jobs`` groups or batches are held at once (on ``jobs`` threads; one group alone: its row blocks)."""
    spec, texts, others, plan = plan_groups(texts, others, metric, groups, other_groups)
    n_jobs = resolve_jobs(jobs)
    inner = n_jobs if len(plan) == 1 else 1
    batched = fast and others is None and len(plan) > 1 and _profile_class(spec) is not None
    tasks: Iterator[list[tuple[Hashable, IntArray, IntArray]]] = _batches(plan) if batched else ([x] for x in plan)

    def run(task: list[tuple[Hashable, IntArray, IntArray]]) -> list[GroupMatrix]:
        if batched and (len(task) > 1 or len(task[0][1]) <= BATCH_GROUP):
            return batch_matrices(spec, texts, [(label, rows) for label, rows, _ in task])
        return [group_matrix(spec, texts, others, label, rows, cols, inner, fast) for label, rows, cols in task]

    # warnings (an undefined score ...) are said once, summed over groups, when the iteration ends: caught here, on
    # the calling thread, and never in the worker threads (catch_warnings is not thread-safe)
    with summed_warnings():
        yield from _run_all(tasks, run, 1 if len(plan) == 1 else n_jobs)


def _run_all(
    tasks: Iterator[list[tuple[Hashable, IntArray, IntArray]]],
    run: Callable[[list[tuple[Hashable, IntArray, IntArray]]], list[GroupMatrix]],
    n_jobs: int,
) -> Iterator[GroupMatrix]:
    """``run`` of every task, in order, on ``n_jobs`` threads with at most ``2 * n_jobs`` tasks ahead."""
    if n_jobs == 1:
        for task in tasks:
            yield from run(task)
        return
    with ThreadPoolExecutor(max_workers=n_jobs, thread_name_prefix="ngrameval-pairs") as pool:
        ahead = [pool.submit(run, task) for task in itertools.islice(tasks, 2 * n_jobs)]
        while ahead:
            done = awaited(ahead.pop(0))
            nxt = next(tasks, None)
            if nxt is not None:
                ahead.append(pool.submit(run, nxt))
            yield from done


BATCH_TEXTS = 2048  # texts counted together in one batch of small groups
BATCH_GROUP = 512  # a larger group is counted alone (sparse products, row blocks)


def _batches(
    plan: Sequence[tuple[Hashable, IntArray, IntArray]],
) -> Iterator[list[tuple[Hashable, IntArray, IntArray]]]:
    """Consecutive groups in batches of at most :data:`BATCH_TEXTS` texts; a group above :data:`BATCH_GROUP` alone."""
    batch: list[tuple[Hashable, IntArray, IntArray]] = []
    size = 0
    for item in plan:
        n = len(item[1])
        if batch and (size + n > BATCH_TEXTS or n > BATCH_GROUP):
            yield batch
            batch, size = [], 0
        batch.append(item)
        size += n
        if n > BATCH_GROUP:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def plan_groups(
    texts: Sequence[str],
    others: Sequence[str] | None,
    metric: str | MetricSpec,
    groups: Sequence[Hashable] | None,
    other_groups: Sequence[Hashable] | None,
) -> tuple[MetricSpec, Sequence[str], Sequence[str] | None, list[tuple[Hashable, IntArray, IntArray]]]:
    """Checked inputs and the (label, rows, cols) of every group."""
    spec = spec_of(metric)
    texts = validate.texts(texts, "texts")
    if others is not None:
        others = validate.texts(others, "others")
    by_row = group_index(groups, len(texts), "groups")
    if others is None:
        if other_groups is not None:
            raise ConfigError("other_groups is for the others' texts: give others too")
        return spec, texts, None, [(k, v, v) for k, v in by_row.items()]
    if (groups is None) != (other_groups is None):
        raise ConfigError("groups and other_groups go together: label the texts and the others, or neither")
    by_col = group_index(other_groups, len(others), "other_groups")
    missing = [k for k in by_row if k not in by_col]
    if missing:
        raise InputError(f"group {missing[0]!r} of groups has no text in other_groups")
    return spec, texts, others, [(k, v, by_col[k]) for k, v in by_row.items()]


def pairwise(
    texts: Sequence[str],
    others: Sequence[str] | None = None,
    metric: str | MetricSpec = "bleu",
    groups: Sequence[Hashable] | None = None,
    *,
    other_groups: Sequence[Hashable] | None = None,
    jobs: int | None = 1,
) -> Pairwise:
    """The matrix of sentence scores of every text against every other text of its group (``others=None``; the
    diagonal is each text against itself) or against every text of ``others`` in the same group.

    ``metric``: one ``-m`` spec (``"bleu"``, ``"chrf"``, ``"chrf++"``, ``"ter"``, ``"rouge-l:profile=rouge-score"``,
    ``"pinc"``, ``"aev:alpha=0.5,n=4"``, ``"cider-d"``) or a :class:`MetricSpec`. ``groups``: one label per text
    (one group per source segment for MBR, per clip for a paraphrase corpus); ``other_groups`` labels ``others``.
    ``jobs``: threads (``None``: every core). Holds every group's matrix: for many groups use
    :func:`iter_pairwise`, which streams them.

    >>> m = pairwise(["the cat sat", "the cat sat down", "a dog"], metric="chrf").to_numpy()
    >>> m.shape, float(m[0, 0])
    ((3, 3), 1.0)
    """
    spec = spec_of(metric)
    mats = tuple(iter_pairwise(texts, others, spec, groups, other_groups, jobs))
    return Pairwise(spec.metric.display_name(), signature(spec, [1]), mats)
