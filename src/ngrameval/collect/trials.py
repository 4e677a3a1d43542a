"""Rating tasks: a judge's training items, their Latin-square row (numbered within their group) with its
control trials, the trials leased to the page that shows them, and the ratings (see
:class:`ngrameval.collect.store.Store`)."""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from collections.abc import Callable

import numpy as np
from sqlalchemy import Select, delete, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ngrameval.collect import design, stopping
from ngrameval.collect.models import (
    Annotator,
    RatingRow,
    TrialRow,
)
from ngrameval.collect.repo import RETRIES, Repo, Submitted
from ngrameval.collect.study import Study


class Trials(Repo):
    """Rating tasks."""

    def _row(self, s: Session, a: Annotator, at: dt.datetime) -> int:
        """The Latin-square row for judge ``a`` in their group: the lowest row whose judge gave up (answered
        nothing within the lease time: their trials are withdrawn) or the next new one."""
        group = a.group
        holders = list(
            s.scalars(select(Annotator).where(Annotator.square == group, Annotator.judge_index.is_not(None)))
        )
        taken = {h.judge_index for h in holders}
        cutoff = at - self.lease_time
        for h in sorted(holders, key=lambda h: h.judge_index or 0):
            theirs = (TrialRow.annotator_id == h.id, TrialRow.kind != "training")
            answered = s.scalar(select(func.count()).where(*theirs, TrialRow.token.is_not(None)))
            last = s.scalar(select(func.max(TrialRow.shown)).where(*theirs))
            if not answered and (last or h.created) < cutoff:
                row = h.judge_index
                assert row is not None
                s.execute(delete(TrialRow).where(*theirs))
                h.judge_index, h.square = None, None
                s.flush()
                return row
        return next(k for k in range(len(taken) + 1) if k not in taken)

    def assign_trials(self, aid: int) -> None:
        """Give a judge their trials, once: first the training items (``[training]``), and when those are passed
        their Latin-square row (numbered within their group) with its control trials; nothing once the study has
        stopped (:func:`ngrameval.collect.stopping.finished`), whatever the kind or the page asking."""
        if stopping.finished(self):
            return
        st = self.study
        with self.session() as s:
            a = s.get(Annotator, aid)
            if a is None:
                raise ValueError("no such annotator")
            training = int(
                s.scalar(select(func.count()).where(TrialRow.annotator_id == aid, TrialRow.kind == "training")) or 0
            )
            total = int(s.scalar(select(func.count()).where(TrialRow.annotator_id == aid)) or 0)
        if st.training_items and not training:
            with self.write() as s:
                self._assign_training(s, aid)
            return
        if total > training or (st.training_items and a.trained != "passed"):
            return  # assigned already, or still in (or failed) training
        for _ in range(RETRIES):
            try:
                with self.write() as s:
                    self._assign(s, aid, st)
                return
            except IntegrityError:  # another judge of the group took that row meanwhile (PostgreSQL)
                continue
        raise RuntimeError("could not assign a Latin-square row")

    def _assign_training(self, s: Session, aid: int) -> None:
        """The first ``training_items`` known-answer items, in an order of this judge's, as ``training`` trials."""
        s.get(Annotator, aid, with_for_update=not self.sqlite)
        if s.scalar(select(func.count()).where(TrialRow.annotator_id == aid)):
            return  # a concurrent request of this judge did it
        known = [i for i in self.study.items if i.expected is not None]
        rng = np.random.default_rng([self.study.seed, aid, 1])
        for k, j in enumerate(rng.permutation(len(known))[: self.study.training_items].tolist()):
            it = known[j]
            s.add(
                TrialRow(
                    annotator_id=aid,
                    position=k,
                    item=it.item,
                    system=it.system,
                    kind="training",
                    output=it.output,
                    source=it.source,
                    expected=it.expected,
                )
            )

    def _assign(self, s: Session, aid: int, st: Study) -> None:
        a = s.get(Annotator, aid, with_for_update=not self.sqlite)
        if a is None:
            raise ValueError("no such annotator")
        first = int(s.scalar(select(func.count()).where(TrialRow.annotator_id == aid)) or 0)
        if first > (st.training_items if a.trained == "passed" else 0):
            return  # a concurrent request of this judge did it
        judge = self._judge_row(s, a)
        tier = 2 if a.status == "qualified" else 1
        rng = np.random.default_rng([st.seed, judge])
        normal = [i for i in st.items if i.expected is None]
        known = [i for i in st.items if i.expected is not None]
        items = list(dict.fromkeys(i.item for i in normal))
        systems = list(dict.fromkeys(i.system for i in normal))
        by_key = {(i.item, i.system): i for i in st.items}
        trials = design.latin_square(items, systems, judge, rng)
        outputs = {(i.item, i.system): i.output for i in normal}
        knowns = [design.Trial(i.item, i.system, "known") for i in known]
        full = design.controls_for(trials, outputs, st.controls, rng, knowns)  # WMT/Appraise batches
        positions = {id(t): first + k for k, t in enumerate(full)}
        for k, t in enumerate(full):
            it = by_key[t.item, t.system]
            of = None if t.of is None else positions[id(trials[t.of])]
            s.add(
                TrialRow(
                    annotator_id=aid,
                    position=first + k,
                    item=t.item,
                    system=t.system,
                    kind=t.kind,
                    of_position=of,
                    output=t.output if t.output is not None else it.output,
                    source=it.source,
                    expected=it.expected,
                    tier=tier,
                )
            )

    def _judge_row(self, s: Session, a: Annotator) -> int:
        """Judge ``a``'s row in their group's design, numbered on first use (a clash raises IntegrityError)."""
        if a.judge_index is None:
            if not self.sqlite:  # one row assignment per group at a time (SQLite's write lock does this)
                key = int.from_bytes(hashlib.sha256(f"square:{a.group}".encode()).digest()[:8], "big", signed=True)
                s.execute(select(func.pg_advisory_xact_lock(key)))
            a.judge_index, a.square = self._row(s, a, self.clock()), a.group
            s.flush()  # the unique (square, row) key is checked here
        assert a.judge_index is not None
        return a.judge_index

    def _judge_training(self, s: Session, aid: int) -> None:
        """Once every training trial of ``aid`` is answered: passed when the mean absolute error of the scores
        against the known answers (every criterion) is at most ``training_max_error``; passing qualifies the
        judge when ``training_qualifies``."""
        rows = s.execute(
            select(TrialRow.token, TrialRow.expected, RatingRow.score)
            .outerjoin(RatingRow, RatingRow.trial_id == TrialRow.id)
            .where(TrialRow.annotator_id == aid, TrialRow.kind == "training")
        ).all()
        if any(token is None for token, _, _ in rows):
            return
        errors = [abs(score - expected) for _, expected, score in rows if score is not None and expected is not None]
        a = s.get(Annotator, aid)
        assert a is not None
        passed = bool(errors) and sum(errors) / len(errors) <= self.study.training_max_error
        a.trained = "passed" if passed else "failed"
        if passed and self.study.training_qualifies:
            a.status = "qualified"

    def _locked(self, q: Select[TrialRow]) -> Select[TrialRow]:
        """``q`` (a select of trials) locking the rows it returns until the write transaction ends, on PostgreSQL
        (``FOR UPDATE``: a concurrent transaction that selects one of them waits, then reads it as committed);
        SQLite's write transactions hold the database's write lock from ``BEGIN`` instead."""
        return q if self.sqlite else q.with_for_update(of=TrialRow)

    def next_trial(self, aid: int) -> TrialRow | None:
        """The judge's next unanswered trial, leased to the page that shows it (its form token and the server
        time it was first shown are set once); None when there is none, or when a trial not shown yet would be
        new work in a study that has stopped (:func:`ngrameval.collect.stopping.admit`, decided in the same
        transaction). A trial shown before is always given again: its answer is paid work."""
        with self.write() as s:
            q = select(TrialRow).where(TrialRow.annotator_id == aid, TrialRow.token.is_(None))
            # PostgreSQL: the trial's row is locked, so a concurrent request of this judge waits and then finds
            # the lease set (without the lock it set a second token over the first: the first page's answer was
            # refused); SQLite's write lock, taken at BEGIN, does this already
            t = s.scalar(self._locked(q.order_by(TrialRow.position).limit(1)))
            if t is not None and t.lease is None:
                if not stopping.admit(s, self.study, t, self.sqlite):
                    return None
                t.lease, t.shown = secrets.token_urlsafe(24), self.clock()
            return t

    def submit_rating(
        self,
        aid: int,
        lease: str,
        scores: dict[str, float],
        assignment: int | None = None,
        extra: Callable[[Session, TrialRow], None] | None = None,
    ) -> Submitted:
        """Answer the trial leased by form token ``lease`` of this judge, once; ``foreign`` for a trial that is
        not theirs or was never shown (nobody answers another judge's trial). Time from the server's clock.
        ``extra(session, trial)`` stores more of the answer in the same transaction (an exception it raises
        stores nothing)."""
        at = self.clock()
        try:
            with self.write() as s:
                t = s.scalar(self._locked(select(TrialRow).where(TrialRow.lease == lease)))
                if t is None or t.annotator_id != aid:
                    return Submitted("foreign")
                if t.token is not None:
                    return Submitted("repeat")
                seconds = (at - t.shown).total_seconds() if t.shown else 0.0
                t.token, t.seconds, t.answered, t.assignment_id = lease, seconds, at, assignment
                s.add_all(RatingRow(trial_id=t.id, criterion=c, score=v) for c, v in scores.items())
                if extra is not None:
                    extra(s, t)
                if t.kind == "training":
                    s.flush()
                    self._judge_training(s, aid)
                return Submitted("stored", seconds)
        except IntegrityError:
            return Submitted("repeat")

    def ratings(self, aid: int | None = None) -> list[tuple[TrialRow, RatingRow, Annotator]]:
        with self.session() as s:
            q = (
                select(TrialRow, RatingRow, Annotator)
                .join(RatingRow, RatingRow.trial_id == TrialRow.id)
                .join(Annotator, Annotator.id == TrialRow.annotator_id)
                .order_by(TrialRow.annotator_id, TrialRow.position, RatingRow.criterion)
            )
            if aid is not None:
                q = q.where(TrialRow.annotator_id == aid)
            return [tuple(r) for r in s.execute(q).all()]  # type: ignore[misc]

    def rows_per_square(self) -> int:
        """Judges (rows) of a group that together rate every (item, system) once: the Williams design's rows."""
        return len(design.williams_rows(max(1, len(self.study.systems))))

    def squares(self) -> list[tuple[str, int, int, int]]:
        """Per judge group: (group, judges holding a row, rows fully answered, complete squares). A square is
        ``k`` consecutive rows ``q*k .. q*k+k-1`` all answered, with ``k`` the number of Williams rows."""
        k = self.rows_per_square()
        with self.session() as s:
            rows = s.execute(
                select(
                    Annotator.square,
                    Annotator.judge_index,
                    func.count(TrialRow.id),
                    func.count(TrialRow.token),
                )
                .join(TrialRow, TrialRow.annotator_id == Annotator.id)
                .where(Annotator.judge_index.is_not(None))
                .group_by(Annotator.square, Annotator.judge_index)
            ).all()
        out: dict[str, tuple[int, set[int]]] = {}
        for group, row, total, answered in rows:
            held, full = out.setdefault(group or "", (0, set()))
            if answered == total and row is not None:
                full.add(row)
            out[group or ""] = (held + 1, full)
        result = []
        for group, (held, full) in sorted(out.items()):
            squares = sum(all(q * k + j in full for j in range(k)) for q in range(max(full, default=-1) // k + 1))
            result.append((group, held, len(full), squares))
        return result
