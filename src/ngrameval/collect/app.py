"""The study's ASGI app (Starlette): annotator pages (arrival from MTurk, Prolific or an invitation link; the
describe / paraphrase / rate task; completion code), a status page, and the admin area behind a login.

Server-rendered HTML from auto-escaping Jinja2 templates with inline CSS and a few lines of inline script: no
network resource. Sessions are signed cookies (itsdangerous, via Starlette's SessionMiddleware); every form
carries the session's CSRF token, and every task form a one-time submission token, so a repeated POST is stored
once."""

from __future__ import annotations

import hmac
import secrets
import unicodedata
from pathlib import Path
from typing import Any

import jinja2
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.templating import Jinja2Templates

from ngrameval.collect import design, export, overview, security
from ngrameval.collect.store import Store
from ngrameval.collect.study import Criterion

TEMPLATES = Path(__file__).with_name("templates")
MAX_FORM_FIELD = 8000
PAGE = 100  # rows of an admin table per page
MTURK_SUBMIT = ("https://www.mturk.com", "https://workersandbox.mturk.com")  # the only places a HIT is sent back to


class BadRequest(Exception):
    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def _csrf(request: Request) -> str:
    tok = request.session.get("csrf")
    if not tok:
        tok = secrets.token_urlsafe(24)
        request.session["csrf"] = tok
    return str(tok)


async def _form(request: Request) -> dict[str, str]:
    """The POSTed form after the CSRF check; every field a bounded string."""
    form = await request.form(max_files=0, max_fields=50)
    data = {k: v for k, v in form.items() if isinstance(v, str)}
    sent, have = data.get("csrf", ""), request.session.get("csrf", "")
    if not have or not hmac.compare_digest(str(sent), str(have)):
        raise BadRequest("the form has expired or was not sent by this site (CSRF check); reload the page", 403)
    if any(len(v) > MAX_FORM_FIELD for v in data.values()):
        raise BadRequest(f"a field is longer than {MAX_FORM_FIELD} characters", 413)
    for k, v in data.items():
        ch = _control(v)
        if ch is not None:
            raise BadRequest(f"the field {k[:40]!r} holds a control character (U+{ord(ch):04X}); please remove it")
    return data


def _control(value: str) -> str | None:
    """The first control character of ``value`` other than tab and line breaks, if any."""
    for ch in value:
        if ch not in "\t\n\r" and unicodedata.category(ch) in ("Cc", "Cs"):
            return ch
    return None


def _score(c: Criterion, raw: str) -> float:
    """A criterion's answer, checked against its scale: a whole number 1..points (Likert) or 0..100 (slider)."""
    low, top = (0, 100) if c.scale == "slider" else (1, c.points)
    raw = raw.strip()
    if not raw:
        raise BadRequest(f"please rate {c.question or c.name!r}")
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 3 and low <= int(raw) <= top):
        raise BadRequest(f"{c.name}: a whole number from {low} to {top}, got {raw[:20]!r}")
    return float(int(raw))


def create_app(store: Store, secure_cookies: bool = False, throttle: security.LoginThrottle | None = None) -> Starlette:
    """The app over ``store`` (already initialised: ``store.init()``). ``secure_cookies``: the session cookie
    only over HTTPS (Secure), SameSite=None and Partitioned, so that it also works in MTurk's iframe;
    ``throttle``: the login throttle (a default one if None)."""
    study = store.study
    throttle = throttle or security.LoginThrottle()
    check_password = security.PasswordChecks(store)
    description_checks = overview.DescriptionChecks(store)
    judge_checks = overview.JudgeChecks(store)
    private = security.database_files(store.url)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True)  # escape everything
    templates = Jinja2Templates(env=env)
    media_root = Path(study.path).parent

    def page(request: Request, name: str, status: int = 200, **ctx: Any) -> Response:
        ctx.update(study=study, csrf=_csrf(request), admin=request.session.get("admin"), nonce=request.state.csp_nonce)
        return templates.TemplateResponse(request, name, ctx, status_code=status)

    def message(request: Request, text: str, status: int = 200) -> Response:
        return page(request, "message.html", status, text=text)

    async def annotator_id(request: Request) -> int:
        aid = request.session.get("aid")
        if not isinstance(aid, int) or await run_in_threadpool(store.annotator, aid) is None:
            raise BadRequest("no annotation session: open the study link you were given", 403)
        return aid

    async def admin_required(request: Request) -> None:
        if await security.admin_user(request, store) is None:
            raise BadRequest("login required", 401)

    # ---------------------------------------------------------------- annotators

    async def home(request: Request) -> Response:
        if request.query_params:
            return await start(request)
        return page(request, "home.html")

    async def start(request: Request) -> Response:
        """Arrival from a platform or an invitation: the annotator and their assignment, bound to each other."""
        q = request.query_params
        if "workerId" in q or "assignmentId" in q:
            external = q.get("assignmentId", "")[:128]
            if external in ("", "ASSIGNMENT_ID_NOT_AVAILABLE") or not q.get("workerId"):
                return page(request, "home.html", preview=True)
            platform, worker, group = "mturk", q["workerId"][:128], ""
            info = f"assignmentId={external[:64]}&hitId={q.get('hitId', '')[:64]}"
        elif "PROLIFIC_PID" in q:
            platform, worker, group = "prolific", q["PROLIFIC_PID"][:128], ""
            info = f"STUDY_ID={q.get('STUDY_ID', '')[:64]}&SESSION_ID={q.get('SESSION_ID', '')[:64]}"
            # Prolific checks its own study-wide code; a session is this participant's (never bound to another)
            external = f"{worker}:{q.get('SESSION_ID', '')[:64] or q.get('STUDY_ID', '')[:64]}"
        elif "invite" in q:
            token = q["invite"][:64]
            inv = await run_in_threadpool(store.invite, token)
            if inv is None:
                return message(request, "This invitation link is not valid.", 404)
            # the first browser to open the link claims it (a secret kept in its session); another is told
            claim = request.session.get("invite_claim") or secrets.token_urlsafe(16)
            if await run_in_threadpool(store.claim_invite, token, str(claim)) is None:
                return message(
                    request,
                    "This invitation link has already been used, in another browser. Each link is for one person: "
                    "if you opened it before on another device, please continue there; otherwise ask the study's "
                    "organiser for a link of your own.",
                    409,
                )
            platform, worker, group, external, info = "invite", token, inv.group, token, ""
        else:
            return message(request, "Open the study link you were given (it identifies you).", 400)
        aid = await run_in_threadpool(store.annotator_for, platform, worker, info, group)
        asg = await run_in_threadpool(store.assignment_for, aid, platform, external)
        if asg is None:
            return message(
                request,
                "This assignment was opened by another worker. Please open the task from your own account.",
                403,
            )
        request.session.clear()
        request.session.update(aid=aid, asg=asg.id, platform=platform)
        if platform == "invite":
            request.session["invite_claim"] = claim
            await run_in_threadpool(store.use_invite, worker)
        if platform == "mturk":
            submit_to = q.get("turkSubmitTo", "").rstrip("/")
            request.session["turk_submit"] = submit_to if submit_to in MTURK_SUBMIT else ""
            request.session["assignment"] = external
        return RedirectResponse("/task", 303)

    async def consent(request: Request) -> Response:
        aid = await annotator_id(request)
        if request.method == "GET":
            return page(request, "consent.html")
        form = await _form(request)
        if form.get("agree") != "yes":
            request.session.clear()
            return message(
                request,
                "You did not agree, so you cannot take part; nothing of yours was kept. Please return the task.",
            )
        await run_in_threadpool(store.consent, aid)
        return RedirectResponse("/task", 303)

    async def task(request: Request) -> Response:
        aid = await annotator_id(request)
        if study.consent:
            person = await run_in_threadpool(store.annotator, aid)
            if person is None or person.consented is None:
                return RedirectResponse("/consent", 303)
        if request.method == "POST":
            return await submit(request, aid)
        if study.rating:
            await run_in_threadpool(store.assign_trials, aid)
            trial = await run_in_threadpool(store.next_trial, aid)
            if trial is None:
                return RedirectResponse("/done", 303)
            done, total = await run_in_threadpool(store.progress, aid)
            return page(request, "rate.html", trial=trial, token=trial.lease, done=done, total=total)
        got = await run_in_threadpool(store.lease_stimulus, aid)
        if got is None:
            if await run_in_threadpool(store.waiting, aid):
                return page(request, "waiting.html", minutes=study.lease_minutes)
            return RedirectResponse("/done", 303)
        stim, lease = got
        done, total = await run_in_threadpool(store.progress, aid)
        return page(request, "describe.html", stim=stim, token=lease.token, done=done, total=total)

    async def submit(request: Request, aid: int) -> Response:
        form = await _form(request)
        token = form.get("token", "")
        if not 8 <= len(token) <= 64:
            raise BadRequest("the form lacks its task token; reload the page")
        asg = request.session.get("asg")
        asg = asg if isinstance(asg, int) else None
        if study.rating:
            scores = {c.name: _score(c, form.get(f"c_{c.name}", "")) for c in study.criteria}
            res = await run_in_threadpool(store.submit_rating, aid, token, scores, asg)
        else:
            skipped = "skip" in form
            text = " ".join(form.get("description", "").split())
            if not skipped and not text:
                raise BadRequest("please write a description, or press Skip")
            if len(text) > study.max_length or len(form.get("comment", "")) > study.max_length:
                raise BadRequest(f"at most {study.max_length} characters, please")
            language = " ".join(form.get("language", "").split())[:64] or study.language
            comment = " ".join(form.get("comment", "").split())
            res = await run_in_threadpool(store.submit_description, aid, token, text, language, comment, skipped, asg)
        if res.outcome == "foreign":
            raise BadRequest("this task was not given to you (or it was withdrawn); go on with the next one")
        if res.outcome == "late":
            return page(request, "late.html", 409, minutes=study.lease_minutes)
        return RedirectResponse("/task", 303)

    async def done(request: Request) -> Response:
        aid = await annotator_id(request)
        asg_id = request.session.get("asg")
        asg = await run_in_threadpool(store.assignment, asg_id) if isinstance(asg_id, int) else None
        if asg is None or asg.annotator_id != aid:
            raise BadRequest("no annotation session: open the study link you were given", 403)
        answers = await run_in_threadpool(store.answers, asg.id)
        n, total = await run_in_threadpool(store.progress, aid)
        person = await run_in_threadpool(store.annotator, aid)
        return page(
            request,
            "done.html",
            done=n,
            answers=answers,
            earned=answers >= study.min_answers,
            code=asg.code,
            trained=person.trained if person else None,
            total=total,
            platform=request.session.get("platform", ""),
            turk_submit=request.session.get("turk_submit", ""),
            assignment=request.session.get("assignment", ""),
        )

    async def media(request: Request) -> Response:
        """A stimulus' local file, to the annotator it was given to (a lease, open or closed) or an admin only,
        and only a media file inside the study's directory (never the database, a dotfile or anything outside)."""
        aid, sid = request.session.get("aid"), int(request.path_params["sid"])
        given = isinstance(aid, int) and await run_in_threadpool(store.lease_of, aid, sid) is not None
        if not given and await security.admin_user(request, store) is None:
            return PlainTextResponse("not a stimulus of yours", 403)
        stim = await run_in_threadpool(store.stimulus, sid)
        path = None if stim is None else security.media_file(media_root, stim.src, private)
        return PlainTextResponse("not found", 404) if path is None else FileResponse(path)

    async def status(request: Request) -> Response:
        return page(request, "status.html", counts=store.counts())

    # ---------------------------------------------------------------- admin

    async def login(request: Request) -> Response:
        if request.method == "GET":
            return page(request, "login.html")
        form = await _form(request)
        username, password = form.get("username", "")[:64], form.get("password", "")[:256]
        keys = security.throttle_keys(request, username)
        wait = throttle.attempt(keys)
        if wait:
            refused = page(request, "login.html", 429, error=f"Too many failed logins: try again in {wait} s.")
            refused.headers["Retry-After"] = str(wait)
            return refused
        if await check_password(username, password):
            throttle.success(keys)
            await security.open_admin_session(request, store, username)
            return RedirectResponse("/admin", 303)
        return page(request, "login.html", 401, error="wrong user name or password")

    async def logout(request: Request) -> Response:
        await _form(request)
        name = await security.admin_user(request, store)
        if name is not None:
            await run_in_threadpool(security.end_sessions, store, name)  # a saved copy of the cookie ends too
        request.session.clear()
        return RedirectResponse("/admin/login", 303)

    async def admin(request: Request) -> Response:
        await admin_required(request)
        try:
            number = int(request.query_params.get("page", "1"))
        except ValueError:
            number = 1
        cache = judge_checks if study.rating else description_checks
        await run_in_threadpool(cache.refresh)
        everyone = await run_in_threadpool(store.annotators)
        people, number, pages = overview.page_of(everyone, number)
        rows = []
        for a, n in people:
            name = store.pseudonym(a)
            rows.append((a, n, name, description_checks.per_annotator.get(a.id), judge_checks.by_judge.get(name)))
        counts = await run_in_threadpool(store.counts)
        return page(request, "admin.html", rows=rows, counts=counts, page=number, pages=pages, total=len(everyone))

    async def admin_progress(request: Request) -> Response:
        """Per-stimulus fill (descriptions, open leases, missing), least filled first, 100 a page; for rating
        studies the Latin squares of each judge group."""
        await admin_required(request)
        try:
            number = max(1, min(int(request.query_params.get("page", "1")), 10**6))
        except ValueError:
            raise BadRequest("page: a whole number") from None
        counts = await run_in_threadpool(store.counts)
        stimuli = await run_in_threadpool(store.stimulus_progress, (number - 1) * PAGE, PAGE)
        squares = await run_in_threadpool(store.squares) if study.rating else []
        pages = max(1, -(-counts["stimuli"] // PAGE))
        return page(
            request,
            "admin_progress.html",
            counts=counts,
            stimuli=stimuli,
            squares=squares,
            number=number,
            pages=pages,
            rows_per_square=len(design.williams_rows(max(1, len(study.systems)))),
        )

    async def admin_annotator(request: Request) -> Response:
        await admin_required(request)
        aid = int(request.path_params["aid"])
        a = store.annotator(aid)
        if a is None:
            return message(request, "no such annotator", 404)
        if not study.rating:
            await run_in_threadpool(description_checks.refresh)
        per_desc = description_checks.per_description
        descs = [(d, s, per_desc.get(d.id)) for d, s, _ in store.descriptions(aid)]
        return page(
            request, "annotator.html", a=a, pseudonym=store.pseudonym(a), descs=descs, ratings=store.ratings(aid)
        )

    async def admin_action(request: Request) -> Response:
        await admin_required(request)
        form = await _form(request)
        aid = int(request.path_params["aid"])
        action = request.path_params["action"]
        if action == "status":
            store.set_status(aid, form.get("status", ""))
        elif action == "group":
            store.set_group(aid, form.get("group", ""))
        elif action == "delete":
            store.delete_annotator(aid)
        else:
            return message(request, "unknown action", 404)
        return RedirectResponse("/admin", 303)

    async def admin_invites(request: Request) -> Response:
        await admin_required(request)
        form = await _form(request)
        try:
            n = max(1, min(int(form.get("n", "1")), 500))
        except ValueError:
            raise BadRequest("how many invitations?") from None
        tokens = store.add_invites(n, form.get("group", "")[:32])
        base = str(request.base_url).rstrip("/")
        return page(request, "invites.html", links=[f"{base}/start?invite={t}" for t in tokens])

    async def admin_export(request: Request) -> Response:
        await admin_required(request)
        name = request.path_params["name"]
        raw = request.query_params.get("raw") == "1"
        if name == "descriptions.csv":
            body = export.descriptions_csv(store, raw)
        elif name == "judgments.csv":
            body = export.judgments(store, raw)[0]
        elif name == "judges.csv" and study.rating:
            body = export.judges_csv(export.judgments(store, raw)[1])
        elif name == "ledger.csv":
            body = export.ledger_csv(store, raw)
        elif name == "assignments.csv":
            body = export.assignments_csv(store, raw)
        else:
            return PlainTextResponse("not found", 404)
        return Response(
            body,
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )

    async def admin_annotator_export(request: Request) -> Response:
        await admin_required(request)
        body = export.annotator_json(store, int(request.path_params["aid"]))
        return Response(body, media_type="application/json")

    async def on_bad_request(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, BadRequest)
        if exc.status == 401:
            return RedirectResponse("/admin/login", 303)
        back = "/task" if request.url.path == "/task" and exc.status in (400, 413) else ""
        return page(request, "message.html", exc.status, text=str(exc), back=back)

    routes = [
        Route("/", home),
        Route("/start", start),
        Route("/consent", consent, methods=["GET", "POST"]),
        Route("/task", task, methods=["GET", "POST"]),
        Route("/done", done),
        Route("/media/{sid:int}", media),
        Route("/status", status),
        Route("/admin/login", login, methods=["GET", "POST"]),
        Route("/admin/logout", logout, methods=["POST"]),
        Route("/admin", admin),
        Route("/admin/progress", admin_progress),
        Route("/admin/annotator/{aid:int}", admin_annotator),
        Route("/admin/annotator/{aid:int}/export.json", admin_annotator_export),
        Route("/admin/annotator/{aid:int}/{action}", admin_action, methods=["POST"]),
        Route("/admin/invites", admin_invites, methods=["POST"]),
        Route("/admin/export/{name}", admin_export),
    ]
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
    return Starlette(routes=routes, middleware=middleware, exception_handlers={BadRequest: on_bad_request})
