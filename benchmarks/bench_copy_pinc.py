"""How the collect app's paraphrase copy check (PINC against the source below a threshold, ``quality.COPY_PINC``)
separates copies from paraphrases: PINC (``ngrameval.corpus.paraphrase.pinc``, 13a, lower-cased, n = 4) of

- copies of a source with a small edit (MSVD descriptions as sources): exact, case, punctuation, one word
  deleted, one word added, one word replaced, two neighbouring words swapped;
- genuine rewrites: MRPC's positive pairs (news sentences judged paraphrases) and, per MSVD clip, its other
  descriptions against its first one (independent writers).

Prints, per kind, the share with PINC below each threshold.

    python benchmarks/bench_copy_pinc.py [--data ../shared/data] [--clips 500] [--seed 1]
"""

from __future__ import annotations

import argparse
import csv
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ngrameval.corpus.paraphrase import pinc

THRESHOLDS = (0.05, 0.1, 0.15, 0.2, 0.3)


def edits(rng: np.random.Generator) -> dict[str, Callable[[list[str]], list[str]]]:
    """Small edits of a word list that leave a copy of it."""

    def at(ws: list[str]) -> int:
        return int(rng.integers(len(ws)))

    def deleted(ws: list[str]) -> list[str]:
        i = at(ws)
        return ws if len(ws) == 1 else [*ws[:i], *ws[i + 1 :]]

    def added(ws: list[str]) -> list[str]:
        i = at(ws)
        return [*ws[:i], "really", *ws[i:]]

    def replaced(ws: list[str]) -> list[str]:
        i = at(ws)
        return [*ws[:i], "something", *ws[i + 1 :]]

    def swapped(ws: list[str]) -> list[str]:
        i = int(rng.integers(max(1, len(ws) - 1)))
        return [*ws[:i], *ws[i : i + 2][::-1], *ws[i + 2 :]]

    return {
        "exact copy": lambda ws: ws,
        "case changed": lambda ws: [ws[0].upper(), *ws[1:]],
        "full stop added": lambda ws: [*ws[:-1], ws[-1] + "."],
        "one word deleted": deleted,
        "one word added": added,
        "one word replaced": replaced,
        "two words swapped": swapped,
    }


def sentence_pinc(cands: list[str], sources: list[str]) -> list[float]:
    sent = pinc(cands, sources, lowercase=True).sentences
    return [] if sent is None else [float(x) for x in sent]


def shares(values: list[float]) -> str:
    arr = np.asarray(values)
    return " | ".join(f"{np.mean(arr < t):.3f}" for t in THRESHOLDS)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    ap.add_argument("--clips", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    clips = json.loads((args.data / "msvd" / "msvd2sent.json").read_text())
    keys = sorted(clips)[: args.clips]
    sources = [clips[k][0] for k in keys if clips[k][0].split()]
    rows: list[tuple[str, list[float]]] = []
    for name, edit in edits(rng).items():
        cands = [" ".join(edit(s.split())) for s in sources]
        rows.append((f"MSVD source, {name}", sentence_pinc(cands, sources)))
    with (args.data / "mrpc" / "msr_paraphrase_train.txt").open(encoding="utf-8-sig") as f:
        pairs = [(r[3], r[4]) for r in csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE) if r[0] == "1"]
    rows.append((f"MRPC positive pairs ({len(pairs)})", sentence_pinc([b for _, b in pairs], [a for a, _ in pairs])))
    others = [(clips[k][0], d) for k in keys for d in clips[k][1:]]
    rows.append(
        (
            f"MSVD other descriptions vs the first ({len(others)})",
            sentence_pinc([d for _, d in others], [s for s, _ in others]),
        )
    )
    print(f"share with PINC below the threshold ({len(sources)} MSVD sources, seed {args.seed})")
    print("| text vs its source | " + " | ".join(f"< {t:g}" for t in THRESHOLDS) + " |")
    print("|---|" + "---:|" * len(THRESHOLDS))
    for name, values in rows:
        print(f"| {name} | {shares(values)} |")


if __name__ == "__main__":
    main()
