"""Tokenizers, applied to a whole batch of lines at once.

A tokenizer turns lines into one text: the lines joined by ``"\n"``, each line's tokens separated by
whitespace, and the C encoder's mode for it. The encoder (``ngrameval._text``) then splits that text and
maps tokens to ids in one pass. ``13a`` leaves its four mteval-v13a rules to the encoder (they run in C,
line by line), the ROUGE profiles ``rouge155`` and ``rouge-score`` their character rule;
``intl`` runs the mteval-v14 rules once over all lines joined by a separator that can take part in
no rule. Every tokenizer yields sacreBLEU's tokens, line for line (pinned by differential tests).

:func:`encode_lines` is the fast path of ``13a`` and ``none``: the C encoder reads the lines themselves, one pass
over each line's characters, and calls back into this module's exact per-line preprocessing only for the lines
that need it (line breaks, ``<skipped>``, entities, non-ASCII lower-casing); the ids equal those of
:func:`prepare` + ``_text.encode`` (pinned by tests/test_tokenize_fast.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache, partial
from typing import Any

from ngrameval import _text
from ngrameval.errors import ConfigError, MissingDependencyError

Tokens = list[str]
PLAIN, V13A, ROUGE = 0, 1, 2  # the encoder's modes: split as it is, v13a rules first, ROUGE's characters
Prepared = tuple[str, int]  # ("\n"-joined lines, the encoder's mode)


# mteval-v14 international: split punctuation not preceded by a number, punctuation not followed by
# a number, and every symbol. No padding, so a final punctuation mark after a number stays attached.
# (Compiled on first use, as every pattern of the `regex` module here: importing it and compiling costs ~10 ms of
# every command's start-up, ptb-coco's lexer ~20 ms more.)
@cache
def _rules_intl() -> tuple[tuple[Any, str], ...]:
    import regex

    return (
        (regex.compile(r"(\P{N})(\p{P})"), r"\1 \2 "),
        (regex.compile(r"(\p{P})(\P{N})"), r" \1 \2"),
        (regex.compile(r"(\p{S})"), r" \1 "),
    )


_ENTITIES_13A = (("&quot;", '"'), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">"))
_INTL_SEP = "0\n0"  # '0' is a number: no v14 rule can match across it, and it is never punctuation.


def _joined(lines: Sequence[str], sep: str = "\n") -> str:
    # A newline inside a line acts as a space in every rule and in sacreBLEU's final split.
    return sep.join(ln.replace("\n", " ") if "\n" in ln else ln for ln in lines)


def _prepare_13a(lines: Sequence[str]) -> Prepared:
    if any("\n" in ln for ln in lines):
        # mteval-v13a, in this order: drop "<skipped>", join hyphenated line breaks, other breaks -> space.
        text = "\n".join(ln.replace("<skipped>", "").replace("-\n", "").replace("\n", " ") for ln in lines)
    else:
        text = "\n".join(lines).replace("<skipped>", "")
    if "&" in text:
        for entity, char in _ENTITIES_13A:
            text = text.replace(entity, char)
    return text, V13A


def _prepare_intl(lines: Sequence[str]) -> Prepared:
    text = _joined(lines, _INTL_SEP)
    for pattern, repl in _rules_intl():
        text = pattern.sub(repl, text)
    pieces = text.split("\n")
    last = len(pieces) - 1
    return "\n".join(p[1 if i else 0 : len(p) - 1 if i < last else len(p)] for i, p in enumerate(pieces)), PLAIN


def _prepare_none(lines: Sequence[str]) -> Prepared:
    return _joined(lines), PLAIN


def _prepare_char(lines: Sequence[str]) -> Prepared:
    # sacreBLEU joins every character with spaces and splits on whitespace: whitespace disappears.
    return "\n".join(" ".join("".join(ln.split())) for ln in lines), PLAIN


# ROUGE profiles. rouge155: what ROUGE-1.5.5 does to the raw bytes of a line (ASCII A-Z lower-cased, every
# byte outside [a-z0-9] a separator, so a non-ASCII letter splits its word: "café" -> "caf"); the encoder's
# ROUGE mode does it per character, the same since every byte of a non-ASCII character is >= 0x80.
# rouge-score: Google's tokenizer (str.lower, which maps a few non-ASCII characters into [a-z], then
# [^a-z0-9]+ -> space). unicode: lower-cased runs of letters, marks and digits of any script ("café",
# "Zürich", "東京" stay whole).
@cache
def _not_word() -> Any:
    import regex

    return regex.compile(r"[^\p{L}\p{M}\p{N}\n]+")


def _prepare_rouge155(lines: Sequence[str]) -> Prepared:
    return _joined(lines), ROUGE


def _prepare_rouge_score(lines: Sequence[str]) -> Prepared:
    text = _joined(lines)
    return text if text.isascii() else text.lower(), ROUGE


def _prepare_unicode(lines: Sequence[str]) -> Prepared:
    return _not_word().sub(" ", _joined(lines).lower()), PLAIN


def _prepare_ptb_coco(lines: Sequence[str]) -> Prepared:
    # coco-caption: PTB tokens, lower-cased, its punctuation removed (ngrameval.text.ptb)
    from ngrameval.text.ptb import coco_lines

    return "\n".join(coco_lines(lines)), PLAIN


LOWERCASING = ("rouge155", "rouge-score", "unicode", "ptb-coco")  # tokenizers that lower-case by themselves

_SACREBLEU_TOKENIZERS = ("zh", "ja-mecab", "ko-mecab", "spm", "flores101", "flores200")


@cache
def _sacrebleu_tokenizer(name: str) -> Callable[[str], str]:
    try:
        from sacrebleu.metrics.bleu import _get_tokenizer
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingDependencyError("sacrebleu", "sacrebleu") from exc
    tok: Callable[[str], str] = _get_tokenizer(name)()
    return tok


def _via_sacrebleu(name: str) -> Callable[[Sequence[str]], Prepared]:
    def run(lines: Sequence[str]) -> Prepared:
        tok = _sacrebleu_tokenizer(name)
        return _joined([tok(ln) for ln in lines]), PLAIN

    return run


TOKENIZERS: dict[str, Callable[[Sequence[str]], Prepared]] = {
    "13a": _prepare_13a,
    "intl": _prepare_intl,
    "none": _prepare_none,
    "char": _prepare_char,
    "rouge155": _prepare_rouge155,
    "rouge-score": _prepare_rouge_score,
    "unicode": _prepare_unicode,
    "ptb-coco": _prepare_ptb_coco,
    **{name: _via_sacrebleu(name) for name in _SACREBLEU_TOKENIZERS},
}


def prepare(lines: Sequence[str], tokenize: str = "13a", lowercase: bool = False) -> Prepared:
    """The tokenizer's text for the encoder; ``lowercase`` applies ``str.lower`` first, as sacreBLEU does."""
    try:
        run = TOKENIZERS[tokenize]
    except KeyError:
        raise ConfigError(f"unknown tokenizer {tokenize!r}; valid: {', '.join(TOKENIZERS)}") from None
    # sacreBLEU strips trailing whitespace first; it matters for intl ("5- " keeps "5-" together).
    return run([ln.lower().rstrip() for ln in lines] if lowercase else [ln.rstrip() for ln in lines])


def _prep_13a_line(line: str, lowercase: bool) -> str:
    """One line as :func:`prepare` gives it to the encoder under ``13a``."""
    return _prepare_13a([(line.lower() if lowercase else line).rstrip()])[0]


def _prep_none_line(line: str, lowercase: bool) -> str:
    """One line as :func:`prepare` gives it to the encoder under ``none``."""
    return _joined([(line.lower() if lowercase else line).rstrip()])


_LINE_PREP = {"13a": (V13A, _prep_13a_line), "none": (PLAIN, _prep_none_line)}


def line_prep(tokenize: str) -> tuple[int, Callable[..., str]] | None:
    """The C scanner's mode and the preprocessing of one line (``prep(line, lowercase=...)``) for a tokenizer
    the kernels scan line by line (``13a``, ``none``); None for the others."""
    return _LINE_PREP.get(tokenize)


def encode_lines(
    vocab: _text.VocabHandle, lines: Sequence[str], tokenize: str = "13a", lowercase: bool = False, grow: bool = True
) -> tuple[bytes, bytes]:
    """Token ids (int32) and line offsets (int64, ``len(lines) + 1``) of ``lines`` in ``vocab``: the result of
    ``_text.encode(vocab, *prepare(lines, tokenize, lowercase), grow)``; ``13a`` and ``none`` without the joined
    text (``_text.encode_lines``)."""
    fast = line_prep(tokenize)
    if fast is None:
        text, mode = prepare(lines, tokenize, lowercase)
        return _text.encode(vocab, text, mode, grow)
    mode, prep = fast
    return _text.encode_lines(vocab, lines, mode, lowercase, grow, partial(prep, lowercase=lowercase))
