"""ngrameval.meta.reliability: MACE competences, the additive rater model, agreement with controls."""

from __future__ import annotations

import numpy as np
import pytest

from ngrameval.errors import InputError
from ngrameval.meta.reliability import control_agreement, mace, majority, rater_model


def _mace_data(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """200 items, 4 labels, 5 good annotators (theta 0.9) and 3 spammers (theta 0.1) who spam mostly label 0."""
    rng = np.random.default_rng(seed)
    theta = np.array([0.9] * 5 + [0.1] * 3)
    xi = np.tile([0.25, 0.25, 0.25, 0.25], (8, 1))
    xi[5:] = [0.85, 0.05, 0.05, 0.05]
    truth = rng.integers(0, 4, 200)
    ans = np.empty((200, 8), dtype=np.int64)
    for j in range(8):
        spam = rng.random(200) > theta[j]
        ans[:, j] = np.where(spam, rng.choice(4, 200, p=xi[j]), truth)
    return ans, truth, theta


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_mace_recovers_planted_competences(seed: int) -> None:
    ans, truth, theta = _mace_data(seed)
    fit = mace(ans, 4, seed=seed)
    assert np.abs(fit.competence - theta).max() <= 0.1
    assert (fit.labels == truth).mean() > (majority(ans, 4) == truth).mean()
    assert fit.spamming.shape == (8, 4) and np.allclose(fit.spamming.sum(axis=1), 1)
    assert np.allclose(fit.posterior.sum(axis=1), 1)


def test_mace_missing_answers_and_seed() -> None:
    ans, truth, theta = _mace_data(7)
    rng = np.random.default_rng(0)
    ans[rng.random(ans.shape) < 0.3] = -1
    ans[(ans == -1).all(axis=1), 0] = truth[(ans == -1).all(axis=1)]
    a, b = mace(ans, seed=5), mace(ans, seed=5)
    assert np.array_equal(a.competence, b.competence) and a.log_likelihood == b.log_likelihood
    assert np.abs(a.competence - theta).max() <= 0.15  # fewer answers each: a looser bound


def test_mace_hand_case() -> None:
    """Two annotators always agree, one never answers like them: the agreeing pair is competent, the third not,
    and the labels are the pair's."""
    ans = np.array([[0, 0, 1], [1, 1, 0], [0, 0, 1], [1, 1, 0]] * 5)
    fit = mace(ans, 2, seed=0)
    assert fit.labels.tolist() == ans[:, 0].tolist()
    assert fit.competence[0] > 0.9 and fit.competence[1] > 0.9 and fit.competence[2] < 0.1


def test_rater_model_recovers_planted_bias_and_noise() -> None:
    rng = np.random.default_rng(11)
    n_items, n_raters = 300, 6
    bias = np.array([-10.0, -4.0, 0.0, 2.0, 4.0, 8.0])
    noise = np.array([3.0, 3.0, 6.0, 6.0, 12.0, 12.0])
    truth = rng.normal(60, 15, n_items)
    items, raters, scores = [], [], []
    for i in range(n_items):
        for j in rng.choice(n_raters, 4, replace=False):  # 4 of the 6 raters see each item
            items.append(i)
            raters.append(j)
            scores.append(truth[i] + bias[j] + rng.normal(0, noise[j]))
    fit = rater_model(np.array(items), np.array(raters), np.array(scores))
    assert np.abs(fit.bias - (bias - bias.mean())).max() < 1.5
    assert np.abs(fit.noise / noise - 1).max() < 0.15
    assert fit.weight.mean() == pytest.approx(1.0)
    assert fit.weight[0] > fit.weight[2] > fit.weight[4]
    plain = np.bincount(items, np.array(scores) - fit.bias[raters]) / np.bincount(items)
    # the 1/noise^2 consensus is closer to the truth (up to the biases' common offset) than the plain mean
    off = (truth - fit.consensus).mean()
    assert np.abs(fit.consensus + off - truth).mean() < np.abs(plain + off - truth).mean()


def test_rater_model_hand_case() -> None:
    """Raters 0 and 1 on items 0 and 1: scores (0, 2) and (2, 0). By symmetry mu = (1, 1), b = (0, 0) and both
    sigma^2 = s: residuals are +-1 and the consensus variance is 1 / W = s / 2, so s = 1 + s / 2 = 2."""
    fit = rater_model(np.array([0, 1, 0, 1]), np.array([0, 0, 1, 1]), np.array([0.0, 2.0, 2.0, 0.0]))
    assert fit.consensus == pytest.approx([1.0, 1.0])
    assert fit.bias == pytest.approx([0.0, 0.0])
    assert fit.noise == pytest.approx([2**0.5, 2**0.5])
    assert fit.weight == pytest.approx([1.0, 1.0]) and fit.counts.tolist() == [2, 2]


def test_rater_model_bias_only() -> None:
    """One rater scores everything 2 higher, without noise: bias +-1 around 0, consensus between them."""
    fit = rater_model(np.array([0, 1, 2, 0, 1, 2]), np.array([0, 0, 0, 1, 1, 1]), np.array([1.0, 5, 3, 3, 7, 5]))
    assert fit.bias == pytest.approx([-1.0, 1.0])
    assert fit.consensus == pytest.approx([2.0, 6.0, 4.0])


def test_rater_model_disconnected_raters() -> None:
    """Raters 0, 1 share items 0, 1; raters 2, 3 share item 2: two sets, biases centred in each."""
    fit = rater_model(np.array([0, 1, 0, 1, 2, 2]), np.array([0, 0, 1, 1, 2, 3]), np.array([1.0, 5, 3, 7, 10, 14]))
    assert fit.group.tolist() == [0, 0, 1, 1]
    assert fit.bias == pytest.approx([-1.0, 1.0, -2.0, 2.0])
    assert fit.consensus == pytest.approx([2.0, 6.0, 12.0])


def test_control_agreement() -> None:
    c = control_agreement([(3, 3), (4, 2), (1, 1), (5, 4)])
    assert (c.pairs, c.agreement, c.mean_abs_diff) == (4, 0.5, 0.75)
    assert control_agreement([(3, 3), (4, 2), (1, 1), (5, 4)], tolerance=1).agreement == 0.75
    assert control_agreement([]).agreement is None


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: mace(np.array([0, 1, 2])), "answers"),
        (lambda: mace(np.array([[0.5, 1.0]])), "answers"),
        (lambda: mace(np.array([[0, 3]]), 2), "n_labels"),
        (lambda: mace(np.array([[-1, -1], [0, 1]])), "answers"),
        (lambda: mace(np.array([[0, 1]]), restarts=0), "restarts"),
        (lambda: rater_model(np.array([0, 1]), np.array([0, 0]), np.array([1.0])), "scores"),
        (lambda: rater_model(np.array([0.5, 1]), np.array([0, 0]), np.array([1.0, 2.0])), "items"),
        (lambda: rater_model(np.array([0, 1]), np.array([0, 2]), np.array([1.0, 2.0])), "raters"),
        (lambda: rater_model(np.array([0, 1]), np.array([0, 0]), np.array([1.0, np.nan])), "scores"),
        (lambda: control_agreement([(1, 2)], tolerance=-1), "tolerance"),
    ],
)
def test_bad_input_names_the_argument(call: object, name: str) -> None:
    with pytest.raises(InputError, match=name):
        call()  # type: ignore[operator]
