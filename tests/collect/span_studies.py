"""Small ESA and MQM studies on disk for the span tests: outputs with non-ASCII letters and an emoji (one code
point beyond the Basic Multilingual Plane, two UTF-16 units), so that offsets are checked as Python counts them."""

from __future__ import annotations

import csv
import io
from pathlib import Path

ESA = """
[study]
name = "esa-pilot"
kind = "esa"
title = "Find the errors"
completion_code = "ESA-OK"
manifest = "items.csv"
[rating]
seed = 2
"""

MQM = """
[study]
name = "mqm-pilot"
kind = "mqm"
title = "Find and classify the errors"
completion_code = "MQM-OK"
manifest = "items.csv"
[spans]
show_reference = true
"""

SYSTEMS = ("A", "B", "C")
SOURCES = ("The bear 🐻 runs across the street.", "Größe matters, said the old man.", "She buys fresh bread daily.")


def output(item: int, system: str) -> str:
    """An output of ``system`` for item ``item``: an emoji early on, accented letters, and a word per system."""
    return f"Der Bär 🐻 läuft über die Straße {item} — {system}ö café."


def items_csv(n_items: int = 4) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["item", "system", "output", "source", "reference", "doc"])
    for i in range(n_items):
        for s in SYSTEMS:
            w.writerow([f"s{i}", s, output(i, s), SOURCES[i % 3], "Der Bär läuft über die Straße.", f"doc{i // 2}"])
    return buf.getvalue()


def write_span_study(root: Path, kind: str, extra: str = "", n_items: int = 4) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "items.csv").write_text(items_csv(n_items), encoding="utf-8")
    (root / "study.toml").write_text((ESA if kind == "esa" else MQM) + extra, encoding="utf-8")
    return root / "study.toml"
