"""The Python API: score systems against references with any metrics, in one counting pass per
text setting. Scores are fractions in [0, 1] (NIST: its own scale); x100 happens only in reports."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np
from numpy.typing import NDArray

from ngrameval import _direct
from ngrameval import progress as _progress
from ngrameval._version import __version__
from ngrameval.errors import InputError, InputTypeError
from ngrameval.jobs import chunked_map, resolve_jobs
from ngrameval.metrics.policy import summed_warnings
from ngrameval.metrics.registry import (
    Metric,
    MetricSpec,
    check_metric,
    parse_spec,
    parse_specs,
    rouge_metric,
    split_specs,
)
from ngrameval.metrics.rows import Batch
from ngrameval.ngrams.stats import MetricRows, Stats, concatenated_rows, summed
from ngrameval.ngrams.texts import flatten
from ngrameval.text import validate
from ngrameval.text.pipeline import Preprocess

if TYPE_CHECKING:  # each metric's module is imported by the function that scores it (start-up: issue 32, item 6)
    from ngrameval.metrics.rouge import ItemScores, Rouge

RefsLike = Sequence[str] | Sequence[Sequence[str]]
RefsT = TypeVar("RefsT", bound=Sequence[Any])  # what a reference check returns
IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class Score:
    """One corpus-level score with the signature of every setting that produced it."""

    system: str
    metric: str
    score: float
    signature: str
    fraction: bool = True
    sentences: NDArray[np.float64] | None = None
    details: Mapping[str, Any] | None = None  # BLEU: precisions (x100), bp, ratio, hyp_len, ref_len
    interval: tuple[float, float] | None = None  # a bootstrap percentile interval (score --confidence)

    def __float__(self) -> float:
        return self.score

    @property
    def scale(self) -> str:
        """``"0-1"`` (``score`` is a fraction; text output shows it x100) or ``"raw"`` (NIST: its own scale)."""
        return "0-1" if self.fraction else "raw"

    @property
    def score100(self) -> float:
        """The score as text output prints it: x100 on the 0-1 scale (BLEU 0.452 -> 45.2), NIST unchanged."""
        return self.score * 100 if self.fraction else self.score

    def to_dict(self) -> dict[str, object]:
        """Plain values (sentence scores as a list) for JSON or ``pandas.DataFrame([s.to_dict() ...])``."""
        sentences = None if self.sentences is None else [float(v) for v in self.sentences]
        return {"system": self.system, "metric": self.metric, "score": self.score, "scale": self.scale,
                "signature": self.signature, "sentences": sentences, "details": self.details,
                "interval": self.interval}  # fmt: skip

    def __repr__(self) -> str:
        per = "" if self.sentences is None else f", {len(self.sentences)} sentence scores"
        return f"Score({self.system!r}, {self.metric} {self.score:.6g} on {self.scale}{per}, {self.signature!r})"

    def _repr_html_(self) -> str:
        """As :class:`Scores` and text output show it: x100 on the 0-1 scale (NIST on its own)."""
        head = ["system", "metric", "score x100" if self.fraction else "score", "signature"]
        from ngrameval.io.tables import html_table  # html and pandas: loaded when a notebook shows a score

        return html_table(head, [[self.system, self.metric, self.score100, self.signature]], digits=4)


class Scores(list[Score]):
    """What :func:`score` returns: a list of :class:`Score` that a notebook shows as a systems x metrics table
    (as text output prints them: x100 on the 0-1 scale), with ``to_dict()`` and ``to_pandas()``."""

    def to_dict(self) -> list[dict[str, object]]:
        return [s.to_dict() for s in self]

    def to_pandas(self) -> Any:
        """One row per system and metric (``sentences`` and ``details`` left out); ``.pivot(index="system",
        columns="metric", values="score")`` gives the table."""
        skip = ("sentences", "details", "interval")
        from ngrameval.io.tables import to_pandas

        return to_pandas([{k: v for k, v in s.to_dict().items() if k not in skip} for s in self])

    def _repr_html_(self) -> str:
        systems = list(dict.fromkeys(s.system for s in self))
        metrics = list(dict.fromkeys(s.metric for s in self))
        cell = {(s.system, s.metric): s.score100 for s in self}
        rows = [[name, *(cell.get((name, m), math.nan) for m in metrics)] for name in systems]
        from ngrameval.io.tables import html_table

        return html_table(["system", *metrics], rows, "x100 on the 0-1 scale (NIST: its own)", digits=4)


def segment_major(refs: RefsLike) -> list[list[str]]:
    """``refs[i]`` = the references of segment i; a flat list of strings means one reference each."""
    kind = _direct.layout(refs) if isinstance(refs, list | tuple) else 2  # (a generator is read once)
    if kind == 1:
        return list(cast(list[list[str]], refs))  # already segment-major lists of str (no loop)
    if kind == 0:
        return [[r] for r in cast(Sequence[str], refs)]
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


def flat_references(refs: RefsLike) -> tuple[Sequence[str], IntArray]:
    """Every reference in segment order and the segment offsets: segment i has ``flat[seg[i]:seg[i + 1]]``.
    A flat sequence of strings (one reference each) is used as it is, without a list per segment."""
    if isinstance(refs, list | tuple) and _direct.layout(refs) == 0:  # every item an exact str (one C pass)
        return cast(Sequence[str], refs), np.arange(len(refs) + 1, dtype=np.int64)
    return flatten(segment_major(refs))


def nrefs_label(counts: Sequence[int]) -> str:
    """The signature's ``nrefs``: the number of references per segment, or ``var`` when it varies."""
    distinct = set(counts)
    return str(distinct.pop()) if len(distinct) == 1 else "var"


def signature(spec: MetricSpec, n_refs: Sequence[int]) -> str:
    """``BLEU|nrefs:1|tok:13a|case:mixed|stop:no|stem:no|n:4|eff:no|smooth:exp|version:...``
    (``n_refs``: the reference counts per segment; a metric measured against the source (PINC): ``nrefs:src``)."""
    metric = spec.metric
    nrefs = "src" if metric.needs_source else nrefs_label(n_refs)
    text = metric.text_settings(spec.pre)
    return f"{metric.display_name()}|nrefs:{nrefs}|{text}|{metric.signature()}|version:ngrameval-{__version__}"


def measure(
    systems: Mapping[str, Sequence[str]],
    refs: RefsLike,
    specs: Sequence[MetricSpec],
    source: Sequence[str] | None = None,
    jobs: int | None = 1,
    progress: bool = False,
) -> list[MetricRows]:
    """The summable per-segment rows of every metric of ``specs`` for every system (in ``systems``'
    order): one counting pass per text setting; PINC and SE become rows ``(score, 1)``. ``specs`` may also be
    a ``-m`` string (``"bleu,rouge-l"``). ``jobs``: threads (``None``: every core), bit for bit the
    ``jobs=1`` result (see :func:`measure_chunked`). ``progress``: a bar on standard error
    (:mod:`ngrameval.progress`)."""
    checked, seg_refs, source = _checked_texts(systems, refs, source)
    return _measure_valid(checked, seg_refs, checked_specs(specs), source, jobs, progress)


def measure_piece(
    systems: Mapping[str, Sequence[str]],
    refs: RefsLike,
    specs: Sequence[MetricSpec],
    source: Sequence[str] | None = None,
    jobs: int = 1,
) -> list[MetricRows]:
    """:func:`measure` of one piece of a corpus (a chunk of segments, or the whole corpus for a corpus-wide metric,
    whose NIST counting takes ``jobs`` threads of its own) on one of several threads, its warnings left
    to the caller, who catches and sums them once, on its own thread, around the pool
    (:func:`~ngrameval.metrics.policy.summed_warnings`). ``warnings.catch_warnings`` is not thread-safe: pieces
    that each caught their own on two threads restored each other's hooks on leaving, so the warnings of some
    pieces went to a list nobody read (PINC's "N of M undefined" summed over 6,000 of 12,000 scores)."""
    checked, seg_refs, source = _checked_texts(systems, refs, source)
    checked_lengths(checked, seg_refs, source)
    specs = checked_specs(specs)
    with _progress.task("scoring", len(seg_refs) * len(specs), "seg") as advance:
        return _measure_checked(checked, seg_refs, specs, source, 1, advance, jobs)


def _checked_texts(
    systems: Mapping[str, Sequence[str]], refs: RefsLike, source: Sequence[str] | None
) -> tuple[dict[str, Sequence[str]], list[list[str]], Sequence[str] | None]:
    """The inputs of :func:`measure` checked (:mod:`ngrameval.text.validate`), the references segment-major."""
    given = dict(systems) if isinstance(systems, Mapping) else {}
    checked = validate.systems(systems)
    seg_refs = validate.segments(refs, "refs")  # segment-major from the check's own pass
    if source is not None:
        source = validate.texts(source, "source")
    for name, hyps in checked.items():  # a generator used up by an earlier call: say so
        if len(hyps) != len(seg_refs):
            hint = validate.read_once_hint(given.get(name), f"systems[{name!r}]", len(hyps))
            hint += validate.read_once_hint(refs, "refs", len(seg_refs))
            if hint:
                raise InputError(f"system {name!r} has {len(hyps)} segments but the references have {len(seg_refs)}"
                                 + hint)  # fmt: skip
    return checked, seg_refs, source


def _measure_valid(
    systems: Mapping[str, Sequence[str]],
    seg_refs: list[list[str]],
    specs: list[MetricSpec],
    source: Sequence[str] | None,
    jobs: int | None,
    progress: bool,
) -> list[MetricRows]:
    """:func:`measure` of texts already checked (:mod:`ngrameval.text.validate`), specs too."""
    checked_lengths(systems, seg_refs, source)
    task = _progress.task("scoring", len(seg_refs) * len(specs), "seg")
    with summed_warnings(), _progress.shown(progress), task as advance:  # a warning once over systems and chunks
        return _measure_checked(systems, seg_refs, specs, source, jobs, advance)


def checked_lengths(
    systems: Mapping[str, Sequence[str]], seg_refs: Sequence[Sequence[str]], source: Sequence[str] | None
) -> None:
    """InputError unless every system and the source have one text per segment of ``seg_refs``."""
    for name, hyps in systems.items():
        if len(hyps) != len(seg_refs):
            who = "hyps" if list(systems) == ["system"] else f"system {name!r}"  # one system: the API's hyps
            raise InputError(
                f"{who} has {len(hyps)} segment{'' if len(hyps) == 1 else 's'} but the references have {len(seg_refs)}"
                + validate.stream_major_hint(seg_refs, len(hyps))
            )
    if source is not None and len(source) != len(seg_refs):
        raise InputError(f"the source has {len(source)} segments but the references have {len(seg_refs)}")


def _measure_checked(
    systems: Mapping[str, Sequence[str]],
    seg_refs: list[list[str]],
    specs: list[MetricSpec],
    source: Sequence[str] | None,
    jobs: int | None,
    advance: _progress.Advance,
    threads: int = 1,
) -> list[MetricRows]:
    """:func:`measure` of checked inputs; ``advance`` counts segments x metrics done; one job: ``threads`` for the
    counting of the whole corpus at once (NIST's)."""
    if resolve_jobs(jobs) > 1:
        return measure_chunked(systems, seg_refs, specs, source, resolve_jobs(jobs))
    by_text: dict[Preprocess, list[tuple[int, MetricSpec]]] = {}
    for i, spec in enumerate(specs):
        by_text.setdefault(spec.pre, []).append((i, spec))
    texts = list(systems.values())
    n_refs = _direct.sizes(seg_refs)  # sorted(set(map(len, seg_refs))) in one C pass
    out: dict[int, MetricRows] = {}
    for pre, group in by_text.items():
        # what the metrics of one text setting share (one n-gram count, one ROUGE tokenization) is made once
        batch = Batch(texts, seg_refs, pre, [sp.metric for _, sp in group], source, threads)
        for i, spec in group:
            out[i] = spec_rows(spec, batch, n_refs)
            advance(len(seg_refs))  # the bar counts segments x metrics done
    return unique_names([directed(out[i], specs[i]) for i in range(len(specs))])


def spec_rows(spec: MetricSpec, batch: Batch, n_refs: Sequence[int]) -> MetricRows:
    """The rows of ``spec``'s metric in ``batch`` (its text setting's), named and signed (``n_refs``: the distinct
    reference counts of the segments)."""
    rows = spec.metric.rows(batch)
    sig = signature(spec, n_refs)
    return MetricRows(spec.metric.display_name(), sig, spec.fraction, rows.values, rows.scorer, rows.details)


def measure_chunked(
    systems: Mapping[str, Sequence[str]],
    refs: Sequence[Sequence[str]],
    specs: Sequence[MetricSpec],
    source: Sequence[str] | None,
    jobs: int,
) -> list[MetricRows]:
    """:func:`measure` of checked, segment-major inputs on ``jobs`` threads (:func:`ngrameval.jobs.chunked_map`):
    a segment's rows depend on its own text alone, so chunks of segments are measured on their own (each its own
    vocabulary) and their rows concatenated in order; the text settings of a ``corpus_wide`` metric (NIST's
    information weights, CIDEr's document frequencies) are measured over the whole corpus as one more task of the
    pool. Equal to the serial result bit for bit, names and signatures included."""
    wide = {sp.pre for sp in specs if sp.metric.corpus_wide}
    whole = [k for k, sp in enumerate(specs) if sp.pre in wide]
    split = [k for k in range(len(specs)) if k not in whole]

    def run(ks: list[int], ch: range, threads: int = 1) -> list[MetricRows]:
        part = {name: hyps[ch.start : ch.stop] for name, hyps in systems.items()}
        src = None if source is None else source[ch.start : ch.stop]
        return measure_piece(part, refs[ch.start : ch.stop], [specs[k] for k in ks], src, threads)

    first = [partial(run, whole, range(len(refs)), jobs)] if whole else []
    try:
        with summed_warnings():  # caught here, on the calling thread, never in the pool's (see measure_piece)
            wholes, parts = chunked_map(partial(run, split) if split else None, len(refs), jobs, first)
    except InputError:
        # a message naming a segment counts from the chunk's start: let the serial path name it
        return measure(systems, refs, specs, source)
    rows: dict[int, MetricRows] = {}
    if whole:
        rows.update(zip(whole, wholes[0]))
    if split:
        rows.update(zip(split, (replace(r, values=v) for r, v in zip(parts[0], concatenated_rows(parts)))))
    return named([rows[k] for k in range(len(specs))], specs, sorted({len(r) for r in refs}))


def directed(rows: MetricRows, spec: MetricSpec) -> MetricRows:
    """``rows`` carrying the direction of ``spec``'s metric (lower is better for TER)."""
    return replace(rows, higher_is_better=bool(getattr(spec.metric, "higher_is_better", True)))


def unique_names(rows: Sequence[MetricRows]) -> list[MetricRows]:
    """Rows whose metric names differ: a name shared by several specs (``nist,nist:profile=plain``) gains the
    signature fields that set it apart (``NIST profile:plain``), or ``#2``, ``#3`` for a repeated spec."""
    out = list(rows)
    for name in {r.metric for r in rows}:
        same = [k for k, r in enumerate(rows) if r.metric == name]
        if len(same) < 2:
            continue
        fields = [r.signature.split("|")[1:] for r in (rows[k] for k in same)]
        common = set.intersection(*(set(f) for f in fields))
        seen: dict[str, int] = {}
        for k, own in zip(same, fields, strict=True):
            new = " ".join([name, *(f for f in own if f not in common)])
            seen[new] = seen.get(new, 0) + 1
            out[k] = replace(rows[k], metric=new if seen[new] == 1 else f"{new} #{seen[new]}")
    return out


def named(rows: Sequence[MetricRows], specs: Sequence[MetricSpec], n_refs: Sequence[int]) -> list[MetricRows]:
    """Rows counted in pieces (threads, Dask partitions) named and signed as one :func:`measure` of the whole
    corpus names them: ``n_refs``, the reference counts of every piece."""
    return unique_names(
        [replace(r, metric=sp.metric.display_name(), signature=signature(sp, n_refs)) for r, sp in zip(rows, specs)]
    )


def checked_specs(specs: Sequence[MetricSpec] | str) -> list[MetricSpec]:
    """``specs`` with every metric's options checked; a string is parsed as a ``-m`` argument."""
    if isinstance(specs, str):
        return parse_specs(specs, Preprocess())
    out = [sp for sp in specs if isinstance(sp, MetricSpec)] if isinstance(specs, Sequence) else []
    if not isinstance(specs, Sequence) or len(out) != len(specs):
        raise InputTypeError(
            f"specs must be a list of MetricSpec (from parse_specs) or a spec string such as 'bleu,rouge-l', "
            f"got {type(specs).__name__}"
        )
    for sp in out:
        check_metric(sp.metric)
    return out


def score(
    systems: Mapping[str, Sequence[str]],
    refs: RefsLike,
    specs: Sequence[MetricSpec],
    sentence: bool = False,
    source: Sequence[str] | None = None,
    jobs: int | None = 1,
) -> Scores:
    """Every metric of ``specs`` for every system; ``sentence`` adds per-segment scores; ``source``
    (the source sentences) is needed by PINC only; ``jobs``: threads, as :func:`measure`."""
    return scores_of(measure(systems, refs, specs, source, jobs), list(systems), sentence)


def scores_of(rows: Sequence[MetricRows], names: Sequence[str], sentence: bool = False) -> Scores:
    """The :class:`Score` of every system (``names``, in the rows' order) under every metric of ``rows``."""
    return Scores(_score_of(name, r, k, sentence) for k, name in enumerate(names) for r in rows)


def _score_of(name: str, r: MetricRows, k: int, sentence: bool) -> Score:
    """System ``k``'s :class:`Score` under the metric of ``r`` (its rows summed once)."""
    total = summed(r.values[k])
    sentences = r.scorer(r.values[k]) if sentence else None
    details = r.details(total) if r.details is not None else None
    return Score(name, r.metric, float(r.scorer(total)), r.signature, r.fraction, sentences, details)


def checked_pair(fn: str, hyps: Sequence[str], refs: RefsLike) -> tuple[Sequence[str], RefsLike]:
    """``hyps`` and ``refs`` of ``fn(hyps, refs, ...)`` checked (see :mod:`ngrameval.text.validate`), one reference set
    per hypothesis (an InputError saying so, and when a generator was used up or refs looks stream-major)."""
    return _checked_pair(fn, hyps, refs, validate.references)


def _checked_pair(
    fn: str, hyps: Sequence[str], refs: RefsLike, check_refs: Callable[[object, str, str], RefsT]
) -> tuple[Sequence[str], RefsT]:
    """:func:`checked_pair` with the references checked by ``check_refs`` (``validate.references``, or
    ``validate.segments`` for them segment-major from the same pass)."""
    example = validate.pair_example(fn, hyps, refs)
    checked_hyps, checked_refs = validate.texts(hyps, "hyps", example), check_refs(refs, "refs", example)
    if len(checked_hyps) != len(checked_refs):
        n, n_refs = len(checked_hyps), len(checked_refs)
        raise InputError(
            f"hyps has {n} segment{'' if n == 1 else 's'} but the references have {n_refs}"
            + validate.read_once_hint(hyps, "hyps", n)
            + validate.read_once_hint(refs, "refs", n_refs)
            + validate.stream_major_hint(segment_major(checked_refs), n)
        )
    return checked_hyps, checked_refs


def _one(fn: str, hyps: Sequence[str], refs: RefsLike, metric: Metric, pre: Preprocess, fraction: bool = True) -> Score:
    hyps, seg_refs = _checked_pair(fn, hyps, refs, validate.segments)  # segment-major from the check's pass
    specs = checked_specs([MetricSpec(metric, pre, fraction)])
    rows = _measure_valid({"system": hyps}, seg_refs, specs, None, 1, False)
    return scores_of(rows, ["system"], sentence=True)[0]


# Keyword spellings of ne.bleu before the API took the metric specs' names (bleu:n=4,smooth=exp,eff=yes); they
# keep working for one release with a FutureWarning.
_RENAMED = {"max_order": "n", "smooth_method": "smooth", "effective_order": "eff"}


def renamed_options(fn: str, old: Mapping[str, object], values: dict[str, Any]) -> dict[str, Any]:
    """``values`` updated from the old keyword spellings in ``old`` (each with a FutureWarning naming the new
    one); any other keyword is an InputTypeError, as Python's own."""
    for key, value in old.items():
        new = _RENAMED.get(key)
        if new is None:
            raise InputTypeError(f"{fn}() got an unexpected keyword argument {key!r}")
        warnings.warn(f"{fn}({key}=...) is deprecated; use {new}=... (the -m spec's name)", FutureWarning, stacklevel=3)
        values[new] = value
    return values


def bleu(
    hyps: Sequence[str],
    refs: RefsLike,
    *,
    tokenize: str = "13a",
    lowercase: bool = False,
    stem: bool = False,
    stopwords: str | None = None,
    n: int = 4,
    smooth: str = "exp",
    smooth_value: float | None = None,
    eff: bool = False,
    normalize: str | None = None,
    **renamed: Any,
) -> Score:
    """Corpus BLEU as sacreBLEU computes it (``.sentences`` holds sentence BLEU of each segment); options named
    as in ``-m bleu:n=4,smooth=exp,eff=no``; with ``smooth="nltk0".."nltk7"`` as NLTK's ``corpus_bleu`` /
    ``sentence_bleu`` (see ``BLEU.nltk_corpus``). ``max_order``, ``smooth_method``, ``effective_order``: old names.
    ``normalize``: ``"nfc"`` or ``"nfkc"``, the Unicode normal form of every text first (default: as given).

    >>> round(bleu(["the cat sat on the mat"], ["the cat sat on the mat"]).score, 4)
    1.0
    """
    from ngrameval.metrics.bleu import BLEU

    o = renamed_options("bleu", renamed, {"n": n, "smooth": smooth, "eff": eff})
    metric = BLEU(o["n"], o["smooth"], smooth_value, o["eff"])
    pre = Preprocess(tokenize, lowercase, stopwords, stem, normalize)
    if not metric.smooth_method.startswith("nltk"):
        return _one("bleu", hyps, refs, metric, pre)
    # NLTK's corpus_bleu is not a function of the summed rows (max(1, t) per segment, last-segment smoothing)
    hyps, refs = checked_pair("bleu", hyps, refs)
    rows = measure({"system": hyps}, refs, [MetricSpec(metric, pre)])[0]
    corpus = metric.nltk_corpus(Stats(rows.values[0], metric.order_needed))
    return Score("system", rows.metric, corpus, rows.signature, rows.fraction, rows.scorer(rows.values[0]))


def nist(
    hyps: Sequence[str],
    refs: RefsLike,
    *,
    n: int = 5,
    tokenize: str = "13a",
    lowercase: bool = False,
    stem: bool = False,
    stopwords: str | None = None,
    profile: str = "mteval",
    ref_len: str = "mean",
    normalize: str | None = None,
) -> Score:
    """Corpus NIST-n as mteval-v13a.pl computes it (not a fraction); ``profile="plain"`` drops mteval's
    weighting of bigrams after the token ``0``, ``ref_len="average"`` takes the E2E challenge's reference
    length (see :mod:`ngrameval.metrics.nist`); ``normalize`` as :func:`bleu`."""
    from ngrameval.metrics.nist import NIST

    pre = Preprocess(tokenize, lowercase, stopwords, stem, normalize)
    return _one("nist", hyps, refs, NIST(n, profile, ref_len), pre, fraction=False)


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
    normalize: str | None = None,
) -> Score:
    """AEv(alpha, N) of Soricut & Brill (2004); alpha = 1 is the precision family, 0 the recall family;
    ``normalize`` as :func:`bleu`."""
    from ngrameval.metrics.aev import AEv

    metric = AEv(alpha=alpha, n=n, brevity=brevity, wordiness=wordiness)
    return _one("aev", hyps, refs, metric, Preprocess(tokenize, lowercase, stopwords, stem, normalize))


@dataclass(frozen=True)
class RougeScore:
    """One ROUGE variant over a corpus: ``items`` holds recall, precision and F of every item (fractions);
    the properties are their means, the system score ROUGE-1.5.5 and ``rouge-score`` users report."""

    metric: str
    signature: str
    items: ItemScores

    @property
    def recall(self) -> float:
        return float(self.items.recall.mean()) if len(self.items.recall) else 0.0

    @property
    def precision(self) -> float:
        return float(self.items.precision.mean()) if len(self.items.precision) else 0.0

    @property
    def f(self) -> float:
        return float(self.items.f.mean()) if len(self.items.f) else 0.0


class RougeScores(dict[str, RougeScore]):
    """What :func:`rouge` returns: spec -> :class:`RougeScore`, with ``to_dict()`` and ``to_pandas()`` (one row
    per spec: metric, recall, precision, F as fractions, signature) like every other result."""

    def to_dict(self) -> list[dict[str, object]]:
        return [{"spec": k, "metric": s.metric, "recall": s.recall, "precision": s.precision, "f": s.f,
                 "signature": s.signature} for k, s in self.items()]  # fmt: skip

    def to_pandas(self) -> Any:
        from ngrameval.io.tables import to_pandas

        return to_pandas(self.to_dict(), index="spec")


def rouge(
    hyps: Sequence[str],
    refs: RefsLike,
    metrics: Sequence[str] | str = ("rouge-1", "rouge-2", "rouge-l"),
    *,
    profile: str = "rouge155",
    stem: bool = False,
    stopwords: str | None = None,
    multi: str | None = None,
    alpha: float = 0.5,
    length_limit: int = 0,
    byte_limit: int = 0,
    sentences: str = "lines",
    normalize: str | None = None,
) -> RougeScores:
    """ROUGE of one system, per item and averaged, keyed by the spec given (``rouge-2``, ``rouge-su4``,
    ``rouge-w:w=1.5`` ...). Sentences are separated by ``"\n"`` inside a text (ROUGE-L/W use them).

    ``profile``: ``rouge155`` (ROUGE-1.5.5 exactly, 5-decimal rounding), ``rouge-score`` (Google's tokenizer,
    NLTK stemmer, best-F reference, ``rouge-l`` over the whole text) or ``unicode`` (words of any script).
    ``multi``: ``A`` (pool references), ``B`` (best recall), ``jk`` (jackknife), ``max-f``; default by profile.
    ``alpha``: ROUGE-1.5.5's ``-p`` (1 = precision, 0 = recall); ``length_limit``/``byte_limit``: ``-l``/``-b``.
    ``metrics``: a list of specs or one string of comma-separated specs (``"rouge-1,rouge-l"``).
    ``sentences``: ``lines`` (a sentence is a line) or ``pysbd`` (split every line into sentences, as rouge-score's
    ``split_summaries``); ``normalize``: ``"nfc"``/``"nfkc"``, the Unicode normal form of every text first.

    >>> s = rouge(["the cat sat on the mat"], ["the cat is on the mat"], ["rouge-1", "rouge-2"])
    >>> s["rouge-1"].f, s["rouge-2"].recall
    (0.83333, 0.6)
    """
    from ngrameval.metrics.rouge import item_scores

    hyps, refs = checked_pair("rouge", hyps, refs)
    if isinstance(metrics, str):
        metrics = split_specs(metrics)  # "rouge-1,rouge-l" as the CLI's -m
    elif not isinstance(metrics, Sequence) or not all(isinstance(m, str) for m in metrics):
        raise InputTypeError(f"metrics must be a spec string or a list of them, got {metrics!r}")
    else:
        metrics = [s for m in metrics for s in (split_specs(m) if m.strip().lower() == "rouge" else [m])]
    defaults: dict[str, object] = {"profile": profile, "alpha": alpha}
    defaults.update(length_limit=length_limit, byte_limit=byte_limit, **({"multi": multi} if multi else {}))
    defaults["sentences"] = sentences
    specs = [parse_spec(m, Preprocess(stopwords=stopwords, stem=stem, normalize=normalize), defaults) for m in metrics]
    flat, seg = flat_references(refs)
    if len(hyps) != len(seg) - 1:
        raise InputError(f"{len(hyps)} hypotheses but {len(seg) - 1} reference sets")
    per_seg = np.diff(seg)
    n_refs = [int(per_seg[0])] if len(per_seg) and bool(np.all(per_seg == per_seg[0])) else np.unique(per_seg).tolist()
    by_text: dict[Preprocess, list[tuple[str, MetricSpec, Rouge]]] = {}
    for name, spec in zip(metrics, specs):
        by_text.setdefault(spec.pre, []).append((name, spec, rouge_metric(name, spec)))
    out: dict[str, RougeScore] = {}
    for pre, group in by_text.items():
        (scores,) = item_scores([m for _, _, m in group], [hyps], flat, seg, pre)
        for (name, spec, metric), items in zip(group, scores):
            out[name] = RougeScore(metric.display_name(), signature(spec, n_refs), items)
    return RougeScores((name, out[name]) for name in metrics)
