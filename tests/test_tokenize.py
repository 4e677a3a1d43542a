"""Our batch tokenizers produce sacreBLEU's tokens, line by line, on any input."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sacrebleu.metrics.bleu import _get_tokenizer
from tests.conftest import broken_line, free_line, line

from ngrameval import Preprocess, References, overlap_stats, preprocess, tokenize_lines
from ngrameval.errors import ConfigError

lines = st.lists(st.one_of(line, free_line, broken_line), min_size=1, max_size=8)


def sacre_tokens(name: str, lines: list[str], lowercase: bool) -> list[list[str]]:
    tok = _get_tokenizer(name)()
    return [tok((ln.lower() if lowercase else ln).rstrip()).split() for ln in lines]


@pytest.mark.parametrize("name", ["13a", "intl", "none", "char"])
@pytest.mark.parametrize("lowercase", [False, True])
@settings(max_examples=150, deadline=None)
@given(lines=lines)
def test_tokens_equal_sacrebleu(name: str, lowercase: bool, lines: list[str]) -> None:
    assert tokenize_lines(lines, name, lowercase) == sacre_tokens(name, lines, lowercase)


@pytest.mark.parametrize("name", ["13a", "intl"])
def test_batch_boundaries_do_not_leak(name: str) -> None:
    # Lines that start or end with the characters the rules look at on either side.
    lines = [".5", "5.", ",", "a.", ".a", "5-", "-5", "", "x,", "9", "“", "。"]
    assert tokenize_lines(lines, name) == sacre_tokens(name, lines, False)


@pytest.mark.parametrize("name", ["13a", "intl", "none", "char"])
def test_embedded_newlines_follow_sacrebleu(name: str) -> None:
    lines = ["hyphen-\nated line\nbreak", "<skip-\nped> 5-\n3", "a\n", "\n"]
    assert tokenize_lines(lines, name) == sacre_tokens(name, lines, False)


def test_unknown_tokenizer_lists_valid_ones() -> None:
    with pytest.raises(ConfigError, match="13a, intl, none, char"):
        tokenize_lines(["x"], "nope")


def test_stopwords_then_stem() -> None:
    cfg = Preprocess(lowercase=True, stopwords="smart", stem=True)
    assert preprocess(["The dogs WERE running", ""], cfg) == [["dog", "run"], []]


def test_stems_of_unseen_hypothesis_words_match() -> None:
    # "runs" never occurs in the references, but its stem does: it must count as a match.
    built = References.build([["he was running"]], Preprocess(stem=True))
    (stats,) = overlap_stats([["she runs"]], built, max_order=1)
    assert stats.match.tolist() == [[1]]
    (plain,) = overlap_stats([["she runs"]], References.build([["he was running"]], Preprocess()), max_order=1)
    assert plain.match.tolist() == [[0]]


def test_user_stopword_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "stop.txt"
    f.write_text("Cat\nmat\n", encoding="utf-8")
    assert preprocess(["the cat sat on the MAT"], Preprocess(stopwords=str(f))) == [["the", "sat", "on", "the"]]
