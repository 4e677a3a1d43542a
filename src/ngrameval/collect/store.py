"""The study's repository: the functions the app calls over one study database (models in
:mod:`ngrameval.collect.models`; SQLite by default, PostgreSQL by URL).

Correct under a concurrent crowd:

* **Leases** (describe / paraphrase). A stimulus shown to an annotator is reserved for them for
  ``lease_minutes``; assignment picks, in one write transaction, the least-filled stimulus the annotator has not
  been shown whose descriptions plus open leases are below the target (SQLite: ``BEGIN IMMEDIATE``; PostgreSQL:
  the stimulus row locked ``FOR UPDATE SKIP LOCKED`` and its fill recounted under the lock). A submission must
  answer an open lease of its annotator; an expired lease is accepted only while its stimulus still has room.
  So **no stimulus ever has more descriptions than its target**, and stimuli fill fewest-first.
* **Latin squares per judge group** (rate / da). A judge's row is numbered within their group, atomically (a
  unique (group, row) constraint; a clash is retried), so each group's judges form complete squares whatever the
  interleaving of arrivals; a row whose judge answered nothing within ``lease_minutes`` goes to the next judge.
* **Assignments**. A platform assignment (MTurk assignment, Prolific session, invitation) is bound to the worker
  who opened it first and carries its own completion code; answers record the assignment they were given in.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from ngrameval.collect import design
from ngrameval.collect.models import (
    IMMEDIATE,
    MIGRATIONS,
    Admin,
    Annotator,
    Assignment,
    Base,
    DescriptionRow,
    Invite,
    Lease,
    Meta,
    RatingRow,
    StimulusRow,
    TrialRow,
    engine_for,
    now,
    unreachable,
    upgrade,
)
from ngrameval.collect.study import Study, StudyError
from ngrameval.errors import InputError

__all__ = [
    "MIGRATIONS",
    "Annotator",
    "Base",
    "Lease",
    "StimulusRow",
    "Store",
    "Submitted",
    "engine_for",
    "upgrade",
]

#: how many times a write transaction that lost a race (a unique key taken meanwhile) is tried again
RETRIES = 8


@dataclass(frozen=True)
class Submitted:
    """What became of a submission: ``stored``; ``repeat`` (this form was stored before: a double click or a
    retry); ``late`` (its lease had expired and others filled the stimulus meanwhile: not stored);
    ``foreign`` (not an open task of this annotator: not stored)."""

    outcome: str
    seconds: float = 0.0


def _code(prefix: str) -> str:
    """A completion code: the study's prefix and 10 random hexadecimal digits (40 bits: not guessable)."""
    return f"{prefix or 'NGE'}-{secrets.token_hex(5).upper()}"


class Store:
    """Repository functions over one study database."""

    def __init__(self, study: Study, url: str | None = None, clock: Callable[[], dt.datetime] = now) -> None:
        self.study = study
        self.clock = clock  # the server's time (a parameter: tests move it to expire leases)
        self.url = url or study.database_url()
        self.engine = engine_for(self.url)
        self.sessions = sessionmaker(self.engine, expire_on_commit=False)
        self.writers = sessionmaker(self.engine.execution_options(**{IMMEDIATE: True}), expire_on_commit=False)
        self.sqlite = self.url.startswith("sqlite")

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A read transaction (deferred on SQLite: it does not block writers)."""
        with self.sessions() as s, s.begin():
            yield s

    @contextmanager
    def write(self) -> Iterator[Session]:
        """A write transaction whose reads stay true until it commits: SQLite's write lock is taken at BEGIN;
        on PostgreSQL the code below locks the rows it decides on."""
        with self.writers() as s, s.begin():
            yield s

    @property
    def lease_time(self) -> dt.timedelta:
        return dt.timedelta(minutes=self.study.lease_minutes)

    # -------------------------------------------------------------- schema, secrets, manifest

    def init(self, update_manifest: bool = False) -> None:
        """Migrate to head, create the secrets, and load the study's stimuli. A manifest edited since the last
        ``init`` is applied only where nothing was collected on what changed, and only with ``update_manifest``;
        otherwise it is a :class:`StudyError` that names the differences."""
        upgrade(self.url)
        try:
            with self.write() as s:
                for key in ("session_secret", "pseudonym_key"):
                    if s.get(Meta, key) is None:
                        s.add(Meta(key=key, value=secrets.token_hex(32)))
                if self.study.rating:
                    self._sync_items(s, update_manifest)
                else:
                    self._sync_stimuli(s, update_manifest)
        except OperationalError as exc:
            raise InputError(unreachable(self.url, exc)) from None

    def _sync_stimuli(self, s: Session, update_manifest: bool) -> None:
        rows = {r.key: r for r in s.scalars(select(StimulusRow))}
        want = {st.key: st for st in self.study.stimuli}
        used = set(s.scalars(select(Lease.stimulus_id).distinct()))
        changed = [
            k
            for k, st in want.items()
            if k in rows
            and (rows[k].kind, rows[k].src, rows[k].start, rows[k].end, rows[k].text, rows[k].control)
            != (st.kind, st.src, st.start, st.end, st.text, bool(st.control))
        ]
        removed = [k for k in rows if k not in want]
        if changed or removed:
            stuck = [k for k in changed + removed if rows[k].id in used]
            what = "; ".join(
                f"{label}: {', '.join(keys[:5])}{' …' if len(keys) > 5 else ''} ({len(keys)})"
                for label, keys in (("changed", changed), ("removed", removed))
                if keys
            )
            if stuck:
                raise StudyError(
                    f"{self.study.path}: the manifest differs from the database ({what}), and {len(stuck)} of "
                    f"those stimuli were already shown to annotators ({', '.join(stuck[:5])}): give changed "
                    "stimuli new ids instead"
                )
            if not update_manifest:
                raise StudyError(
                    f"{self.study.path}: the manifest differs from the database ({what}); "
                    "run `ngrameval collect init --update` to apply it (nothing was collected on them yet)"
                )
            for k in changed:
                st, row = want[k], rows[k]
                row.kind, row.src, row.start, row.end, row.text = st.kind, st.src, st.start, st.end, st.text
                row.control = bool(st.control)
            for k in removed:
                s.delete(rows[k])
        for k, st in want.items():
            if k not in rows:
                s.add(
                    StimulusRow(
                        key=k,
                        kind=st.kind,
                        src=st.src,
                        start=st.start,
                        end=st.end,
                        text=st.text,
                        control=bool(st.control),
                    )
                )

    def _sync_items(self, s: Session, update_manifest: bool) -> None:
        digest = hashlib.sha256(repr(self.study.items).encode()).hexdigest()
        row = s.get(Meta, "items_digest")
        if row is None:
            s.add(Meta(key="items_digest", value=digest))
            return
        if row.value == digest:
            return
        if s.scalar(select(func.count()).select_from(TrialRow)):
            raise StudyError(
                f"{self.study.path}: the rating manifest changed after judges were given trials; the trials "
                "already given keep the old outputs: start a new study (a new database) for the new items"
            )
        if not update_manifest:
            raise StudyError(
                f"{self.study.path}: the rating manifest changed since `init`; run `ngrameval collect init "
                "--update` to use it (no judge has trials yet)"
            )
        row.value = digest

    def secret(self, key: str) -> str:
        with self.session() as s:
            row = s.get(Meta, key)
            if row is None:
                raise RuntimeError("the study database is not initialised: run `ngrameval collect init STUDY.toml`")
            return row.value

    @cached_property
    def _pseudonym_key(self) -> bytes:
        return self.secret("pseudonym_key").encode()  # read once: the admin page names every annotator

    def pseudonym(self, annotator: Annotator) -> str:
        """A keyed HMAC-SHA256 of the platform id, stable within a study and meaningless outside it."""
        mac = hmac.new(self._pseudonym_key, f"{annotator.platform}:{annotator.external_id}".encode(), hashlib.sha256)
        return "W" + mac.hexdigest()[:16]

    # -------------------------------------------------------------- admins and annotators

    def add_admin(self, username: str, password: str) -> None:
        from argon2 import PasswordHasher

        h = PasswordHasher().hash(password)
        with self.write() as s:
            row = s.scalar(select(Admin).where(Admin.username == username))
            if row is None:
                s.add(Admin(username=username, password_hash=h))
            else:
                row.password_hash = h

    def check_admin(self, username: str, password: str) -> bool:
        from argon2 import PasswordHasher
        from argon2.exceptions import VerificationError

        with self.session() as s:
            row = s.scalar(select(Admin).where(Admin.username == username))
        if row is None:
            PasswordHasher().hash(password)  # same work either way: no user-name oracle by timing
            return False
        try:
            return PasswordHasher().verify(row.password_hash, password)
        except VerificationError:
            return False

    def add_invites(self, n: int, group: str = "") -> list[str]:
        tokens = [secrets.token_urlsafe(16) for _ in range(n)]
        with self.write() as s:
            s.add_all(Invite(token=t, group=group) for t in tokens)
        return tokens

    def annotator_for(self, platform: str, external_id: str, info: str = "", group: str = "") -> int:
        """The annotator's id, creating it on first arrival (concurrent arrivals of one id give one row)."""
        for _ in range(RETRIES):
            with self.session() as s:
                row = s.scalar(
                    select(Annotator).where(Annotator.platform == platform, Annotator.external_id == external_id)
                )
                if row is not None:
                    return row.id
            try:
                with self.write() as s:
                    row = Annotator(
                        platform=platform, external_id=external_id, session_info=info, group=group, created=self.clock()
                    )
                    s.add(row)
                    s.flush()
                    return row.id
            except IntegrityError:
                continue
        raise RuntimeError("could not create the annotator")

    def assignment_for(self, aid: int, platform: str, external: str) -> Assignment | None:
        """The assignment ``external`` of ``platform``, bound to annotator ``aid`` on first use; None when it is
        bound to another annotator (a forged or shared link)."""
        for _ in range(RETRIES):
            with self.session() as s:
                row = s.scalar(
                    select(Assignment).where(Assignment.platform == platform, Assignment.external == external)
                )
            if row is not None:
                return row if row.annotator_id == aid else None
            try:
                with self.write() as s:
                    row = Assignment(
                        annotator_id=aid,
                        platform=platform,
                        external=external,
                        code=_code(self.study.completion_code),
                        created=self.clock(),
                    )
                    s.add(row)
                    s.flush()
                    return row
            except IntegrityError:
                continue
        raise RuntimeError("could not create the assignment")

    def assignment(self, asg: int) -> Assignment | None:
        with self.session() as s:
            return s.get(Assignment, asg)

    def invite(self, token: str) -> Invite | None:
        with self.session() as s:
            return s.get(Invite, token)

    def use_invite(self, token: str) -> int | None:
        """The annotator of invitation ``token`` (created on first use); None for an unknown token."""
        inv = self.invite(token)
        if inv is None:
            return None
        aid = self.annotator_for("invite", token, group=inv.group)
        with self.write() as s:
            row = s.get(Invite, token)
            if row is not None and row.used_by is None:
                row.used_by = aid
        return aid

    def annotator(self, aid: int) -> Annotator | None:
        with self.session() as s:
            return s.get(Annotator, aid)

    def consent(self, aid: int) -> None:
        with self.write() as s:
            row = s.get(Annotator, aid)
            if row is not None and row.consented is None:
                row.consented = self.clock()

    def set_status(self, aid: int, status: str) -> None:
        if status not in ("new", "qualified", "rejected"):
            raise ValueError(f"status must be new, qualified or rejected, got {status!r}")
        with self.write() as s:
            row = s.get(Annotator, aid)
            if row is not None:
                row.status = status

    def set_group(self, aid: int, group: str) -> None:
        """Set the judge group; a judge who already holds a Latin-square row keeps the row of their old group."""
        with self.write() as s:
            row = s.get(Annotator, aid)
            if row is not None:
                row.group = group[:32]

    def delete_annotator(self, aid: int) -> None:
        """Delete one annotator and everything they submitted (their descriptions leave their stimuli's
        counts; their Latin-square row becomes free)."""
        with self.write() as s:
            for sid, n in s.execute(
                select(DescriptionRow.stimulus_id, func.count())
                .where(DescriptionRow.annotator_id == aid, DescriptionRow.skipped.is_(False))
                .group_by(DescriptionRow.stimulus_id)
            ).all():
                s.execute(update(StimulusRow).where(StimulusRow.id == sid).values(done=StimulusRow.done - n))
            trials = select(TrialRow.id).where(TrialRow.annotator_id == aid)
            s.execute(delete(RatingRow).where(RatingRow.trial_id.in_(trials)))
            for model in (DescriptionRow, TrialRow, Lease, Assignment):
                s.execute(delete(model).where(model.annotator_id == aid))
            s.execute(update(Invite).where(Invite.used_by == aid).values(used_by=None))
            s.execute(delete(Annotator).where(Annotator.id == aid))

    def annotators(self) -> list[tuple[Annotator, int]]:
        """Every annotator with their number of submissions (descriptions or answered trials), most first."""
        with self.session() as s:
            rows = list(s.scalars(select(Annotator)))
            d = dict(
                s.execute(
                    select(DescriptionRow.annotator_id, func.count())
                    .where(DescriptionRow.skipped.is_(False))
                    .group_by(DescriptionRow.annotator_id)
                ).all()
            )
            t = dict(
                s.execute(
                    select(TrialRow.annotator_id, func.count())
                    .where(TrialRow.token.is_not(None))
                    .group_by(TrialRow.annotator_id)
                ).all()
            )
        out = [(a, int(d.get(a.id, 0)) + int(t.get(a.id, 0))) for a in rows]
        return sorted(out, key=lambda x: (-x[1], x[0].id))

    # -------------------------------------------------------------- description tasks: leases

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

    # -------------------------------------------------------------- rating tasks

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
        their Latin-square row (numbered within their group) with its control trials."""
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
        if a.judge_index is None:
            if not self.sqlite:  # one row assignment per group at a time (SQLite's write lock does this)
                key = int.from_bytes(hashlib.sha256(f"square:{a.group}".encode()).digest()[:8], "big", signed=True)
                s.execute(select(func.pg_advisory_xact_lock(key)))
            a.judge_index, a.square = self._row(s, a, self.clock()), a.group
            s.flush()  # the unique (square, row) key is checked here
        judge = a.judge_index
        assert judge is not None
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

    def next_trial(self, aid: int) -> TrialRow | None:
        """The judge's next unanswered trial, leased to the page that shows it (its form token and the server
        time it was first shown are set once)."""
        with self.write() as s:
            t = s.scalar(
                select(TrialRow)
                .where(TrialRow.annotator_id == aid, TrialRow.token.is_(None))
                .order_by(TrialRow.position)
                .limit(1)
            )
            if t is not None and t.lease is None:
                t.lease, t.shown = secrets.token_urlsafe(24), self.clock()
            return t

    def submit_rating(self, aid: int, lease: str, scores: dict[str, float], assignment: int | None = None) -> Submitted:
        """Answer the trial leased by form token ``lease`` of this judge, once; ``foreign`` for a trial that is
        not theirs or was never shown (nobody answers another judge's trial). Time from the server's clock."""
        at = self.clock()
        try:
            with self.write() as s:
                t = s.scalar(select(TrialRow).where(TrialRow.lease == lease))
                if t is None or t.annotator_id != aid:
                    return Submitted("foreign")
                if t.token is not None:
                    return Submitted("repeat")
                seconds = (at - t.shown).total_seconds() if t.shown else 0.0
                t.token, t.seconds, t.answered, t.assignment_id = lease, seconds, at, assignment
                s.add_all(RatingRow(trial_id=t.id, criterion=c, score=v) for c, v in scores.items())
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

    # -------------------------------------------------------------- payment

    def assignments(self) -> list[tuple[Assignment, Annotator, int]]:
        """Every assignment with its annotator and number of real answers, in creation order."""
        with self.session() as s:
            d = dict(
                s.execute(
                    select(DescriptionRow.assignment_id, func.count())
                    .where(DescriptionRow.skipped.is_(False), DescriptionRow.assignment_id.is_not(None))
                    .group_by(DescriptionRow.assignment_id)
                ).all()
            )
            t = dict(
                s.execute(
                    select(TrialRow.assignment_id, func.count())
                    .where(TrialRow.assignment_id.is_not(None))
                    .group_by(TrialRow.assignment_id)
                ).all()
            )
            rows = s.execute(
                select(Assignment, Annotator)
                .join(Annotator, Annotator.id == Assignment.annotator_id)
                .order_by(Assignment.id)
            ).all()
        return [(g, a, int(d.get(g.id, 0)) + int(t.get(g.id, 0))) for g, a in rows]

    # -------------------------------------------------------------- totals and progress

    def counts(self) -> dict[str, int]:
        """Totals for the status page."""
        at = self.clock()
        with self.session() as s:
            return {
                "annotators": int(s.scalar(select(func.count()).select_from(Annotator)) or 0),
                "descriptions": int(s.scalar(select(func.count()).where(DescriptionRow.skipped.is_(False))) or 0),
                "skips": int(s.scalar(select(func.count()).where(DescriptionRow.skipped.is_(True))) or 0),
                "leased": int(s.scalar(select(func.count()).where(Lease.closed.is_(None), Lease.expires > at)) or 0),
                "trials_answered": int(s.scalar(select(func.count()).where(TrialRow.token.is_not(None))) or 0),
                "trials": int(s.scalar(select(func.count()).select_from(TrialRow)) or 0),
                "stimuli": int(s.scalar(select(func.count()).where(StimulusRow.control.is_(False))) or 0),
            }

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

    def squares(self) -> list[tuple[str, int, int, int]]:
        """Per judge group: (group, judges holding a row, rows fully answered, complete squares). A square is
        ``k`` consecutive rows ``q*k .. q*k+k-1`` all answered, with ``k`` the number of Williams rows."""
        k = len(design.williams_rows(max(1, len(self.study.systems))))
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
