"""Annotator reliability estimated from the answers themselves: MACE competences for categorical answers, per-rater
bias and noise for scores, and agreement with control answers. Pure functions of plain arrays (the collect app
passes its judgments in; this module knows nothing of a study).

MACE (Hovy, Berg-Kirkpatrick, Vaswani & Hovy 2013, "Learning Whom to Trust with MACE", NAACL): each item ``i``
has one true label ``T_i``, uniform over the ``K`` labels; annotator ``j`` answering item ``i`` spams with
probability ``1 - theta_j`` (``S_ij = 1``) and then draws the answer from their own distribution ``xi_j``, else
(``S_ij = 0``) answers ``T_i``. So ``P(A_ij = a | T_i = t) = theta_j [a = t] + (1 - theta_j) xi_j(a)``. Fitted
here by EM on the marginal likelihood (the paper's EM variant; no Beta/Dirichlet priors, but a pseudo-count
``smoothing`` keeps every estimate inside (0, 1)), from several random starts, keeping the best likelihood.

Rater model (the two-way additive items x raters model without interaction; WMT's z-scores, by contrast,
remove each rater's location and scale over their own items, whatever those items were):
``x_ij = mu_i + b_j + e_ij`` with ``e_ij ~ N(0, sigma_j^2)``, the biases summing to zero within each connected
set of raters (raters linked through shared items; between two sets that share no item, a difference of bias
cannot be told from a difference of the items). A rater's noise is identified only where items are seen by at
least three raters: with two, both share the residual equally. Fitted by alternating weighted least squares:
``mu_i`` the mean of ``x_ij - b_j`` weighted by ``1 / sigma_j^2`` (the consensus), ``b_j`` the mean of
``x_ij - mu_i``, and ``sigma_j^2`` the mean over the rater's items of ``r_ij^2 + 1 / W_i`` (``W_i`` the item's
total weight: the residual against a consensus that contains the rater's own score is smaller by the
consensus' variance ``1 / W_i``, which this adds back).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ngrameval.errors import InputError

MISSING = -1  # an annotator who did not answer an item


@dataclass(frozen=True)
class Mace:
    """A MACE fit: ``competence[j]`` = theta_j, ``spamming[j, k]`` = xi_j(k), ``posterior[i, k]`` = P(T_i = k |
    answers), ``labels[i]`` its argmax (ties to the lower label), ``log_likelihood`` of the answers under the
    fit, ``restarts`` tried and ``iterations`` of the best."""

    competence: NDArray[np.float64]
    spamming: NDArray[np.float64]
    posterior: NDArray[np.float64]
    labels: NDArray[np.int64]
    log_likelihood: float
    restarts: int
    iterations: int


def _label_matrix(answers: ArrayLike, n_labels: int | None) -> tuple[NDArray[np.int64], int]:
    a = np.asarray(answers)
    if a.ndim != 2 or a.size == 0:
        raise InputError(f"answers: expected a non-empty items x annotators matrix, got shape {a.shape}")
    if not np.issubdtype(a.dtype, np.integer):
        raise InputError("answers: expected integer labels 0..K-1 (-1 for no answer)")
    a = a.astype(np.int64)
    if (a < MISSING).any():
        raise InputError("answers: labels must be 0..K-1, or -1 for no answer")
    k = int(a.max()) + 1 if n_labels is None else n_labels
    if k < 2 or (a >= k).any():
        raise InputError(f"n_labels: expected at least 2 and more than every label, got {k}")
    if not (a != MISSING).any(axis=1).all():
        raise InputError("answers: every item needs at least one answer")
    return a, k


def mace(
    answers: ArrayLike,
    n_labels: int | None = None,
    *,
    restarts: int = 10,
    iterations: int = 100,
    tol: float = 1e-7,
    smoothing: float = 0.01,
    seed: int | np.random.Generator = 0,
) -> Mace:
    """Fit MACE (see the module docstring) to ``answers``: items x annotators, integer labels ``0..K-1``, ``-1``
    where the annotator did not answer. ``restarts`` random starts (theta uniform in (0.5, 1), xi Dirichlet(1)
    from ``seed``) each run EM until the log-likelihood gains less than ``tol`` or ``iterations`` pass; the
    start with the highest likelihood is returned."""
    a, k = _label_matrix(answers, n_labels)
    if restarts < 1 or iterations < 1:
        raise InputError(f"restarts, iterations: expected at least 1, got {restarts}, {iterations}")
    if not smoothing >= 0:
        raise InputError(f"smoothing: expected >= 0, got {smoothing}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    n_items, n_ann = a.shape
    seen = a != MISSING
    item_idx, ann_idx = np.nonzero(seen)
    lab = a[item_idx, ann_idx]
    onehot = np.zeros((len(lab), k))
    onehot[np.arange(len(lab)), lab] = 1.0
    per_ann = np.bincount(ann_idx, minlength=n_ann).astype(float)
    best: Mace | None = None
    for _ in range(restarts):
        theta: NDArray[np.float64] = np.asarray(rng.uniform(0.5, 1.0, n_ann), dtype=np.float64)
        xi: NDArray[np.float64] = rng.dirichlet(np.ones(k), n_ann)
        prev = -np.inf
        used = 0
        while used < iterations:
            used += 1
            # P(A = a | T = t) for every answer and every t: theta [a = t] + (1 - theta) xi(a)
            spam = (1 - theta[ann_idx]) * xi[ann_idx, lab]
            like = onehot * theta[ann_idx, None] + spam[:, None]
            loglike = np.log(like)
            logp = np.stack([np.bincount(item_idx, loglike[:, t], n_items) for t in range(k)], axis=1)
            top = logp.max(axis=1, keepdims=True)
            joint = np.exp(logp - top)
            norm = joint.sum(axis=1, keepdims=True)
            post = joint / norm
            ll = float(np.sum(np.log(norm) + top) - n_items * np.log(k))
            # expected "knew the label" per answer: P(T = a | .) theta / (theta + (1 - theta) xi(a))
            know = post[item_idx, lab] * theta[ann_idx] / (theta[ann_idx] + spam)
            theta = (np.bincount(ann_idx, know, n_ann) + smoothing) / (per_ann + 2 * smoothing)
            counts = np.bincount(ann_idx * k + lab, 1.0 - know, n_ann * k).reshape(n_ann, k)
            xi = (counts + smoothing) / (counts.sum(axis=1, keepdims=True) + k * smoothing)
            xi = np.where(np.isfinite(xi), xi, 1.0 / k)
            if ll - prev < tol:
                break
            prev = ll
        if best is None or ll > best.log_likelihood:
            labels = post.argmax(axis=1).astype(np.int64)
            best = Mace(theta, xi, post, labels, ll, restarts, used)
    assert best is not None  # restarts >= 1
    return best


def majority(answers: ArrayLike, n_labels: int | None = None) -> NDArray[np.int64]:
    """Each item's most frequent answer (ties to the lower label): the baseline MACE is compared with."""
    a, k = _label_matrix(answers, n_labels)
    counts = np.zeros((a.shape[0], k))
    rows, cols = np.nonzero(a != MISSING)
    np.add.at(counts, (rows, a[rows, cols]), 1.0)
    out: NDArray[np.int64] = counts.argmax(axis=1).astype(np.int64)
    return out


@dataclass(frozen=True)
class RaterModel:
    """The additive rater model's fit: ``consensus[i]`` = mu_i (the item's score with every rater's bias removed,
    raters weighted by 1 / noise^2), ``bias[j]`` = b_j (summing to 0 within each of the ``group[j]`` connected
    sets of raters), ``noise[j]`` = sigma_j, ``weight[j]`` = 1 / sigma_j^2 normalised to mean 1 over the
    raters, ``counts[j]`` scores of the rater, ``iterations``."""

    consensus: NDArray[np.float64]
    bias: NDArray[np.float64]
    noise: NDArray[np.float64]
    weight: NDArray[np.float64]
    counts: NDArray[np.int64]
    iterations: int
    group: NDArray[np.int64]


def rater_model(
    items: ArrayLike,
    raters: ArrayLike,
    scores: ArrayLike,
    *,
    iterations: int = 500,
    tol: float = 1e-9,
    min_noise: float = 1e-6,
) -> RaterModel:
    """Fit ``score = item effect + rater bias + noise`` (see the module docstring) to records given as three
    equal-length arrays: ``items`` and ``raters`` integer codes (``0..n-1``, every code used) and ``scores``.
    Iterates until no estimate moves by more than ``tol`` (times the scores' spread) or ``iterations`` pass;
    ``min_noise`` (times the spread) floors sigma so that a rater who agrees exactly cannot take all the weight.

    >>> m = rater_model([0, 1, 0, 1], [0, 0, 1, 1], [0.0, 2.0, 2.0, 0.0])
    >>> m.consensus.tolist(), m.bias.tolist(), [round(float(x * x), 6) for x in m.noise]
    ([1.0, 1.0], [0.0, 0.0], [2.0, 2.0])
    """
    it_ = np.asarray(items)
    rt = np.asarray(raters)
    x = np.asarray(scores, dtype=float)
    for name, arr in (("items", it_), ("raters", rt)):
        if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer) or (arr.size and arr.min() < 0):
            raise InputError(f"{name}: expected a 1-d array of integer codes 0..n-1")
    if x.ndim != 1 or not (len(x) == len(it_) == len(rt)) or len(x) == 0:
        raise InputError(f"scores: expected as many scores as items and raters (> 0), got {x.shape}")
    if not np.isfinite(x).all():
        raise InputError("scores: expected finite numbers")
    n_items, n_raters = int(it_.max()) + 1, int(rt.max()) + 1
    counts = np.bincount(rt, minlength=n_raters)
    if (counts == 0).any() or (np.bincount(it_, minlength=n_items) == 0).any():
        raise InputError("items, raters: every code 0..n-1 must occur")
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    # raters and items as one graph (raters first): connected sets of raters fix their biases' sum
    graph = coo_matrix((np.ones(len(x)), (rt, n_raters + it_)), shape=(n_raters + n_items,) * 2)
    _, comp = connected_components(graph, directed=False)
    group = np.unique(comp[:n_raters], return_inverse=True)[1].astype(np.int64)
    n_groups = int(group.max()) + 1
    group_size = np.bincount(group, minlength=n_groups)
    item_group = np.empty(n_items, dtype=np.int64)
    item_group[it_] = group[rt]
    scale = float(x.std()) or 1.0
    floor = (min_noise * scale) ** 2
    bias = np.zeros(n_raters)
    var = np.full(n_raters, scale**2)
    mu = np.zeros(n_items)
    done = 0
    while done < iterations:
        done += 1
        w = 1.0 / var[rt]
        big_w = np.bincount(it_, w, n_items)
        mu_new = np.bincount(it_, w * (x - bias[rt]), n_items) / big_w
        bias_new = np.bincount(rt, x - mu_new[it_], n_raters) / counts
        shift = np.bincount(group, bias_new, n_groups) / group_size
        bias_new -= shift[group]  # biases sum to 0 in each connected set; mu + b is unchanged
        mu_new += shift[item_group]
        resid = x - mu_new[it_] - bias_new[rt]
        var_new = np.maximum(np.bincount(rt, resid**2 + 1.0 / big_w[it_], n_raters) / counts, floor)
        moved = max(
            float(np.abs(mu_new - mu).max()),
            float(np.abs(bias_new - bias).max()),
            float(np.abs(np.sqrt(var_new) - np.sqrt(var)).max()),
        )
        mu, bias, var = mu_new, bias_new, var_new
        if moved <= tol * scale:
            break
    inv = 1.0 / var
    return RaterModel(mu, bias, np.sqrt(var), inv / inv.mean(), counts.astype(np.int64), done, group)


@dataclass(frozen=True)
class ControlAgreement:
    """Agreement with control answers: ``pairs`` compared, ``agreement`` the share within ``tolerance`` (None
    without pairs), ``mean_abs_diff`` their mean absolute difference (None without pairs)."""

    pairs: int
    agreement: float | None
    mean_abs_diff: float | None


def control_agreement(pairs: Sequence[tuple[float, float]], tolerance: float = 0.0) -> ControlAgreement:
    """Agreement of (answer, control) pairs: a known answer and its expected value, or a repeated trial and its
    original (what ``ngrameval.collect.quality.pairs_by_judge`` gathers). An answer agrees when
    ``|answer - control| <= tolerance`` (0: exact, for categorical or Likert answers)."""
    if not tolerance >= 0:
        raise InputError(f"tolerance: expected >= 0, got {tolerance}")
    d = np.abs(np.asarray([a - b for a, b in pairs], dtype=float))
    if not np.isfinite(d).all():
        raise InputError("pairs: expected finite numbers")
    if len(d) == 0:
        return ControlAgreement(0, None, None)
    return ControlAgreement(len(d), float(np.mean(d <= tolerance)), float(d.mean()))
