"""``ngrameval demo``: the main job on a bundled real sample (20 SummEval documents, 16 systems), and the sample
itself (:func:`load_sample`, :func:`sample_human`) for examples and tests."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import numpy as np

from ngrameval.api import Score, score
from ngrameval.meta.correlate import HumanScores
from ngrameval.meta.plane import Plane, plane
from ngrameval.meta.significance import Comparison, compare
from ngrameval.metrics.registry import parse_specs
from ngrameval.text.pipeline import Preprocess

DEMO_METRICS = (
    "bleu,nist,aev:mt-adequacy,aev:mt-fluency,aev:summary-coverage,aev:qa-flooding-accepted,aev:qa-flooding-penalised,"
    "rouge-1,rouge-2,rouge-l,rouge-su4"
)


PLANE_CRITERION = "relevance"
# the paper's settings of the plane search: lower-case, Porter stemming, SMART stop words (B = 1, W = 2)
PLANE_TEXT = Preprocess("13a", lowercase=True, stopwords="smart", stem=True)


def sample_documents() -> list[dict[str, Any]]:
    """The bundled sample, one record per SummEval document: its references and, per system, the summary and the
    experts' scores (``summeval_sample.jsonl`` in :mod:`ngrameval.data`)."""
    text = resources.files("ngrameval.data").joinpath("summeval_sample.jsonl").read_text("utf-8")
    return [json.loads(line) for line in text.splitlines()]


def load_sample() -> tuple[dict[str, list[str]], list[list[str]]]:
    """Systems (name -> one summary per document) and the 11 references of each document."""
    docs = sample_documents()
    systems: dict[str, list[str]] = {}
    for doc in docs:
        for name, entry in doc["systems"].items():
            systems.setdefault(name, []).append(entry["summary"])
    return systems, [doc["references"] for doc in docs]


def sample_human(criterion: str) -> HumanScores:
    """The sample's expert scores (mean of 3 experts, 1-5 mapped to 0-1) of one criterion, per system and document."""
    docs = sample_documents()
    names = tuple(docs[0]["systems"])
    segment = np.array([[(doc["systems"][s][criterion] - 1) / 4 for doc in docs] for s in names])
    return HumanScores(criterion, names, segment.mean(axis=1), segment, segment.size, 0)


def run_demo() -> tuple[list[Score], Comparison, Plane]:
    """Score every sample system with BLEU, NIST, the AEv presets of Soricut & Brill (2004) and ROUGE
    (ROUGE-1.5.5's numbers; the sample's summaries are single lines, so ROUGE-L is over whole texts), rank
    the systems by BLEU with all-pairs approximate randomisation (10,000 trials, Holm), and search the
    (alpha, N) plane for the member that best explains the experts' relevance scores (the paper's settings:
    lower-case, Porter stemming, SMART stop words, B = 1, W = 2)."""
    systems, refs = load_sample()
    scores = score(systems, refs, parse_specs(DEMO_METRICS, Preprocess()))
    return scores, compare(systems, refs, "bleu"), plane(systems, refs, sample_human(PLANE_CRITERION), pre=PLANE_TEXT)
