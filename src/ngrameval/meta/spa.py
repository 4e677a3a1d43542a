"""Soft pairwise accuracy (SPA; Thompson et al. 2024, "Improving Statistical Significance in Human Evaluation of
Automatic Metrics via Soft Pairwise Accuracy", WMT24 metrics task), as mt-metrics-eval computes it
(github.com/google-research/mt-metrics-eval, ``pce.py`` and ``stats.PairwiseConfidenceError``).

* **Pairwise p-values**: for systems ``i < j`` with segment scores ``x_i, x_j`` (``n`` segments), the one-sided p
  that ``i`` is better is the share of ``R`` paired permutations (each segment's two scores swapped with
  probability 1/2) whose ``sum(x_i') - sum(x_j')`` reaches the observed ``sum(x_i) - sum(x_j)``. One sign
  matrix ``S`` (``R x n``, entries +-1) serves every pair: ``null = S @ x_i - S @ x_j``. As mt-metrics-eval:
  ``S = 2 rint(U) - 1`` with ``U`` the ``float32`` uniforms of ``numpy.random.default_rng(4)``, scores cast to
  ``float32``, ``p = count / R`` (``R = 1000``).
* **SPA** ``= 1 - mean_{i<j} |p^human_ij - p^metric_ij|`` over the system pairs (1 = the metric is exactly as
  confident as people about every pair). **Pooled** over several sets (language pairs): the mean over all their
  system pairs (pairs never cross sets) — ngrameval's definition, as pooled pairwise accuracy sums pairs.
* **Metric side** (``side``): ``"segments"`` sums segment scores as mt-metrics-eval does; ``"statistics"`` is
  exact for corpus metrics (BLEU, chrF, NIST, TER ...): each permutation swaps the two systems' per-segment
  sufficient statistics and recomputes the corpus metric of both, so ``null = M(T_i') - M(T_j')``. (CIDEr-D's
  corpus score is the mean of its sentence scores: both sides agree up to ``float32`` rounding.)
* **Significance between two metrics** (``stats.PermutationSigDiff``, PERM-BOTH of Deutsch et al. 2021, as
  ``data.CompareMetricsWithPairwiseConfidenceError`` runs it): both metrics' segment scores are z-scored over
  all cells (population sd); each trial swaps every cell between the two metrics with probability 1/2 (draws of
  ``numpy.random.RandomState(seed).binomial(1, 0.5, cells)``, one call per trial, as mt-metrics-eval draws from
  ``np.random`` after ``np.random.seed(seed)``); ``p = count / R`` of trials whose SPA difference reaches the
  observed one (mt-metrics-eval's early stopping never fires at its defaults, block size = ``R`` = 1000).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from ngrameval.errors import ConfigError, InputError
from ngrameval.meta.correlate import HumanScores, sentence_matrix
from ngrameval.meta.mtme_sets import Cluster, assign_ranks
from ngrameval.meta.resample import FloatArray
from ngrameval.ngrams.stats import MetricRows

SIGN_SEED = 4  # mt-metrics-eval's seed of the sign matrix
PERMUTATIONS = 1000
SIDES = ("segments", "statistics")
F32 = NDArray[np.float32]


@dataclass(frozen=True)
class SoftPairwiseAccuracy:
    """One metric's SPA against one human criterion; ``side`` says how the metric's p-values were made
    (``"segments"``: summed segment scores, mt-metrics-eval's; ``"statistics"``: the corpus metric recomputed
    from permuted sufficient statistics); ``pairs`` = system pairs averaged over."""

    metric: str
    criterion: str
    value: float
    pairs: int
    side: str
    permutations: int
    dataset: str = ""


@dataclass(frozen=True)
class SpaDifference:
    """Permutation test of ``better``'s SPA over ``worse``'s: ``delta`` = SPA(better) - SPA(worse), ``p`` the
    one-sided p-value (count / trials, mt-metrics-eval's)."""

    criterion: str
    better: str
    worse: str
    delta: float
    p: float
    trials: int
    dataset: str = ""


def sign_matrix(n_segments: int, n_permutations: int = PERMUTATIONS, seed: int = SIGN_SEED) -> F32:
    """The ``(n_permutations, n_segments)`` matrix of +-1 (``float32``) shared by every system pair."""
    if n_permutations < 1:
        raise ConfigError(f"n_permutations must be at least 1, got {n_permutations}")
    u = np.random.default_rng(seed).random(size=(n_permutations, n_segments), dtype=np.float32)
    np.rint(u, out=u)
    return u * np.float32(2.0) - np.float32(1.0)


def _matrix(scores: FloatArray, name: str) -> FloatArray:
    m = np.asarray(scores, dtype=np.float64)
    if m.ndim != 2 or m.shape[0] < 2 or m.shape[1] < 1:
        raise InputError(f"{name}: expected a (systems, segments) matrix of at least 2 systems, got shape {m.shape}")
    if not np.isfinite(m).all():
        raise InputError(f"{name}: scores must be finite (drop unjudged cells first: filled_rows)")
    return m


def pairwise_p_values(seg_scores: FloatArray, signs: F32 | None = None) -> FloatArray:
    """``(S, S)`` matrix whose upper triangle holds the p that system ``i`` beats ``j`` (summed segment scores,
    paired permutations sharing ``signs``; default :func:`sign_matrix`); NaN elsewhere."""
    m = _matrix(seg_scores, "seg_scores").astype(np.float32)
    if signs is None:
        signs = sign_matrix(m.shape[1])
    if signs.shape[1] != m.shape[1]:
        raise InputError(f"signs has {signs.shape[1]} columns but the scores have {m.shape[1]} segments")
    totals = np.sum(m, axis=1)
    null = np.matmul(signs, m.T)
    out = np.full((m.shape[0], m.shape[0]), np.nan)
    i, j = np.triu_indices(m.shape[0], 1)  # every pair at once: the same float32 differences as pair by pair
    out[i, j] = np.count_nonzero(null[:, i] - null[:, j] >= totals[i] - totals[j], axis=0) / len(signs)
    return out


def corpus_p_values(rows: MetricRows, signs: F32 | None = None, tolerance: float = 1e-12) -> FloatArray:
    """As :func:`pairwise_p_values`, each permutation recomputing the corpus metric of both systems from their
    swapped per-segment sufficient statistics (``rows.values``, oriented higher = better); differences within
    ``tolerance`` (relative to the metric's scale) of the observed one count as reaching it."""
    rows = rows.oriented()
    values = [np.asarray(v, dtype=np.float64) for v in rows.values]
    if len(values) < 2:
        raise InputError(f"{rows.metric}: SPA needs at least 2 systems")
    n = len(values[0])
    if signs is None:
        signs = sign_matrix(n)
    if signs.shape[1] != n:
        raise InputError(f"signs has {signs.shape[1]} columns but {rows.metric} has {n} segments")
    take = (signs > 0).astype(np.float64)  # 1: segment keeps system i's statistics on side i
    sums = [v.sum(axis=0) for v in values]
    corpus = rows.scorer(np.stack(sums))
    scale = max(1.0, float(np.max(np.abs(corpus))))
    out = np.full((len(values), len(values)), np.nan)
    for i, j in zip(*np.triu_indices(len(values), 1), strict=True):
        side_i = sums[j] + take @ (values[i] - values[j])
        side_j = sums[i] + sums[j] - side_i
        null = rows.scorer(side_i) - rows.scorer(side_j)
        observed = corpus[i] - corpus[j]
        out[i, j] = np.count_nonzero(null >= observed - tolerance * scale) / len(signs)
    return out


def pair_errors(human_p: FloatArray, metric_p: FloatArray) -> FloatArray:
    """``|human_p - metric_p|`` of every system pair (upper triangle, row by row)."""
    i, j = np.triu_indices(human_p.shape[0], 1)
    return np.abs(human_p - metric_p)[i, j]


def one_minus_pce(errors: Sequence[FloatArray]) -> float:
    """SPA = 1 - the mean pair error over all pairs of all sets (:func:`pair_errors`)."""
    return 1.0 - float(np.mean(np.concatenate(list(errors))))


def filled_rows(human: FloatArray, *metrics: FloatArray) -> tuple[FloatArray, ...]:
    """The human matrix and each metric matrix without the cells people did not judge (NaN), every system
    keeping the same number of cells (mt-metrics-eval reshapes what is left into ``systems x cells``)."""
    h = np.asarray(human, dtype=np.float64)
    judged = ~np.isnan(h)
    counts = judged.sum(axis=1)
    if counts.min() != counts.max():
        raise InputError(f"SPA needs the same number of judged segments for every system, got {sorted(set(counts))}")
    k = int(counts[0])
    return tuple(np.asarray(m, dtype=np.float64)[judged].reshape(h.shape[0], k) for m in (h, *metrics))


def soft_pairwise_accuracy(
    human: FloatArray,
    metric: FloatArray | MetricRows,
    n_permutations: int = PERMUTATIONS,
    seed: int = SIGN_SEED,
    criterion: str = "human",
    dataset: str = "",
) -> SoftPairwiseAccuracy:
    """SPA of one metric: ``human`` is ``(systems, segments)``; ``metric`` either a matrix of segment scores
    (summed, mt-metrics-eval's) or :class:`MetricRows` (the corpus metric from permuted statistics).

    >>> h = np.array([[1.0, 2, 3, 4], [0, 1, 2, 2], [3, 3, 4, 5]])
    >>> soft_pairwise_accuracy(h, h).value
    1.0
    """
    signs = sign_matrix(np.asarray(human).shape[1] if np.ndim(human) == 2 else 0, n_permutations, seed)
    human_p = pairwise_p_values(human, signs)
    if isinstance(metric, MetricRows):
        metric_p, name, side = corpus_p_values(metric, signs), metric.metric, "statistics"
    else:
        if np.shape(metric) != np.shape(human):
            raise InputError(f"metric scores have shape {np.shape(metric)}, human scores {np.shape(human)}")
        metric_p, name, side = pairwise_p_values(metric, signs), "metric", "segments"
    errors = pair_errors(human_p, metric_p)
    return SoftPairwiseAccuracy(name, criterion, one_minus_pce([errors]), len(errors), side, n_permutations, dataset)


def pooled_spa(values: Sequence[SoftPairwiseAccuracy]) -> float:
    """SPA over several sets from their per-set values: the mean pair error over all their pairs."""
    pairs = sum(v.pairs for v in values)
    return 1.0 - sum((1.0 - v.value) * v.pairs for v in values) / pairs if pairs else math.nan


POOLED = "(pooled)"


def pooled_values(values: Sequence[SoftPairwiseAccuracy]) -> list[SoftPairwiseAccuracy]:
    """One record per (criterion, metric, side) pooling that metric's sets (dataset ``"(pooled)"``)."""
    keys = dict.fromkeys((v.criterion, v.metric, v.side) for v in values)
    out = []
    for crit, metric, side in keys:
        got = [v for v in values if (v.criterion, v.metric, v.side) == (crit, metric, side)]
        out.append(SoftPairwiseAccuracy(metric, crit, pooled_spa(got), sum(v.pairs for v in got), side,
                                        got[0].permutations, POOLED))  # fmt: skip
    return out


def spa_inputs(rows: Sequence[MetricRows], human: HumanScores) -> tuple[FloatArray, dict[str, FloatArray]]:
    """The judged systems' human matrix and every metric's segment scores (oriented), for pooled tests."""
    keep, h = _judged_systems(human)
    return h, {r.metric: sentence_matrix(r.oriented())[keep] for r in rows}


def pooled_differences(
    sets: Sequence[tuple[FloatArray, Mapping[str, FloatArray]]],
    values: Sequence[SoftPairwiseAccuracy],
    seed: int,
    n_resamples: int = PERMUTATIONS,
    criterion: str = "human",
) -> list[SpaDifference]:
    """:func:`spa_difference` over several sets (:func:`spa_inputs` of each) of every two metrics scored on all
    of them, ordered by pooled segment-side SPA (``values``: the pooled records)."""
    common = [m for m in sets[0][1] if all(m in s for _, s in sets)]
    spa = {v.metric: v.value for v in values if v.side == "segments" and v.criterion == criterion}
    order = sorted((m for m in common if m in spa), key=lambda m: (-spa[m], m))
    hs = [h for h, _ in sets]
    out = []
    for i, a in enumerate(order):
        for b in order[i + 1 :]:
            better, worse = [s[a] for _, s in sets], [s[b] for _, s in sets]
            out.append(spa_difference(hs, better, worse, seed, n_resamples, names=(a, b), criterion=criterion,
                                      dataset=POOLED))  # fmt: skip
    return out


def _zscore(x: FloatArray) -> FloatArray:
    sd = float(np.std(x))
    return (x - x.mean()) / sd if sd > 0 else np.full(x.shape, np.nan)


def _sets(x: Sequence[FloatArray] | FloatArray) -> list[FloatArray]:
    """One ``(systems, segments)`` matrix as a list of one set; a list of matrices as it is."""
    if isinstance(x, np.ndarray) and x.ndim == 2:
        return [x]
    return [np.asarray(m, dtype=np.float64) for m in x]


def spa_difference(
    human: Sequence[FloatArray] | FloatArray,
    better: Sequence[FloatArray] | FloatArray,
    worse: Sequence[FloatArray] | FloatArray,
    seed: int,
    n_resamples: int = PERMUTATIONS,
    n_permutations: int = PERMUTATIONS,
    names: tuple[str, str] = ("better", "worse"),
    criterion: str = "human",
    dataset: str = "",
) -> SpaDifference:
    """One-sided permutation test that ``better``'s SPA exceeds ``worse``'s (segment scores, ``(systems,
    segments)`` each; a list of matrices = several sets, pooled SPA, one draw per set and trial in order).
    ``seed`` seeds ``numpy.random.RandomState`` (mt-metrics-eval's ``np.random.seed``)."""
    hs, bs, ws = _sets(human), _sets(better), _sets(worse)
    if not (len(hs) == len(bs) == len(ws)) or not hs:
        raise InputError("human, better and worse need the same number of sets (at least one)")
    if n_resamples < 1:
        raise ConfigError(f"n_resamples must be at least 1, got {n_resamples}")
    if not 0 <= seed < 2**32:
        raise ConfigError(f"seed must lie in 0 .. 2**32 - 1 (numpy.random.RandomState's), got {seed}")
    rs = np.random.RandomState(seed)
    sets = []
    for h, b, w in zip(hs, bs, ws, strict=True):
        h, b, w = filled_rows(h, b, w)
        signs = sign_matrix(h.shape[1], n_permutations)
        z_b, z_w = _zscore(b.ravel()), _zscore(w.ravel())
        if np.isnan(z_b).any() or np.isnan(z_w).any():
            raise InputError("a metric with constant scores cannot be z-scored for the permutation test")
        sets.append((h.shape, pairwise_p_values(h, signs), signs, z_b, z_w))

    def pooled(scores: Sequence[tuple[FloatArray, FloatArray]]) -> tuple[float, float]:
        errs = [(pair_errors(p, pairwise_p_values(a.reshape(s), g)), pair_errors(p, pairwise_p_values(c.reshape(s), g)))
                for (s, p, g, *_), (a, c) in zip(sets, scores, strict=True)]  # fmt: skip
        return one_minus_pce([e[0] for e in errs]), one_minus_pce([e[1] for e in errs])

    spa_b, spa_w = pooled([(s[3], s[4]) for s in sets])
    delta = spa_b - spa_w
    count = 0
    for _ in range(n_resamples):
        swapped = []
        for *_, z_b, z_w in sets:
            w1 = rs.binomial(1, 0.5, len(z_w))
            swapped.append((w1 * z_b + (1 - w1) * z_w, w1 * z_w + (1 - w1) * z_b))
        a, c = pooled(swapped)
        count += a - c >= delta
    return SpaDifference(criterion, names[0], names[1], delta, count / n_resamples, n_resamples, dataset)


def _judged_systems(human: HumanScores) -> tuple[NDArray[np.bool_], FloatArray]:
    if human.segment is None:
        raise InputError(f"{human.criterion}: soft pairwise accuracy needs segment-level judgments")
    keep = ~np.all(np.isnan(human.segment), axis=1)
    if keep.sum() < 2:
        raise InputError(f"{human.criterion}: soft pairwise accuracy needs at least 2 judged systems")
    return keep, human.segment[keep]


def spa_of_rows(
    rows: Sequence[MetricRows],
    human: HumanScores,
    sides: Sequence[str] = ("segments",),
    n_permutations: int = PERMUTATIONS,
    dataset: str = "",
) -> list[SoftPairwiseAccuracy]:
    """SPA of every metric of ``rows`` against one criterion's segment judgments (systems judged nowhere left
    out; the ``k``-th judged cell of each system paired, as mt-metrics-eval does), on each of ``sides``."""
    bad = [s for s in sides if s not in SIDES]
    if bad or not sides:
        raise ConfigError(f"SPA side must be one of {', '.join(SIDES)}, got {', '.join(bad) or 'none'}")
    keep, h = _judged_systems(human)
    judged = ~np.isnan(h)
    (h_cells,) = filled_rows(h)
    signs = sign_matrix(h_cells.shape[1], n_permutations)
    human_p = pairwise_p_values(h_cells, signs)
    out = []
    for r in (r.oriented() for r in rows):
        seg = sentence_matrix(r)[keep]  # system-level external scores have none: an InputError names them
        for side in sides:
            if side == "segments":
                (m,) = filled_rows(h, seg)[1:]
                metric_p = pairwise_p_values(m, signs)
            else:
                values = tuple(v[j] for v, j in zip([v for v, k in zip(r.values, keep) if k], judged, strict=True))
                metric_p = corpus_p_values(replace(r, values=values), signs)
            errors = pair_errors(human_p, metric_p)
            out.append(SoftPairwiseAccuracy(r.metric, human.criterion, one_minus_pce([errors]), len(errors), side,
                                            n_permutations, dataset))  # fmt: skip
    return out


def spa_differences(
    rows: Sequence[MetricRows], human: HumanScores, seed: int, n_resamples: int = PERMUTATIONS, dataset: str = ""
) -> list[SpaDifference]:
    """:func:`spa_difference` of every two metrics (segment scores), the higher-SPA metric as ``better``
    (mt-metrics-eval's order: SPA descending, then name); each test seeded with ``seed``."""
    keep, h = _judged_systems(human)
    spa = {v.metric: v.value for v in spa_of_rows(rows, human)}
    seg = {r.metric: sentence_matrix(r.oriented())[keep] for r in rows}
    order = sorted(seg, key=lambda m: (-spa[m], m))
    return [spa_difference(h, seg[a], seg[b], seed, n_resamples, names=(a, b), criterion=human.criterion,
                           dataset=dataset) for i, a in enumerate(order) for b in order[i + 1 :]]  # fmt: skip


def spa_clusters(
    values: Sequence[SoftPairwiseAccuracy], differences: Sequence[SpaDifference], alpha: float = 0.05
) -> list[Cluster]:
    """mt-metrics-eval's significance clusters (``AssignRanks``) of the segment-side SPA values."""
    out: list[Cluster] = []
    for key in dict.fromkeys((d.dataset, d.criterion) for d in differences):
        vals = {v.metric: v.value for v in values if (v.dataset, v.criterion) == key and v.side == "segments"}
        p = {(d.better, d.worse): d.p for d in differences if (d.dataset, d.criterion) == key}
        out += [Cluster(key[0], key[1], "system", "spa", r.metric, r.value, r.rank, alpha)
                for r in assign_ranks(vals, p, alpha)]  # fmt: skip
    return out
