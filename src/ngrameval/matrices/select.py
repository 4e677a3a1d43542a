"""On top of the score matrices: minimum-Bayes-risk selection and the diversity measures in use, group by group
(each group's matrix is made, summarised and dropped: memory holds ``2 * jobs`` groups at most).

- MBR (Kumar & Byrne 2004; with sentence metrics as utility, e.g. Freitag et al. 2022): per group the candidate
  ``i`` with the highest expected utility ``mean_{j != i} U(i, j)`` (``U(i, j)``: candidate ``i`` scored with
  ``j`` as its reference; with ``others``, the mean over every pseudo-reference of the group). For an error rate
  (TER) the lowest expected loss. **Ties go to the lowest index** (the first candidate in input order).
- distinct-n (Li et al. 2016): distinct n-grams over all n-grams of a group's texts (13a tokens unless told).
- Self-BLEU (Zhu et al. 2018, Texygen): the mean over a group's texts of the sentence BLEU of each text with the
  *other* texts as its references (multi-reference BLEU; ``bleu:smooth=nltk1`` is Texygen's NLTK method 1).
- self-chrF: the same with chrF (sacreBLEU's multi-reference chrF: the reference with the best chrF counts, so it
  is the row maximum of the chrF matrix without the diagonal).
- mean pairwise PINC (Chen & Dolan 2011, as used for paraphrase corpora): the mean of PINC(i, j) over ordered
  pairs ``i != j``.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ngrameval.api import measure
from ngrameval.errors import ConfigError
from ngrameval.io.tables import to_pandas
from ngrameval.matrices.matrix import GroupMatrix, group_index, iter_pairwise, plan_groups, spec_of
from ngrameval.matrices.profiles import gram_occurrences
from ngrameval.metrics.policy import FloatArray
from ngrameval.metrics.registry import MetricSpec
from ngrameval.ngrams.texts import Texts
from ngrameval.text.pipeline import Encoder, Preprocess


@dataclass(frozen=True)
class MbrChoice:
    """One group's MBR pick: ``index`` into the texts given, ``utility`` its expected utility (NaN when the group
    has no other text to compare with), ``candidates`` the group's size."""

    group: Hashable
    index: int
    utility: float
    candidates: int


@dataclass(frozen=True)
class MbrResult:
    """Every group's :class:`MbrChoice`, in the order groups first appear."""

    metric: str
    choices: tuple[MbrChoice, ...]

    def to_numpy(self) -> Any:
        """The chosen indices (into the texts given), one per group."""
        return np.array([c.index for c in self.choices], dtype=np.int64)

    def to_pandas(self) -> Any:
        """One row per group: group, index, utility, candidates."""
        return to_pandas([{"group": c.group, "index": c.index, "utility": c.utility, "candidates": c.candidates}
                          for c in self.choices])  # fmt: skip


def mbr_choice(g: GroupMatrix, higher_is_better: bool = True) -> MbrChoice:
    """The candidate of ``g`` with the best expected utility; ties to the lowest index.

    >>> g = GroupMatrix("s", np.arange(3), np.arange(3), np.array([[1, .5, .5], [.6, 1, .4], [.5, .5, 1]]), True)
    >>> mbr_choice(g)
    MbrChoice(group='s', index=0, utility=0.5, candidates=3)
    """
    n = len(g.rows)
    if n == 0:
        raise ConfigError(f"group {g.group!r} has no candidate")
    if (g.same and n < 2) or (not g.same and len(g.cols) == 0):
        return MbrChoice(g.group, int(g.rows[0]), float("nan"), n)
    means = g.off_diagonal_means()
    best = int(np.argmax(means) if higher_is_better else np.argmin(means))  # the first on ties
    return MbrChoice(g.group, int(g.rows[best]), float(means[best]), n)


def iter_mbr(
    texts: Sequence[str],
    metric: str | MetricSpec = "chrf",
    groups: Sequence[Hashable] | None = None,
    *,
    others: Sequence[str] | None = None,
    other_groups: Sequence[Hashable] | None = None,
    jobs: int | None = 1,
    multi_reference: bool = False,
) -> Iterator[MbrChoice]:
    """:func:`mbr` one group at a time (each matrix dropped once its choice is made)."""
    spec = spec_of(metric)
    higher = bool(getattr(spec.metric, "higher_is_better", True))
    if multi_reference:
        utility = multi_reference_scores(texts, spec, groups, others=others, other_groups=other_groups, jobs=jobs)
        for label, members in group_index(groups, len(texts), "groups").items():
            yield _best(label, members, utility[members], higher)
        return
    for g in iter_pairwise(texts, others, spec, groups, other_groups, jobs):
        yield mbr_choice(g, higher)


def _best(group: Hashable, members: NDArray[np.int64], utility: FloatArray, higher: bool) -> MbrChoice:
    """The member with the best utility (the first on ties); NaN and the first member when none has one."""
    if np.isnan(utility).all():
        return MbrChoice(group, int(members[0]), float("nan"), len(members))
    best = int(np.nanargmax(utility) if higher else np.nanargmin(utility))
    return MbrChoice(group, int(members[best]), float(utility[best]), len(members))


def mbr(
    texts: Sequence[str],
    metric: str | MetricSpec = "chrf",
    groups: Sequence[Hashable] | None = None,
    *,
    others: Sequence[str] | None = None,
    other_groups: Sequence[Hashable] | None = None,
    jobs: int | None = 1,
    multi_reference: bool = False,
) -> MbrResult:
    """Minimum-Bayes-risk selection: per group (``groups``: one label per candidate, e.g. its source segment) the
    candidate with the best mean utility against the group's other candidates (or against ``others``, the
    pseudo-references, labelled by ``other_groups``). Ties: the lowest index. ``multi_reference``: the utility
    is instead the candidate's score with all the others as its references at once
    (:func:`multi_reference_scores`; for BLEU the consensus of the pool clips each n-gram).

    >>> r = mbr(["a cat sat", "the cat sat", "the cat sat down", "dogs"], "chrf", [0, 0, 0, 1])
    >>> [(c.index, round(c.utility, 3)) for c in r.choices]
    [(2, 0.733), (3, nan)]
    """
    spec = spec_of(metric)
    choices = tuple(iter_mbr(texts, spec, groups, others=others, other_groups=other_groups, jobs=jobs,
                             multi_reference=multi_reference))  # fmt: skip
    return MbrResult(spec.metric.display_name(), choices)


@dataclass(frozen=True)
class GroupDiversity:
    """The diversity of one group's texts (fractions; NaN where the group has fewer than two texts)."""

    group: Hashable
    texts: int
    distinct: tuple[float, ...]  # distinct-1, distinct-2, ...
    self_bleu: float
    self_chrf: float
    pinc: float  # mean pairwise PINC


@dataclass(frozen=True)
class Diversity:
    """Every group's :class:`GroupDiversity`."""

    groups: tuple[GroupDiversity, ...]

    def columns(self) -> list[str]:
        n = len(self.groups[0].distinct) if self.groups else 0
        return [*(f"distinct-{k + 1}" for k in range(n)), "self-BLEU", "self-chrF", "PINC"]

    def to_numpy(self) -> FloatArray:
        """``(groups, columns())``: distinct-1..N, Self-BLEU, self-chrF, mean pairwise PINC."""
        return np.array([[*g.distinct, g.self_bleu, g.self_chrf, g.pinc] for g in self.groups]).reshape(
            len(self.groups), len(self.columns())
        )

    def to_pandas(self) -> Any:
        cols = self.columns()
        return to_pandas([{"group": g.group, "texts": g.texts, **dict(zip(cols, [*g.distinct, g.self_bleu,
                          g.self_chrf, g.pinc]))} for g in self.groups])  # fmt: skip


def distinct_n(texts: Sequence[str], max_order: int = 2, pre: Preprocess | None = None) -> tuple[float, ...]:
    """distinct-1..``max_order``: distinct n-grams / all n-grams of ``texts`` taken together (0 without n-grams).

    >>> distinct_n(["a a b", "a b"], 2)
    (0.4, 0.666...)
    """
    units = Texts(*Encoder(pre or Preprocess()).encode(list(texts)))
    grams = gram_occurrences(units, max_order)
    total = np.bincount(grams.order, minlength=max_order)
    order_of = np.zeros(grams.n_grams, dtype=np.int64)
    order_of[grams.gram] = grams.order
    distinct = np.bincount(order_of, minlength=max_order) if grams.n_grams else np.zeros(max_order)
    return tuple(float(d / t) if t else 0.0 for d, t in zip(distinct, total))


def self_scores(texts: Sequence[str], metric: str | MetricSpec = "bleu") -> FloatArray:
    """The sentence score of each text with every *other* text as its references (multi-reference; a text alone
    has no reference: NaN). :func:`multi_reference_scores` with one group."""
    return multi_reference_scores(texts, metric)


def multi_reference_scores(
    texts: Sequence[str],
    metric: str | MetricSpec = "bleu",
    groups: Sequence[Hashable] | None = None,
    *,
    others: Sequence[str] | None = None,
    other_groups: Sequence[Hashable] | None = None,
    jobs: int | None = 1,
) -> FloatArray:
    """The sentence score of each text with all the *other* texts of its group as its references at once (or,
    with ``others``, all of ``others`` in its group, labelled by ``other_groups``), scored as the metric scores
    several references — BLEU clips each n-gram by its most frequent reference and takes the closest length,
    chrF keeps the best reference, TER the fewest edits, ROUGE (``rouge155``) averages or takes the best as its
    spec says, CIDEr-D's document frequencies are the group's. A text without a reference gets NaN. One
    :func:`ngrameval.measure` per group, so the cost is that of counting every reference once per text.

    >>> [round(float(x), 3) for x in multi_reference_scores(["the cat sat", "the cat sat down", "dogs"], "chrf")]
    [0.66, 0.886, 0.092]
    """
    spec, texts, others, plan = plan_groups(texts, others, metric, groups, other_groups)
    out = np.full(len(texts), np.nan)
    for _, rows_of, cols in plan:
        pool = [(texts if others is None else others)[j] for j in cols]
        if others is None:  # each text against the rest of its group
            refs = [pool[:k] + pool[k + 1 :] for k in range(len(rows_of))]
        else:
            refs = [pool] * len(rows_of)
        if not refs or not refs[0]:
            continue
        (rows,) = measure({"texts": [texts[i] for i in rows_of]}, refs, [spec], jobs=jobs)
        out[rows_of] = np.asarray(rows.scorer(rows.values[0]), dtype=np.float64)
    return out


def _mean_off_diagonal(g: GroupMatrix) -> float:
    n = len(g.rows)
    return float((g.scores.sum() - np.trace(g.scores)) / (n * (n - 1))) if n > 1 else float("nan")


def _row_max_off_diagonal(g: GroupMatrix) -> float:
    if len(g.rows) < 2:
        return float("nan")
    s = g.scores.copy()
    np.fill_diagonal(s, -np.inf)
    return float(s.max(axis=1).mean())


def diversity(
    texts: Sequence[str],
    groups: Sequence[Hashable] | None = None,
    *,
    max_order: int = 2,
    bleu: str | MetricSpec = "bleu",
    chrf: str | MetricSpec = "chrf",
    pinc: str | MetricSpec = "pinc",
    jobs: int | None = 1,
) -> Diversity:
    """distinct-1..``max_order``, Self-BLEU, self-chrF and mean pairwise PINC of each group's texts (see the module
    text for each definition). ``bleu``, ``chrf``, ``pinc``: the specs used (e.g. ``"bleu:smooth=nltk1"``).

    >>> d = diversity(["the cat sat", "the cat sat down", "a dog ran"])
    >>> [round(float(x), 3) for x in d.to_numpy()[0]]
    [0.7, 0.714, 0.198, 0.544, 0.753]
    """
    bleu_spec, chrf_spec, pinc_spec = spec_of(bleu), spec_of(chrf), spec_of(pinc)
    chrf_mats = iter_pairwise(texts, None, chrf_spec, groups, None, jobs)
    pinc_mats = iter_pairwise(texts, None, pinc_spec, groups, None, jobs)
    out = []
    for c, p in zip(chrf_mats, pinc_mats):
        members = [texts[i] for i in c.rows]
        self_b = self_scores(members, bleu_spec)
        out.append(
            GroupDiversity(
                c.group,
                len(members),
                distinct_n(members, max_order, bleu_spec.pre),
                float(self_b.mean()) if len(members) > 1 else float("nan"),
                _row_max_off_diagonal(c),
                _mean_off_diagonal(p),
            )
        )
    return Diversity(tuple(out))
