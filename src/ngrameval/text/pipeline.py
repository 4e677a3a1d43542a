"""The text pipeline: one frozen configuration (tokenize -> stop words -> stem, SPEC §1) and its encoder."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

import numpy as np
from numpy.typing import NDArray

from ngrameval import _text
from ngrameval.errors import ConfigError, InputTypeError
from ngrameval.text import validate
from ngrameval.text.normalize import check_norm, normalize_texts
from ngrameval.text.stopwords import load_stopwords
from ngrameval.text.tokenize import LOWERCASING, TOKENIZERS, Tokens, encode_lines

if TYPE_CHECKING:
    from ngrameval.text.stem import StemFn

T = TypeVar("T")


def flatten(nested: Sequence[Sequence[T]]) -> tuple[list[T], NDArray[np.int64]]:
    """The items of every group in order, and the group offsets: group ``i`` is ``flat[off[i]:off[i + 1]]``."""
    off = np.zeros(len(nested) + 1, dtype=np.int64)
    np.cumsum([len(g) for g in nested], out=off[1:])
    return [x for g in nested for x in g], off


@dataclass(frozen=True)
class Preprocess:
    """Every text setting that changes a number (and so appears in signatures).

    tokenize: ``13a`` (default), ``intl``, ``none``, ``char``, a sacreBLEU tokenizer, or a ROUGE profile
        (``rouge155``, ``rouge-score``, ``unicode``: these lower-case by themselves and imply their stemmer).
    lowercase: ``str.lower`` before tokenizing.
    stopwords: ``None``, ``"smart"`` or a file path; matching is case-insensitive and words are
        removed before n-grams are formed.
    stem: Porter-stem every remaining token.
    normalize: ``None`` (default), ``"nfc"`` or ``"nfkc"``: Unicode normal form of every text before anything
        else (:mod:`ngrameval.text.normalize`); the signature shows it (``|nf:nfc``) when set.
    """

    tokenize: str = "13a"
    lowercase: bool = False
    stopwords: str | None = None
    stem: bool = False
    normalize: str | None = None

    def __post_init__(self) -> None:
        if self.tokenize not in TOKENIZERS:
            raise ConfigError(f"unknown tokenizer {self.tokenize!r}; valid: {', '.join(TOKENIZERS)}")
        check_norm(self.normalize)

    def signature(self) -> str:
        """``tok:13a|case:mixed|stop:no|stem:no`` style fragment (``|nf:nfc`` when normalising)."""
        case = "lc" if self.lowercase or self.tokenize in LOWERCASING else "mixed"
        stem = _stemmer(self.tokenize)[0] if self.stem else "no"
        return f"tok:{self.tokenize}|case:{case}|stop:{self.stopwords or 'no'}|stem:{stem}{self.norm_signature()}"

    def norm_signature(self) -> str:
        """``|nf:nfc`` / ``|nf:nfkc`` (the normal form), or nothing when texts are read as they are."""
        return f"|nf:{self.normalize}" if self.normalize else ""


def _stemmer(tokenize: str) -> tuple[str, StemFn]:
    """:func:`ngrameval.text.stem.stemmer_for`, imported by the first text setting that stems (PyStemmer and the
    ROUGE-1.5.5 Porter's patterns: ~2 ms of every command's start otherwise)."""
    from ngrameval.text.stem import stemmer_for

    return stemmer_for(tokenize)


IdArray = NDArray[np.int32]
OffArray = NDArray[np.int64]


class Encoder:
    """Lines -> token ids under one :class:`Preprocess`, in C (``ngrameval._text``).

    Ids are shared by every call of one encoder, so the references and every system encoded by it
    compare by id. Stop words and stemming act on token *types*: each new type gets its class (the
    id of its stem, or -1 for a stop word) once, and token ids are mapped through that table.

    One encoder may be used by several threads (a shared :class:`~ngrameval.ngrams.count.References`): a lock
    makes their calls take turns on the vocabulary (which grows) and the class table, so every thread gets
    the ids it would get alone.
    """

    def __init__(self, cfg: Preprocess) -> None:
        self.cfg = cfg
        self._lock = threading.Lock()
        self._vocab = _text.vocab_new()
        self._plain = cfg.stopwords is None and not cfg.stem
        self._stop = load_stopwords(cfg.stopwords) if cfg.stopwords is not None else frozenset()
        self._class_of: dict[str, int] = {}  # stem -> class id, in id order
        self._classes = np.zeros(0, dtype=np.int32)  # type id -> class id (-1: removed)

    def encode(self, lines: Sequence[str]) -> tuple[IdArray, OffArray]:
        """Flat token ids of every line and offsets (line ``i`` is ``ids[off[i]:off[i + 1]]``)."""
        lines = validate.texts(lines, "texts")
        if not lines:
            return np.zeros(0, dtype=np.int32), np.zeros(1, dtype=np.int64)
        lines = normalize_texts(lines, self.cfg.normalize)
        with self._lock:
            ids_b, off_b = encode_lines(self._vocab, lines, self.cfg.tokenize, self.cfg.lowercase)
            return self._classify(np.frombuffer(ids_b, dtype=np.int32), np.frombuffer(off_b, dtype=np.int64))

    def encode_sentences(self, texts: Sequence[str]) -> tuple[IdArray, OffArray, OffArray]:
        """Every text split into sentences at ``"\\n"``: sentence ``s`` is ``ids[soff[s]:soff[s + 1]]``, text ``t``
        is sentences ``toff[t] .. toff[t + 1]``. The ROUGE profiles ``rouge155`` and ``rouge-score`` run in
        one C pass over the texts; other tokenizers encode the sentences as lines."""
        texts = normalize_texts(validate.texts(texts, "texts"), self.cfg.normalize)
        if self.cfg.tokenize in ("rouge155", "rouge-score"):
            full_lower = self.cfg.tokenize == "rouge-score" or self.cfg.lowercase
            batch = texts if isinstance(texts, list | tuple) else list(texts)
            with self._lock:
                ids_b, soff_b, toff_b = _text.encode_rouge(self._vocab, batch, full_lower, True)
                ids, soff = self._classify(np.frombuffer(ids_b, dtype=np.int32), np.frombuffer(soff_b, dtype=np.int64))
            return ids, soff, np.frombuffer(toff_b, dtype=np.int64)
        sentences, toff = flatten([t.split("\n") for t in texts])
        ids, soff = self.encode(sentences)
        return ids, soff, toff

    def _classify(self, ids: IdArray, off: OffArray) -> tuple[IdArray, OffArray]:
        """Token ids -> class ids (stems), stop words removed and the offsets moved accordingly (lock held)."""
        if self._plain:
            return ids, off
        cls = self._class_table()[ids]
        if not self._stop:
            return cls, off
        keep = cls >= 0
        kept_before = np.zeros(len(keep) + 1, dtype=np.int64)
        np.cumsum(keep, out=kept_before[1:])
        return cls[keep], kept_before[off]

    def names(self) -> list[str]:
        """The string of every id (a token, or a stem when stemming)."""
        with self._lock:
            return _text.tokens(self._vocab, 0) if self._plain else list(self._class_of)

    def decode(self, ids: IdArray, off: OffArray) -> list[Tokens]:
        """Token strings per line: the inverse of :meth:`encode` up to stop words and stemming."""
        names = self.names()
        flat = [names[i] for i in ids.tolist()]
        bounds = off.tolist()
        return [flat[a:b] for a, b in itertools.pairwise(bounds)]

    def _class_table(self) -> IdArray:
        new = _text.tokens(self._vocab, len(self._classes))
        if not new:
            return self._classes
        keep = [t.lower() not in self._stop for t in new] if self._stop else None
        kept = new if keep is None else list(itertools.compress(new, keep))
        stems = _stemmer(self.cfg.tokenize)[1](kept) if self.cfg.stem else kept
        class_of = self._class_of  # stems get the next class ids in order of first appearance
        fresh = [s for s in dict.fromkeys(stems) if s not in class_of]
        class_of.update(zip(fresh, range(len(class_of), len(class_of) + len(fresh))))
        cls = np.fromiter(map(class_of.__getitem__, stems), dtype=np.int32, count=len(stems))
        if keep is not None:
            cls, kept_cls = np.full(len(new), -1, dtype=np.int32), cls
            cls[np.asarray(keep, dtype=bool)] = kept_cls
        self._classes = np.concatenate([self._classes, cls])
        return self._classes


def preprocess(lines: Sequence[str], cfg: Preprocess) -> list[Tokens]:
    """Tokens of every line after tokenizing, stop-word removal and stemming (in that order)."""
    if not isinstance(cfg, Preprocess):
        raise InputTypeError(f"cfg must be a Preprocess, got {type(cfg).__name__}")
    enc = Encoder(cfg)
    return enc.decode(*enc.encode(validate.texts(lines, "lines", "preprocess([...], cfg)")))


def tokenize_lines(lines: Sequence[str], tokenize: str = "13a", lowercase: bool = False) -> list[Tokens]:
    """Tokenize every line; ``lowercase`` applies ``str.lower`` first, as sacreBLEU does.

    >>> tokenize_lines(["Hello, world.", "It's 3.5 m-long"])
    [['Hello', ',', 'world', '.'], ["It's", '3.5', 'm-long']]
    """
    return preprocess(
        validate.texts(lines, "lines", f"tokenize_lines([{lines!r:.40}])"), Preprocess(tokenize, lowercase)
    )
