"""Stemmers: the original Porter algorithm (Porter 1980, via PyStemmer), ROUGE-1.5.5's variant of it with the
WordNet 2.0 exception lists, and NLTK's Porter (what Google's ``rouge-score`` uses; optional dependency).

ROUGE-1.5.5 (``-m``) and ``rouge-score`` stem only tokens longer than three characters; ROUGE-1.5.5 first looks
the token up in the WordNet exceptions (``mice -> mouse``, ``were -> be``) and otherwise runs its own Porter
code, which differs from the published algorithm in step 4 (``-ement`` is removed before ``-ment`` and ``-ent``
are tried, each on what is left) and adds ``bli -> ble`` and ``logi -> log`` to step 2.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache, lru_cache

import Stemmer

from ngrameval.errors import MissingDependencyError

StemFn = Callable[[list[str]], list[str]]


@lru_cache(maxsize=1)
def _porter() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("porter")


def porter_stem(words: list[str]) -> list[str]:
    """Stem each word with the original Porter algorithm.

    >>> porter_stem(["running", "generalizations", "ponies"])
    ['run', 'gener', 'poni']
    """
    stemmer = _porter()
    try:
        return list(stemmer.stemWords(words))
    except UnicodeEncodeError:  # a lone surrogate: PyStemmer reads UTF-8
        return [_stem_with_surrogates(stemmer, w) for w in words]


def _stem_with_surrogates(stemmer: Stemmer.Stemmer, word: str) -> str:
    """Porter of a word holding lone surrogates: each stands in as a distinct private-use character absent from
    the word (for Porter any non-ASCII character is the same consonant, and no suffix rule adds one), then back."""
    lone = sorted({c for c in word if "\ud800" <= c <= "\udfff"})
    if not lone:
        return str(stemmer.stemWord(word))
    free = (chr(c) for c in range(0xE000, 0x110000) if chr(c) not in word and not 0xF900 <= c < 0xF0000)
    there = dict(zip(lone, free))
    back = {v: k for k, v in there.items()}
    stem = str(stemmer.stemWord(word.translate({ord(k): v for k, v in there.items()})))
    return stem.translate({ord(k): v for k, v in back.items()})


# ROUGE-1.5.5's Porter: consonant = not a vowel ('y' and digits included), vowel = aeiouy.
_C = "[^aeiou][^aeiouy]*"  # consonant sequence
_V = "[aeiouy][aeiou]*"  # vowel sequence
_M_GT0 = re.compile(f"^({_C})?{_V}{_C}")
_M_EQ1 = re.compile(f"^({_C})?{_V}{_C}({_V})?$")
_M_GT1 = re.compile(f"^({_C})?{_V}{_C}{_V}{_C}")
_HAS_VOWEL = re.compile(f"^({_C})?[aeiouy]")
_CVC = re.compile(f"^{_C}[aeiouy][^aeiouwxy]$")
_STEP2 = {
    "ational": "ate", "tional": "tion", "enci": "ence", "anci": "ance", "izer": "ize", "bli": "ble",
    "alli": "al", "entli": "ent", "eli": "e", "ousli": "ous", "ization": "ize", "ation": "ate", "ator": "ate",
    "alism": "al", "iveness": "ive", "fulness": "ful", "ousness": "ous", "aliti": "al", "iviti": "ive",
    "biliti": "ble", "logi": "log",
}  # fmt: skip
_STEP3 = {"icate": "ic", "ative": "", "alize": "al", "iciti": "ic", "ical": "ic", "ful": "", "ness": ""}
_STEP2_RE = re.compile(f"({'|'.join(_STEP2)})$")
_STEP3_RE = re.compile(f"({'|'.join(_STEP3)})$")
_STEP4_RE = re.compile("(al|ance|ence|er|ic|able|ible|ant|ement|ou|ism|ate|iti|ous|ive|ize)$")


def _strip(w: str, pattern: re.Pattern[str], measure: re.Pattern[str]) -> str:
    """Remove the (leftmost-matching) suffix of ``pattern`` if the stem before it satisfies ``measure``."""
    m = pattern.search(w)
    return w[: m.start()] if m and measure.search(w[: m.start()]) else w


@cache
def rouge155_porter(word: str) -> str:
    """One lower-case word through ROUGE-1.5.5's Porter stemmer.

    >>> [rouge155_porter(w) for w in ["studies", "mouse", "agreement", "replacement", "yelling"]]
    ['studi', 'mous', 'agreem', 'replac', 'yell']
    """
    if len(word) < 3:
        return word
    initial_y = word[0] == "y"
    w = "Y" + word[1:] if initial_y else word
    # step 1a
    if m := re.search("(ss|i)es$", w):
        w = w[: m.start()] + m.group(1)
    elif re.search("[^s]s$", w):
        w = w[:-1]
    # step 1b
    if w.endswith("eed"):
        if _M_GT0.search(w[:-3]):
            w = w[:-1]
    elif m := re.search("(ed|ing)$", w):
        stem = w[: m.start()]
        if _HAS_VOWEL.search(stem):
            w = stem
            if re.search("(at|bl|iz)$", w):
                w += "e"
            elif re.search(r"([^aeiouylsz])\1$", w):
                w = w[:-1]
            elif _CVC.search(w):
                w += "e"
    # step 1c
    if w.endswith("y") and _HAS_VOWEL.search(w[:-1]):
        w = w[:-1] + "i"
    # steps 2 and 3
    for pattern, table in ((_STEP2_RE, _STEP2), (_STEP3_RE, _STEP3)):
        if (m := pattern.search(w)) and _M_GT0.search(w[: m.start()]):
            w = w[: m.start()] + table[m.group(1)]
    # step 4, as modified in ROUGE-1.5.5 (each rule sees the result of the previous one)
    w = _strip(w, _STEP4_RE, _M_GT1)
    w = _strip(w, re.compile("ment$"), _M_GT1)
    if w.endswith("ent"):
        w = _strip(w, re.compile("ent$"), _M_GT1)
    elif (m := re.search("(s|t)(ion)$", w)) and _M_GT1.search(w[: m.start(2)]):
        w = w[: m.start(2)]
    # step 5
    if w.endswith("e"):
        stem = w[:-1]
        if _M_GT1.search(stem) or (_M_EQ1.search(stem) and not _CVC.search(stem)):
            w = stem
    if w.endswith("ll") and _M_GT1.search(w):
        w = w[:-1]
    return "y" + w[1:] if initial_y else w


@lru_cache(maxsize=1)
def wordnet_exceptions() -> dict[str, str]:
    """ROUGE-1.5.5's exception table (WordNet 2.0 ``*.exc``): inflected form -> base form."""
    from importlib import resources  # (~3 ms: loaded when a run first needs the table)

    text = resources.files("ngrameval.data").joinpath("wordnet2_exceptions.txt").read_text("utf-8")
    return dict(line.split() for line in text.splitlines() if line and not line.startswith("#"))


def rouge155_stem(words: list[str]) -> list[str]:
    """ROUGE-1.5.5 ``-m``: words of more than 3 characters -> WordNet exception, else its Porter.

    >>> rouge155_stem(["mice", "mouse", "geese", "ran", "were", "better", "studies"])
    ['mouse', 'mous', 'goose', 'ran', 'be', 'good', 'studi']
    """
    exc = wordnet_exceptions()
    return [w if len(w) <= 3 else exc.get(w) or rouge155_porter(w) for w in words]


@lru_cache(maxsize=1)
def _nltk_porter() -> Callable[[str], str]:
    try:
        from nltk.stem import porter
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingDependencyError("nltk", "rouge-score") from exc
    stem: Callable[[str], str] = lru_cache(maxsize=1 << 20)(porter.PorterStemmer().stem)  # a pure function
    return stem


def nltk_stem(words: list[str]) -> list[str]:
    """``rouge-score``'s stemming: NLTK's Porter (its default mode) on words of more than 3 characters.

    >>> nltk_stem(["dying", "ran", "generously"])
    ['die', 'ran', 'gener']
    """
    stem = _nltk_porter()
    return [stem(w) if len(w) > 3 else w for w in words]


def stemmer_for(tokenize: str) -> tuple[str, StemFn]:
    """The stemmer a tokenizer implies, with its signature name: ROUGE-1.5.5's for the ``rouge155`` and
    ``unicode`` profiles, NLTK's for ``rouge-score``, the original Porter algorithm for every other tokenizer."""
    if tokenize in ("rouge155", "unicode"):
        return "rouge155", rouge155_stem
    if tokenize == "rouge-score":
        return "nltk-porter", nltk_stem
    return "porter", porter_stem
