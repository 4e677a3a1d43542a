"""The base of the study repository: one study database's engine, read and write transactions (see
:class:`ngrameval.collect.store.Store` for what the write transactions guarantee), its clock and secrets."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property

from sqlalchemy.orm import Session, sessionmaker

from ngrameval.collect.models import (
    IMMEDIATE,
    Annotator,
    Meta,
    engine_for,
    now,
)
from ngrameval.collect.study import Study

#: how many times a write transaction that lost a race (a unique key taken meanwhile) is tried again
RETRIES = 8


@dataclass(frozen=True)
class Submitted:
    """What became of a submission: ``stored``; ``repeat`` (this form was stored before: a double click or a
    retry); ``late`` (its lease had expired and others filled the stimulus meanwhile: not stored);
    ``foreign`` (not an open task of this annotator: not stored)."""

    outcome: str
    seconds: float = 0.0


def completion_code(prefix: str) -> str:
    """A completion code: the study's prefix and 10 random hexadecimal digits (40 bits: not guessable)."""
    return f"{prefix or 'NGE'}-{secrets.token_hex(5).upper()}"


class Repo:
    """One study database: transactions, the server's clock, secrets."""

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
