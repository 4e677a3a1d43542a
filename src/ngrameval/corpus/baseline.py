"""The human baseline of Chen & Dolan (2011, §5.1): every description scored as a paraphrase of the
other descriptions of its clip — BLEU with the others as references (one corpus BLEU over all
descriptions), PINC against each other description as the source (a description's PINC is the mean
over its sources; the baseline is the mean over descriptions). The paper reports BLEU 52.9, PINC 77.2.

All descriptions are tokenized once; the leave-one-out reference sets and the (source, candidate)
pairs are gathered from the token-id arrays by index, in blocks of bounded size.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ngrameval import progress as _progress
from ngrameval.corpus.msvd import Description
from ngrameval.errors import InputError
from ngrameval.jobs import resolve_jobs, thread_map
from ngrameval.metrics.bleu import BLEU
from ngrameval.metrics.pinc import DEFAULT_PINC, PINC
from ngrameval.ngrams.count import count_rows, novelty_counts
from ngrameval.ngrams.stats import Stats
from ngrameval.ngrams.texts import Texts
from ngrameval.text.pipeline import Encoder, Preprocess

BLOCK_PAIRS = 400_000
DEFAULT_TEXT = Preprocess()


@dataclass(frozen=True)
class BaselineResult:
    bleu: float
    pinc: float
    descriptions: int
    clusters: int
    singletons_left_out: int  # clips with one description have no reference: reported, not scored
    signature: str


def _leave_one_out(members: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """For members m_0..m_{k-1}: (candidate of each pair, other member of each pair), all k(k-1) pairs."""
    k = len(members)
    cand = np.repeat(members, k - 1)
    grid = np.tile(members, (k, 1))
    others = grid[~np.eye(k, dtype=bool)]
    return cand, others


def _blocks(sizes: NDArray[np.int64]) -> list[tuple[int, int]]:
    """Consecutive clips ``[i, j)`` of at most :data:`BLOCK_PAIRS` ordered pairs each (at least one clip).

    >>> _blocks(np.array([3, 2, 4]))
    [(0, 3)]
    """
    out = []
    i = 0
    while i < len(sizes):
        j, pairs = i, 0
        while j < len(sizes) and (j == i or pairs + sizes[j] * (sizes[j] - 1) <= BLOCK_PAIRS):
            pairs += int(sizes[j] * (sizes[j] - 1))
            j += 1
        out.append((i, j))
        i = j
    return out


def human_baseline(
    clusters: Mapping[str, Sequence[Description]],
    pre: Preprocess = DEFAULT_TEXT,
    pinc: PINC = DEFAULT_PINC,
    jobs: int | None = 1,
) -> BaselineResult:
    """BLEU and PINC of the descriptions as paraphrases of one another (see the module docstring); ``jobs``:
    threads over the blocks of clips (``None``: every core), the ``jobs=1`` result bit for bit."""
    scored = [c for c, v in clusters.items() if len(v) >= 2]
    if not scored:
        raise InputError("no clip has two or more descriptions: nothing to score")
    texts = [d.text for c in scored for d in clusters[c]]
    enc = Encoder(pre)
    all_texts = Texts(*enc.encode(texts))
    sizes = np.array([len(clusters[c]) for c in scored], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])

    def block(bounds: tuple[int, int]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The BLEU rows and the PINC of each description of clips ``[i, j)``."""
        i, j = bounds
        cands, others = zip(*(_leave_one_out(np.arange(starts[c], starts[c] + sizes[c])) for c in range(i, j)))
        cand = np.concatenate(cands)
        other = np.concatenate(others)
        members = np.arange(starts[i], starts[j - 1] + sizes[j - 1])
        # BLEU: each description against the other members of its clip (pairs are grouped by candidate)
        seg = np.concatenate([[0], np.cumsum(np.repeat(sizes[i:j] - 1, sizes[i:j]))])
        (rows,) = count_rows([all_texts.take(members)], all_texts.take(other), seg, 4)
        # PINC: each (other member as source, description as candidate) pair, then mean per description
        per_pair = pinc(*novelty_counts(all_texts.take(cand), all_texts.take(other), pinc.max_order, pinc.sets))
        owner = np.repeat(np.arange(len(members)), np.repeat(sizes[i:j] - 1, sizes[i:j]))
        advance(j - i)
        return rows, np.bincount(owner, weights=per_pair) / np.bincount(owner)

    with _progress.task("human baseline", len(scored), "clip") as advance:
        done = thread_map(block, _blocks(sizes), resolve_jobs(jobs))
    bleu_rows, pinc_sent = [d[0] for d in done], [d[1] for d in done]
    stats = Stats(np.concatenate(bleu_rows), 4, False)
    bleu = BLEU()
    return BaselineResult(
        float(bleu(stats.total())),
        float(np.concatenate(pinc_sent).mean()),
        len(texts),
        len(scored),
        len(clusters) - len(scored),
        f"leave-one-out|{pre.signature()}|BLEU:{bleu.signature()}|PINC:{pinc.signature()}",
    )
