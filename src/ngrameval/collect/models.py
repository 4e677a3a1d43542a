"""The study database: SQLAlchemy 2.0 models, the engine (SQLite with WAL and write transactions that take the
write lock at ``BEGIN``; PostgreSQL by URL) and the Alembic upgrade. Every query elsewhere is built with
SQLAlchemy's expression language (bound parameters), never from strings."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    create_engine,
    event,
    false,
)
from sqlalchemy.engine import Engine
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from ngrameval.errors import InputError


def now() -> dt.datetime:
    """The server's clock (UTC, naive: both databases store it as is). Every time the study records is taken
    here, never from the browser."""
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


class Base(DeclarativeBase):
    pass


class Meta(Base):
    """Study-wide secrets and settings (session key, pseudonymisation key, the manifest's fingerprint)."""

    __tablename__ = "meta"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class Admin(Base):
    __tablename__ = "admin"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    username: Mapped[str] = mapped_column(String(64), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))


class Annotator(Base):
    """One annotator; ``platform`` is mturk, prolific or invite; ``external_id`` the platform's worker id.
    ``square`` is the judge group whose Latin square holds row ``judge_index`` (rows are numbered per group)."""

    __tablename__ = "annotator"
    __table_args__ = (
        UniqueConstraint("platform", "external_id", name="uq_annotator_platform_id"),
        UniqueConstraint("square", "judge_index", name="uq_annotator_square_row"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    platform: Mapped[str] = mapped_column(String(16))
    external_id: Mapped[str] = mapped_column(String(128))
    session_info: Mapped[str] = mapped_column(Text, default="")  # assignmentId/hitId, STUDY_ID/SESSION_ID
    status: Mapped[str] = mapped_column(String(16), default="new")  # new | qualified | rejected
    group: Mapped[str] = mapped_column(String(32), default="")  # judge group: expert, non-expert, ...
    judge_index: Mapped[int | None] = mapped_column(Integer, nullable=True)  # row of the group's Latin square
    square: Mapped[str | None] = mapped_column(String(32), nullable=True)  # the group that row belongs to
    consented: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    trained: Mapped[str | None] = mapped_column(String(8), nullable=True)  # the training phase: passed | failed
    created: Mapped[dt.datetime] = mapped_column(DateTime, default=now)


class Assignment(Base):
    """One platform assignment (an MTurk assignment, a Prolific session, an invitation) bound to the worker who
    first opened it, with its own completion ``code``."""

    __tablename__ = "assignment"
    __table_args__ = (UniqueConstraint("platform", "external", name="uq_assignment_platform_external"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    annotator_id: Mapped[int] = mapped_column(ForeignKey("annotator.id", ondelete="CASCADE"), index=True)
    platform: Mapped[str] = mapped_column(String(16))
    external: Mapped[str] = mapped_column(String(128))
    code: Mapped[str] = mapped_column(String(64), unique=True)
    created: Mapped[dt.datetime] = mapped_column(DateTime, default=now)


class Invite(Base):
    __tablename__ = "invite"
    token: Mapped[str] = mapped_column(String(64), primary_key=True)
    group: Mapped[str] = mapped_column(String(32), default="")
    used_by: Mapped[int | None] = mapped_column(ForeignKey("annotator.id", ondelete="SET NULL"), nullable=True)
    claim: Mapped[str | None] = mapped_column(String(64), nullable=True)  # the secret of the browser that opened it


class StimulusRow(Base):
    """A stimulus; ``done`` counts its (non-skipped) descriptions, kept in step under the row's lock; a
    ``control`` (an attention check with gold answers in the manifest) is shown to every annotator, outside the
    target."""

    __tablename__ = "stimulus"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(String(255), unique=True)
    kind: Mapped[str] = mapped_column(String(8))
    src: Mapped[str] = mapped_column(Text, default="")
    start: Mapped[int | None] = mapped_column(Integer, nullable=True)
    end: Mapped[int | None] = mapped_column(Integer, nullable=True)
    text: Mapped[str] = mapped_column(Text, default="")
    done: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    control: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())


class Lease(Base):
    """A stimulus shown to one annotator: it is reserved for them until ``expires``; ``token`` is the one-time
    token of the form that answers it; ``closed`` is set when it is answered, skipped, or given up (expired)."""

    __tablename__ = "lease"
    __table_args__ = (
        UniqueConstraint("annotator_id", "stimulus_id", name="uq_lease_once"),
        Index("ix_lease_open", "closed", "expires"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    annotator_id: Mapped[int] = mapped_column(ForeignKey("annotator.id", ondelete="CASCADE"), index=True)
    stimulus_id: Mapped[int] = mapped_column(ForeignKey("stimulus.id"), index=True)
    token: Mapped[str] = mapped_column(String(64), unique=True)
    issued: Mapped[dt.datetime] = mapped_column(DateTime, default=now)
    expires: Mapped[dt.datetime] = mapped_column(DateTime)
    closed: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)


class DescriptionRow(Base):
    """A description (or a skip: ``skipped``) of one stimulus by one annotator; ``token`` is the token of the
    lease it answers, so a repeated POST is stored once; ``seconds`` runs from the lease's issue to the answer
    on the server's clock."""

    __tablename__ = "description"
    __table_args__ = (UniqueConstraint("annotator_id", "stimulus_id", name="uq_description_once"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    annotator_id: Mapped[int] = mapped_column(ForeignKey("annotator.id", ondelete="CASCADE"), index=True)
    stimulus_id: Mapped[int] = mapped_column(ForeignKey("stimulus.id"), index=True)
    assignment_id: Mapped[int | None] = mapped_column(
        ForeignKey("assignment.id", ondelete="SET NULL"), nullable=True, index=True
    )
    token: Mapped[str] = mapped_column(String(64), unique=True)
    tier: Mapped[int] = mapped_column(Integer, default=1)
    skipped: Mapped[bool] = mapped_column(Boolean, default=False)
    text: Mapped[str] = mapped_column(Text, default="")
    language: Mapped[str] = mapped_column(String(64), default="")
    comment: Mapped[str] = mapped_column(Text, default="")
    seconds: Mapped[float] = mapped_column(Float, default=0.0)
    created: Mapped[dt.datetime] = mapped_column(DateTime, default=now)


class TrialRow(Base):
    """One rating trial of one judge at ``position`` (see :class:`ngrameval.collect.design.Trial`; ``kind``
    ``training`` for the known-answer items of the qualification phase, which come first). ``lease``
    is the token of the form that shows it (set, with ``shown``, when it is first shown); ``token`` is set
    when it is answered."""

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
    lease: Mapped[str | None] = mapped_column(String(64), unique=True, nullable=True)
    shown: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    token: Mapped[str | None] = mapped_column(String(64), unique=True, nullable=True)  # set when answered
    assignment_id: Mapped[int | None] = mapped_column(
        ForeignKey("assignment.id", ondelete="SET NULL"), nullable=True, index=True
    )
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


class PairRow(Base):
    """The second side of a side-by-side trial (kind ``pairwise``): the trial's ``system``/``output`` are system A,
    these system B; ``left`` says which (``a``/``b``) the page shows on the left; ``winner`` (``a``, ``b``,
    ``tie``) and the optional ``reason`` are set with the trial's ``token`` when it is answered."""

    __tablename__ = "pair"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    trial_id: Mapped[int] = mapped_column(ForeignKey("trial.id", ondelete="CASCADE"), unique=True)
    system_b: Mapped[str] = mapped_column(String(255))
    output_b: Mapped[str] = mapped_column(Text)
    left: Mapped[str] = mapped_column(String(1))
    winner: Mapped[str | None] = mapped_column(String(4), nullable=True)
    reason: Mapped[str] = mapped_column(Text, default="")


class SpanRow(Base):
    """One error span of an ESA / MQM trial (:mod:`ngrameval.collect.spans`): ``start``/``end`` character offsets
    into the trial's output (Python ``str`` indices, end exclusive), both None for an omission (``[missing]``);
    ``category`` is empty in ESA; ``position`` the span's place in the annotator's list."""

    __tablename__ = "span"
    __table_args__ = (UniqueConstraint("trial_id", "position", name="uq_span_position"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    trial_id: Mapped[int] = mapped_column(ForeignKey("trial.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    start: Mapped[int | None] = mapped_column(Integer, nullable=True)
    end: Mapped[int | None] = mapped_column(Integer, nullable=True)
    severity: Mapped[str] = mapped_column(String(64))
    category: Mapped[str] = mapped_column(String(160), default="")


# ---------------------------------------------------------------- engine and schema

#: the execution option that makes a SQLite transaction ``BEGIN IMMEDIATE`` (take the write lock at once), so
#: that what a write transaction reads cannot change before it commits (PostgreSQL locks rows instead)
IMMEDIATE = "ngrameval_immediate"


def engine_for(url: str) -> Engine:
    """An engine; SQLite gets WAL, foreign keys, a busy timeout so concurrent writers wait rather than fail,
    and transactions begun by this module (deferred, or ``BEGIN IMMEDIATE`` under :data:`IMMEDIATE`)."""
    if url.startswith("sqlite"):
        eng = create_engine(url, connect_args={"timeout": 60, "check_same_thread": False})

        @event.listens_for(eng, "connect")
        def _pragmas(conn: Any, _record: Any) -> None:
            conn.isolation_level = None  # the driver's own BEGIN is off: _begin below says which kind
            cur = conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=FULL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.close()

        @event.listens_for(eng, "begin")
        def _begin(conn: Any) -> None:
            conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get(IMMEDIATE) else "BEGIN")

        return eng
    return create_engine(url, pool_size=10, max_overflow=40, pool_pre_ping=True, pool_timeout=60)


MIGRATIONS = Path(__file__).with_name("migrations")


def upgrade(url: str, revision: str = "head") -> None:
    """Create or upgrade the schema to the newest migration (Alembic ``upgrade head``) of :data:`MIGRATIONS`;
    a database stamped by a newer ngrameval (a revision this one does not know) or one that cannot be reached
    is an :class:`InputError` that says what to do."""
    from alembic import command
    from alembic.config import Config
    from alembic.util import CommandError
    from sqlalchemy.exc import OperationalError

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    try:
        command.upgrade(cfg, revision)
    except CommandError as exc:
        raise InputError(
            f"cannot upgrade the study database to this ngrameval's schema ({exc}); a database written by a "
            "newer ngrameval needs that version (pip install -U 'ngrameval[collect]')"
        ) from None
    except OperationalError as exc:
        raise InputError(unreachable(url, exc)) from None


def unreachable(url: str, exc: Exception) -> str:
    """One line saying why the database at ``url`` cannot be used (the password hidden) and what to do."""
    from sqlalchemy.engine import make_url

    u = make_url(url)
    where = u.render_as_string(hide_password=True)
    detail = " ".join(str(getattr(exc, "orig", exc)).split())[:300]
    if u.get_backend_name() == "postgresql" and "does not exist" in detail:
        return (
            f"the study database {where} does not exist: create it first (e.g. `createdb {u.database}` as a "
            f"PostgreSQL user allowed to, or CREATE DATABASE {u.database}) ({detail})"
        )
    return f"cannot open the study database {where} ({detail})"
