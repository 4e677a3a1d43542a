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

import hashlib
import secrets
from collections import Counter
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session

from ngrameval.collect.leases import Leases
from ngrameval.collect.models import (
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
    unreachable,
    upgrade,
)
from ngrameval.collect.pairs import Pairs
from ngrameval.collect.repo import RETRIES, Submitted, completion_code
from ngrameval.collect.study import StudyError
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


def _answers_by(s: Session, by_description: Any, by_trial: Any) -> Counter[int]:
    """Real answers (descriptions that are not skips, answered trials) per value of the given columns (an
    annotator or an assignment id)."""
    out: Counter[int] = Counter()
    for q in (
        select(by_description, func.count())
        .where(DescriptionRow.skipped.is_(False), by_description.is_not(None))
        .group_by(by_description),
        select(by_trial, func.count()).where(TrialRow.token.is_not(None), by_trial.is_not(None)).group_by(by_trial),
    ):
        for key, count in s.execute(q).all():
            out[int(key)] += int(count)
    return out


class Store(Leases, Pairs):  # Pairs: side-by-side tasks on top of the rating tasks (Trials)
    """Repository functions over one study database."""

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
                        code=completion_code(self.study.completion_code),
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

    def claim_invite(self, token: str, claim: str) -> str | None:
        """Claim invitation ``token`` for the browser holding secret ``claim``: the first claim wins, in one
        transaction; the same claim again is accepted; another browser's (or an unknown token) gives None."""
        with self.write() as s:
            row = s.get(Invite, token, with_for_update=not self.sqlite)
            if row is None:
                return None
            if row.claim is None:
                row.claim = claim
            return claim if row.claim == claim else None

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
            n = _answers_by(s, DescriptionRow.annotator_id, TrialRow.annotator_id)
        return sorted(((a, n[a.id]) for a in rows), key=lambda x: (-x[1], x[0].id))

    # -------------------------------------------------------------- payment

    def assignments(self) -> list[tuple[Assignment, Annotator, int]]:
        """Every assignment with its annotator and number of real answers, in creation order."""
        with self.session() as s:
            n = _answers_by(s, DescriptionRow.assignment_id, TrialRow.assignment_id)
            rows = s.execute(
                select(Assignment, Annotator)
                .join(Annotator, Annotator.id == Assignment.annotator_id)
                .order_by(Assignment.id)
            ).all()
        return [(g, a, n[g.id]) for g, a in rows]

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
