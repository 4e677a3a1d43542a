"""The Python API: score systems against references with any metrics, in one counting pass per
text setting. Scores are fractions in [0, 1] (NIST: its own scale); x100 happens only in reports."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ngrameval._version import __version__
from ngrameval.errors import InputError
from ngrameval.metrics.aev import AEv
from ngrameval.metrics.bleu import BLEU
from ngrameval.metrics.nist import NIST
from ngrameval.metrics.registry import Metric, MetricSpec
from ngrameval.ngrams.count import References, overlap_stats
from ngrameval.ngrams.stats import Stats
from ngrameval.text.pipeline import Preprocess

RefsLike = Sequence[str] | Sequence[Sequence[str]]


@dataclass(frozen=True)
class Score:
    """One corpus-level score with the signature of every setting that produced it."""

    system: str
    metric: str
    score: float
    signature: str
    fraction: bool = True
    sentences: NDArray[np.float64] | None = None

    def __float__(self) -> float:
        return self.score


def segment_major(refs: RefsLike) -> list[list[str]]:
    """``refs[i]`` = the references of segment i; a flat list of strings means one reference each."""
    out: list[list[str]] = []
    for i, r in enumerate(refs):
        if isinstance(r, str):
            out.append([r])
        # list and tuple before the (slow) Sequence ABC check
        elif isinstance(r, (list, tuple, Sequence)) and all(isinstance(x, str) for x in r):
            out.append(r if isinstance(r, list) else list(r))  # read-only here: no copy of lists
        else:
            raise InputError(f"references of segment {i + 1} must be a string or a list of strings")
    return out


def nrefs_label(counts: Sequence[int]) -> str:
    """The signature's ``nrefs``: the number of references per segment, or ``var`` when it varies."""
    distinct = set(counts)
    return str(distinct.pop()) if len(distinct) == 1 else "var"


def signature(spec: MetricSpec, refs: References) -> str:
    """``BLEU|nrefs:1|tok:13a|case:mixed|stop:no|stem:no|n:4|eff:no|smooth:exp|version:...``."""
    nrefs = nrefs_label(refs.n_refs)
    return (
        f"{spec.metric.display_name()}|nrefs:{nrefs}|{spec.pre.signature()}|{spec.metric.signature()}"
        f"|version:ngrameval-{__version__}"
    )


def compute_stats(systems: Sequence[Sequence[str]], refs: References, metrics: Sequence[Metric]) -> list[Stats]:
    """Count once for every metric of one text setting."""
    order = max(m.order_needed for m in metrics)
    return overlap_stats(systems, refs, max_order=order, nist=any(m.needs_info for m in metrics))


def score(
    systems: Mapping[str, Sequence[str]],
    refs: RefsLike,
    specs: Sequence[MetricSpec],
    sentence: bool = False,
) -> list[Score]:
    """Every metric of ``specs`` for every system; ``sentence`` adds per-segment scores."""
    by_text: dict[Preprocess, list[tuple[int, MetricSpec]]] = {}
    for i, spec in enumerate(specs):
        by_text.setdefault(spec.pre, []).append((i, spec))
    seg_refs = segment_major(refs)
    names = list(systems)
    results: dict[tuple[str, int], Score] = {}
    for pre, group in by_text.items():
        built = References.build(seg_refs, pre)
        all_stats = compute_stats([systems[n] for n in names], built, [s.metric for _, s in group])
        for name, stats in zip(names, all_stats):
            for i, spec in group:
                value = float(spec.metric(stats.total()))
                per_seg = spec.metric(stats) if sentence else None
                results[(name, i)] = Score(
                    name, spec.metric.display_name(), value, signature(spec, built), spec.fraction, per_seg
                )
    return [results[(n, i)] for n in names for i in range(len(specs))]


def _one(hyps: Sequence[str], refs: RefsLike, metric: Metric, pre: Preprocess, fraction: bool = True) -> Score:
    return score({"system": hyps}, refs, [MetricSpec(metric, pre, fraction)], sentence=True)[0]


def bleu(
    hyps: Sequence[str],
    refs: RefsLike,
    *,
    tokenize: str = "13a",
    lowercase: bool = False,
    smooth_method: str = "exp",
    smooth_value: float | None = None,
    max_order: int = 4,
    effective_order: bool = False,
) -> Score:
    """Corpus BLEU as sacreBLEU computes it (``.sentences`` holds sentence BLEU of each segment).

    >>> round(bleu(["the cat sat on the mat"], ["the cat sat on the mat"]).score, 4)
    1.0
    """
    metric = BLEU(max_order, smooth_method, smooth_value, effective_order)
    return _one(hyps, refs, metric, Preprocess(tokenize, lowercase))


def nist(hyps: Sequence[str], refs: RefsLike, *, n: int = 5, tokenize: str = "13a", lowercase: bool = False) -> Score:
    """Corpus NIST-n as mteval-v13a.pl computes it (not a fraction)."""
    return _one(hyps, refs, NIST(n), Preprocess(tokenize, lowercase), fraction=False)


def aev(
    hyps: Sequence[str],
    refs: RefsLike,
    *,
    alpha: float = 0.5,
    n: int = 4,
    brevity: float = 1.0,
    wordiness: float = 2.0,
    tokenize: str = "13a",
    lowercase: bool = False,
    stem: bool = False,
    stopwords: str | None = None,
) -> Score:
    """AEv(alpha, N) of Soricut & Brill (2004); alpha = 1 is the precision family, 0 the recall family."""
    metric = AEv(alpha=alpha, n=n, brevity=brevity, wordiness=wordiness)
    return _one(hyps, refs, metric, Preprocess(tokenize, lowercase, stopwords, stem))
