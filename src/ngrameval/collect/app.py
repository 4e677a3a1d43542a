"""The study's ASGI app (Starlette): annotator pages (arrival from MTurk, Prolific or an invitation link; the
describe / paraphrase / rate task; completion code), a status page, and the admin area behind a login.

Server-rendered HTML from auto-escaping Jinja2 templates with inline CSS and a few lines of inline script: no
network resource. Sessions are signed cookies (itsdangerous, via Starlette's SessionMiddleware); every form
carries the session's CSRF token, and every task form a one-time submission token, so a repeated POST is stored
once.

The handlers live in :mod:`ngrameval.collect.views` (annotate, admin); this module holds the one route table
and makes the app."""

from __future__ import annotations

from pathlib import Path

import jinja2
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.routing import Route
from starlette.templating import Jinja2Templates

from ngrameval.collect import overview, security
from ngrameval.collect.store import Store
from ngrameval.collect.views import admin, annotate
from ngrameval.collect.views.base import BadRequest, Site, on_bad_request

TEMPLATES = Path(__file__).with_name("templates")

ROUTES = [
    # annotators
    Route("/", annotate.home),
    Route("/start", annotate.start),
    Route("/consent", annotate.consent, methods=["GET", "POST"]),
    Route("/task", annotate.task, methods=["GET", "POST"]),
    Route("/done", annotate.done),
    Route("/media/{sid:int}", annotate.media),
    Route("/status", annotate.status),
    # admin
    Route("/admin/login", admin.login, methods=["GET", "POST"]),
    Route("/admin/logout", admin.logout, methods=["POST"]),
    Route("/admin", admin.annotators),
    Route("/admin/progress", admin.progress),
    Route("/admin/annotator/{aid:int}", admin.annotator),
    Route("/admin/annotator/{aid:int}/export.json", admin.annotator_export),
    Route("/admin/annotator/{aid:int}/{action}", admin.annotator_action, methods=["POST"]),
    Route("/admin/invites", admin.invites, methods=["POST"]),
    Route("/admin/export/{name}", admin.export_csv),
]


def create_app(store: Store, secure_cookies: bool = False, throttle: security.LoginThrottle | None = None) -> Starlette:
    """The app over ``store`` (already initialised: ``store.init()``). ``secure_cookies``: the session cookie
    only over HTTPS (Secure), SameSite=None and Partitioned, so that it also works in MTurk's iframe;
    ``throttle``: the login throttle (a default one if None). The handlers reach the state made here through
    ``request.app.state.site`` (:class:`~ngrameval.collect.views.base.Site`)."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True)  # escape everything
    site = Site(
        store=store,
        study=store.study,
        throttle=throttle or security.LoginThrottle(),
        check_password=security.PasswordChecks(store),
        description_checks=overview.DescriptionChecks(store),
        judge_checks=overview.JudgeChecks(store),
        private=security.database_files(store.url),
        templates=Jinja2Templates(env=env),
        media_root=Path(store.study.path).parent,
    )
    middleware = [
        Middleware(security.SecurityHeaders),
        Middleware(
            SessionMiddleware,
            secret_key=store.secret("session_secret"),
            same_site="none" if secure_cookies else "lax",
            https_only=secure_cookies,
            partitioned=secure_cookies,
            max_age=14 * 24 * 3600,
        ),
    ]
    app = Starlette(routes=ROUTES, middleware=middleware, exception_handlers={BadRequest: on_bad_request})
    app.state.site = site
    return app
