"""The study's storage: SQLAlchemy 2.0 models and the repository functions the app calls. SQLite (a file, the
default) or PostgreSQL by URL; the schema is created and upgraded by the Alembic migrations in
``collect/migrations`` (:func:`upgrade`), so a study survives an upgrade of ngrameval. Every query is built with
SQLAlchemy's expression language (bound parameters), never from strings."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path

import numpy as np
from sqlalchemy import (
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
    create_engine,
    event,
    func,
    select,
)
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, sessionmaker

from ngrameval.collect import design
from ngrameval.collect.study import Study
from ngrameval.errors import InputError


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


class Base(DeclarativeBase):
    pass


class Meta(Base):
    """Study-wide secrets and settings (session key, pseudonymisation key)."""

    __tablename__ = "meta"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class Admin(Base):
    __tablename__ = "admin"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    username: Mapped[str] = mapped_column(String(64), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))


class Annotator(Base):
    """One annotator; ``platform`` is mturk, prolific or invite; ``external_id`` the platform's worker id."""

    __tablename__ = "annotator"
    __table_args__ = (UniqueConstraint("platform", "external_id", name="uq_annotator_platform_id"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    platform: Mapped[str] = mapped_column(String(16))
    external_id: Mapped[str] = mapped_column(String(128))
    session_info: Mapped[str] = mapped_column(Text, default="")  # assignmentId/hitId, STUDY_ID/SESSION_ID
    status: Mapped[str] = mapped_column(String(16), default="new")  # new | qualified | rejected
    group: Mapped[str] = mapped_column(String(32), default="")  # judge group: expert, non-expert, ...
    judge_index: Mapped[int | None] = mapped_column(Integer, nullable=True)  # row of the Latin square
    created: Mapped[dt.datetime] = mapped_column(DateTime, default=_now)


class Invite(Base):
    __tablename__ = "invite"
    token: Mapped[str] = mapped_column(String(64), primary_key=True)
    group: Mapped[str] = mapped_column(String(32), default="")
    used_by: Mapped[int | None] = mapped_column(ForeignKey("annotator.id", ondelete="SET NULL"), nullable=True)


class StimulusRow(Base):
    __tablename__ = "stimulus"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(String(255), unique=True)
    kind: Mapped[str] = mapped_column(String(8))
    src: Mapped[str] = mapped_column(Text, default="")
    start: Mapped[int | None] = mapped_column(Integer, nullable=True)
    end: Mapped[int | None] = mapped_column(Integer, nullable=True)
    text: Mapped[str] = mapped_column(Text, default="")


class DescriptionRow(Base):
    """A description (or a skip: ``skipped``) of one stimulus by one annotator; ``token`` is the form's
    one-time submission token, so a repeated POST is stored once."""

    __tablename__ = "description"
    __table_args__ = (UniqueConstraint("annotator_id", "stimulus_id", name="uq_description_once"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    annotator_id: Mapped[int] = mapped_column(ForeignKey("annotator.id", ondelete="CASCADE"), index=True)
    stimulus_id: Mapped[int] = mapped_column(ForeignKey("stimulus.id"), index=True)
    token: Mapped[str] = mapped_column(String(64), unique=True)
    tier: Mapped[int] = mapped_column(Integer, default=1)
    skipped: Mapped[bool] = mapped_column(Boolean, default=False)
    text: Mapped[str] = mapped_column(Text, default="")
    language: Mapped[str] = mapped_column(String(64), default="")
    comment: Mapped[str] = mapped_column(Text, default="")
    seconds: Mapped[float] = mapped_column(Float, default=0.0)
    created: Mapped[dt.datetime] = mapped_column(DateTime, default=_now)


class TrialRow(Base):
    """One rating trial of one judge at ``position`` (see :class:`ngrameval.collect.design.Trial`)."""

    __tablename__ = "trial"
    __table_args__ = (UniqueConstraint("annotator_id", "position", name="uq_trial_position"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    annotator_id: Mapped[int] = mapped_column(ForeignKey("annotator.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    item: Mapped[str] = mapped_column(String(255))
    system: Mapped[str] = mapped_column(String(255))
    kind: Mapped[str] = mapped_column(String(8), default="normal")
    of_position: Mapped[int | None] = mapped_column(Integer, nullable=True)
    output: Mapped[str] = mapped_column(Text)
    source: Mapped[str] = mapped_column(Text, default="")
    expected: Mapped[float | None] = mapped_column(Float, nullable=True)
    token: Mapped[str | None] = mapped_column(String(64), unique=True, nullable=True)  # set when answered
    tier: Mapped[int] = mapped_column(Integer, default=1)
    seconds: Mapped[float] = mapped_column(Float, default=0.0)
    answered: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)


class RatingRow(Base):
    __tablename__ = "rating"
    __table_args__ = (UniqueConstraint("trial_id", "criterion", name="uq_rating_once"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    trial_id: Mapped[int] = mapped_column(ForeignKey("trial.id", ondelete="CASCADE"), index=True)
    criterion: Mapped[str] = mapped_column(String(64))
    score: Mapped[float] = mapped_column(Float)


# ---------------------------------------------------------------- engine and schema


def engine_for(url: str) -> Engine:
    """An engine; SQLite gets WAL, foreign keys and a busy timeout so concurrent writers wait, not fail."""
    if url.startswith("sqlite"):
        eng = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})

        @event.listens_for(eng, "connect")
        def _pragmas(conn, _record):  # type: ignore[no-untyped-def]
            cur = conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=FULL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.close()

        return eng
    return create_engine(url, pool_size=10, max_overflow=20, pool_pre_ping=True)


MIGRATIONS = Path(__file__).with_name("migrations")


def upgrade(url: str) -> None:
    """Create or upgrade the schema to the newest migration (Alembic ``upgrade head``) of :data:`MIGRATIONS`;
    a database stamped by a newer ngrameval (a revision this one does not know) is an :class:`InputError`."""
    from alembic import command
    from alembic.config import Config
    from alembic.util import CommandError

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    try:
        command.upgrade(cfg, "head")
    except CommandError as exc:
        raise InputError(
            f"cannot upgrade the study database to this ngrameval's schema ({exc}); a database written by a "
            "newer ngrameval needs that version (pip install -U 'ngrameval[collect]')"
        ) from None


class Store:
    """Repository functions over one study database."""

    def __init__(self, study: Study, url: str | None = None) -> None:
        self.study = study
        self.url = url or study.database_url()
        self.engine = engine_for(self.url)
        self.sessions = sessionmaker(self.engine, expire_on_commit=False)

    @contextmanager
    def session(self) -> Iterator[Session]:
        with self.sessions() as s, s.begin():
            yield s

    def init(self) -> None:
        """Migrate to head, create the secrets, and load (add) the study's stimuli."""
        upgrade(self.url)
        with self.session() as s:
            for key in ("session_secret", "pseudonym_key"):
                if s.get(Meta, key) is None:
                    s.add(Meta(key=key, value=secrets.token_hex(32)))
            have = set(s.scalars(select(StimulusRow.key)))
            for st in self.study.stimuli:
                if st.key not in have:
                    s.add(StimulusRow(key=st.key, kind=st.kind, src=st.src, start=st.start, end=st.end, text=st.text))

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

        with self.session() as s:
            row = s.scalar(select(Admin).where(Admin.username == username))
            h = PasswordHasher().hash(password)
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
        with self.session() as s:
            s.add_all(Invite(token=t, group=group) for t in tokens)
        return tokens

    def annotator_for(self, platform: str, external_id: str, info: str = "", group: str = "") -> int:
        """The annotator's id, creating it on first arrival (concurrent arrivals of one id give one row)."""
        for _ in range(2):
            with self.session() as s:
                row = s.scalar(
                    select(Annotator).where(Annotator.platform == platform, Annotator.external_id == external_id)
                )
                if row is not None:
                    return row.id
            try:
                with self.session() as s:
                    row = Annotator(platform=platform, external_id=external_id, session_info=info, group=group)
                    s.add(row)
                    s.flush()
                    return row.id
            except IntegrityError:
                continue
        raise RuntimeError("could not create the annotator")

    def use_invite(self, token: str) -> int | None:
        with self.session() as s:
            inv = s.get(Invite, token)
            if inv is None:
                return None
            group = inv.group
        aid = self.annotator_for("invite", token, group=group)
        with self.session() as s:
            inv = s.get(Invite, token)
            if inv is not None:
                inv.used_by = aid
        return aid

    def annotator(self, aid: int) -> Annotator | None:
        with self.session() as s:
            return s.get(Annotator, aid)

    def set_status(self, aid: int, status: str) -> None:
        if status not in ("new", "qualified", "rejected"):
            raise ValueError(f"status must be new, qualified or rejected, got {status!r}")
        with self.session() as s:
            row = s.get(Annotator, aid)
            if row is not None:
                row.status = status

    def set_group(self, aid: int, group: str) -> None:
        with self.session() as s:
            row = s.get(Annotator, aid)
            if row is not None:
                row.group = group[:32]

    def delete_annotator(self, aid: int) -> None:
        """Delete one annotator and everything they submitted."""
        with self.session() as s:
            for model in (DescriptionRow, TrialRow):
                for row in s.scalars(select(model).where(model.annotator_id == aid)):
                    if isinstance(row, TrialRow):
                        for r in s.scalars(select(RatingRow).where(RatingRow.trial_id == row.id)):
                            s.delete(r)
                    s.delete(row)
            for inv in s.scalars(select(Invite).where(Invite.used_by == aid)):
                inv.used_by = None
            person = s.get(Annotator, aid)
            if person is not None:
                s.delete(person)

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

    # -------------------------------------------------------------- description tasks

    def next_stimulus(self, aid: int) -> StimulusRow | None:
        """The stimulus with the fewest descriptions below the target that this annotator has not seen
        (described or skipped); None when there is none."""
        with self.session() as s:
            seen = select(DescriptionRow.stimulus_id).where(DescriptionRow.annotator_id == aid)
            counts = (
                select(DescriptionRow.stimulus_id, func.count().label("n"))
                .where(DescriptionRow.skipped.is_(False))
                .group_by(DescriptionRow.stimulus_id)
                .subquery()
            )
            n = func.coalesce(counts.c.n, 0)
            q = (
                select(StimulusRow)
                .outerjoin(counts, counts.c.stimulus_id == StimulusRow.id)
                .where(StimulusRow.id.not_in(seen), n < self.study.target)
                .order_by(n, StimulusRow.id)
                .limit(1)
            )
            return s.scalar(q)

    def stimulus(self, sid: int) -> StimulusRow | None:
        with self.session() as s:
            return s.get(StimulusRow, sid)

    def submit_description(
        self,
        aid: int,
        sid: int,
        token: str,
        text: str,
        language: str,
        comment: str,
        seconds: float,
        skipped: bool = False,
    ) -> bool:
        """Store one description (or skip) once; False when this token or this (annotator, stimulus) was
        already stored (a repeated POST), which is not an error."""
        with self.session() as s:
            a = s.get(Annotator, aid)
            if a is None:
                raise ValueError("no such annotator")
            tier = 2 if a.status == "qualified" else 1
        try:
            with self.session() as s:
                s.add(
                    DescriptionRow(
                        annotator_id=aid,
                        stimulus_id=sid,
                        token=token,
                        tier=tier,
                        skipped=skipped,
                        text="" if skipped else text,
                        language=language,
                        comment=comment,
                        seconds=seconds,
                    )
                )
            return True
        except IntegrityError:
            return False

    def descriptions(self, aid: int | None = None) -> list[tuple[DescriptionRow, StimulusRow, Annotator]]:
        with self.session() as s:
            q = (
                select(DescriptionRow, StimulusRow, Annotator)
                .join(StimulusRow, StimulusRow.id == DescriptionRow.stimulus_id)
                .join(Annotator, Annotator.id == DescriptionRow.annotator_id)
                .where(DescriptionRow.skipped.is_(False))
                .order_by(DescriptionRow.id)
            )
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

    # -------------------------------------------------------------- rating tasks

    def assign_trials(self, aid: int) -> None:
        """Give a judge their Latin-square row and control trials (once; judges are numbered in arrival order)."""
        st = self.study
        with self.session() as s:
            if s.scalar(select(func.count()).where(TrialRow.annotator_id == aid)):
                return
        with self.session() as s:
            a = s.get(Annotator, aid, with_for_update=not self.url.startswith("sqlite"))
            if a is None:
                raise ValueError("no such annotator")
            if a.judge_index is None:
                top = s.scalar(select(func.max(Annotator.judge_index)))
                a.judge_index = 0 if top is None else top + 1
            judge = a.judge_index
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
            bad = st.bad_references if st.kind == "da" else 0
            full = design.with_controls(trials, outputs, st.repeats, bad, rng, knowns)
            positions = {id(t): k for k, t in enumerate(full)}
            for k, t in enumerate(full):
                it = by_key[t.item, t.system]
                of = None if t.of is None else positions[id(trials[t.of])]
                s.add(
                    TrialRow(
                        annotator_id=aid,
                        position=k,
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

    def next_trial(self, aid: int) -> TrialRow | None:
        with self.session() as s:
            return s.scalar(
                select(TrialRow)
                .where(TrialRow.annotator_id == aid, TrialRow.token.is_(None))
                .order_by(TrialRow.position)
                .limit(1)
            )

    def submit_rating(self, aid: int, trial_id: int, token: str, scores: dict[str, float], seconds: float) -> bool:
        """Store the scores of one trial of this annotator once; False for a repeated POST or a trial that is
        not theirs (nobody can answer another annotator's trial)."""
        try:
            with self.session() as s:
                t = s.get(TrialRow, trial_id)
                if t is None or t.annotator_id != aid or t.token is not None:
                    return False
                t.token = token
                t.seconds = seconds
                t.answered = _now()
                s.add_all(RatingRow(trial_id=trial_id, criterion=c, score=v) for c, v in scores.items())
            return True
        except IntegrityError:
            return False

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

    def counts(self) -> dict[str, int]:
        """Totals for the status page."""
        with self.session() as s:
            return {
                "annotators": int(s.scalar(select(func.count()).select_from(Annotator)) or 0),
                "descriptions": int(s.scalar(select(func.count()).where(DescriptionRow.skipped.is_(False))) or 0),
                "skips": int(s.scalar(select(func.count()).where(DescriptionRow.skipped.is_(True))) or 0),
                "trials_answered": int(s.scalar(select(func.count()).where(TrialRow.token.is_not(None))) or 0),
                "trials": int(s.scalar(select(func.count()).select_from(TrialRow)) or 0),
                "stimuli": int(s.scalar(select(func.count()).select_from(StimulusRow)) or 0),
            }
