"""``score``'s plain files counted straight from their UTF-8 bytes (``ngrameval._direct.count_bytes``): no line is
decoded to ``str`` unless the tokenizer's own preprocessing needs it, and the splitting, the checks and the
counting of each chunk run on the pool without the GIL, written in place into arrays of the whole corpus.

Each file is read whole (``FileIO.readall``: the GIL released) and checked in C (:func:`ngrameval._direct.lines`:
valid UTF-8, no CR, no byte order mark: then :mod:`ngrameval.io.read` would give its lines as they are). Anything
else — a file that is not plain, files of different lengths, an empty file, standard input, a compressed file, a
text setting the kernel does not serve (:func:`ngrameval.metrics.fromfile.plan`) or any error — gives None, and
the caller reads and scores as before (which names the fault). The rows are :func:`~ngrameval.api.measure`'s bit
for bit, named, signed and warned as the in-memory path does (``tests/test_fromfile.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from ngrameval import _direct
from ngrameval.api import checked_specs, directed, named, spec_rows
from ngrameval.errors import InputError
from ngrameval.io.read import COMPRESSED, STDIN, read_errors, ref_rows
from ngrameval.jobs import thread_map
from ngrameval.metrics.fromfile import Arrays, Plan, plan
from ngrameval.metrics.policy import summed_warnings
from ngrameval.metrics.registry import MetricSpec
from ngrameval.ngrams.stats import MetricRows
from ngrameval.text.pipeline import Preprocess


def plain_bytes(path: str) -> bytes | None:
    """The bytes of an uncompressed file, read in one call that releases the GIL; None for standard input or a
    compressed file. Reading errors as :class:`~ngrameval.errors.InputError` naming the file."""
    p = Path(path)
    if str(p) == STDIN or p.suffix.lower() in COMPRESSED:
        return None
    with read_errors(p), open(p, "rb", buffering=0) as fh:
        return fh.readall()


def plans(specs: Sequence[MetricSpec]) -> dict[Preprocess, Plan] | None:
    """The bytes kernel's plan of every text setting of ``specs``; None when one is not served."""
    groups: dict[Preprocess, list[MetricSpec]] = {}
    for sp in specs:
        groups.setdefault(sp.pre, []).append(sp)
    out = {pre: plan(pre, [sp.metric for sp in group]) for pre, group in groups.items()}
    return None if any(p is None for p in out.values()) else {pre: p for pre, p in out.items() if p is not None}


def count_files(
    refs: Sequence[str], systems: Mapping[str, str], specs: Sequence[MetricSpec], jobs: int, chunk: int
) -> list[MetricRows] | None:
    """The rows of ``specs`` for the files ``systems`` (name -> path) against the reference files ``refs`` (one
    reference a file), as :func:`~ngrameval.api.measure` gives them for their lines; chunks of ``chunk`` segments
    counted on ``jobs`` threads (one job: the whole corpus as one chunk, warned about as one). None: not served."""
    specs = checked_specs(specs)
    by_text = plans(specs)
    if by_text is None or not refs or not systems:
        return None
    try:
        data = [plain_bytes(p) for p in [*refs, *systems.values()]]
    except InputError:
        return None  # the serial reading names it
    if any(d is None for d in data):
        return None
    files = [d for d in data if d is not None]
    found = [_direct.lines(d, chunk if jobs > 1 else max(len(d), 1)) for d in files]
    n_seg = found[0][0]
    if not n_seg or any(n != n_seg or not plain for n, plain, _ in found):
        return None
    cuts = [np.frombuffer(c, dtype=np.int64) for _, _, c in found]
    n_refs = len(refs)
    outs = {pre: p.arrays(len(systems), n_seg, n_refs) for pre, p in by_text.items()}
    step = chunk if jobs > 1 else n_seg

    def count(i: int) -> list[tuple[int, int]]:
        first = i * step
        n = min(step, n_seg - first)
        texts = tuple(memoryview(d)[int(c[i]) : int(c[i + 1])] for d, c in zip(files, cuts, strict=True))
        return [
            (0, 0) if p.count(texts, n_refs, n, first, outs[pre]) else _count_text(p, texts, refs, n, first, outs[pre])
            for pre, p in by_text.items()
        ]

    lost = thread_map(count, range(len(cuts[0]) - 1), jobs)
    with summed_warnings():  # said once for the corpus, as measure() says it (by say_summed's rules)
        for j, p in enumerate(by_text.values()):
            p.warn((sum(x[j][0] for x in lost), sum(x[j][1] for x in lost)), len(systems), n_seg, n_refs)
    batches = {pre: p.batch(outs[pre], n_refs) for pre, p in by_text.items()}
    rows = [directed(spec_rows(sp, batches[sp.pre], [n_refs]), sp) for sp in specs]
    return named(rows, specs, [n_refs])


def _count_text(
    p: Plan, texts: tuple[memoryview, ...], refs: Sequence[str], n: int, first: int, out: Arrays
) -> tuple[int, int]:
    """A chunk the bytes kernel declined, decoded (plain UTF-8: its lines as :mod:`ngrameval.io.read` gives them)
    and counted from ``str``."""
    lines = [str(t, "utf-8").split("\n")[:n] for t in texts]
    seg_refs = ref_rows(refs, lines[: len(refs)], False, False, first)
    return p.count_text(lines[len(refs) :], seg_refs, first, out)
