"""Exports of a study: descriptions in the MSVD corpus layout (``ngrameval corpus stats|export|baseline`` read
them), ratings as a long judgments CSV (``ngrameval correlate|agreement|plane`` read it) with the system outputs
as text files, ESA / MQM error spans as Google's MQM TSV (``--judgments-layout mqm|esa`` reads it), the payment
ledger, and everything of one annotator. Worker ids are pseudonymised (a keyed HMAC,
stable within the study) unless ``raw_ids``."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ngrameval.collect import quality
from ngrameval.collect.store import Annotator, Store
from ngrameval.corpus.msvd import CSV_COLUMNS
from ngrameval.io.write import write_atomic

JUDGMENT_COLUMNS = ("system", "segment", "judge", "group", "criterion", "score", "z", "tier")


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def cell(value: Any) -> Any:
    """A CSV cell a spreadsheet will not run: text starting with = + - @, a tab or a carriage return gets a
    leading single quote (OWASP's advice against formula injection); numbers (a z-score of -0.5) stay numbers."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def _csv(rows: list[list[Any]]) -> str:
    buf = io.StringIO(newline="")
    csv.writer(buf, lineterminator="\n").writerows([cell(v) for v in row] for row in rows)
    return buf.getvalue()


def worker(store: Store, a: Annotator, raw_ids: bool) -> str:
    return f"{a.platform}:{a.external_id}" if raw_ids else store.pseudonym(a)


def video_id(key: str, start: int | None, end: int | None) -> str:
    """The VideoID of a stimulus: its key without a trailing ``_start_end`` (MSVD clip keys carry it)."""
    m = re.fullmatch(r"(.+)_(\d+)_(\d+)", key)
    if m and start is not None and end is not None and (int(m[2]), int(m[3])) == (start, end):
        return m[1]
    return key


def descriptions_csv(store: Store, raw_ids: bool = False) -> str:
    """The descriptions as the MSVD CSV: ``Source`` is ``clean`` for tier 2 (qualified annotators) and
    ``unverified`` for tier 1; ``AnnotationTime`` is the seconds spent; image and text stimuli have Start and
    End 0. A paraphrase study adds a last column ``SourceSentence``, the sentence paraphrased (the MSVD readers
    take the columns by name and ignore it)."""
    paraphrase = store.study.kind == "paraphrase"
    rows: list[list[Any]] = [[*CSV_COLUMNS, *(["SourceSentence"] if paraphrase else [])]]
    for d, s, a in store.descriptions():
        rows.append(
            [
                video_id(s.key, s.start, s.end),
                s.start or 0,
                s.end or 0,
                worker(store, a, raw_ids),
                "clean" if d.tier == 2 else "unverified",
                round(d.seconds),
                d.language,
                d.text,
                *([s.text] if paraphrase else []),
            ]
        )
    return _csv(rows)


@dataclass(frozen=True)
class Reliability:
    """One judge's reliability estimates (:mod:`ngrameval.meta.reliability`), averaged over the criteria:
    ``bias`` and ``noise`` of the additive rater model (noise: root mean square over criteria), ``weight`` the
    mean normalised 1 / noise^2 (1 is an average judge; what ``--min-reliability`` compares with),
    ``competence`` MACE's theta on Likert criteria (None: no Likert criterion)."""

    bias: float
    noise: float
    weight: float
    competence: float | None = None


@dataclass(frozen=True)
class JudgeSummary:
    judge: str
    group: str
    check: quality.JudgeCheck
    reliability: Reliability | None = None


Record = tuple[str, str, str, float]  # (judge, system, segment, score) of one normal trial and criterion


def sig(x: float) -> float:
    """``x`` to 6 significant digits (a weight can be 1e-12 beside 1.5: rounding to places would make it 0)."""
    return float(f"{x:.6g}")


Fit = dict[str, tuple[float, float, float, float | None]]  # judge -> (bias, noise, weight, competence)


def reliabilities(fits: dict[str, Fit]) -> dict[str, Reliability]:
    """Judge -> :class:`Reliability`, from criterion -> :func:`fit_criterion`."""
    per: dict[str, list[tuple[float, float, float, float | None]]] = defaultdict(list)
    for fit in fits.values():
        for judge, f in fit.items():
            per[judge].append(f)
    out = {}
    for judge, fs in per.items():
        comps = [c for *_, c in fs if c is not None]
        out[judge] = Reliability(
            round(sum(f[0] for f in fs) / len(fs), 6),
            round((sum(f[1] ** 2 for f in fs) / len(fs)) ** 0.5, 6),
            sig(sum(f[2] for f in fs) / len(fs)),
            round(sum(comps) / len(comps), 6) if comps else None,
        )
    return out


def fit_criterion(recs: list[Record], points: int | None, seed: int = 0) -> Fit:
    """Judge -> (bias, noise, weight, competence) on one criterion's normal trials: the rater model
    (item = system and segment), and MACE when ``points`` (a Likert criterion) makes scores 1..points labels."""
    import numpy as np

    from ngrameval.meta.reliability import mace, rater_model

    judges = list(dict.fromkeys(r[0] for r in recs))
    items = list(dict.fromkeys((r[1], r[2]) for r in recs))
    jx = {j: k for k, j in enumerate(judges)}
    ix = {it: k for k, it in enumerate(items)}
    ii = np.array([ix[r[1], r[2]] for r in recs], dtype=np.int64)
    jj = np.array([jx[r[0]] for r in recs], dtype=np.int64)
    xs = np.array([r[3] for r in recs], dtype=float)
    m = rater_model(ii, jj, xs)
    comp: list[float | None] = [None] * len(judges)
    labels = np.rint(xs).astype(np.int64) - 1
    if points and points >= 2 and (labels >= 0).all() and (labels < points).all() and np.allclose(labels + 1, xs):
        answers = np.full((len(items), len(judges)), -1, dtype=np.int64)
        answers[ii, jj] = labels
        comp = [float(c) for c in mace(answers, points, seed=seed).competence]
    return {j: (float(m.bias[k]), float(m.noise[k]), float(m.weight[k]), comp[k]) for k, j in enumerate(judges)}


def judgments(
    store: Store, raw_ids: bool = False, weight: bool = False, min_reliability: float | None = None
) -> tuple[str, list[JudgeSummary]]:
    """(the long judgments CSV, per-judge checks and reliability). Rows are the normal trials (controls are left
    out; they inform the checks); ``z`` is the judge's z-score of the score over their normal trials of that
    criterion. ``weight``: a last column ``weight``, the judge's 1 / noise^2 on that criterion normalised to
    mean 1 over the judges (:func:`ngrameval.meta.reliability.rater_model`); ``min_reliability``: leave out the
    rows of judges whose :attr:`Reliability.weight` is below it (their judges.csv rows stay, marked)."""
    rows = store.ratings()
    names = {a.id: worker(store, a, raw_ids) for _, _, a in rows}
    groups = {a.id: a.group for _, _, a in rows}
    by_crit: dict[str, list[tuple[str, int, str, int | None, float | None, float]]] = defaultdict(list)
    normal: dict[tuple[str, str], list[float]] = defaultdict(list)
    for t, r, a in rows:
        by_crit[r.criterion].append((names[a.id], t.position, t.kind, t.of_position, t.expected, r.score))
        if t.kind == "normal":
            normal[names[a.id], r.criterion].append(r.score)
    moments = {k: quality.z_scores({"_": v})["_"] for k, v in normal.items()}
    recs: dict[str, list[Record]] = defaultdict(list)
    for t, r, a in rows:
        if t.kind == "normal":
            recs[r.criterion].append((names[a.id], t.system, t.item, r.score))
    likert = {c.name: c.points for c in store.study.criteria if c.scale == "likert"}
    fits = {c: fit_criterion(rs, likert.get(c)) for c, rs in recs.items()}
    rel = reliabilities(fits)
    crit_weight = {(j, c): f[2] for c, fit in fits.items() for j, f in fit.items()}
    dropped = {j for j, x in rel.items() if min_reliability is not None and x.weight < min_reliability}
    out: list[list[Any]] = [[*JUDGMENT_COLUMNS, *(["weight"] if weight else [])]]
    for t, r, a in rows:
        if t.kind != "normal" or names[a.id] in dropped:
            continue
        mean, sd = moments[names[a.id], r.criterion]
        extra = [sig(crit_weight[names[a.id], r.criterion])] if weight else []
        out.append(
            [
                t.system,
                t.item,
                names[a.id],
                groups[a.id],
                r.criterion,
                r.score,
                round(quality.z(r.score, mean, sd), 6),
                t.tier,
                *extra,
            ]
        )
    checks: dict[str, list[quality.JudgeCheck]] = defaultdict(list)
    for crit_rows in by_crit.values():
        for j, (rep, kn, bad) in quality.pairs_by_judge(crit_rows).items():
            checks[j].append(quality.judge_check(rep, kn, bad, store.study.alpha))
    judge_groups = {names[k]: g for k, g in groups.items()}
    summaries = [JudgeSummary(j, judge_groups[j], cs[0], rel.get(j)) for j, cs in checks.items()]
    return _csv(out), summaries


def judges_csv(summaries: list[JudgeSummary], min_reliability: float | None = None) -> str:
    """Per-judge consistency: repeats, known answers, the bad-reference test (p, flag, and whether the judge had
    enough non-zero pairs for the test to reach its level); reliability: ``bias``, ``noise``, ``weight`` and
    (Likert criteria) MACE's ``competence`` (:class:`Reliability`); with ``min_reliability``, ``dropped``: the
    judge's weight is below it and their judgments were left out of judgments.csv."""
    head = ["judge", "group", "repeat_diff", "known_error", "bad_pairs", "bad_p", "flagged", "decisive"]
    head += ["bias", "noise", "weight", "competence", *(["dropped"] if min_reliability is not None else [])]
    body = []
    for s in summaries:
        r = s.reliability
        row = [s.judge, s.group, s.check.repeat_diff, s.check.known_error, s.check.bad_pairs, s.check.bad_p]
        row += [s.check.flagged, s.check.decisive]
        row += [r.bias, r.noise, r.weight, r.competence] if r else [None] * 4
        if min_reliability is not None:
            row.append(r is not None and r.weight < min_reliability)
        body.append(row)
    return _csv([head, *body])


def outputs(store: Store) -> dict[str, str]:
    """File name -> content: ``<system>.txt`` (one output per item, in item order), ``segments.txt`` (the item
    ids, for ``--segment-ids``) and ``source.txt`` (what the outputs were judged against)."""
    items = [i for i in store.study.items if i.expected is None]
    order = list(dict.fromkeys(i.item for i in items))
    by = {(i.item, i.system): i for i in items}
    files = {
        f"{sysname}.txt": "".join(by[it, sysname].output.replace("\n", " ") + "\n" for it in order)
        for sysname in store.study.systems
        if all((it, sysname) in by for it in order)
    }
    files["segments.txt"] = "".join(f"{it}\n" for it in order)
    first = store.study.systems[0] if store.study.systems else None
    files["source.txt"] = "".join(by[it, first].source.replace("\n", " ") + "\n" for it in order) if first else ""
    return files


def ledger_csv(store: Store, raw_ids: bool = False) -> str:
    """One row per annotator and tier: submissions (descriptions, or answered rating trials), rate, amount, and
    the completion codes their assignments earned (``;``-separated; see :func:`assignments_csv`)."""
    st = store.study
    counts: dict[tuple[int, int], int] = defaultdict(int)
    people: dict[int, Annotator] = {}
    for d, _, a in store.descriptions():
        counts[a.id, d.tier] += 1
        people[a.id] = a
    seen: set[int] = set()
    for t, a in [(t, a) for t, _, a in store.ratings()] + [(t, a) for t, _, a in store.preferences()]:
        if t.id not in seen:
            seen.add(t.id)
            counts[a.id, t.tier] += 1
            people[a.id] = a
    codes: dict[int, list[str]] = defaultdict(list)
    for g, a, n in store.assignments():
        if n >= st.min_answers:
            codes[a.id].append(g.code)
    rows: list[list[Any]] = [["worker", "platform", "tier", "submissions", "rate", "amount", "currency", "codes"]]
    for (aid, tier), n in sorted(counts.items()):
        rate = st.tier2_rate if tier == 2 else st.tier1_rate
        a = people[aid]
        paid = [worker(store, a, raw_ids), a.platform, tier, n, rate, round(n * rate, 4), st.currency]
        rows.append([*paid, ";".join(codes[aid])])
    return _csv(rows)


def annotator_json(store: Store, aid: int) -> str:
    """Everything stored about one annotator (a subject access request), as JSON."""
    a = store.annotator(aid)
    if a is None:
        raise ValueError(f"no annotator {aid}")
    data = {
        "platform": a.platform,
        "worker_id": a.external_id,
        "pseudonym": store.pseudonym(a),
        "status": a.status,
        "group": a.group,
        "created": a.created.isoformat(),
        "descriptions": [
            {"stimulus": s.key, "text": d.text, "language": d.language, "comment": d.comment, "seconds": d.seconds}
            for d, s, _ in store.descriptions(aid)
        ],
        "ratings": [
            {"item": t.item, "system": t.system, "kind": t.kind, "criterion": r.criterion, "score": r.score}
            for t, r, _ in store.ratings(aid)
        ],
        "preferences": [
            {
                "item": t.item,
                "system_a": t.system,
                "system_b": p.system_b,
                "left": p.left,
                "kind": t.kind,
                "winner": p.winner,
                "reason": p.reason,
                "seconds": t.seconds,
            }
            for t, p, _ in store.preferences(aid)
        ],
    }
    if store.study.spans is not None:
        from ngrameval.collect.spans import answers

        data["spans"] = [
            {"item": t.item, "system": t.system, "kind": t.kind, "marks": [dataclasses.asdict(m) for m in marks]}
            for t, _, marks, _ in answers(store, aid, controls=True)
        ]
    return json.dumps(data, ensure_ascii=False, indent=1) + "\n"


def export_all(
    store: Store,
    out: Path,
    raw_ids: bool = False,
    datasheet: bool = False,
    weight: bool = False,
    min_reliability: float | None = None,
    drop_flagged: bool = False,
) -> list[Path]:
    """Write every export of the study into directory ``out`` (atomically, file by file); the paths written.
    ``datasheet``: also ``datasheet.json`` (:mod:`ngrameval.collect.datasheet`); ``weight`` and
    ``min_reliability`` as :func:`judgments` takes them; ``drop_flagged`` (side-by-side): leave the judges the
    bad-reference test flags out of preferences.csv (judges.csv: ``dropped``)."""
    out.mkdir(parents=True, exist_ok=True)
    files = {"ledger.csv": ledger_csv(store, raw_ids), "assignments.csv": assignments_csv(store, raw_ids)}
    if datasheet:
        from ngrameval.collect.datasheet import datasheet_json

        files["datasheet.json"] = datasheet_json(store)
    if store.study.kind == "pairwise":
        judges = pair_judges(store, raw_ids)
        drop = frozenset(j.judge for j in judges if j.check.flagged and drop_flagged)
        files["preferences.csv"], files["preference_repeats.csv"] = preferences_csv(store, raw_ids, drop)
        files["preference_controls.csv"] = preference_controls_csv(store, raw_ids)
        files["judges.csv"] = pair_judges_csv(judges, drop_flagged)
        files.update({f"outputs/{k}": v for k, v in outputs(store).items()})
    elif store.study.rating:
        text, summaries = judgments(store, raw_ids, weight, min_reliability)
        files["judgments.csv"] = text
        files["judges.csv"] = judges_csv(summaries, min_reliability)
        files.update({f"outputs/{k}": v for k, v in outputs(store).items()})
    if store.study.spans is not None:
        files.update(span_files(store, raw_ids))
    else:
        files["descriptions.csv"] = descriptions_csv(store, raw_ids)
    written = []
    for name, text in files.items():
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(str(path), text)
        written.append(path)
    return written


def span_files(store: Store, raw_ids: bool = False) -> dict[str, str]:
    """An esa / mqm study's ``spans.tsv`` (Google's MQM layout, :func:`ngrameval.collect.spans.spans_tsv`) and
    ``outputs/segments.txt`` naming each item ``doc:doc_id`` as the span file does (for ``--segment-ids``)."""
    from ngrameval.collect.spans import segment_names, spans_tsv

    return {
        "spans.tsv": spans_tsv(store, lambda a: worker(store, a, raw_ids)),
        "outputs/segments.txt": "".join(f"{name}\n" for name in segment_names(store.study)),
    }


def assignments_csv(store: Store, raw_ids: bool = False) -> str:
    """One row per platform assignment: its platform id, the worker, its own completion code, its real answers
    and whether they earn the code (``min_answers``); what ``collect verify`` checks codes against."""
    rows: list[list[Any]] = [["platform", "assignment", "worker", "code", "answers", "earned", "created"]]
    for g, a, n in store.assignments():
        external = g.external if raw_ids or g.platform == "mturk" else ""  # invitation tokens are credentials
        rows.append(
            [
                g.platform,
                external,
                worker(store, a, raw_ids),
                g.code,
                n,
                n >= store.study.min_answers,
                g.created.isoformat(timespec="seconds"),
            ]
        )
    return _csv(rows)


def verify_codes(store: Store, text: str, name: str) -> tuple[str, int]:
    """Check completion codes pasted from a platform: ``text`` is one code a line, or MTurk's batch results CSV
    (columns ``Answer.code``, and ``AssignmentId`` / ``WorkerId`` when present, checked against the code's
    assignment). Returns (a report a line per code and a summary, how many are not valid)."""
    by_code = {g.code: (g, a, n) for g, a, n in store.assignments()}
    lines = text.splitlines()
    rows: list[tuple[int, dict[str, str]]]
    if lines and "Answer.code" in next(csv.reader(lines[:1])):
        reader = csv.DictReader(lines)
        rows = [(reader.line_num, r) for r in reader]
    else:
        rows = [(k, {"Answer.code": line}) for k, line in enumerate(lines, 1) if line.strip()]
    out: list[str] = []
    bad, first = 0, dict[str, int]()
    for k, r in rows:
        code = (r.get("Answer.code") or "").strip().strip('"')
        where = f"{name}:{k}: {code[:80]!r}"
        hit = by_code.get(code)
        if hit is None:
            msg = "not a code of this study"
        elif code in first:
            msg = f"repeated (first at line {first[code]})"
        else:
            g, a, n = hit
            who = worker(store, a, False)
            if r.get("AssignmentId", g.external) != g.external or r.get("WorkerId", a.external_id) != a.external_id:
                msg = f"belongs to another assignment or worker (code of {who}, assignment {g.external})"
            elif n < store.study.min_answers:
                msg = f"issued to {who}, but {n} answer(s) are fewer than min_answers = {store.study.min_answers}"
            else:
                first[code] = k
                out.append(f"{where}: valid ({who}, {n} answer(s))")
                continue
        bad += 1
        out.append(f"{where}: NOT VALID: {msg}")
    out.append(f"{len(rows) - bad} valid, {bad} not valid, of {len(rows)} code(s)")
    return "\n".join(out) + "\n", bad


PREFERENCE_COLUMNS = ("item", "system_a", "system_b", "winner", "rater", "group", "seconds", "reason", "left",
                      "tier", "position")  # fmt: skip


def preferences_csv(store: Store, raw_ids: bool = False, dropped: frozenset[str] = frozenset()) -> tuple[str, str]:
    """A side-by-side study's answers in :mod:`ngrameval.io.preferences`' layout (``item, system_a, system_b,
    winner`` in a|b|tie; ``ngrameval compare --preferences`` and ``correlate --judgments-layout preferences`` read
    it) plus the rater (pseudonymised), their group, the seconds taken, the reason, ``left`` (the system shown on
    the left, as "A"), the tier and the trial's position: (the comparisons, the repeat controls — a repeat shows
    an earlier comparison of the judge with the sides swapped; ``position`` is its original's and the last column,
    ``original_winner``, the winner answered there, so a judge's consistency can be read off). Only normal
    comparisons are preferences; bad references and training comparisons go to :func:`preference_controls_csv`.
    The comparisons of the judges named in ``dropped`` are left out."""
    rows = store.preferences(kinds=("normal", "repeat"))
    first: dict[tuple[int, int | None], str | None] = {(t.annotator_id, t.position): p.winner for t, p, _ in rows}
    out: dict[bool, list[list[Any]]] = {False: [list(PREFERENCE_COLUMNS)],
                                        True: [[*PREFERENCE_COLUMNS, "original_winner"]]}  # fmt: skip
    for t, p, a in rows:
        if worker(store, a, raw_ids) in dropped:
            continue
        repeat = t.kind == "repeat"
        left = t.system if p.left == "a" else p.system_b
        row = [t.item, t.system, p.system_b, p.winner, worker(store, a, raw_ids), a.group, round(t.seconds, 3),
               p.reason, left, t.tier, t.of_position if repeat else t.position]  # fmt: skip
        out[repeat].append([*row, first.get((t.annotator_id, t.of_position))] if repeat else row)
    return _csv(out[False]), _csv(out[True])


CONTROL_COLUMNS = ("kind", "item", "system", "chose", "rater", "group", "seconds", "reason", "left", "tier",
                   "position", "of_position")  # fmt: skip


def preference_controls_csv(store: Store, raw_ids: bool = False) -> str:
    """The answered bad-reference and training comparisons of a side-by-side study (never preferences: both
    sides are one system's output): ``kind`` (bad, training), the item and system whose output was shown against
    its own degraded copy, ``chose`` (``original``, ``copy``, ``tie``), the rater, group, seconds, reason,
    ``left`` (``original`` or ``copy``: what the page showed as A), tier, position and ``of_position`` (a bad
    reference's comparison in the judge's schedule)."""
    head: list[list[Any]] = [list(CONTROL_COLUMNS)]
    names = {"a": "original", "b": "copy", "tie": "tie"}
    for t, p, a in store.preferences(kinds=("bad", "training")):
        head.append([t.kind, t.item, t.system, names.get(p.winner or "", p.winner), worker(store, a, raw_ids),
                     a.group, round(t.seconds, 3), p.reason, names[p.left], t.tier, t.position,
                     t.of_position])  # fmt: skip
    return _csv(head)


@dataclass(frozen=True)
class PairJudge:
    """One judge of a side-by-side study and their :class:`ngrameval.collect.quality.PairCheck`."""

    judge: str
    group: str
    check: quality.PairCheck


def pair_judges(store: Store, raw_ids: bool = False) -> list[PairJudge]:
    """Each side-by-side judge's repeat agreement, bad-reference test (at ``[rating] alpha``) and training
    outcome, in judge order; judges with no answered comparison are left out."""
    winners: dict[tuple[int, int], str | None] = {}
    per: dict[int, tuple[Annotator, list[tuple[str, str]], list[str]]] = {}
    rows = store.preferences()
    for t, p, _ in rows:
        winners[t.annotator_id, t.position] = p.winner
    for t, p, a in rows:
        _, reps, bad = per.setdefault(a.id, (a, [], []))
        if t.kind == "repeat" and t.of_position is not None and (a.id, t.of_position) in winners:
            reps.append((str(winners[a.id, t.of_position]), str(p.winner)))
        elif t.kind == "bad":
            bad.append(str(p.winner))
    alpha = store.study.alpha
    return [
        PairJudge(worker(store, a, raw_ids), a.group, quality.pair_check(reps, bad, alpha, a.trained))
        for a, reps, bad in per.values()
    ]


PAIR_JUDGE_COLUMNS = ("judge", "group", "repeats", "repeat_agreement", "bad_pairs", "bad_preferred", "bad_ties",
                      "bad_p", "flagged", "decisive", "training")  # fmt: skip


def pair_judges_csv(judges: list[PairJudge], dropped: bool = False) -> str:
    """:func:`pair_judges` as CSV (``judges.csv`` of a side-by-side study); ``dropped``: a last column saying
    the judge's comparisons were left out of preferences.csv (``--drop-flagged``)."""
    body: list[list[Any]] = [[*PAIR_JUDGE_COLUMNS, *(["dropped"] if dropped else [])]]
    for j in judges:
        c = j.check
        agree = None if c.repeat_agreement is None else round(c.repeat_agreement, 6)
        row = [j.judge, j.group, c.repeats, agree, c.bad_pairs, c.bad_preferred, c.bad_ties,
               None if c.bad_p is None else sig(c.bad_p), c.flagged, c.decisive, c.training]  # fmt: skip
        body.append([*row, c.flagged] if dropped else row)
    return _csv(body)
