"""Side-by-side tasks (``kind = "pairwise"``): a judge's balanced pair schedule (:func:`ngrameval.collect.pairwise.
pair_schedule`, numbered within their group as the Latin-square rows of rating studies) with its repeat controls,
and the answers. A trial is a :class:`~ngrameval.collect.models.TrialRow` (system A: its ``system``/``output``;
leased, timed and answered once as a rating trial) with a :class:`~ngrameval.collect.models.PairRow` (system B,
the side shown left, the winner and reason)."""

from __future__ import annotations

import numpy as np
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ngrameval.collect import design
from ngrameval.collect.models import Annotator, PairRow, TrialRow
from ngrameval.collect.pairwise import PairTrial, pair_schedule, system_pairs, winner_of
from ngrameval.collect.repo import Submitted
from ngrameval.collect.study import Study
from ngrameval.collect.trials import Trials


class Pairs(Trials):
    """Side-by-side tasks beside the rating tasks of :class:`Trials`. A control that shows one output against
    its own degraded copy (a bad reference, kind ``bad``, or a ``training`` comparison) is stored with the
    original as side ``a`` (the trial's ``system``/``output``) and the copy as side ``b`` (the same system), so
    its winner ``a`` means the judge chose the original; the page side of each is drawn at random."""

    def _assign(self, s: Session, aid: int, st: Study) -> None:
        if st.kind != "pairwise":
            super()._assign(s, aid, st)
            return
        a = s.get(Annotator, aid, with_for_update=not self.sqlite)
        if a is None:
            raise ValueError("no such annotator")
        first = int(s.scalar(select(func.count()).where(TrialRow.annotator_id == aid)) or 0)
        if first > (st.training_items if a.trained == "passed" else 0):
            return  # a concurrent request of this judge did it
        judge = self._judge_row(s, a)
        tier = 2 if a.status == "qualified" else 1
        rng = np.random.default_rng([st.seed, judge, 2])
        items = list(dict.fromkeys(i.item for i in st.items))
        schedule = pair_schedule(items, st.systems, judge, rng, st.pairwise.trials)
        outputs = {(i.item, i.system): i for i in st.items}
        # the controls (the [rating] repeats and bad references) of proxies standing for the comparisons: a
        # repeat is a copy of an earlier comparison with the sides swapped; a bad reference degrades the side
        # ``sides[k]`` of comparison ``k`` (a draw of its own generator, so that studies without bad references
        # keep their schedules), the study's other outputs as donors
        sides = np.random.default_rng([st.seed, judge, 3])
        chosen = [p.system_a if sides.integers(0, 2) else p.system_b for p in schedule]
        texts = {(i.item, i.system): i.output for i in st.items}
        texts.update(((str(k), ""), outputs[p.item, chosen[k]].output) for k, p in enumerate(schedule))
        proxies = [design.Trial(str(k), "") for k in range(len(schedule))]
        full = design.controls_for(proxies, texts, st.controls, rng)
        positions = {id(t): first + k for k, t in enumerate(full)}
        for k, t in enumerate(full):
            p = schedule[int(t.item)]
            of = None if t.of is None else positions[id(proxies[t.of])]
            if t.kind == "bad":
                assert t.output is not None
                original = outputs[p.item, chosen[int(t.item)]]
                p = PairTrial(p.item, original.system, original.system, "a" if sides.integers(0, 2) else "b")
                a_item, b_output = original, t.output
            else:
                if t.kind == "repeat":
                    p = PairTrial(p.item, p.system_a, p.system_b, "b" if p.left == "a" else "a")
                a_item, b_output = outputs[p.item, p.system_a], outputs[p.item, p.system_b].output
            row = TrialRow(annotator_id=aid, position=first + k, item=p.item, system=p.system_a, kind=t.kind,
                           of_position=of, output=a_item.output, source=a_item.source, tier=tier)  # fmt: skip
            s.add(row)
            s.flush()
            s.add(PairRow(trial_id=row.id, system_b=p.system_b, output_b=b_output, left=p.left, reason=""))

    def _assign_training(self, s: Session, aid: int) -> None:
        """Pairwise: ``[training] items`` comparisons of an output with its own degraded copy (outputs drawn for
        this judge, the study's other outputs as donors), sides at random, before the judge's schedule."""
        if self.study.kind != "pairwise":
            super()._assign_training(s, aid)
            return
        s.get(Annotator, aid, with_for_update=not self.sqlite)
        if s.scalar(select(func.count()).where(TrialRow.annotator_id == aid)):
            return  # a concurrent request of this judge did it
        pool = [i for i in self.study.items if i.output.split()]
        donors = [i.output for i in self.study.items]
        rng = np.random.default_rng([self.study.seed, aid, 1])
        for k, j in enumerate(rng.permutation(len(pool))[: self.study.training_items].tolist()):
            it = pool[j]
            row = TrialRow(annotator_id=aid, position=k, item=it.item, system=it.system, kind="training",
                           output=it.output, source=it.source)  # fmt: skip
            s.add(row)
            s.flush()
            copy = design.degrade(it.output, donors, rng)
            s.add(PairRow(trial_id=row.id, system_b=it.system, output_b=copy, left="ab"[int(rng.integers(0, 2))],
                          reason=""))  # fmt: skip

    def _judge_pair_training(self, s: Session, aid: int) -> None:
        """Once every training comparison of ``aid`` is answered: passed when the share answered wrong (the
        degraded copy or a tie chosen) is at most ``training_max_error``; passing qualifies the judge when
        ``training_qualifies``."""
        rows = s.execute(
            select(TrialRow.token, PairRow.winner)
            .join(PairRow, PairRow.trial_id == TrialRow.id)
            .where(TrialRow.annotator_id == aid, TrialRow.kind == "training")
        ).all()
        if not rows or any(token is None for token, _ in rows):
            return
        wrong = sum(winner != "a" for _, winner in rows) / len(rows)
        a = s.get(Annotator, aid)
        assert a is not None
        passed = wrong <= self.study.training_max_error + 1e-9
        a.trained = "passed" if passed else "failed"
        if passed and self.study.training_qualifies:
            a.status = "qualified"

    def rows_per_square(self) -> int:
        """Pairwise: the ``P`` judges of a group that together compare every pair of every item once."""
        if self.study.kind != "pairwise":
            return super().rows_per_square()
        return max(1, len(system_pairs(self.study.systems)))

    def pair_of(self, trial_id: int) -> PairRow | None:
        """The second side of a side-by-side trial (None: not one)."""
        with self.session() as s:
            return s.scalar(select(PairRow).where(PairRow.trial_id == trial_id))

    def submit_preference(
        self, aid: int, lease: str, choice: str, reason: str = "", assignment: int | None = None
    ) -> Submitted:
        """Answer the side-by-side trial leased by form token ``lease`` of this judge, once: ``choice`` is what
        the page offered (left, right, tie), stored as the winner in system terms with the ``reason``;
        ``foreign`` for a trial that is not theirs, never shown or not side by side; ``repeat`` when answered
        before (the trial row is locked, so two concurrent submissions store one)."""
        at = self.clock()
        try:
            with self.write() as s:
                t = s.scalar(self._locked(select(TrialRow).where(TrialRow.lease == lease)))
                if t is None or t.annotator_id != aid:
                    return Submitted("foreign")
                pair = s.scalar(select(PairRow).where(PairRow.trial_id == t.id))
                if pair is None:
                    return Submitted("foreign")
                if t.token is not None:
                    return Submitted("repeat")
                seconds = (at - t.shown).total_seconds() if t.shown else 0.0
                t.token, t.seconds, t.answered, t.assignment_id = lease, seconds, at, assignment
                pair.winner, pair.reason = winner_of(choice, pair.left), reason
                if t.kind == "training":
                    s.flush()
                    self._judge_pair_training(s, aid)
                return Submitted("stored", seconds)
        except IntegrityError:
            return Submitted("repeat")

    def preferences(
        self, aid: int | None = None, kinds: tuple[str, ...] | None = None
    ) -> list[tuple[TrialRow, PairRow, Annotator]]:
        """Every answered side-by-side trial (of judge ``aid``; of the trial ``kinds``) with its pair and judge,
        by judge and position."""
        with self.session() as s:
            q = (
                select(TrialRow, PairRow, Annotator)
                .join(PairRow, PairRow.trial_id == TrialRow.id)
                .join(Annotator, Annotator.id == TrialRow.annotator_id)
                .where(TrialRow.token.is_not(None))
                .order_by(TrialRow.annotator_id, TrialRow.position)
            )
            if aid is not None:
                q = q.where(TrialRow.annotator_id == aid)
            if kinds is not None:
                q = q.where(TrialRow.kind.in_(kinds))
            return [tuple(r) for r in s.execute(q).all()]  # type: ignore[misc]
