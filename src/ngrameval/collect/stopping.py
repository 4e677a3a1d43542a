"""When a rating study stops giving out work (``[stopping]`` of STUDY.toml): once every adjacent pair of the
running ranking is settled (``when = "settled"``; :mod:`ngrameval.collect.settle`), or once the budget is spent
(``budget``: money in the ``[tiers]`` currency; ``max_answers``: paid answers).

Work is given out one trial at a time, when a trial is first shown (:meth:`Trials.next_trial
<ngrameval.collect.trials.Trials.next_trial>`); :func:`admit` decides it in the write transaction that shows it.
A trial on screen is paid work: its answer is always accepted, so the budget counts every trial **shown**
(answered or not, controls and training items included, each at its tier's rate, as the ledger pays) and a
trial is shown only if the trials shown so far plus this one stay within the budget. The check and the showing
are one transaction that no other can interleave with (SQLite: the write lock taken at ``BEGIN IMMEDIATE``;
PostgreSQL: a transaction-scoped advisory lock taken before counting), so racing clients never overspend.

Settlement is checked when a trial would be shown; the first time every adjacent pair is settled is recorded
in the ``meta`` table (key :data:`SETTLED`) and the study stays stopped (a confidence sequence allows stopping
at that data-dependent time; looking on and stopping later would not be covered). On PostgreSQL the same
advisory lock orders these decisions too: a request that read "not recorded yet" before another recorded it
would otherwise read the ranking after that (settled rankings need not stay settled with more answers) and show
a trial in a study that had stopped.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ngrameval.collect.models import Annotator, Meta, TrialRow
from ngrameval.collect.repo import Repo
from ngrameval.collect.settle import SCORINGS, Settlement, read_settlement
from ngrameval.collect.study import Study

#: the ``meta`` key recording when every adjacent pair was first settled
SETTLED = "stopping_settled"
#: the PostgreSQL advisory lock that serialises showing trials under a budget
BUDGET_LOCK = int.from_bytes(hashlib.sha256(b"ngrameval:budget").digest()[:8], "big", signed=True)
EPS = 1e-9  # money compared with this slack (a sum of rates in binary floating point)


@dataclass(frozen=True)
class StopState:
    """Whether the study gives out work: ``reason`` is ``settled``, ``budget``, ``max_answers`` or ``""``
    (running); ``detail`` one sentence for people; ``shown`` trials shown so far (paid answers committed) and
    their cost ``spent`` in the ``[tiers]`` currency."""

    stopped: bool
    reason: str
    detail: str
    shown: int
    spent: float

    def as_dict(self) -> dict[str, object]:
        return {
            "stopped": self.stopped,
            "reason": self.reason,
            "detail": self.detail,
            "shown": self.shown,
            "spent": round(self.spent, 6),
        }


def rate(study: Study, tier: int) -> float:
    """What one answered trial of ``tier`` costs (the ledger's rates)."""
    return study.tier2_rate if tier == 2 else study.tier1_rate


def committed(s: Session, study: Study) -> tuple[int, float]:
    """(trials shown so far, their cost): what is paid or will be once the trials on screen are answered."""
    rows = s.execute(select(TrialRow.tier, func.count()).where(TrialRow.lease.is_not(None)).group_by(TrialRow.tier))
    n, spent = 0, 0.0
    for tier, k in rows.all():
        n += int(k)
        spent += int(k) * rate(study, int(tier))
    return n, spent


def _over(study: Study, n: int, spent: float, tier: int | None) -> str:
    """The reason one more trial (of ``tier``; None: the cheapest) would break the budget, else ``""``."""
    stop = study.stopping
    if stop.max_answers is not None and n + 1 > stop.max_answers:
        return "max_answers"
    cost = min(study.tier1_rate, study.tier2_rate) if tier is None else rate(study, tier)
    if stop.budget is not None and spent + cost > stop.budget + EPS:
        return "budget"
    return ""


def _detail(study: Study, reason: str, n: int, spent: float, settled: str) -> str:
    stop = study.stopping
    if reason == "settled":
        return f"every adjacent pair of the ranking is settled ({settled})"
    if reason == "max_answers":
        return f"the answer budget is spent ({n} of max_answers = {stop.max_answers} trials given out)"
    if reason == "budget":
        return f"the budget is spent ({spent:.2f} of {stop.budget:.2f} {study.currency} committed)"
    parts = []
    if stop.when == "settled":
        parts.append("it stops once every adjacent pair is settled")
    if stop.budget is not None:
        parts.append(f"{spent:.2f} of {stop.budget:.2f} {study.currency} committed")
    if stop.max_answers is not None:
        parts.append(f"{n} of {stop.max_answers} answers given out")
    return "; ".join(parts) or "no [stopping] rules"


def state(s: Session, study: Study) -> StopState:
    """The study's stopping state as stored (the settled record) and counted (the budget)."""
    n, spent = committed(s, study)
    row = s.get(Meta, SETTLED) if study.stopping.when == "settled" else None
    reason = "settled" if row is not None else _over(study, n, spent, None)
    detail = _detail(study, reason, n, spent, row.value if row is not None else "")
    return StopState(bool(reason), reason, detail, n, spent)


def _record_settled(s: Session, got: Settlement, sqlite: bool) -> None:
    """Record the first time every adjacent pair is settled (once: concurrent finders wait for one another)."""
    if not sqlite:
        s.execute(select(func.pg_advisory_xact_lock(BUDGET_LOCK)))
    if s.get(Meta, SETTLED) is None:
        s.add(Meta(key=SETTLED, value=f"after {got.counted()} on {got.criterion}"))
        s.flush()


def admit(s: Session, study: Study, trial: TrialRow, sqlite: bool) -> bool:
    """Whether ``trial`` may be shown now; called in the write transaction that shows it (module docstring)."""
    stop = study.stopping
    settled = stop.when == "settled" and study.kind in SCORINGS
    budget = stop.budget is not None or stop.max_answers is not None
    if not (settled or budget):
        return True
    if not sqlite:  # one decision at a time, read after the lock: every earlier one (a settlement recorded, a
        s.execute(select(func.pg_advisory_xact_lock(BUDGET_LOCK)))  # trial shown) is seen
    if settled:
        if s.get(Meta, SETTLED) is not None:
            return False
        got = read_settlement(s, study)
        if got.all_settled:
            _record_settled(s, got, sqlite)
            return False
    if not budget:
        return True
    n, spent = committed(s, study)
    return not _over(study, n, spent, trial.tier)


def overview(repo: Repo) -> tuple[Settlement | None, StopState | None]:
    """The running ranking and the stopping state, for the admin page and ``collect status`` (both None for a
    kind without a ranking, or fewer than 2 systems). Under ``when = "settled"`` a ranking settled since the
    last request for work counts as stopped already: that request will record it and give out nothing."""
    study = repo.study
    if study.kind not in SCORINGS or len({i.system for i in study.items if i.expected is None}) < 2:
        return None, None
    with repo.session() as s:
        got, now = read_settlement(s, study), state(s, study)
    if study.stopping.when == "settled" and got.all_settled and now.reason != "settled":
        why = f"after {got.counted()} on {got.criterion}"
        now = StopState(True, "settled", _detail(study, "settled", now.shown, now.spent, why), now.shown, now.spent)
    return got, now


def halted(repo: Repo) -> StopState | None:
    """The stopping state of a study with ``[stopping]`` rules (None without: nothing to read)."""
    stop = repo.study.stopping
    if stop.when != "settled" and stop.budget is None and stop.max_answers is None:
        return None
    with repo.session() as s:
        return state(s, repo.study)


def finished(repo: Repo) -> str:
    """Why the study gives out no more work (one sentence), or ``""`` while it does."""
    got = halted(repo)
    return got.detail if got is not None and got.stopped else ""


def closed_to(repo: Repo, platform: str, worker: str) -> bool:
    """Whether a study that stopped turns this worker away at arrival: a worker it has not seen before (one it
    knows may come back for a trial on their screen and their completion code)."""
    if not finished(repo):
        return False
    with repo.session() as s:
        known = s.scalar(select(Annotator.id).where(Annotator.platform == platform, Annotator.external_id == worker))
    return known is None
