"""``ngrameval demo``: the main job on a bundled real sample (20 SummEval documents, 16 systems)."""

from __future__ import annotations

import json
from importlib import resources

from ngrameval.api import Score, score
from ngrameval.meta.significance import Comparison, compare
from ngrameval.metrics.registry import parse_specs
from ngrameval.text.pipeline import Preprocess

DEMO_METRICS = (
    "bleu,nist,aev:mt-adequacy,aev:mt-fluency,aev:summary-coverage,aev:qa-flooding-accepted,aev:qa-flooding-penalised,"
    "rouge-1,rouge-2,rouge-l,rouge-su4"
)


def load_sample() -> tuple[dict[str, list[str]], list[list[str]]]:
    """Systems (name -> one summary per document) and the 11 references of each document."""
    text = resources.files("ngrameval.data").joinpath("summeval_sample.jsonl").read_text("utf-8")
    docs = [json.loads(line) for line in text.splitlines()]
    systems: dict[str, list[str]] = {}
    for doc in docs:
        for name, entry in doc["systems"].items():
            systems.setdefault(name, []).append(entry["summary"])
    return systems, [doc["references"] for doc in docs]


def run_demo() -> tuple[list[Score], Comparison]:
    """Score every sample system with BLEU, NIST, the AEv presets of Soricut & Brill (2004) and ROUGE
    (ROUGE-1.5.5's numbers; the sample's summaries are single lines, so ROUGE-L is over whole texts), and rank
    the systems by BLEU with all-pairs approximate randomisation (10,000 trials, Holm)."""
    systems, refs = load_sample()
    scores = score(systems, refs, parse_specs(DEMO_METRICS, Preprocess()))
    return scores, compare(systems, refs, "bleu")
