"""The side-by-side task page (``kind = "pairwise"``): a source and two systems' outputs of one item, A on the
left and B on the right (sides as the judge's schedule drew them), the answer "A better", "B better" or "tie"
and an optional reason."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from ngrameval.collect.pairwise import CHOICES
from ngrameval.collect.study import normal_trials
from ngrameval.collect.views.base import BadRequest, checked_form, page, site


async def task(request: Request, aid: int) -> Response:
    """GET: the judge's next comparison under its lease; POST: an answer to one."""
    store = site(request).store
    if request.method == "POST":
        return await submit(request, aid)
    await run_in_threadpool(store.assign_trials, aid)  # none once the study has stopped
    trial = await run_in_threadpool(store.next_trial, aid)
    if trial is None:
        return RedirectResponse("/done", 303)
    pair = await run_in_threadpool(store.pair_of, trial.id)
    if pair is None:
        raise BadRequest("this study's trials are not side by side; ask the study's organiser", 500)
    a, b = trial.output, pair.output_b
    left, right = (a, b) if pair.left == "a" else (b, a)
    done, total = await run_in_threadpool(store.progress, aid)
    if trial.kind == "training":  # the schedule that follows counts too: no count gives training away
        st = store.study
        total += normal_trials(st.kind, st.items, st.pairwise.trials) + st.repeats + st.bad_references
    return page(request, "pairwise.html", trial=trial, left=left, right=right, token=trial.lease, done=done,
                total=total)  # fmt: skip


def answer(form: dict[str, str], ties: bool, reason: str, length: int) -> tuple[str, str]:
    """The (choice, reason) of a submitted form, checked against the study's settings."""
    choice = form.get("choice", "")
    if choice not in CHOICES or (choice == "tie" and not ties):
        raise BadRequest("please choose A better or B better" + (" (or a tie)" if ties else ""))
    text = " ".join(form.get("reason", "").split()) if reason != "off" else ""
    if len(text) > length:
        raise BadRequest(f"the reason is longer than {length} characters; please shorten it")
    if reason == "required" and not text:
        raise BadRequest("please say briefly why")
    return choice, text


async def submit(request: Request, aid: int) -> Response:
    here = site(request)
    form = await checked_form(request)
    token = form.get("token", "")
    if not 8 <= len(token) <= 64:
        raise BadRequest("the form lacks its task token; reload the page")
    settings = here.study.pairwise
    choice, reason = answer(form, settings.ties, settings.reason, settings.reason_length)
    asg = request.session.get("asg")
    res = await run_in_threadpool(here.store.submit_preference, aid, token, choice, reason,
                                  asg if isinstance(asg, int) else None)  # fmt: skip
    if res.outcome == "foreign":
        raise BadRequest("this task was not given to you (or it was withdrawn); go on with the next one")
    return RedirectResponse("/task", 303)
