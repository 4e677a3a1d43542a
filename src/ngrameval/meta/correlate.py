"""Does a metric agree with people? Human scores aggregated per segment and system, and correlations.

Aggregation (SPEC §5): a (system, segment) cell's human score is the mean over its judges; a system's is the
mean over its judged segments (or over judges, for system-level judgments); ``scale=(lo, hi)`` maps scores
to (x - lo) / (hi - lo). Coefficients come from scipy: Pearson r (with its p-value), R^2 = r^2 (the
coefficient of determination of the least-squares line; Soricut & Brill's tables give it in %),
Spearman rho, Kendall tau-b and tau-c.

Levels and groupings (mt-metrics-eval's choices, named in words):

- ``system``: corpus metric score vs mean human score, one point per system.
- ``segment``, ``grouping="none"``: every judged (system, segment) pair is one point.
- ``segment``, ``grouping="item"``: a coefficient per segment across systems, averaged over segments.
- ``segment``, ``grouping="system"``: a coefficient per system across its segments, averaged over systems.

Confidence intervals are bootstrap percentile intervals, seeded (seed recorded): at system level the
segments are resampled and every system's corpus score is recomputed from its statistics (the same
``W @ rows`` as the significance tests; with system-level judgments the systems are resampled); at
segment level the points (``none``) or the per-group coefficients (``item``/``system``) are resampled.
Resamples where a coefficient is undefined (fewer than 3 points, or a constant side) are left out
and counted.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from ngrameval import progress as _progress
from ngrameval.errors import ConfigError, InputError
from ngrameval.io.judgments import Judgment
from ngrameval.io.tables import html_table, to_pandas
from ngrameval.meta.resample import FloatArray, resolve_seed
from ngrameval.meta.significance import DEFAULT_SEED, bootstrap_scores
from ngrameval.ngrams.stats import MetricRows

COEFFICIENTS = ("pearson", "r2", "spearman", "kendall-b", "kendall-c", "accuracy", "acc-eq")
PAIRWISE = ("accuracy", "acc-eq")  # mt-metrics-eval's pairwise accuracies (meta.mtme); defined from 2 points
LEVELS = ("system", "segment")
GROUPINGS = ("none", "item", "system")


@dataclass(frozen=True)
class HumanScores:
    """One criterion's human scores for ``systems`` (in that order); ``segment`` is ``None`` for
    system-level judgments, else ``(n_systems, n_segments)`` with NaN where a cell has no judgment."""

    criterion: str
    systems: tuple[str, ...]
    system: FloatArray
    segment: FloatArray | None
    judgments: int
    missing: int  # systems (system level) or (system, segment) cells without a judgment
    segments: tuple[str, ...] | None = None  # the segment ids of the columns of ``segment``


def aggregate(
    judgments: Sequence[Judgment],
    criterion: str,
    systems: Sequence[str],
    segments: Sequence[str] | None = None,
    scale: tuple[float, float] | None = None,
) -> HumanScores:
    """Means over judges (and segments) of ``criterion`` for ``systems``; ``segments`` are the segment ids
    in output order (default: judgments without segments, i.e. system level)."""
    rows = [j for j in judgments if j.criterion == criterion]
    if not rows:
        found = sorted({j.criterion for j in judgments})
        raise InputError(f"no judgment for criterion {criterion!r}; criteria found: {', '.join(found)}")
    sys_index = {s: i for i, s in enumerate(systems)}
    stranger = next((j for j in rows if j.system not in sys_index), None)
    if stranger is not None:
        unknown = sorted({j.system for j in rows} - set(sys_index))
        others = f" (and {', '.join(repr(u) for u in unknown if u != stranger.system)})" if len(unknown) > 1 else ""
        raise InputError(f"{stranger.where}: unknown system {stranger.system!r}{others}; systems: {', '.join(systems)}")
    lo, span = (scale[0], scale[1] - scale[0]) if scale else (0.0, 1.0)
    if span <= 0:
        raise ConfigError(f"scale must be (low, high) with low < high, got {scale}")
    n_sys = len(systems)
    if segments is None:
        with_seg = [j for j in rows if j.segment is not None]
        if with_seg:
            raise InputError(f"{with_seg[0].where}: judgments have segments; give the segment ids of the outputs")
        sums, counts = np.zeros(n_sys), np.zeros(n_sys)
        for j in rows:
            sums[sys_index[j.system]] += (j.score - lo) / span
            counts[sys_index[j.system]] += 1
        system = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
        return HumanScores(criterion, tuple(systems), system, None, len(rows), int(np.sum(counts == 0)))
    seg_index = {s: i for i, s in enumerate(segments)}
    cell_sum, cell_n = np.zeros((n_sys, len(segments))), np.zeros((n_sys, len(segments)))
    for j in rows:
        if j.segment not in seg_index:
            raise InputError(f"{j.where}: segment {j.segment!r} is not one of the {len(segments)} segment ids")
        cell_sum[sys_index[j.system], seg_index[j.segment]] += (j.score - lo) / span
        cell_n[sys_index[j.system], seg_index[j.segment]] += 1
    segment = np.where(cell_n > 0, cell_sum / np.maximum(cell_n, 1), np.nan)
    judged = cell_n > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        system = np.where(judged.any(axis=1), np.nansum(segment, axis=1) / judged.sum(axis=1), np.nan)
    return HumanScores(criterion, tuple(systems), system, segment, len(rows), int(np.sum(~judged)), tuple(segments))


def coefficient(x: FloatArray, y: FloatArray, name: str) -> tuple[float, float]:
    """(value, p-value) of one coefficient; NaN for both when undefined (< 3 points or a constant side).
    ``accuracy`` (Kocmi et al. 2021) and ``acc-eq`` (tie-calibrated, Deutsch et al. 2023, over all pairs of
    the points) have no p-value (NaN) and need 2 points (:mod:`ngrameval.meta.mtme`)."""
    if name not in COEFFICIENTS:
        raise ConfigError(f"unknown coefficient {name!r}; valid: {', '.join(COEFFICIENTS)}")
    if name in PAIRWISE:
        from ngrameval.meta import mtme

        if len(x) < 2:
            return math.nan, math.nan
        value = mtme.pairwise_accuracy(x, y) if name == "accuracy" else mtme.tie_calibrated(x, y, "none").value
        return value, math.nan
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan, math.nan
    if name in ("pearson", "r2"):
        r, p = stats.pearsonr(x, y)
        return (float(r) ** 2 if name == "r2" else float(r)), float(p)
    if name == "spearman":
        rho, p = stats.spearmanr(x, y)
        return float(rho), float(p)
    tau, p = stats.kendalltau(x, y, variant=name[-1])
    return float(tau), float(p)


def _resampled_ranks(v: FloatArray, rows: NDArray[np.int64]) -> FloatArray:
    """Average ranks (1-based, ties averaged: scipy's ``rankdata``) of ``v[rows[k]]`` for every row ``k``, in
    O(n) a row: a value's rank is the count of smaller values drawn plus (the count of its ties + 1) / 2."""
    values, dense = np.unique(v, return_inverse=True)
    k = len(values)
    drawn = dense[rows] + k * np.arange(len(rows))[:, None]  # each row's values in its own bin range
    counts = np.bincount(drawn.ravel(), minlength=k * len(rows)).reshape(len(rows), k).astype(np.float64)
    smaller = np.cumsum(counts, axis=1) - counts
    avg = smaller + (counts + 1.0) / 2.0
    return np.take_along_axis(avg, dense[rows], axis=1)


def resampled_coefficients(x: FloatArray, y: FloatArray, idx: NDArray[np.int64], name: str) -> FloatArray:
    """The coefficient of every resample ``x[idx[k]], y[idx[k]]``, as :func:`coefficient` gives it (NaN when
    undefined): Pearson, R² and Spearman (Pearson of average ranks) vectorised in blocks of about 2M values,
    Kendall one resample at a time (scipy)."""
    if name not in ("pearson", "r2", "spearman") or idx.shape[1] < 3:
        return np.array([coefficient(x[i], y[i], name)[0] for i in idx])
    out = np.empty(len(idx))
    block = max(1, 2_000_000 // idx.shape[1])
    for start in range(0, len(idx), block):
        rows = idx[start : start + block]
        a, b = x[rows], y[rows]
        ranks = (_resampled_ranks(x, rows), _resampled_ranks(y, rows)) if name == "spearman" else None
        out[start : start + len(rows)] = _row_pearson(a, b, np.ones(a.shape, dtype=bool), name, ranks)
    return out


def row_coefficients(a: FloatArray, b: FloatArray, name: str) -> FloatArray:
    """The coefficient of every row pair ``a[k], b[k]`` over the places where ``b[k]`` is not NaN, as
    :func:`coefficient` gives it (NaN when undefined: < 3 points or a constant side): Pearson, R² and Spearman
    vectorised (ranks by pairwise comparison, ties averaged, in blocks of about 4M comparisons), Kendall and the
    pairwise accuracies one row at a time. The system-level bootstrap: a row is one resample's scores of every
    system."""
    kept = ~np.isnan(b)
    if name not in ("pearson", "r2", "spearman") or a.shape[1] < 3:
        return np.array([coefficient(u[k], v[k], name)[0] for u, v, k in zip(a, b, kept, strict=True)])
    out = np.empty(len(a))
    block = max(1, 4_000_000 // a.shape[1] ** 2)
    for start in range(0, len(a), block):
        u, v, k = a[start : start + block], b[start : start + block], kept[start : start + block]
        ranks = (_kept_ranks(u, k), _kept_ranks(v, k)) if name == "spearman" else None
        out[start : start + len(u)] = _row_pearson(u, v, k, name, ranks)
    return out


def _kept_ranks(v: FloatArray, kept: NDArray[np.bool_]) -> FloatArray:
    """Average ranks (1-based, ties averaged: scipy's ``rankdata``) of each row's kept values among themselves."""
    with np.errstate(invalid="ignore"):
        pair = kept[:, None, :]
        smaller = ((v[:, None, :] < v[:, :, None]) & pair).sum(axis=2)
        equal = ((v[:, None, :] == v[:, :, None]) & pair).sum(axis=2)
    return np.where(kept, smaller + (equal + 1.0) / 2.0, 0.0)


def _row_pearson(
    a: FloatArray, b: FloatArray, kept: NDArray[np.bool_], name: str, ranks: tuple[FloatArray, FloatArray] | None
) -> FloatArray:
    """Pearson (or R², or Spearman: Pearson of ``ranks``) of every row over its ``kept`` places; NaN where fewer
    than 3 are kept or a side is constant there (as :func:`coefficient` checks ``np.ptp``)."""
    n = kept.sum(axis=1)
    with np.errstate(invalid="ignore"):
        constant = [np.max(s, axis=1, where=kept, initial=-np.inf) == np.min(s, axis=1, where=kept, initial=np.inf)
                    for s in (a, b)]  # fmt: skip
    if ranks is not None:
        a, b = ranks
    centred = []
    for s in (a, b):
        s = np.where(kept, s, 0.0)
        mean = s.sum(axis=1, keepdims=True) / np.maximum(n, 1)[:, None]
        centred.append(np.where(kept, s - mean, 0.0))
    u, v = centred
    den = np.sqrt((u * u).sum(axis=1) * (v * v).sum(axis=1))
    r = np.full(len(u), math.nan)
    np.divide((u * v).sum(axis=1), den, out=r, where=(den > 0) & (n >= 3) & ~constant[0] & ~constant[1])
    r = np.clip(r, -1.0, 1.0)
    out: FloatArray = r * r if name == "r2" else r
    return out


@dataclass(frozen=True)
class Correlation:
    """One metric vs one criterion; ``n`` points (or groups averaged), ``undefined`` resamples left out."""

    metric: str
    criterion: str
    level: str
    grouping: str
    coefficient: str
    value: float
    p_value: float | None
    ci_low: float
    ci_high: float
    n: int
    n_resamples: int
    undefined: int
    seed: int
    confidence: float
    signature: str = ""  # the metric's signature (ngrameval's, or "external:<file>")
    epsilon: float | None = None  # acc-eq: the calibrated tie threshold
    dataset: str = ""  # the data set (language pair) when several are evaluated at once
    # a lower-is-better metric (TER): its scores were negated before correlating, as mt-metrics-eval does, so a
    # positive value means agreement with people for every metric
    negated: bool = False


class Correlations(tuple[Correlation, ...]):
    """What :func:`correlate` returns: a tuple of :class:`Correlation` that a notebook shows as a metrics x
    coefficients table per criterion (value and interval), with ``to_dict()`` and ``to_pandas()``."""

    def to_dict(self) -> list[dict[str, object]]:
        return [dataclasses.asdict(c) for c in self]

    def to_pandas(self) -> Any:
        return to_pandas(self.to_dict())

    def _repr_html_(self) -> str:
        rows = [[c.criterion, c.level, c.metric, c.coefficient, c.value, c.ci_low, c.ci_high, c.n] for c in self]
        head = ["criterion", "level", "metric", "coefficient", "value", "ci low", "ci high", "n"]
        return html_table(head, rows, "bootstrap percentile intervals", digits=4)


def _interval(samples: FloatArray, confidence: float) -> tuple[float, float, int]:
    ok = samples[~np.isnan(samples)]
    if not len(ok):
        return math.nan, math.nan, len(samples)
    lo, hi = np.quantile(ok, [(1 - confidence) / 2, (1 + confidence) / 2])
    return float(lo), float(hi), len(samples) - len(ok)


def _human_rows(segment: FloatArray) -> MetricRows:
    """Human segment scores as summable rows (sum of judged scores, judged count) per system."""
    judged = ~np.isnan(segment)
    values = tuple(np.column_stack([np.where(j, s, 0.0), j.astype(np.float64)]) for s, j in zip(segment, judged))

    def mean(v: FloatArray) -> FloatArray:
        with np.errstate(invalid="ignore", divide="ignore"):
            out: FloatArray = np.where(v[..., 1] > 0, v[..., 0] / v[..., 1], np.nan)
        return out

    return MetricRows("human", "", False, values, mean)


def sentence_matrix(r: MetricRows) -> FloatArray:
    """The sentence scores of every system: ``(n_systems, n_segments)``."""
    if getattr(r, "fixed", None) is not None:  # io.scores.SystemRows
        raise InputError(f"{r.metric} ({r.signature}): system-level scores only; segment level needs segment scores")
    return np.stack([r.scorer(v) for v in r.values])


def direction_notes(rows: Sequence[MetricRows]) -> list[str]:
    """A line per lower-is-better metric of ``rows`` saying how meta-evaluation orients it."""
    return [f"{r.metric}: lower is better; its scores are negated before correlating and testing (as "
            "mt-metrics-eval does), so a positive value means agreement with people" for r in rows
            if not r.higher_is_better]  # fmt: skip


def points(rows: Sequence[MetricRows], human: HumanScores, level: str) -> tuple[list[FloatArray], FloatArray]:
    """The (metric, human) points of one level, every metric on the same points and oriented higher = better
    (:meth:`MetricRows.oriented`): at system level the corpus scores of the judged systems, at segment level
    every judged (system, segment) cell."""
    rows = [r.oriented() for r in rows]
    if level == "system":
        keep = ~np.isnan(human.system)
        return [r.corpus()[keep] for r in rows], human.system[keep]
    if level != "segment" or human.segment is None:
        raise InputError(f"{human.criterion}: level {level!r} needs {level}-level judgments")
    judged = ~np.isnan(human.segment)
    return [sentence_matrix(r)[judged] for r in rows], human.segment[judged]


def _grouped(x: FloatArray, y: FloatArray, name: str, axis: int) -> FloatArray:
    """Coefficient per item (axis 1: across systems) or per system (axis 0: across segments)."""
    xs, ys = (x.T, y.T) if axis == 1 else (x, y)
    out = []
    for a, b in zip(xs, ys):
        keep = ~np.isnan(b)
        out.append(coefficient(a[keep], b[keep], name)[0])
    return np.array(out)


def correlate(
    rows: Sequence[MetricRows],
    human: HumanScores,
    *,
    level: str = "system",
    grouping: str = "none",
    coefficients: Sequence[str] = ("pearson", "r2", "spearman", "kendall-b"),
    n_resamples: int = 1000,
    seed: int | None = DEFAULT_SEED,
    confidence: float = 0.95,
    scores: Mapping[str, Mapping[str, object]] | None = None,
    dataset: str = "",
    lower_is_better: Sequence[str] = (),
) -> Correlations:
    """Every coefficient of every metric of ``rows`` (systems in ``human.systems`` order) against ``human``.

    ``scores`` adds any other metric's scores beside them (:func:`ngrameval.io.scores.from_mapping`):
    ``{metric: {system: value}}`` or per segment ``{metric: {system: {segment: value}}}`` (or a list per
    system in the segment order); ``rows`` may then be empty; ``lower_is_better`` names those of its metrics
    that are error rates. ``dataset`` names the data set in the records.

    Every metric is oriented higher = better first: a lower-is-better metric's scores (TER's, and those named in
    ``lower_is_better``) are negated, as mt-metrics-eval does, and its records say ``negated=True``."""
    if lower_is_better and scores is None:
        raise ConfigError("lower_is_better names metrics of scores=; give scores")
    if scores is not None:
        from ngrameval.io.scores import from_mapping, to_rows
        from ngrameval.io.scores import lower_is_better as mark_lower

        segments = human.segments
        if human.segment is not None and segments is None:
            segments = tuple(str(i) for i in range(1, human.segment.shape[1] + 1))
        external = mark_lower(from_mapping(scores), lower_is_better, "lower_is_better")
        rows = [*rows, *to_rows(external, human.systems, segments)]
    if not rows:
        raise ConfigError("nothing to correlate: give metric rows or scores")
    negated = {r.metric for r in rows if not r.higher_is_better}
    rows = [r.oriented() for r in rows]
    if level not in LEVELS or grouping not in GROUPINGS:
        raise ConfigError(f"level must be one of {', '.join(LEVELS)} and grouping one of {', '.join(GROUPINGS)}")
    if level == "segment" and human.segment is None:
        raise InputError(f"{human.criterion}: segment-level correlation needs segment-level judgments")
    if n_resamples < 1 or not 0 < confidence < 1:
        raise ConfigError(f"need n_resamples >= 1 and 0 < confidence < 1; got {n_resamples}, {confidence}")
    for name in coefficients:
        coefficient(np.zeros(0), np.zeros(0), name)  # validates the names
    used_seed = resolve_seed(seed)
    rng = np.random.default_rng(used_seed)
    out: list[Correlation] = []
    if level == "system":
        keep = ~np.isnan(human.system)
        if keep.sum() < 3:
            raise InputError(f"{human.criterion}: {int(keep.sum())} judged systems; a correlation needs >= 3")
        metric = [r.corpus() for r in rows]
        if human.segment is not None:
            boot = bootstrap_scores([*rows, _human_rows(human.segment)], n_resamples, rng)
            boot_x, boot_y = boot[:-1], boot[-1]
        else:  # system-level judgments: resample the systems
            idx = rng.integers(0, len(human.systems), size=(n_resamples, len(human.systems)))
            boot_x = [np.take(m, idx) for m in metric]
            boot_y = np.take(human.system, idx)
        for r, x, bx in _progress.tracked(list(zip(rows, metric, boot_x)), "correlations", "metric"):
            for name in coefficients:
                value, p_value = coefficient(x[keep], human.system[keep], name)
                p: float | None = p_value
                eps = None
                if name in PAIRWISE:
                    p = None
                    if name == "acc-eq":
                        from ngrameval.meta import mtme

                        eps = mtme.tie_calibrated(x[keep], human.system[keep], "none").epsilon
                samples = row_coefficients(np.asarray(bx, dtype=np.float64), np.asarray(boot_y, dtype=np.float64), name)
                lo, hi, bad = _interval(samples, confidence)
                n = int(keep.sum())
                out.append(Correlation(r.metric, human.criterion, level, "none", name, value, p, lo, hi, n,
                                       n_resamples, bad, used_seed, confidence, r.signature, eps, dataset,
                                       r.metric in negated))  # fmt: skip
        _warn_undefined(out)
        return Correlations(out)
    y = human.segment
    assert y is not None  # checked above
    for r in _progress.tracked(rows, "correlations", "metric"):
        x = sentence_matrix(r)
        for name in coefficients:
            pv: float | None
            eps = None
            if name == "acc-eq":
                from ngrameval.meta import mtme

                table = mtme.pair_table(x, np.where(np.isnan(y), np.nan, y), grouping)
                cal = mtme.calibrate(table)
                if not cal.pairs:
                    raise InputError(f"{human.criterion}: no {grouping} group has two judged points (acc-eq)")
                value, pv, n, eps = cal.value, None, cal.groups if grouping != "none" else cal.pairs, cal.epsilon
                if grouping == "none":
                    judged = ~np.isnan(y)
                    idx = rng.integers(0, int(judged.sum()), size=(n_resamples, int(judged.sum())))
                    samples = resampled_coefficients(x[judged], y[judged], idx, name)
                else:
                    samples = mtme.bootstrap_calibrated(table, n_resamples, rng)
            elif grouping == "none":
                judged = ~np.isnan(y)
                xs, ys = x[judged], y[judged]
                value, pv = coefficient(xs, ys, name)
                idx = rng.integers(0, len(xs), size=(n_resamples, len(xs)))
                samples = resampled_coefficients(xs, ys, idx, name)
                n = len(xs)
            else:
                per = _grouped(x, y, name, 1 if grouping == "item" else 0)
                per = per[~np.isnan(per)]
                if not len(per):
                    raise InputError(f"{human.criterion}: no {grouping} has a defined {name} coefficient")
                value, pv, n = float(per.mean()), None, len(per)
                samples = per[rng.integers(0, n, size=(n_resamples, n))].mean(axis=1)
            lo, hi, bad = _interval(samples, confidence)
            out.append(Correlation(r.metric, human.criterion, level, grouping, name, value, pv, lo, hi, n,
                                   n_resamples, bad, used_seed, confidence, r.signature, eps, dataset,
                                   r.metric in negated))  # fmt: skip
    _warn_undefined(out)
    return Correlations(out)


def _warn_undefined(results: Sequence[Correlation]) -> None:
    for c in results:
        if math.isnan(c.value):
            warnings.warn(
                f"{c.metric} vs {c.criterion}: {c.coefficient} undefined (a constant side or < 3 points)",
                UserWarning,
                stacklevel=3,
            )
