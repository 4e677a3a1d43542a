"""Count once, keep the statistics (issue 32 item 4): CPU time (``time.process_time``, every thread of this
process; the machine is shared) on a generated corpus of ``--segments`` segments, one reference each.

For every metric on its own, with ``jobs=1``:

* ``1 system``: counting one system's statistics (text -> rows, the references counted too);
* ``+1 system``: what a second system (the first with every seventh word replaced) adds to the same counting
  pass, in which the references are read, tokenized and counted once for both (``2 systems`` minus ``1 system``):
  the part of a system's cost that is not the references', so the most a reference-side cache could bring a second
  system down to;
* ``write``/``read+score``: writing the stats file of one system, then reading it and scoring it.

Then every metric the reference cache keeps (``--cache-metrics``: NIST's weights, CIDEr-D's reference side),
streamed from files (50,000 segments a chunk, as ``--ref-cache`` streams them): the first system with an empty
cache (the references counted and kept), the second system with the cache filled (read), and the second system
without a cache.

    python benchmarks/bench_stats.py                       # 100k segments, bleu chrf ter rouge-l nist cider-d
    python benchmarks/bench_stats.py --segments 20000 --metrics bleu,chrf
    python benchmarks/bench_stats.py --skip-metrics    # the reference cache's table only

Each figure is the best of ``--repeat`` runs; the scores from the stats file are checked equal to the text's.
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import ngrameval as ne
from bench_bleu import make_corpus_fast


def cpu(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    """The least CPU time of ``repeat`` calls of ``fn`` and its last result."""
    best, out = float("inf"), None
    for _ in range(repeat):
        gc.collect()
        start = time.process_time()
        out = fn()
        best = min(best, time.process_time() - start)
    return best, out


def perturbed(line: str) -> str:
    """A second system as close to the references as the first: every seventh word of ``line`` replaced."""
    return " ".join("w0" if k % 7 == 3 else w for k, w in enumerate(line.split()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--segments", type=int, default=100_000)
    ap.add_argument("--metrics", default="bleu,chrf,ter,rouge-l,nist,cider-d")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-cache", action="store_true", help="leave out the reference cache's table")
    ap.add_argument("--skip-metrics", action="store_true", help="leave out the per-metric table")
    ap.add_argument("--cache-metrics", default="nist,cider-d", help="the reference cache's metrics")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    hyps, refs = make_corpus_fast(args.segments, 1)
    other = [perturbed(h) for h in hyps]
    if args.skip_metrics:
        ref_cache_table(hyps, other, refs, args.repeat, args.cache_metrics.split(","))
        return
    print(f"{args.segments} segments, one reference each; CPU seconds (process_time), best of {args.repeat}")
    print(f"{'metric':<10} {'1 system':>9} {'+1 system':>10} {'share':>6} {'write':>7} {'read+score':>11}")
    with tempfile.TemporaryDirectory() as tmp:
        for metric in args.metrics.split(","):
            one, run = cpu(lambda m=metric: ne.count_stats({"a": hyps}, refs, m), args.repeat)
            two, _ = cpu(lambda m=metric: ne.count_stats({"a": hyps, "b": other}, refs, m), args.repeat)
            path = Path(tmp) / f"{metric}.parquet"
            write, _ = cpu(lambda r=run, p=path: ne.write_stats(r, p), args.repeat)  # type: ignore[misc]
            read, kept = cpu(lambda p=path: ne.read_stats(p).scores(), args.repeat)  # type: ignore[misc]
            text = ne.score({"a": hyps}, refs, ne.parse_specs(metric))
            assert [s.score for s in kept] == [s.score for s in text], metric  # type: ignore[attr-defined]
            extra = two - one
            print(f"{metric:<10} {one:>9.3f} {extra:>10.3f} {extra / one:>6.2f} {write:>7.3f} {read:>11.3f}")
    if not args.skip_cache:
        ref_cache_table(hyps, other, refs, args.repeat, args.cache_metrics.split(","))


def ref_cache_table(hyps: list[str], other: list[str], refs: list[str], repeat: int, metrics: list[str]) -> None:
    """CPU time of each metric streamed from files: first system with an empty cache, second with it filled, and
    second without; the second system's scores with the cache checked equal to those without."""
    from ngrameval.scale.files import DEFAULT_CHUNK, Files, score_files

    print(f"\nstreamed from files ({DEFAULT_CHUNK} segments a chunk), CPU seconds, best of {repeat}:")
    print(
        f"{'metric':<10} {'first, empty cache':>19} {'second, cache filled':>21} {'share':>6} {'second, no cache':>17}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for name, lines in (("a", hyps), ("b", other), ("ref", refs)):
            paths[name] = str(Path(tmp) / f"{name}.txt")
            Path(paths[name]).write_text("".join(f"{x}\n" for x in lines), "utf-8")
        first, second = Files({"a": paths["a"]}, [paths["ref"]]), Files({"b": paths["b"]}, [paths["ref"]])
        fresh = iter(range(len(metrics) * repeat))
        for metric in metrics:

            def cold(m: str = metric) -> object:
                return score_files(first, m, DEFAULT_CHUNK, 1, ref_cache=str(Path(tmp) / f"cold{next(fresh)}"))

            warm_dir = str(Path(tmp) / f"warm-{metric}")
            score_files(first, metric, DEFAULT_CHUNK, 1, ref_cache=warm_dir)
            t_cold, _ = cpu(cold, repeat)
            t_warm, warm = cpu(
                lambda m=metric, d=warm_dir: score_files(second, m, DEFAULT_CHUNK, 1, ref_cache=d), repeat
            )  # type: ignore[misc]
            t_none, none = cpu(lambda m=metric: score_files(second, m, DEFAULT_CHUNK, 1), repeat)  # type: ignore[misc]
            assert [s.score for s in warm.scores()] == [s.score for s in none.scores()], metric  # type: ignore[attr-defined]
            print(f"{metric:<10} {t_cold:>19.3f} {t_warm:>21.3f} {t_warm / t_cold:>6.2f} {t_none:>17.3f}")


if __name__ == "__main__":
    main()
