"""CIDEr (Vedantam, Zitnick & Parikh 2015) and CIDEr-D exactly as their reference code computes them.

Each text is a TF-IDF vector per order n = 1..N: the entry of n-gram g is ``tf(g) * idf(g)`` with

    idf(g) = log(S) - log(max(1, df(g)))

S the number of segments of the evaluated set and df(g) the number of segments whose references contain
g (document frequencies from the references of the evaluated set only; an n-gram no reference has gets
log(S)). Against reference r of its segment a hypothesis h scores, per order,

    CIDEr   : sim_n = <h_n, r_n> / (|h_n| |r_n|)                                  (vrama91/cider, "corpus" df)
    CIDEr-D : sim_n = sum_g min(h_n[g], r_n[g]) r_n[g] / (|h_n| |r_n|) * exp(-delta^2 / (2 sigma^2))
                                                                                   (pycocoevalcap 1.2 ``Cider``)

(a product of 0 norms leaves the numerator, which is then 0), and the segment score is

    10 * mean over n of (sum over references of sim_n) / (number of references)

Quirks kept from the reference code: delta is the difference of the texts' *bigram* counts
(``max(len - 1, 0)``, its ``if n == 1: length += term_freq``), so an empty text and a one-word text have
the same length; sigma = 6; texts are split on whitespace; an empty hypothesis or reference has a zero
vector (its similarities are 0, and an empty reference still counts in the number of references). With a
single segment every idf is 0 and every score 0. The authors' code only counts n-grams up to 4 (its
``precook`` default): for N > 4 it averages zeros for the higher orders and for N < 4 it fails; here
every order 1..N is counted, so the numbers agree for N = 4, the default.

CIDEr is not a sum of per-segment statistics (df is a property of the whole set): the corpus score is
the mean of the segment scores, as the reference code reports it, so rows are ``(score, 1)`` (like PINC
and SE). Resampling (bootstrap, approximate randomisation) re-averages these segment scores: the
document frequencies stay those of the full evaluated set.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, cast

import numpy as np
from numpy.typing import NDArray

from ngrameval.errors import InputError
from ngrameval.metrics.policy import FloatArray
from ngrameval.metrics.rows import Batch, KeptSide, RowMetric, Rows, SideCounts
from ngrameval.ngrams.stats import mean_of_rows, mean_rows
from ngrameval.ngrams.texts import IntArray, Texts, flatten
from ngrameval.text.pipeline import Encoder, Preprocess
from ngrameval.text.validate import MAX_ORDER, MAX_SQUARED, integer, number

REFERENCES = {True: "pycocoevalcap-1.2", False: "vrama91-cider"}  # what each variant reproduces


@dataclass(frozen=True)
class Cider(RowMetric):
    """CIDEr-D (``defended``: clipped, length-penalised, pycocoevalcap's ``Cider``) or CIDEr (the original);
    called on rows ``(..., 2)`` = (sum of segment scores, segments) -> mean segment score (0 .. 10)."""

    n: int = 4
    sigma: float = 6.0
    defended: bool = True

    higher_is_better: ClassVar[bool] = True
    corpus_wide: ClassVar[bool] = True  # document frequencies come from every reference of the set

    def __post_init__(self) -> None:
        integer(self.n, "CIDEr n", 1, MAX_ORDER)
        number(self.sigma, "CIDEr-D sigma", 1 / MAX_SQUARED, MAX_SQUARED)  # sigma ** 2 finite and positive

    @property
    def order_needed(self) -> int:
        return self.n

    keeps_references: ClassVar[bool] = True  # its reference side (df, reference vectors) is kept by the cache

    def rows(self, batch: Batch) -> Rows:
        """Rows ``(CIDEr, 1)`` against the reference side of every reference of the batch (df over all of them),
        made once for CIDEr and CIDEr-D of one order."""
        side = batch.shared(("cider-side", self.n), lambda: self.reference_side(batch.seg_refs, batch.pre))
        return self.rows_against(side, batch.systems, batch.pre)

    def reference_side(
        self, seg_refs: Sequence[Sequence[str]], pre: Preprocess, whole: SideCounts | None = None
    ) -> CiderSide:
        """The references' side (:func:`cider_side`), tokenized by ``pre``: document frequencies and vectors;
        ``whole``: the document frequencies of a corpus these segments are part of (:meth:`merged_counts`)."""
        if whole is not None and (not isinstance(whole, CiderCounts) or len(whole.keys) != self.n):
            raise TypeError(f"{self.display_name()} n={self.n} needs its own document frequencies, not {whole!r:.60}")
        flat, seg = flatten(seg_refs)
        enc = Encoder(pre)
        return cider_side(Texts(*enc.encode(flat)), enc.names(), seg, self.n, whole)

    def reference_counts(self, seg_refs: Sequence[Sequence[str]], pre: Preprocess) -> CiderCounts:
        """The document frequencies of the references ``seg_refs`` (:func:`cider_counts`), tokenized by ``pre``."""
        flat, seg = flatten(seg_refs)
        enc = Encoder(pre)
        return cider_counts(Texts(*enc.encode(flat)), enc.names(), seg, self.n)

    def merged_counts(self, pieces: Sequence[SideCounts]) -> CiderCounts:
        """:func:`merged_counts` of pieces of disjoint segments, in order."""
        if not pieces or not all(isinstance(p, CiderCounts) and len(p.keys) == self.n for p in pieces):
            raise TypeError(f"{self.display_name()} n={self.n} merges its own document frequencies only")
        return merged_counts(cast("Sequence[CiderCounts]", pieces))

    def side_signature(self) -> str:
        """The side depends on the order only: CIDEr and CIDEr-D (any sigma) of one order share it."""
        return f"CIDEr|n:{self.n}"

    def side_from(self, arrays: Mapping[str, NDArray[Any]]) -> CiderSide:
        return CiderSide.from_arrays(arrays, self.n)

    def rows_against(self, side: KeptSide, systems: Sequence[Sequence[str]], pre: Preprocess, first: int = 0) -> Rows:
        """Rows ``(CIDEr, 1)`` of the systems' segments ``first, first + 1, ...`` against ``side``, the systems
        tokenized by ``pre`` (:func:`cider_against`)."""
        if not isinstance(side, CiderSide) or len(side.keys) != self.n:
            raise TypeError(f"{self.display_name()} n={self.n} needs its own reference side, not {side!r:.60}")
        enc = Encoder(pre)
        hyps = [Texts(*enc.encode(h)) for h in systems]
        return Rows(tuple(mean_rows(s) for s in cider_against(self, side, hyps, enc.names(), first)), self)

    def __call__(self, values: FloatArray) -> FloatArray:
        """Mean CIDEr of summed ``(score, 1)`` rows.

        >>> Cider()(np.array([[3.0, 2.0], [0.0, 0.0]]))
        array([1.5, 0. ])
        """
        return mean_of_rows(values)

    def display_name(self) -> str:
        return "CIDEr-D" if self.defended else "CIDEr"

    def signature(self) -> str:
        sigma = f"|sigma:{self.sigma:g}" if self.defended else ""
        return f"n:{self.n}{sigma}|df:refs|ref:{REFERENCES[self.defended]}"


def cider(**kwargs: object) -> Cider:
    """The original CIDEr (no clipping, no length penalty)."""
    return Cider(defended=False, **kwargs)  # type: ignore[arg-type]


def _sort_rows(*cols: IntArray) -> list[IntArray]:
    """The columns (non-negative integers) reordered so that their rows are sorted, the first column most
    significant: one SIMD ``np.sort`` of the columns packed into int64 keys when their bits fit, else a lexsort."""
    widths = [int(c.max()).bit_length() if len(c) else 0 for c in cols]
    if sum(widths) > 63:
        at = np.lexsort(cols[::-1])
        return [c[at] for c in cols]
    key = cols[0].astype(np.int64)
    for c, w in zip(cols[1:], widths[1:], strict=True):
        key <<= w
        key |= c
    key.sort()
    out = []
    for w in reversed(widths[1:]):
        out.append(key & ((1 << w) - 1))
        key >>= w
    return [key, *reversed(out)]


def _squares(tf: IntArray, df: NDArray[np.integer[Any]], idf: FloatArray) -> FloatArray:
    """``(tf * idf[df]) ** 2`` element-wise, squared as the reference code squares: ``pow(x, 2)`` (libm pow,
    which is not always ``x * x``), computed once per distinct (tf, df) pair, not per entry."""
    width = len(idf)
    code = tf.astype(np.int64) * width + df
    top = int(code.max()) + 1 if len(code) else 0
    if top <= max(1 << 22, 4 * len(code)):
        present = np.zeros(top, dtype=bool)
        present[code] = True
        table = np.zeros(top)
        which = np.flatnonzero(present)
        table[which] = [(float(c // width) * float(idf[c % width])) ** 2 for c in which.tolist()]
        out: FloatArray = table[code]
        return out
    uniq, inv = np.unique(code, return_inverse=True)
    vals = np.array([(float(c // width) * float(idf[c % width])) ** 2 for c in uniq.tolist()], dtype=np.float64)
    out = vals[inv.reshape(-1)]
    return out


@dataclass(frozen=True)
class _Grams:
    """One order's n-gram occurrences, grouped by n-gram, then text, then position (one sort): ``distinct``, the
    sorted distinct n-gram keys; per occurrence in that order ``gram`` (its index in ``distinct``) and ``at`` (its
    position); per entry (an n-gram's first occurrence in a text) ``first`` (index of the occurrence), ``tf``
    (occurrences in the text) and ``txt`` (the text)."""

    distinct: IntArray
    gram: IntArray
    at: IntArray
    first: IntArray
    tf: IntArray
    txt: IntArray


@dataclass(frozen=True)
class _Layout:
    """Texts by position: the text of every token, the token's place in its text and the tokens left from it."""

    tok_text: IntArray
    start: IntArray
    local: IntArray
    rest: IntArray

    @classmethod
    def of(cls, texts: Texts) -> _Layout:
        lens = texts.lens
        tok_text = np.repeat(np.arange(len(texts), dtype=np.int64), lens)
        start = texts.off[:-1]
        local = np.arange(int(texts.off[-1]), dtype=np.int64) - start[tok_text]
        return cls(tok_text, start, local, lens[tok_text] - local)


def _group(key: IntArray, pos: IntArray, lay: _Layout, n_texts: int) -> _Grams:
    """The occurrences at ``pos`` (ascending) of the n-grams ``key`` (non-negative) grouped: one sort of keys
    packed with their text and position when the bits fit, else a stable argsort (``pos`` ascending keeps text
    and position order)."""
    m = len(pos)
    local_bits = max(int(lay.local[pos].max()) if m else 0, 0).bit_length()
    shift = max(n_texts - 1, 0).bit_length() + local_bits
    if m and int(key.max()).bit_length() + shift <= 63:
        packed = key << shift
        packed |= lay.tok_text[pos] << local_bits
        packed |= lay.local[pos]
        packed.sort()
        low = packed & ((1 << shift) - 1)
        skey = packed >> shift
        txt = low >> local_bits
        at = (low & ((1 << local_bits) - 1)) + lay.start[txt]
    else:
        by = np.argsort(key, kind="stable")
        at, skey = pos[by], key[by]
        txt = lay.tok_text[at]
    new = np.ones(m, dtype=bool)
    np.not_equal(skey[1:], skey[:-1], out=new[1:])
    gram = np.cumsum(new) - 1
    distinct = skey[new]
    new[1:] |= txt[1:] != txt[:-1]
    first = np.flatnonzero(new)
    tf = np.diff(np.append(first, m))
    return _Grams(distinct, gram, at, first, tf, txt[first])


def _orders(tok: IntArray, lay: _Layout, vocab: int, n: int, n_texts: int) -> Iterator[tuple[int, _Grams]]:
    """Orders ``j = 0 .. n - 1`` (n-grams of ``j + 1`` tokens) while a text is long enough, each with its grouped
    occurrences (:func:`_group`): an n-gram's key is its prefix's index among the grams of the order before
    times ``vocab``, plus its last token (a unigram: its token)."""
    pos = np.arange(len(tok), dtype=np.int64)
    gid = np.zeros(len(tok), dtype=np.int64)  # the n-gram at each position, among those of the order
    for j in range(n):
        if j:
            pos = pos[lay.rest[pos] > j]
        if not len(pos):
            return
        g = _group(gid[pos] * vocab + tok[pos + j] if j else tok.copy(), pos, lay, n_texts)
        gid[g.at] = g.gram
        yield j, g


def _idf(n_seg: int) -> FloatArray:
    """idf by document frequency 0..S: log(S) - log(max(1, df)) (none without segments)."""
    if not n_seg:
        return np.zeros(1)
    out: FloatArray = np.log(float(n_seg)) - np.log(np.maximum(1.0, np.arange(n_seg + 1, dtype=np.float64)))
    return out


def _norms(lay: _Layout, at: IntArray, squares: FloatArray, n_texts: int) -> FloatArray:
    """Each text's sum of ``squares`` (one at each of its entries' positions ``at``), added in the order of its
    positions, as the reference code adds a vector's squares in order of first appearance (bincount adds in array
    order; the zeros of other positions add nothing)."""
    weight = np.zeros(len(lay.tok_text))
    weight[at] = squares
    return np.bincount(lay.tok_text, weights=weight, minlength=n_texts).astype(np.float64, copy=False)


@dataclass(frozen=True)
class CiderSide:
    """CIDEr's reference side, everything its rows need from the references alone (kept by the reference cache):
    ``names``, the references' vocabulary (token strings by id); ``seg``, each segment's references; ``lens``,
    each reference's tokens; ``sq_norm`` (references x orders), each reference vector's squared norm; per order
    ``keys`` (the sorted distinct reference n-grams: ``prefix n-gram index * len(names) + last token``, a unigram
    its token), ``df`` (each one's document frequency) and the entries of every reference holding it, sorted:
    ``match`` (``n-gram index * segments + segment``), ``ref`` (the reference), ``tf`` (its count there);
    ``documents``: the segments of the corpus whose document frequencies ``df`` are (None: these segments; else
    these segments are a part of that corpus, :func:`cider_side` with ``whole``)."""

    names: list[str]
    seg: IntArray
    lens: IntArray
    sq_norm: FloatArray
    keys: list[IntArray]
    df: list[NDArray[np.int32]]
    match: list[IntArray]
    ref: list[NDArray[np.int32]]
    tf: list[NDArray[np.int32]]
    documents: int | None = None
    vocab: dict[str, int] = field(init=False, repr=False, compare=False)  # id by token string
    idf: FloatArray = field(init=False, repr=False, compare=False)  # by document frequency (:func:`_idf`)

    def __post_init__(self) -> None:  # made once, not once per chunk scored against the side
        object.__setattr__(self, "vocab", {w: i for i, w in enumerate(self.names)})
        object.__setattr__(self, "idf", _idf(self.segments if self.documents is None else self.documents))

    @property
    def segments(self) -> int:
        return len(self.seg) - 1

    def arrays(self) -> dict[str, NDArray[Any]]:
        """The side as named arrays (:meth:`from_arrays` reads them back); the vocabulary as UTF-8 bytes and ends."""
        data = [w.encode("utf-8", "surrogatepass") for w in self.names]
        ends = np.cumsum([len(d) for d in data], dtype=np.int64)
        out: dict[str, NDArray[Any]] = {"vocab": np.frombuffer(b"".join(data), dtype=np.uint8), "vocab_ends": ends,
                                        "seg": self.seg, "lens": self.lens, "sq_norm": self.sq_norm}  # fmt: skip
        for j in range(len(self.keys)):
            for name in ("keys", "df", "match", "ref", "tf"):
                out[f"{name}{j + 1}"] = getattr(self, name)[j]
        if self.documents is not None:
            out["documents"] = np.array([self.documents], dtype=np.int64)
        return out

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, NDArray[Any]], n: int) -> CiderSide:
        """The side of order ``n`` kept as :meth:`arrays`; ValueError when its parts disagree."""
        raw, ends = bytes(arrays["vocab"]), arrays["vocab_ends"].tolist()
        names = [raw[a:b].decode("utf-8", "surrogatepass") for a, b in zip([0, *ends[:-1]], ends)]
        seg, lens, sq_norm = arrays["seg"], arrays["lens"], arrays["sq_norm"]
        parts = {name: [arrays[f"{name}{j + 1}"] for j in range(n)] for name in ("keys", "df", "match", "ref", "tf")}
        documents = int(arrays["documents"][0]) if "documents" in arrays else None
        side = cls(names, seg, lens, sq_norm, **parts, documents=documents)
        if seg.ndim != 1 or len(seg) < 1 or sq_norm.shape != (len(lens), n) or int(seg[-1]) != len(lens):
            raise ValueError("its parts disagree")
        n_seg = len(seg) - 1
        if documents is not None and documents < n_seg:
            raise ValueError("its parts disagree")
        top_df = (n_seg if documents is None else documents) + 1
        for j in range(n):  # every index in range: a well-formed entry cannot make the scoring fail
            keys, df, match, ref, tf = (parts[name][j] for name in ("keys", "df", "match", "ref", "tf"))
            sizes = len(df) == len(keys) and len(match) == len(ref) == len(tf)
            if not (sizes and _within(ref, len(lens)) and _within(df, top_df) and _within(match, len(keys) * n_seg)):
                raise ValueError(f"its order-{j + 1} tables disagree")
        return side


def _within(values: NDArray[Any], top: int) -> bool:
    """Whether every value is in ``0 .. top - 1``."""
    return not len(values) or (int(values.min()) >= 0 and int(values.max()) < top)


@dataclass(frozen=True)
class CiderCounts:
    """What a reference side takes from every reference of the corpus, as counts that add exactly over pieces of
    disjoint segments (:func:`merged_counts`): ``names``, the token strings by id; per order ``keys``, the sorted
    distinct reference n-grams encoded as :attr:`CiderSide.keys` over ``names``, and ``df``, each one's document
    frequency; ``segments``, the number of segments (reference sets) counted. Size: 8 bytes of key and 4 of df per
    distinct reference n-gram of orders 1..n, plus the vocabulary."""

    names: list[str]
    keys: list[IntArray]
    df: list[NDArray[np.int32]]
    segments: int

    @property
    def distinct(self) -> int:
        """The distinct reference n-grams of every order."""
        return sum(len(k) for k in self.keys)


def _reference_orders(
    tok: IntArray, lay: _Layout, width: int, n: int, owner: IntArray
) -> Iterator[tuple[int, _Grams, IntArray, IntArray, IntArray]]:
    """Per order of the references ``tok`` (``owner``: each reference's segment): the grouped occurrences
    (:func:`_orders`), each entry's n-gram and segment, and each distinct n-gram's document frequency among these
    segments."""
    for j, g in _orders(tok, lay, width, n, len(owner)):
        e_gram, e_seg = g.gram[g.first], owner[g.txt]
        run = np.ones(len(e_gram), dtype=bool)  # a reference entry of another n-gram or segment than the last
        run[1:] = (e_gram[1:] != e_gram[:-1]) | (e_seg[1:] != e_seg[:-1])
        yield j, g, e_gram, e_seg, np.bincount(e_gram[run], minlength=len(g.distinct))


def _owners(seg: IntArray) -> IntArray:
    """Each reference's segment; InputError when a segment has none."""
    per_seg = np.diff(seg)
    if len(per_seg) and per_seg.min() == 0:
        raise InputError(f"segment {int(np.argmin(per_seg)) + 1} has no reference; every segment needs at least one")
    return np.repeat(np.arange(len(per_seg), dtype=np.int64), per_seg)


def cider_counts(refs: Texts, names: list[str], seg: IntArray, n: int) -> CiderCounts:
    """The document frequencies of the references ``refs`` (as :func:`cider_side` takes them), orders 1..n."""
    owner = _owners(seg)
    empty, small = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32)
    keys, dfs = [empty] * n, [small] * n
    for j, g, _, _, df in _reference_orders(refs.ids.astype(np.int64), _Layout.of(refs), max(len(names), 1), n, owner):
        keys[j], dfs[j] = g.distinct, df.astype(np.int32)
    return CiderCounts(names, keys, dfs, len(seg) - 1)


def merged_counts(pieces: Sequence[CiderCounts]) -> CiderCounts:
    """The counts of pieces of disjoint segments added: the vocabularies joined (in the pieces' order), each
    n-gram re-encoded over them order by order (its prefix by the prefix's index among the merged n-grams of the
    order below), document frequencies and segments summed (integers: exact in any grouping)."""
    if len(pieces) == 1:
        return pieces[0]
    vocab: dict[str, int] = {}
    tokens = [np.fromiter((vocab.setdefault(w, len(vocab)) for w in p.names), np.int64, len(p.names)) for p in pieces]
    width = max(len(vocab), 1)
    keys, dfs = [], []
    rows: list[IntArray] = []  # per piece, each of its n-grams of the order below: its index among the merged
    for j in range(len(pieces[0].keys)):
        parts = []
        for i, p in enumerate(pieces):
            k, w = p.keys[j], max(len(p.names), 1)
            parts.append(tokens[i][k] if j == 0 else rows[i][k // w] * width + tokens[i][k % w])
        uniq, inv = np.unique(np.concatenate(parts), return_inverse=True)
        inv = inv.reshape(-1)
        df = np.zeros(len(uniq), dtype=np.int64)
        np.add.at(df, inv, np.concatenate([p.df[j] for p in pieces]).astype(np.int64))
        rows = np.split(inv, np.cumsum([len(x) for x in parts])[:-1])
        keys.append(uniq.astype(np.int64))
        dfs.append(df.astype(np.int32))
    return CiderCounts(list(vocab), keys, dfs, sum(p.segments for p in pieces))


def _in_whole(whole: CiderCounts, j: int, key: IntArray) -> IntArray:
    """The index of each n-gram ``key`` (encoded over ``whole.names``) among ``whole``'s of order ``j + 1``;
    InputError when one is not there (the references differ from those counted)."""
    table = whole.keys[j]
    at = np.minimum(np.searchsorted(table, key), max(len(table) - 1, 0))
    if len(key) and (not len(table) or (table[at] != key).any()):
        raise InputError("the references changed since their document frequencies were counted")
    return at


def cider_side(refs: Texts, names: list[str], seg: IntArray, n: int, whole: CiderCounts | None = None) -> CiderSide:
    """The reference side of ``refs`` (token ids whose strings are ``names``; segment ``s`` has references
    ``seg[s] .. seg[s + 1] - 1``, at least one) up to order ``n``: per order one sort groups every occurrence
    by n-gram, then reference and position, which gives term and document frequencies; the squared norms add
    each reference's squares in its order of first appearance.

    ``whole``: the document frequencies of a corpus these segments are part of (:func:`merged_counts` of every
    piece's :func:`cider_counts`): the side then holds ``whole``'s n-grams, document frequencies and number of
    segments (idf), and these segments' references only, so the systems' rows against it are those of the whole
    corpus's side for these segments, bit for bit (one Dask partition against the corpus)."""
    n_seg, n_ref = len(seg) - 1, len(refs)
    owner = _owners(seg)
    lay = _Layout.of(refs)
    tok = refs.ids.astype(np.int64)
    if whole is not None:
        vocab = {w: i for i, w in enumerate(whole.names)}
        to_whole = np.fromiter((vocab.get(w, -1) for w in names), dtype=np.int64, count=len(names))
        tok = to_whole[tok] if len(tok) else tok
        if (tok < 0).any():
            raise InputError("the references changed since their document frequencies were counted")
    width = max(len(names if whole is None else whole.names), 1)
    idf = _idf(n_seg if whole is None else whole.segments)
    sq_norm = np.zeros((n_ref, n))
    empty, small = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32)
    keys, match = [empty] * n, [empty] * n
    dfs, ref, tfs = [small] * n, [small] * n, [small] * n  # below 2**31: half the bytes of int64
    at = empty  # each n-gram of the order before: its index among ``whole``'s
    for j, g, e_gram, e_seg, df in _reference_orders(tok, lay, width, n, owner):
        if whole is None:
            keys[j], dfs[j], gram = g.distinct, df.astype(np.int32), e_gram
        else:
            at = _in_whole(whole, j, g.distinct if j == 0 else at[g.distinct // width] * width + g.distinct % width)
            keys[j], dfs[j], gram = whole.keys[j], whole.df[j], at[e_gram]
        sq_norm[:, j] = _norms(lay, g.at[g.first], _squares(g.tf, dfs[j][gram], idf), n_ref)
        match[j], ref[j], tfs[j] = gram * n_seg + e_seg, g.txt.astype(np.int32), g.tf.astype(np.int32)
        if whole is not None:  # entries sorted by match, as :func:`cider_against` searches them
            by = np.argsort(match[j], kind="stable")
            match[j], ref[j], tfs[j] = match[j][by], ref[j][by], tfs[j][by]
    if whole is not None:
        keys = [whole.keys[j] for j in range(n)]
        dfs = [whole.df[j] for j in range(n)]
    documents = None if whole is None else whole.segments
    return CiderSide(names if whole is None else whole.names, seg, refs.lens, sq_norm, keys, dfs, match, ref, tfs,
                     documents)  # fmt: skip


def _expand(lo: IntArray, count: IntArray) -> tuple[IntArray, IntArray]:
    """For ranges ``lo[i] .. lo[i] + count[i] - 1``: each member's range ``i`` and the member."""
    which = np.repeat(np.arange(len(lo), dtype=np.int64), count)
    starts = np.cumsum(count) - count
    return which, lo[which] + np.arange(int(count.sum()), dtype=np.int64) - starts[which]


def cider_against(
    metric: Cider, side: CiderSide, hyps: Sequence[Texts], names: Sequence[str], first: int = 0
) -> list[FloatArray]:
    """Segment CIDEr(-D) of every system in ``hyps`` (token ids of one encoder whose strings are ``names``), the
    segments ``first, first + 1, ...`` of ``side``'s references (:func:`cider_side`).

    The systems' texts in one array; per order one sort groups their occurrences by n-gram, then text and
    position (term frequencies, each n-gram's first appearance in its text); an n-gram is found among the
    references' (``side.keys``: its document frequency, 0 if absent) by its prefix's index and its last token,
    and its entries in the references of the text's segment by ``side.match``. Sums run in the reference code's
    order: each text's n-grams in order of first appearance (norms), the hypothesis' n-grams in that order (dot
    products)."""
    n, n_sys = metric.n, len(hyps)
    m = len(hyps[0]) if hyps else 0
    n_seg = side.segments
    if first + m > n_seg:
        raise InputError(f"segments {first + 1}..{first + m} are not among the {n_seg} of the references' side")
    if not m:
        return [np.zeros(0) for _ in hyps]
    seg = side.seg[first : first + m + 1]
    base, n_ref = int(seg[0]), int(seg[-1] - seg[0])
    per_seg = np.diff(seg)
    owner = np.repeat(np.arange(m, dtype=np.int64), per_seg)
    shift = np.cumsum([0] + [len(h.ids) for h in hyps]).tolist()
    ends = [h.off[1:] + sh for h, sh in zip(hyps, shift, strict=False)]
    texts = Texts(np.concatenate([h.ids for h in hyps]), np.concatenate([np.zeros(1, dtype=np.int64), *ends]))
    n_texts = len(texts)
    lay = _Layout.of(texts)
    tok = texts.ids.astype(np.int64)
    to_ref = np.fromiter((side.vocab.get(w, -1) for w in names), dtype=np.int64, count=len(names))
    rtok = to_ref[tok] if len(tok) else np.zeros(0, dtype=np.int64)
    vocab, ref_width = max(len(names), 1), max(len(side.names), 1)
    idf = side.idf
    sq_norm = np.zeros((n_texts, n))
    dots = np.zeros((n_sys * n_ref, n))
    text_seg = np.tile(np.arange(first, first + m, dtype=np.int64), n_sys)
    text_sys = np.repeat(np.arange(n_sys, dtype=np.int64), m)
    rid = np.full(len(tok), -1, dtype=np.int64)  # the reference n-gram at each position (-1: no reference has it)
    for j, g in _orders(tok, lay, vocab, n, n_texts):
        one = g.at[np.flatnonzero(np.diff(g.gram, prepend=-1))]  # an occurrence of each distinct n-gram
        last = rtok[one + j]
        prefix = rid[one] if j else np.zeros(len(one), dtype=np.int64)
        known = (last >= 0) & (prefix >= 0)
        key = prefix * ref_width + last if j else last
        at = np.minimum(np.searchsorted(side.keys[j], key), max(len(side.keys[j]) - 1, 0))
        known &= side.keys[j][at] == key if len(side.keys[j]) else False
        gram_rid = np.where(known, at, -1)
        rid[g.at] = gram_rid[g.gram]
        e_at = g.at[g.first]
        e_rid = gram_rid[g.gram[g.first]]
        e_df = np.where(e_rid >= 0, side.df[j][np.maximum(e_rid, 0)] if len(side.df[j]) else 0, 0)
        sq_norm[:, j] = _norms(lay, e_at, _squares(g.tf, e_df, idf), n_texts)
        sel = np.flatnonzero(e_rid >= 0)
        want = e_rid[sel] * n_seg + text_seg[g.txt[sel]]
        lo = np.searchsorted(side.match[j], want, "left")
        which, entry = _expand(lo, np.searchsorted(side.match[j], want, "right") - lo)
        h = sel[which]
        ref_i = text_sys[g.txt[h]] * n_ref + side.ref[j][entry] - base
        # per reference, matches in the hypothesis' order of first appearance
        ref_i, h_at, tf_h, tf_r = _sort_rows(ref_i, e_at[h], g.tf[h], side.tf[j][entry].astype(np.int64))
        w = idf[side.df[j][rid[h_at]]]
        hv, rv = tf_h.astype(np.float64) * w, tf_r.astype(np.float64) * w
        prod = np.minimum(hv, rv) * rv if metric.defended else hv * rv
        dots[:, j] = np.bincount(ref_i, weights=prod, minlength=n_sys * n_ref)
    norm = np.sqrt(sq_norm)
    nr = np.sqrt(side.sq_norm[base : base + n_ref])
    ref_bigrams = np.maximum(side.lens[base : base + n_ref] - 1, 0)
    bigrams = np.maximum(texts.lens - 1, 0)
    out = []
    for k in range(n_sys):
        h_text = k * m + owner
        dot = dots[k * n_ref : (k + 1) * n_ref]
        nh = norm[h_text]
        both = (nh != 0) & (nr != 0)
        sim = np.where(both, dot / np.where(both, nh * nr, 1.0), dot)
        if metric.defended:
            delta = (bigrams[h_text] - ref_bigrams).astype(np.float64)
            uniq, inv = np.unique(delta, return_inverse=True)
            # Python's float power, as the reference code's ``np.e ** (-(delta ** 2) / (2 * sigma ** 2))``
            pen = np.array([np.e ** (-(d**2) / (2 * metric.sigma**2)) for d in uniq.tolist()])
            sim = sim * pen[inv.reshape(-1)][:, None]
        # sum over references in order (bincount adds sequentially), mean over orders, / refs, x 10
        total = np.stack([np.bincount(owner, weights=sim[:, j], minlength=m) for j in range(n)], axis=1)
        score = total.mean(axis=1)
        out.append(score / per_seg * 10.0)
    return out
