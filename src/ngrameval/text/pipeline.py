"""The text pipeline as one frozen configuration: tokenize -> stop words -> stem (SPEC §1)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ngrameval.errors import ConfigError
from ngrameval.text.stem import porter_stem
from ngrameval.text.stopwords import load_stopwords
from ngrameval.text.tokenize import TOKENIZERS, Tokens, tokenize_lines


@dataclass(frozen=True)
class Preprocess:
    """Every text setting that changes a number (and so appears in signatures).

    tokenize: ``13a`` (default), ``intl``, ``none``, ``char`` or a sacreBLEU tokenizer.
    lowercase: ``str.lower`` before tokenizing.
    stopwords: ``None``, ``"smart"`` or a file path; matching is case-insensitive and words are
        removed before n-grams are formed.
    stem: Porter-stem every remaining token.
    """

    tokenize: str = "13a"
    lowercase: bool = False
    stopwords: str | None = None
    stem: bool = False

    def __post_init__(self) -> None:
        if self.tokenize not in TOKENIZERS:
            raise ConfigError(f"unknown tokenizer {self.tokenize!r}; valid: {', '.join(TOKENIZERS)}")

    def signature(self) -> str:
        """``tok:13a|case:mixed|stop:no|stem:no`` style fragment."""
        return (
            f"tok:{self.tokenize}|case:{'lc' if self.lowercase else 'mixed'}"
            f"|stop:{self.stopwords or 'no'}|stem:{'porter' if self.stem else 'no'}"
        )


def preprocess(lines: Sequence[str], cfg: Preprocess) -> list[Tokens]:
    """Tokens of every line after tokenizing, stop-word removal and stemming (in that order)."""
    toks = tokenize_lines(lines, cfg.tokenize, cfg.lowercase)
    if cfg.stopwords is None and not cfg.stem:
        return toks
    stop = load_stopwords(cfg.stopwords) if cfg.stopwords is not None else frozenset()
    types = {t for line in toks for t in line}
    kept = [t for t in types if t.lower() not in stop]
    mapping = dict(zip(kept, porter_stem(kept) if cfg.stem else kept))
    return [[mapping[t] for t in line if t in mapping] for line in toks]
