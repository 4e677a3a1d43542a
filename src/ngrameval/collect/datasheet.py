"""A study's datasheet: a machine-readable description of how its human judgments were collected, in the sections
of the Human Evaluation Datasheet (HEDS; Shimorina & Belz 2022, "The Human Evaluation Datasheet: A Template for
Recording Details of Human Evaluation Experiments in NLP") — the outputs evaluated, the sample of items, the quality
criteria and how they were asked, the evaluators (how many, which groups, how recruited, trained and paid), the
experimental design (targets, Latin squares, controls and how many judges passed them) and the dates — so that a
published human evaluation can be reported and rerun. Everything is read from the study file and the database;
nothing identifies a worker."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections import Counter
from typing import Any

from ngrameval.collect import quality
from ngrameval.collect.store import Store

HEDS = "HEDS 2.0 (Shimorina & Belz 2022), sections 2-4 as fields of this file"


def _iso(t: dt.datetime | None) -> str | None:
    return None if t is None else t.replace(microsecond=0).isoformat()


def _span(times: list[dt.datetime]) -> dict[str, str | None]:
    return {"first": _iso(min(times)) if times else None, "last": _iso(max(times)) if times else None}


def _judges(store: Store) -> dict[str, Any]:
    """Per-judge consistency over the rating controls (repeats, known answers, bad references): how many judges
    were checked, how many flagged."""
    from ngrameval.collect.export import judgments, pair_judges  # the same checks the judges.csv export holds

    if store.study.kind == "pairwise":
        return pair_summary(pair_judges(store), store.study.alpha)
    _, summaries = judgments(store, raw_ids=False)
    return {
        "checked": len(summaries),
        "flagged": sum(s.check.flagged for s in summaries),
        "decisive": sum(bool(s.check.decisive) for s in summaries),
        "test": f"one-sided exact signed-rank test of bad references below their originals, alpha {store.study.alpha}",
    }


def pair_summary(judges: list[Any], alpha: float) -> dict[str, Any]:
    """How many side-by-side judges (:class:`ngrameval.collect.export.PairJudge`) were checked, flagged by the
    bad-reference test, had enough bad references for it (decisive), and their mean repeat agreement."""
    agree = [j.check.repeat_agreement for j in judges if j.check.repeat_agreement is not None]
    return {
        "checked": len(judges),
        "flagged": sum(j.check.flagged for j in judges),
        "decisive": sum(j.check.decisive for j in judges),
        "repeat_agreement": round(sum(agree) / len(agree), 6) if agree else None,
        "test": "one-sided exact binomial (sign) test that the original is chosen over its bad reference more "
        f"often than chance, a tie counting as not choosing it, alpha {alpha}",
    }


def _stopping(store: Store) -> dict[str, Any] | None:
    """The ``[stopping]`` rules and whether (and why) they stopped the study; None without rules."""
    from ngrameval.collect import stopping

    state = stopping.halted(store)
    if state is None:
        return None
    rules = store.study.stopping
    return {
        "when": rules.when,
        "criterion": rules.criterion or (store.study.criteria[0].name if store.study.criteria else None),
        "alpha": rules.alpha,
        "planned_per_system": rules.planned,
        "method": "normal-mixture confidence sequences (Howard et al. 2021), Bonferroni over systems",
        "budget": rules.budget,
        "max_answers": rules.max_answers,
        **state.as_dict(),
    }


def datasheet(store: Store) -> dict[str, Any]:
    """The datasheet of ``store``'s study as a JSON-ready dict (see the module docstring)."""
    st = store.study
    people = store.annotators()
    active = [(a, n) for a, n in people if n > 0]
    ratings = store.ratings() if st.rating else []
    descriptions = [] if st.rating else store.descriptions()
    assignments = store.assignments()
    paid = [n for g, _, n in assignments if n >= st.min_answers]
    trials = {t.id: t for t, _, _ in ratings}  # a trial rated on several criteria is one answer
    comparisons = store.preferences() if st.kind == "pairwise" else []
    trials.update((t.id, t) for t, _, _ in comparisons)
    times = [t.shown for t in trials.values() if t.shown is not None] + [d.created for d, _, _ in descriptions]
    kinds = Counter(t.kind for t in trials.values())
    trials_by_kind = {k: kinds[k] for k in sorted(kinds)}
    tiers = Counter([d.tier for d, _, _ in descriptions] + [t.tier for t in trials.values()])
    submissions = sum(n for _, n in people)
    amount = sum(n * (st.tier2_rate if tier == 2 else st.tier1_rate) for tier, n in tiers.items())
    sheet: dict[str, Any] = {
        "datasheet": HEDS,
        "study": {"name": st.name, "title": st.title, "kind": st.kind, "language": st.language},
        "evaluated_outputs": {
            "systems": list(st.systems),
            "items": len({i.item for i in st.items if i.expected is None}),
            "stimuli": len(st.stimuli),
        },
        "quality_criteria": [
            {"name": c.name, "response": c.scale, "points": c.points, "labels": list(c.labels), "question": c.question}
            for c in st.criteria
        ],
        "instructions": st.instructions,
        "consent": st.consent or None,
        "design": {
            "target_per_stimulus": st.target,
            "lease_minutes": st.lease_minutes,
            "min_answers_for_payment": st.min_answers,
            "latin_square": st.rating and st.kind == "rate",
            "seed": st.seed,
            "controls": {
                "batch_size": st.controls.batch_size,
                "repeats": st.controls.repeats,
                "bad_references": st.controls.bad,
                "alpha": st.alpha,
                "attention_checks": len(st.controls_gold),
                "control_every": st.quality.control_every if st.controls_gold else None,
            },
            "training": {
                "items": st.training_items,
                "max_error": st.training_max_error,
                "qualifies": st.training_qualifies,
                **({"known_answer": "an output against its own degraded copy"} if st.kind == "pairwise" else {}),
            }
            if st.training_items
            else None,
            "stopping": _stopping(store),
        },
        "evaluators": {
            "registered": len(people),
            "contributed": len(active),
            "groups": dict(sorted(Counter(a.group or "(none)" for a, _ in active).items())),
            "platforms": dict(sorted(Counter(a.platform for a, _ in active).items())),
            "consented": sum(a.consented is not None for a, _ in active),
            "training": dict(sorted(Counter(a.trained for a, _ in active if a.trained).items())),
            "status": dict(sorted(Counter(a.status for a, _ in active).items())),
        },
        "responses": {
            "submissions": submissions,
            "ratings": len(ratings),
            "trials_by_kind": trials_by_kind,
            "descriptions": len(descriptions),
        },
        "payment": {
            "currency": st.currency,
            "rate_tier1": st.tier1_rate,
            "rate_tier2": st.tier2_rate,
            "assignments": len(assignments),
            "assignments_paid": len(paid),
            "amount": round(amount, 4),
        },
        "dates": {"created": _iso(min((a.created for a, _ in people), default=None)), "answers": _span(times)},
    }
    if st.kind == "pairwise":
        sheet["design"]["pairwise"] = {**dataclasses.asdict(st.pairwise), "schedule": "balanced pairs per judge"}
        sheet["responses"]["comparisons"] = len(comparisons)
    if st.spans is not None:  # ESA / MQM: how responses were elicited
        sheet["error_spans"] = {
            "severities": list(st.spans.severities),
            "categories": list(st.spans.leaves),
            "allow_overlap": st.spans.allow_overlap,
            "reference_shown": st.spans.show_reference,
            "max_spans": st.spans.max_spans,
            **({"mqm_weights": st.spans.weights_option} if st.kind == "mqm" else {}),
            "omissions": "[missing] marks without offsets",
        }
    if st.rating:
        sheet["design"]["controls"]["judges"] = _judges(store)
    elif st.controls_gold:
        answers: dict[int, list[tuple[str, str]]] = {}
        for d, stim, a in store.descriptions(controls=True):
            if stim.key in st.controls_gold:
                answers.setdefault(a.id, []).append((stim.key, d.text))
        checks = quality.control_checks(answers, st.controls_gold, st.quality)
        verdicts = Counter(quality.qualification(c, st.quality) for c in checks.values())
        sheet["design"]["controls"]["judges"] = {
            "checked": len(checks),
            **{verdict: verdicts[verdict] for verdict in ("passed", "failed", "undecided")},
            "test": f"{st.quality.control_metric} against the gold answers >= {st.quality.pass_mark}",
        }
    return sheet


def datasheet_json(store: Store) -> str:
    """:func:`datasheet` as indented JSON."""
    return json.dumps(datasheet(store), ensure_ascii=False, indent=1) + "\n"
