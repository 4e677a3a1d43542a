"""Side-by-side tasks (``kind = "pairwise"``): a judge's balanced pair schedule (:func:`ngrameval.collect.pairwise.
pair_schedule`, numbered within their group as the Latin-square rows of rating studies) with its repeat controls,
and the answers. A trial is a :class:`~ngrameval.collect.models.TrialRow` (system A: its ``system``/``output``;
leased, timed and answered once as a rating trial) with a :class:`~ngrameval.collect.models.PairRow` (system B,
the side shown left, the winner and reason)."""

from __future__ import annotations

import numpy as np
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ngrameval.collect import design
from ngrameval.collect.models import Annotator, PairRow, TrialRow
from ngrameval.collect.pairwise import PairTrial, pair_schedule, system_pairs, winner_of
from ngrameval.collect.repo import Submitted
from ngrameval.collect.study import Study
from ngrameval.collect.trials import Trials


class Pairs(Trials):
    """Side-by-side tasks beside the rating tasks of :class:`Trials`."""

    def _assign(self, s: Session, aid: int, st: Study) -> None:
        if st.kind != "pairwise":
            super()._assign(s, aid, st)
            return
        a = s.get(Annotator, aid, with_for_update=not self.sqlite)
        if a is None:
            raise ValueError("no such annotator")
        if s.scalar(select(TrialRow.id).where(TrialRow.annotator_id == aid).limit(1)) is not None:
            return  # a concurrent request of this judge did it
        judge = self._judge_row(s, a)
        tier = 2 if a.status == "qualified" else 1
        rng = np.random.default_rng([st.seed, judge, 2])
        items = list(dict.fromkeys(i.item for i in st.items))
        schedule = pair_schedule(items, st.systems, judge, rng, st.pairwise.trials)
        # repeats (the [rating] controls): a copy of an earlier comparison with the sides swapped, half a batch on
        proxies = [design.Trial(str(k), "") for k in range(len(schedule))]
        full = design.controls_for(proxies, {}, st.controls, rng)
        positions = {id(t): k for k, t in enumerate(full)}
        outputs = {(i.item, i.system): i for i in st.items}
        for k, t in enumerate(full):
            p = schedule[int(t.item)]
            if t.kind == "repeat":
                p = PairTrial(p.item, p.system_a, p.system_b, "b" if p.left == "a" else "a")
            of = None if t.of is None else positions[id(proxies[t.of])]
            a_item, b_item = outputs[p.item, p.system_a], outputs[p.item, p.system_b]
            row = TrialRow(annotator_id=aid, position=k, item=p.item, system=p.system_a, kind=t.kind,
                           of_position=of, output=a_item.output, source=a_item.source, tier=tier)  # fmt: skip
            s.add(row)
            s.flush()
            s.add(PairRow(trial_id=row.id, system_b=p.system_b, output_b=b_item.output, left=p.left, reason=""))

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
                return Submitted("stored", seconds)
        except IntegrityError:
            return Submitted("repeat")

    def preferences(self, aid: int | None = None) -> list[tuple[TrialRow, PairRow, Annotator]]:
        """Every answered side-by-side trial (of judge ``aid``) with its pair and judge, by judge and position."""
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
            return [tuple(r) for r in s.execute(q).all()]  # type: ignore[misc]
