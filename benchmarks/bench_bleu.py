"""ngrameval vs sacreBLEU vs NLTK on the same generated corpora, in one process (see docs/benchmarks.md)."""

from __future__ import annotations

import argparse
import gc
import logging
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import cast

import numpy as np

logging.getLogger("sacrebleu").setLevel(logging.ERROR)

PUNCT = [",", ".", "'s", "(", ")", '"', ":", "-", "3.5", "1,200", "2019", "%"]
# characters above U+00FF that news text holds (curly quotes, dashes, ellipsis, euro): in make_corpus's wide segments
WIDE = ["\u201c", "\u201d", "\u2019s", "\u2014", "\u2013", "\u2026", "\u20ac5"]
WMT19 = Path(__file__).resolve().parents[2] / "shared" / "data" / "wmt19"


def make_corpus(n_seg: int, n_refs: int, seed: int, wide: float = 0.1) -> tuple[list[str], list[list[str]]]:
    """Hypotheses and segment-major references: Zipfian words, refs share ~60% of the hyp's words; in a share
    ``wide`` of the segments every text gets a word above U+00FF (from WIDE, at the same place in each)."""
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(50_000)] + PUNCT + WIDE)
    n_plain = len(vocab) - len(WIDE)
    p = np.zeros(len(vocab))
    p[:n_plain] = 1.0 / np.arange(1, n_plain + 1) ** 1.1
    p /= p.sum()

    def sentence(base: np.ndarray | None) -> str:
        n = int(rng.integers(15, 36))
        words = rng.choice(len(vocab), size=n, p=p)
        if base is not None:
            keep = rng.random(n) < 0.6
            m = min(n, len(base))
            words[:m][keep[:m]] = base[:m][keep[:m]]
            if base[0] >= n_plain:  # a wide segment: the word above U+00FF in every text
                words[0] = base[0]
        return " ".join(vocab[words].tolist())

    hyps, refs = [], []
    for _ in range(n_seg):
        base = rng.choice(len(vocab), size=int(rng.integers(15, 36)), p=p)
        if rng.random() < wide:
            base[0] = n_plain + int(rng.integers(len(WIDE)))
        ref_texts = [sentence(base) for _ in range(n_refs)]
        hyps.append(sentence(base))
        refs.append(ref_texts)
    return hyps, refs


def wmt19_corpus(root: Path, systems: int) -> tuple[list[str], list[list[str]]] | None:
    """Real text: the first ``systems`` system outputs (by file name) of every WMT19 to-English pair under ``root``
    (``<lp>/system-outputs/*``, ``<lp>/newstest2019-*-ref.en``; see its PROVENANCE.md) against their reference,
    concatenated into one corpus (8 systems: 88,096 segments); None when the files are absent."""
    pairs = sorted(d for d in root.glob("*-en") if d.is_dir()) if root.is_dir() else []
    hyps: list[str] = []
    refs: list[list[str]] = []
    for lp in pairs:
        ref_files = sorted(lp.glob("newstest2019-*-ref.en"))
        outputs = sorted((lp / "system-outputs").glob("*"))[:systems]
        if len(ref_files) != 1 or not outputs:
            continue
        ref = ref_files[0].read_text(encoding="utf-8").split("\n")
        ref = ref[:-1] if ref and ref[-1] == "" else ref
        for path in outputs:
            hyp = path.read_text(encoding="utf-8").split("\n")
            hyp = hyp[:-1] if hyp and hyp[-1] == "" else hyp
            if len(hyp) != len(ref):
                raise SystemExit(f"{path}: {len(hyp)} lines, its reference {len(ref)}")
            hyps += hyp
            refs += [[r] for r in ref]
    return (hyps, refs) if hyps else None


def wide_share(hyps: list[str], refs: list[list[str]]) -> float:
    """The share of segments with a character above U+00FF in a text."""
    return sum(any(max(t, default="\0") > "\u00ff" for t in (h, *r)) for h, r in zip(hyps, refs)) / len(hyps)


def real_rows(hyps: list[str], refs: list[list[str]], repeat: int, best: bool) -> list[tuple[str, float, float, str]]:
    """corpus BLEU (13a) of real text, sacreBLEU's ``corpus_score`` against ``ne.bleu`` and ``ne.score``."""
    import sacrebleu

    from ngrameval import bleu, score

    streams = [[r[k] for r in refs] for k in range(len(refs[0]))]
    t_sb, sb = timed(lambda: sacrebleu.BLEU().corpus_score(hyps, streams), 1)
    t_ours, ours = timed(lambda: bleu(hyps, refs), repeat, best)
    t_corpus, (corpus,) = timed(lambda: score({"system": hyps}, refs, "bleu"), repeat, best)
    rows = []
    for task, t, got in (("`ne.bleu` (+ every sentence score)", t_ours, ours), ("`ne.score`", t_corpus, corpus)):
        same = "identical" if abs(got.score * 100 - sb.score) < 1e-9 else f"DIFF {got.score * 100} vs {sb.score}"
        rows.append((f"WMT19 to-English, real text: corpus BLEU (13a), sacreBLEU; {task}", t_sb, t, same))
    return rows


def make_corpus_fast(n_seg: int, seed: int) -> tuple[list[str], list[str]]:
    """Hypotheses and one reference each (60% of the hypothesis's words kept), words Zipfian as in
    :func:`make_corpus` but drawn in bulk: the 1M-segment memory run would take half an hour otherwise."""
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(50_000)] + PUNCT)
    p = 1.0 / np.arange(1, len(vocab) + 1) ** 1.1
    p /= p.sum()
    lens = rng.integers(15, 36, size=n_seg)
    hyp = rng.choice(len(vocab), size=int(lens.sum()), p=p)
    ref = hyp.copy()
    swap = rng.random(len(ref)) >= 0.6
    ref[swap] = rng.choice(len(vocab), size=int(swap.sum()), p=p)
    cut = np.cumsum(lens)[:-1]
    return [" ".join(w) for w in np.split(vocab[hyp], cut)], [" ".join(w) for w in np.split(vocab[ref], cut)]


# the clock of timed(): wall time, or with --cpu this process's CPU time (every thread's), which a loaded machine
# disturbs far less; pin the process to one core (taskset -c 0) to keep a multi-threaded peer on one core too
CLOCK: Callable[[], float] = time.perf_counter


def timed(fn: Callable[[], object], repeat: int, best: bool = False) -> tuple[float, object]:
    """The median (``best``: the minimum) time of ``repeat`` calls on :data:`CLOCK`, and the last result."""
    times, out = [], None
    for _ in range(repeat):
        gc.collect()
        t = CLOCK()
        out = fn()
        times.append(CLOCK() - t)
    return min(times) if best else statistics.median(times), out


def stages(hyps: list[str], refs: list[list[str]], repeat: int, best: bool) -> dict[str, float]:
    """Seconds of each stage of ngrameval's corpus BLEU (13a) on these texts, as ``ngrameval score`` runs them:
    ``read`` (the files, with ``io.read_lines`` / ``read_refs``), ``tokenize`` (13a tokens interned per segment:
    the direct kernel with ``max_order=0``), ``count`` (the same kernel counting n-grams too, less ``tokenize``),
    ``rows`` (its output as :class:`Stats` rows), ``score`` (corpus and sentence BLEU), ``bleu`` (one
    ``ngrameval.bleu`` call from the lists; it adds the argument checks to the stages before), and ``text_mb``
    (the UTF-8 megabytes tokenized)."""
    from functools import partial

    from ngrameval import BLEU, _direct, bleu
    from ngrameval.io import read_lines, read_refs
    from ngrameval.ngrams.direct import direct_stats
    from ngrameval.ngrams.stats import Stats
    from ngrameval.text.pipeline import Preprocess
    from ngrameval.text.tokenize import line_prep

    n_refs = len(refs[0])
    with tempfile.TemporaryDirectory() as d:
        paths = [os.path.join(d, f"{name}.txt") for name in ("hyp", *(f"ref{k}" for k in range(n_refs)))]
        for path, lines in zip(paths, [hyps, *([r[k] for r in refs] for k in range(n_refs))]):
            with open(path, "w", encoding="utf-8") as fh:
                fh.write("\n".join(lines) + "\n")
        text_mb = sum(os.path.getsize(p) for p in paths) / 1e6
        t_read, _ = timed(lambda: (read_lines(paths[0]), read_refs(paths[1:])), repeat, best)

    mode, prep_line = cast(tuple[int, Callable[..., str]], line_prep("13a"))
    prep = partial(prep_line, lowercase=False)
    t_tok, _ = timed(lambda: _direct.counts([hyps], refs, mode, False, 0, prep), repeat, best)
    t_kernel, _ = timed(lambda: _direct.counts([hyps], refs, mode, False, 4, prep), repeat, best)
    t_rows, out = timed(lambda: direct_stats([hyps], refs, Preprocess(), 4), repeat, best)
    (stats,) = cast(list[Stats], out)
    metric = BLEU()
    t_score, _ = timed(lambda: (float(metric(stats.total())), metric(stats)), repeat, best)
    t_bleu, _ = timed(lambda: bleu(hyps, refs), repeat, best)
    return {
        "read": t_read,
        "tokenize": t_tok,
        "count": t_kernel - t_tok,
        "rows": t_rows - t_kernel,
        "score": t_score,
        "bleu": t_bleu,
        "text_mb": text_mb,
    }


def run(
    n_seg: int, n_refs: int, repeat: int, sentence: bool, best: bool = False, wide: float = 0.1
) -> list[tuple[str, float, float, str]]:
    import sacrebleu
    from nltk.translate.bleu_score import corpus_bleu

    from ngrameval import BLEU, AEv, Preprocess, References, bleu, overlap_stats, score

    hyps, refs = make_corpus(n_seg, n_refs, seed=n_seg + n_refs, wide=wide)
    streams = [[r[i] for r in refs] for i in range(n_refs)]
    rows: list[tuple[str, float, float, str]] = []

    t_ours, ours = timed(lambda: bleu(hyps, refs), repeat, best)
    t_sb, sb = timed(lambda: sacrebleu.BLEU().corpus_score(hyps, streams), 1)
    same = "identical" if abs(ours.score * 100 - sb.score) < 1e-9 else f"DIFF {ours.score * 100} vs {sb.score}"
    rows.append(("corpus BLEU (13a), sacreBLEU; `ne.bleu` (+ every sentence score)", t_sb, t_ours, same))
    # like for like: sacreBLEU's corpus_score gives the corpus score alone, as ngrameval.score does
    t_corpus, (corpus,) = timed(lambda: score({"system": hyps}, refs, "bleu"), repeat, best)
    same = "identical" if abs(corpus.score * 100 - sb.score) < 1e-9 else f"DIFF {corpus.score * 100} vs {sb.score}"
    rows.append(("corpus BLEU (13a), sacreBLEU; `ne.score` (corpus score only)", t_sb, t_corpus, same))

    hyp_tok = [h.split() for h in hyps]
    ref_tok = [[r.split() for r in rs] for rs in refs]
    t_nltk, nl = timed(lambda: corpus_bleu(ref_tok, hyp_tok), 1)
    t_none, ours_none = timed(lambda: bleu(hyps, refs, tokenize="none", smooth="none"), repeat, best)
    same = "identical" if abs(float(nl) - ours_none.score) < 1e-9 else f"DIFF {nl} vs {ours_none.score}"
    rows.append(("corpus BLEU (pre-split tokens), NLTK", t_nltk, t_none, same))

    if sentence:
        sbs = sacrebleu.BLEU(effective_order=True)
        t_sb_sent, sb_sent = timed(lambda: [sbs.sentence_score(h, r).score for h, r in zip(hyps, refs)], 1)
        t_sent, ours_sent = timed(lambda: bleu(hyps, refs, eff=True).sentences, repeat, best)
        diff = float(np.max(np.abs(np.asarray(sb_sent) - ours_sent * 100)))  # type: ignore[operator]
        rows.append(("sentence BLEU, every segment, sacreBLEU loop", t_sb_sent, t_sent, f"max |diff| {diff:.1e}"))

    def plane() -> list[float]:
        built = References.build(refs, Preprocess())
        (stats,) = overlap_stats([hyps], built, max_order=4)
        total = stats.total()
        return [float(AEv(alpha=a / 10, n=n)(total)) for n in range(1, 5) for a in range(11)]

    def one_bleu() -> float:
        built = References.build(refs, Preprocess())
        (stats,) = overlap_stats([hyps], built, max_order=4)
        return float(BLEU()(stats.total()))

    t_plane, _ = timed(plane, repeat, best)
    t_one, _ = timed(one_bleu, repeat, best)
    rows.append(("44-member AEv plane vs one BLEU (both ngrameval)", t_one, t_plane, "target: plane <= 2x BLEU"))
    return rows


def peak_memory(n_seg: int) -> float:
    """Peak RSS (MB) of a fresh process that runs ``ngrameval score`` on n_seg generated segments (1 reference)."""
    hyps, refs = make_corpus_fast(n_seg, seed=7)
    with tempfile.TemporaryDirectory() as d:
        h, r, o = (os.path.join(d, x) for x in ("h.txt", "r.txt", "out.txt"))
        for path, lines in ((h, hyps), (r, refs)):
            with open(path, "w", encoding="utf-8") as fh:
                fh.write("\n".join(lines) + "\n")
        del hyps, refs
        # VmHWM, not ru_maxrss: Linux carries ru_maxrss across fork + exec, so the child would report the
        # parent's size (which holds the generated corpus).
        code = (
            "from ngrameval.cli import main; "
            f"main(['score', {h!r}, '-r', {r!r}, '-o', {o!r}]); "
            "print(next(int(ln.split()[1]) for ln in open('/proc/self/status') if ln.startswith('VmHWM')) / 1024)"
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--segments", type=int, nargs="*", default=[10_000], help="corpus sizes to time (none: skip)")
    ap.add_argument("--refs", type=int, nargs="+", default=[1, 4])
    ap.add_argument("--repeat", type=int, default=3, help="runs of ngrameval (median, or --best); peers run once")
    ap.add_argument("--no-sentence", action="store_true", help="skip the (slow) sacreBLEU sentence loop")
    ap.add_argument("--peak-memory", type=int, metavar="N", help="also measure peak RSS at N segments")
    ap.add_argument("--best", action="store_true", help="report ngrameval's fastest run instead of the median")
    ap.add_argument("--no-stages", action="store_true", help="skip the read/tokenize/count/score breakdown")
    ap.add_argument("--cpu", action="store_true", help="time CPU seconds of this process, not wall seconds")
    ap.add_argument("--wide", type=float, default=0.1, help="share of generated segments with a word above U+00FF")
    ap.add_argument("--wmt19", type=Path, default=WMT19, help="the WMT19 to-English data (real-text row)")
    ap.add_argument("--wmt19-systems", type=int, default=8, help="system outputs per language pair (0: no row)")
    args = ap.parse_args()
    global CLOCK
    CLOCK = time.process_time if args.cpu else time.perf_counter
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    clock = "CPU seconds of the process (--cpu)" if args.cpu else "wall seconds"
    print(f"load average (1/5/15 min) at the start: {load}; {os.cpu_count()} cores; times: {clock}\n")
    print("| segments | refs | task | peer (s) | ngrameval (s) | speed-up | check |")
    print("|---:|---:|---|---:|---:|---:|---|")
    for n in args.segments:
        for k in args.refs:
            for task, t_peer, t_ours, check in run(n, k, args.repeat, not args.no_sentence, args.best, args.wide):
                ratio = t_peer / t_ours if t_ours > 0 else math.inf
                print(f"| {n:,} | {k} | {task} | {t_peer:.2f} | {t_ours:.3f} | {ratio:.1f}x | {check} |", flush=True)
    real = wmt19_corpus(args.wmt19, args.wmt19_systems) if args.wmt19_systems else None
    if real is not None:
        hyps, refs = real
        for task, t_peer, t_ours, check in real_rows(hyps, refs, args.repeat, args.best):
            ratio = t_peer / t_ours if t_ours > 0 else math.inf
            print(f"| {len(hyps):,} | 1 | {task} | {t_peer:.2f} | {t_ours:.3f} | {ratio:.1f}x | {check} |", flush=True)
        print(f"\n(WMT19: {wide_share(hyps, refs):.1%} of the segments hold a character above U+00FF)")
    elif args.wmt19_systems:
        print(f"\nreal-text row skipped: no WMT19 to-English data under {args.wmt19} (give --wmt19 DIR)")
    print(f"(generated corpora: {args.wide:.0%} of the segments hold a word above U+00FF)")
    if args.segments and not args.no_stages:
        stat = "fastest" if args.best else "median"
        print(
            f"\nngrameval corpus BLEU (13a) by stage, {stat} of {args.repeat} runs (seconds; tokenize: MB/s of text):\n"
        )
        print("| segments | refs | read files | tokenize | MB/s | count | rows | score | `bleu()` from lists |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for n in args.segments:
            for k in args.refs:
                hyps, refs = make_corpus(n, k, seed=n + k, wide=args.wide)
                t = stages(hyps, refs, args.repeat, args.best)
                print(
                    f"| {n:,} | {k} | {t['read']:.3f} | {t['tokenize']:.3f} | {t['text_mb'] / t['tokenize']:.0f} "
                    f"| {t['count']:.3f} | {t['rows']:.3f} | {t['score']:.3f} | {t['bleu']:.3f} |",
                    flush=True,
                )
    if args.peak_memory:
        print(
            f"\npeak RSS, `ngrameval score` corpus BLEU, {args.peak_memory:,} segments, 1 ref: "
            f"{peak_memory(args.peak_memory):.0f} MB"
        )


if __name__ == "__main__":
    main()
