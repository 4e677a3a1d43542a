"""Rating studies for the running-ranking and stopping tests: a manifest whose systems carry HTML in their
names (the pages must escape it), ``[stopping]`` rules, and judges that answer through the store."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ngrameval.collect.store import Store
from ngrameval.collect.study import load_study

#: systems of the test manifest; the last one's name is HTML (shown escaped, never as markup)
SYSTEMS = ("good", "bad", "<b>worse</b>")

STUDY = """
[study]
name = "settle"
kind = "rate"
title = "Rate these sentences"
completion_code = "SETTLE"
manifest = "items.csv"
[instructions]
text = "Rate each sentence."
[tiers]
tier1_rate = 0.1
tier2_rate = 0.25
currency = "EUR"
[[criteria]]
name = "fluency"
scale = "likert"
points = 5
[rating]
repeats = 0
seed = 4
"""


def write_settle_study(root: Path, stopping: str = "", n_items: int = 6, systems: tuple[str, ...] = SYSTEMS) -> Path:
    """A rate study of ``systems`` on ``n_items`` items with the ``[stopping]`` table ``stopping``."""
    root.mkdir(parents=True, exist_ok=True)
    rows = ["item,system,output,source"]
    rows += [f"s{i},{s},output {k} of item {i},source {i}" for i in range(n_items) for k, s in enumerate(systems)]
    (root / "items.csv").write_text("\n".join(rows) + "\n")
    path = root / "study.toml"
    path.write_text(STUDY + (f"[stopping]\n{stopping}\n" if stopping else ""))
    return path


def score_of(system: str) -> float:
    """A judge who rates ``good`` 5, ``bad`` 2 and the third 1."""
    return {"good": 5.0, "bad": 2.0}.get(system, 1.0)


def clear_score(system: str) -> float:
    """A judge who rates ``good`` 5, ``bad`` 3 and the third 1: every pair 2 points apart."""
    return {"good": 5.0, "bad": 3.0}.get(system, 1.0)


def judge(store: Store, name: str, score: Callable[[str], float] = score_of) -> int:
    """One invited judge (``name`` only labels the call) who answers every trial they are given with ``score``
    of its system; their number of answers."""
    (token,) = store.add_invites(1)
    aid = store.use_invite(token)
    assert aid is not None
    store.assign_trials(aid)
    n = 0
    while (t := store.next_trial(aid)) is not None:
        assert t.lease is not None
        assert store.submit_rating(aid, t.lease, {"fluency": score(t.system)}).outcome == "stored"
        n += 1
    return n


def open_store(path: Path, url: str | None = None, admin: bool = False) -> Store:
    """The study's store, initialised; with ``admin``, an admin ``admin`` (password hashing takes a while)."""
    store = Store(load_study(path), url)
    store.init()
    if admin:
        store.add_admin("admin", "correct horse")
    return store


def judge_every_trial(store: Store, answer: Callable[[int, str, str], None]) -> None:
    """One new judge (by invitation) answering every trial the store gives them: ``answer(judge, lease, system)``
    stores the answer to the trial shown under form token ``lease``."""
    (token,) = store.add_invites(1)
    aid = store.use_invite(token)
    assert aid is not None
    store.assign_trials(aid)
    while (t := store.next_trial(aid)) is not None:
        assert t.lease is not None
        answer(aid, t.lease, t.system)
