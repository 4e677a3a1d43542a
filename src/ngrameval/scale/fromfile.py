"""``score``'s plain files counted straight from their UTF-8 bytes (``ngrameval._direct.count_bytes``): no line is
decoded to ``str`` unless the tokenizer's own preprocessing needs it, and the splitting, the checks and the
counting of each piece run on the pool without the GIL, written in place into arrays of the corpus (or of a
streamed chunk).

Each file is mapped into memory (``mmap``: no copy, no read call) and checked in C (``_direct.lines``: valid UTF-8,
no CR, no byte order mark: then :mod:`ngrameval.io.read` gives its lines as they are). Anything else — a file that
is not plain, files of different lengths, an empty file, standard input, a compressed file, a text setting the
kernel does not serve (:func:`ngrameval.metrics.fromfile.plan`) or a reading error — gives None before anything is
counted, and the caller reads and scores as before (which names the fault). The rows are
:func:`~ngrameval.api.measure`'s bit for bit, named, signed and warned as the in-memory path does
(``tests/test_fromfile.py``).
"""

from __future__ import annotations

import contextvars
import mmap
import os
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from ngrameval import _direct
from ngrameval.api import checked_specs, directed, named, spec_rows, unique_names
from ngrameval.errors import InputError
from ngrameval.io.read import COMPRESSED, STDIN, read_errors, ref_rows
from ngrameval.jobs import awaited, let_go, thread_map
from ngrameval.metrics.fromfile import Arrays, Plan, plan
from ngrameval.metrics.policy import summed_warnings
from ngrameval.metrics.registry import MetricSpec
from ngrameval.ngrams.stats import MetricRows
from ngrameval.scale import early
from ngrameval.text.pipeline import Preprocess

if TYPE_CHECKING:
    from concurrent.futures import Future

PIECE = 8_192  # segments a task of the pool counts (about: pieces are cut at a multiple of GRAIN)
GRAIN = early.GRAIN  # lines between the offsets kept of every file, where a chunk may be cut into pieces


def mapped(path: str) -> mmap.mmap | None:
    """An uncompressed, non-empty file mapped for reading; None for standard input, a compressed or empty file.
    Reading errors as :class:`~ngrameval.errors.InputError` naming the file."""
    p = Path(path)
    if not plain_paths([path]):
        return None
    with read_errors(p), open(p, "rb", buffering=0) as fh:
        if not p.is_file() or p.stat().st_size == 0:
            return None
        m = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    _direct.watch(m, os.fsencode(p))  # named, not a crash, if it is truncated while read (the command line's handler)
    return m


def plain_paths(paths: Sequence[str]) -> bool:
    """Whether none of ``paths`` is standard input or a compressed file (which :func:`mapped` does not map)."""
    return all(str(Path(p)) != STDIN and Path(p).suffix.lower() not in COMPRESSED for p in paths)


def plans(specs: Sequence[MetricSpec]) -> dict[Preprocess, Plan] | None:
    """The bytes kernel's plan of every text setting of ``specs``; None when one is not served."""
    groups: dict[Preprocess, list[MetricSpec]] = {}
    for sp in specs:
        groups.setdefault(sp.pre, []).append(sp)
    out = {pre: plan(pre, [sp.metric for sp in group]) for pre, group in groups.items()}
    return None if any(p is None for p in out.values()) else {pre: p for pre, p in out.items() if p is not None}


@dataclass(frozen=True)
class Corpus:
    """The reference files ``refs`` and the systems' files, mapped and checked: ``n_seg`` lines each, line
    ``k * every`` of file ``f`` starting at byte ``cuts[f][k]`` and line ``k * GRAIN`` at ``fine[f][k]`` (the
    file's end last in both)."""

    refs: list[str]
    n_systems: int
    maps: list[mmap.mmap]
    cuts: list[NDArray[np.int64]]
    fine: list[NDArray[np.int64]]
    n_seg: int
    every: int

    def _at(self, f: int, line: int) -> int:
        """The byte offset of line ``line`` of file ``f`` (a multiple of ``every`` or :data:`GRAIN`, or the end)."""
        if line == self.n_seg:
            return int(self.cuts[f][-1])
        return int(self.cuts[f][line // self.every] if line % self.every == 0 else self.fine[f][line // GRAIN])

    def texts(self, first: int, stop: int) -> tuple[memoryview, ...]:
        """The bytes of lines ``first .. stop`` of every file (each a multiple of ``every`` or :data:`GRAIN`, or
        the end)."""
        return tuple(memoryview(m)[self._at(f, first) : self._at(f, stop)] for f, m in enumerate(self.maps))

    def drop(self, first: int, n: int) -> None:
        """Lines ``first .. first + n`` counted: their pages out of this process's memory (they stay in the page
        cache), so streaming holds no more of the mapped files than a chunk."""
        for f, m in enumerate(self.maps):
            a, b = self._at(f, first), self._at(f, first + n)
            lo, hi = -(-a // mmap.PAGESIZE) * mmap.PAGESIZE, b // mmap.PAGESIZE * mmap.PAGESIZE
            if hi > lo and hasattr(m, "madvise") and hasattr(mmap, "MADV_DONTNEED"):
                m.madvise(mmap.MADV_DONTNEED, lo, hi - lo)

    def pieces(
        self, by_text: Mapping[Preprocess, Plan], first: int, n: int, jobs: int
    ) -> tuple[dict[Preprocess, Arrays], list[Callable[[], list[tuple[int, int]]]]]:
        """The arrays of segments ``first .. first + n`` under every plan and the tasks that count them into it,
        one a piece of about :data:`PIECE` segments, as many as a multiple of ``jobs`` (cut at the kept offsets:
        no file is read for it). Each task gives, per plan, the ROUGE texts that lose every token when its piece
        is counted from ``str`` (else zeros)."""
        outs = {pre: p.arrays(self.n_systems, n, len(self.refs)) for pre, p in by_text.items()}

        def count(start: int, stop: int) -> list[tuple[int, int]]:
            texts = self.texts(start, stop)
            return [
                (0, 0)
                if p.count(texts, len(self.refs), stop - start, start - first, outs[pre])
                else self._text(p, texts, stop - start, start - first, outs[pre])
                for pre, p in by_text.items()
            ]

        cut = piece_bounds(first, n, jobs)
        return outs, [partial(count, a, b) for a, b in pairwise(cut)]

    def count(
        self, by_text: Mapping[Preprocess, Plan], first: int, n: int, jobs: int
    ) -> tuple[dict[Preprocess, Arrays], list[tuple[int, int]]]:
        """Segments ``first .. first + n`` counted (:meth:`pieces`) on ``jobs`` threads: the arrays of each text
        setting, and per plan the lost ROUGE texts summed over the pieces."""
        outs, tasks = self.pieces(by_text, first, n, jobs)
        return outs, _summed(thread_map(lambda task: task(), tasks, jobs))

    def _text(self, p: Plan, texts: tuple[memoryview, ...], n: int, start: int, out: Arrays) -> tuple[int, int]:
        """A piece the bytes kernel declined, decoded (plain UTF-8: its lines as :mod:`ngrameval.io.read` gives
        them) and counted from ``str``."""
        lines = [str(t, "utf-8").split("\n")[:n] for t in texts]
        seg_refs = ref_rows(self.refs, lines[: len(self.refs)], False, False, start)
        return p.count_text(lines[len(self.refs) :], seg_refs, start, out)


def piece_bounds(first: int, n: int, jobs: int) -> list[int]:
    """Where lines ``first .. first + n`` are cut into pieces for ``jobs`` threads: ``first``, then lines at
    multiples of :data:`GRAIN` nearest to an even split into a multiple of ``jobs`` pieces of at most about
    :data:`PIECE` lines, then ``first + n`` (one piece for one job).

    >>> piece_bounds(0, 3000, 2)
    [0, 1536, 3000]
    """
    if jobs <= 1:
        return [first, first + n]
    return early.pieces(first, n, jobs * -(-n // (jobs * PIECE)), GRAIN)


def open_corpus(refs: Sequence[str], systems: Sequence[str], every: int, jobs: int, drop: bool) -> Corpus | None:
    """The files mapped and checked (on ``jobs`` threads; ``drop``: each page let go once checked), the offsets of
    every ``every`` and every :data:`GRAIN` lines kept; None unless every file is plain, none is empty and all have
    one line count."""
    streamed = every != early.WHOLE and plain_paths([*refs, *systems])  # (whole: _early took what there was)
    checked = early.take(refs, systems, None, jobs, GRAIN, every) if streamed else None
    if checked is not None:  # checked while the command line was loading
        files, found = checked.maps, checked.found
    else:
        try:
            maps = [mapped(p) for p in [*refs, *systems]]
        except InputError:
            return None  # the serial reading names it
        files = [m for m in maps if m is not None]
        if len(files) != len(maps):
            return None
        found = thread_map(lambda m: _direct.lines(m, every, drop, GRAIN), files, jobs)
    n_seg = found[0][0]
    if not n_seg or any(n != n_seg or not plain for n, plain, _, _ in found):
        return None
    cuts = [np.frombuffer(c, dtype=np.int64) for _, _, c, _ in found]
    fine = [np.frombuffer(c, dtype=np.int64) for _, _, _, c in found]
    return Corpus(list(refs), len(systems), files, cuts, fine, n_seg, every)


def _early(
    refs: Sequence[str], systems: Sequence[str], by_text: Mapping[Preprocess, Plan], jobs: int
) -> tuple[Corpus, dict[Preprocess, Arrays], list[tuple[int, int]]] | None:
    """The counts :mod:`ngrameval.scale.early` made of these files while the command line was loading, when they
    are what this plan counts, with the pieces it declined counted here from ``str``; None: count them here."""
    if len(by_text) != 1:
        return None
    ((pre, p),) = by_text.items()
    if not plain_paths([*refs, *systems]):
        return None
    got = early.take(refs, systems, (p.mode, p.lowercase, p.order, p.want_lcs), jobs, GRAIN)
    if got is None:
        return None
    n_seg = got.found[0][0]
    want = p.arrays(len(systems), n_seg, len(refs))  # (np.empty: no page is touched)
    if [len(b) for b in got.outs] != [a.size for a in want]:
        return None
    outs = {pre: tuple(np.frombuffer(b, dtype=a.dtype).reshape(a.shape) for b, a in zip(got.outs, want, strict=True))}
    cuts = [np.frombuffer(f[2], dtype=np.int64) for f in got.found]
    fine = [np.frombuffer(f[3], dtype=np.int64) for f in got.found]
    corpus = Corpus(list(refs), len(systems), got.maps, cuts, fine, n_seg, early.WHOLE)
    declined = [(a, b) for a, b, served in zip(got.bounds, got.bounds[1:], got.served, strict=False) if not served]
    lost = _summed([[(0, 0)]] + [[corpus._text(p, corpus.texts(a, b), b - a, a, outs[pre])] for a, b in declined])
    return corpus, outs, lost


def _summed(lost: Sequence[list[tuple[int, int]]]) -> list[tuple[int, int]]:
    """Per plan, the lost ROUGE texts of every piece added up."""
    return [(sum(x[j][0] for x in lost), sum(x[j][1] for x in lost)) for j in range(len(lost[0]))]


def _counted(
    corpus: Corpus, by_text: Mapping[Preprocess, Plan], size: int, jobs: int
) -> Iterator[tuple[int, dict[Preprocess, Arrays], list[tuple[int, int]]]]:
    """Every chunk of ``size`` segments counted, in order: its size, arrays and lost ROUGE texts; each chunk's pages
    let go once counted. With threads, the pieces of the next two chunks wait on one pool while the caller scores
    this one, so no thread of the pool waits at the end of a chunk (three chunks' arrays held at most)."""
    starts = iter(range(0, corpus.n_seg, size))
    if jobs == 1:
        for first in starts:
            n = min(size, corpus.n_seg - first)
            outs, lost = corpus.count(by_text, first, n, 1)
            corpus.drop(first, n)
            yield n, outs, lost
        return
    from concurrent.futures import ThreadPoolExecutor  # (not loaded by a command that runs on one thread)

    queued: deque[tuple[int, int, dict[Preprocess, Arrays], list[Future[list[tuple[int, int]]]]]] = deque()

    def queue_up() -> None:
        while len(queued) < 2 and (first := next(starts, None)) is not None:
            n = min(size, corpus.n_seg - first)
            outs, tasks = corpus.pieces(by_text, first, n, jobs)
            futures = [pool.submit(contextvars.copy_context().run, task) for task in tasks]
            queued.append((first, n, outs, futures))

    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="ngrameval") as pool:
        try:
            queue_up()
            while queued:
                first, n, outs, futures = queued[0]
                lost = _summed([awaited(f) for f in futures])
                queued.popleft()
                corpus.drop(first, n)
                queue_up()
                yield n, outs, lost
        finally:  # stopped early (an error, Ctrl-C, the caller's break): what has not begun never begins
            for *_, futures in queued:
                for f in futures:
                    f.cancel()


def _rows(
    by_text: Mapping[Preprocess, Plan],
    specs: Sequence[MetricSpec],
    outs: Mapping[Preprocess, Arrays],
    n_refs: int,
    jobs: int = 1,
) -> list[MetricRows]:
    batches = {pre: p.batch(outs[pre], n_refs, jobs) for pre, p in by_text.items()}
    return unique_names([directed(spec_rows(sp, batches[sp.pre], [n_refs]), sp) for sp in specs])


def _warn(by_text: Mapping[Preprocess, Plan], lost: Sequence[tuple[int, int]], k: int, n: int, n_refs: int) -> None:
    with summed_warnings():  # said as measure() says it (by say_summed's rules)
        for p, x in zip(by_text.values(), lost, strict=True):
            p.warn(x, k, n, n_refs)


def count_files(
    refs: Sequence[str], systems: Mapping[str, str], specs: Sequence[MetricSpec], jobs: int
) -> list[MetricRows] | None:
    """The rows of ``specs`` for the files ``systems`` (name -> path) against the reference files ``refs`` (one
    reference a file), as :func:`~ngrameval.api.measure` gives them for their lines, counted in pieces on ``jobs``
    threads; warned about once for the corpus, as :func:`~ngrameval.api.measure` warns. None: not served."""
    specs = checked_specs(specs)
    by_text = plans(specs)
    if by_text is None or not refs or not systems:
        return None
    got = _early(refs, list(systems.values()), by_text, jobs) or _counted_here(refs, systems, by_text, jobs)
    if got is None:
        return None
    _warn(by_text, got[2], len(systems), got[0].n_seg, len(refs))
    rows = named(_rows(by_text, specs, got[1], len(refs), jobs), specs, [len(refs)])
    held: list[object] = [got]  # the mapped files and the counts: unmapped beside the output (jobs >= 2)
    del got
    let_go(held, jobs)
    return rows


def _counted_here(
    refs: Sequence[str], systems: Mapping[str, str], by_text: Mapping[Preprocess, Plan], jobs: int
) -> tuple[Corpus, dict[Preprocess, Arrays], list[tuple[int, int]]] | None:
    """The files mapped, checked and counted by the command on ``jobs`` threads; None: not plain files."""
    corpus = open_corpus(refs, list(systems.values()), early.WHOLE, jobs, False)
    if corpus is None:
        return None
    outs, lost = corpus.count(by_text, 0, corpus.n_seg, jobs)
    return corpus, outs, lost


def chunk_rows(
    refs: Sequence[str], systems: Sequence[str], specs: Sequence[MetricSpec], size: int, jobs: int
) -> Iterator[list[MetricRows]] | None:
    """The unnamed rows of every chunk of ``size`` segments (:func:`ngrameval.scale.chunks.chunk_rows`' for the
    chunks :func:`ngrameval.scale.files.read_chunks` reads; each chunk warned about as one), counted from the files'
    bytes in pieces on ``jobs`` threads; None (nothing counted, nothing said) when they are not served."""
    specs = checked_specs(specs)
    by_text = plans(specs)
    if by_text is None or not refs or not systems or size < 1:
        return None
    corpus = open_corpus(refs, systems, size, jobs, True)  # its pages read again as each chunk is counted
    if corpus is None:
        return None

    def chunks() -> Iterator[list[MetricRows]]:
        for n, outs, lost in _counted(corpus, by_text, size, jobs):
            _warn(by_text, lost, len(systems), n, len(refs))
            yield _rows(by_text, specs, outs, len(refs))

    return chunks()
