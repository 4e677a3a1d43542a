"""Counting straight from the lines (``ngrameval._direct``, :mod:`ngrameval.ngrams.direct`) gives exactly the rows of
the vocabulary path (``References.build`` + ``overlap_stats``) on any text, any number of references and systems,
every order; the scanner it shares with ``_text.encode_lines`` (64-byte class masks) gives sacreBLEU's tokens on
lines of every length around the block size; bad input is a clear error; the kernel stops on Ctrl-C and lets other
threads run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sacrebleu.metrics.bleu import _get_tokenizer
from tests.conftest import WORDS, broken_line, decoded, free_line, interrupt, line, ticks_beside

from ngrameval import _direct, _text, bleu
from ngrameval.ngrams.count import References, overlap_stats
from ngrameval.ngrams.direct import applies, direct_stats
from ngrameval.text.pipeline import Preprocess
from ngrameval.text.tokenize import encode_lines, line_prep

DATA = Path(__file__).parent / "data"

latin1 = st.text(st.characters(max_codepoint=255, blacklist_characters="\n"), max_size=40)
# lines long enough to cross one or more 64-byte blocks of the scanner, words of any length and kind
long_word = st.one_of(st.sampled_from(WORDS), st.text("abc.,-'5", min_size=1, max_size=80))
long_line = st.lists(st.tuples(long_word, st.sampled_from([" ", "  ", "\t", "\u00a0", ""])), max_size=40).map(
    lambda parts: "".join(w + s for w, s in parts)
)
long_latin1 = st.text(st.characters(max_codepoint=255, blacklist_characters="\n"), min_size=60, max_size=300)
# text above U+00FF as real news and web text has it: curly quotes, dashes, CJK, emoji, combining marks, Cyrillic,
# Greek, Arabic, Unicode whitespace, glued to the ASCII characters the 13a rules act on ('.', ',', '-', digits)
WIDE_WORDS = [
    "\u201cquoted\u201d", "\u2018it\u2019s", "it\u2019s.", "\u2014", "a\u2013b", "5\u2013", "\u20136",
    "\u2026", "\u65e5\u672c\u8a9e", "\u65e5\u672c.", "\u3002", "\u6771\u4eac,\u5927\u962a", "\U0001f600",
    "\U0001f44d\U0001f3fd", "e\u0301", "Cafe\u0301.", "n\u0303o", "\u041c\u043e\u0441\u043a\u0432\u0430",
    "\u041f\u0420\u0418\u0412\u0415\u0422,", "\u0394\u03b9\u03ac", "\u0645\u0631\u062d\u0628\u0627",
    "\u20ac5", "5\u20ac.", "\u00a0", "\u2122", "3.5\u00b0", "\u00e0.\u00e0", "\u0100-1", "\ufb01x", "\u0130",
    "\u1e9e", "x\u200by", "\U00010348,5",
]  # fmt: skip
WIDE_SEPARATORS = [" ", " ", "", "\u2009", "\u3000", "\u2028", "\u0085", "\u00a0", "\u1680", "\u202f", "\t"]
wide_line = st.lists(
    st.tuples(st.sampled_from([*WIDE_WORDS, *WORDS]), st.sampled_from(WIDE_SEPARATORS)), max_size=16
).map(lambda parts: "".join(w + s for w, s in parts))
# a wide line long enough to cross 64-byte blocks in its UTF-8 form
long_wide = st.lists(st.sampled_from([*WIDE_WORDS, "abc", ".", ",", "-", "9"]), min_size=20, max_size=60).map("".join)
any_line = st.one_of(line, line, long_line, long_latin1, free_line, broken_line, latin1, wide_line, long_wide)


@st.composite
def systems_and_refs(draw: st.DrawFn) -> tuple[list[list[str]], list[list[str]]]:
    n = draw(st.integers(0, 8))
    k = draw(st.integers(1, 3))
    systems = [[draw(any_line) for _ in range(n)] for _ in range(k)]
    refs = [[draw(any_line) for _ in range(draw(st.integers(1, 4)))] for _ in range(n)]
    return systems, refs


def vocabulary_rows(systems: list[list[str]], refs: list[list[str]], pre: Preprocess, order: int) -> list[np.ndarray]:
    return [st.values for st in overlap_stats(systems, References.build(refs, pre), order)]


def line_tokens(lines: list[str], tokenize: str, lowercase: bool = False) -> list[list[str]]:
    """The tokens of every line through ``_text.encode_lines`` (the scanner the direct kernel shares)."""
    vocab = _text.vocab_new()
    return decoded(encode_lines(vocab, lines, tokenize, lowercase), vocab)


@pytest.mark.parametrize("tokenize", ["13a", "none"])
@settings(max_examples=300, deadline=None)
@given(data=systems_and_refs(), lowercase=st.booleans(), order=st.integers(1, 6))
@pytest.mark.slow
def test_rows_equal_the_vocabulary_path(
    tokenize: str, data: tuple[list[list[str]], list[list[str]]], lowercase: bool, order: int
) -> None:
    systems, refs = data
    pre = Preprocess(tokenize, lowercase)
    got = [st.values for st in direct_stats(systems, refs, pre, order)]
    want = vocabulary_rows(systems, refs, pre, order)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


# long tokens that agree in their length and their first and last 8 bytes (compared without their bytes up to 16
# bytes, by the bytes between past 16), narrow and wide (UTF-8 form), in one segment and across its texts
long_alike = st.lists(
    st.builds(
        lambda head, mid, tail: head + mid + tail,
        st.sampled_from(["abcdefgh", "abcdefgi", "abcdéfgh"]),
        st.sampled_from(["", "x", "y", "xy", "yx", "xyz" * 3, "xyy" * 3, "é", "€"]),
        st.sampled_from(["", "h", "stuvwxyz", "stuvwxyy", "s€"]),
    ),
    min_size=1,
    max_size=12,
).map(" ".join)


@pytest.mark.parametrize("tokenize", ["13a", "none"])
@settings(max_examples=150, deadline=None)
@given(
    pairs=st.lists(st.tuples(long_alike, st.lists(long_alike, min_size=1, max_size=3)), max_size=5),
    order=st.integers(1, 4),
)
def test_long_tokens_alike_at_both_ends_equal_the_vocabulary_path(
    tokenize: str, pairs: list[tuple[str, list[str]]], order: int
) -> None:
    systems, refs = [[h for h, _ in pairs]], [r for _, r in pairs]
    pre = Preprocess(tokenize)
    got = [st.values for st in direct_stats(systems, refs, pre, order)]
    for g, w in zip(got, vocabulary_rows(systems, refs, pre, order), strict=True):
        np.testing.assert_array_equal(g, w)


# texts of a few words, so n-grams repeat within a text and across the pair: a segment with one reference is counted
# by comparing the positions of equal tokens (seg_counts_one), and one whose repeats make too many comparisons
# (a word said hundreds of times) by the n-gram table (seg_counts): both must give the vocabulary path's rows
few_words = st.lists(st.sampled_from(["a", "b", "c", "a.", ","]), max_size=60).map(" ".join)
repeated = st.builds(lambda w, k, tail: " ".join([w] * k) + tail, st.sampled_from(["a", "b"]), st.integers(0, 400),
                     few_words)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(
    pairs=st.lists(st.tuples(st.one_of(few_words, repeated), st.one_of(few_words, repeated)), max_size=6),
    order=st.integers(1, 7),
)
@pytest.mark.slow
def test_one_reference_with_repeated_ngrams_equals_the_vocabulary_path(
    pairs: list[tuple[str, str]], order: int
) -> None:
    systems = [[h for h, _ in pairs]]
    refs = [[r] for _, r in pairs]
    pre = Preprocess()
    got = direct_stats(systems, refs, pre, order)[0].values
    np.testing.assert_array_equal(got, vocabulary_rows(systems, refs, pre, order)[0])


def test_one_reference_counts_repeats_clipped() -> None:
    # hand-counted: hyp "a a b a b" vs ref "a b a b b": unigrams a 3/2 -> 2, b 2/3 -> 2 (4); bigrams "a a" 1/0,
    # "a b" 2/2, "b a" 1/1 (3); trigrams "a a b" 0, "a b a" 1/1, "b a b" 1/1 (2); 4-grams "a b a b" 1/1 (1)
    row = direct_stats([["a a b a b", "a " * 300]], [["a b a b b"], ["a " * 200]], Preprocess(), 4)[0].values
    np.testing.assert_array_equal(row[0, 3:7], [4, 3, 2, 1])
    np.testing.assert_array_equal(row[1, 3:7], [200, 199, 198, 197])  # the many-repeats case: the n-gram table
    np.testing.assert_array_equal(row[:, 11:15], row[:, 3:7])  # one reference: recall matches = matches


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(st.one_of(long_line, long_latin1), max_size=6), lowercase=st.booleans())
@pytest.mark.slow
def test_scanner_gives_sacrebleu_tokens_across_blocks(lines: list[str], lowercase: bool) -> None:
    tok = _get_tokenizer("13a")()
    assert line_tokens(lines, "13a", lowercase) == [tok(s.lower() if lowercase else s).split() for s in lines]


def every_byte_lines(length: int = 128) -> list[str]:
    """Each Latin-1 character at the start, inside and at the end of a 16- and a 64-byte stretch of a line (and,
    when ``length`` < 128, of its last, partial block)."""
    lines = []
    for code in range(256):
        if chr(code) == "\n":
            continue
        for at in (0, 5, 15, 16, 31, 47, 62, 63):
            body = list(("ab,c d.e-f 9 x'y" * 8)[:length])
            body[at % length] = chr(code)
            body[(at + 64) % length] = chr(code)
            lines.append("".join(body))
    return lines


@pytest.mark.parametrize("length", [128, 100, 40])
def test_every_byte_at_every_place_of_a_block(length: int) -> None:
    # the 64-byte class masks (SSSE3 nibble tables or SSE2 where the machine has them, the table otherwise; a line's
    # last block copied and padded with spaces) meet every byte value everywhere, wide lines' UTF-8 form too
    tok = _get_tokenizer("13a")()
    lines = every_byte_lines(length)
    wide = [s + " \u2019\u00e9\u2014x\u00a0\u3000" + s[::-1] for s in lines[::7]]
    assert line_tokens(lines + wide, "13a") == [tok(s).split() for s in lines + wide]
    assert line_tokens(lines + wide, "none") == [s.split() for s in lines + wide]


@settings(max_examples=300, deadline=None)
@given(words=st.lists(st.text("a1.,-", min_size=1, max_size=8), min_size=1, max_size=30))
def test_words_of_dots_commas_hyphens_and_digits_split_as_sacrebleu(words: list[str]) -> None:
    # a word the v13a rules 2-4 leave whole ("well-known", "10,000", "7.5") is taken as one token without the rule
    # passes; every other one ("U.S.", "2-0", "a.1") goes through them
    tok = _get_tokenizer("13a")()
    lines = [" ".join(words), "".join(words)]
    assert line_tokens(lines, "13a") == [tok(s).split() for s in lines]


@pytest.mark.parametrize("at", range(0, 40, 3))
def test_wide_characters_at_every_place_of_an_ascii_run(at: int) -> None:
    # a 2-byte str's UTF-8 form is written 8 ASCII code units at a time: a wide character (a curly quote, a dash,
    # NBSP and other Unicode whitespace, a combining mark) anywhere in a run, and runs of every length
    base = 'The U.S. well-known 10,000 cats\' "tails" (and) dogs.'
    lines = []
    for wide in ("\u2019", "\u2014", "\u00a0", "\u2009", "\u3000", "e\u0301", "\u20ac"):
        body = base[:at] + wide + base[at:]
        lines += [body, body * 3, wide + body[::-1]]
    tok = _get_tokenizer("13a")()
    assert line_tokens(lines, "13a") == [tok(s).split() for s in lines]
    assert line_tokens(lines, "none") == [s.split() for s in lines]
    refs = [[r] for r in lines[1:] + lines[:1]]
    pre = Preprocess()
    np.testing.assert_array_equal(
        direct_stats([lines], refs, pre, 4)[0].values, vocabulary_rows([lines], refs, pre, 4)[0]
    )


def test_without_ssse3_the_sse2_masks_give_the_same_tokens() -> None:
    # NGRAMEVAL_NO_SSSE3 (read at import) makes the scanner take the SSE2 masks on an SSSE3 machine: both kinds
    # of masks, on every byte at every place, give the same tokens and counts
    code = textwrap.dedent(
        """
        import json, sys
        from tests.test_direct import every_byte_lines, line_tokens
        from ngrameval.ngrams.direct import direct_stats
        from ngrameval.text.pipeline import Preprocess
        lines = every_byte_lines(128) + every_byte_lines(40)
        rows = direct_stats([lines[::2]], [[r] for r in lines[1::2]], Preprocess(), 4)[0].values
        print(json.dumps([line_tokens(lines, "13a"), line_tokens(lines, "none"), rows.tolist()]))
        """
    )
    env = {**os.environ, "NGRAMEVAL_NO_SSSE3": "1"}
    root = Path(__file__).parent.parent
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=root, capture_output=True, text=True, check=True)
    lines = every_byte_lines(128) + every_byte_lines(40)
    rows = direct_stats([lines[::2]], [[r] for r in lines[1::2]], Preprocess(), 4)[0].values
    assert json.loads(out.stdout) == [line_tokens(lines, "13a"), line_tokens(lines, "none"), rows.tolist()]


@pytest.mark.parametrize("size", [1, 62, 63, 64, 65, 127, 128, 129, 192, 500])
@pytest.mark.parametrize("tail", ["", " ", ".", "x,", "ab-cd.", "(", " z"])
def test_words_ending_at_every_block_edge(size: int, tail: str) -> None:
    # a word that ends exactly where a 64-byte block and the line end (the case that once read past the line)
    hyp = "w" * size + tail
    refs = [["w" * size + tail, "w " * size]]
    pre = Preprocess()
    got = direct_stats([[hyp]], refs, pre, 4)[0].values
    np.testing.assert_array_equal(got, vocabulary_rows([[hyp]], refs, pre, 4)[0])


def last_block_in_one_page(line: str) -> bool:
    """Whether the 64 bytes from the start of a 1-byte str's last (partial) block lie in one memory page, as the
    scanner checks before it reads them in place (CPython: the characters follow the str's header)."""
    data = id(line) + sys.getsizeof(line) - len(line) - 1
    return ((data + (len(line) - 1) // 64 * 64) & 4095) <= 4096 - 64


def test_a_lines_last_block_read_in_place_or_copied_at_a_page_end() -> None:
    # the last partial block of a line is read in place when its 64 bytes lie in one page (the bits past the line
    # dropped), else copied and padded: lines of every length ending with every kind of byte, on both paths
    tails = ["w", ".", "a,", "ab-", "(", " ", "9.5", "x'", "\u00e9"]
    kept: dict[bool, list[str]] = {True: [], False: []}
    made = []  # every line kept alive, so the next one is placed elsewhere (some at the end of an allocator page)
    for n in range(200_000):
        line = ("ab,c d.e-f 9 x'y " * 12)[: n % 190] + tails[n % len(tails)]
        made.append(line)
        if len(line) % 64 and len(kept[last_block_in_one_page(line)]) < 300:
            kept[last_block_in_one_page(line)].append(line)
        if min(map(len, kept.values())) >= 300:
            break
    assert min(map(len, kept.values())) >= 20, {k: len(v) for k, v in kept.items()}
    tok = _get_tokenizer("13a")()
    for lines in kept.values():
        assert line_tokens(lines, "13a") == [tok(s).split() for s in lines]
        assert line_tokens(lines, "none") == [s.split() for s in lines]
        refs = [[r] for r in lines[1:] + lines[:1]]
        got = direct_stats([lines], refs, Preprocess(), 4)[0].values
        np.testing.assert_array_equal(got, vocabulary_rows([lines], refs, Preprocess(), 4)[0])


def test_segments_past_the_first_table_grow_it() -> None:
    # more distinct tokens than the table is first sized for (2**16): it grows (and rehashes) mid-segment
    words = [f"w{i}" for i in range(70_000)]
    hyp = " ".join(words[::2] + words[:1000])
    refs = [[" ".join(words[::3]), "x " + " ".join(words[1000:3000])], ["a b"]]
    systems = [[hyp, "a b"]]
    for pre in (Preprocess(), Preprocess("none", lowercase=True)):
        got = direct_stats(systems, refs, pre, 4)
        np.testing.assert_array_equal(got[0].values, vocabulary_rows(systems, refs, pre, 4)[0])


def test_wide_segments_are_counted_and_placed_in_order() -> None:
    systems = [["the cat €", "a b c", "Ünïcødé ☃ text", "x y"], ["the € cat", "b c", "☃", "y"]]
    refs = [["the cat €"], ["a b c", "a c"], ["Ünïcødé text ☃"], ["x y z"]]
    for tokenize in ("13a", "none"):
        pre = Preprocess(tokenize, lowercase=True)
        got = direct_stats(systems, refs, pre, 4)
        for g, w in zip(got, vocabulary_rows(systems, refs, pre, 4), strict=True):
            np.testing.assert_array_equal(g.values, w)


def test_a_token_is_one_token_whatever_the_kind_of_its_str() -> None:
    # "café" in a 1-byte str (the reference) and in a 4-byte one (the hypothesis, which holds an emoji) is the same
    # token: the kernel scans the whole segment in UTF-8 form, so the 4-gram matches; a byte of a UTF-8 form that
    # is whitespace in Latin-1 (0x85 in "…", 0xA0 in "à") splits nothing
    hyp, ref = "café à … la 😀", "café à … la x"
    hyp_len, ref_len, _, match, _ = _direct.counts([[hyp]], [ref], 1, False, 4, str)
    assert np.frombuffer(hyp_len, dtype=np.int64).tolist() == [5]
    assert np.frombuffer(ref_len, dtype=np.int64).tolist() == [5]
    assert np.frombuffer(match, dtype=np.int64).tolist() == [4, 3, 2, 1]


def test_every_code_point_splits_as_str_split() -> None:
    # the UTF-8 form (utf8_line) turns exactly Python's whitespace above ASCII into a space: every code point from
    # U+0080 to U+FFFF and every one above that str.isspace knows, between two words, in a wide line of each kind
    points = [c for c in range(0x80, 0x10000) if not 0xD800 <= c < 0xE000] + [0x10000, 0x1F600, 0x10FFFF]
    for kind in ("", "\u0100", "\U0001f600"):  # the line's str kind: 1, 2 or 4 bytes a code point
        hyps = [f"a{chr(c)}b {kind}" for c in points]
        rows = np.empty((1, len(hyps), 3 + 5 * 1))
        _direct.counts([hyps], ["x"] * len(hyps), 0, False, 1, str, rows)
        want = [len(h.split()) for h in hyps]
        assert rows[0, :, 0].tolist() == want


def test_rows_are_the_counts_as_stats() -> None:
    # counts(..., rows) writes the Stats rows RefSide.fill makes of counts' arrays: closest reference length (ties
    # to the shorter), mean length, n-gram totals of both sides, info columns 0
    systems = [["a b c d", "x y", ""], ["a b", "x y z w v", "q"]]
    refs = [["a b c", "a b c d e"], ["x y z"], ["p q", "r", "s t u"]]
    rows = np.full((2, 3, 3 + 5 * 4), np.nan)
    _direct.counts(systems, refs, 1, False, 4, str, rows)
    for k, values in enumerate(rows):
        np.testing.assert_array_equal(values, vocabulary_rows(systems, refs, Preprocess(), 4)[k])
    with pytest.raises(ValueError, match="float64 buffer of 138 values"):
        _direct.counts(systems, refs, 1, False, 4, str, np.zeros((2, 3, 22)))
    with pytest.raises(ValueError, match="float64 buffer"):
        _direct.counts(systems, refs, 1, False, 4, str, np.zeros((2, 3, 23), dtype=np.float32))
    with pytest.raises(BufferError):
        _direct.counts(systems, refs, 1, False, 4, str, b"\0" * 8 * 138)  # read-only


@pytest.mark.slow  # 150 examples against sacreBLEU a tokenizer: 2 s on an idle core
@pytest.mark.parametrize("tokenize", ["13a", "none"])
@settings(max_examples=150, deadline=None)
@given(
    hyps=st.lists(st.one_of(wide_line, long_wide, free_line), min_size=1, max_size=6),
    n_refs=st.integers(1, 3),
    lowercase=st.booleans(),
    data=st.data(),
)
def test_wide_text_equals_sacrebleu(
    tokenize: str, hyps: list[str], n_refs: int, lowercase: bool, data: st.DataObject
) -> None:
    # every segment of wide text on the direct path, corpus and sentence BLEU equal to sacreBLEU's
    import sacrebleu

    refs = [[data.draw(st.one_of(wide_line, long_wide, latin1)) for _ in range(n_refs)] for _ in hyps]
    pre = Preprocess(tokenize, lowercase)
    assert applies(pre, nist=False)
    ours = bleu(hyps, refs, tokenize=tokenize, lowercase=lowercase, eff=True)
    sb = sacrebleu.BLEU(tokenize=tokenize, lowercase=lowercase, effective_order=True)
    theirs = sb.corpus_score(hyps, [[r[k] for r in refs] for k in range(n_refs)])
    assert ours.score * 100 == pytest.approx(theirs.score, rel=1e-12, abs=1e-12)
    for got, h, r in zip(ours.sentences, hyps, refs, strict=True):
        assert got * 100 == pytest.approx(sb.sentence_score(h, r).score, rel=1e-12, abs=1e-12)


def test_real_text_wmt17_and_summeval() -> None:
    hyps = (DATA / "wmt17_sample.hyp.txt").read_text(encoding="utf-8").splitlines()
    refs = [[r] for r in (DATA / "wmt17_sample.ref.txt").read_text(encoding="utf-8").splitlines()]
    sample = Path(__file__).parents[1] / "src" / "ngrameval" / "data" / "summeval_sample.jsonl"
    rows = [json.loads(x) for x in sample.read_text(encoding="utf-8").splitlines()]
    names = sorted(rows[0]["systems"])
    summ = [[r["systems"][m]["summary"] for r in rows] for m in names]
    summ_refs = [r["references"] for r in rows]
    for systems, seg_refs in (([hyps], refs), (summ, summ_refs)):
        for pre in (Preprocess(), Preprocess(lowercase=True), Preprocess("none")):
            got = direct_stats(systems, seg_refs, pre, 4)
            for g, w in zip(got, vocabulary_rows(systems, seg_refs, pre, 4), strict=True):
                np.testing.assert_array_equal(g.values, w)


def test_api_uses_it_and_keeps_sacrebleu_scores() -> None:
    import sacrebleu

    hyps = (DATA / "wmt17_sample.hyp.txt").read_text(encoding="utf-8").splitlines()
    refs = (DATA / "wmt17_sample.ref.txt").read_text(encoding="utf-8").splitlines()
    assert applies(Preprocess(), nist=False) and not applies(Preprocess(), nist=True)
    assert not applies(Preprocess(stem=True), nist=False) and not applies(Preprocess("intl"), nist=False)
    ours = bleu(hyps, [[r] for r in refs])
    assert ours.score * 100 == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs]).score, abs=1e-9)


def test_layout_of_segments() -> None:
    assert _direct.layout([]) == 0
    assert _direct.layout(["a", "b"]) == 0
    assert _direct.layout([["a"], ["b", "c"]]) == 1
    assert _direct.layout(("a",)) == 0
    for other in (["a", ["b"]], [["a"], []], [["a"], ("b",)], [["a", 3]], [3], [b"a"], [["a"], "b"]):
        assert _direct.layout(other) == 2, other  # type: ignore[arg-type]


def test_bad_input_is_a_clear_error() -> None:
    prep = partial(line_prep("13a")[1], lowercase=False)  # type: ignore[index]
    with pytest.raises(TypeError, match="line 2 is int, not str"):
        _direct.counts([["a", 3]], ["a", "b"], 1, False, 4, prep)  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"refs\[1\] must be a str or a list of str, not int"):
        _direct.counts([["a", "b"]], ["a", 3], 1, False, 4, prep)  # type: ignore[list-item]
    with pytest.raises(ValueError, match="segment 2 has no reference"):
        _direct.counts([["a", "b"]], ["a", []], 1, False, 4, prep)
    with pytest.raises(ValueError, match="system 1 has 1 texts"):
        _direct.counts([["a"]], ["a", "b"], 1, False, 4, prep)
    with pytest.raises(ValueError, match="mode must be 0"):
        _direct.counts([["a"]], ["a"], 2, False, 4, prep)
    with pytest.raises(ValueError, match=r"max_order must be 0\.\.100"):
        _direct.counts([["a"]], ["a"], 1, False, 101, prep)
    with pytest.raises(TypeError, match="preprocessing gave bytes"):
        _direct.counts([["a &amp; b"]], ["a"], 1, False, 4, lambda s: s.encode())  # type: ignore[arg-type,return-value]


def test_references_changed_by_the_preprocessing_are_refused() -> None:
    refs = [["a &amp; b", "c"]]

    def prep(s: str) -> str:
        refs[0].append("d")  # Python code the kernel calls: it must not read past the list it sized
        return s

    with pytest.raises(RuntimeError, match="references of segment 1 changed"):
        _direct.counts([["x"]], refs, 1, False, 4, prep)


@pytest.mark.parametrize("change", ["refs shrink", "system shrinks", "refs item replaced", "refs item made a str"])
def test_lists_changed_by_the_preprocessing_are_refused(change: str) -> None:
    """The kernel reads the caller's lists, not copies: Python code it calls (prep) changing them is an error,
    never a read past a list or of an item of another type."""
    hyps = ["x &amp; y", "x", "y"]
    refs: list[Any] = [["a &amp; b"], ["c", "d"], ["e"]]

    def prep(s: str) -> str:
        if change == "refs shrink":
            del refs[1:]
        elif change == "system shrinks":
            del hyps[1:]
        elif change == "refs item replaced":
            refs[1] = 3
        else:
            refs[1] = "c"
        return s

    want = "changed size during the call" if "shrink" in change else "references of segment 2 changed"
    for rows in (None, np.zeros((1, 3, 23))):
        hyps[:], refs[:] = ["x &amp; y", "x", "y"], [["a &amp; b"], ["c", "d"], ["e"]]
        with pytest.raises(RuntimeError, match=want):
            _direct.counts([hyps], refs, 1, False, 4, prep, *([] if rows is None else [rows]))


def test_long_counts_stop_on_sigint() -> None:
    code = textwrap.dedent("""
        from ngrameval import _direct
        lines = ["w1 w2 w3 " * 6000] * 400_000  # 20 times longer lines than a run of seconds
        print("start", flush=True)
        _direct.counts([lines], lines, 1, False, 4, str)
        print("finished", flush=True)
    """)
    interrupt(code)  # ended by KeyboardInterrupt without printing "finished"


def test_counts_release_the_gil() -> None:
    lines = [" ".join(f"w{i % 5000}." for i in range(k, k + 30)) for k in range(60_000)]
    ran = ticks_beside(lambda: _direct.counts([lines], lines, 1, False, 4, str))
    assert ran > 0  # another thread ran during the call


def test_order_zero_only_tokenizes() -> None:
    systems, refs = [["a b c.", "d"]], [["a b", "c d e"], ["x"]]
    full = _direct.counts(systems, refs, 1, False, 4, str)
    tokens = _direct.counts(systems, refs, 1, False, 0, str)
    assert tokens[:3] == full[:3]  # hyp_len, ref_len, seg
    assert tokens[3] == tokens[4] == b""  # no n-gram counts
    assert np.frombuffer(tokens[0], dtype=np.int64).tolist() == [4, 1]


def test_sizes_are_the_sorted_distinct_reference_counts() -> None:
    # the signature's nrefs comes from these (api._measure_checked): one C pass when every segment has as many
    assert _direct.sizes([["a"], ["b"]]) == [1]
    assert _direct.sizes([["a", "b"], ("c",), ["d", "e", "f"], ["g"]]) == [1, 2, 3]
    assert _direct.sizes([]) == []
    with pytest.raises(TypeError):
        _direct.sizes([["a"], 3])


@pytest.mark.parametrize("wide", ["", "\u20ac", "\U0001f600"])
@pytest.mark.parametrize("markup", ["&amp;", "&quot;", "&LT;", "&gt;", "<skipped>", "a-\nb", "\n", "& <", "&amp"])
def test_markup_at_every_place_of_a_line_is_prepared(markup: str, wide: str) -> None:
    # the check for what needs the tokenizer's own preprocessing reads 16 bytes (8 code units of a 2-byte line) at a
    # time: markup at every place of lines of 1 to 70 characters is found (else the entity or the break would be
    # scanned raw), in 1-, 2- and 4-byte lines (`wide` at the line's start)
    tok = _get_tokenizer("13a")()
    lines = [
        wide + ("w." * 40)[:at] + markup + ("z," * 40)[: size - at]
        for size in range(0, 70, 3)
        for at in range(size + 1)
    ]
    lines = [ln for ln in lines if "\n" not in ln] + [ln for ln in lines if "\n" in ln][::5]
    want = [tok(ln.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")).split() for ln in lines]
    assert line_tokens(lines, "13a") == want
    refs = [[r] for r in lines[1:] + lines[:1]]
    pre = Preprocess()
    np.testing.assert_array_equal(
        direct_stats([lines], refs, pre, 4)[0].values, vocabulary_rows([lines], refs, pre, 4)[0]
    )
