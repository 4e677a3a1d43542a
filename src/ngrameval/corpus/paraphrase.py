"""Paraphrase evaluation as Chen & Dolan (2011) do it: adequacy (BLEU against many references, with
or without the source counted as one) and novelty (PINC against the source), plus Belz & Reiter's
string-edit similarity SE, and single-number combinations of BLEU and PINC.

Every text is tokenized once by one encoder; all scores come from the same token-id arrays.
Combinations use BLEU *without* the source (the overall-quality reading of Chen & Dolan, §5.2):

    arithmetic (B + P) / 2,   geometric sqrt(B P),   harmonic 2 B P / (B + P),
    PINC x sigmoid(BLEU) = mean over sentences of P_i / (1 + exp(-k (b_i - m)))

where b_i is sentence BLEU (sacreBLEU's: exp smoothing, effective order) and (k, m) is the logistic
that maximises Pearson's r with sentence-level human ratings (Chen & Dolan picked it by oracle).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ngrameval._version import __version__
from ngrameval.api import RefsLike, Score, checked_pair, nrefs_label, renamed_options, score, segment_major
from ngrameval.errors import InputError, InputTypeError
from ngrameval.metrics.bleu import BLEU
from ngrameval.metrics.pinc import DEFAULT_PINC, PINC
from ngrameval.metrics.policy import FloatArray
from ngrameval.metrics.registry import MetricSpec
from ngrameval.metrics.se import SE, se_scores
from ngrameval.ngrams.count import count_rows, novelty_counts
from ngrameval.ngrams.stats import Stats
from ngrameval.ngrams.texts import Texts, flatten
from ngrameval.text import validate
from ngrameval.text.pipeline import Encoder, Preprocess


@dataclass(frozen=True)
class Logistic:
    """sigmoid(b) = 1 / (1 + exp(-slope (b - midpoint))), fitted to ``n`` rated sentences."""

    slope: float
    midpoint: float
    pearson: float
    n: int

    def __call__(self, b: FloatArray) -> FloatArray:
        out: FloatArray = 0.5 * (1.0 + np.tanh(0.5 * self.slope * (b - self.midpoint)))  # overflow-free sigmoid
        return out


@dataclass(frozen=True)
class ParaphraseResult:
    """Per system: BLEU, BLEU+source, PINC, SE and the combinations (as :class:`Score` rows)."""

    scores: tuple[Score, ...]
    logistic: Logistic | None


def fit_logistic(bleu: FloatArray, pinc: FloatArray, ratings: FloatArray) -> Logistic:
    """The (slope, midpoint) maximising Pearson's r between ``pinc * sigmoid(bleu)`` and ``ratings``
    (NaN ratings are left out). Deterministic: Nelder-Mead from a fixed grid of starting points."""
    from scipy import optimize, stats  # scipy takes ~1 s to import: only when a logistic is fitted

    keep = ~np.isnan(ratings)
    b, p, y = bleu[keep], pinc[keep], ratings[keep]
    if len(y) < 3 or np.ptp(y) == 0:
        raise InputError(f"fitting the logistic needs >= 3 ratings that vary; got {len(y)}")

    def neg_r(theta: NDArray[np.float64]) -> float:
        x = p * Logistic(float(theta[0]), float(theta[1]), 0.0, 0)(b)
        if np.ptp(x) == 0:
            return 1.0
        return -float(stats.pearsonr(x, y)[0])

    best = min(
        (
            optimize.minimize(neg_r, np.array([k, m]), method="Nelder-Mead")
            for k in (5.0, 20.0, 50.0)
            for m in (0.2, 0.5)
        ),
        key=lambda res: float(res.fun),
    )
    return Logistic(float(best.x[0]), float(best.x[1]), -float(best.fun), len(y))


def _with_source(refs: Texts, seg: NDArray[np.int64], sources: Texts) -> tuple[Texts, NDArray[np.int64]]:
    """Each segment's references followed by its source (texts gathered by index, no re-tokenizing)."""
    both = Texts(np.concatenate([refs.ids, sources.ids]), np.concatenate([refs.off, refs.off[-1] + sources.off[1:]]))
    n_seg = len(seg) - 1
    per = np.diff(seg) + 1
    new_seg = np.zeros(n_seg + 1, dtype=np.int64)
    np.cumsum(per, out=new_seg[1:])
    idx = np.empty(int(new_seg[-1]), dtype=np.int64)
    is_src = np.zeros(len(idx), dtype=bool)
    is_src[new_seg[1:] - 1] = True
    idx[is_src] = len(refs) + np.arange(n_seg)
    idx[~is_src] = np.arange(len(refs))
    return both.take(idx), new_seg


def _encode_refs(enc: Encoder, seg_refs: Sequence[Sequence[str]]) -> tuple[Texts, NDArray[np.int64]]:
    """All references as one :class:`Texts`, and offsets: segment ``s`` owns texts ``seg[s] .. seg[s+1]-1``."""
    flat, seg = flatten(seg_refs)
    return Texts(*enc.encode(flat)), seg


def _signature(name: str, nrefs: str, pre: Preprocess, detail: str) -> str:
    return f"{name}|nrefs:{nrefs}|{pre.signature()}|{detail}|version:ngrameval-{__version__}"


@dataclass(frozen=True)
class SegmentRows:
    """The per-segment numbers every paraphrase score comes from, per system (``names`` order): BLEU
    statistics rows without and with the source as a reference, PINC and SE. Segments are independent,
    so the rows of consecutive pieces of a corpus concatenate into the rows of the whole
    (:meth:`concatenate`; the Dask path scores shards on workers that way)."""

    names: tuple[str, ...]
    rows: tuple[FloatArray, ...]
    rows_src: tuple[FloatArray, ...]
    pinc: tuple[FloatArray, ...]
    se: tuple[FloatArray, ...]
    ref_counts: frozenset[int]
    segments: int

    @staticmethod
    def concatenate(parts: Sequence[SegmentRows]) -> SegmentRows:
        """The rows of consecutive pieces, in order (every piece has the same systems)."""
        first = parts[0]

        def cat(get: Any) -> tuple[FloatArray, ...]:
            return tuple(np.concatenate([get(p)[k] for p in parts]) for k in range(len(first.names)))

        return SegmentRows(
            first.names,
            cat(lambda p: p.rows),
            cat(lambda p: p.rows_src),
            cat(lambda p: p.pinc),
            cat(lambda p: p.se),
            frozenset().union(*(p.ref_counts for p in parts)),
            sum(p.segments for p in parts),
        )


def _checked(
    systems: Mapping[str, Sequence[str]], sources: Sequence[str], refs: RefsLike, pinc: PINC
) -> tuple[Mapping[str, Sequence[str]], Sequence[str], list[list[str]]]:
    systems = validate.systems(systems)
    sources = validate.texts(sources, "sources", "paraphrase(systems, [source, ...], refs)")
    seg_refs = segment_major(validate.references(refs, "refs"))
    if not isinstance(pinc, PINC):
        raise InputTypeError(f"pinc must be a PINC configuration, got {type(pinc).__name__}")
    n = len(sources)
    if len(seg_refs) != n:
        raise InputError(f"{n} sources but references for {len(seg_refs)} segments")
    for name, hyps in systems.items():
        if len(hyps) != n:
            raise InputError(f"system {name} has {len(hyps)} segments but there are {n} sources")
    return systems, sources, seg_refs


def segment_rows(
    systems: Mapping[str, Sequence[str]],
    sources: Sequence[str],
    refs: RefsLike,
    *,
    tokenize: str = "13a",
    lowercase: bool = False,
    pinc: PINC = DEFAULT_PINC,
) -> SegmentRows:
    """The per-segment rows of :func:`paraphrase` (same arguments); every text is tokenized once by one encoder."""
    systems, sources, seg_refs = _checked(systems, sources, refs, pinc)
    enc = Encoder(Preprocess(tokenize, lowercase))
    src = Texts(*enc.encode(sources))
    ref, seg = _encode_refs(enc, seg_refs)
    ref_src, seg_src = _with_source(ref, seg, src)
    names = tuple(systems)
    hyp = [Texts(*enc.encode(systems[s])) for s in names]
    return SegmentRows(
        names,
        tuple(count_rows(hyp, ref, seg, 4)),
        tuple(count_rows(hyp, ref_src, seg_src, 4)),
        tuple(pinc(*novelty_counts(h, src, pinc.max_order, pinc.sets)) for h in hyp),
        tuple(se_scores(h, ref, seg) for h in hyp),
        frozenset(len(rs) for rs in seg_refs),
        len(sources),
    )


def paraphrase(
    systems: Mapping[str, Sequence[str]],
    sources: Sequence[str],
    refs: RefsLike,
    *,
    ratings: Mapping[str, Sequence[float]] | None = None,
    tokenize: str = "13a",
    lowercase: bool = False,
    pinc: PINC = DEFAULT_PINC,
) -> ParaphraseResult:
    """BLEU (without and with the source as a reference), PINC, SE and their combinations per system.

    ``ratings`` (system -> one human rating per segment, NaN for none) fits the logistic of
    PINC x sigmoid(BLEU) on all rated sentences of all systems and adds that combination.
    """
    rows = segment_rows(systems, sources, refs, tokenize=tokenize, lowercase=lowercase, pinc=pinc)
    return paraphrase_scores(rows, ratings=ratings, tokenize=tokenize, lowercase=lowercase, pinc=pinc)


def _fitted(
    per_system: Sequence[tuple[Any, ...]], names: Sequence[str], ratings: Mapping[str, Sequence[float]], n: int
) -> Logistic:
    """The logistic of PINC x sigmoid(BLEU) fitted to every rated sentence of every system."""
    missing = [s for s in names if s not in ratings]
    if missing:
        raise InputError(f"no ratings for system(s) {', '.join(missing)}")
    y = []
    for s in names:
        r = np.asarray(ratings[s], dtype=np.float64)
        if len(r) != n:
            raise InputError(f"ratings of {s}: {len(r)} values for {n} segments")
        y.append(r)
    return fit_logistic(
        np.concatenate([x[5] for x in per_system]), np.concatenate([x[3] for x in per_system]), np.concatenate(y)
    )


def paraphrase_scores(
    segs: SegmentRows,
    *,
    ratings: Mapping[str, Sequence[float]] | None = None,
    tokenize: str = "13a",
    lowercase: bool = False,
    pinc: PINC = DEFAULT_PINC,
) -> ParaphraseResult:
    """The scores of :func:`paraphrase` from its per-segment rows (the text options only name the signatures)."""
    pre = Preprocess(tokenize, lowercase)
    n = segs.segments
    corpus_bleu, sent_bleu = BLEU(), BLEU(effective_order=True)
    nrefs = nrefs_label(sorted(segs.ref_counts))
    sig_bleu = _signature("BLEU", nrefs, pre, corpus_bleu.signature())
    sig_src = _signature("BLEU+src", nrefs, pre, corpus_bleu.signature() + "|source:ref")
    sig_pinc = _signature("PINC", "src", pre, pinc.signature())
    sig_se = _signature("SE", nrefs, pre, SE().signature())
    per_system = []
    for name, rows, rows_src, p_sent, se_sent in zip(segs.names, segs.rows, segs.rows_src, segs.pinc, segs.se):
        st, st_src = Stats(rows, 4, False), Stats(rows_src, 4, False)
        per_system.append((name, st, st_src, p_sent, se_sent, sent_bleu(st)))
    logistic = None if ratings is None else _fitted(per_system, segs.names, ratings, n)
    out: list[Score] = []
    for name, st, st_src, p_sent, se_sent, b_sent in per_system:
        b, p = float(corpus_bleu(st.total())), float(p_sent.mean()) if n else 0.0
        out += [
            Score(name, "BLEU", b, sig_bleu, True, b_sent),
            Score(name, "BLEU+src", float(corpus_bleu(st_src.total())), sig_src, True, sent_bleu(st_src)),
            Score(name, "PINC", p, sig_pinc, True, p_sent),
            Score(name, "SE", float(se_sent.mean()) if n else 0.0, sig_se, True, se_sent),
            Score(name, "AM(BLEU,PINC)", (b + p) / 2, "arithmetic mean of BLEU and PINC", True),
            Score(name, "GM(BLEU,PINC)", float(np.sqrt(b * p)), "geometric mean of BLEU and PINC", True),
            Score(name, "HM(BLEU,PINC)", 2 * b * p / (b + p) if b + p else 0.0, "harmonic mean of BLEU and PINC", True),
        ]
        if logistic is not None:
            comb = p_sent * logistic(b_sent)
            lg = logistic
            sig = f"PINC*sigmoid(BLEU)|slope:{lg.slope:.4g}|midpoint:{lg.midpoint:.4g}|r:{lg.pearson:.4f}"
            out.append(Score(name, "PINC*sig(BLEU)", float(comb.mean()) if n else 0.0, sig, True, comb))
    return ParaphraseResult(tuple(out), logistic)


def pinc(
    candidates: Sequence[str],
    sources: Sequence[str],
    *,
    n: int = 4,
    sets: bool = True,
    average: str = "present",
    tokenize: str = "13a",
    lowercase: bool = False,
    **renamed: Any,
) -> Score:
    """System PINC (mean of sentence PINC, in ``.sentences``) of candidates against their sources (``n`` as in
    ``-m pinc:n=4``; ``max_order``: its old name).

    >>> round(pinc(["a cat sits on the mat"], ["the cat sat on the mat"]).score, 4)
    0.6708
    """
    example = f"pinc([{candidates!r:.40}], [{sources!r:.40}])"
    candidates = validate.texts(candidates, "candidates", example)
    sources = validate.texts(sources, "sources", example)
    if len(candidates) != len(sources):
        raise InputError(f"{len(candidates)} candidates but {len(sources)} sources")
    n = renamed_options("pinc", renamed, {"n": n})["n"]
    metric = PINC(n, sets, average)
    pre = Preprocess(tokenize, lowercase)
    enc = Encoder(pre)
    src = Texts(*enc.encode(sources))
    sent = metric(*novelty_counts(Texts(*enc.encode(candidates)), src, n, sets))
    sig = _signature("PINC", "src", pre, metric.signature())
    return Score("system", "PINC", float(sent.mean()) if len(sent) else 0.0, sig, True, sent)


def se(hyps: Sequence[str], refs: RefsLike, *, tokenize: str = "13a", lowercase: bool = False) -> Score:
    """String-edit similarity (Belz & Reiter 2006): mean over segments of the mean over references.

    >>> round(se(["the cat sat"], [["the cat sat", "a cat sat down"]]).score, 4)
    0.7857
    """
    hyps, refs = checked_pair("se", hyps, refs)
    seg_refs = segment_major(refs)
    if len(seg_refs) != len(hyps):
        raise InputError(f"{len(hyps)} hypotheses but references for {len(seg_refs)} segments")
    spec = MetricSpec(SE(), Preprocess(tokenize, lowercase))
    return score({"system": hyps}, seg_refs, [spec], sentence=True)[0]
