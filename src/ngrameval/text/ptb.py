"""``ptb-coco``: the tokens coco-caption scores, in Python (no Java).

pycocoevalcap 1.2 runs Stanford CoreNLP 3.4.1's ``PTBTokenizer -preserveLines -lowerCase`` on every caption
and then drops the tokens of its ``PUNCTUATIONS`` list. This module reproduces that pipeline with a
regular-expression lexer covering what captions contain; the Java tokenizer has many more rules (it is a
large JFlex grammar). Reproduced:

- Penn Treebank splitting: punctuation off words (``onion.`` -> ``onion .``), contractions
  (``n't 's 'm 'd 're 've 'll``: ``don't`` -> ``do n't``, ``can't`` -> ``ca n't``), ``gonna gotta wanna
  lemme gimme cannot`` (-> ``gon na`` ...), ``$5`` -> ``$ 5``, ``50%`` -> ``50 %``; words keep inner
  hyphens, periods, slashes, underscores and apostrophes (``10-year-old``, ``a.b``, ``cat/dog``,
  ``o'clock``), numbers their ``.,:`` (``1,000``, ``3:30``); abbreviations keep their period (single
  letters ``a.``, letter-period runs ``u.s.a.``, and a list: ``mr. mrs. dr. st. etc. vs.`` ...); runs of
  ``!``/``?`` are one token, ``...``/``…`` one ``...``, dashes ``--``; URLs and e-mail addresses stay whole;
  ``&`` stays inside upper-case runs (``AT&T``).
- Its escapes (``ptb3Escaping``): brackets become ``-LRB- -RRB- -LSB- -RSB- -LCB- -RCB-``, double quotes
  `````` / ``''`` (opening / closing), single quotes ``` / ``'``, curly quotes likewise, ``½`` ``1/2``.
- ``-lowerCase`` applies after the escapes, so the brackets come out as ``-lrb-`` ... and coco's
  ``PUNCTUATIONS`` (which lists ``-LRB-``) does *not* remove them: they stay tokens, as in coco-caption.
- coco's removal: the tokens ``'' ' `` ` -LRB- -RRB- -LCB- -RCB- . ? ! , : - -- ... ;`` are dropped
  (exact, case-sensitive matches: ``!!!``, ``?!``, ``/``, ``&`` stay).
- Emoticons as CoreNLP 3.4.1's ``SMILEY`` (``[<>]?[:;=][-o*']?[()DPdpO\\{@|[\\]]`` not before an ASCII letter or
  digit; only its round brackets escaped: ``:)`` -> ``:-rrb-``, ``:D`` -> ``:d``) and ``ASIANSMILEY`` (``^_^``,
  ``(^_^)``); ``!``/``?`` between two letter runs inside one token (``crowd!original!!!`` -> ``crowd!original !!!``);
  a period before a digit starts a number (``part.1`` -> ``part .1``, ``v1.2`` -> ``v1 .2``, ``3.30pm`` ->
  ``3.30 pm``; an abbreviation keeps its period: ``no.1`` -> ``no. 1``).

Not reproduced (differences with the Java tokenizer are possible there): the sentence-end rule (an abbreviation or
single letter before a capitalised word may lose its period, ``saw a. Then`` -> ``a . then``, also across captions,
which pycocoevalcap joins with line breaks), an emoticon that ends the last caption of a batch (Java's rule needs a
following character), SGML tags (``<c>``), the rarer abbreviations and acronyms, British-to-American spelling
options (off in the toolkit anyway), and characters Java takes as line breaks (``\\r``, ``\\u2028``, ``\\x85``,
``\\x0b``, ``\\x0c``): inside a caption pycocoevalcap passes them to Java, which breaks the line there, so every
later caption is scored with another caption's tokens — here they are spaces. On the raw MSVD descriptions (32,059
sentences with original case and punctuation) this tokenizer and the Java one agree on every sentence
(``tests/golden/coco/README.md``); ``tests/test_properties.py`` compares them on generated captions where Java is
installed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import regex

COCO_PUNCTUATIONS = frozenset(
    ["''", "'", "``", "`", "-LRB-", "-RRB-", "-LCB-", "-RCB-", ".", "?", "!", ",", ":", "-", "--", "...", ";"]
)
_BRACKETS = {"(": "-LRB-", ")": "-RRB-", "[": "-LSB-", "]": "-RSB-", "{": "-LCB-", "}": "-RCB-"}
_UNICODE = str.maketrans(
    {
        "\u2018": "`",
        "\u2019": "'",
        "\u201c": "``",
        "\u201d": "''",
        "\u2013": "--",
        "\u2014": "--",
        "\u2026": "...",
        "\u00bd": "1/2",
        "\u00bc": "1/4",
        "\u00be": "3/4",
        "\u00a0": " ",
        "\ufeff": " ",  # a byte-order mark separates tokens; zero-width characters and soft hyphens vanish
        "\u200b": None,
        "\u200c": None,
        "\u200d": None,
        "\u00ad": None,
    }
)
_ABBREV = (
    "mr|mrs|ms|dr|st|jr|sr|prof|etc|vs|no|inc|ltd|co|corp|mt|ft|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
    "|gen|gov|sen|rep|rev|capt|col|lt|sgt|ave|blvd|est|approx|dept|bros"
)
_ABBREV_CASED = (
    "Ala|Ariz|Ark|Calif|Colo|Conn|Fla|Ill|Ind|Kan|Mass|Mich|Minn|Miss|Mont|Neb|Nev|Okla|Ore|Tenn|Tex|Wis|Wyo"
)
_W = r"[\p{L}\p{M}\p{N}_]"
_NOT_DIGIT = r"[\p{L}\p{M}_]"  # a word character that is not a digit
# a number with inner periods, commas or colons (1.5, 1,000, 3:30) is one piece of a word; a period joins two
# pieces only before a letter (part.1 -> part .1, v1.2 -> v1 .2, as the Java lexer: .1 is a number of its own)
_PIECE = rf"(?:\d+(?:[.,:]\d+)+|{_W}+)"
_JOIN = rf"(?:[-/'_]|\.(?={_NOT_DIGIT})|(?<=\d)[,:](?=\d)|(?<=\p{{Lu}})&(?=\p{{Lu}}))"
# CoreNLP 3.4.1's SMILEY (not before an ASCII letter or digit) and ASIANSMILEY
_SMILEY = r"[<>]?[:;=][-o*']?[()DPdpO\\{@|\[\]](?![A-Za-z0-9])"
_ASIAN = r"[-^x=~<>']_[-^x=~<>']|\([-^x=~<>'][_.]?[-^x=~<>']\)|\([\^x=~<>']-[\^x=~<>'`]\)"
_LEXER = regex.compile(
    rf"""
    (?P<url>(?:https?://|www\.)\S*[^\s.,;:!?'"()]|[\w.+-]+@[\w-]+(?:\.[\w-]+)+)
  | (?P<abbr>(?:[A-Za-z]\.){{2,}}(?!{_NOT_DIGIT})|(?<!{_W})[A-Za-z]\.(?!{_NOT_DIGIT})
            |(?i:(?<!{_W})(?:{_ABBREV})\.(?!{_NOT_DIGIT}))|(?<!{_W})(?:{_ABBREV_CASED})\.(?!{_NOT_DIGIT}))
  | (?P<bang>(?<!{_W})\p{{L}}+(?:[!?]\p{{L}}+)+(?!{_W}))
  | (?P<word>'\d\d(?:s(?!{_W}))?|(?!_){_PIECE}(?:{_JOIN}{_PIECE})*)
  | (?P<clitic>'(?:s|m|d|ll|re|ve|n)(?!{_W})|(?i:n't)(?!{_W}))
  | (?P<smiley>{_SMILEY}|{_ASIAN})
  | (?P<quotes>``|'')
  | (?P<decimal>\.\d+(?:\.\d+)*)
  | (?P<dots>\.{{3,}})
  | (?P<excl>[!?]+)
  | (?P<dash>--+)
  | (?P<dquote>")
  | (?P<squote>')
  | (?P<other>\S)
    """,
    regex.VERBOSE,
)
_CONTRACTION = regex.compile(r"(?i)^(.+?)(n't|'s|'m|'d|'ll|'re|'ve)$")
# words that keep an inner apostrophe (PTBLexer's APOWORD, the common cases): a vowel on both sides
# (ma'am), l' d' j' (d'ye), o'clock; any other inner apostrophe is a quote between two words
_APOWORD = regex.compile(r"^(?:[lLdDjJ]'\p{L}+|[A-HJ-XZn]'\p{L}{2,}|\p{L}*[aeiouyAEIOUY]'[aeiouA-Z]\p{L}*|o'clock)$")
_SPLIT_WORDS = {"gonna": 3, "gotta": 3, "wanna": 3, "lemme": 3, "gimme": 3, "cannot": 3}


def _word(w: str) -> list[str]:
    """Contractions and ``gonna``-style words split as the PTB lexer does."""
    k = _SPLIT_WORDS.get(w.lower())
    if k is not None:
        return [w[:k], w[k:]]
    m = _CONTRACTION.match(w)
    if m is not None and m[1][-1:] != "'":
        return [*_word(m[1]), m[2]]
    if "'" in w and not w.startswith("'") and not _APOWORD.match(w):
        head, _, tail = w.partition("'")
        return [*_word(head), "`", *_word(tail)]
    return [w]


def ptb_tokens(line: str) -> list[str]:
    """Penn-Treebank tokens of one line as CoreNLP 3.4.1's ``PTBTokenizer -lowerCase`` gives them (see the
    module docstring for what is covered).

    >>> ptb_tokens("A man's playing (a guitar), \\"Don't\\" he?")
    ['a', 'man', "'s", 'playing', '-lrb-', 'a', 'guitar', '-rrb-', ',', '``', 'do', "n't", "''", 'he', '?']
    """
    text = line.translate(_UNICODE)
    out: list[str] = []
    for m in _LEXER.finditer(text):
        kind, tok = m.lastgroup, m[0]
        start = m.start()
        opening = start == 0 or text[start - 1].isspace() or text[start - 1] in "([{"
        if kind == "word":
            out += _word(tok)
        elif kind == "dots":
            out.append("...")
        elif kind == "dash":
            out.append("--")
        elif kind == "dquote":  # opening when a non-space follows (Java: 'man"s' -> man `` s)
            out.append("``" if start + 1 < len(text) and not text[start + 1].isspace() else "''")
        elif kind == "squote":
            out.append("`" if opening and start + 1 < len(text) and not text[start + 1].isspace() else "'")
        elif kind == "other":
            out.append(_BRACKETS.get(tok, tok))
        elif kind == "smiley":  # only its round brackets are escaped (:-RRB-), as the Java lexer does
            out.append(tok.replace("(", "-LRB-").replace(")", "-RRB-"))
        else:
            out.append(tok)
    return [t.lower() for t in out]


# most captions: ASCII words of letters and digits between single spaces, perhaps a final period
_PLAIN = re.compile(r"[A-Za-z0-9]+(?: [A-Za-z0-9]+)*\.?")
_KEEPS_PERIOD = frozenset(_ABBREV.split("|"))
_KEEPS_PERIOD_CASED = frozenset(_ABBREV_CASED.split("|"))


def _plain_tokens(text: str) -> list[str] | None:
    """:func:`coco_tokens` of a text that :data:`_PLAIN` matches whole, without the lexer: every word is one token
    (lowercased; ``gonna``-style words split), and a final period is dropped (coco's ``PUNCTUATIONS`` has ``.``)
    unless it ends an abbreviation (a single letter or one of the list), which keeps it; None: not such a text."""
    if _PLAIN.fullmatch(text) is None:
        return None
    words = text.split(" ")
    if text[-1] == ".":
        last = words[-1] = words[-1][:-1]
        if (len(last) == 1 and last.isalpha()) or last.lower() in _KEEPS_PERIOD or last in _KEEPS_PERIOD_CASED:
            return None
    out: list[str] = []
    for w in words:
        low = w.lower()
        k = _SPLIT_WORDS.get(low)
        out += [low] if k is None else [low[:k], low[k:]]
    return out


def coco_tokens(line: str) -> list[str]:
    """The tokens coco-caption scores: :func:`ptb_tokens` without its ``PUNCTUATIONS`` (plain captions without the
    lexer: :func:`_plain_tokens`, the same tokens; 7x faster on MSVD's descriptions).

    >>> coco_tokens("A woman is slicing an onion (fast).")
    ['a', 'woman', 'is', 'slicing', 'an', 'onion', '-lrb-', 'fast', '-rrb-']
    """
    text = " ".join(line.split())
    plain = _plain_tokens(text)
    if plain is not None:
        return plain
    return [t for t in ptb_tokens(text) if t not in COCO_PUNCTUATIONS]


def coco_lines(lines: Sequence[str]) -> list[str]:
    """Every line as coco-caption's tokenized caption: its tokens joined by single spaces (each distinct line
    tokenized once: reference sets repeat lines, e.g. every description against the rest of its clip)."""
    done = {x: " ".join(coco_tokens(x)) for x in dict.fromkeys(lines)}
    return [done[x] for x in lines]
