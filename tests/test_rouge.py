"""ROUGE against its reference implementations: ROUGE-1.5.5 (golden files of the Perl script, every option
set, per item and printed averages) and Google's rouge-score (a test-only dependency, on generated inputs)."""

from __future__ import annotations

import csv
import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rouge_score import rouge_scorer
from tests.conftest import plain_lcs

from ngrameval import _rouge
from ngrameval.api import rouge
from ngrameval.cli import main
from ngrameval.errors import ConfigError
from ngrameval.metrics.rouge import Rouge, _limit_bytes, combine, item_scores
from ngrameval.metrics.rouge_average import rouge155_average
from ngrameval.ngrams.texts import flatten
from ngrameval.text.pipeline import Encoder, Preprocess, preprocess

GOLD = Path(__file__).parent / "data" / "rouge155"
ITEMS = [json.loads(line) for line in (GOLD / "items.jsonl").read_text("utf-8").splitlines()]
SYSTEMS = ("S1", "S2", "S3")
REFS = [["\n".join(sents) for sents in item["references"].values()] for item in ITEMS]
HYPS = [["\n".join(item["systems"][s]) for item in ITEMS] for s in SYSTEMS]
# option sets of the golden runs (see each command.txt): text settings and Rouge fields
RUNS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "base": ({}, {}),
    "stem": ({"stem": True}, {}),
    "stem_stop": ({"stem": True, "stopwords": "smart"}, {}),
    "best_model": ({}, {"multi": "B"}),
    "alpha0.3": ({}, {"alpha": 0.3}),
    "len50": ({}, {"length_limit": 50}),
    "skip_unlimited": ({}, {"gap": None}),
}


def _golden_metrics(run: str) -> list[Rouge]:
    kw = {k: v for k, v in RUNS[run][1].items() if k != "gap"}
    gap = RUNS[run][1].get("gap", 4)
    return [
        *(Rouge("n", n=n, round5=True, **kw) for n in range(1, 5)),
        Rouge("l", round5=True, **kw),
        Rouge("w", round5=True, **kw),
        Rouge("s", gap=gap, round5=True, **kw),
        Rouge("su", gap=gap, round5=True, **kw),
    ]


def _golden_scores(run: str) -> tuple[list[Rouge], list[list[Any]]]:
    metrics = _golden_metrics(run)
    return metrics, item_scores(metrics, HYPS, *flatten(REFS), Preprocess("rouge155", **RUNS[run][0]))


@pytest.mark.parametrize("run", RUNS)
def test_every_item_equals_rouge155(run: str) -> None:
    metrics, scores = _golden_scores(run)
    gold = {}
    with open(GOLD / run / "scores.tsv", encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            gold[row["system"], row["item"], row["metric"]] = (row["recall"], row["precision"], row["f"])
    compared = 0
    for (k, system), (m, metric) in itertools.product(enumerate(SYSTEMS), enumerate(metrics)):
        s = scores[k][m]
        for i, item in enumerate(ITEMS):
            ours = tuple(f"{x:.5f}" for x in (s.recall[i], s.precision[i], s.f[i]))
            assert ours == gold[system, str(item["item"]), metric.display_name()], (system, item["item"], metric)
            compared += 1
    assert compared == 3 * 8 * 30


@pytest.mark.parametrize("run", RUNS)
def test_printed_averages_and_intervals_equal_rouge155(run: str) -> None:
    metrics, scores = _golden_scores(run)
    names = [m.display_name() for m in metrics]
    with open(GOLD / run / "averages.tsv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    assert len(rows) == 3 * 8 * 3
    for row in rows:
        values = scores[SYSTEMS.index(row["system"])][names.index(row["metric"])].stat(row["stat"].lower())
        avg = rouge155_average(values, [f"{it['item']}.{row['system']}" for it in ITEMS])
        ours = tuple(f"{x:.5f}" for x in (avg.average, avg.low, avg.high))
        assert ours == (row["printed_average"], row["ci_low"], row["ci_high"]), row
        # the printed average is not the mean of the items (ROUGE-1.5.5 prints a bootstrap mean)
        assert abs(float(values.mean()) - float(row["plain_mean_of_items"])) < 5e-8


def test_tokens_with_stemming_and_stop_words_equal_rouge155() -> None:
    with open(GOLD / "tokens_stem_stop.tsv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    sentences = {}
    for item in ITEMS:
        for who, sents in [*item["references"].items(), *item["systems"].items()]:
            folder = "models" if who in item["references"] else "peers"
            kept = [s for s in sents if s]  # SPL: empty lines are no sentence
            for j, s in enumerate(kept):
                sentences[f"{folder}/{item['item']}.{who}.spl", str(j)] = s
    keys = [(r["file"], r["sentence"]) for r in rows]
    ours = preprocess([sentences[k] for k in keys], Preprocess("rouge155", stopwords="smart", stem=True))
    assert [" ".join(t) for t in ours] == [r["tokens"] for r in rows]
    assert len(rows) > 400


def _one(hyp: str, ref: str | list[str], **kw: Any) -> dict[str, Any]:
    refs = [ref] if isinstance(ref, str) else ref
    names = kw.pop("names", ("rouge-1", "rouge-l", "rouge-w", "rouge-su4"))
    return rouge([hyp], [refs], names, **kw)


def test_rouge155_probes() -> None:
    # -l counts raw whitespace fields, a leading space giving an empty one ("  a -- b c-d e" -l 4 -> a, b)
    s = _one("  a -- b c-d e\nf g h", "a b c d e f g h", length_limit=4)
    assert (s["rouge-1"].recall, s["rouge-1"].precision) == (0.5, 1.0)
    assert s["rouge-l"].f == 0.66667
    # SU adds the unigram of every token but the last: one identical word scores 0 (and W 1)
    s = _one("bridge", "bridge")
    assert s["rouge-su4"].f == 0 and s["rouge-1"].f == 1 and s["rouge-w"].f == 1
    # an empty reference: ROUGE-1.5.5 gives N/L 0 and dies in ROUGE-W (division by zero); ours is 0
    s = _one("The bridge opened .", "")
    assert [v.f for v in s.values()] == [0, 0, 0, 0]
    # a reference of stop words only (-m -s): empty once they are removed; ROUGE-1.5.5 prints 0 for N and L
    s = _one("The bridge opened .", "it is what it is .", stem=True, stopwords="smart")
    assert [(v.recall, v.precision) for v in s.values()] == [(0, 0)] * 4


def test_rouge_w_weights_the_reference_length_twice() -> None:
    s = _one("a b c d", "a b c d", names=("rouge-w",))["rouge-w"]
    assert (s.recall, s.precision) == (0.75786, 1.0)  # R = (4^1.2 / (4^1.2)^1.2)^(1/1.2)


def test_alpha_leans_as_rouge155_p() -> None:
    hyp, ref = "the cat sat on the mat today", "the cat is on the mat"
    for alpha, stat in ((1.0, "precision"), (0.0, "recall")):
        s = _one(hyp, ref, alpha=alpha, profile="unicode")
        for v in s.values():
            assert v.f == pytest.approx(getattr(v, stat)) and v.recall != v.precision
    low = _one(hyp, ref, alpha=0.3, profile="unicode")["rouge-1"]
    assert abs(low.f - low.recall) < abs(low.f - low.precision)  # alpha < 0.5 leans to recall


def test_multi_reference_modes() -> None:
    hyp, refs = "a b c d", ["a b x y z", "a b c", "q r"]
    single = [_one(hyp, r, names=("rouge-1",), profile="unicode")["rouge-1"] for r in refs]
    pooled = _one(hyp, refs, names=("rouge-1",), profile="unicode")["rouge-1"]
    assert pooled.recall == pytest.approx(5 / 10) and pooled.precision == pytest.approx(5 / 12)
    best_r = _one(hyp, refs, names=("rouge-1",), profile="unicode", multi="B")["rouge-1"]
    assert best_r.recall == single[1].recall == 1.0
    best_f = _one(hyp, refs, names=("rouge-1",), profile="unicode", multi="max-f")["rouge-1"]
    assert best_f.f == max(s.f for s in single)
    jk = _one(hyp, refs, names=("rouge-1",), profile="unicode", multi="jk")["rouge-1"]
    # leave out 0 -> best F of {1, 2} = ref 1; leave out 1 -> ref 0; leave out 2 -> ref 1
    assert jk.f == pytest.approx((2 * single[1].f + single[0].f) / 3)
    assert _one(hyp, refs[:1], names=("rouge-1",), profile="unicode", multi="jk")["rouge-1"].f == single[0].f


def test_jackknife_is_the_mean_of_leave_one_out_best_f() -> None:
    rng = np.random.default_rng(3)
    for _ in range(20):
        m = int(rng.integers(1, 6))
        hits, ref_total = rng.integers(0, 5, m).astype(float), rng.integers(5, 9, m).astype(float)
        hyp_total = np.full(m, 6.0)
        got = combine(Rouge(multi="jk"), hits, ref_total, hyp_total, np.array([0, m]))
        f = 2 * hits / (ref_total + hyp_total)
        subsets = [[j for j in range(m) if j != k] for k in range(m)] if m > 1 else [[0]]
        want = np.mean([f[s][np.argmax(f[s])] for s in subsets])
        assert got.f[0] == pytest.approx(want)


def test_profiles_and_non_ascii_words() -> None:
    hyp, ref = "Un café à Zürich", "un café zürich"
    assert _one(hyp, ref, names=("rouge-1",))["rouge-1"].recall == 1.0  # rouge155: "caf", "z", "rich"
    uni = _one(hyp, ref, names=("rouge-1",), profile="unicode")["rouge-1"]
    assert (uni.recall, uni.precision) == (1.0, 0.75)
    assert preprocess(["Un café à Zürich"], Preprocess("rouge155")) == [["un", "caf", "z", "rich"]]
    assert preprocess(["Un café à Zürich"], Preprocess("unicode")) == [["un", "café", "à", "zürich"]]
    assert preprocess(["Mice were studies"], Preprocess("rouge155", stem=True)) == [["mouse", "be", "studi"]]


def test_byte_limit_cuts_inside_a_word() -> None:
    s = _one("abcdef ghij", "abcdef g", names=("rouge-1",), byte_limit=8)["rouge-1"]
    assert (s.recall, s.precision) == (1.0, 1.0)  # the hypothesis is cut to "abcdef g"


def test_byte_limit_rules_read_from_the_perl_source() -> None:
    # readText: the running byte count (joining spaces not counted) decides; the sentence reaching it is cut
    sents = [b"abc de", b"fghij", b"klm"]
    assert _limit_bytes(sents, 10, lcs=False) == [b"abc de", b"fghi"]
    # readText_LCS never adds to its count: every sentence shorter than the limit stays, the first one at or
    # above it is cut at the limit itself
    assert _limit_bytes(sents, 6, lcs=True) == [b"abc de"[:6]]
    assert _limit_bytes(sents, 7, lcs=True) == [b"abc de", b"fghij", b"klm"]
    assert _limit_bytes([b"abcdefgh", b"x"], 4, lcs=True) == [b"abcd"]


def test_bad_specs_are_clear() -> None:
    with pytest.raises(ConfigError, match="multi must be one of"):
        Rouge(multi="C")
    with pytest.raises(ConfigError, match="unknown metric 'rouge-x'"):
        rouge(["a"], ["a"], ["rouge-x"])
    with pytest.raises(ConfigError, match="at most one of the word limit and the byte limit"):
        rouge(["a"], ["a"], ["rouge-1"], length_limit=3, byte_limit=3)


# Google's rouge-score, on generated texts: every character class its tokenizer treats specially.
_WORDS = ["the", "The", "cat", "cats", "sat", "running", "ran", "happily", "generously", "studies", "dying",
          "café", "ZÜRICH", "İstanbul", "x-ray", "don't", "3.5", "$1,200", "a", "is", "..."]  # fmt: skip
_SENT = st.lists(st.sampled_from(_WORDS), max_size=12).map(" ".join)
_TEXT = st.lists(_SENT, min_size=1, max_size=4).map("\n".join)
_TYPES = [f"rouge{n}" for n in range(1, 10)] + ["rougeL", "rougeLsum"]
_SPECS = [f"rouge-{n}" for n in range(1, 10)] + ["rouge-l", "rouge-lsum"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_TEXT, st.lists(_TEXT, min_size=1, max_size=3)), min_size=1, max_size=8), st.booleans())
@pytest.mark.slow
def test_equals_rouge_score(data: list[tuple[str, list[str]]], stem: bool) -> None:
    hyps, refs = [h for h, _ in data], [r for _, r in data]
    scorer = rouge_scorer.RougeScorer(_TYPES, use_stemmer=stem)
    ours = rouge(hyps, refs, _SPECS, profile="rouge-score", stem=stem)
    for i, (hyp, rs) in enumerate(data):
        want = scorer.score_multi(rs, hyp) if len(rs) > 1 else scorer.score(rs[0], hyp)
        for t, spec in zip(_TYPES, _SPECS):
            got = ours[spec].items
            assert (got.precision[i], got.recall[i], got.f[i]) == tuple(want[t]), (t, hyp, rs)


# Characters the ROUGE character rules treat specially: ASCII case, digits, separators of every kind, letters that
# str.lower maps into [a-z] (KELVIN SIGN, I WITH DOT ABOVE), non-ASCII letters of 1-, 2- and 4-byte strings.
_CHARS = st.sampled_from([*"aZz09 \t\r\n\x00-.'", "\u212a", "\u0130", "é", "Ä", "ß", "東", "\U0001f600"])
_RAW = st.lists(st.text(_CHARS, max_size=30), min_size=1, max_size=6)


def _rouge155_oracle(sentence: str) -> list[str]:
    """ROUGE-1.5.5's tokens of one line, from its Perl: lower-case A-Z, every byte outside [a-z0-9] a space."""
    keep = bytes(b + 32 if 65 <= b <= 90 else b if 48 <= b <= 57 or 97 <= b <= 122 else 32 for b in range(256))
    return sentence.encode("utf-8").translate(keep).decode("ascii").split()


@settings(max_examples=150, deadline=None)
@given(_RAW, st.booleans())
def test_sentence_encoder_equals_each_profiles_tokenizer(texts: list[str], lowercase: bool) -> None:
    from rouge_score.tokenizers import DefaultTokenizer

    google = DefaultTokenizer(use_stemmer=False)
    for profile, oracle in (("rouge155", _rouge155_oracle), ("rouge-score", google.tokenize)):
        enc = Encoder(Preprocess(profile, lowercase=lowercase and profile == "rouge-score"))
        ids, soff, toff = enc.encode_sentences(texts)
        names = enc.names()
        sentences = [s for t in texts for s in t.split("\n")]
        assert toff.tolist() == np.cumsum([0] + [t.count("\n") + 1 for t in texts]).tolist()
        got = [[names[i] for i in ids[a:b]] for a, b in itertools.pairwise(soff.tolist())]
        assert got == [oracle(s) for s in sentences]
        assert got == preprocess(sentences, Preprocess(profile))  # the line encoder agrees


@pytest.mark.parametrize("alphabet", [2, 7, 60])
def test_bit_parallel_lcs_equals_the_table(alphabet: int) -> None:
    # one sentence per text takes the bit-vector path; the same texts with an empty second sentence each take
    # the union-LCS table (whose union over one real sentence is that sentence's LCS)
    rng = np.random.default_rng(alphabet)
    lens = [0, 1, 5, 63, 64, 65, 127, 128, 129, 200]
    pairs = [(a, b) for a in lens for b in lens]
    h = [rng.integers(0, alphabet, size=a, dtype=np.int32) for a, _ in pairs]
    r = [rng.integers(0, alphabet, size=b, dtype=np.int32) for _, b in pairs]

    def side(parts: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        off = np.cumsum([0] + [len(p) for p in parts]).astype(np.int64)
        return np.concatenate(parts).astype(np.int32), off, np.arange(len(parts) + 1, dtype=np.int64)

    def with_empty_sentences(t: tuple[np.ndarray, np.ndarray, np.ndarray]) -> tuple[np.ndarray, ...]:
        off = t[1]
        soff = np.empty(2 * len(off) - 1, np.int64)
        soff[0::2], soff[1::2] = off, off[1:]
        return t[0], soff, np.arange(0, 2 * len(off) - 1, 2, dtype=np.int64)

    H, R = side(h), side(r)
    idx = np.arange(len(pairs), dtype=np.int64)
    fast = np.frombuffer(_rouge.lcs(*H, *R, *H, *R, idx, idx, 0.0), dtype=np.float64)
    table = np.frombuffer(
        _rouge.lcs(*with_empty_sentences(H), *with_empty_sentences(R), *H, *R, idx, idx, 0.0), np.float64
    )
    assert fast.tolist() == table.tolist() == [plain_lcs(a.tolist(), b.tolist()) for a, b in zip(r, h)]


def test_cli_scores_every_variant(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hyp = tmp_path / "sys.txt"
    ref = tmp_path / "ref.txt"
    hyp.write_text("The cat sat.<n>It was happy.\n\nA dog ran\n", encoding="utf-8")
    ref.write_text("The cat sat on the mat.<n>It was very happy.\nNothing here\nThe dog ran home\n", encoding="utf-8")
    specs = "rouge-1,rouge-2,rouge-l,rouge-w,rouge-s4,rouge-su4,rouge-su*:stat=r"
    argv = ["score", str(hyp), "-r", str(ref), "-m", specs, "--sentence-separator", "<n>", "--stem", "-f", "json"]
    assert main([*argv, "--sentence"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["metric"] for r in out] == ["ROUGE-1", "ROUGE-2", "ROUGE-L", "ROUGE-W-1.2", "ROUGE-S4", "ROUGE-SU4",
                                          "ROUGE-SU*-R"]  # fmt: skip
    api = rouge(
        ["The cat sat.\nIt was happy.", "", "A dog ran"],
        [["The cat sat on the mat.\nIt was very happy."], ["Nothing here"], ["The dog ran home"]],
        specs.split(","),
        stem=True,
    )
    for row, (spec, want) in zip(out, api.items()):
        assert row["sentences"][1] == 0  # an empty hypothesis is an item scoring 0
        assert row["score"] == pytest.approx(100 * (want.recall if spec.endswith("stat=r") else want.f))
        assert row["signature"] == want.signature
        assert "tok:rouge155|case:lc|stop:no|stem:rouge155" in row["signature"]


def test_compare_takes_rouge(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = [f"w{i} w{i + 1} w{i + 2}" for i in range(30)]
    ref = tmp_path / "ref.txt"
    ref.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "a.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("\n".join(ln.split()[0] for ln in lines) + "\n", encoding="utf-8")
    argv = ["compare", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), "-r", str(ref), "-m", "rouge-1,rouge-l"]
    assert main([*argv, "--paired-bs-n", "200", "-f", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [m["metric"] for m in out["metrics"]] == ["ROUGE-1", "ROUGE-L"]
    for m in out["metrics"]:
        assert m["systems"][0]["score"] == 100 and m["pairs"][0]["p_value"] < 0.05


def test_text_in_another_script_warns_under_the_ascii_profiles() -> None:
    """ROUGE-1.5.5 and rouge-score keep ASCII letters and digits only: Cyrillic scores 0, which is said, not silent."""
    import warnings

    import ngrameval as ne

    for profile in ("rouge155", "rouge-score"):
        with pytest.warns(UserWarning, match=r"1 of 2 system segments and 1 of 2 refer.* lose all.*unicode"):
            got = ne.rouge(["привет мир", "a cat"], ["привет мир", "a cat"], ["rouge-1"], profile=profile)
        assert got["rouge-1"].items.f.tolist() == [0.0, 1.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ne.rouge(["привет мир"], ["привет мир"], ["rouge-1"], profile="unicode")["rouge-1"].f == 1.0
        # only stop words: no tokens left either, but no warning
        assert ne.rouge(["the a"], ["the"], ["rouge-1"], stopwords="smart")["rouge-1"].f == 0.0
