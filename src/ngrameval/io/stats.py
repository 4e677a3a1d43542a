"""The stats file: per-segment sufficient statistics of a run in Apache Parquet (pyarrow, the ``stats`` extra).

One Parquet row per system and segment, system-major (every segment of the first system, then the next)::

    system (string) | segment (int64, 0-based) | refs_digest | hyp_digest [| source_digest] | BLOCK:COLUMN ...
    [| hyp_text | refs_text | source_text]

``*_text`` (written with ``stats --texts``) are the texts themselves, for what needs more than statistics (the
report's analysis and examples): every row's output; the segment's references (a list) and source on the first
system's rows only (null on the others: one copy). Reading checks them against the digests.

``*_digest`` are 16-byte BLAKE2b digests of the segment's text (its references; the system's output; the source
sentence), so a corpus's fingerprint, ``sha256:`` of its segments' digests in order, is the same for a whole run
and for shards merged in order. ``BLOCK:COLUMN`` are float64 statistics, one block per set of summable rows (the
metrics above this floor name them). The file's schema metadata holds one JSON object under ``ngrameval.stats``:
the schema version, the ngrameval version that wrote it, the systems, the number of segments, the blocks and their
columns, the fingerprints, and what the writer adds (the metrics: :mod:`ngrameval.scale.stored`).

This module knows the format only, not the metrics (floor 3). Every failure to read is an :class:`InputError`
naming the file and what was expected; writing is atomic (:func:`ngrameval.io.write.write_atomic`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ngrameval._version import __version__
from ngrameval.errors import InputError, MissingDependencyError
from ngrameval.io.write import write_atomic

MAGIC = b"PAR1"  # a Parquet file begins and ends with it
SCHEMA_VERSION = 1
META_KEY = b"ngrameval.stats"
DIGEST = 16  # bytes of a segment's digest
Digests = NDArray[np.uint8]  # (segments, DIGEST)
FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class Block:
    """Summable rows shared by one or more metrics: ``values[s]`` (segments x columns) of system ``s``."""

    name: str
    columns: tuple[str, ...]
    values: tuple[FloatArray, ...]


@dataclass(frozen=True)
class Texts:
    """The texts a stats file may carry: every system's outputs, every segment's references, the source."""

    hyps: tuple[tuple[str, ...], ...]
    refs: tuple[tuple[str, ...], ...]
    source: tuple[str, ...] | None = None

    def concatenated(self, more: Sequence[Texts]) -> Texts:
        """These texts followed by those of ``more`` (shards in corpus order)."""
        every = [self, *more]
        hyps = tuple(tuple(x for t in every for x in t.hyps[s]) for s in range(len(self.hyps)))
        source = None if self.source is None else tuple(x for t in every for x in t.source or ())
        return Texts(hyps, tuple(r for t in every for r in t.refs), source)


@dataclass(frozen=True)
class StatsTable:
    """What a stats file holds: the systems, the digests of every segment's texts, the blocks of statistics and
    the writer's ``header`` (a JSON object; the keys this module sets are listed in :data:`OWN_KEYS`)."""

    systems: tuple[str, ...]
    refs: Digests
    hyps: tuple[Digests, ...]
    blocks: tuple[Block, ...]
    source: Digests | None = None
    header: dict[str, Any] = field(default_factory=dict)
    texts: Texts | None = None

    @property
    def segments(self) -> int:
        return len(self.refs)

    def fingerprints(self) -> dict[str, Any]:
        """``sha256:`` fingerprints of the references, the source (None without one) and every system's output."""
        return {
            "refs": fingerprint(self.refs),
            "source": None if self.source is None else fingerprint(self.source),
            "systems": {name: fingerprint(d) for name, d in zip(self.systems, self.hyps, strict=True)},
        }


OWN_KEYS = ("schema", "written_by", "systems", "segments", "blocks", "fingerprints", "texts")


def _encoded(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _as_array(digests: list[bytes]) -> Digests:
    return np.frombuffer(b"".join(digests), dtype=np.uint8).reshape(len(digests), DIGEST)


def line_digests(lines: Sequence[str]) -> Digests:
    """The digest of every line (a system's outputs, the source): BLAKE2b-128 of its UTF-8 bytes."""
    import hashlib  # (OpenSSL's ~2 ms: in the functions that hash, as ``score`` imports this module and hashes nothing)

    blake = hashlib.blake2b
    return _as_array([blake(_encoded(line), digest_size=DIGEST).digest() for line in lines])


def reference_digests(seg_refs: Sequence[Sequence[str]]) -> Digests:
    """The digest of every segment's references: BLAKE2b-128 of their number and each one's length and bytes."""
    import hashlib

    out = []
    for refs in seg_refs:
        h = hashlib.blake2b(len(refs).to_bytes(8, "little"), digest_size=DIGEST)
        for ref in refs:
            data = _encoded(ref)
            h.update(len(data).to_bytes(8, "little"))
            h.update(data)
        out.append(h.digest())
    return _as_array(out)


def fingerprint(digests: Digests) -> str:
    """A corpus's fingerprint: ``sha256:`` of its segments' digests in order (shards merged in order: the whole's)."""
    import hashlib

    return "sha256:" + hashlib.sha256(np.ascontiguousarray(digests).tobytes()).hexdigest()


def _pyarrow() -> Any:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise MissingDependencyError("pyarrow", "stats") from exc
    return pa, pq


def is_stats_file(path: str | Path) -> bool:
    """Whether ``path`` is a regular file that begins as a Parquet file does (``PAR1``): read as statistics."""
    try:
        with open(path, "rb") as fh:
            return fh.read(len(MAGIC)) == MAGIC
    except (OSError, ValueError):
        return False


def _digest_array(pa: Any, digests: Digests, repeat: int = 1) -> Any:
    data = np.ascontiguousarray(np.tile(digests, (repeat, 1)) if repeat > 1 else digests).tobytes()
    return pa.FixedSizeBinaryArray.from_buffers(pa.binary(DIGEST), len(data) // DIGEST, [None, pa.py_buffer(data)])


def to_bytes(table: StatsTable) -> bytes:
    """``table`` as the bytes of a Parquet file (zstd-compressed columns)."""
    pa, pq = _pyarrow()
    n, k = table.segments, len(table.systems)
    header = dict(table.header)
    header.update(schema=SCHEMA_VERSION, written_by=f"ngrameval-{__version__}", systems=list(table.systems),
                  segments=n, blocks=[{"name": b.name, "columns": list(b.columns)} for b in table.blocks],
                  fingerprints=table.fingerprints())  # fmt: skip
    header.pop("texts", None)
    if table.texts is not None:
        header["texts"] = True
    cols: dict[str, Any] = {
        "system": pa.DictionaryArray.from_arrays(
            pa.array(np.repeat(np.arange(k, dtype=np.int32), n)), pa.array(list(table.systems), pa.string())
        ),
        "segment": pa.array(np.tile(np.arange(n, dtype=np.int64), k)),
        "refs_digest": _digest_array(pa, table.refs, k),
        "hyp_digest": _digest_array(pa, np.concatenate(table.hyps) if k else table.refs[:0]),
    }
    if table.source is not None:
        cols["source_digest"] = _digest_array(pa, table.source, k)
    if table.texts is not None:
        cols.update(_text_columns(pa, table.texts, n, k))
    for block in table.blocks:
        for j, name in enumerate(block.columns):
            column = np.concatenate([v[:, j] for v in block.values]) if k else np.zeros(0)
            cols[f"{block.name}:{name}"] = pa.array(np.ascontiguousarray(column, dtype=np.float64))
    schema_meta = {META_KEY: json.dumps(header, sort_keys=True, allow_nan=False).encode("utf-8")}
    arrow = pa.table(cols).replace_schema_metadata(schema_meta)
    sink = pa.BufferOutputStream()
    pq.write_table(arrow, sink, compression="zstd")
    return bytes(sink.getvalue().to_pybytes())


def _text_columns(pa: Any, texts: Texts, n: int, k: int) -> dict[str, Any]:
    """The ``*_text`` columns: every row's output; the references and source on the first system's rows only."""
    blank = [None] * (n * (k - 1)) if k else []
    cols = {
        "hyp_text": pa.array([x for lines in texts.hyps for x in lines], pa.string()),
        "refs_text": pa.array([list(r) for r in texts.refs][: n if k else 0] + blank, pa.list_(pa.string())),
    }
    if texts.source is not None:
        cols["source_text"] = pa.array(list(texts.source)[: n if k else 0] + blank, pa.string())
    return cols


def _read_texts(path: str | Path, arrow: Any, table: StatsTable) -> Texts:
    """The ``*_text`` columns of ``arrow``, checked against the digests of ``table`` (an InputError naming the
    first that differs)."""
    n, k = table.segments, len(table.systems)
    names = set(arrow.column_names)
    want = ["hyp_text", "refs_text"] + (["source_text"] if table.source is not None else [])
    missing = [c for c in want if c not in names]
    if missing:
        raise _bad(path, f"its metadata says it holds the texts, but column {missing[0]!r} is missing")
    hyp = arrow.column("hyp_text").to_pylist()
    refs = arrow.column("refs_text").slice(0, n).to_pylist() if k else []
    source = arrow.column("source_text").slice(0, n).to_pylist() if table.source is not None and k else None
    hyps = tuple(tuple(hyp[s * n : (s + 1) * n]) for s in range(k))
    texts = Texts(hyps, tuple(tuple(r or ()) for r in refs), None if source is None else tuple(source))
    same = all(None not in h and np.array_equal(line_digests(h), d) for h, d in zip(hyps, table.hyps, strict=True))
    same = same and (not k or (None not in refs and np.array_equal(reference_digests(texts.refs), table.refs)))
    if source is not None and table.source is not None:
        same = same and None not in source and np.array_equal(line_digests(texts.source or ()), table.source)
    if not same:
        raise _bad(path, "its texts do not match their digests (damaged or edited?)")
    return texts


def write_table(path: str | Path, table: StatsTable) -> None:
    """Write ``table`` to ``path`` as Parquet, atomically (a temporary file renamed: never half a file)."""
    write_atomic(path, to_bytes(table))


def _bad(path: str | Path, what: str) -> InputError:
    return InputError(f"{path}: {what}")


def _damaged(path: str | Path, exc: Exception) -> InputError:
    """pyarrow's reason, on one line."""
    return _bad(path, f"a damaged or truncated Parquet file ({' '.join(str(exc).split())})")


def _digests_of(column: Any) -> Digests:
    """A ``fixed_size_binary(16)`` column as an array (segments x 16) of bytes."""
    parts = []
    for chunk in column.chunks:
        buf = np.frombuffer(chunk.buffers()[1], dtype=np.uint8)
        parts.append(buf[chunk.offset * DIGEST : (chunk.offset + len(chunk)) * DIGEST])
    flat = np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint8)
    return flat.reshape(-1, DIGEST)


def _header(path: str | Path, schema: Any) -> dict[str, Any]:
    """The JSON header of a Parquet file's schema metadata, checked for what this version can read."""
    meta = schema.metadata or {}
    if META_KEY not in meta:
        raise _bad(path, "a Parquet file, but not ngrameval statistics (no 'ngrameval.stats' metadata; write it "
                         "with ngrameval stats)")  # fmt: skip
    try:
        header = json.loads(meta[META_KEY])
    except ValueError:
        header = None
    if not isinstance(header, dict) or not isinstance(header.get("schema"), int):
        raise _bad(path, "its 'ngrameval.stats' metadata is not a JSON object with a schema version (damaged?)")
    if header["schema"] > SCHEMA_VERSION:
        who = header.get("written_by", "?")
        raise _bad(path, f"statistics of schema {header['schema']} (written by {who}); this ngrameval "
                         f"{__version__} reads schema {SCHEMA_VERSION} and older: upgrade ngrameval")  # fmt: skip
    return header


def _checked_header(path: str | Path, header: dict[str, Any]) -> tuple[list[str], int, list[tuple[str, list[str]]]]:
    systems, n, blocks = header.get("systems"), header.get("segments"), header.get("blocks")
    ok = isinstance(systems, list) and all(isinstance(s, str) for s in systems) and isinstance(n, int) and n >= 0
    ok = ok and isinstance(blocks, list) and all(isinstance(b, dict) for b in blocks)
    try:
        named = [(str(b["name"]), [str(c) for c in b["columns"]]) for b in blocks] if ok else []  # type: ignore[union-attr]
    except (KeyError, TypeError):
        ok = False
    if not ok:
        raise _bad(path, "its 'ngrameval.stats' metadata lacks the systems, segments or blocks (damaged?)")
    return systems, n, named  # type: ignore[return-value]


def read_table(path: str | Path) -> StatsTable:
    """The :class:`StatsTable` of a stats file; an InputError naming ``path`` for a file that is not one, is
    damaged or truncated, or was written by a newer schema."""
    pa, pq = _pyarrow()
    try:
        with open(path, "rb") as fh:
            if fh.read(len(MAGIC)) != MAGIC:
                raise _bad(path, "not a Parquet file of ngrameval statistics (it does not begin with PAR1)")
        parquet = pq.ParquetFile(path)
        header = _header(path, parquet.schema_arrow)
        arrow = parquet.read()
    except OSError as exc:
        if isinstance(exc, FileNotFoundError | PermissionError | IsADirectoryError):
            raise
        raise _damaged(path, exc) from None
    except pa.ArrowException as exc:
        raise _damaged(path, exc) from None
    systems, n, blocks = _checked_header(path, header)
    k = len(systems)
    if arrow.num_rows != n * k:
        raise _bad(path, f"{arrow.num_rows} rows, but its metadata says {k} systems x {n} segments (damaged?)")
    names = set(arrow.column_names)
    want = ["system", "segment", "refs_digest", "hyp_digest"] + [f"{b}:{c}" for b, cols in blocks for c in cols]
    missing = [c for c in want if c not in names]
    if missing:
        raise _bad(path, f"column {missing[0]!r} is missing (expected the columns its metadata lists)")
    expected = pa.array(np.repeat(np.array(systems, dtype=object), n), pa.string())
    same = arrow.column("system").cast(pa.string()).combine_chunks().equals(expected)
    if not same or not np.array_equal(arrow.column("segment").to_numpy(), np.tile(np.arange(n), k)):
        raise _bad(path, "its rows are not every segment of every system in order (system-major)")

    def per_system(digests: NDArray[Any]) -> tuple[NDArray[Any], ...]:
        return tuple(digests[s * n : (s + 1) * n] for s in range(k))

    refs = per_system(_digests_of(arrow.column("refs_digest")))
    source = per_system(_digests_of(arrow.column("source_digest"))) if "source_digest" in names else None
    if any(not np.array_equal(r, refs[0]) for r in refs[1:]) or (
        source is not None and any(not np.array_equal(s, source[0]) for s in source[1:])
    ):
        raise _bad(path, "the systems' rows disagree on the references or the source (damaged?)")
    out_blocks = []
    for name, cols in blocks:
        stacked = [arrow.column(f"{name}:{c}").to_numpy().astype(np.float64, copy=False) for c in cols]
        matrix = np.column_stack(stacked) if stacked else np.zeros((n * k, 0))
        out_blocks.append(Block(name, tuple(cols), tuple(np.ascontiguousarray(v) for v in per_system(matrix))))
    table = StatsTable(
        tuple(systems),
        refs[0] if k else np.zeros((n, DIGEST), np.uint8),
        per_system(_digests_of(arrow.column("hyp_digest"))),
        tuple(out_blocks),
        source[0] if source else None,
        header,
    )
    if header.get("fingerprints") != table.fingerprints():
        raise _bad(path, "its fingerprints do not match its digests (damaged or edited?)")
    if header.get("texts") is True:
        table = replace(table, texts=_read_texts(path, arrow, table))
    return table
