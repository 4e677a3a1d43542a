"""The annotator's page of an ESA or MQM trial (template ``spans.html``): the source (and the reference when the
study shows it), the output whose characters are marked with the mouse or the keyboard, the list of marks, a
``[missing]`` button for omissions and, in ESA, the 0-100 score; and its answer, checked by
:func:`ngrameval.collect.spans.parse_marks` against the trial's own output."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from ngrameval.collect.models import TrialRow
from ngrameval.collect.repo import Submitted
from ngrameval.collect.span_rules import OMISSION, label
from ngrameval.collect.spans import MISSING, Mark, answers, pieces, submit_marks
from ngrameval.collect.trials import Trials
from ngrameval.collect.views.base import BadRequest, page, site
from ngrameval.errors import InputError


def page_data(request: Request, trial: TrialRow) -> dict[str, Any]:
    """What the page's script needs (read from a JSON data block, so the text is exactly the stored one)."""
    rules = site(request).study.spans
    assert rules is not None
    return {
        "text": trial.output,
        "severities": list(rules.severities),
        "categories": [
            [c, [[f"{c}/{x}" if x else c, label(x or c)] for x in (subs or ("",))]] for c, subs in rules.categories
        ],
        "omission": OMISSION if OMISSION in rules.leaves else "",
        "overlap": rules.allow_overlap,
        "max": rules.max_spans,
        "missing": MISSING,
    }


def show(request: Request, trial: TrialRow, done: int, total: int) -> Response:
    """The page of ``trial`` (already leased to this annotator)."""
    study = site(request).study
    assert study.spans is not None
    item = next((i for i in study.items if (i.item, i.system) == (trial.item, trial.system)), None)
    reference = item.reference if item is not None and study.spans.show_reference else ""
    data = page_data(request, trial)
    return page(request, "spans.html", trial=trial, token=trial.lease, done=done, total=total, reference=reference,
                data=data, rules=study.spans)  # fmt: skip


async def submit(request: Request, aid: int, token: str, form: dict[str, str], scores: dict[str, float],
                 asg: int | None) -> Submitted:  # fmt: skip
    """Store the marks of ``form`` (field ``spans``) with ``scores``; a mark the study does not allow is a 400."""
    store = site(request).store
    try:
        return await run_in_threadpool(submit_marks, store, aid, token, form.get("spans", ""), scores, asg)
    except InputError as exc:
        raise BadRequest(str(exc)) from None


def review(store: Trials, aid: int) -> list[tuple[TrialRow, list[tuple[str, str]], tuple[Mark, ...], float | None]]:
    """Every answered trial of annotator ``aid`` (controls too) for the admin's page: the trial, its output in
    pieces coloured by the marks (:func:`ngrameval.collect.spans.pieces`), the marks and the ESA score."""
    return [(t, pieces(t.output, marks), marks, score) for t, _, marks, score in answers(store, aid, controls=True)]
