"""Text -> summable rows, owned by each metric (sacreBLEU's ``Metric._extract_corpus_statistics`` ->
``_aggregate_and_compute`` is the model): every metric class derives from :class:`RowMetric` and turns a
:class:`Batch` (the systems, references and source of one text setting) into :class:`Rows`, whose sum per
system its scorer turns into the corpus score. Orchestration (:func:`ngrameval.api.measure`, the chunked
files, Dask) loops over metrics and never asks which class one is; what it needs to know, a metric says:

- ``counted``: its rows are the shared n-gram statistics (:class:`~ngrameval.ngrams.stats.Stats`), counted once
  per text setting for every such metric at the highest order any of them needs (BLEU, NIST, AEv, COCO BLEU);
- ``needs_info``: those statistics carry NIST's information weights (corpus-wide reference counts);
- ``corpus_wide``: a segment's rows depend on every reference of the corpus (NIST's weights, CIDEr's document
  frequencies): threads measure the whole corpus in one task, a Dask graph counts the references first;
- ``needs_source``: rows are measured against the source sentences (PINC: signature ``nrefs:src``);
- ``reads_tokens``: rows need the batch's encoded references (:attr:`Batch.references`: PINC, SE);
- :meth:`RowMetric.text_settings`: the text part of its signature (chrF, TER read raw text their own way);
- ``keeps_references``: what its rows need from the references alone can be made once (:meth:`RowMetric.reference_side`,
  a :class:`KeptSide` of arrays), kept (the reference cache, :mod:`ngrameval.scale.files`) and the systems counted
  against it (:meth:`RowMetric.rows_against`), bit for bit its :meth:`RowMetric.rows` (CIDEr's document frequencies
  and reference vectors); its corpus-wide part is counted per piece of segments and added exactly
  (:meth:`RowMetric.reference_counts`, :meth:`RowMetric.merged_counts`: CIDEr's document frequencies on Dask).

Products shared by several metrics of one text setting (the n-gram statistics, the encoded references, the
normalised raw text, one ROUGE tokenization for every variant) are made once per :class:`Batch`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, TypeVar, cast, overload

import numpy as np
from numpy.typing import NDArray

from ngrameval.ngrams import direct
from ngrameval.ngrams.count import References, overlap_stats
from ngrameval.ngrams.stats import Scorer, Stats, mean_rows, stats_scorer
from ngrameval.ngrams.texts import Texts, flatten
from ngrameval.text.normalize import normalize_texts
from ngrameval.text.pipeline import Preprocess
from ngrameval.text.tokenize import LOWERCASING

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
Values = tuple[FloatArray, ...]  # one array of per-segment rows per system
Details = Callable[[FloatArray], dict[str, Any] | None]
T = TypeVar("T")


class kept(Generic[T]):
    """A property computed on first use and kept in the instance (as ``functools.cached_property``, which in
    Python < 3.12 holds one lock for every instance of the class while it computes: the batches of chunks
    measured on threads then took turns, and ``jobs=2`` counted no faster than one thread). A batch is used
    by one thread, so no lock is needed."""

    def __init__(self, make: Callable[[Any], T]) -> None:
        self.make = make
        self.name = make.__name__
        self.__doc__ = make.__doc__

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> kept[T]: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...
    def __get__(self, obj: object | None, owner: type | None = None) -> kept[T] | T:
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.make(obj)
        return value


@dataclass(frozen=True)
class Rows:
    """A metric's rows of one batch: ``values[s]`` (segments x width) of system ``s``, the function scoring a sum
    of rows, and the breakdown of a summed row (BLEU's precisions, BP, lengths) where the metric has one."""

    values: Values
    scorer: Scorer
    details: Details | None = None


class Batch:
    """The inputs of one text setting ``pre`` (segment-major references, checked lengths) and the metrics measured
    under it; the products they share are made on first use and kept."""

    def __init__(
        self,
        systems: Sequence[Sequence[str]],
        seg_refs: Sequence[Sequence[str]],
        pre: Preprocess,
        metrics: Sequence[RowMetric],
        source: Sequence[str] | None = None,
        jobs: int = 1,
    ) -> None:
        self.systems = systems
        self.jobs = jobs  # threads of the counting that needs the whole corpus at once (NIST's)
        self.seg_refs = seg_refs
        self.pre = pre
        self.metrics = metrics
        self.source = source
        self._shared: dict[object, object] = {}

    @kept
    def flat(self) -> tuple[Sequence[str], IntArray]:
        """Every reference in segment order and the segment offsets."""
        return flatten(self.seg_refs)

    @kept
    def raw(self) -> tuple[Sequence[Sequence[str]], Sequence[str], IntArray]:
        """The systems and flat references as raw text (chrF, TER), in the Unicode normal form of ``pre``."""
        flat, seg = self.flat
        if not self.pre.normalize:
            return self.systems, flat, seg
        systems = [normalize_texts(h, self.pre.normalize) for h in self.systems]
        return systems, list(normalize_texts(flat, self.pre.normalize)), seg

    @kept
    def references(self) -> References:
        """The references tokenized and encoded under ``pre`` (corpus-wide token ids)."""
        return References.build(self.seg_refs, self.pre)

    @kept
    def counted(self) -> tuple[Values, int, bool]:
        """The n-gram statistics of every system, counted once for all ``counted`` metrics of the batch: the values,
        the order (the highest any of them needs) and whether NIST's information weights are in them."""
        counted = [m for m in self.metrics if m.counted]
        order = max(m.order_needed for m in counted)
        nist = any(m.needs_info for m in counted)
        tokens = any(m.reads_tokens for m in self.metrics)
        if not tokens and direct.applies(self.pre, nist):  # counted straight from the lines
            stats = direct.direct_stats(self.systems, self.seg_refs, self.pre, order)
        else:
            stats = overlap_stats(self.systems, self.references, max_order=order, nist=nist, jobs=self.jobs)
        return tuple(st.values for st in stats), order, nist

    def shared(self, key: object, make: Callable[[], T]) -> T:
        """``make()``, once per batch and ``key``: what several metrics of one family share (one ROUGE tokenization)."""
        if key not in self._shared:
            self._shared[key] = make()
        return self._shared[key]  # type: ignore[return-value]

    def sentence_rows(self, score: Callable[[Texts, Texts, IntArray, Texts | None], FloatArray]) -> Values:
        """Rows ``(score, 1)`` of every system from sentence scores made chunk by chunk of :attr:`references`:
        ``score(hyps, refs, seg, source)`` (texts encoded with the references' ids; ``source`` when given)."""
        refs = self.references
        out: list[list[FloatArray]] = [[] for _ in self.systems]
        enc = refs.encoder
        for ch in refs.chunks:
            src = None if self.source is None else Texts(*enc.encode(self.source[ch.start : ch.stop]))
            for acc, hyps in zip(out, self.systems):
                hyp = Texts(*enc.encode(hyps[ch.start : ch.stop]))
                acc.append(score(hyp, Texts(ch.ids, ch.off), ch.seg, src))
        return tuple(mean_rows(np.concatenate(acc) if acc else np.zeros(0)) for acc in out)


class CountedBatch(Batch):
    """A batch of no text whose shared products were counted elsewhere (straight from a file's bytes:
    :mod:`ngrameval.scale.fromfile`): ``counted`` as :attr:`Batch.counted` gives it, ``shared`` as
    :meth:`Batch.shared` keeps it (``"rouge"``: :func:`~ngrameval.metrics.rouge.item_scores`' result)."""

    def __init__(
        self,
        pre: Preprocess,
        metrics: Sequence[RowMetric],
        counted: tuple[Values, int, bool] | None = None,
        shared: Mapping[object, object] | None = None,
    ) -> None:
        super().__init__((), (), pre, metrics)
        if counted is not None:
            self.__dict__["counted"] = counted  # what the kept property would have made
        self._shared.update(shared or {})


def raw_text_ignored(given: Preprocess, why: str) -> list[tuple[str, str]]:
    """The tokenizer, stemming and stop-word options of ``given``, ignored by a metric that reads raw text (``why``)."""
    out = [(f"-tok {given.tokenize}", why)] if given.tokenize != "13a" else []
    return out + [(opt, why) for opt, on in (("--stem", given.stem), ("--stopwords", given.stopwords)) if on]


class KeptSide(Protocol):
    """A metric's reference side (:meth:`RowMetric.reference_side`): numpy arrays only, so it can be kept on disk."""

    @property
    def segments(self) -> int:
        """The segments whose references it holds."""
        ...

    def arrays(self) -> dict[str, NDArray[Any]]:
        """The side as named arrays (:meth:`RowMetric.side_from` reads them back)."""
        ...


class SideCounts(Protocol):
    """The part of a metric's reference side that depends on every reference of the corpus, as counts of some
    segments' references that add exactly over disjoint pieces (:meth:`RowMetric.reference_counts`)."""

    @property
    def segments(self) -> int:
        """The segments whose references it counts."""
        ...


class RowMetric:
    """What every metric class offers orchestration (see the module docstring); the defaults are a metric of
    its own rows that reads tokenized text, higher is better."""

    counted: ClassVar[bool] = False
    needs_info: ClassVar[bool] = False
    corpus_wide: ClassVar[bool] = False
    needs_source: ClassVar[bool] = False
    reads_tokens: ClassVar[bool] = False
    keeps_references: ClassVar[bool] = False
    higher_is_better: ClassVar[bool] = True
    tokenizer_option: ClassVar[str] = "tok= in the spec"  # how a user sets its tokenizer

    @property
    def order_needed(self) -> int:
        """The highest n-gram order its statistics need (``counted`` metrics)."""
        return 0

    def display_name(self) -> str:
        raise NotImplementedError

    def signature(self) -> str:
        raise NotImplementedError

    def check(self) -> None:
        """ConfigError naming any option outside its range (options a dataclass does not check when built)."""

    def ignored_options(self, own: Preprocess, given: Preprocess) -> list[tuple[str, str]]:
        """The command line's text options (``given``) that have no effect on this metric counted under ``own`` (its
        spec's text settings), each with the reason: (option, reason)."""
        out: list[tuple[str, str]] = []
        if own.tokenize != given.tokenize and given.tokenize != "13a":
            how = self.tokenizer_option
            out.append((f"-tok {given.tokenize}", f"it tokenizes with {own.tokenize} (set {how} to change it)"))
        if given.lowercase and own.tokenize in LOWERCASING:
            out.append(("-lc", f"its tokenizer {own.tokenize} lower-cases by itself"))
        return out

    def text_settings(self, pre: Preprocess) -> str:
        """The text part of the signature (``tok:13a|case:mixed|stop:no|stem:no``)."""
        return pre.signature()

    def rows(self, batch: Batch) -> Rows:
        """The metric's rows of ``batch``; a ``counted`` metric scores the batch's shared n-gram statistics."""
        if not self.counted:
            raise NotImplementedError(f"{type(self).__name__} has no row builder")
        return self.counted_rows(*batch.counted)

    def counted_rows(self, values: Values, order: int, nist: bool) -> Rows:
        """Rows of n-gram statistics ``values`` counted at ``order`` (``nist``: with information weights), scored
        by this metric: how a ``counted`` metric scores statistics counted elsewhere (a chunk of a file, a Dask
        partition weighted by the whole corpus)."""
        score = stats_scorer(cast(Callable[[Stats], FloatArray], self), order, nist)
        return Rows(values, score, self.details(order, nist))

    def details(self, order: int, nist: bool) -> Details | None:
        """The breakdown of a summed row of statistics counted at ``order`` (None: the metric has none)."""
        return None

    def reference_side(
        self, seg_refs: Sequence[Sequence[str]], pre: Preprocess, whole: SideCounts | None = None
    ) -> KeptSide:
        """What the rows need from the references ``seg_refs`` (segment-major) alone, under ``pre``
        (``keeps_references`` metrics); ``whole``: the corpus-wide counts of a corpus these segments are a piece of
        (:meth:`merged_counts`), which the side then uses, so that rows against it are the whole corpus's rows of
        these segments."""
        raise NotImplementedError(f"{type(self).__name__} keeps no reference side")

    def reference_counts(self, seg_refs: Sequence[Sequence[str]], pre: Preprocess) -> SideCounts:
        """The corpus-wide part of the reference side of ``seg_refs`` alone, as counts (a Dask partition's)."""
        raise NotImplementedError(f"{type(self).__name__} keeps no reference side")

    def merged_counts(self, pieces: Sequence[SideCounts]) -> SideCounts:
        """The :meth:`reference_counts` of pieces of disjoint segments added, exactly (in any grouping)."""
        raise NotImplementedError(f"{type(self).__name__} keeps no reference side")

    def side_signature(self) -> str:
        """What its reference side depends on besides the text settings (``NAME|field:value...``): metrics of one
        side signature share one side (default: the display name and the full signature)."""
        return f"{self.display_name()}|{self.signature()}"

    def side_from(self, arrays: Mapping[str, NDArray[Any]]) -> KeptSide:
        """The side :meth:`KeptSide.arrays` gave; ValueError when its parts disagree."""
        raise NotImplementedError(f"{type(self).__name__} keeps no reference side")

    def rows_against(self, side: KeptSide, systems: Sequence[Sequence[str]], pre: Preprocess, first: int = 0) -> Rows:
        """The rows of the systems' segments ``first, first + 1, ...`` against the kept ``side``: those of
        :meth:`rows` on the whole corpus, bit for bit."""
        raise NotImplementedError(f"{type(self).__name__} keeps no reference side")
