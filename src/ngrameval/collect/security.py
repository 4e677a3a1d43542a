"""The collect app's defences that are not about one page: the login throttle, password checks off the event
loop, admin sessions that logout really ends, the security headers of every response, and which media files
may be served.

State kept in memory (the throttle) is per process: ``collect serve`` runs one uvicorn worker, so it sees every
request; several workers would each keep their own counts."""

from __future__ import annotations

import asyncio
import hashlib
import math
import mimetypes
import secrets
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ngrameval.collect.models import Meta
from ngrameval.collect.store import Store

MTURK_FRAMES = "https://*.mturk.com"  # MTurk shows an ExternalQuestion HIT in an iframe of its worker site
ADMIN_MAX_AGE = 12 * 3600  # seconds an admin login lasts (annotators' sessions keep the cookie's 14 days)
MEDIA_TYPES = ("video/", "image/", "audio/")


# ---------------------------------------------------------------- login throttle


@dataclass
class _Failures:
    count: int
    last: float


class LoginThrottle:
    """Failed logins counted per key (a client address, a user name) with exponential back-off: the first
    ``free`` attempts of a key go through; after that a key waits ``base * 2**(count - free)`` seconds (at most
    ``cap``) after its last attempt. An attempt is counted *before* its password is checked, so a burst of
    concurrent requests cannot get more than ``free`` password checks; a success clears its keys. A key silent
    for ``forget`` seconds is forgotten; at most ``max_keys`` keys are kept (least recently failed dropped
    first), so a flood of invented user names cannot fill the memory. ``clock`` is a parameter (tests)."""

    def __init__(
        self,
        free: int = 5,
        base: float = 1.0,
        cap: float = 900.0,
        forget: float = 24 * 3600.0,
        max_keys: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.free, self.base, self.cap, self.forget, self.max_keys = free, base, cap, forget, max_keys
        self.clock = clock
        self._keys: OrderedDict[Hashable, _Failures] = OrderedDict()

    def _wait(self, key: Hashable, now: float) -> float:
        f = self._keys.get(key)
        if f is None:
            return 0.0
        if now - f.last >= self.forget:
            del self._keys[key]
            return 0.0
        if f.count < self.free:
            return 0.0
        return max(0.0, f.last + min(self.cap, self.base * 2.0 ** (f.count - self.free)) - now)

    def attempt(self, keys: Sequence[Hashable]) -> int:
        """0 if an attempt under ``keys`` may check its password now (the attempt is counted), else the whole
        seconds to wait (the attempt is refused and not counted, so a flood does not lengthen the wait)."""
        now = self.clock()
        wait = max((self._wait(k, now) for k in keys), default=0.0)
        if wait > 0:
            return max(1, math.ceil(wait))
        for k in keys:
            f = self._keys.pop(k, None) or _Failures(0, now)
            self._keys[k] = _Failures(f.count + 1, now)  # most recent last
        while len(self._keys) > self.max_keys:
            self._keys.popitem(last=False)
        return 0

    def success(self, keys: Sequence[Hashable]) -> None:
        for k in keys:
            self._keys.pop(k, None)


def throttle_keys(request: Request, username: str) -> tuple[tuple[str, str], ...]:
    """The keys a login attempt counts under: the client's address (as uvicorn reports it; behind a reverse
    proxy, uvicorn takes it from X-Forwarded-For when the proxy's address is in --forwarded-allow-ips) and the
    user name."""
    host = request.client.host if request.client else ""
    return (("addr", host), ("user", username.casefold()))


class PasswordChecks:
    """Argon2 verification in the thread pool, at most ``concurrent`` at a time, so a password flood neither
    blocks the event loop nor takes every thread the annotators' requests need."""

    def __init__(self, store: Store, concurrent: int = 2) -> None:
        self.store, self.concurrent = store, concurrent
        self._limits: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    async def __call__(self, username: str, password: str) -> bool:
        loop = asyncio.get_running_loop()
        limit = self._limits.setdefault(loop, asyncio.Semaphore(self.concurrent))
        async with limit:
            return await run_in_threadpool(self.store.check_admin, username, password)


# ---------------------------------------------------------------- admin sessions


def _generation_key(username: str) -> str:
    return "admin_gen:" + hashlib.sha256(username.encode()).hexdigest()[:40]


def session_generation(store: Store, username: str) -> int:
    """The admin's session generation (stored in the ``meta`` table): a session is valid only while it carries
    the current one, so ending the sessions is one increment."""
    with store.session() as s:
        row = s.get(Meta, _generation_key(username))
        return int(row.value) if row is not None else 0


def end_sessions(store: Store, username: str) -> None:
    """End every session of ``username`` (logout, password reset): their cookies no longer open the admin area."""
    with store.session() as s:
        key = _generation_key(username)
        row = s.get(Meta, key, with_for_update=not store.url.startswith("sqlite"))
        if row is None:
            s.add(Meta(key=key, value="1"))
        else:
            row.value = str(int(row.value) + 1)


async def open_admin_session(request: Request, store: Store, username: str) -> None:
    """A fresh session for a logged-in admin (the old session's content, an annotator's included, is dropped)."""
    gen = await run_in_threadpool(session_generation, store, username)
    request.session.clear()
    request.session.update(admin=username, admin_gen=gen, admin_at=int(time.time()))


async def admin_user(request: Request, store: Store) -> str | None:
    """The admin of this session, or None: no login, a login older than :data:`ADMIN_MAX_AGE`, or a session
    ended since (logout, password reset). A stale admin session is cleared."""
    name, gen, at = (request.session.get(k) for k in ("admin", "admin_gen", "admin_at"))
    if not isinstance(name, str) or not isinstance(gen, int) or not isinstance(at, int):
        return None
    fresh = 0 <= time.time() - at < ADMIN_MAX_AGE
    if fresh and gen == await run_in_threadpool(session_generation, store, name):
        return name
    request.session.clear()
    return None


# ---------------------------------------------------------------- media


def media_file(root: Path, src: str, private: Sequence[Path] = ()) -> Path | None:
    """The file a stimulus' ``src`` names, if it may be served: inside ``root`` (after resolving links), no
    part of it hidden (a dotfile or dot-directory), not one of the ``private`` files (the database and its
    journals), of a video, image or audio type; None otherwise."""
    if not src or "\\" in src or "\x00" in src:
        return None
    rel = PurePosixPath(src)
    if rel.is_absolute() or any(p in ("", ".", "..") or p.startswith(".") for p in src.split("/")):
        return None
    base = root.resolve()
    path = (base / rel).resolve()
    if not path.is_relative_to(base) or any(p.startswith(".") for p in path.relative_to(base).parts):
        return None
    if any(path == q.resolve() for q in private) or not path.is_file():
        return None
    kind = mimetypes.guess_type(path.name)[0] or ""
    return path if kind.startswith(MEDIA_TYPES) else None


def database_files(url: str) -> tuple[Path, ...]:
    """The SQLite database file of ``url`` and its journals (nothing for another database)."""
    prefix = "sqlite:///"
    if not url.startswith(prefix) or url == "sqlite:///:memory:":
        return ()
    db = Path(url[len(prefix) :])
    return (db, *(db.with_name(db.name + s) for s in ("-wal", "-shm", "-journal")))


# ---------------------------------------------------------------- headers


def framable(path: str) -> bool:
    """The annotators' pages, which MTurk shows in an iframe; every other page (the admin area) denies framing."""
    return path in ("/", "/start", "/task", "/done") or path.startswith("/media/")


def policy(nonce: str, frames: bool) -> str:
    """The Content-Security-Policy: nothing but this site's own pages, the nonce's inline script and style,
    stimuli from http(s) URLs, forms back to this site or to MTurk's externalSubmit."""
    ancestors = f"'self' {MTURK_FRAMES}" if frames else "'none'"
    return (
        f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; img-src 'self' http: https:; "
        f"media-src 'self' http: https:; form-action 'self' {MTURK_FRAMES}; base-uri 'none'; "
        f"frame-ancestors {ancestors}"
    )


class SecurityHeaders:
    """ASGI middleware: every HTTP response gets a Content-Security-Policy with a fresh nonce (templates read it
    as ``request.state.csp_nonce``), Referrer-Policy no-referrer, X-Content-Type-Options nosniff, and outside
    the annotators' pages X-Frame-Options DENY."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        nonce = secrets.token_urlsafe(16)
        scope.setdefault("state", {})["csp_nonce"] = nonce
        frames = framable(scope["path"])

        async def send_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                h = MutableHeaders(scope=message)
                h["Content-Security-Policy"] = policy(nonce, frames)
                h["Referrer-Policy"] = "no-referrer"
                h["X-Content-Type-Options"] = "nosniff"
                if not frames:
                    h["X-Frame-Options"] = "DENY"
            await send(message)

        await self.app(scope, receive, send_headers)
