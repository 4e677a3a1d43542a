"""Count once, keep the statistics: a run's per-segment sufficient statistics (every metric's summable rows,
:mod:`ngrameval.metrics.rows`) with the fingerprints of its texts and the metrics' full signatures, written to and
read from a stats file (:mod:`ngrameval.io.stats`, Apache Parquet). Scores, intervals and significance computed
from a :class:`RunStats` read back are those of the text, bit for bit: they are functions of the same rows.

A metric is kept as its class name and fields, its text settings and its signature; reading rebuilds it (so its
scorer) and checks the signature. A ``counted`` metric scores its block of shared n-gram statistics at the order
they were counted (:meth:`~ngrameval.metrics.rows.RowMetric.counted_rows`); any other metric's scorer comes from
its own ``rows`` of no segment. Shards of one corpus merge in order (:func:`merge_stats`), except for a
``corpus_wide`` metric (NIST's information weights, CIDEr's document frequencies), whose rows depend on every
reference of the corpus: refused, by name.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ngrameval._version import __version__
from ngrameval.api import RefsLike, Scores, checked_specs, measure, named, scores_of, segment_major, signature
from ngrameval.errors import InputError
from ngrameval.io.stats import (
    DIGEST,
    Block,
    Digests,
    StatsTable,
    Texts,
    fingerprint,
    line_digests,
    read_table,
    reference_digests,
    write_table,
)
from ngrameval.metrics.registry import MetricSpec, check_metric, metric_types
from ngrameval.metrics.rows import Batch, Rows
from ngrameval.ngrams.stats import NIST_COLUMNS, MetricRows, Stats
from ngrameval.text import validate
from ngrameval.text.pipeline import Preprocess

_STATS_BLOCKS = ("match", "total", "rmatch", "rtotal", "info")  # the Stats layout (ngrameval.ngrams.stats)


@dataclass(frozen=True)
class RunStats:
    """The per-segment statistics of a run: ``rows[m].values[s]`` (segments x width) of metric ``m`` and system
    ``systems[s]``, the specs they were counted under, the reference counts per segment (``n_refs``, distinct), and
    the 16-byte digest of every segment's references, outputs and source (:mod:`ngrameval.io.stats`); ``texts``:
    the texts themselves when kept (``stats --texts``: what the report's analysis reads)."""

    systems: tuple[str, ...]
    rows: tuple[MetricRows, ...]
    specs: tuple[MetricSpec, ...]
    n_refs: tuple[int, ...]
    refs: Digests
    hyps: tuple[Digests, ...]
    source: Digests | None = None
    written_by: str = f"ngrameval-{__version__}"
    texts: Texts | None = None

    @property
    def segments(self) -> int:
        return len(self.refs)

    def scores(self, sentence: bool = False) -> Scores:
        """Every metric's score of every system, as :func:`ngrameval.score` gives them from the text."""
        return scores_of(self.rows, self.systems, sentence)

    def counted_totals(self, pre: Preprocess, order: int) -> Stats | None:
        """Each system's corpus totals of the shared n-gram statistics counted under ``pre`` at ``order`` or higher
        (the block of a BLEU, NIST or AEv spec; the highest order kept), one row a system; None when none is kept."""
        found = [(k, r) for r, sp in zip(self.rows, self.specs) if sp.metric.counted and sp.pre == pre
                 for k, nist in [_counted_layout(r.values[0].shape[1])] if k is not None and k >= order]  # fmt: skip
        if not found:
            return None
        k, row = max(found, key=lambda x: x[0])
        _, nist = _counted_layout(row.values[0].shape[1])
        return Stats(np.stack([v.sum(axis=0) for v in row.values]), k, nist)

    def fingerprints(self) -> dict[str, Any]:
        """``sha256:`` fingerprints of the references, the source (None) and each system's outputs."""
        return self._table_of_digests().fingerprints()

    def _table_of_digests(self) -> StatsTable:
        return StatsTable(self.systems, self.refs, self.hyps, (), self.source)


def count_stats(
    systems: Mapping[str, Sequence[str]],
    refs: RefsLike,
    specs: Sequence[MetricSpec] | str,
    source: Sequence[str] | None = None,
    jobs: int | None = 1,
    keep_texts: bool = False,
) -> RunStats:
    """The :class:`RunStats` of scoring ``systems`` against ``refs`` with ``specs`` (as :func:`ngrameval.measure`:
    a ``-m`` string or MetricSpecs; ``jobs`` threads); ``keep_texts``: keep the texts too (``stats --texts``)."""
    checked = checked_specs(specs)
    rows = measure(systems, refs, checked, source, jobs)
    seg_refs = segment_major(validate.references(refs, "refs"))
    src = None if source is None else validate.texts(source, "source")
    return run_of(validate.systems(systems), seg_refs, src, rows, checked, keep_texts)


def run_of(
    systems: Mapping[str, Sequence[str]],
    refs: Sequence[Sequence[str]],
    source: Sequence[str] | None,
    rows: Sequence[MetricRows],
    specs: Sequence[MetricSpec],
    keep_texts: bool = False,
) -> RunStats:
    """The :class:`RunStats` of ``rows`` counted under ``specs`` on these texts (``refs`` segment-major): their
    digests taken, and the texts kept with ``keep_texts``."""
    names = list(systems)
    return RunStats(
        tuple(names), tuple(rows), tuple(specs), tuple(sorted({len(r) for r in refs})),
        reference_digests(refs), tuple(line_digests(systems[n]) for n in names),
        None if source is None else line_digests(source),
        texts=texts_of(systems, refs, source) if keep_texts else None,
    )  # fmt: skip


def texts_of(
    systems: Mapping[str, Sequence[str]], refs: Sequence[Sequence[str]], source: Sequence[str] | None
) -> Texts:
    """The :class:`~ngrameval.io.stats.Texts` of a run (``refs`` segment-major)."""
    return Texts(tuple(tuple(v) for v in systems.values()), tuple(tuple(r) for r in refs),
                 None if source is None else tuple(source))  # fmt: skip


class Digester:
    """The digests of a corpus read piece by piece (chunks of streamed files, in order): :meth:`add` each piece's
    systems, references and source, then :meth:`run` makes the :class:`RunStats` of rows counted over the same
    pieces; ``keep_texts``: keep the pieces' texts too."""

    def __init__(self, keep_texts: bool = False) -> None:
        self.refs: list[Digests] = []
        self.hyps: dict[str, list[Digests]] = {}
        self.source: list[Digests] = []
        self.n_refs: set[int] = set()
        self.texts: list[Texts] | None = [] if keep_texts else None

    def add(
        self, systems: Mapping[str, Sequence[str]], refs: Sequence[Sequence[str]], source: Sequence[str] | None
    ) -> None:
        self.refs.append(reference_digests(refs))
        for name, lines in systems.items():
            self.hyps.setdefault(name, []).append(line_digests(lines))
        if source is not None:
            self.source.append(line_digests(source))
        self.n_refs.update(len(r) for r in refs)
        if self.texts is not None:
            self.texts.append(texts_of(systems, refs, source))

    def run(self, names: Sequence[str], rows: Sequence[MetricRows], specs: Sequence[MetricSpec]) -> RunStats:
        """The run of ``rows`` (every segment's, named and signed: :func:`ngrameval.scale.files.score_files` with
        ``keep_rows``) counted under ``specs`` over the pieces added, systems ``names``."""

        def cat(parts: list[Digests]) -> Digests:
            return np.concatenate(parts) if parts else np.zeros((0, DIGEST), dtype=np.uint8)

        hyps = tuple(cat(self.hyps.get(name, [])) for name in names)
        texts = None
        if self.texts is not None:
            empty = Texts(tuple(() for _ in names), (), () if self.source else None)
            texts = self.texts[0].concatenated(self.texts[1:]) if self.texts else empty
        return RunStats(tuple(names), tuple(rows), tuple(specs), tuple(sorted(self.n_refs)), cat(self.refs), hyps,
                        cat(self.source) if self.source else None, texts=texts)  # fmt: skip


# ---- metrics as JSON: class name, fields (non-finite floats and tuples spelled out), text settings


def _encode(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return {"float": repr(value)}
    if isinstance(value, tuple | list):
        return {"tuple": [_encode(v) for v in value]}
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {"float"}:
        return float(value["float"])
    if isinstance(value, dict) and set(value) == {"tuple"}:
        return tuple(_decode(v) for v in value["tuple"])
    return value


def _fields(obj: Any) -> dict[str, Any]:
    return {f.name: _encode(getattr(obj, f.name)) for f in dataclasses.fields(obj) if f.init}


def _column_names(spec: MetricSpec, width: int) -> tuple[str, ...]:
    """The columns of a block: the :class:`~ngrameval.ngrams.stats.Stats` layout for counted statistics, else the
    metric's own row positions ``c0``, ``c1`` ..."""
    order, nist = _counted_layout(width)
    if not spec.metric.counted or order is None:
        return tuple(f"c{j}" for j in range(width))
    cols = ["hyp_len", "ref_len", "ref_len_mean"]
    cols += [f"{b}_{n}" for b in _STATS_BLOCKS for n in range(1, order + 1)]
    return tuple(cols + (list(NIST_COLUMNS) if nist else []))


def _counted_layout(width: int) -> tuple[int | None, bool]:
    """(order, with NIST columns) of counted statistics ``width`` wide: 3 + 5 n, or 3 + 5 n + 3 with NIST's."""
    if width > 3 and (width - 3) % 5 == 0:
        return (width - 3) // 5, False
    if width > 6 and (width - 6) % 5 == 0:
        return (width - 6) // 5, True
    return None, False


def _record(row: MetricRows, spec: MetricSpec, block: str) -> dict[str, Any]:
    metric = spec.metric
    return {
        "name": row.metric,
        "signature": row.signature,
        "fraction": row.fraction,
        "higher_is_better": row.higher_is_better,
        "block": block,
        "class": type(metric).__name__,
        "fields": _fields(metric),
        "text": _fields(spec.pre),
        "corpus_wide": metric.corpus_wide,
    }


def to_table(run: RunStats) -> StatsTable:
    """``run`` as a :class:`~ngrameval.io.stats.StatsTable`: metrics sharing their rows (counted together) share
    one block, named after the first of them."""
    blocks: dict[int, Block] = {}
    records = []
    for row, spec in zip(run.rows, run.specs, strict=True):
        key = id(row.values)
        if key not in blocks:
            width = row.values[0].shape[1] if row.values else 0
            blocks[key] = Block(row.metric, _column_names(spec, width), tuple(row.values))
        records.append(_record(row, spec, blocks[key].name))
    header = {"metrics": records, "n_refs": list(run.n_refs)}
    return StatsTable(run.systems, run.refs, run.hyps, tuple(blocks.values()), run.source, header, run.texts)


def write_stats(run: RunStats, path: str | Path) -> None:
    """Write ``run`` to the stats file ``path`` (Parquet; atomically: a temporary file renamed)."""
    write_table(path, to_table(run))


def _spec_of(path: str | Path, record: dict[str, Any]) -> MetricSpec:
    """The MetricSpec a stats file records, rebuilt; an InputError naming the file and the metric if it cannot be."""
    name = record.get("name", "?")
    cls = metric_types().get(str(record.get("class")))
    if cls is None:
        raise InputError(f"{path}: metric {name} (class {record.get('class')}) is not one this ngrameval can rebuild")
    try:
        metric = cls(**{k: _decode(v) for k, v in record["fields"].items()})
        check_metric(metric)
        pre = Preprocess(**{k: _decode(v) for k, v in record["text"].items()})
        spec = MetricSpec(metric, pre, bool(record["fraction"]))
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise InputError(f"{path}: metric {name} cannot be rebuilt by ngrameval {__version__} ({exc})") from None
    return spec


def _unversioned(sig: str) -> str:
    return sig.rpartition("|version:")[0] or sig


def _rows_of(spec: MetricSpec, values: tuple[Any, ...]) -> Rows:
    """``spec``'s metric's rows of ``values``: counted statistics at the order of their width, any other metric with
    the scorer of its own rows (of no segment)."""
    metric = spec.metric
    if metric.counted:
        order, nist = _counted_layout(values[0].shape[1])
        return metric.counted_rows(values, order or 0, nist)
    empty = Batch([[]], [], spec.pre, [metric], [] if metric.needs_source else None)
    return replace(metric.rows(empty), values=values)


def from_table(path: str | Path, table: StatsTable) -> RunStats:
    """The :class:`RunStats` of a stats file's table (``path`` names the file in errors)."""
    records, n_refs = table.header.get("metrics"), table.header.get("n_refs")
    if not isinstance(records, list) or not records or not isinstance(n_refs, list):
        raise InputError(f"{path}: its metadata lists no metrics (not written by ngrameval stats?)")
    blocks = {b.name: b for b in table.blocks}
    rows, specs = [], []
    try:
        counts = [int(n) for n in n_refs]
        for record in records:
            if not isinstance(record, dict) or record.get("block") not in blocks:
                raise InputError(f"{path}: a metric's record names no block of the file (damaged?)")
            spec = _spec_of(path, record)
            rows.append(_stored_rows(path, record, spec, blocks[record["block"]].values, counts))
            specs.append(spec)
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(f"{path}: its metrics' metadata is damaged (no or a bad {exc})") from None
    return RunStats(table.systems, tuple(rows), tuple(specs), tuple(counts), table.refs, table.hyps, table.source,
                    str(table.header.get("written_by", "?")), table.texts)  # fmt: skip


def _stored_rows(
    path: str | Path, record: dict[str, Any], spec: MetricSpec, values: tuple[Any, ...], n_refs: list[int]
) -> MetricRows:
    """The rows of one metric's record, its signature checked against the rebuilt metric's."""
    sig, name = str(record["signature"]), str(record["name"])
    mine = signature(spec, n_refs)
    if _unversioned(mine) != _unversioned(sig):
        raise InputError(f"{path}: metric {name} rebuilt with signature {mine}, but the file says {sig}")
    try:
        rebuilt = _rows_of(spec, values)
    except ValueError as exc:
        raise InputError(f"{path}: metric {name}: its block does not fit it ({exc})") from None
    return MetricRows(name, sig, spec.fraction, values, rebuilt.scorer, rebuilt.details,
                      bool(record["higher_is_better"]))  # fmt: skip


def read_stats(path: str | Path) -> RunStats:
    """The :class:`RunStats` of the stats file ``path``; an InputError naming the file for a file that is not one,
    is damaged or truncated, was written by a newer schema, or holds a metric this version cannot rebuild."""
    return from_table(path, read_table(path))


def _differs(what: str, a: object, b: object) -> InputError:
    return InputError(f"{what}: {a} and {b}")


def merge_stats(runs: Sequence[RunStats], names: Sequence[str] | None = None, weighed: bool = False) -> RunStats:
    """Shards of one corpus (consecutive segments, in ``runs``' order) as one run: rows and digests concatenated,
    so the merge equals the run of the whole corpus bit for bit. Every shard must hold the same systems and metrics
    (an InputError naming what differs, ``names``: the shards' names); a ``corpus_wide`` metric is refused, unless
    ``weighed``: the shards' rows were counted with the weights of the whole corpus (Dask partitions' NIST)."""
    if not runs:
        raise InputError("no statistics to merge")
    label = list(names) if names is not None else [f"shard {k + 1}" for k in range(len(runs))]
    first = runs[0]
    wide = [r.metric for r, sp in zip(first.rows, first.specs) if sp.metric.corpus_wide]
    if wide and not weighed:
        raise InputError(f"{label[0]}: {wide[0]} cannot be merged from shards: its statistics depend on every "
                         "reference of the corpus (count it on the whole corpus)")  # fmt: skip
    for lab, run in zip(label[1:], runs[1:]):
        if run.systems != first.systems:
            raise _differs(f"{lab}: systems differ from {label[0]}'s", list(run.systems), list(first.systems))
        if run.specs != first.specs:  # the signatures may differ in nrefs only (1 in a shard, var in another)
            k = next((k for k, (a, b) in enumerate(zip(run.specs, first.specs)) if a != b), len(first.specs))
            k = min(k, len(run.specs), len(first.specs))
            a = run.rows[k].signature if k < len(run.rows) else "nothing"
            b = first.rows[k].signature if k < len(first.rows) else "nothing"
            raise _differs(f"{lab}: metric {k + 1} differs from {label[0]}'s", a, b)
        if (run.source is None) != (first.source is None):
            raise InputError(f"{lab}: {'has' if run.source is not None else 'lacks'} a source, unlike {label[0]}")
        if run.written_by != first.written_by:
            raise _differs(f"{lab}: written by another ngrameval than {label[0]}", run.written_by, first.written_by)
        if (run.texts is None) != (first.texts is None):
            raise InputError(f"{lab}: {'holds' if run.texts is not None else 'lacks'} the texts, unlike {label[0]} "
                             "(write every shard with stats --texts, or none)")  # fmt: skip
    n_refs = tuple(sorted({n for run in runs for n in run.n_refs}))
    shared: dict[int, tuple[Any, ...]] = {}
    rows = []
    for m, row in enumerate(first.rows):
        key = id(row.values)
        if key not in shared:
            shared[key] = tuple(
                np.concatenate([run.rows[m].values[s] for run in runs]) for s in range(len(first.systems))
            )
        rows.append(replace(row, values=shared[key]))
    renamed = named(rows, first.specs, n_refs)
    if first.written_by != f"ngrameval-{__version__}":  # keep the writer's version in the signatures
        renamed = [replace(r, signature=_unversioned(r.signature) + "|version:" + first.written_by) for r in renamed]
    cat = np.concatenate
    return RunStats(
        first.systems, tuple(renamed), first.specs, n_refs, cat([r.refs for r in runs]),
        tuple(cat([r.hyps[s] for r in runs]) for s in range(len(first.systems))),
        None if first.source is None else cat([r.source for r in runs if r.source is not None]), first.written_by,
        None if first.texts is None else first.texts.concatenated([r.texts for r in runs[1:] if r.texts is not None]),
    )  # fmt: skip


def check_texts(run: RunStats, path: str, refs: Sequence[Sequence[str]] | None, refs_name: str,
                source: Sequence[str] | None = None, source_name: str = "the source") -> None:  # fmt: skip
    """An InputError naming what differs (with both fingerprints and the first segment that differs) when the
    references (``refs``, segment-major) or ``source`` are not those ``run`` (read from ``path``) was counted on."""
    if refs is not None:
        _same(path, "references", refs_name, run.refs, reference_digests(refs))
    if source is not None:
        if run.source is None:
            raise InputError(f"{source_name}: {path} was counted without a source")
        _same(path, "source", source_name, run.source, line_digests(source))


def _same(path: str, what: str, name: str, stored: Digests, given: Digests) -> None:
    if len(stored) == len(given) and np.array_equal(stored, given):
        return
    n = min(len(stored), len(given))
    differ = np.flatnonzero((stored[:n] != given[:n]).any(axis=1))
    at = int(differ[0]) if len(differ) else n
    where = f"segments {len(given)} vs {len(stored)}" if at == n else f"first at segment {at + 1}"
    raise InputError(f"{name}: {what} differ from those {path} was counted on ({where}): {what} "
                     f"{fingerprint(given)}, stats {fingerprint(stored)}")  # fmt: skip


def select(run: RunStats, path: str, specs: Sequence[MetricSpec]) -> RunStats:
    """The statistics of ``specs`` (as ``-m`` asks for them; named as a run of these specs alone names them), or an
    InputError naming the signature asked for and the stored one nearest to it (the most fields in common)."""
    by_sig = {_unversioned(r.signature): k for k, r in enumerate(run.rows)}
    picked = []
    for spec in specs:
        want = signature(spec, run.n_refs)
        k = by_sig.get(_unversioned(want))
        if k is None:
            fields = set(want.split("|"))
            held = max((r.signature for r in run.rows), key=lambda sig: len(fields & set(sig.split("|"))))
            raise InputError(f"{path}: no statistics of {want} (the nearest it holds: {held})")
        picked.append(k)
    rows = named([run.rows[k] for k in picked], specs, run.n_refs)
    if run.written_by != f"ngrameval-{__version__}":
        rows = [replace(r, signature=run.rows[k].signature) for r, k in zip(rows, picked)]
    return replace(run, rows=tuple(rows), specs=tuple(specs))
