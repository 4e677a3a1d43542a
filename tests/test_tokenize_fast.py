"""The line encoder (``_text.encode_lines``, one pass per line) gives exactly the ids and offsets of the reference
path (``prepare`` + ``_text.encode`` over the joined text), on any text, and sacreBLEU's tokens."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sacrebleu.metrics.bleu import _get_tokenizer
from tests.conftest import WORDS, broken_line, decoded, free_line, interrupt, line, ticks_beside

from ngrameval import _text
from ngrameval.text.tokenize import encode_lines, prepare

# Latin-1 text hits the 1-byte scanner with its non-ASCII letters, spaces (U+0085, U+00A0) and symbols; the
# markup lines hit the lines handed back to the Python preprocessing (in any case, before lower-casing).
latin1 = st.text(st.characters(max_codepoint=255, blacklist_characters="\n"), max_size=40)
rule_pieces = [*"ab9 .,-'\t\u00a0\u0085$%()<>&;", "&amp;", "&LT;", "<skipped>", "3.5", "é", "-\n"]
rule_text = st.lists(st.sampled_from(rule_pieces), max_size=20).map("".join)
markup = st.lists(st.sampled_from([*WORDS, "&AMP;", "&Quot;", "<SKIPPED>", "&amp;lt;", "-\n", "\n", " "]), max_size=12)
any_line = st.one_of(line, free_line, broken_line, latin1, rule_text, markup.map("".join), st.text(max_size=30))
corpora = st.lists(any_line, max_size=12)


def reference(lines: list[str], tokenize: str, lowercase: bool, vocab: _text.VocabHandle) -> tuple[bytes, bytes]:
    """The joined-text path: every line through ``prepare`` and ``_text.encode``."""
    if not lines:
        return b"", bytes(8)
    text, mode = prepare(lines, tokenize, lowercase)
    return _text.encode(vocab, text, mode, True)


@pytest.mark.parametrize("tokenize", ["13a", "none"])
@pytest.mark.parametrize("lowercase", [False, True])
@settings(max_examples=300, deadline=None)
@given(lines=corpora)
@pytest.mark.slow
def test_line_encoder_equals_the_joined_text_path(tokenize: str, lowercase: bool, lines: list[str]) -> None:
    old, new = _text.vocab_new(), _text.vocab_new()
    expected = reference(lines, tokenize, lowercase, old)
    got = encode_lines(new, lines, tokenize, lowercase)
    assert got == expected
    assert _text.tokens(new, 0) == _text.tokens(old, 0)


@settings(max_examples=200, deadline=None)
@given(lines=corpora, lowercase=st.booleans())
@pytest.mark.slow
def test_line_encoder_gives_sacrebleu_tokens(lines: list[str], lowercase: bool) -> None:
    vocab = _text.vocab_new()
    tok = _get_tokenizer("13a")()
    expected = [tok((ln.lower() if lowercase else ln).rstrip()).split() for ln in lines]
    assert decoded(encode_lines(vocab, lines, "13a", lowercase), vocab) == expected


@settings(max_examples=150, deadline=None)
@given(first=corpora, second=corpora)
def test_both_paths_share_one_vocabulary(first: list[str], second: list[str]) -> None:
    # a token gets the same id whichever path (and string kind: 1-byte or wider) interns it first
    mixed, old = _text.vocab_new(), _text.vocab_new()
    reference(first, "13a", False, old)
    encode_lines(mixed, first, "13a")
    assert encode_lines(mixed, second, "13a") == reference(second, "13a", False, old)
    assert _text.tokens(mixed, 0) == _text.tokens(old, 0)


def test_words_of_every_length_and_kind_get_one_id() -> None:
    # short (packed-key) and long tokens, from 1-byte, 2-byte and 4-byte lines, and at a line's very end
    words = ["a", "ab", "abcdefg", "abcdefgh", "é" * 7, "é" * 8, "abcdefghijklmnopqrstuvwxyz" * 3]
    lines = [" ".join(words), " ".join(words) + " €", " ".join(words) + " 😀", *words]
    vocab = _text.vocab_new()
    ids, off = encode_lines(vocab, lines, "13a")
    got = decoded((ids, off), vocab)
    assert got[0] == words and got[1] == [*words, "€"] and got[2] == [*words, "😀"]
    assert got[3:] == [[w] for w in words]
    assert len(_text.tokens(vocab, 0)) == len(words) + 2


def test_grow_false_gives_minus_one_for_unseen_tokens() -> None:
    vocab = _text.vocab_new()
    encode_lines(vocab, ["a b"], "13a")
    ids, off = encode_lines(vocab, ["b c, a"], "13a", grow=False)
    assert np.frombuffer(ids, dtype=np.int32).tolist() == [1, -1, -1, 0]
    assert np.frombuffer(off, dtype=np.int64).tolist() == [0, 4]
    assert _text.tokens(vocab, 0) == ["a", "b"]


def test_empty_and_blank_lines() -> None:
    vocab = _text.vocab_new()
    assert _text.encode_lines(vocab, [], 1, False, True, str) == (b"", bytes(8))
    ids, off = encode_lines(vocab, ["", " \t ", "x", ""], "13a")
    assert np.frombuffer(off, dtype=np.int64).tolist() == [0, 0, 0, 1, 1]
    assert np.frombuffer(ids, dtype=np.int32).tolist() == [0]


def test_bad_lines_and_preprocessing_are_type_errors() -> None:
    vocab = _text.vocab_new()
    with pytest.raises(TypeError, match="line 2 is int, not str"):
        _text.encode_lines(vocab, ["a", 3], 1, False, True, str)  # type: ignore[list-item]
    with pytest.raises(TypeError, match="line 1: the tokenizer's preprocessing gave bytes"):
        _text.encode_lines(vocab, ["a\nb"], 1, False, True, lambda s: s.encode())  # type: ignore[arg-type,return-value]
    with pytest.raises(ValueError, match="mode must be 0"):
        _text.encode_lines(vocab, ["a"], 2, False, True, str)
    # the vocabulary is released after each error
    assert encode_lines(vocab, ["a"], "13a")[0] == np.array([0], dtype=np.int32).tobytes()


def test_long_encode_lines_stops_on_sigint() -> None:
    # uninterrupted this scans 120 GB (20 times a ~10 s scan: past the harness's hang guard); the kernel polls
    # between lines
    code = textwrap.dedent("""
        from ngrameval import _text
        lines = ["a" * 40_000] * 3_000_000
        print("start", flush=True)
        _text.encode_lines(_text.vocab_new(), lines, 1, False, True, str)
        print("finished", flush=True)
    """)
    interrupt(code)  # ended by KeyboardInterrupt without printing "finished"


def test_encode_lines_releases_the_gil() -> None:
    lines = [" ".join(f"w{i % 5000}." for i in range(k, k + 30)) for k in range(60_000)]
    ran = ticks_beside(lambda: _text.encode_lines(_text.vocab_new(), lines, 1, False, True, str))
    assert ran > 0  # another thread ran during the call
