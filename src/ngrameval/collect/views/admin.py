"""The admin area: login and logout, the annotator overview, per-stimulus progress, one annotator's answers and
the actions on them, invitations, and the exports (CSV, one annotator's JSON). Every page but the login needs a
logged-in admin."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

from ngrameval.collect import export, overview, security, stopping
from ngrameval.collect.views import spans
from ngrameval.collect.views.base import BadRequest, admin_required, checked_form, message, page, site

PAGE = 100  # rows of an admin table per page


async def login(request: Request) -> Response:
    """The login form; a POST checks the password behind the throttle and opens a fresh admin session."""
    if request.method == "GET":
        return page(request, "login.html")
    here = site(request)
    form = await checked_form(request)
    username, password = form.get("username", "")[:64], form.get("password", "")[:256]
    keys = security.throttle_keys(request, username)
    wait = here.throttle.attempt(keys)
    if wait:
        refused = page(request, "login.html", 429, error=f"Too many failed logins: try again in {wait} s.")
        refused.headers["Retry-After"] = str(wait)
        return refused
    if await here.check_password(username, password):
        here.throttle.success(keys)
        await security.open_admin_session(request, here.store, username)
        return RedirectResponse("/admin", 303)
    return page(request, "login.html", 401, error="wrong user name or password")


async def logout(request: Request) -> Response:
    """End every session of this admin (a saved copy of the cookie too) and clear this one."""
    store = site(request).store
    await checked_form(request)
    name = await security.admin_user(request, store)
    if name is not None:
        await run_in_threadpool(security.end_sessions, store, name)  # a saved copy of the cookie ends too
    request.session.clear()
    return RedirectResponse("/admin/login", 303)


async def annotators(request: Request) -> Response:
    """The admin's front page: the annotators (a page of them) with their checks, and the study's counts."""
    await admin_required(request)
    here = site(request)
    store, study = here.store, here.study
    try:
        number = int(request.query_params.get("page", "1"))
    except ValueError:
        number = 1
    cache = here.judge_checks if study.rating else here.description_checks
    await run_in_threadpool(cache.refresh)
    everyone = await run_in_threadpool(store.annotators)
    people, number, pages = overview.page_of(everyone, number)
    rows = []
    for a, n in people:
        name = store.pseudonym(a)
        per_annotator = here.description_checks.per_annotator.get(a.id)
        rows.append((a, n, name, per_annotator, here.judge_checks.by_judge.get(name)))
    counts = await run_in_threadpool(store.counts)
    settlement, stop = await run_in_threadpool(stopping.overview, store)
    return page(
        request, "admin.html", rows=rows, counts=counts, page=number, pages=pages, total=len(everyone),
        settlement=settlement, stop=stop,
    )  # fmt: skip


async def progress(request: Request) -> Response:
    """Per-stimulus fill (descriptions, open leases, missing), least filled first, 100 a page; for rating
    studies the Latin squares of each judge group."""
    await admin_required(request)
    here = site(request)
    store, study = here.store, here.study
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
        rows_per_square=store.rows_per_square(),
    )


async def annotator(request: Request) -> Response:
    """One annotator: their descriptions with their checks, their ratings, their side-by-side comparisons (the pair
    as the page showed it, the winner and reason), and their marked spans."""
    await admin_required(request)
    here = site(request)
    store = here.store
    aid = int(request.path_params["aid"])
    a = store.annotator(aid)
    if a is None:
        return message(request, "no such annotator", 404)
    if not here.study.rating:
        await run_in_threadpool(here.description_checks.refresh)
    per_desc = here.description_checks.per_description
    descs = [(d, s, per_desc.get(d.id)) for d, s, _ in store.descriptions(aid)]
    marks = spans.review(store, aid) if here.study.spans is not None else []
    prefs = await run_in_threadpool(store.preferences, aid) if here.study.kind == "pairwise" else []
    shown = [(t, p, *((t.system, p.system_b) if p.left == "a" else (p.system_b, t.system))) for t, p, _ in prefs]
    return page(request, "annotator.html", a=a, pseudonym=store.pseudonym(a), descs=descs, ratings=store.ratings(aid),
                marks=marks, prefs=shown)  # fmt: skip


async def annotator_action(request: Request) -> Response:
    """Set an annotator's status or group, or delete them (and their answers)."""
    await admin_required(request)
    store = site(request).store
    form = await checked_form(request)
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


async def invites(request: Request) -> Response:
    """Make 1 to 500 invitation links (of a judge group) and show them."""
    await admin_required(request)
    form = await checked_form(request)
    try:
        n = max(1, min(int(form.get("n", "1")), 500))
    except ValueError:
        raise BadRequest("how many invitations?") from None
    tokens = site(request).store.add_invites(n, form.get("group", "")[:32])
    base = str(request.base_url).rstrip("/")
    return page(request, "invites.html", links=[f"{base}/start?invite={t}" for t in tokens])


async def export_csv(request: Request) -> Response:
    """One of the study's CSV exports, pseudonymous unless ``?raw=1``; judgments.csv and judges.csv take
    ``?weight=reliability`` and ``?min_reliability=X`` (as ``collect export --weight``, ``--min-reliability``),
    a side-by-side study's preferences.csv ``?drop_flagged=1`` (as ``collect export --drop-flagged``)."""
    await admin_required(request)
    here = site(request)
    store = here.store
    name = request.path_params["name"]
    raw = request.query_params.get("raw") == "1"
    weight = request.query_params.get("weight") == "reliability"
    floor = reliability_floor(request.query_params.get("min_reliability"))
    if name == "descriptions.csv":
        body = export.descriptions_csv(store, raw)
    elif name == "judgments.csv":
        body = export.judgments(store, raw, weight, floor)[0]
    elif name == "judges.csv" and here.study.kind == "pairwise":
        body = export.pair_judges_csv(export.pair_judges(store, raw))
    elif name == "preference_controls.csv" and here.study.kind == "pairwise":
        body = export.preference_controls_csv(store, raw)
    elif name == "judges.csv" and here.study.rating:
        body = export.judges_csv(export.judgments(store, raw, weight, floor)[1], floor)
    elif name == "preferences.csv" and here.study.kind == "pairwise":
        judges = export.pair_judges(store, raw) if request.query_params.get("drop_flagged") == "1" else []
        body = export.preferences_csv(store, raw, frozenset(j.judge for j in judges if j.check.flagged))[0]
    elif name == "ledger.csv":
        body = export.ledger_csv(store, raw)
    elif name == "assignments.csv":
        body = export.assignments_csv(store, raw)
    elif name == "spans.tsv" and here.study.spans is not None:
        body = export.span_files(store, raw)[name]
    else:
        return PlainTextResponse("not found", 404)
    return Response(
        body,
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


def reliability_floor(text: str | None) -> float | None:
    """``?min_reliability=``: a finite number >= 0, or absent."""
    if text is None:
        return None
    try:
        x = float(text)
    except ValueError:
        x = -1.0
    if not 0 <= x < float("inf"):
        raise BadRequest("min_reliability: a number >= 0")
    return x


async def annotator_export(request: Request) -> Response:
    """Everything kept about one annotator, as JSON (a data subject's request)."""
    await admin_required(request)
    body = export.annotator_json(site(request).store, int(request.path_params["aid"]))
    return Response(body, media_type="application/json")
