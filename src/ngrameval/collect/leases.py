"""Describe and paraphrase tasks: stimuli leased to annotators, fewest-first and never past their target,
attention-check stimuli among them, and the descriptions that answer the leases (see
:class:`ngrameval.collect.store.Store`)."""

from __future__ import annotations

import datetime as dt
import secrets

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session

from ngrameval.collect.models import (
    Annotator,
    DescriptionRow,
    Lease,
    StimulusRow,
    TrialRow,
)
from ngrameval.collect.repo import RETRIES, Repo, Submitted


class Leases(Repo):
    """Description tasks."""

    def _open_leases(self, at: dt.datetime):  # type: ignore[no-untyped-def]
        """Open, unexpired leases per stimulus, as a subquery (stimulus_id, n)."""
        return (
            select(Lease.stimulus_id, func.count().label("n"))
            .where(Lease.closed.is_(None), Lease.expires > at)
            .group_by(Lease.stimulus_id)
            .subquery()
        )

    def _room(self, s: Session, sid: int, at: dt.datetime, but: int | None = None) -> bool:
        """Whether stimulus ``sid`` has room for one more lease (descriptions + other open leases < target);
        read under the stimulus' lock."""
        done = s.scalar(select(StimulusRow.done).where(StimulusRow.id == sid)) or 0
        q = select(func.count()).where(Lease.stimulus_id == sid, Lease.closed.is_(None), Lease.expires > at)
        if but is not None:
            q = q.where(Lease.id != but)
        return done + int(s.scalar(q) or 0) < self.study.target

    def _claim(self, s: Session, sid: int, at: dt.datetime, skip_locked: bool = False, but: int | None = None) -> bool:
        """Lock stimulus ``sid`` and say whether it has room for one more lease (``but`` a lease of the caller's
        own); on PostgreSQL the lock is taken in a savepoint and let go at once when there is no room, so a
        transaction never waits for one stimulus while holding another (no deadlock). SQLite holds its write
        lock already."""
        if self.sqlite:
            return self._room(s, sid, at, but)
        sp = s.begin_nested()
        q = select(StimulusRow.id).where(StimulusRow.id == sid).with_for_update(skip_locked=skip_locked)
        if s.scalar(q) is not None and self._room(s, sid, at, but):
            sp.commit()
            return True
        sp.rollback()
        return False

    def lease_stimulus(self, aid: int) -> tuple[StimulusRow, Lease] | None:
        """The annotator's open lease (renewed if it expired and its stimulus still has room), or a new lease on
        the least-filled stimulus with room that they have not been shown; None when there is none now."""
        for _ in range(RETRIES):
            try:
                return self._lease(aid)
            except OperationalError as exc:  # PostgreSQL broke a lock cycle it found: try again
                if getattr(exc.orig, "sqlstate", "") not in ("40P01", "40001"):
                    raise
        raise RuntimeError("could not lease a stimulus")

    def _lease(self, aid: int) -> tuple[StimulusRow, Lease] | None:
        at = self.clock()
        with self.write() as s:
            if not self.sqlite:  # one request of an annotator at a time: never two open leases
                s.get(Annotator, aid, with_for_update=True)
            person = s.get(Annotator, aid)
            if person is None or person.trained == "failed":
                return None  # failed the attention checks: no more work
            mine = s.scalar(select(Lease).where(Lease.annotator_id == aid, Lease.closed.is_(None)))
            if mine is not None:
                if mine.expires > at or self._claim(s, mine.stimulus_id, at, but=mine.id):
                    mine.expires = max(mine.expires, at + self.lease_time)
                    stim = s.get(StimulusRow, mine.stimulus_id)
                    assert stim is not None
                    return stim, mine
                mine.closed = at  # expired, and others filled it meanwhile
            control = self._control_due(s, aid)
            if control is not None:
                return self._new_lease(s, aid, control, at)
            open_ = self._open_leases(at)
            seen = select(Lease.stimulus_id).where(Lease.annotator_id == aid)
            fill = StimulusRow.done + func.coalesce(open_.c.n, 0)
            q = (
                select(StimulusRow.id)
                .outerjoin(open_, open_.c.stimulus_id == StimulusRow.id)
                .where(StimulusRow.id.not_in(seen), StimulusRow.control.is_(False), fill < self.study.target)
                .order_by(fill, StimulusRow.id)
            )
            candidates = list(s.scalars(q.limit(1 if self.sqlite else 64)))
            # PostgreSQL: the candidates' fills were read before their locks, so each is recounted under its lock;
            # the first pass passes over stimuli that other transactions hold, the second waits for them
            passes = [(sid, True) for sid in candidates] + ([] if self.sqlite else [(sid, False) for sid in candidates])
            for sid, skip in passes:
                if self._claim(s, sid, at, skip_locked=skip):
                    return self._new_lease(s, aid, sid, at)
        return None

    def _new_lease(self, s: Session, aid: int, sid: int, at: dt.datetime) -> tuple[StimulusRow, Lease]:
        lease = Lease(
            annotator_id=aid, stimulus_id=sid, token=secrets.token_urlsafe(24), issued=at, expires=at + self.lease_time
        )
        s.add(lease)
        s.flush()
        stim = s.get(StimulusRow, sid)
        assert stim is not None
        return stim, lease

    def _control_due(self, s: Session, aid: int) -> int | None:
        """An attention-check stimulus this annotator has not been shown, when one is due: the
        ``control_every``-th, ``2 * control_every``-th, ... item they are shown is a control, while any is left
        (controls have no target: every annotator gets each)."""
        every = self.study.quality.control_every
        shown = dict(
            s.execute(
                select(StimulusRow.control, func.count())
                .join(Lease, Lease.stimulus_id == StimulusRow.id)
                .where(Lease.annotator_id == aid)
                .group_by(StimulusRow.control)
            ).all()
        )
        controls, regular = int(shown.get(True, 0)), int(shown.get(False, 0))
        if controls >= (controls + regular + 1) // every:
            return None
        seen = select(Lease.stimulus_id).where(Lease.annotator_id == aid)
        q = select(StimulusRow.id).where(StimulusRow.control.is_(True), StimulusRow.id.not_in(seen))
        return s.scalar(q.order_by(StimulusRow.id).limit(1))

    def _judge_controls(self, s: Session, aid: int) -> None:
        """Decide the annotator's qualification from their control answers (:func:`quality.qualification`; a
        skipped control counts as an answer that fails), once it is decided."""
        from ngrameval.collect import quality

        a = s.get(Annotator, aid)
        if a is None or a.trained is not None:
            return
        rows = s.execute(
            select(StimulusRow.key, DescriptionRow.text)
            .join(DescriptionRow, DescriptionRow.stimulus_id == StimulusRow.id)
            .where(DescriptionRow.annotator_id == aid, StimulusRow.control.is_(True))
        ).all()
        rules = self.study.quality
        check = quality.control_checks({aid: [(k, t) for k, t in rows]}, self.study.controls_gold, rules)[aid]
        verdict = quality.qualification(check, rules)
        if verdict != "undecided":
            a.trained = verdict

    def waiting(self, aid: int) -> bool:
        """Whether stimuli this annotator has not been shown are below target only through others' open
        leases (so work may come back when those leases expire)."""
        with self.session() as s:
            seen = select(Lease.stimulus_id).where(Lease.annotator_id == aid)
            q = select(func.count()).where(
                StimulusRow.id.not_in(seen), StimulusRow.control.is_(False), StimulusRow.done < self.study.target
            )
            return bool(s.scalar(q))

    def stimulus(self, sid: int) -> StimulusRow | None:
        with self.session() as s:
            return s.get(StimulusRow, sid)

    def lease_of(self, aid: int, sid: int) -> Lease | None:
        """The lease by which stimulus ``sid`` was given to annotator ``aid`` (open or closed), if any."""
        with self.session() as s:
            return s.scalar(select(Lease).where(Lease.annotator_id == aid, Lease.stimulus_id == sid))

    def submit_description(
        self,
        aid: int,
        token: str,
        text: str,
        language: str,
        comment: str,
        skipped: bool = False,
        assignment: int | None = None,
    ) -> Submitted:
        """Answer the lease ``token`` of annotator ``aid`` with a description (or a skip), once. The time spent
        is the server's, from the lease's issue. An expired lease is answered only while its stimulus has room
        (descriptions + others' open leases below the target), re-checked under the stimulus' lock."""
        at = self.clock()
        try:
            with self.write() as s:
                lease = s.scalar(select(Lease).where(Lease.token == token))
                if lease is None or lease.annotator_id != aid:
                    return Submitted("foreign")
                if lease.closed is not None:
                    stored = s.scalar(select(DescriptionRow.id).where(DescriptionRow.token == token))
                    return Submitted("repeat" if stored is not None else "late")
                if lease.expires <= at and not skipped and not self._claim(s, lease.stimulus_id, at, but=lease.id):
                    lease.closed = at
                    return Submitted("late")
                a = s.get(Annotator, aid)
                assert a is not None
                seconds = (at - lease.issued).total_seconds()
                lease.closed = at
                s.add(
                    DescriptionRow(
                        annotator_id=aid,
                        stimulus_id=lease.stimulus_id,
                        assignment_id=assignment,
                        token=token,
                        tier=2 if a.status == "qualified" else 1,
                        skipped=skipped,
                        text="" if skipped else text,
                        language=language,
                        comment=comment,
                        seconds=seconds,
                    )
                )
                if not skipped:
                    s.execute(
                        update(StimulusRow).where(StimulusRow.id == lease.stimulus_id).values(done=StimulusRow.done + 1)
                    )
                if s.scalar(select(StimulusRow.control).where(StimulusRow.id == lease.stimulus_id)):
                    s.flush()
                    self._judge_controls(s, aid)
                return Submitted("stored", seconds)
        except IntegrityError:  # the same form in two requests at once: one of them stored it
            return Submitted("repeat")

    def descriptions(
        self, aid: int | None = None, controls: bool = False
    ) -> list[tuple[DescriptionRow, StimulusRow, Annotator]]:
        """Descriptions (not skips) in the order stored; answers to attention checks only with ``controls``."""
        with self.session() as s:
            q = (
                select(DescriptionRow, StimulusRow, Annotator)
                .join(StimulusRow, StimulusRow.id == DescriptionRow.stimulus_id)
                .join(Annotator, Annotator.id == DescriptionRow.annotator_id)
                .where(DescriptionRow.skipped.is_(False))
                .order_by(DescriptionRow.id)
            )
            if not controls:
                q = q.where(StimulusRow.control.is_(False))
            if aid is not None:
                q = q.where(DescriptionRow.annotator_id == aid)
            return [tuple(r) for r in s.execute(q).all()]  # type: ignore[misc]

    def progress(self, aid: int) -> tuple[int, int]:
        """(done, available to this annotator in total) for the progress bar."""
        with self.session() as s:
            if self.study.rating:
                total = s.scalar(select(func.count()).where(TrialRow.annotator_id == aid)) or 0
                done = (
                    s.scalar(select(func.count()).where(TrialRow.annotator_id == aid, TrialRow.token.is_not(None))) or 0
                )
                return int(done), int(total)
            done = s.scalar(select(func.count()).where(DescriptionRow.annotator_id == aid)) or 0
            return int(done), len(self.study.stimuli)

    def answers(self, assignment: int) -> int:
        """Real answers given in one assignment: descriptions (not skips), or answered normal and control
        trials."""
        with self.session() as s:
            d = s.scalar(
                select(func.count()).where(
                    DescriptionRow.assignment_id == assignment, DescriptionRow.skipped.is_(False)
                )
            )
            t = s.scalar(select(func.count()).where(TrialRow.assignment_id == assignment))
            return int(d or 0) + int(t or 0)

    def stimulus_progress(self, offset: int = 0, limit: int = 100) -> list[tuple[StimulusRow, int]]:
        """A page of stimuli, least filled first, each with its number of open leases."""
        at = self.clock()
        with self.session() as s:
            open_ = self._open_leases(at)
            n = func.coalesce(open_.c.n, 0)
            q = (
                select(StimulusRow, n)
                .outerjoin(open_, open_.c.stimulus_id == StimulusRow.id)
                .order_by(StimulusRow.done, StimulusRow.id)
                .offset(offset)
                .limit(limit)
            )
            return [(r, int(k)) for r, k in s.execute(q).all()]
