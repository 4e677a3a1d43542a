"""TER, translation edit rate (Snover et al. 2006), exactly as sacreBLEU 2.x computes it (lower is better).

    TER = sum over segments of the fewest edits / sum over segments of the mean reference length

Edits are word insertions, deletions, substitutions (cost 1 each) and shifts of a block of words (cost 1
each), found as Tercom and sacreBLEU find them (``sacrebleu/metrics/lib_ter.py``): greedily, one shift at
a time, each time the shift that lowers the edit distance most — ranked by (gain, block length, earlier
hypothesis start, earlier target) — among blocks of at most 10 words that match the reference within 50
positions, cover a hypothesis error and a reference error, moved before each place the alignment puts
the reference words of the block; stop when no shift gains, or once 1000 candidates have been tried
(that last shift is then not made). Edit distance is computed in a beam of 25 cells around the
pseudo-diagonal ``i * |ref| / |hyp|`` (wider for very unequal lengths); the alignment prefers
match/substitution, then a hypothesis word left out, then a reference word put in. With several
references the segment keeps the fewest edits and its length is the *mean* reference length. An empty
reference costs every hypothesis word; a corpus with no reference word scores 1 (edits) or 0 (none).

The search runs in the C kernel ``ngrameval._ter`` (word ids in, the GIL released, memory linear in the
beam). :class:`BeamAligner`, :func:`shifted`, :func:`_spans`, :func:`_best_shift` and :func:`edits` below are
its readable pure-Python reference: the same moves in the same order, the specification the kernel is tested
against move for move (``tests/test_ter_kernel.py``), and :func:`edits` scores one pair of word-id lists.

Rows are ``(edits, mean reference length)``: they add, so corpus TER, sentence TER and resamples are
one function of summed rows, like every other metric.

Text: sacreBLEU's Tercom tokenizer (``tokenizers/tokenizer_ter.py``): trailing whitespace stripped,
lower-cased unless ``case_sensitive``; ``normalized`` splits punctuation and unescapes four XML
entities (and, with ``asian_support``, splits CJK characters); ``no_punct`` removes ``.,?:;!"()``
(and, with ``asian_support``, CJK punctuation); words are whitespace fields.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from ngrameval import _ter
from ngrameval.errors import InputError, LimitError
from ngrameval.metrics.policy import FloatArray
from ngrameval.metrics.rows import Batch, RowMetric, Rows, raw_text_ignored
from ngrameval.ngrams.texts import IntArray
from ngrameval.text.pipeline import Preprocess

MAX_SHIFT_SIZE = 10  # Tercom's limits
MAX_SHIFT_DIST = 50
BEAM_WIDTH = 25
MAX_SHIFT_CANDIDATES = 1000  # sacreBLEU's: shift candidates tried per hypothesis-reference pair
INF = 10**16
MAX_CACHED = 10_000  # edit-distance rows kept per hypothesis-reference pair
MAX_VOCAB = 2**31 - 1  # the kernel's word ids are int32
BLOCK = 10_000  # segments tokenized and scored at a time

# operations in the (hypothesis row, reference column) matrix: SKIP_HYP consumes a hypothesis word,
# ADD_REF a reference word
MATCH, SUB, SKIP_HYP, ADD_REF, NONE = 0, 1, 2, 3, 4

_ASIAN_PUNCT = "[\u3001\u3002\u3008-\u3011\u3014-\u301f\uff61-\uff65\u30fb]"
_FULL_WIDTH_PUNCT = "[\uff0e\uff0c\uff1f\uff1a\uff1b\uff01\uff02\uff08\uff09]"
_ENTITIES = (("&quot;", '"'), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">"))
# (pattern, replacement) in Tercom's order (Normalizer.java, as sacreBLEU has it)
_WESTERN = [
    (re.compile(r"([{-~[-` -&(-+:-@/])"), r" \1 "),
    (re.compile(r"'s "), r" 's "),
    (re.compile(r"'s$"), r" 's"),
    (re.compile(r"([^0-9])([\.,])"), r"\1 \2 "),
    (re.compile(r"([\.,])([^0-9])"), r" \1 \2"),
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),
]
_ASIAN = [
    (re.compile(f"({c})"), r" \1 ")
    for c in (
        "[\u4e00-\u9fff\u3400-\u4dbf]",
        "[\u31c0-\u31ef\u2e80-\u2eff]",
        "[\u3300-\u33ff\uf900-\ufaff\ufe30-\ufe4f]",
        "[\u3200-\u3f22]",
    )
]
# kana runs: these patterns (kept from sacreBLEU) need kana at the very start of the line
_KANA = [
    (re.compile(f"(^|^{k})({k}+)(?=$|^{k})"), r"\1 \2 ")
    for k in ("[\u3040-\u309f]", "[\u30a0-\u30ff]", "[\u31f0-\u31ff]")
]
_PUNCT = re.compile(r"[\.,\?:;!\"\(\)]")


@dataclass(frozen=True)
class TER(RowMetric):
    """TER configuration; called on rows ``(..., 2)`` = (edits, mean reference length) -> TER as a fraction."""

    normalized: bool = False
    no_punct: bool = False
    asian_support: bool = False
    case_sensitive: bool = False

    higher_is_better: ClassVar[bool] = False

    def __call__(self, values: FloatArray) -> FloatArray:
        """edits / reference length; 1 for edits without reference words, 0 for neither.

        >>> TER()(np.array([[2.0, 4.0], [3.0, 0.0], [0.0, 0.0]]))
        array([0.5, 1. , 0. ])
        """
        v = np.asarray(values, dtype=np.float64)
        edits, length = v[..., 0], v[..., 1]
        ratio = edits / np.where(length > 0, length, 1.0)
        return np.asarray(np.where(length > 0, ratio, np.where(edits > 0, 1.0, 0.0)))

    def tokenize(self, line: str) -> list[str]:
        """The words TER aligns (sacreBLEU's Tercom tokenizer, after stripping trailing whitespace)."""
        s = line.rstrip()
        if not s:
            return []
        if not self.case_sensitive:
            s = s.lower()
        if self.normalized:
            s = s.replace("\n-", "").replace("\n", " ")
            for entity, char in _ENTITIES:
                s = s.replace(entity, char)
            s = f" {s} "
            for pattern, repl in _WESTERN:
                s = pattern.sub(repl, s)
            if self.asian_support:
                for pattern, repl in (*_ASIAN, *_KANA):
                    s = pattern.sub(repl, s)
                s = re.sub(f"({_ASIAN_PUNCT})", r" \1 ", s)
                s = re.sub(f"({_FULL_WIDTH_PUNCT})", r" \1 ", s)
        if self.no_punct:
            s = _PUNCT.sub("", s)
            if self.asian_support:
                s = re.sub(_FULL_WIDTH_PUNCT, "", re.sub(_ASIAN_PUNCT, "", s))
        return s.split()

    def display_name(self) -> str:
        return "TER"

    def text_signature(self, lowercase: bool) -> str:
        """TER has its own tokenizer and case option (``lowercase`` of the text settings is not used)."""
        return f"case:{'mixed' if self.case_sensitive else 'lc'}|tok:tercom"

    def ignored_options(self, own: Preprocess, given: Preprocess) -> list[tuple[str, str]]:
        out = raw_text_ignored(given, "TER has its own tokenizer")
        case = "TER's case option is ter:case=yes|no (lower-cased by default)"
        return out + ([("-lc", case)] if given.lowercase else [])

    def text_settings(self, pre: Preprocess) -> str:
        return self.text_signature(pre.lowercase) + pre.norm_signature()

    def rows(self, batch: Batch) -> Rows:
        """Rows (fewest edits, mean reference length) of the raw text (:func:`ter_rows`)."""
        systems, flat, seg = batch.raw
        return Rows(tuple(ter_rows(self, systems, flat, seg)), self)

    def signature(self) -> str:
        def yn(b: bool) -> str:
            return "yes" if b else "no"

        return f"norm:{yn(self.normalized)}|punct:{yn(not self.no_punct)}|asian:{yn(self.asian_support)}"


Row = tuple[list[int], list[int]]  # costs and operations of one row of the edit-distance matrix


class BeamAligner:
    """Beam edit distance of hypotheses against one reference, with the alignment it implies.

    Rows depend only on the hypothesis prefix (all hypotheses of one search have the same length, so the
    beam is the same), so rows are kept in a trie of prefixes and a shifted hypothesis recomputes only
    the rows after its first change.
    """

    def __init__(self, ref: Sequence[int], hyp_len: int) -> None:
        self.ref = ref
        m = len(ref)
        self.ratio = m / hyp_len if hyp_len else 1.0
        half = self.ratio / 2
        self.beam = math.ceil(half + BEAM_WIDTH) if half > BEAM_WIDTH else BEAM_WIDTH
        self.first: Row = (list(range(m + 1)), [ADD_REF] * (m + 1))
        self.trie: dict[int, tuple[dict, Row]] = {}  # type: ignore[type-arg]
        self.cached = 0  # rows kept; beyond MAX_CACHED rows are computed but not kept (memory stays bounded)

    def _row(self, i: int, n: int, word: int, prev: Row) -> Row:
        m = len(self.ref)
        diag = math.floor(i * self.ratio)
        lo = max(0, diag - self.beam)
        hi = m + 1 if i == n else min(m + 1, diag + self.beam)
        cost, ops = [INF] * (m + 1), [NONE] * (m + 1)
        pc = prev[0]
        for j in range(lo, hi):
            if j == 0:
                cost[0], ops[0] = pc[0] + 1, SKIP_HYP
                continue
            best, op = INF, NONE
            c = pc[j - 1] + (0 if word == self.ref[j - 1] else 1)
            if c < best:
                best, op = c, (MATCH if word == self.ref[j - 1] else SUB)
            c = pc[j] + 1
            if c < best:
                best, op = c, SKIP_HYP
            c = cost[j - 1] + 1
            if c < best:
                best, op = c, ADD_REF
            cost[j], ops[j] = best, op
        return cost, ops

    def rows(self, hyp: Sequence[int]) -> list[Row]:
        rows = [self.first]
        node = self.trie
        for i, word in enumerate(hyp, 1):
            hit = node.get(word)
            if hit is None:
                hit = ({}, self._row(i, len(hyp), word, rows[-1]))
                if self.cached < MAX_CACHED:
                    node[word] = hit
                    self.cached += 1
            node = hit[0]
            rows.append(hit[1])
        return rows

    def align(self, hyp: Sequence[int]) -> tuple[int, list[int], list[int], list[int]]:
        """(distance, align, ref_err, hyp_err): ``align[r]`` is the hypothesis position of reference word
        ``r`` (for a reference word with no partner, that of the hypothesis word before it, -1 at the start);
        ``*_err`` mark the words not matched exactly."""
        rows = self.rows(hyp)
        i, j = len(hyp), len(self.ref)
        path: list[int] = []
        while i > 0 or j > 0:
            op = rows[i][1][j]
            path.append(op)
            if op in (MATCH, SUB):
                i, j = i - 1, j - 1
            elif op == ADD_REF:
                j -= 1
            elif op == SKIP_HYP:
                i -= 1
            else:  # pragma: no cover - the last row is complete, so the path stays inside the beam
                raise AssertionError("TER alignment left the beam")
        align, ref_err, hyp_err = [], [], []
        h = -1
        for op in reversed(path):
            if op in (MATCH, SUB):
                h += 1
                align.append(h)
                hyp_err.append(op)
                ref_err.append(op)
            elif op == ADD_REF:
                align.append(h)
                ref_err.append(1)
            else:
                h += 1
                hyp_err.append(1)
        return rows[-1][0][-1], align, ref_err, hyp_err


def shifted(words: list[int], start: int, length: int, target: int) -> list[int]:
    """``words`` with the block ``start .. start + length - 1`` moved before ``target`` (sacreBLEU's rule:
    a target inside or right after the block moves it ``target - start`` places to the right)."""
    block = words[start : start + length]
    if target < start:
        return words[:target] + block + words[target:start] + words[start + length :]
    if target > start + length:
        return words[:start] + words[start + length : target] + block + words[target:]
    return words[:start] + words[start + length : length + target] + block + words[length + target :]


def _spans(hyp: Sequence[int], ref: Sequence[int]) -> list[tuple[int, int, int]]:
    """(hyp start, ref start, length) of every common block of 1..10 words starting at different but
    nearby (<= 50) positions, in Tercom's order (hyp start, ref start, length)."""
    n, m = len(hyp), len(ref)
    out = []
    for sh in range(n):
        for sr in range(max(0, sh - MAX_SHIFT_DIST), min(m, sh + MAX_SHIFT_DIST + 1)):
            length = 0
            while (
                length < MAX_SHIFT_SIZE and sh + length < n and sr + length < m and hyp[sh + length] == ref[sr + length]
            ):
                length += 1
                out.append((sh, sr, length))
    return out


def _best_shift(hyp: list[int], ref: Sequence[int], aligner: BeamAligner, tried: int) -> tuple[int, list[int], int]:
    """(gain, shifted hypothesis, candidates tried so far) of the best single shift (gain 0: none)."""
    dist, align, ref_err, hyp_err = aligner.align(hyp)
    best: tuple[int, int, int, int] | None = None
    best_words = hyp
    for sh, sr, length in _spans(hyp, ref):
        if not any(hyp_err[sh : sh + length]) or not any(ref_err[sr : sr + length]):
            continue
        if sh <= align[sr] < sh + length:
            continue
        last = -1
        for r in range(sr - 1, sr + length):
            target = 0 if r == -1 else align[r] + 1
            if target == last:
                continue
            last = target
            words = shifted(hyp, sh, length, target)
            key = (dist - aligner.align(words)[0], length, -sh, -target)
            tried += 1
            if best is None or key > best:
                best, best_words = key, words
        if tried >= MAX_SHIFT_CANDIDATES:
            break
    return (0, hyp, tried) if best is None else (best[0], best_words, tried)


def edits(hyp: list[int], ref: Sequence[int]) -> int:
    """The number of TER edits (shifts + beam edit distance) turning ``hyp`` into ``ref`` (word ids)."""
    if not ref:
        return len(hyp)
    aligner = BeamAligner(ref, len(hyp))
    n_shifts, tried = 0, 0
    while True:
        gain, moved, tried = _best_shift(hyp, ref, aligner, tried)
        if tried >= MAX_SHIFT_CANDIDATES or gain <= 0:
            break
        n_shifts += 1
        hyp = moved
    return n_shifts + aligner.align(hyp)[0]


def ter_rows(metric: TER, systems: Sequence[Sequence[str]], refs: Sequence[str], seg: IntArray) -> list[FloatArray]:
    """``(segments, 2)`` rows (fewest edits over the references, mean reference length) of each system;
    the references of segment ``s`` are ``refs[seg[s]:seg[s + 1]]`` (at least one each). The edits are
    counted by the C kernel ``ngrameval._ter``, which makes the moves of :func:`edits`."""
    per_seg = np.diff(seg)
    if len(per_seg) and per_seg.min() == 0:
        raise InputError(f"segment {int(np.argmin(per_seg)) + 1} has no reference; every segment needs at least one")
    vocab: dict[str, int] = {}

    def ids(words: list[str]) -> list[int]:
        return [vocab.setdefault(w, len(vocab)) for w in words]

    def flat(texts: list[list[int]]) -> tuple[NDArray[np.int32], IntArray]:
        """Word ids of many texts as one int32 array and int64 offsets (the kernel's input)."""
        if len(vocab) > MAX_VOCAB:
            raise LimitError(f"TER: more than {MAX_VOCAB} distinct words (the kernel's word ids are int32)")
        off = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum([len(t) for t in texts], out=off[1:])
        return np.fromiter(itertools.chain.from_iterable(texts), dtype=np.int32, count=int(off[-1])), off

    # sacreBLEU 2.x tokenizes every reference twice (Metric._cache_references, then TER._extract_reference_info,
    # each through _preprocess_segment); not idempotent for every input ("U.S..5": 5 tokens once, 6 twice)
    ref_ids = [ids(metric.tokenize(" ".join(metric.tokenize(r)))) for r in refs]
    bounds = seg.tolist()
    mean_len = np.array([sum(map(len, ref_ids[a:b])) / (b - a) for a, b in itertools.pairwise(bounds)])
    ref_tok, ref_off = flat(ref_ids)
    del ref_ids
    seg64 = np.ascontiguousarray(seg, dtype=np.int64)
    out = []
    for hyps in systems:
        rows = np.zeros((len(per_seg), 2))
        rows[:, 1] = mean_len
        for a in range(0, len(per_seg), BLOCK):  # a block of segments at a time: memory bounded
            b = min(a + BLOCK, len(per_seg))
            r0, r1 = bounds[a], bounds[b]
            hyp_tok, hyp_off = flat([ids(metric.tokenize(h)) for h in hyps[a:b]])
            got = _ter.edits(
                hyp_tok,
                hyp_off,
                ref_tok[ref_off[r0] : ref_off[r1]],
                ref_off[r0 : r1 + 1] - ref_off[r0],
                seg64[a : b + 1] - r0,
                MAX_SHIFT_CANDIDATES,
            )
            rows[a:b, 0] = np.frombuffer(got, dtype=np.int64)
        out.append(rows)
    return out
