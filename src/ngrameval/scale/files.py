"""``ngrameval score`` on files of any length in bounded memory: every input file (systems, references, source;
plain or ``.gz``/``.bz2``/``.xz``) is read in lockstep, ``chunk_size`` segments at a time, with the checks and
``FILE:LINE`` errors of :mod:`ngrameval.io.read`; each chunk is measured (:func:`ngrameval.api.measure`, threads
with ``jobs``) and its rows are folded into the running sum one segment after the other
(:func:`ngrameval.scale.chunks.fold`, as numpy's axis-0 sum adds them), so corpus scores are bit for bit
those of the whole files in memory.

- NIST takes two passes: the first streams the references and counts their n-grams on disk
  (:mod:`ngrameval.scale.refspill`: unigram counts in memory, higher orders in files of up to 104 bytes a reference
  token, counted a group of hash buckets at a time), the second weights each chunk's matches with those counts.
- A metric that ``keeps_references`` (CIDEr/CIDEr-D: document frequencies over every reference) takes two passes
  too: the first reads every reference and makes the metric's reference side of the whole corpus
  (:meth:`~ngrameval.metrics.rows.RowMetric.reference_side`, in memory), the second scores each chunk's systems
  against it (:meth:`~ngrameval.metrics.rows.RowMetric.rows_against`), its references checked by their digests.
- ``ref_cache``: a directory keeping those first passes (NIST's weights chunk by chunk, a metric's reference side)
  for the next system against the same references (:func:`cached_references`, :func:`reference_sides`).
- ``--sentence``: each chunk's sentence scores go to a spill file (8 bytes per segment, system and metric) and
  the output is written at the end in the in-memory layout, through a temporary file renamed over the target.
- ``--confidence``: the bootstrap needs every segment's rows, so they are kept (the summable statistics only:
  8 bytes x their width per segment, system and metric; BLEU 23 numbers, NIST-5 31, ROUGE/chrF/TER a few).

Memory otherwise: one chunk of text and its rows, one block of bytes per input file.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from ngrameval._version import __version__
from ngrameval.api import Scores, checked_specs, named, scores_of
from ngrameval.errors import ConfigError, InputError
from ngrameval.io.read import STDIN, LineStream, expanded_size, ref_rows, refs_length_error
from ngrameval.io.stats import Digests, fingerprint, reference_digests
from ngrameval.jobs import ahead, resolve_jobs
from ngrameval.metrics.policy import summed_warnings
from ngrameval.metrics.registry import MetricSpec
from ngrameval.metrics.rows import KeptSide
from ngrameval.ngrams.stats import MetricRows
from ngrameval.scale import fromfile
from ngrameval.scale.chunks import Chunk, Summed, add_references, chunk_rows, fold, nist_orders, with_nist
from ngrameval.scale.early import AUTO_BYTES, CHUNK
from ngrameval.text.pipeline import Preprocess

if TYPE_CHECKING:  # imported by the paths that use them: NIST's spill files, --sentence's temporary directory
    import tempfile

    from ngrameval.scale.refspill import KeptChunks, SpilledCounts, SpilledWeights

    Weights = SpilledWeights | KeptChunks  # NIST's weights of a streamed run (KeptChunks: from the reference cache)

# segments a chunk when streaming was chosen automatically; inputs larger than AUTO_BYTES (compressed files: once
# decompressed) are streamed (scale.early, which runs before anything heavy is loaded, decides alike)
DEFAULT_CHUNK = CHUNK


@dataclass(frozen=True)
class Files:
    """The inputs of ``score``: ``systems`` name -> path (in order), reference files, the source file; the
    reference options of :func:`ngrameval.io.read.read_refs`; ``separator``: ``--sentence-separator``;
    ``stdin_hint``: appended to a system's line-count error when it was read from standard input by default."""

    systems: dict[str, str]
    refs: list[str]
    source: str | None = None
    tsv: bool = False
    empty_is_missing: bool = False
    separator: str | None = None
    stdin_hint: str = ""

    def paths(self) -> list[str]:
        return [*self.systems.values(), *self.refs, *([self.source] if self.source else [])]


def _unstreamable(spec: MetricSpec) -> bool:
    """Whether a chunk's rows of ``spec`` need every reference at once in a way no first pass makes: corpus-wide
    statistics other than NIST's information weights and a kept reference side."""
    metric = spec.metric
    return metric.corpus_wide and not metric.needs_info and not metric.keeps_references


def auto_chunk(files: Files, specs: Sequence[MetricSpec], chunk_size: int | None) -> int | None:
    """The chunk size to stream with: ``chunk_size`` when given, else :data:`DEFAULT_CHUNK` when the inputs are
    larger than :data:`AUTO_BYTES` (a compressed file: once decompressed) and can be streamed (files, not standard
    input; no metric whose rows need every reference at once); None: in memory."""
    if chunk_size is not None:
        return chunk_size
    paths = files.paths()
    if STDIN in paths or any(_unstreamable(sp) for sp in specs):
        return None
    total = 0
    for p in paths:
        try:  # a compressed file counts its decompressed bytes, read until past the threshold (never a guess)
            total += expanded_size(p, AUTO_BYTES - total)
        except (InputError, OSError, ValueError, EOFError):
            return None  # reading it in memory reports the error as ever
        if total > AUTO_BYTES:
            return DEFAULT_CHUNK
    return None


def _length_error(files: Files, streams: dict[str, LineStream], refs: Sequence[LineStream]) -> InputError:
    """The error :func:`~ngrameval.io.read.read_refs` and ``score``'s in-memory reading give for these line counts."""
    ref_counts = [s.count_rest() for s in refs]
    message = refs_length_error(files.refs, ref_counts, files.tsv)
    if message:
        return InputError(message)
    n = ref_counts[0]
    for name, stream in streams.items():
        count = stream.count_rest()
        if count != n:
            if name == "\0source":
                return InputError(f"{files.source} has {count} lines but the references ({files.refs[0]}) have {n}")
            path = files.systems[name]
            shown = "standard input" if path == STDIN else path
            hint = files.stdin_hint if path == STDIN else ""
            return InputError(f"{shown} has {count} lines but the references ({files.refs[0]}) have {n}{hint}")
    return InputError("the input files changed while being read")  # pragma: no cover - counts agree after all


def read_chunks(files: Files, size: int, refs_only: bool = False) -> Iterator[Chunk]:
    """The segments of ``files`` ``size`` at a time (the last chunk smaller), every file read in lockstep."""
    if size < 1:
        raise ConfigError(f"the chunk size must be a whole number >= 1, got {size}")
    if not files.refs:
        raise InputError("give the references with -r/--refs (one file per reference, or TSV with --tsv)")
    with contextlib.ExitStack() as stack:
        refs = [stack.enter_context(LineStream(p)) for p in files.refs]
        others: dict[str, LineStream] = {}
        if not refs_only:
            others = {name: stack.enter_context(LineStream(p)) for name, p in files.systems.items()}
            if files.source is not None:
                others["\0source"] = stack.enter_context(LineStream(files.source))
        start = 0
        while True:
            ref_lines = [s.take(size) for s in refs]
            lines = {name: s.take(size) for name, s in others.items()}
            n = len(ref_lines[0])
            if any(len(x) != n for x in ref_lines) or any(len(x) != n for x in lines.values()):
                raise _length_error(files, others, refs)
            if n == 0:
                return
            rows = ref_rows(files.refs, ref_lines, files.tsv, files.empty_is_missing, start)
            systems = {name: lines[name] for name in files.systems} if not refs_only else {}
            source = lines.get("\0source")
            sep = files.separator
            if sep:
                rows = [[r.replace(sep, "\n") for r in rs] for rs in rows]
                systems = {name: [h.replace(sep, "\n") for h in hyps] for name, hyps in systems.items()}
            yield Chunk(start, systems, rows, source)
            start += n
            if n < size:
                return


def count_references(
    files: Files,
    specs: Sequence[MetricSpec],
    size: int,
    cache: str | None = None,
    refs: str | None = None,
    jobs: int = 1,
) -> dict[Preprocess, Weights]:
    """NIST's first pass: the reference n-gram counts of every text setting of a NIST spec, over all chunks,
    on disk (:mod:`ngrameval.scale.refspill`); the caller closes the weights. ``cache``: a directory of weights
    counted before (:func:`cached_references`); ``refs``: the references' fingerprint when known; ``jobs``:
    threads that weigh the counts (:meth:`~ngrameval.scale.refspill.SpilledCounts.weights`)."""
    if cache is not None:
        return cached_references(files, nist_orders(specs), size, cache, refs, jobs)
    return dict(_count(files, nist_orders(specs), size, jobs))


def _read_references(files: Files, size: int, keep: bool) -> tuple[Digests, list[list[str]] | None]:
    """Every segment's reference digest, and with ``keep`` the references (segment-major), read once."""
    digests: list[Digests] = []
    kept: list[list[str]] | None = [] if keep else None
    for chunk in read_chunks(files, size, refs_only=True):
        digests.append(reference_digests(chunk.refs))
        if kept is not None:
            kept.extend(list(r) for r in chunk.refs)
    return (np.concatenate(digests) if digests else np.zeros((0, 16), dtype=np.uint8)), kept


def _cache_dir(cache: str) -> None:
    try:
        os.makedirs(cache, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{cache}: cannot make the reference cache ({exc.strerror or exc})") from None


def reference_key(fingerprint_: str, pre: Preprocess, order: int, size: int) -> str:
    """The name of the reference cache's entry of NIST weights: a hash of the references' fingerprint, their text
    settings, the order, the chunk size (the weights are kept chunk by chunk) and the ngrameval version."""
    import hashlib  # (here and in side_key: a run without the reference cache hashes nothing)

    what = {"refs": fingerprint_, "text": pre.signature(), "order": order, "chunk": size, "by": __version__}
    return "nist-" + hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:32]


def cached_references(
    files: Files, orders: dict[Preprocess, int], size: int, cache: str, refs: str | None = None, jobs: int = 1
) -> dict[Preprocess, Weights]:
    """:func:`count_references` through the directory ``cache``: the weights of an entry keyed as
    :func:`reference_key` says are read, not counted; those counted are kept there (written beside, then renamed:
    a reader never sees half an entry). The references are read once more to fingerprint them (unless ``refs``,
    their fingerprint, is given)."""
    from ngrameval.scale.refspill import KeptChunks, SpilledWeights

    if refs is None:
        refs = fingerprint(_read_references(files, size, keep=False)[0])
    _cache_dir(cache)
    entries = {pre: os.path.join(cache, reference_key(refs, pre, order, size)) for pre, order in orders.items()}
    weights: dict[Preprocess, SpilledWeights] = {}
    try:
        for pre, entry in entries.items():
            if os.path.isdir(entry):
                weights[pre] = SpilledWeights.load(entry)
        counted = _count(files, {pre: o for pre, o in orders.items() if pre not in weights}, size, jobs)
        weights.update(counted)
        for pre, w in counted.items():
            _keep(w, entries[pre])
    except BaseException:
        for w in weights.values():
            w.close()
        raise
    return {pre: KeptChunks(w, entries[pre]) for pre, w in weights.items()}


def _keep(weights: SpilledWeights, entry: str) -> None:
    """Save ``weights`` as the cache entry ``entry`` (a temporary name beside it, renamed)."""
    tmp = f"{entry}.{os.urandom(4).hex()}.tmp"
    try:
        weights.save(tmp)
        os.rename(tmp, entry)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if not os.path.isdir(entry):  # another process kept the same entry first: fine
            raise InputError(f"{entry}: cannot keep the reference counts ({exc.strerror or exc})") from None


def _count(files: Files, orders: dict[Preprocess, int], size: int, jobs: int = 1) -> dict[Preprocess, SpilledWeights]:
    """The weights of every text setting of ``orders`` (its NIST order), counted over all chunks of references and
    weighed on ``jobs`` threads."""
    from ngrameval.scale.refspill import SpilledCounts

    tables: dict[Preprocess, SpilledCounts] = {}
    weights: dict[Preprocess, SpilledWeights] = {}
    if not orders:
        return weights
    try:
        for pre, order in orders.items():
            tables[pre] = SpilledCounts(order)
        for chunk in read_chunks(files, size, refs_only=True):
            add_references(tables, chunk.refs)
        for pre, table in tables.items():
            weights[pre] = table.weights(jobs)
        return weights
    except BaseException:
        for w in weights.values():
            w.close()
        raise
    finally:
        for table in tables.values():
            table.close()  # the files of weights made are theirs now


SIDE_FORMAT = 1  # the layout of a kept reference side (``.npz``: the metric's arrays, ``digests``, ``meta``)


def side_key(fingerprint_: str, spec: MetricSpec) -> str:
    """The name of the reference cache's entry of ``spec``'s reference side: the first field of the metric's
    :meth:`~ngrameval.metrics.rows.RowMetric.side_signature` and a hash of the references' fingerprint, the
    metric's text settings, that signature (what the side depends on: CIDEr's order, one side for CIDEr and
    CIDEr-D) and the ngrameval version (the side holds the whole corpus, so no chunk size)."""
    what = {"refs": fingerprint_, "text": spec.metric.text_settings(spec.pre), "side": spec.metric.side_signature(),
            "by": __version__}  # fmt: skip
    import hashlib

    digest = hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:32]
    return f"{spec.metric.side_signature().split('|')[0].lower()}-{digest}.npz"


@dataclass(frozen=True)
class Sides:
    """The reference sides of the specs that keep one (by spec index) and every segment's reference digest, with
    which each chunk's references are checked (:meth:`check`)."""

    sides: dict[int, KeptSide]
    digests: Digests

    def check(self, chunk: Chunk) -> None:
        """InputError unless ``chunk``'s references are those the sides were made of."""
        if not self.sides:
            return
        got = reference_digests(chunk.refs)
        if not np.array_equal(got, self.digests[chunk.start : chunk.start + len(got)]):
            raise InputError("the references changed since their reference side was made (first pass or --ref-cache)")


def reference_sides(files: Files, specs: Sequence[MetricSpec], size: int, cache: str | None = None) -> Sides:
    """The first pass of the specs whose metric ``keeps_references``: every reference read (and held) once, one
    reference side made of them per side signature and text setting (CIDEr and CIDEr-D of one order share one);
    ``cache``: a directory where each side is kept under :func:`side_key` (written beside, then renamed) and found
    again, the references then only read for their digests."""
    wide: dict[tuple[str, Preprocess], list[int]] = {}
    for k, sp in enumerate(specs):
        if sp.metric.keeps_references:
            wide.setdefault((sp.metric.side_signature(), sp.pre), []).append(k)
    if not wide:
        return Sides({}, np.zeros((0, 16), dtype=np.uint8))
    digests, seg_refs = _read_references(files, size, keep=cache is None)
    made: dict[tuple[str, Preprocess], KeptSide] = {}
    entries: dict[tuple[str, Preprocess], str] = {}
    if cache is not None:
        _cache_dir(cache)
        refs = fingerprint(digests)
        entries = {key: os.path.join(cache, side_key(refs, specs[ks[0]])) for key, ks in wide.items()}
        found = [key for key, entry in entries.items() if os.path.exists(entry)]
        made = {key: _load_side(entries[key], specs[wide[key][0]], refs, len(digests)) for key in found}
        if len(made) < len(wide):
            seg_refs = _read_references(files, size, keep=True)[1]
    for key, ks in wide.items():
        if key not in made:
            assert seg_refs is not None
            sp = specs[ks[0]]
            made[key] = sp.metric.reference_side(seg_refs, sp.pre)
            if key in entries:
                _keep_side(made[key], sp, fingerprint(digests), digests, entries[key])
    return Sides({k: made[key] for key, ks in wide.items() for k in ks}, digests)


def _side_meta(spec: MetricSpec, refs: str, segments: int) -> dict[str, object]:
    metric = spec.metric
    return {"format": SIDE_FORMAT, "side": metric.side_signature(), "text": metric.text_settings(spec.pre),
            "refs": refs, "segments": segments, "by": __version__}  # fmt: skip


def _keep_side(side: KeptSide, spec: MetricSpec, refs: str, digests: Digests, entry: str) -> None:
    """Save ``side`` as the cache entry ``entry`` (a temporary name beside it, renamed)."""
    meta = np.frombuffer(json.dumps(_side_meta(spec, refs, len(digests))).encode(), dtype=np.uint8)
    tmp = f"{entry}.{os.urandom(4).hex()}.tmp"
    try:
        with open(tmp, "wb") as fh:
            np.savez(fh, meta=meta, digests=digests, **side.arrays())  # type: ignore[arg-type]
        os.rename(tmp, entry)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if not os.path.exists(entry):  # another process kept the same entry first: fine
            raise InputError(f"{entry}: cannot keep the reference side ({exc.strerror or exc})") from None


def _load_side(entry: str, spec: MetricSpec, refs: str, segments: int) -> KeptSide:
    """The side kept as ``entry``; an InputError naming it when it is damaged, or made of other references or
    settings than ``spec``'s on ``refs`` (checked first: a foreign entry is named as such)."""
    import zipfile  # (np.load's .npz: loaded by it anyway)

    bad = (OSError, ValueError, KeyError, TypeError, IndexError, EOFError, zipfile.BadZipFile)
    try:
        with np.load(entry, allow_pickle=False) as kept:
            arrays = {name: kept[name] for name in kept.files}
        meta = json.loads(bytes(arrays.pop("meta")).decode())
        digests = arrays.pop("digests")
        if not isinstance(meta, dict) or meta.get("format") != SIDE_FORMAT:
            raise ValueError("an unknown format")
    except bad as exc:
        raise InputError(f"{entry}: a damaged reference cache entry ({exc}); remove it to count again") from None
    want = _side_meta(spec, refs, segments)
    differ = [k for k in want if meta.get(k) != want[k]]
    if not differ and (digests.shape != (segments, 16) or fingerprint(digests) != refs):
        differ = ["refs"]
    if differ:
        what = ", ".join(dict.fromkeys(_META_WORDS[k] for k in differ))
        raise InputError(f"{entry}: a reference cache entry made with other {what} than this run's; remove it")
    try:
        side = spec.metric.side_from(arrays)
        if side.segments != segments:
            raise ValueError(f"{side.segments} segments where the references have {segments}")
    except bad as exc:
        raise InputError(f"{entry}: a damaged reference cache entry ({exc}); remove it to count again") from None
    return side


_META_WORDS = {"format": "format", "side": "metric parameters", "text": "text settings", "refs": "references",
               "segments": "references", "by": "ngrameval version"}  # fmt: skip


@dataclass
class Streamed:
    """What :func:`score_files` returns: the corpus rows (one summed row per system, named and signed as
    :func:`ngrameval.api.measure` names them), the system names, the segments read, and with ``sentence`` a
    directory of spill files, with ``keep_rows`` every segment's rows (named likewise)."""

    rows: list[MetricRows]
    names: list[str]
    segments: int
    kept: list[MetricRows] | None = None
    spill: tempfile.TemporaryDirectory[str] | None = field(default=None, repr=False)

    def scores(self) -> Scores:
        """Corpus scores, as :func:`ngrameval.api.scores_of` gives them in memory."""
        return scores_of(self.rows, self.names)

    def close(self) -> None:
        if self.spill is not None:
            self.spill.cleanup()
            self.spill = None


def _spill_path(spill: tempfile.TemporaryDirectory[str], system: int, metric: int) -> str:
    return os.path.join(spill.name, f"{system}.{metric}.f64")


def score_files(
    files: Files,
    specs: Sequence[MetricSpec] | str,
    chunk_size: int = DEFAULT_CHUNK,
    jobs: int | None = 1,
    sentence: bool = False,
    keep_rows: bool = False,
    ref_cache: str | None = None,
    on_chunk: Callable[[Chunk], None] | None = None,
) -> Streamed:
    """Score ``files`` streamed ``chunk_size`` segments at a time (see the module docstring); ``sentence``
    spills sentence scores for :func:`ngrameval.report.sentences.write_sentences`, ``keep_rows`` keeps the rows for
    resampling; ``ref_cache``: a directory where NIST's reference counts and the reference sides of the metrics
    that keep one are kept and found again (:func:`cached_references`, :func:`reference_sides`); ``on_chunk``:
    called with every chunk read, in order (a stats file's digests)."""
    specs = checked_specs(specs)
    for sp in specs:
        if _unstreamable(sp):
            raise ConfigError(
                f"{sp.metric.display_name()} cannot be streamed: its document frequencies and per-segment scores "
                "need every reference at once; score it without --chunk-size (in memory)"
            )
    twice = [sp.metric.display_name() for sp in specs if sp.metric.needs_info or sp.metric.keeps_references]
    if twice and STDIN in files.refs:
        raise ConfigError(
            f"{twice[0]} reads the references twice when streamed (counts, then scores): give them as files"
        )
    sides = reference_sides(files, specs, chunk_size, ref_cache)
    refs_fp = fingerprint(sides.digests) if sides.sides and ref_cache is not None else None
    nist_jobs = resolve_jobs(jobs)
    weights = count_references(files, specs, chunk_size, ref_cache, refs_fp, nist_jobs) if with_nist(specs) else {}
    from ngrameval.scale.refspill import spill_directory

    spill = spill_directory("ngrameval-") if sentence else None
    acc: Summed | None = None
    kept = _Kept()
    try:
        with contextlib.ExitStack() as stack, summed_warnings():
            sinks: dict[tuple[int, int], io.BufferedWriter] = {}
            plain = weights or sides.sides or on_chunk or files.source or files.tsv or files.empty_is_missing
            from_bytes = None if plain or files.separator else fromfile.chunk_rows(
                files.refs, list(files.systems.values()), specs, chunk_size, resolve_jobs(jobs)
            )  # fmt: skip
            pieces = (
                ((rows, frozenset({len(files.refs)})) for rows in from_bytes)
                if from_bytes is not None
                else _read_and_counted(files, specs, chunk_size, jobs, weights, sides, on_chunk)
            )
            for rows, counts in pieces:
                acc = fold(acc, (rows, counts, ()))
                if spill is not None:
                    for j, r in enumerate(rows):
                        for k in range(len(r.values)):
                            if (k, j) not in sinks:
                                sinks[k, j] = stack.enter_context(open(_spill_path(spill, k, j), "wb"))
                            sinks[k, j].write(np.ascontiguousarray(r.scorer(r.values[k]), dtype=np.float64).tobytes())
                if keep_rows:
                    kept.add(rows)
        if acc is None:  # empty files: scored as in memory (zeros, with the same warnings)
            empty = Chunk(0, {name: [] for name in files.systems}, [], [] if files.source else None)
            acc = fold(None, (chunk_rows(empty, specs, weights, jobs, 0, sides.sides), frozenset(), ()))
        n_refs = sorted(acc.n_refs)
        summed = named(list(acc.rows), specs, n_refs)
        full = None
        if keep_rows:
            full = [replace(r, values=v) for r, v in zip(summed, kept.values(), strict=True)]
        return Streamed(summed, list(files.systems), acc.segments, full, spill)
    except BaseException:
        if spill is not None:
            spill.cleanup()
        raise
    finally:
        for w in weights.values():
            w.close()


def _read_and_counted(
    files: Files,
    specs: Sequence[MetricSpec],
    chunk_size: int,
    jobs: int | None,
    weights: dict[Preprocess, Weights],
    sides: Sides,
    on_chunk: Callable[[Chunk], None] | None,
) -> Iterator[tuple[list[MetricRows], frozenset[int]]]:
    """:func:`score_files`' chunks read as ``str`` (:func:`read_chunks`) and counted: their rows and reference
    counts; an error of a chunk names where it starts."""
    chunks = read_chunks(files, chunk_size)  # with threads, the next chunk read while this one is counted
    for index, chunk in enumerate(ahead(chunks) if resolve_jobs(jobs) > 1 else chunks):
        if on_chunk is not None:
            on_chunk(chunk)
        try:
            sides.check(chunk)
            rows = chunk_rows(chunk, specs, weights, jobs, index, sides.sides)
        except InputError as exc:
            where = f" (segments counted from line {chunk.start + 1}, where a chunk of {chunk_size} starts)"
            raise type(exc)(f"{exc}{where}") from None
        yield rows, frozenset(len(r) for r in chunk.refs)


class _Kept:
    """Every chunk's rows per metric, once for metrics that share their values (counted together)."""

    def __init__(self) -> None:
        self.owner: list[int] = []
        self.parts: list[list[NDArray[np.float64]]] = []

    def add(self, rows: Sequence[MetricRows]) -> None:
        if not self.owner:
            first: dict[int, int] = {}
            self.owner = [first.setdefault(id(r.values), j) for j, r in enumerate(rows)]
            self.parts = [[] for _ in rows]
        for j, r in enumerate(rows):
            if self.owner[j] == j:
                self.parts[j].append(np.stack(r.values))  # (systems, segments, width)

    def values(self) -> list[tuple[NDArray[np.float64], ...]]:
        """Per metric, every system's rows of all chunks in segment order."""
        whole: dict[int, tuple[NDArray[np.float64], ...]] = {}
        for j in sorted(set(self.owner)):
            stacked = np.concatenate(self.parts[j], axis=1)
            self.parts[j] = []
            whole[j] = tuple(stacked[k] for k in range(stacked.shape[0]))
        return [whole[o] for o in self.owner]


def sentence_values(streamed: Streamed, system: int, metric: int, block: int) -> Iterator[NDArray[np.float64]]:
    """The spilled sentence scores of ``system`` under metric ``metric``, ``block`` at a time, in segment order."""
    assert streamed.spill is not None
    with open(_spill_path(streamed.spill, system, metric), "rb") as fh:
        while data := fh.read(8 * block):
            yield np.frombuffer(data, dtype=np.float64)
