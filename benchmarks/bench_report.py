"""``ngrameval report`` on 10 systems x 3,000 generated segments: the time to compute everything the page shows
(build_report, the report's defaults: AR 10,000 trials, 1,000 bootstrap resamples) and to render it (render_html:
the figures as SVG), with and without segment-level human judgments.

    .venv/bin/python benchmarks/bench_report.py [--segments 3000] [--systems 10] [--metrics bleu,rouge-l]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ngrameval.meta.correlate import HumanScores
from ngrameval.meta.report_data import build_report
from ngrameval.metrics.registry import parse_specs
from ngrameval.report.html import render_html
from ngrameval.text.pipeline import Preprocess


def make_data(n_sys: int, n_seg: int, seed: int = 0) -> tuple[dict[str, list[str]], list[list[str]], HumanScores]:
    """References of 5-45 Zipfian words; system s keeps 35% + 4% x s of each reference's words (the rest
    redrawn); human scores follow the kept share with noise."""
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(20_000)])
    p = 1.0 / np.arange(1, len(vocab) + 1) ** 1.1
    p /= p.sum()
    lens = rng.integers(5, 46, size=n_seg)
    ref = rng.choice(len(vocab), size=int(lens.sum()), p=p)
    cut = np.cumsum(lens)[:-1]
    refs = [[" ".join(w)] for w in np.split(vocab[ref], cut)]
    systems, human = {}, np.empty((n_sys, n_seg))
    for s in range(n_sys):
        keep = rng.random(len(ref)) < 0.35 + 0.04 * s
        hyp = np.where(keep, ref, rng.choice(len(vocab), size=len(ref), p=p))
        systems[f"system-{s:02d}"] = [" ".join(w) for w in np.split(vocab[hyp], cut)]
        kept = np.add.reduceat(keep.astype(float), np.r_[0, cut]) / lens
        human[s] = np.clip(kept + rng.normal(0, 0.15, n_seg), 0, 1)
    return systems, refs, HumanScores("quality", tuple(systems), human.mean(axis=1), human, human.size, 0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--segments", type=int, default=3000)
    ap.add_argument("--systems", type=int, default=10)
    ap.add_argument("--metrics", default="bleu,rouge-l")
    ap.add_argument("--jobs", type=int, default=1, help="threads (default 1; 0: every core)")
    args = ap.parse_args()
    systems, refs, human = make_data(args.systems, args.segments)
    specs = parse_specs(args.metrics, Preprocess())
    jobs = None if args.jobs == 0 else args.jobs
    print(f"report: {args.systems} systems x {args.segments} segments, -m {args.metrics}, jobs {args.jobs}")
    for label, humans in (("without judgments", ()), ("with segment-level judgments", (human,))):
        t0 = time.perf_counter()
        data = build_report(systems, refs, specs, humans=humans, jobs=jobs)
        t1 = time.perf_counter()
        page = render_html(data)
        t2 = time.perf_counter()
        print(f"  {label:30s} compute {t1 - t0:6.2f} s   render {t2 - t1:5.2f} s   total {t2 - t0:6.2f} s"
              f"   ({len(page) / 1e6:.2f} MB of HTML)")  # fmt: skip


if __name__ == "__main__":
    main()
