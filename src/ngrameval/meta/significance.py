"""Significance of differences between systems under any metric, on per-segment rows.

Both tests recompute the corpus-level score exactly on every resample from summed rows
(:class:`~ngrameval.ngrams.stats.MetricRows`): micro-averaged metrics (BLEU, NIST, AEv) from their
n-gram statistics, means of sentence scores (PINC, SE) from rows ``(score, 1)``.

- **Paired approximate randomisation** (Noreen 1989; Riezler & Maxwell 2005, as in MultEval and
  sacreBLEU): in each of R trials every segment's two outputs are swapped with probability 1/2;
  with t = |score(A) - score(B)|, ``p = (c + 1) / (R + 1)`` where c counts trials with t* >= t.
  A trial is one mask row ``M``: the pseudo-systems are ``S_A - M @ A + M @ B`` and its mirror.
- **Paired bootstrap resampling** (Koehn 2004; Efron & Tibshirani 1993), as Moses'
  ``bootstrap-hypothesis-difference-significance.pl`` and sacreBLEU test it: B resamples of the
  segments (the same for every system); with d* = score*(A) - score*(B),
  ``p = (c + 1) / (B + 1)`` where c counts resamples with |d*| - mean|d*| >= |score(A) - score(B)|
  (the bootstrap distribution shifted to mean 0 stands in for the null). ``win_rate`` is Koehn's
  share of resamples where A scores better (higher; lower for TER; a tie counts for neither).

Scores within 1e-10 (relative) of the observed statistic count as reaching it, so float rounding in
the matrix products never turns a tie into a miss. A system compared with itself gets p = 1.
Confidence intervals of each system's score are bootstrap percentile intervals.
"""

from __future__ import annotations

import dataclasses
import math
import string
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ngrameval import progress as _progress
from ngrameval.errors import ConfigError, InputError
from ngrameval.io.tables import html_table, to_pandas
from ngrameval.jobs import resolve_jobs, run_blocks
from ngrameval.meta.resample import (
    BLOCK_ENTRIES,
    FloatArray,
    WeightedSums,
    blocks,
    bootstrap_counts,
    resolve_seed,
    swap_masks,
)
from ngrameval.ngrams.stats import MetricRows

TESTS = ("ar", "bs")
CORRECTIONS = ("holm", "bonferroni", "none")
DEFAULT_RESAMPLES = {"ar": 10_000, "bs": 1_000}
DEFAULT_SEED = 12345  # sacreBLEU's default, so the defaults of both tools are fixed and recorded
_REL_TOL = 1e-10


@dataclass(frozen=True)
class SystemScore:
    """A system's corpus score with the bootstrap mean and percentile confidence interval."""

    system: str
    score: float
    mean: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class PairTest:
    """One paired test: ``delta = score_a - score_b``; ``p_adjusted`` after the multiple-comparison
    correction; ``significant`` if ``p_adjusted <= alpha``; ``win_rate`` (bootstrap only): share of
    resamples where A scores better than B (higher; lower for an error rate such as TER)."""

    system_a: str
    system_b: str
    score_a: float
    score_b: float
    delta: float
    p_value: float
    p_adjusted: float
    significant: bool
    win_rate: float | None


@dataclass(frozen=True)
class RankEntry:
    """A system's place: its rank range (1 + systems significantly better .. n - systems significantly
    worse) and its letters in the compact letter display of the pairwise tests (:func:`letter_groups`): two
    systems share a letter exactly when their difference is not significant."""

    system: str
    score: float
    rank_low: int
    rank_high: int
    groups: str


@dataclass(frozen=True)
class MetricComparison:
    """Every system and pair under one metric; ``ranking`` is ``None`` when only a baseline was compared."""

    metric: str
    signature: str
    fraction: bool
    systems: tuple[SystemScore, ...]
    pairs: tuple[PairTest, ...]
    ranking: tuple[RankEntry, ...] | None
    higher_is_better: bool = True  # False for error rates (TER): the best system has the lowest score


@dataclass(frozen=True)
class Comparison:
    """The result of :func:`paired_test`; ``seed`` is the one used (drawn and recorded if none was given)."""

    test: str
    n_resamples: int
    n_confidence: int
    seed: int
    correction: str
    alpha: float
    confidence: float
    baseline: str | None
    metrics: tuple[MetricComparison, ...]

    def __repr__(self) -> str:
        per = "; ".join(
            f"{m.metric}: {len(m.systems)} systems, {sum(p.significant for p in m.pairs)} of {len(m.pairs)} pairs "
            "significant"
            for m in self.metrics
        )
        return f"Comparison({self.test}, {self.n_resamples} resamples, seed {self.seed}, {self.correction}; {per})"

    def to_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self)

    def to_pandas(self) -> Any:
        """One row per metric and tested pair: both scores, the difference, p-values, significance."""
        return to_pandas([{"metric": m.metric, **dataclasses.asdict(p)} for m in self.metrics for p in m.pairs])

    def _repr_html_(self) -> str:
        """Per metric, the ranking (rank range and letter groups), scores x100 on the 0-1 scale as text output
        and :class:`~ngrameval.api.Scores` show them."""
        parts = []
        for m in self.metrics:
            k = 100.0 if m.fraction else 1.0
            if m.ranking is None:
                rows = [[s.system, s.score * k, s.ci_low * k, s.ci_high * k, "", ""] for s in m.systems]
            else:
                ci = {s.system: s for s in m.systems}
                rows = [[r.system, r.score * k, ci[r.system].ci_low * k, ci[r.system].ci_high * k,
                         f"{r.rank_low}-{r.rank_high}", r.groups] for r in m.ranking]  # fmt: skip
            caption = f"{m.metric}: {self.test}, {self.correction} correction, significance level {self.alpha:g}"
            head = ["system", "score x100" if m.fraction else "score", "ci low", "ci high", "rank", "groups"]
            parts.append(html_table(head, rows, caption, 4))
        return "".join(parts)


def adjust_p(p: FloatArray, method: str = "holm") -> FloatArray:
    """Family-wise corrected p-values: Holm's step-down (1979), Bonferroni, or none.

    Holm: with p sorted ascending, p'_(i) = max_{j <= i} min(1, (m - j + 1) p_(j)).

    >>> adjust_p(np.array([0.01, 0.04, 0.03])).tolist()
    [0.03, 0.06, 0.06]
    """
    if method not in CORRECTIONS:
        raise ConfigError(f"unknown correction {method!r}; valid: {', '.join(CORRECTIONS)}")
    p = np.asarray(p, dtype=np.float64)
    m = len(p)
    if method == "none" or m == 0:
        return p.copy()
    if method == "bonferroni":
        return np.minimum(1.0, p * m)
    order = np.argsort(p, kind="stable")
    out = np.empty(m)
    out[order] = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    return out


def _label(k: int) -> str:
    letters = string.ascii_lowercase + string.ascii_uppercase
    return letters[k] if k < len(letters) else f"[{k + 1}]"


def higher_is_better(rows: MetricRows) -> bool:
    """The metric's direction (:attr:`MetricRows.higher_is_better`): False for error rates (TER) and external
    scores declared lower-is-better."""
    return rows.higher_is_better


def _absorb(columns: list[frozenset[int]]) -> list[frozenset[int]]:
    """The columns that are no subset of another (one copy of equal ones), in their order."""
    out: list[frozenset[int]] = []
    for k, c in enumerate(columns):
        if any(c < d or (c == d and j < k) for j, d in enumerate(columns) if j != k):
            continue
        out.append(c)
    return out


def letter_groups(significant: NDArray[np.bool_]) -> list[frozenset[int]]:
    """The compact letter display of a symmetric ``significant`` matrix whose rows are in rank order (best
    first): Piepho's (2004) insert-and-absorb algorithm, then his sweep.

    Start from one group holding every system. For each significant pair (i, j), every group holding both is
    split into a copy without i and a copy without j, and any group contained in another is absorbed (dropped).
    The sweep then drops a system from a group when each of its non-significant partners in that group shares
    another group with it (and it keeps a group), and absorbs again. The result: two systems share a group if
    and only if their difference is not significant. Groups are ordered by their best system (then the next), so
    the group of the top system is ``a``.

    >>> sig = np.array([[0, 0, 1], [0, 0, 0], [1, 0, 0]], dtype=bool)
    >>> [sorted(g) for g in letter_groups(sig)]
    [[0, 1], [1, 2]]
    """
    n = len(significant)
    columns: list[frozenset[int]] = [frozenset(range(n))] if n else []
    for i in range(n):
        for j in range(i + 1, n):
            if not significant[i, j]:
                continue
            split: list[frozenset[int]] = []
            for c in columns:
                split += [c - {i}, c - {j}] if i in c and j in c else [c]
            columns = _absorb(split)
    for k in range(len(columns)):
        for x in sorted(columns[k]):
            rest = columns[k] - {x}
            others = [c for m, c in enumerate(columns) if m != k and x in c]
            if others and all(any(y in c for c in others) for y in rest):
                columns[k] = rest
    columns = _absorb([c for c in columns if c])
    return sorted(columns, key=sorted)


def rank(
    names: Sequence[str], scores: FloatArray, significant: NDArray[np.bool_], higher_is_better: bool = True
) -> tuple[RankEntry, ...]:
    """Systems best first (highest score, or lowest when not ``higher_is_better``), with rank ranges and the
    letters of :func:`letter_groups` from a symmetric ``significant`` matrix: systems sharing a letter do not
    differ significantly, and systems with no letter in common do.

    >>> sig = np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]], dtype=bool)
    >>> [(e.system, e.rank_low, e.rank_high, e.groups) for e in rank(["x", "y", "z"], np.array([3.0, 2, 1]), sig)]
    [('x', 1, 1, 'a'), ('y', 2, 3, 'b'), ('z', 2, 3, 'b')]
    """
    n = len(names)
    key = scores if higher_is_better else -scores  # larger key = better system
    order = np.argsort(-key, kind="stable")
    groups = letter_groups(significant[np.ix_(order, order)])
    out = []
    for pos, i in enumerate(order.tolist()):
        better = int(np.count_nonzero(significant[i] & (key > key[i])))
        worse = int(np.count_nonzero(significant[i] & (key < key[i])))
        letters = "".join(_label(g) for g, members in enumerate(groups) if pos in members)
        out.append(RankEntry(names[i], float(scores[i]), 1 + better, n - worse, letters))
    return tuple(out)


def _shared(rows: Sequence[MetricRows]) -> tuple[list[NDArray[np.float64]], list[int]]:
    """Each distinct values tuple stacked once, ``(n_systems, n_segments, k)``, and each metric's index
    into them (metrics counted together share their statistics and so their matrix products)."""
    stacks: list[NDArray[np.float64]] = []
    seen: dict[int, int] = {}
    owner = []
    for r in rows:
        key = id(r.values)
        if key not in seen:
            seen[key] = len(stacks)
            stacks.append(np.stack(r.values))
        owner.append(seen[key])
    return stacks, owner


def bootstrap_scores(
    rows: Sequence[MetricRows], n_resamples: int, rng: np.random.Generator, jobs: int = 1
) -> list[FloatArray]:
    """Scores ``(n_resamples, n_systems)`` of every metric on the same bootstrap resamples of the segments
    (the blocks' products and scores on ``jobs`` threads; the draws stay in order on this one)."""
    stacks, owner = _shared(rows)
    n_sys, n_seg = stacks[0].shape[:2]
    if n_seg == 0:  # as paired_test says it (score --confidence and report on empty files)
        raise InputError("no segments to resample")
    sums = WeightedSums([v.transpose(1, 0, 2).reshape(n_seg, -1) for v in stacks], n_seg, n_seg)
    out = [np.empty((n_resamples, n_sys)) for _ in rows]

    def work(start: int, size: int, weights: NDArray[np.int64]) -> None:
        summed = [x.reshape(size, n_sys, -1) for x in sums(weights)]
        for o, r, k in zip(out, rows, owner):
            o[start : start + size] = r.scorer(summed[k])
        advance(size)

    with _progress.task("bootstrap", n_resamples, "resample") as advance:
        run_blocks(blocks(n_resamples, n_seg), lambda size: bootstrap_counts(rng, size, n_seg), work, jobs)
    return out


def intervals(
    rows: Sequence[MetricRows],
    *,
    n_resamples: int = 1000,
    seed: int | None = DEFAULT_SEED,
    confidence: float = 0.95,
    jobs: int | None = 1,
) -> list[tuple[FloatArray, FloatArray]]:
    """Per metric, the (low, high) bootstrap percentile interval of every system's score: the segments resampled
    with replacement ``n_resamples`` times (the same resamples for every system and metric), seeded."""
    if n_resamples < 1 or not 0 < confidence < 1:
        raise ConfigError(f"need n_resamples >= 1 and 0 < confidence < 1; got {n_resamples}, {confidence}")
    boot = bootstrap_scores(rows, n_resamples, np.random.default_rng(resolve_seed(seed)), resolve_jobs(jobs))
    q = ((1 - confidence) / 2, (1 + confidence) / 2)
    return [(lo, hi) for lo, hi in (np.quantile(b, q, axis=0) for b in boot)]


def _reaches(stat: FloatArray, observed: FloatArray) -> NDArray[np.bool_]:
    return stat >= observed - _REL_TOL * np.maximum(np.abs(observed), 1.0)


def randomisation_counts(
    rows: Sequence[MetricRows],
    pairs: Sequence[tuple[int, int]],
    n_trials: int,
    rng: np.random.Generator,
    jobs: int = 1,
) -> list[NDArray[np.int64]]:
    """For every metric and pair (a, b): the number of AR trials whose |score(A*) - score(B*)| reaches the
    observed one. The masks are shared by all metrics and pairs (each pair's test stays exact); blocks of
    trials run on ``jobs`` threads, their masks drawn in order on this one."""
    stacks, owner = _shared(rows)
    n_sys, n_seg = stacks[0].shape[:2]
    a = np.array([i for i, _ in pairs], dtype=np.intp)
    b = np.array([j for _, j in pairs], dtype=np.intp)
    by_pair = len(pairs) < n_sys  # multiply the pair differences, else every system once
    totals, varying, xs = [], [], []
    for v in stacks:
        totals.append(v.sum(axis=1))
        # columns equal in every system (e.g. reference lengths) are not changed by swapping
        cols = np.flatnonzero((v != v[:1]).any(axis=(0, 1)))
        x = v[a][:, :, cols] - v[b][:, :, cols] if by_pair else v[:, :, cols]
        varying.append(cols)
        xs.append(x.transpose(1, 0, 2).reshape(n_seg, -1))
    sums = WeightedSums(xs, 1, n_seg)
    observed = [np.abs(r.scorer(totals[k][a]) - r.scorer(totals[k][b])) for r, k in zip(rows, owner)]

    # trials scored at once: their pseudo-systems and the scorers' temporaries stay within ~BLOCK_ENTRIES values an
    # array (the demo's block of 10,000 trials, 120 pairs x 23 columns, made arrays of 220 MB: 1.5 GB at the peak);
    # the masks are drawn a block at a time as before, and each trial's count is its own
    width = max(max(len(pairs), n_sys) * t.shape[-1] for t in totals)  # values a trial: its pairs' pseudo-rows
    step = max(1, BLOCK_ENTRIES // max(width, 1))

    def part(masks: NDArray[np.uint8]) -> list[NDArray[np.int64]]:
        size, shuffled = len(masks), []
        for s, cols, prod in zip(totals, varying, sums(masks)):
            prod = prod.reshape(size, len(pairs) if by_pair else n_sys, len(cols))
            moved = prod if by_pair else prod[:, a] - prod[:, b]  # M @ (A - B)
            # A* = S_A - M @ A + M @ B (B's output where swapped); B* = S_A + S_B - A*
            pseudo_a = np.repeat(s[a][None], size, axis=0)
            pseudo_a[:, :, cols] -= moved
            shuffled.append((pseudo_a, s[a] + s[b] - pseudo_a))
        return [
            _reaches(np.abs(r.scorer(shuffled[k][0]) - r.scorer(shuffled[k][1])), obs).sum(axis=0)
            for r, k, obs in zip(rows, owner, observed)
        ]

    def work(_: int, size: int, masks: NDArray[np.uint8]) -> list[NDArray[np.int64]]:
        reached = [np.zeros(len(pairs), dtype=np.int64) for _ in rows]
        for lo in range(0, size, step):
            for total, add in zip(reached, part(masks[lo : lo + step])):
                total += add
        advance(size)
        return reached

    with _progress.task("approximate randomisation", n_trials, "trial") as advance:
        per_block = run_blocks(blocks(n_trials, n_seg), lambda size: swap_masks(rng, size, n_seg), work, jobs)
    counts = [np.zeros(len(pairs), dtype=np.int64) for _ in rows]
    for block in per_block:
        for c, add in zip(counts, block):
            c += add
    return counts


def _bootstrap_p(
    scores: FloatArray, observed: FloatArray, pairs: Sequence[tuple[int, int]], higher_better: bool = True
) -> tuple[FloatArray, FloatArray]:
    a = [i for i, _ in pairs]
    b = [j for _, j in pairs]
    d = scores[:, a] - scores[:, b]
    spread = np.abs(d) - np.abs(d).mean(axis=0)
    c = _reaches(spread, np.abs(observed[a] - observed[b])).sum(axis=0)
    return (c + 1.0) / (len(scores) + 1.0), ((d > 0) if higher_better else (d < 0)).mean(axis=0)


def _pairs(names: Sequence[str], baseline: str | None) -> list[tuple[int, int]]:
    if baseline is None:
        return [(i, j) for i in range(len(names)) for j in range(i + 1, len(names))]
    if baseline not in names:
        raise ConfigError(f"baseline {baseline!r} is not one of the systems: {', '.join(names)}")
    b = list(names).index(baseline)
    return [(b, j) for j in range(len(names)) if j != b]


def _check(names: Sequence[str], rows: Sequence[MetricRows], test: str, n: int, n_conf: int, conf: float) -> None:
    if test not in TESTS:
        raise ConfigError(f"unknown test {test!r}; valid: ar (approximate randomisation), bs (paired bootstrap)")
    if n < 1 or n_conf < 1:
        raise ConfigError(f"the numbers of trials/resamples must be >= 1; got {n} and {n_conf}")
    if not 0 < conf < 1:
        raise ConfigError(f"confidence must be in (0, 1); got {conf}")
    if len(names) < 2:
        raise InputError(f"a paired test needs at least two systems; got {len(names)}")
    if not rows:
        raise ConfigError("no metric to compare on")
    for r in rows:
        if len(r.values) != len(names):
            raise InputError(f"{r.metric}: rows of {len(r.values)} systems for {len(names)} names")
        lens = {len(v) for v in r.values}
        if len(lens) > 1:
            raise InputError(f"{r.metric}: systems have different numbers of segments ({sorted(lens)})")
        if lens == {0}:
            raise InputError("no segments to resample")


def _signature(rows: MetricRows, test: str, n: int, n_conf: int, seed: int, correction: str) -> str:
    head, _, version = rows.signature.rpartition("|version:")
    # sacreBLEU's spelling: ar:<trials> (with bs:<resamples> for the intervals) or bs:<resamples>
    extra = f"|{test}:{n}" + (f"|bs:{n_conf}" if test == "ar" else "") + f"|seed:{seed}|correction:{correction}"
    return f"{head}{extra}|version:{version}" if head else rows.signature + extra


def paired_test(
    rows: Sequence[MetricRows],
    names: Sequence[str],
    *,
    test: str = "ar",
    n_resamples: int | None = None,
    n_confidence: int = 1000,
    seed: int | None = DEFAULT_SEED,
    correction: str = "holm",
    alpha: float = 0.05,
    confidence: float = 0.95,
    baseline: str | None = None,
    jobs: int | None = 1,
    progress: bool = False,
) -> Comparison:
    """Test every pair of systems (or each against ``baseline``) under every metric of ``rows``.

    ``test``: ``"ar"`` (approximate randomisation, default 10,000 trials) or ``"bs"`` (paired bootstrap,
    default 1,000 resamples); system confidence intervals come from ``n_confidence`` bootstrap
    resamples under AR and from the test's own resamples under BS, both drawn by a generator seeded with
    ``seed`` alone, so one system, seed and number of resamples has one interval (:func:`intervals`).
    ``seed=None`` draws a seed from the OS and records it in the result. ``correction`` over the pairs
    tested: holm, bonferroni, none.
    ``jobs``: threads for the resampling (``None``: every core), with the ``jobs=1`` result bit for bit.
    ``progress``: bars on standard error (:mod:`ngrameval.progress`), the same result.
    """
    with _progress.shown(progress):
        return _paired_test(rows, names, test, n_resamples, n_confidence, seed, correction, alpha, confidence,
                            baseline, resolve_jobs(jobs))  # fmt: skip


def _paired_test(
    rows: Sequence[MetricRows],
    names: Sequence[str],
    test: str,
    n_resamples: int | None,
    n_confidence: int,
    seed: int | None,
    correction: str,
    alpha: float,
    confidence: float,
    baseline: str | None,
    jobs: int,
) -> Comparison:
    """:func:`paired_test` with ``jobs`` resolved."""
    n = DEFAULT_RESAMPLES.get(test, 0) if n_resamples is None else n_resamples
    _check(names, rows, test, n, n_confidence, confidence)
    if not 0 < alpha < 1:
        raise ConfigError(f"alpha must be in (0, 1); got {alpha}")
    adjust_p(np.zeros(0), correction)  # validates the name before any work
    pairs = _pairs(names, baseline)
    # both tests' p-values are (c + 1) / (n + 1): the smallest reachable one, after correction, is the floor
    floor = float(adjust_p(np.full(len(pairs), 1.0 / (n + 1)), correction).min()) if pairs else 0.0
    if floor > alpha:
        needed = math.ceil(floor * (n + 1) / alpha - 1e-9)  # the correction multiplies 1/(n+1) by a constant
        what = "AR trials" if test == "ar" else "bootstrap resamples"
        more = f"AR trials (n_resamples={needed})" if test == "ar" else f"bootstrap resamples (n_resamples={needed})"
        warnings.warn(
            f"with {n} {what} and {correction} correction over {len(pairs)} pairs the smallest reachable p is "
            f"{floor:.3g} > the significance level {alpha:g}: no difference can be significant; use at least "
            f"{needed} {more}",
            UserWarning,
            stacklevel=3,
        )
    used_seed = resolve_seed(seed)
    rng = np.random.default_rng(used_seed)
    observed = [r.corpus() for r in rows]
    p_values: list[FloatArray] = []
    wins: list[FloatArray | None] = []
    if test == "ar":
        for c in randomisation_counts(rows, pairs, n, rng, jobs):
            p_values.append(((c + 1) / (n + 1)).astype(np.float64))
            wins.append(None)
        # the intervals from their own generator of the same seed: one system and seed, one interval, the same
        # as score --confidence, compare --paired-bs and the report give (sacreBLEU draws them after the masks)
        boot = bootstrap_scores(rows, n_confidence, np.random.default_rng(used_seed), jobs)
    else:
        boot = bootstrap_scores(rows, n, rng, jobs)
        for scores, obs, r in zip(boot, observed, rows):
            p_bs, w_bs = _bootstrap_p(scores, obs, pairs, higher_is_better(r))
            p_values.append(p_bs)
            wins.append(w_bs)
    out = []
    q = ((1 - confidence) / 2, (1 + confidence) / 2)
    for r, obs, s, p, w in zip(rows, observed, boot, p_values, wins):
        adj = adjust_p(p, correction)
        lo, hi = np.quantile(s, q, axis=0)
        systems = tuple(
            SystemScore(names[i], float(obs[i]), float(s[:, i].mean()), float(lo[i]), float(hi[i]))
            for i in range(len(names))
        )
        tests = tuple(
            PairTest(
                names[i],
                names[j],
                float(obs[i]),
                float(obs[j]),
                float(obs[i] - obs[j]),
                float(p[k]),
                float(adj[k]),
                bool(adj[k] <= alpha),
                None if w is None else float(w[k]),
            )
            for k, (i, j) in enumerate(pairs)
        )
        ranking = None
        if baseline is None:
            sig = np.zeros((len(names), len(names)), dtype=bool)
            for t, (i, j) in zip(tests, pairs):
                sig[i, j] = sig[j, i] = t.significant
            ranking = rank(names, obs, sig, higher_is_better(r))
        sig_text = _signature(r, test, n, n_confidence, used_seed, correction)
        out.append(MetricComparison(r.metric, sig_text, r.fraction, systems, tests, ranking, r.higher_is_better))
    return Comparison(test, n, n_confidence, used_seed, correction, alpha, confidence, baseline, tuple(out))


def compare(
    systems: Mapping[str, Sequence[str]],
    refs: Sequence[str] | Sequence[Sequence[str]],
    metrics: str = "bleu",
    *,
    source: Sequence[str] | None = None,
    tokenize: str = "13a",
    lowercase: bool = False,
    test: str = "ar",
    n_resamples: int | None = None,
    n_confidence: int = 1000,
    seed: int | None = DEFAULT_SEED,
    correction: str = "holm",
    alpha: float = 0.05,
    confidence: float = 0.95,
    baseline: str | None = None,
    progress: bool = False,
) -> Comparison:
    """Score ``systems`` (name -> outputs) with ``metrics`` (``-m`` specs such as ``"bleu,nist,se"``; PINC
    needs ``source``) and test them with :func:`paired_test` (same options; ``progress``: bars on stderr).

    >>> hyps, refs = ["the cat sat", "a dog"], ["the cat sat", "a dog ran"]
    >>> compare({"a": hyps, "b": hyps}, refs, "bleu,se", n_resamples=99).metrics[1].pairs[0].p_value
    1.0
    """
    from ngrameval.api import measure
    from ngrameval.metrics.registry import parse_specs
    from ngrameval.text.pipeline import Preprocess

    specs = parse_specs(metrics, Preprocess(tokenize, lowercase))
    rows = measure(systems, refs, specs, source, progress=progress)
    return paired_test(
        rows,
        list(systems),
        test=test,
        n_resamples=n_resamples,
        n_confidence=n_confidence,
        seed=seed,
        correction=correction,
        alpha=alpha,
        confidence=confidence,
        baseline=baseline,
        progress=progress,
    )
