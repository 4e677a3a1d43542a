"""chrF's units (characters, chrF++'s words) and chrF's place in the character plane (``plane --unit char``).

The relation tested here is the one documented in :mod:`ngrameval.metrics.chrf`: AEv(alpha, 1) over the ``char``
tokenizer, with neutral penalties and one reference per segment, is chrF-beta with ``nc = 1`` (alpha =
1 / (1 + beta^2)); for N > 1 AEv's geometric means keep it at or below chrF's arithmetic ones.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.conftest import line, text_char

import ngrameval as ne
from ngrameval.errors import ConfigError
from ngrameval.meta.correlate import HumanScores, coefficient
from ngrameval.meta.plane import plane, unit_text
from ngrameval.metrics.chrf import alpha_of_beta
from ngrameval.ngrams.chars import WordUnits, char_units, split_punctuation, word_units
from ngrameval.text.pipeline import Preprocess

# any characters, line breaks and every kind of str.split whitespace included
SPACES = st.sampled_from([" ", "\t", "\n", "\r", "\x0b", "\x1c", "\x85", "\xa0", "\u2028", "\u3000", "  "])
wild_line = st.lists(st.one_of(st.text(text_char, max_size=6), SPACES, st.sampled_from(["(hi)", "a,", ",a", "!"])),
                     max_size=8).map("".join)  # fmt: skip
NEUTRAL = "w=inf,b=1e9"  # AEv's wordiness penalty off, brevity penalty 1 whenever the hypotheses are not empty


@settings(max_examples=150, deadline=None)
@given(batches=st.lists(st.lists(wild_line, max_size=6), min_size=1, max_size=3))
def test_word_units_are_sacrebleu_words(batches: list[list[str]]) -> None:
    """The C-interned fields split per type give split_punctuation's words, ids equal iff words equal."""
    fast, vocab = WordUnits(), {}
    for lines in batches:
        got, want = fast(lines), word_units(lines, vocab)
        assert got.off.tolist() == want.off.tolist()
        words = [w for ln in lines for w in split_punctuation(ln)]
        assert len(words) == len(got.ids)
        # the same partition of the words into ids as the reference interning (ids may be numbered differently)
        pairs = set(zip(got.ids.tolist(), want.ids.tolist()))
        assert len(pairs) == len({a for a, _ in pairs}) == len({b for _, b in pairs})


@settings(max_examples=150, deadline=None)
@given(lines=st.lists(wild_line, max_size=6), whitespace=st.booleans())
def test_char_units_are_code_points(lines: list[str], whitespace: bool) -> None:
    t = char_units(lines, whitespace)
    kept = lines if whitespace else ["".join(x.split()) for x in lines]
    assert [t.ids[a:b].tolist() for a, b in zip(t.off[:-1], t.off[1:])] == [[ord(c) for c in x] for x in kept]


def test_char_units_astral_and_every_space() -> None:
    spaces = "".join(chr(c) for c in range(0x110000) if chr(c).isspace())
    t = char_units([f"a{spaces}\U0001f600b", spaces, "\U00010000"], whitespace=False)
    assert t.ids.tolist() == [ord("a"), 0x1F600, ord("b"), 0x10000] and t.off.tolist() == [0, 3, 3, 4]


def _aev_and_chrf(hyps: list[str], refs: list[str], n: int, beta: float, lc: bool) -> tuple[ne.Score, ne.Score]:
    alpha = alpha_of_beta(beta)
    spec = f"aev:alpha={alpha!r},n={n},{NEUTRAL},tok=char,lc={'yes' if lc else 'no'}"
    spec += f",chrf:nc={n},nw=0,beta={beta!r},lc={'yes' if lc else 'no'}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # AEv's undefined-order warning (a side is 0 there)
        aev, chrf = ne.score({"s": hyps}, refs, spec, sentence=True)
    return aev, chrf


single = st.integers(1, 10).flatmap(lambda k: st.tuples(st.lists(line, min_size=k, max_size=k),
                                                        st.lists(line, min_size=k, max_size=k)))  # fmt: skip


@settings(max_examples=120, deadline=None)
@given(data=single, beta=st.sampled_from([0.5, 1.0, 2.0, 3.0]), lc=st.booleans())
@pytest.mark.slow
def test_chrf_one_order_is_aev_alpha_one(data: tuple[list[str], list[str]], beta: float, lc: bool) -> None:
    """chrF-beta(nc=1) = AEv(1/(1+beta^2), 1) over characters: corpus and every sentence (no empty reference)."""
    hyps, refs = data
    refs = [r if "".join(r.split()) else r + "x" for r in refs]  # chrF drops an empty reference's hypothesis
    aev, chrf = _aev_and_chrf(hyps, refs, 1, beta, lc)
    assert aev.score == pytest.approx(chrf.score, rel=1e-13, abs=1e-15)
    assert aev.sentences is not None and chrf.sentences is not None
    np.testing.assert_allclose(aev.sentences, chrf.sentences, rtol=1e-13, atol=1e-15)


@settings(max_examples=120, deadline=None)
@given(data=single, n=st.integers(2, 6), beta=st.sampled_from([0.5, 1.0, 2.0, 3.0]))
@pytest.mark.slow
def test_aev_at_most_chrf_above_one_order(data: tuple[list[str], list[str]], n: int, beta: float) -> None:
    """Geometric means of P_n, R_n (AEv) <= arithmetic ones (chrF), empty and short references included."""
    aev, chrf = _aev_and_chrf(*data, n, beta, False)
    assert aev.score <= chrf.score * (1 + 1e-12) + 1e-15
    assert aev.sentences is not None and chrf.sentences is not None
    assert np.all(aev.sentences <= chrf.sentences * (1 + 1e-12) + 1e-15)


def test_equal_orders_make_the_means_equal() -> None:
    # "ab" vs "ab": P_n = R_n = 1 at n = 1, 2: both means are 1
    aev, chrf = _aev_and_chrf(["ab"], ["ab"], 2, 2.0, False)
    assert aev.score == chrf.score == 1.0
    # "abc" vs "abd": P_1 = R_1 = 2/3, P_2 = R_2 = 1/2: AEv sqrt(1/3), chrF 7/12
    aev, chrf = _aev_and_chrf(["abc"], ["abd"], 2, 2.0, False)
    assert aev.score == pytest.approx(math.sqrt(1 / 3), rel=1e-14) and chrf.score == pytest.approx(7 / 12, rel=1e-14)


SYSTEMS = {
    "a": ["the cat sat on the mat", "a dog ran", "hello world"],
    "b": ["the cat is on a mat", "dogs run", "hello there world"],
    "c": ["cat", "the dog ran home", "world hello"],
    "d": ["the cat sat on the mat.", "a dog ran!", "Hello, world"],
}
REFS = ["the cat sat on the mat", "the dog ran home", "hello, world"]
HUMAN = HumanScores("q", ("a", "b", "c", "d"), np.array([4.0, 2.5, 1.0, 3.0]), None, 4, 0)


@pytest.mark.filterwarnings("ignore::ngrameval.errors.UndefinedMetricWarning")
def test_character_plane_cell_is_chrf() -> None:
    """The character plane's cell (alpha, 1) correlates chrF-beta(nc=1) with the criterion."""
    p = plane(SYSTEMS, REFS, HUMAN, alphas=(0.0, 0.2, 0.5, 1.0), orders=(1, 2), unit="char", brevity=1e9,
              wordiness=math.inf, coefficient_name="pearson")  # fmt: skip
    assert p.signature.startswith("AEv-plane|tok:char|")
    same = plane(SYSTEMS, REFS, HUMAN, pre=Preprocess("char"), alphas=p.alphas, orders=(1, 2), brevity=1e9,
                 wordiness=math.inf, coefficient_name="pearson")  # fmt: skip
    np.testing.assert_array_equal(p.values, same.values)  # --unit char is -tok char
    chrf = np.array([ne.score({s: SYSTEMS[s]}, REFS, "chrf:nc=1,nw=0")[0].score for s in HUMAN.systems])
    want = coefficient(chrf, HUMAN.system, "pearson")[0]
    assert p.values[p.orders.index(1), p.alphas.index(0.2)] == pytest.approx(want, rel=1e-12)
    word = plane(SYSTEMS, REFS, HUMAN, alphas=p.alphas, orders=(1, 2), coefficient_name="pearson")
    assert word.signature.startswith("AEv-plane|tok:13a|") and not np.array_equal(word.values, p.values)


@pytest.mark.parametrize(
    "pre", [Preprocess("intl"), Preprocess(stem=True), Preprocess(stopwords="smart"), Preprocess("13a", True)]
)
def test_unit_text(pre: Preprocess) -> None:
    assert unit_text("word", pre) is pre
    if pre.tokenize == "13a" and not pre.stem and pre.stopwords is None:
        assert unit_text("char", pre) == Preprocess("char", pre.lowercase)
    else:
        with pytest.raises(ConfigError, match="character plane"):
            unit_text("char", pre)
    with pytest.raises(ConfigError, match="unit"):
        unit_text("byte", pre)


def test_plane_command_unit_char(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ngrameval.cli import main

    files = []
    for name, outs in SYSTEMS.items():
        f = tmp_path / f"{name}.txt"
        f.write_text("\n".join(outs) + "\n", "utf-8")
        files.append(str(f))
    ref = tmp_path / "ref.txt"
    ref.write_text("\n".join(REFS) + "\n", "utf-8")
    judg = tmp_path / "j.csv"
    judg.write_text("system,score\n" + "".join(f"{s}.txt,{v}\n" for s, v in zip(HUMAN.systems, HUMAN.system)))
    common = [*files, "-r", str(ref), "-j", str(judg), "--max-order", "6", "-f", "json"]
    outputs = []
    for extra in (
        ["--unit", "char"],
        ["-tok", "char"],
        ["--unit", "char", "-tok", "char", "-lc"],
        ["--max-order", "2"],
    ):
        assert main(["plane", *common, *extra]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1] and '"tok:char' not in outputs[3] and "tok:char|case:lc" in outputs[2]
    assert "AEv-plane|tok:char|case:mixed" in outputs[0]
    assert main(["plane", *common, "--unit", "char", "-tok", "intl"]) == 2
    assert "character plane" in capsys.readouterr().err
    assert main(["plane", *common, "--unit", "bytes"]) == 2
