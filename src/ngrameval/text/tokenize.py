"""Tokenizers, applied to a whole batch of lines at once.

``13a`` and ``intl`` follow the mteval-v13a and mteval-v14 (``--international-tokenization``) rules
exactly as sacreBLEU 2.x applies them to one line at a time; here the rules run once over all lines
joined by a separator that can take part in no rule, so one regex call serves the whole batch and the
tokens of every line are identical to the line-at-a-time result (pinned by differential tests).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache

import regex

from ngrameval.errors import ConfigError, MissingDependencyError

Tokens = list[str]

# mteval-v13a: pad every ASCII symbol but ' , - . and alphanumerics; split . and , unless they sit
# between digits on that side; split - after a digit. Each rule is a two-character pattern applied
# left to right without overlap, in this order (as in mteval-v13a.pl and sacreBLEU's 13a).
# The first rule is one character wide, so it is a plain translation table; the others go through the
# `regex` module, whose template expansion runs in C (the stdlib's runs in Python on 3.11: 2x slower).
_PAD_13A = {
    c: f" {chr(c)} "
    for c in [*range(0x20, 0x27), *range(0x28, 0x2C), 0x2F, *range(0x3A, 0x41), *range(0x5B, 0x61), *range(0x7B, 0x7F)]
}
_RULES_13A = (
    (regex.compile(r"([^0-9])([.,])"), r"\1 \2 "),
    (regex.compile(r"([.,])([^0-9])"), r" \1 \2"),
    (regex.compile(r"([0-9])(-)"), r"\1 \2 "),
)

# mteval-v14 international: split punctuation not preceded by a number, punctuation not followed by
# a number, and every symbol. No padding, so a final punctuation mark after a number stays attached.
_RULES_INTL = (
    (regex.compile(r"(\P{N})(\p{P})"), r"\1 \2 "),
    (regex.compile(r"(\p{P})(\P{N})"), r" \1 \2"),
    (regex.compile(r"(\p{S})"), r" \1 "),
)

_ENTITIES_13A = (("&quot;", '"'), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">"))


def _newline_free(lines: Sequence[str]) -> list[str]:
    # mteval-v13a joins hyphenated line breaks and turns other newlines into spaces (sacreBLEU too).
    return [ln.replace("-\n", "").replace("\n", " ") if "\n" in ln else ln for ln in lines]


def _tokenize_13a(lines: Sequence[str]) -> list[Tokens]:
    text = "\n".join(_newline_free(lines)).replace("<skipped>", "")
    if "&" in text:
        for entity, char in _ENTITIES_13A:
            text = text.replace(entity, char)
    # Each line is padded with a space as mteval does; " \n " can take part in no rule, so lines stay
    # independent (a rule that matches ends at the padding space, never at the newline).
    text = (" " + text.replace("\n", " \n ") + " ").translate(_PAD_13A)
    for pattern, repl in _RULES_13A:
        text = pattern.sub(repl, text)
    return [ln.split() for ln in text.split("\n")]


_INTL_SEP = "0\n0"  # '0' is a number: no v14 rule can match across it, and it is never punctuation.


def _tokenize_intl(lines: Sequence[str]) -> list[Tokens]:
    text = _INTL_SEP.join(_newline_free(lines))
    for pattern, repl in _RULES_INTL:
        text = pattern.sub(repl, text)
    pieces = text.split("\n")
    last = len(pieces) - 1
    return [p[1 if i else 0 : len(p) - 1 if i < last else len(p)].split() for i, p in enumerate(pieces)]


def _tokenize_none(lines: Sequence[str]) -> list[Tokens]:
    return [ln.split() for ln in lines]


def _tokenize_char(lines: Sequence[str]) -> list[Tokens]:
    # sacreBLEU joins every character with spaces and splits on whitespace: whitespace disappears.
    return [list("".join(ln.split())) for ln in lines]


_SACREBLEU_TOKENIZERS = ("zh", "ja-mecab", "ko-mecab", "spm", "flores101", "flores200")


@cache
def _sacrebleu_tokenizer(name: str) -> Callable[[str], str]:
    try:
        from sacrebleu.metrics.bleu import _get_tokenizer
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingDependencyError("sacrebleu", "sacrebleu") from exc
    tok: Callable[[str], str] = _get_tokenizer(name)()
    return tok


def _via_sacrebleu(name: str) -> Callable[[Sequence[str]], list[Tokens]]:
    def run(lines: Sequence[str]) -> list[Tokens]:
        tok = _sacrebleu_tokenizer(name)
        return [tok(ln.rstrip()).split() for ln in lines]

    return run


TOKENIZERS: dict[str, Callable[[Sequence[str]], list[Tokens]]] = {
    "13a": _tokenize_13a,
    "intl": _tokenize_intl,
    "none": _tokenize_none,
    "char": _tokenize_char,
    **{name: _via_sacrebleu(name) for name in _SACREBLEU_TOKENIZERS},
}


def tokenize_lines(lines: Sequence[str], tokenize: str = "13a", lowercase: bool = False) -> list[Tokens]:
    """Tokenize every line; ``lowercase`` applies ``str.lower`` first, as sacreBLEU does.

    >>> tokenize_lines(["Hello, world.", "It's 3.5 m-long"])
    [['Hello', ',', 'world', '.'], ["It's", '3.5', 'm-long']]
    """
    try:
        run = TOKENIZERS[tokenize]
    except KeyError:
        raise ConfigError(f"unknown tokenizer {tokenize!r}; valid: {', '.join(TOKENIZERS)}") from None
    if not lines:
        return []
    # sacreBLEU strips trailing whitespace first; it matters for intl ("5- " keeps "5-" together).
    lines = [ln.lower().rstrip() for ln in lines] if lowercase else [ln.rstrip() for ln in lines]
    return run(lines)
