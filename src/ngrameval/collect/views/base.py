"""What the collect app's handlers share: the app's state (:class:`Site`, kept on ``app.state.site``), page
rendering, the CSRF-checked form and the access checks."""

from __future__ import annotations

import hmac
import secrets
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.templating import Jinja2Templates

from ngrameval.collect import overview, security
from ngrameval.collect.store import Store
from ngrameval.collect.study import Study

MAX_FORM_FIELD = 8000


class BadRequest(Exception):
    """A request the app refuses: ``message`` shown to the person, with HTTP ``status`` (401: to the login)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Site:
    """The app's state, made once by :func:`ngrameval.collect.app.create_app`: the store and its study, the
    login throttle and password checks, the admin overview's caches, the database files never served as media,
    the templates and the directory media files are served from."""

    store: Store
    study: Study
    throttle: security.LoginThrottle
    check_password: security.PasswordChecks
    description_checks: overview.DescriptionChecks
    judge_checks: overview.JudgeChecks
    private: tuple[Path, ...]
    templates: Jinja2Templates
    media_root: Path


def site(request: Request) -> Site:
    """The state of the app serving ``request``."""
    state = request.app.state.site
    assert isinstance(state, Site)
    return state


def csrf_token(request: Request) -> str:
    """The session's CSRF token (made on first use)."""
    tok = request.session.get("csrf")
    if not tok:
        tok = secrets.token_urlsafe(24)
        request.session["csrf"] = tok
    return str(tok)


def page(request: Request, name: str, status: int = 200, **ctx: Any) -> Response:
    """The template ``name`` rendered with ``ctx`` plus what every page shows (study, CSRF token, admin, nonce)."""
    here = site(request)
    ctx.update(
        study=here.study, csrf=csrf_token(request), admin=request.session.get("admin"), nonce=request.state.csp_nonce
    )
    return here.templates.TemplateResponse(request, name, ctx, status_code=status)


def message(request: Request, text: str, status: int = 200) -> Response:
    """A page saying ``text``."""
    return page(request, "message.html", status, text=text)


def control_character(value: str) -> str | None:
    """The first control character of ``value`` other than tab and line breaks, if any."""
    for ch in value:
        if ch not in "\t\n\r" and unicodedata.category(ch) in ("Cc", "Cs"):
            return ch
    return None


async def checked_form(request: Request) -> dict[str, str]:
    """The POSTed form after the CSRF check; every field a bounded string."""
    form = await request.form(max_files=0, max_fields=50)
    data = {k: v for k, v in form.items() if isinstance(v, str)}
    sent, have = data.get("csrf", ""), request.session.get("csrf", "")
    if not have or not hmac.compare_digest(str(sent), str(have)):
        raise BadRequest("the form has expired or was not sent by this site (CSRF check); reload the page", 403)
    if any(len(v) > MAX_FORM_FIELD for v in data.values()):
        raise BadRequest(f"a field is longer than {MAX_FORM_FIELD} characters", 413)
    for k, v in data.items():
        ch = control_character(v)
        if ch is not None:
            raise BadRequest(f"the field {k[:40]!r} holds a control character (U+{ord(ch):04X}); please remove it")
    return data


async def annotator_id(request: Request) -> int:
    """The session's annotator (403 without one)."""
    aid = request.session.get("aid")
    if not isinstance(aid, int) or await run_in_threadpool(site(request).store.annotator, aid) is None:
        raise BadRequest("no annotation session: open the study link you were given", 403)
    return aid


async def admin_required(request: Request) -> None:
    """Pass only a logged-in admin (else to the login page)."""
    if await security.admin_user(request, site(request).store) is None:
        raise BadRequest("login required", 401)


async def on_bad_request(request: Request, exc: Exception) -> Response:
    """A refused request's page (the login page for 401); a bad task form links back to the task."""
    assert isinstance(exc, BadRequest)
    if exc.status == 401:
        return RedirectResponse("/admin/login", 303)
    back = "/task" if request.url.path == "/task" and exc.status in (400, 413) else ""
    return page(request, "message.html", exc.status, text=str(exc), back=back)
