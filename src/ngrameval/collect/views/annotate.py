"""The annotator's pages: arrival from MTurk, Prolific or an invitation link, consent, the describe /
paraphrase / rate task, the completion page, a stimulus' media file, and the public status page."""

from __future__ import annotations

import secrets

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, RedirectResponse, Response

from ngrameval.collect import security, stopping
from ngrameval.collect.study import Criterion
from ngrameval.collect.views import pairwise, spans
from ngrameval.collect.views.base import BadRequest, annotator_id, checked_form, message, page, site

FINISHED = (
    "This study has finished: it has the answers it needs and takes no new participants. Please return the task "
    "(on MTurk or Prolific: “return”); nothing of yours was recorded."
)
MTURK_SUBMIT = ("https://www.mturk.com", "https://workersandbox.mturk.com")  # the only places a HIT is sent back to


def rating(c: Criterion, raw: str) -> float:
    """A criterion's answer, checked against its scale: a whole number 1..points (Likert) or 0..100 (slider)."""
    low, top = (0, 100) if c.scale == "slider" else (1, c.points)
    raw = raw.strip()
    if not raw:
        raise BadRequest(f"please rate {c.question or c.name!r}")
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 3 and low <= int(raw) <= top):
        raise BadRequest(f"{c.name}: a whole number from {low} to {top}, got {raw[:20]!r}")
    return float(int(raw))


async def home(request: Request) -> Response:
    """The study's front page; with query parameters, an arrival (:func:`start`)."""
    if request.query_params:
        return await start(request)
    return page(request, "home.html")


async def start(request: Request) -> Response:
    """Arrival from a platform or an invitation: the annotator and their assignment, bound to each other."""
    store = site(request).store
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
    if await run_in_threadpool(stopping.closed_to, store, platform, worker):
        return message(request, FINISHED)
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
    """The consent page; agreeing is recorded, declining ends the session."""
    aid = await annotator_id(request)
    if request.method == "GET":
        return page(request, "consent.html")
    form = await checked_form(request)
    if form.get("agree") != "yes":
        request.session.clear()
        return message(
            request,
            "You did not agree, so you cannot take part; nothing of yours was kept. Please return the task.",
        )
    await run_in_threadpool(site(request).store.consent, aid)
    return RedirectResponse("/task", 303)


async def task(request: Request) -> Response:
    """The next trial (rating studies) or stimulus (describe studies) under a lease; a POST is an answer."""
    aid = await annotator_id(request)
    here = site(request)
    store, study = here.store, here.study
    if study.consent:
        person = await run_in_threadpool(store.annotator, aid)
        if person is None or person.consented is None:
            return RedirectResponse("/consent", 303)
    if study.kind == "pairwise":
        return await pairwise.task(request, aid)
    if request.method == "POST":
        return await submit(request, aid)
    if study.rating:
        await run_in_threadpool(store.assign_trials, aid)  # none once the study has stopped
        trial = await run_in_threadpool(store.next_trial, aid)
        if trial is None:
            return RedirectResponse("/done", 303)
        done, total = await run_in_threadpool(store.progress, aid)
        if study.spans is not None:
            return spans.show(request, trial, done, total)
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
    """An answer of annotator ``aid`` under its one-time task token: stored once, a late one told so."""
    here = site(request)
    store, study = here.store, here.study
    form = await checked_form(request)
    token = form.get("token", "")
    if not 8 <= len(token) <= 64:
        raise BadRequest("the form lacks its task token; reload the page")
    asg = request.session.get("asg")
    asg = asg if isinstance(asg, int) else None
    if study.rating:
        scores = {c.name: rating(c, form.get(f"c_{c.name}", "")) for c in study.criteria}
        if study.spans is not None:
            res = await spans.submit(request, aid, token, form, scores, asg)
        else:
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
    """The completion page: answers given, the completion code when earned, the way back to the platform."""
    aid = await annotator_id(request)
    here = site(request)
    store, study = here.store, here.study
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
        finished=await run_in_threadpool(stopping.finished, store),
    )


async def media(request: Request) -> Response:
    """A stimulus' local file, to the annotator it was given to (a lease, open or closed) or an admin only,
    and only a media file inside the study's directory (never the database, a dotfile or anything outside)."""
    here = site(request)
    aid, sid = request.session.get("aid"), int(request.path_params["sid"])
    given = isinstance(aid, int) and await run_in_threadpool(here.store.lease_of, aid, sid) is not None
    if not given and await security.admin_user(request, here.store) is None:
        return PlainTextResponse("not a stimulus of yours", 403)
    stim = await run_in_threadpool(here.store.stimulus, sid)
    path = None if stim is None else security.media_file(here.media_root, stim.src, here.private)
    return PlainTextResponse("not found", 404) if path is None else FileResponse(path)


async def status(request: Request) -> Response:
    """The public status page: the study's counts."""
    return page(request, "status.html", counts=site(request).store.counts())
