"""What the admin pages show, kept up to date instead of recomputed per page load: the description checks of
:mod:`ngrameval.collect.quality` (sentence BLEU of a description against the others of its stimulus) are
recomputed only for the stimuli that got a new description since the last look, and the judges' checks of a
rating study only when the ratings changed. Both are caches of one process (``collect serve`` runs one worker)."""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable
from typing import TypeVar

from sqlalchemy import func, select

from ngrameval.collect import export, quality
from ngrameval.collect.models import DescriptionRow, RatingRow, StimulusRow, TrialRow
from ngrameval.collect.store import Store
from ngrameval.errors import MissingDependencyError

PAGE_SIZE = 100  # annotators per admin page
T = TypeVar("T")


class DescriptionChecks:
    """Per-description and per-annotator checks of a describe or paraphrase study. :meth:`refresh` reads only
    the descriptions added since the last refresh and re-checks only their stimuli; when descriptions were
    deleted (an annotator's data), it starts again from all of them."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._rows: dict[int, tuple[int, int, str, str]] = {}  # id -> (stimulus, annotator, text, language)
        self._by_stimulus: dict[int, list[int]] = defaultdict(list)  # stimulus -> description ids, in id order
        self.per_description: dict[int, quality.DescriptionCheck] = {}
        self.per_annotator: dict[int, quality.AnnotatorCheck] = {}
        self._detect: quality.Detect | None = None

    def _sources(self) -> dict[str, str]:
        """Stimulus id (as the checks key it) -> its text: what a paraphrase is measured against for copying."""
        with self.store.session() as s:
            return {str(i): t for i, t in s.execute(select(StimulusRow.id, StimulusRow.text)).all()}

    def _detector(self) -> quality.Detect | None:
        """The language identifier of ``[quality] language_check`` (py3langid, loaded once); None when the check
        is off or the package is missing (the extra ``langid``, part of ``collect``): then no text is flagged
        for its detected language, only for the language declared."""
        rules = self.store.study.quality
        if not rules.language_check:
            return None
        if self._detect is None:
            try:
                self._detect = quality.language_detector(rules.languages)
            except MissingDependencyError:
                return None
        return self._detect

    def _fetch(self, after: int) -> tuple[list[tuple[int, int, int, str, str]], int]:
        with self.store.session() as s:
            live = DescriptionRow.skipped.is_(False)
            rows = s.execute(
                select(
                    DescriptionRow.id,
                    DescriptionRow.stimulus_id,
                    DescriptionRow.annotator_id,
                    DescriptionRow.text,
                    DescriptionRow.language,
                )
                .where(live, DescriptionRow.id > after)
                .order_by(DescriptionRow.id)
            ).all()
            n = int(s.scalar(select(func.count()).where(live)) or 0)
        return [tuple(r) for r in rows], n  # type: ignore[misc]

    def refresh(self) -> None:
        with self._lock:
            top = max(self._rows, default=0)
            new, n = self._fetch(top)
            if len(self._rows) + len(new) != n:  # deleted rows, or rows committed out of id order: start again
                self._rows.clear()
                self._by_stimulus.clear()
                self.per_description.clear()
                new, _ = self._fetch(0)
            if not new and self.per_annotator:
                return
            for did, sid, aid, text, language in new:
                self._rows[did] = (sid, aid, text, language)
                self._by_stimulus[sid].append(did)
            touched = {sid for _, sid, _, _, _ in new}
            texts = {str(sid): [self._rows[d][2:] for d in self._by_stimulus[sid]] for sid in touched}
            if texts:
                study = self.store.study
                sources = self._sources() if study.kind == "paraphrase" else None
                checks = quality.description_checks(texts, study.language, sources, study.quality, self._detector())
                for sid in touched:
                    for i, did in enumerate(self._by_stimulus[sid]):
                        self.per_description[did] = checks[str(sid), i]
            per_annotator: dict[int, list[quality.DescriptionCheck]] = defaultdict(list)
            for did, (_, aid, _, _) in self._rows.items():
                per_annotator[aid].append(self.per_description[did])
            self.per_annotator = quality.annotator_checks(per_annotator)


def judge_summaries(store: Store) -> list[export.JudgeSummary | export.PairJudge]:
    """The judges' checks of a rating study (:func:`ngrameval.collect.export.judgments`) or of a side-by-side one
    (:func:`ngrameval.collect.export.pair_judges`)."""
    if store.study.kind == "pairwise":
        return list(export.pair_judges(store))
    return list(export.judgments(store)[1])


class JudgeChecks:
    """The judges' checks of a rating or side-by-side study (:func:`judge_summaries`), recomputed only when the
    ratings or the answered trials changed (their number or the newest rating's id)."""

    def __init__(
        self, store: Store, compute: Callable[[Store], list[export.JudgeSummary | export.PairJudge]] | None = None
    ) -> None:
        self.store = store
        self.compute = compute or judge_summaries
        self._lock = threading.Lock()
        self._key: tuple[int, int, int] | None = None
        self.by_judge: dict[str, export.JudgeSummary | export.PairJudge] = {}

    def refresh(self) -> None:
        with self._lock:
            with self.store.session() as s:
                n, top = s.execute(select(func.count(), func.coalesce(func.max(RatingRow.id), 0))).one()
                answered = int(s.scalar(select(func.count(TrialRow.token))) or 0)
            if (n, top, answered) != self._key:
                self.by_judge = {j.judge: j for j in self.compute(self.store)}
                self._key = (int(n), int(top), answered)


def page_of(rows: list[T], page: int) -> tuple[list[T], int, int]:
    """(the rows of 1-based ``page`` of :data:`PAGE_SIZE`, the page shown (clamped), the number of pages)."""
    pages = max(1, -(-len(rows) // PAGE_SIZE))
    page = min(max(page, 1), pages)
    return rows[(page - 1) * PAGE_SIZE : page * PAGE_SIZE], page, pages
