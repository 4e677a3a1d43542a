"""Is the running study's ranking settled? The human ranking of a rating study with always-valid intervals,
its clusters, and for each adjacent pair whether it is settled, from the answers stored so far.

The statistics are :mod:`ngrameval.meta.sequential`'s: each system's mean score gets the two-sided
**normal-mixture confidence sequence** of Howard, Ramdas, McAuliffe & Sekhon (2021, "Time-uniform,
nonparametric, nonasymptotic confidence sequences", Ann. Statist. 49(2), eq. (14)) at level ``alpha / K``
(Bonferroni over the ``K`` systems), so the ranking may be looked at after every answer and the study stopped
when it looks settled: the chance of *ever* calling a pair of truly equal systems settled stays at most
``alpha``. An adjacent pair is settled when the two intervals are disjoint; clusters are the ranking cut
between settled pairs.

What the intervals assume (stated in docs/guides/collect.md too):

* **independent ratings** of each system with a fixed mean: one judge's ratings, or ratings of one item, that
  move together (a lenient judge, an easy item) make the intervals too narrow. The Latin square spreads judges
  and items evenly over the systems, which keeps such effects out of the differences on average, not out of
  the intervals;
* **a bounded score range** from the scale: a Likert criterion of ``points`` points rates in ``[1, points]``, a
  slider (DA) in ``[0, 100]``; the ratings are then ``(hi - lo) / 2``-sub-Gaussian (Hoeffding's lemma), the
  only variance the boundary uses, so the intervals are valid for any distribution on the range and wide for
  ratings that vary little;
* **raw scores**, not the per-judge z-scores of the export (a z-score is not bounded);
* only **answered normal trials** count: training items, repeats, bad references and known-answer items
  (the control trials) are left out.

Other study kinds plug in through :data:`SCORINGS`: a kind maps to a :class:`Scoring` that names what can be
ranked (its criteria), each one's score range, and how to read each system's count and sum of per-trial
scores from the study database. An ESA study ranks its 0-100 segment scores (stored as the criterion ``esa``,
as a DA study's slider). An MQM study ranks its segment scores (minus the weighted penalty, stored as the
criterion ``mqm``) with each segment's penalty capped at :data:`MQM_CAP` = 25 for the ranking only, so that the
scores have the bounded range [-25, 0] the intervals need (the exports keep the uncapped scores). A side-by-side
study ranks **win rates**: a comparison scores 1, 1/2 (a tie) or 0 for each of its two systems, so a system's
scores lie in [0, 1]. The two scores of one comparison depend on each other, but each system's interval holds
on its own (the Bonferroni union over systems needs no independence between them); a system's mean is its win
rate against the opponents the schedule gives it, which a balanced schedule makes the same mix for every system.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from ngrameval.collect.models import PairRow, RatingRow, TrialRow
from ngrameval.collect.study import WIN_RATE, Study
from ngrameval.errors import ConfigError, InputError
from ngrameval.meta.sequential import SequentialStatus, status_from_sums

#: a system's number of scores and their sum
Tally = tuple[int, float]


@dataclass(frozen=True)
class Answer:
    """One answered trial as the ranking sees it: its ``system``, the ``criterion`` rated, the ``score`` and the
    trial's kind (``normal``; the controls ``repeat``, ``bad``, ``known``; ``training``)."""

    system: str
    criterion: str
    score: float
    kind: str = "normal"


@dataclass(frozen=True)
class Scoring:
    """How one study kind's stored answers become per-trial scores: ``criteria`` what can be ranked (the first
    is the default), ``scale`` a criterion's score range ``(low, high)``, ``tallies`` each system's
    :data:`Tally` of the answered normal trials' scores on a criterion, read in an open database session."""

    criteria: Callable[[Study], tuple[str, ...]]
    scale: Callable[[Study, str], tuple[float, float]]
    tallies: Callable[[Session, str], dict[str, Tally]]
    scores_per_answer: int = 1  # a side-by-side comparison scores both of its systems


def _criteria(study: Study) -> tuple[str, ...]:
    return tuple(c.name for c in study.criteria)


def _scale(study: Study, criterion: str) -> tuple[float, float]:
    """A Likert criterion rates 1..points, a slider 0..100 (as :func:`ngrameval.collect.views.annotate.rating`
    accepts)."""
    c = next(c for c in study.criteria if c.name == criterion)
    return (0.0, 100.0) if c.scale == "slider" else (1.0, float(c.points))


def _rating_tallies(s: Session, criterion: str) -> dict[str, Tally]:
    rows = s.execute(
        select(TrialRow.system, func.count(RatingRow.score), func.sum(RatingRow.score))
        .join(RatingRow, RatingRow.trial_id == TrialRow.id)
        .where(TrialRow.kind == "normal", TrialRow.token.is_not(None), RatingRow.criterion == criterion)
        .group_by(TrialRow.system)
    ).all()
    return {system: (int(n), float(total or 0.0)) for system, n, total in rows}


RATINGS = Scoring(_criteria, _scale, _rating_tallies)


def _pair_tallies(s: Session, criterion: str) -> dict[str, Tally]:
    """Each system's answered normal comparisons and its wins in them, a tie half a win for both sides: the
    win rate's count and sum (a comparison scores 1, 1/2 or 0 for each of its two systems)."""
    rows = s.execute(
        select(TrialRow.system, PairRow.system_b, PairRow.winner, func.count())
        .join(PairRow, PairRow.trial_id == TrialRow.id)
        .where(TrialRow.kind == "normal", TrialRow.token.is_not(None), PairRow.winner.is_not(None))
        .group_by(TrialRow.system, PairRow.system_b, PairRow.winner)
    ).all()
    out: dict[str, Tally] = {}
    for a, b, winner, k in rows:
        won = {"a": 1.0, "b": 0.0}.get(str(winner), 0.5)
        for system, share in ((a, won), (b, 1.0 - won)):
            n, total = out.get(system, (0, 0.0))
            out[system] = (n + int(k), total + share * int(k))
    return out


#: the worst MQM score a segment counts with in the running ranking: 25, one Non-translation or five Major errors
#: (Google's MQM annotation asks for at most five errors a segment; Freitag et al. 2021)
MQM_CAP = 25.0


def _mqm_tallies(s: Session, criterion: str) -> dict[str, Tally]:
    """Each system's answered normal MQM trials and the sum of their scores, each capped at ``-MQM_CAP``."""
    capped = case((RatingRow.score < -MQM_CAP, -MQM_CAP), else_=RatingRow.score)
    rows = s.execute(
        select(TrialRow.system, func.count(RatingRow.score), func.sum(capped))
        .join(RatingRow, RatingRow.trial_id == TrialRow.id)
        .where(TrialRow.kind == "normal", TrialRow.token.is_not(None), RatingRow.criterion == criterion)
        .group_by(TrialRow.system)
    ).all()
    return {system: (int(n), float(total or 0.0)) for system, n, total in rows}


MQM = Scoring(lambda study: ("mqm",), lambda study, criterion: (-MQM_CAP, 0.0), _mqm_tallies)

PAIRS = Scoring(lambda study: (WIN_RATE,), lambda study, criterion: (0.0, 1.0), _pair_tallies, scores_per_answer=2)

#: study kind -> how its answers are scored for the running ranking
SCORINGS: dict[str, Scoring] = {"rate": RATINGS, "da": RATINGS, "esa": RATINGS, "mqm": MQM, "pairwise": PAIRS}


@dataclass(frozen=True)
class Standing:
    """One row of the ranking: ``rank`` (1 = best), ``n`` answers, their ``mean`` (None without any), the
    always-valid interval ``[low, high]``, whether the pair with the next system is settled (None for the last)
    and the cluster (1 = the top)."""

    rank: int
    system: str
    n: int
    mean: float | None
    low: float
    high: float
    settled_with_next: bool | None
    cluster: int


@dataclass(frozen=True)
class Settlement:
    """The running ranking of one ``criterion`` on the score range ``[low, high]``
    (:func:`ngrameval.meta.sequential.status_from_sums` gives ``status``)."""

    criterion: str
    status: SequentialStatus
    scores_per_answer: int = 1  # 2 in a side-by-side study (:class:`Scoring`)

    @property
    def all_settled(self) -> bool:
        return self.status.all_settled

    @property
    def judgments(self) -> int:
        """Scores counted in the ranking: the systems' ``n`` added up (a comparison counts once per system)."""
        return sum(s.n for s in self.status.ranking)

    @property
    def answers(self) -> int:
        """Answers the ranking counts: answered normal trials (a comparison is one answer)."""
        return self.judgments // self.scores_per_answer

    def counted(self) -> str:
        """What the ranking counts, for people: ``48 answers``; side by side ``48 comparisons (96 system
        judgments)``."""
        n = self.answers
        if self.scores_per_answer == 1:
            return f"{n} answer{'' if n == 1 else 's'}"
        return f"{n} comparison{'' if n == 1 else 's'} ({self.judgments} system judgments)"

    @property
    def standings(self) -> tuple[Standing, ...]:
        pairs = self.status.pairs
        return tuple(
            Standing(
                k + 1,
                s.system,
                s.n,
                None if math.isnan(s.mean) else s.mean,
                s.low,
                s.high,
                pairs[k].settled if k < len(pairs) else None,
                s.cluster,
            )
            for k, s in enumerate(self.status.ranking)
        )

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (no NaN: a mean without answers is None)."""
        st = self.status
        return {
            "criterion": self.criterion,
            "range": [st.low, st.high],
            "alpha": st.alpha,
            "planned": st.t_opt,
            "method": st.method,
            "answers": self.answers,
            "judgments": self.judgments,
            "all_settled": st.all_settled,
            "clusters": max((s.cluster for s in st.ranking), default=0),
            "ranking": [
                {
                    "rank": r.rank,
                    "system": r.system,
                    "n": r.n,
                    "mean": r.mean,
                    "low": r.low,
                    "high": r.high,
                    "settled_with_next": r.settled_with_next,
                    "cluster": r.cluster,
                }
                for r in self.standings
            ],
        }

    def table(self) -> str:
        """A plain-text table (rank, system, n, mean, interval, settled with the next, cluster) and a summary."""
        st = self.status
        head = ("rank", "system", "n", "mean", "interval", "settled with next", "cluster")
        body = [
            (
                str(r.rank),
                r.system,
                str(r.n),
                "–" if r.mean is None else f"{r.mean:.3f}",
                f"[{r.low:.3f}, {r.high:.3f}]",
                "–" if r.settled_with_next is None else ("yes" if r.settled_with_next else "no"),
                str(r.cluster),
            )
            for r in self.standings
        ]
        widths = [max(len(x) for x in col) for col in zip(head, *body)]
        lines = ["  ".join(x.ljust(w) for x, w in zip(row, widths)).rstrip() for row in (head, *body)]
        settled = sum(p.settled for p in st.pairs)
        lines.append(
            f"{self.criterion} on [{st.low:g}, {st.high:g}], {self.counted()}: {settled} of {len(st.pairs)} "
            f"adjacent pairs settled{' (all)' if st.all_settled else ''}; alpha = {st.alpha:g} under continuous "
            f"monitoring ({st.method})"
        )
        return "\n".join(lines) + "\n"


def scoring(study: Study) -> Scoring:
    """The :class:`Scoring` of the study's kind; a :class:`ConfigError` for a kind without one."""
    got = SCORINGS.get(study.kind)
    if got is None:
        raise ConfigError(f"a study of kind {study.kind!r} has no running ranking (kinds: {', '.join(SCORINGS)})")
    return got


def criterion_of(study: Study, criterion: str | None = None) -> str:
    """The criterion to rank: ``criterion``, else ``[stopping] criterion``, else the kind's first."""
    names = scoring(study).criteria(study)
    name = criterion or study.stopping.criterion or (names[0] if names else "")
    if name not in names:
        raise ConfigError(f"criterion: {name!r} is not one of the study's ({', '.join(names) or 'none'})")
    return name


def settle_tallies(study: Study, tallies: Mapping[str, Tally], criterion: str | None = None) -> Settlement:
    """The running ranking from each system's :data:`Tally` (systems without one have no answers yet), with
    ``[stopping] alpha`` and ``planned`` (module docstring)."""
    name = criterion_of(study, criterion)
    low, high = scoring(study).scale(study, name)
    systems = dict.fromkeys(i.system for i in study.items if i.expected is None)  # known-answer items: controls
    unknown = sorted(set(tallies) - set(systems))
    if unknown:
        raise InputError(f"answers of system(s) not in the study: {', '.join(unknown[:5])}")
    sums = {sys: tallies.get(sys, (0, 0.0)) for sys in systems}
    st = study.stopping
    status = status_from_sums(sums, low, high, st.alpha, st.planned)
    return Settlement(name, status, scoring(study).scores_per_answer)


def settle(study: Study, answers: Iterable[Answer], criterion: str | None = None) -> Settlement:
    """The running ranking of ``study`` from its answered trials: the normal trials' scores on the criterion
    (``criterion``, else ``[stopping] criterion``, else the first), each system's always-valid interval, the
    clusters and which adjacent pairs are settled. Scores outside the criterion's scale are an
    :class:`InputError`."""
    name = criterion_of(study, criterion)
    low, high = scoring(study).scale(study, name)
    tallies: dict[str, Tally] = {}
    for a in answers:
        if a.kind != "normal" or a.criterion != name:
            continue
        if not low <= a.score <= high:
            raise InputError(f"{a.system}: a {name} score {a.score} lies outside the scale [{low:g}, {high:g}]")
        n, total = tallies.get(a.system, (0, 0.0))
        tallies[a.system] = (n + 1, total + a.score)
    return settle_tallies(study, tallies, name)


def answers_of(rows: Iterable[tuple[TrialRow, RatingRow, Any]]) -> list[Answer]:
    """:class:`Answer` of each (trial, rating, judge) row of :meth:`ngrameval.collect.store.Store.ratings`."""
    return [Answer(t.system, r.criterion, r.score, t.kind) for t, r, _ in rows]


def read_settlement(session: Session, study: Study, criterion: str | None = None) -> Settlement:
    """:func:`settle_tallies` on the answers stored in the study database (read in ``session``)."""
    name = criterion_of(study, criterion)
    return settle_tallies(study, scoring(study).tallies(session, name), name)
