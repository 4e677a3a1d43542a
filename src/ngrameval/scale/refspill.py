"""NIST's reference n-gram counts on disk, for streamed scoring in bounded memory (mteval-v13a.pl:
info(w1..wn) = log2(count(w1..wn-1) / count(w1..wn)) over every reference of the test set).

:class:`~ngrameval.scale.refcounts.RefCounts` holds every distinct reference n-gram in memory (20-40 bytes each), which
grows with the corpus: ~670M n-grams of orders 1..5 at 10M segments of the synthetic benchmark corpus. Here only
unigram counts (by token) stay in memory; every higher-order n-gram goes to disk and is counted one bucket at a
time:

1. :meth:`SpilledCounts.add`, once per chunk of references: the chunk's distinct n-grams
   (:func:`ngrameval.ngrams.count.intern`) with their counts, named by global token ids, are appended to one file
   per order, sorted by *bucket* — a hash of their first two tokens — so an n-gram and its prefix (from the bigram
   up) always share a bucket.
2. :meth:`SpilledCounts.weights`: the buckets are taken in groups small enough for memory (``budget``); the
   records of a group are read from every chunk, summed by n-gram (a sort), weighted with the count of their
   prefix (a bigram's prefix is a unigram: the count in memory) and every record's weight is written back at the
   record's place.
3. :meth:`SpilledWeights.chunk`, once per chunk of the scoring pass in the same order: the chunk is interned
   again (the same ids), and each of its n-grams gets its weight from the file, read in one piece per order.

The weights are the floats :func:`ngrameval.ngrams.count.nist_info` computes on the whole corpus in memory
(the same integer counts, the same operations), so streamed NIST equals in-memory NIST bit for bit.

Memory: the vocabulary and the unigram counts, one chunk's n-grams, one group (about ``budget`` bytes of records;
~4x that while it is sorted). Disk: per reference token and order n >= 2, 4n + 4 bytes of records and 8 of
weight (at most 104 bytes a token for NIST-5, less where a chunk repeats its n-grams) in a temporary directory
(``TMPDIR``), removed by :meth:`close`.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import shutil
import tempfile
import weakref
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import BinaryIO, TypeVar

import numpy as np
from numpy.typing import NDArray

from ngrameval import _direct
from ngrameval.errors import InputError, LimitError
from ngrameval.ngrams.count import ChunkWeights
from ngrameval.scale.refcounts import SHIFT, IntArray, Interned, intern_grams, token_map

BUCKET_BITS = 10
BUCKETS = 1 << BUCKET_BITS  # hash buckets of the first two tokens (the top bits of a Fibonacci hash)
BUDGET = 16 * 2**20  # bytes of records of one order read into memory at a time (a group of buckets)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_T = TypeVar("_T", bound=np.generic)
_COUNT = np.int32  # a chunk's count of one n-gram: below its token count
REFS_CHANGED = "the references changed between the two passes of NIST (counting, then scoring)"


def fibonacci(first: NDArray[np.integer], second: NDArray[np.integer]) -> NDArray[np.uint64]:
    """A 64-bit Fibonacci hash of the pairs (``first``, ``second``) of 32-bit values (Knuth, TAOCP 6.4)."""
    key = (first.astype(np.uint64) << np.uint64(32)) | second.astype(np.uint32).astype(np.uint64)
    out: NDArray[np.uint64] = key * _GOLDEN
    return out


def _bucket(first: NDArray[np.int32], second: NDArray[np.int32]) -> NDArray[np.uint16]:
    """The bucket of n-grams starting with tokens ``first``, ``second``: the top 10 bits of a Fibonacci hash."""
    return (fibonacci(first, second) >> np.uint64(64 - BUCKET_BITS)).astype(np.uint16)


Bucketing = Callable[[NDArray[np.int32], NDArray[np.int32]], NDArray[np.integer]]  # first, second token -> bucket


@dataclass(frozen=True)
class ChunkGrams:
    """A chunk's distinct reference n-grams in global terms: per order n (index n - 1), ``sel`` (their local ids),
    ``tokens`` (one row each, n global token ids), and for n >= 2 ``bucket`` and the stable bucket order ``perm``."""

    interned: Interned
    sel: list[NDArray[np.intp]]
    tokens: list[NDArray[np.int32]]
    bucket: list[NDArray[np.integer]]
    perm: list[NDArray[np.intp]]


def chunk_grams(
    ids: NDArray[np.int32], off: IntArray, max_order: int, tokens_of: IntArray, bucket: Bucketing = _bucket
) -> ChunkGrams:
    """Intern a chunk and name each of its n-grams by its tokens (``tokens_of``: global id by local token id,
    -1 unknown); ``bucket`` maps the first two tokens of the n-grams of order >= 2 to their bucket."""
    piece = intern_grams(ids, off, max_order)
    row = np.empty(len(piece.count), dtype=np.int32)  # each local id's row among the n-grams of its order
    sel: list[NDArray[np.intp]] = []
    toks: list[NDArray[np.int32]] = []
    buckets: list[NDArray[np.integer]] = []
    perm: list[NDArray[np.intp]] = []
    for j in range(max_order):
        s = np.flatnonzero(piece.order == j + 1)
        row[s] = np.arange(len(s), dtype=np.int32)
        t = np.empty((len(s), j + 1), dtype=np.int32)
        if j:
            t[:, :j] = toks[j - 1][row[piece.prefix[s]]]
        t[:, j] = tokens_of[piece.token[s]]
        sel.append(s)
        toks.append(t)
        b = bucket(t[:, 0], t[:, 1]) if j else np.zeros(0, dtype=np.uint16)
        buckets.append(b)
        perm.append(np.argsort(b, kind="stable") if j else np.zeros(0, dtype=np.intp))
    return ChunkGrams(piece, sel, toks, buckets, perm)


def _digest(tokens: IntArray, off: IntArray) -> bytes:
    """A chunk's references as global token ids (``tokens``) and text boundaries, hashed: equal exactly when its
    n-grams are."""
    h = hashlib.blake2b(digest_size=16)
    h.update(tokens.astype(np.int64).tobytes())
    h.update((off - off[0]).astype(np.int64).tobytes())
    return h.digest()


def _link(src: str, dst: str) -> None:
    """``dst`` as a hard link to ``src``, or a copy where the file system has none (or another device)."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def spill_directory(prefix: str) -> tempfile.TemporaryDirectory[str]:
    """A temporary directory for a run's flat spill files, removed as any ``TemporaryDirectory`` and also by the
    command line's handler of a mapped input truncated while it is read (``_direct.remove_on_fault``: the process
    ends there, before any ``finally``); forgotten by the handler once removed here."""
    tmp = tempfile.TemporaryDirectory(prefix=prefix)
    path = os.fsencode(tmp.name)
    if _direct.remove_on_fault(path):
        weakref.finalize(tmp, _direct.keep_on_fault, path)  # (when the object goes, as its directory does)
    return tmp


def _disk_error(path: str, exc: OSError) -> LimitError:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return LimitError(
            f"{path}: no space left for NIST's reference n-gram files (up to 104 bytes a reference token); "
            "set TMPDIR to a directory on a larger disk"
        )
    return LimitError(f"{path}: cannot write NIST's reference n-gram files: {exc.strerror or exc}")


def _write(fh: BinaryIO, data: NDArray[np.generic]) -> None:
    try:
        fh.write(np.ascontiguousarray(data).tobytes())
    except OSError as exc:
        raise _disk_error(fh.name, exc) from None


@dataclass
class SpilledCounts:
    """The reference n-gram counts of orders 1..``max_order`` of chunks added so far (see the module docstring);
    ``budget``: bytes of records of one order held at a time in :meth:`weights`."""

    max_order: int
    budget: int = BUDGET
    total_words: int = 0
    vocab: dict[str, int] = field(default_factory=dict, repr=False)
    unigrams: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64), repr=False)
    _dir: tempfile.TemporaryDirectory[str] | None = field(default=None, repr=False)
    _files: list[tuple[BinaryIO, BinaryIO]] = field(default_factory=list, repr=False)
    _counts: list[list[NDArray[np.int32]]] = field(default_factory=list, repr=False)  # [order][chunk] per bucket
    _digests: list[bytes] = field(default_factory=list, repr=False)  # every chunk's, to check the second pass

    def __post_init__(self) -> None:
        self._dir = spill_directory("ngrameval-nist-")
        try:
            for n in range(2, self.max_order + 1):
                tok = open(self._path("tok", n), "wb")  # noqa: SIM115 - closed by close()/weights()
                try:
                    self._files.append((tok, open(self._path("cnt", n), "wb")))  # noqa: SIM115
                except BaseException:
                    tok.close()
                    raise
                self._counts.append([])
        except BaseException as exc:  # Ctrl-C while the files are made, too: nothing is left behind
            where = self._dir.name if self._dir else tempfile.gettempdir()
            self.close()
            if isinstance(exc, OSError):
                raise _disk_error(where, exc) from None
            raise

    def _path(self, kind: str, n: int) -> str:
        assert self._dir is not None
        return os.path.join(self._dir.name, f"{kind}{n}.bin")

    def close(self) -> None:
        """Remove the files (also after :meth:`weights`: its :class:`SpilledWeights` reads them until closed)."""
        for tok, cnt in self._files:
            tok.close()
            cnt.close()
        self._files = []
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None

    def add(self, names: Sequence[str], ids: NDArray[np.int32], off: IntArray) -> None:
        """Count the reference texts ``ids[off[i]:off[i + 1]]`` (token ids whose strings are ``names``): one chunk."""
        tokens_of = token_map(self.vocab, names, grow=True)
        if len(self.vocab) > 1 << SHIFT:
            raise LimitError(f"more than {1 << SHIFT} distinct reference tokens: NIST cannot count them")
        if int(off[-1] - off[0]) >= np.iinfo(_COUNT).max:
            raise LimitError("a chunk of more than 2**31 reference tokens: give a smaller --chunk-size")
        p = chunk_grams(ids, off, self.max_order, tokens_of)
        counts = p.interned.count
        uni = p.tokens[0][:, 0]
        if len(self.vocab) > len(self.unigrams):
            self.unigrams = np.concatenate([self.unigrams, np.zeros(len(self.vocab) - len(self.unigrams), np.int64)])
        self.unigrams[uni] += counts[p.sel[0]]  # distinct tokens: no repeated index
        for j in range(1, self.max_order):
            tok, cnt = self._files[j - 1]
            _write(tok, p.tokens[j][p.perm[j]])
            _write(cnt, counts[p.sel[j][p.perm[j]]].astype(_COUNT))
            self._counts[j - 1].append(np.bincount(p.bucket[j], minlength=BUCKETS).astype(np.int32))
        self.total_words += int(off[-1] - off[0])
        self._digests.append(_digest(tokens_of[ids[int(off[0]) : int(off[-1])]], off))

    def weights(self, jobs: int = 1) -> SpilledWeights:
        """Count every bucket group and write each record's information weight (see the module docstring); with
        ``jobs`` > 1 the groups are weighed on that many threads, each group a ``jobs``-th of ``budget`` (the records
        held at once stay ``budget``; NumPy's sorts and the files' reads and writes run without the GIL). A record's
        weight does not depend on the group it is weighed in, so the files are the same bytes for any ``jobs``."""
        tables = [_offsets(c) for c in self._counts]
        self._counts = []
        try:
            for tok, cnt in self._files:  # closing writes what is buffered: the disk may be full
                tok.close()
                cnt.close()
            self._files = []
            for n, table in enumerate(tables, start=2):
                with open(self._path("info", n), "wb") as fh:
                    fh.truncate(int(table[-1, -1]) * 8 if len(table) else 0)
            groups = _groups(tables, self.budget // max(jobs, 1))
            if jobs > 1 and len(groups) > 1:
                self._weigh_on_threads(tables, groups, jobs)
            else:
                for lo, hi in groups:
                    self._weigh_group(tables, lo, hi)
        except OSError as exc:
            raise _disk_error(self._dir.name if self._dir else tempfile.gettempdir(), exc) from None
        handed, self._dir = self._dir, None  # the weights read the files and remove them
        assert handed is not None
        return SpilledWeights(self.max_order, self.total_words, self.vocab, self.unigrams, handed, tables,
                              list(self._digests))  # fmt: skip

    def _weigh_on_threads(self, tables: list[IntArray], groups: list[tuple[int, int]], jobs: int) -> None:
        """:meth:`_weigh_group` of every group on ``jobs`` threads (each reads and writes its own records only)."""
        from concurrent.futures import ThreadPoolExecutor

        from ngrameval.jobs import awaited

        with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="ngrameval-nist") as pool:
            futures = [pool.submit(self._weigh_group, tables, lo, hi) for lo, hi in groups]
            try:
                for f in futures:
                    awaited(f)
            finally:  # an error or Ctrl-C: the groups not begun never begin
                for f in futures:
                    f.cancel()

    def _weigh_group(self, tables: list[IntArray], lo: int, hi: int) -> None:
        """The weights of the records of buckets ``lo..hi - 1``, order by order (a prefix's table first)."""
        tables_keys: list[IntArray] = []  # per order from 2, the group's distinct n-grams as sorted keys
        prev_count = self.unigrams
        for n, table in enumerate(tables, start=2):
            starts, lengths = table[:, lo], table[:, hi] - table[:, lo]
            toks = _read(self._path("tok", n), np.int32, starts * n, lengths * n).reshape(-1, n)
            key = ngram_keys(toks, tables_keys)
            del toks
            uniq, count, row = summed_keys(key, _read(self._path("cnt", n), _COUNT, starts, lengths), n)
            del key
            info = prefix_info(prev_count, uniq, count)
            _write_pieces(self._path("info", n), info[row], starts, lengths)
            tables_keys.append(uniq)
            prev_count = count


def ngram_keys(toks: NDArray[np.int32], prefix_keys: Sequence[IntArray]) -> IntArray:
    """The key of every n-gram (a row of ``toks``, n >= 2 tokens) among n-grams whose first two tokens hash alike:
    ``first << SHIFT | second`` for a bigram, else ``(row of its (n-1)-gram prefix in the sorted prefix_keys[n - 3])
    << SHIFT | last token``."""
    key = toks[:, 0].astype(np.int64)
    for k in range(1, toks.shape[1]):  # key of the (k + 1)-gram: row of its k-gram prefix << SHIFT | its last token
        key <<= SHIFT
        key |= toks[:, k].astype(np.int64)
        if k < toks.shape[1] - 1:  # (sorting the needles first was no faster at 100k, and 8-12 % slower at 1M)
            key = np.searchsorted(prefix_keys[k - 1], key)
    return key


def summed_keys(key: IntArray, count: NDArray[np.integer], n: int) -> tuple[IntArray, IntArray, IntArray]:
    """The distinct ``key`` s sorted, their summed ``count`` (int64: exact) and each key's row among them."""
    order = np.argsort(key)
    ordered = key[order]
    new = np.empty(len(ordered), dtype=bool)
    new[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    first = np.flatnonzero(new)
    if len(first) > 1 << SHIFT:
        raise LimitError(f"more than {1 << SHIFT} distinct reference {n}-grams in a bucket: NIST cannot count them")
    total = np.add.reduceat(count[order].astype(np.int64), first) if len(first) else np.zeros(0, np.int64)
    row = np.empty(len(key), dtype=np.int64)
    row[order] = np.cumsum(new) - 1
    return ordered[first], total, row


def prefix_info(prefix_count: IntArray, uniq: IntArray, count: IntArray) -> NDArray[np.float64]:
    """info = log2(count(prefix) / count) of the n-grams ``uniq`` (keys of :func:`ngram_keys`, whose high bits
    index ``prefix_count``) with ``count``: the operations of :func:`ngrameval.ngrams.count.nist_info` (the
    integer context made float64, divided by the int64 count), so the same floats."""
    context = prefix_count[uniq >> SHIFT].astype(np.float64)
    with np.errstate(divide="ignore"):
        out: NDArray[np.float64] = np.log2(context / count)
    return out


def _offsets(counts: Sequence[NDArray[np.int32]]) -> IntArray:
    """Where the records of every chunk (row) and bucket (column) start in an order's file; column BUCKETS: where
    the chunk's records end."""
    table = np.zeros((len(counts), BUCKETS + 1), dtype=np.int64)
    if counts:
        np.cumsum(np.stack(counts), axis=1, out=table[:, 1:])
        ends = np.cumsum(table[:, -1])
        table[1:] += ends[:-1, None]
    return table


def _groups(tables: Sequence[IntArray], budget: int) -> list[tuple[int, int]]:
    """Runs of consecutive buckets whose records of any one order fit in ``budget`` bytes (a bucket larger than
    that is a group of its own)."""
    if not tables:
        return []
    load = np.max([np.diff(t, axis=1).sum(axis=0) * (4 * n + 4) for n, t in enumerate(tables, start=2)], axis=0)
    out, lo, size = [], 0, 0
    for b, bytes_ in enumerate(load.tolist()):
        if b > lo and size + bytes_ > budget:
            out.append((lo, b))
            lo, size = b, 0
        size += bytes_
    out.append((lo, BUCKETS))
    return out


def _read(path: str, dtype: type[_T], starts: IntArray, lengths: IntArray) -> NDArray[_T]:
    size = np.dtype(dtype).itemsize
    with open(path, "rb") as fh:
        parts = []
        for s, k in zip(starts.tolist(), lengths.tolist(), strict=True):
            if k:
                fh.seek(s * size)
                parts.append(np.fromfile(fh, dtype=dtype, count=k))
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


def _write_pieces(path: str, values: NDArray[np.float64], starts: IntArray, lengths: IntArray) -> None:
    with open(path, "r+b") as fh:
        at = 0
        for s, k in zip(starts.tolist(), lengths.tolist(), strict=True):
            if k:
                fh.seek(s * 8)
                _write(fh, values[at : at + k])
                at += k


@dataclass
class SpilledWeights:
    """The information weights of every reference n-gram of the counted chunks, read back chunk by chunk
    (:meth:`chunk`); :meth:`close` removes the files."""

    max_order: int
    total_words: int
    vocab: dict[str, int] = field(repr=False)
    unigrams: IntArray = field(repr=False)
    _dir: tempfile.TemporaryDirectory[str] | None = field(repr=False)
    _tables: list[IntArray] = field(repr=False)
    _digests: list[bytes] = field(repr=False)

    def close(self) -> None:
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None

    def save(self, path: str) -> None:
        """Keep these weights in the new directory ``path``: the weight files hard-linked (copied across file
        systems), the unigram counts and tables in ``tables.npz``, the vocabulary (in id order), the chunks' digests
        and the totals in ``meta.json``; :meth:`load` gives them back without counting the references again."""
        assert self._dir is not None
        os.mkdir(path)
        for n in range(2, self.max_order + 1):
            _link(os.path.join(self._dir.name, f"info{n}.bin"), os.path.join(path, f"info{n}.bin"))
        tables = {f"table{n}": t for n, t in enumerate(self._tables, start=2)}
        np.savez(os.path.join(path, "tables.npz"), unigrams=self.unigrams, **tables)  # type: ignore[arg-type]
        meta = {"format": 1, "max_order": self.max_order, "total_words": self.total_words, "vocab": list(self.vocab),
                "digests": [d.hex() for d in self._digests]}  # fmt: skip
        with open(os.path.join(path, "meta.json"), "w", encoding="utf-8") as fh:
            json.dump(meta, fh)

    @classmethod
    def load(cls, path: str) -> SpilledWeights:
        """The weights :meth:`save` kept in ``path`` (their files linked into a temporary directory that
        :meth:`close` removes); an InputError naming ``path`` when it is damaged."""
        tmp = spill_directory("ngrameval-nist-")
        try:
            with open(os.path.join(path, "meta.json"), encoding="utf-8") as fh:
                meta = json.load(fh)
            order = int(meta["max_order"])
            with np.load(os.path.join(path, "tables.npz"), allow_pickle=False) as arrays:
                unigrams = arrays["unigrams"]
                tables = [arrays[f"table{n}"] for n in range(2, order + 1)]
            for n in range(2, order + 1):
                _link(os.path.join(path, f"info{n}.bin"), os.path.join(tmp.name, f"info{n}.bin"))
            vocab = {str(w): i for i, w in enumerate(meta["vocab"])}
            digests = [bytes.fromhex(d) for d in meta["digests"]]
            if meta.get("format") != 1 or len(vocab) != len(meta["vocab"]) or len(unigrams) != len(vocab):
                raise ValueError("its parts disagree")
            return cls(order, int(meta["total_words"]), vocab, unigrams, tmp, tables, digests)
        except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile) as exc:
            tmp.cleanup()
            raise InputError(f"{path}: a damaged reference cache entry ({exc}); remove it to count again") from None

    def chunk(self, index: int, names: Sequence[str], ids: NDArray[np.int32], off: IntArray) -> ChunkWeights:
        """The weights of chunk ``index`` (0-based, the chunks of :meth:`SpilledCounts.add` in its order), whose
        references are ``ids[off[i]:off[i + 1]]`` (token ids whose strings are ``names``)."""
        tokens_of = token_map(self.vocab, names, grow=False)
        tokens = tokens_of[ids[int(off[0]) : int(off[-1])]]
        words = len(tokens)
        if words and (
            (tokens < 0).any() or index >= len(self._digests) or self._digests[index] != _digest(tokens, off)
        ):
            raise InputError(REFS_CHANGED)
        p = chunk_grams(ids, off, self.max_order, tokens_of)
        assert self._dir is not None
        higher = []
        for n, table in enumerate(self._tables if words else [], start=2):
            path = os.path.join(self._dir.name, f"info{n}.bin")
            higher.append(_read(path, np.float64, table[index, :1], table[index, -1:] - table[index, :1]))
        z = self.vocab.get("0", -1)
        zero_count = self.unigrams[z] if z >= 0 else np.int64(0)
        return weighted(p, self.unigrams[p.tokens[0][:, 0]], higher, self.total_words, z, zero_count)


@dataclass
class KeptChunks:
    """:class:`SpilledWeights` kept in the reference cache's entry ``path`` (:meth:`SpilledWeights.save`), whose
    chunks' :class:`ChunkWeights` are kept there too as the scoring pass makes them (``chunk{index}.npz``, written
    beside and renamed): a later system against the same references reads a chunk's weights instead of interning
    and weighting its reference n-grams again. A kept chunk is used only when the chunk's references, as token ids
    of the chunk's own vocabulary, have the digest it was kept with."""

    inner: SpilledWeights
    path: str

    @property
    def max_order(self) -> int:
        return self.inner.max_order

    def close(self) -> None:
        self.inner.close()

    def chunk(self, index: int, names: Sequence[str], ids: NDArray[np.int32], off: IntArray) -> ChunkWeights:
        """The weights of chunk ``index`` (see :meth:`SpilledWeights.chunk`), read from the entry when kept there."""
        file = os.path.join(self.path, f"chunk{index}.npz")
        digest = np.frombuffer(_digest(ids[int(off[0]) : int(off[-1])].astype(np.int64), off), dtype=np.uint8)
        try:
            with np.load(file, allow_pickle=False) as kept:
                if not np.array_equal(kept["digest"], digest):
                    raise InputError(REFS_CHANGED)
                table = kept["zero"]  # dense: mteval's extra weight by id
                ids = np.flatnonzero(table).astype(np.int32)
                extra = float(table[ids[0]]) if len(ids) else 0.0
                return ChunkWeights(kept["gid"], kept["info"], kept["order"], ids, extra)
        except FileNotFoundError:
            pass
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            if isinstance(exc, InputError):
                raise
            raise InputError(f"{file}: a damaged reference cache entry ({exc}); remove it to count again") from None
        made = self.inner.chunk(index, names, ids, off)
        zero = made.zero(np.arange(len(made.info), dtype=np.int32))
        tmp = f"{file}.{os.urandom(4).hex()}.tmp"
        try:
            with open(tmp, "wb") as fh:
                np.savez(fh, gid=made.gid, info=made.info, order=made.order, zero=zero, digest=digest)
            os.replace(tmp, file)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise _disk_error(self.path, exc) from None
        return made


def weighted(
    p: ChunkGrams,
    unigrams: IntArray,
    higher: Sequence[NDArray[np.float64]],
    total_words: int,
    zero_token: int,
    zero_count: np.int64,
) -> ChunkWeights:
    """A chunk's :class:`ChunkWeights` from corpus counts: ``unigrams``, the count of each unigram of ``p`` (in
    ``p.sel[0]`` order), weighted with ``total_words``; ``higher[n - 2]``, the weights of its n-grams in bucket
    order (``p.sel[n - 1][p.perm[n - 1]]``; none for a chunk without words); mteval's extra weight of the bigrams
    starting with token ``zero_token`` (``"0"``, -1 absent) of corpus count ``zero_count``."""
    info = np.empty(len(p.interned.count))
    total = np.full(len(p.sel[0]), total_words).astype(np.float64)  # as nist_info: unigrams' context
    info[p.sel[0]] = np.log2(total / unigrams)
    for n, values in enumerate(higher, start=2):
        info[p.sel[n - 1][p.perm[n - 1]]] = values
    order = (p.interned.order - 1).astype(np.int8)
    zero_ids = np.zeros(0, dtype=np.intp)
    if len(p.sel) >= 2 and zero_token >= 0 and zero_count > 0:  # mteval's bigrams "0 x"
        zero_ids = p.sel[1][p.tokens[1][:, 0] == zero_token]
    extra = np.log2(total_words / zero_count) if len(zero_ids) else 0.0
    return ChunkWeights(p.interned.gid, info, order, zero_ids.astype(np.int32), float(extra))
