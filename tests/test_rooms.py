"""Issue 30, items 1 and 2: metrics bring their own rows, and orchestration (api, jobs, scale/) never asks which
class a metric is; the old import paths of the moved modules stay as deprecated aliases."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

import ngrameval.metrics as metrics_package
from ngrameval.api import measure, score
from ngrameval.metrics.registry import MetricSpec
from ngrameval.metrics.rows import Batch, RowMetric, Rows
from ngrameval.ngrams.stats import mean_of_rows, mean_rows
from ngrameval.scale.batches import Accumulator
from ngrameval.text.pipeline import Preprocess

SRC = Path(__file__).resolve().parents[1] / "src" / "ngrameval"
METRIC_CLASSES = {"AEv", "BLEU", "NIST", "PINC", "SE", "ChrF", "TER", "Rouge", "Cider", "CocoBleu", "CocoRougeL",
                  "RowMetric"}  # fmt: skip


def _metric_type_checks(path: Path) -> list[str]:
    """``isinstance(x, C)`` calls of ``path`` whose classes name a metric class."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance" and len(node.args) == 2:
            names = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
            names |= {n.attr for n in ast.walk(node.args[1]) if isinstance(n, ast.Attribute)}
            if names & METRIC_CLASSES:
                out.append(f"{path.relative_to(SRC)}:{node.lineno}")
    return out


def test_orchestration_has_no_type_checks_on_metric_classes() -> None:
    paths = [SRC / "api.py", SRC / "jobs.py", *sorted((SRC / "scale").rglob("*.py"))]
    assert [hit for p in paths for hit in _metric_type_checks(p)] == []
    assert _metric_type_checks(SRC / "metrics" / "registry.py")  # the probe finds them where they are


@dataclass(frozen=True)
class Longer(RowMetric):
    """A metric no orchestration code knows: 1 where the hypothesis has more words than its shortest reference."""

    higher_is_better: ClassVar[bool] = True

    def rows(self, batch: Batch) -> Rows:
        def longer(hyps: Sequence[str]) -> np.ndarray:
            return np.array([len(h.split()) > min(len(r.split()) for r in rs) for h, rs in zip(hyps, batch.seg_refs)])

        return Rows(tuple(mean_rows(longer(h).astype(np.float64)) for h in batch.systems), mean_of_rows)

    def display_name(self) -> str:
        return "LONGER"

    def signature(self) -> str:
        return "toy:yes"


def test_a_new_metric_runs_everywhere_without_touching_orchestration() -> None:
    """Item 1 shown by adding nothing: a metric class with a row builder is measured in memory, on threads (with a
    spec of the shared n-gram kernel beside it) and batch by batch, with the same numbers."""
    hyps = [f"w{i % 7} " * (i % 5 + 1) for i in range(5000)]
    refs = [[f"w{i % 3} " * (i % 4 + 1)] for i in range(5000)]
    specs = [MetricSpec(Longer(), Preprocess()), MetricSpec(metrics_package.BLEU(), Preprocess())]
    serial = measure({"s": hyps}, refs, specs)
    threads = measure({"s": hyps}, refs, specs, jobs=2)
    assert [r.metric for r in serial] == ["LONGER", "BLEU"]
    assert serial[0].signature.startswith("LONGER|nrefs:1|tok:13a|")
    for a, b in zip(serial, threads, strict=True):
        assert a.signature == b.signature and np.array_equal(a.values[0], b.values[0])
    acc = Accumulator(specs)
    for k in range(0, 5000, 1200):
        acc.update(hyps[k : k + 1200], refs[k : k + 1200])
    expected = np.mean([len(h.split()) > len(r[0].split()) for h, r in zip(hyps, refs)])
    assert acc.compute()["LONGER"].score == score({"s": hyps}, refs, specs)[0].score == expected


def test_metrics_share_one_count_per_text_setting() -> None:
    """The shared fast paths are a metric's capability (``counted``), not its class: every counted metric of one
    text setting gets the same statistics (counted once), a different setting its own."""
    rows = measure({"s": ["a b c d"]}, [["a b c"]], "bleu,nist,aev:alpha=0.3,n=2,bleu:tok=intl,rouge-1,rouge-2")
    assert rows[0].values is rows[1].values is rows[2].values
    assert rows[3].values is not rows[0].values
