"""NIST equals NLTK's corpus_nist on generated single-reference corpora.

With several references NLTK keeps only the best single reference per segment (and its length), which
mteval-v13a.pl does not; the multi-reference behaviour is pinned by the mteval golden tests instead."""

from __future__ import annotations

import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from nltk.translate.nist_score import corpus_nist

from ngrameval import NIST, Preprocess, References, nist, overlap_stats, score
from ngrameval.errors import ConfigError
from ngrameval.metrics.nist import BETA, PROFILES
from ngrameval.metrics.registry import parse_spec

toks = st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f", "g"]), min_size=1, max_size=10)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(toks, st.lists(toks, min_size=1, max_size=1)), min_size=1, max_size=8), st.integers(1, 6))
def test_corpus_nist_equals_nltk(data, n) -> None:  # type: ignore[no-untyped-def]
    hyps = [" ".join(h) for h, _ in data]
    refs = [[" ".join(r) for r in rs] for _, rs in data]
    (stats,) = overlap_stats([hyps], References.build(refs, Preprocess("none")), max_order=n, nist=True)
    # NLTK divides by the number of hypothesis n-grams without a guard (mteval uses max(t, 1)).
    try:
        want = corpus_nist([[r.split() for r in rs] for rs in refs], [h.split() for h in hyps], n=n)
    except ZeroDivisionError:
        assume(False)
    assert float(NIST(n)(stats.total())) == pytest.approx(want, rel=1e-9)


def test_api_nist_identical_is_positive() -> None:
    assert nist(["the cat sat on the mat"], ["the cat sat on the mat"]).score > 0


# -- mteval-v13a.pl's Perl truthiness of the n-gram prefix "0", and the E2E reference length ----------------


def _perl_true(key: str) -> bool:
    return key not in ("", "0")


def _mteval_nist(hyps: list[str], refs: list[list[str]], n: int, average: bool = False) -> float:
    """mteval-v13a.pl's compute_ngram_info + score_segment + nist_score, written out with dictionaries
    (``average``: e2e-metrics' mteval-v13a-sig.pl reference length)."""
    counts: dict[str, int] = {}
    words = 0
    for rs in refs:
        for r in rs:
            w = r.split()
            words += len(w)
            for i in range(len(w)):
                for k in range(1, n + 1):
                    if i + k <= len(w):
                        key = " ".join(w[i : i + k])
                        counts[key] = counts.get(key, 0) + 1
    info = {}
    for key, c in counts.items():
        prefix = " ".join(key.split(" ")[:-1])
        info[key] = -math.log2(c / counts[prefix] if _perl_true(prefix) else c / words)
    gain = [0.0] * (n + 1)
    tst = [0] * (n + 1)
    ref_words = non_empty = 0
    for h, rs in zip(hyps, refs):
        hw = h.split()
        hg: dict[str, int] = {}
        for i in range(len(hw)):
            for k in range(1, n + 1):
                if i + k <= len(hw):
                    hg[" ".join(hw[i : i + k])] = hg.get(" ".join(hw[i : i + k]), 0) + 1
        best: dict[str, int] = {}
        for r in rs:
            rw = r.split()
            ref_words += len(rw)
            non_empty += bool(rw)
            rg: dict[str, int] = {}
            for i in range(len(rw)):
                for k in range(1, n + 1):
                    if i + k <= len(rw):
                        rg[" ".join(rw[i : i + k])] = rg.get(" ".join(rw[i : i + k]), 0) + 1
            for key, c in rg.items():
                best[key] = max(best.get(key, 0), c)
        for key, c in hg.items():
            if key in best:
                gain[len(key.split(" "))] += info[key] * min(c, best[key])
        for k in range(1, n + 1):
            tst[k] += max(len(hw) - k + 1, 0)
    nsys = non_empty / len(hyps) if average else len(refs[0])
    ratio = tst[1] / (ref_words / nsys)
    penalty = 1.0 if ratio >= 1 else math.exp(-BETA * math.log(ratio) ** 2) if ratio > 0 else 0.0
    return sum(gain[k] / max(tst[k], 1) for k in range(1, n + 1)) * penalty


def test_zero_prefix_minimal_case() -> None:
    """mteval gives 3.5: the bigrams "0 a", "0 b" weigh log2(4 / 1) = 2, not log2(2 / 1) = 1."""
    data = ["0 a", "0 b"]
    assert nist(data, data).score == pytest.approx(3.5, rel=1e-15)
    assert nist(data, data, profile="plain").score == pytest.approx(2.5, rel=1e-15)


@pytest.mark.parametrize("token", ["00", "0.0", "O", "a0"])
def test_only_the_token_0_is_false(token: str) -> None:
    """Keys "00", "0.0" (and "0 0" as a trigram prefix) are true in Perl: the profiles agree without a lone 0."""
    hyps = [f"{token} a {token} {token} b", f"{token} {token} c"]
    refs = [[f"{token} a {token} b", f"{token} {token} {token} c"], [f"c {token} {token}", f"{token} b"]]
    got = {p: nist(hyps, refs, profile=p, tokenize="none").score for p in PROFILES}
    assert got["mteval"] == got["plain"] == pytest.approx(_mteval_nist(hyps, refs, 5), rel=1e-12)


zero_toks = st.lists(st.sampled_from(["0", "00", "0.0", "a", "b", "0"]), min_size=0, max_size=9)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(zero_toks, st.lists(zero_toks, min_size=2, max_size=2)), min_size=1, max_size=6),
    st.integers(1, 5),
)
@pytest.mark.slow
def test_profiles_equal_mteval_written_out(data, n) -> None:  # type: ignore[no-untyped-def]
    hyps = [" ".join(h) for h, _ in data]
    refs = [[" ".join(r) for r in rs] for _, rs in data]
    assume(any(r.strip() for rs in refs for r in rs))
    (stats,) = overlap_stats([hyps], References.build(refs, Preprocess("none")), max_order=n, nist=True)
    tot = stats.total()
    assert float(NIST(n)(tot)) == pytest.approx(_mteval_nist(hyps, refs, n), rel=1e-12, abs=1e-12)
    for average in (False, True):
        want = _mteval_nist(hyps, refs, n, average)
        got = float(NIST(n, ref_len="average" if average else "mean")(tot))
        assert got == pytest.approx(want, rel=1e-12, abs=1e-12)
    if "0" not in {t for rs in refs for r in rs for t in r.split()} or n == 1:
        assert float(NIST(n, "plain")(tot)) == float(NIST(n)(tot))


def test_ref_len_average_differs_with_variable_references() -> None:
    """Segment 1 has refs of 4 and 2 words (mean 3), segment 2 one ref of 6 words: mean -> r = 3 + 6 = 9;
    average -> r = 12 words / (3 refs / 2 segments) = 8."""
    hyps = ["a b c d e f g", "x"]
    refs = [["a b c d", "e f"], ["a b c d e f"]]
    (stats,) = overlap_stats([hyps], References.build(refs, Preprocess("none")), max_order=5, nist=True)
    tot = stats.total()
    assert float(NIST().reference_length(tot)) == 9.0
    assert float(NIST(ref_len="average").reference_length(tot)) == 8.0
    assert (float(tot.ref_count), float(tot.segments)) == (3.0, 2.0)


def test_nist_options_spec_and_signature() -> None:
    spec = parse_spec("nist:profile=plain,ref_len=average", Preprocess())
    assert spec.metric == NIST(5, "plain", "average")
    assert spec.metric.signature() == "n:5|profile:plain|ref_len:average"
    assert parse_spec("nist", Preprocess()).metric.signature() == "n:5"
    for bad in ("nist:profile=perl", "nist:ref_len=closest"):
        with pytest.raises(ConfigError, match="expected one of"):
            parse_spec(bad, Preprocess())
    with pytest.raises(ConfigError, match="profile"):
        NIST(profile="x")


def test_two_specs_of_one_metric_keep_their_own_columns() -> None:
    """``nist,nist:profile=plain`` once printed both as one NIST column; names now carry what sets them apart."""
    hyps, refs = ["0 a", "0 b"], ["0 a", "0 b"]
    got = score({"s": hyps}, refs, "nist,nist:profile=plain,bleu,bleu")
    assert [s.metric for s in got] == ["NIST", "NIST profile:plain", "BLEU", "BLEU #2"]
    assert got[0].score != got[1].score and got[2].score == got[3].score
