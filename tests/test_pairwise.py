"""Score matrices (ngrameval.matrices): every cell against the reference implementation's sentence score, cell by
cell — sacreBLEU's ``sentence_score`` (BLEU, chrF, chrF++, TER), rouge-score (ROUGE), and the project's own sentence
scoring of one pair (PINC, AEv, CIDEr-D, the generic path) — on real text (MSVD descriptions of one clip when
../shared/data is there; the bundled SummEval sample always) and generated text (few words, many repeats, so
counts above 1 test the clipping levels); then MBR, the diversity measures, the result objects, bad input."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest

import ngrameval as ne
from ngrameval.errors import ConfigError, InputError, InputTypeError
from ngrameval.matrices import diversity, iter_pairwise, mbr, multi_reference_scores, pairwise, self_scores
from ngrameval.matrices.matrix import cells_for, spec_of
from ngrameval.matrices.profiles import profiles, shared_counts
from ngrameval.ngrams.texts import Texts

sacrebleu = pytest.importorskip("sacrebleu")
from sacrebleu.metrics import BLEU, CHRF, TER  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "src" / "ngrameval" / "data" / "summeval_sample.jsonl"
MSVD = Path(__file__).resolve().parents[2] / "shared" / "data" / "msvd" / "msvd2sent.json"


def generated(n: int, seed: int) -> list[str]:
    """Hypothesis-like text: a few words drawn with repeats, punctuation, an empty line and a one-word line."""
    rng = np.random.default_rng(seed)
    words = ["the", "cat", "sat", "on", "mat", "a", "dog", ",", ".", "é", "runs", "Cat"]
    out = [" ".join(rng.choice(words, int(rng.integers(1, 14)))) for _ in range(n)]
    return [*out[:-2], "", "cat"]


def summeval() -> list[str]:
    rec = json.loads(DATA.read_text().splitlines()[0])
    return [*rec["references"], *(s["summary"] for s in rec["systems"].values())][:14]


def msvd() -> list[str]:
    if not MSVD.exists():
        return []
    clips = json.loads(MSVD.read_text())
    return next(iter(clips.values()))[:30]


def corpora(long_texts: int = 14) -> list[list[str]]:
    """Generated text, ``long_texts`` SummEval texts (references and summaries) and MSVD's descriptions of a clip."""
    out = [generated(24, 1), summeval()[:long_texts]]
    return [c for c in [*out, msvd()] if len(c) > 1]


def reference_matrix(metric: object, texts: list[str], others: list[str] | None = None) -> np.ndarray:
    cols = texts if others is None else others
    return np.array([[metric.sentence_score(h, [r]).score for r in cols] for h in texts])  # type: ignore[attr-defined]


SACRE = [
    ("bleu", lambda: BLEU()),
    ("bleu:eff=yes", lambda: BLEU(effective_order=True)),
    ("bleu:smooth=floor,smooth_value=0.1", lambda: BLEU(smooth_method="floor", smooth_value=0.1)),
    ("bleu:smooth=add-k", lambda: BLEU(smooth_method="add-k")),
    ("bleu:smooth=none", lambda: BLEU(smooth_method="none")),
    ("bleu:tok=none,lc=yes", lambda: BLEU(tokenize="none", lowercase=True)),
    ("chrf", lambda: CHRF()),
    ("chrf++", lambda: CHRF(word_order=2)),
    ("chrf:eps=yes", lambda: CHRF(eps_smoothing=True)),
    ("chrf:beta=1,space=yes", lambda: CHRF(beta=1, whitespace=True)),
    ("chrf:lc=yes", lambda: CHRF(lowercase=True)),
    ("ter", lambda: TER()),
]
#: sacreBLEU's TER on every cell of the 14 SummEval texts takes 16 s: TER is checked on 6 of them (3 s), with the
#: slow tests
SACRE_CASES = [pytest.param(s, m, id=s, marks=[pytest.mark.slow] if s == "ter" else []) for s, m in SACRE]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(("spec", "make"), SACRE_CASES)
def test_every_cell_is_sacrebleus_sentence_score(spec: str, make: object) -> None:
    metric = make()  # type: ignore[operator]
    for texts in corpora(6 if spec == "ter" else 14):
        got = pairwise(texts, metric=spec).to_numpy() * 100
        np.testing.assert_allclose(got, reference_matrix(metric, texts), rtol=0, atol=1e-9)


@pytest.mark.filterwarnings("ignore")
def test_against_others_is_sacrebleus_sentence_score() -> None:
    hyps, refs = generated(9, 3), generated(7, 4)
    got = pairwise(hyps, refs, "chrf++").to_numpy() * 100
    np.testing.assert_allclose(got, reference_matrix(CHRF(word_order=2), hyps, refs), rtol=0, atol=1e-9)
    got = pairwise(hyps, refs, "bleu:eff=yes").to_numpy() * 100
    np.testing.assert_allclose(got, reference_matrix(BLEU(effective_order=True), hyps, refs), rtol=0, atol=1e-9)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(("spec", "key"), [("rouge-1", "rouge1"), ("rouge-2", "rouge2"), ("rouge-l", "rougeL")])
def test_rouge_cells_are_rouge_scores(spec: str, key: str) -> None:
    rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")
    scorer = rouge_scorer.RougeScorer([key])
    for texts in corpora():
        got = pairwise(texts, metric=f"{spec}:tok=rouge-score").to_numpy()
        want = np.array([[scorer.score(r, h)[key].fmeasure for r in texts] for h in texts])
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(
    "spec",
    [
        "bleu",
        "bleu:smooth=nltk1",
        "bleu:n=2,eff=yes",
        "aev",
        "aev:alpha=0.2,n=2",
        "pinc",
        "pinc:sets=no",
        "pinc:avg=all",
        "chrf",
        "chrf++:nc=3",
    ],
)
def test_profile_path_equals_scoring_each_pair(spec: str) -> None:
    """The fast path (profiles counted once) against measure() of every pair as its own segment."""
    sp = spec_of(spec)
    for texts in corpora():
        others = texts[::-1][:5]
        for cols in (None, others):
            fast = cells_for(sp, texts, cols)(0, len(texts))
            slow = cells_for(sp, texts, cols, fast=False)(0, len(texts))
            np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12)


@pytest.mark.filterwarnings("ignore")
def test_cider_d_within_a_group_is_cider_d_with_the_group_as_references() -> None:
    """CIDEr-D of cell (i, j): text i against reference j, document frequencies over the group's texts."""
    texts = [t for t in corpora()[-1]][:8]
    got = pairwise(texts, metric="cider-d").to_numpy()
    for i, h in enumerate(texts):
        # one segment per column, every column text once: the df of the group's texts
        want = ne.score({"s": [h] * len(texts)}, [[r] for r in texts], ne.parse_specs("cider-d"), sentence=True)
        np.testing.assert_allclose(got[i], want[0].sentences, rtol=0, atol=1e-12)


def test_clipped_matches_are_sums_of_minimum_counts() -> None:
    rng = np.random.default_rng(7)
    ids = rng.integers(0, 4, 300).astype(np.int32)
    off = np.sort(np.concatenate([[0, 300], rng.integers(0, 300, 19)])).astype(np.int64)
    units = Texts(ids, off)
    p = profiles(units, 3)
    for n in range(3):
        grams = [
            [tuple(ids[a + k : a + k + n + 1]) for k in range(max(0, b - a - n))] for a, b in itertools.pairwise(off)
        ]
        want = np.array([[sum(min(x.count(g), y.count(g)) for g in set(x)) for y in grams] for x in grams])
        np.testing.assert_array_equal(shared_counts(p.levels[n], p.levels[n]), want)
        assert p.totals[:, n].tolist() == [len(g) for g in grams]


@pytest.mark.filterwarnings("ignore")
def test_groups_others_jobs_and_streaming() -> None:
    texts = generated(30, 5)
    labels = [i % 4 for i in range(30)]  # interleaved: a group is its labels, not a run of lines
    whole = pairwise(texts, metric="chrf", groups=labels)
    assert [g.group for g in whole.groups] == [0, 1, 2, 3]
    for g in whole.groups:
        members = [texts[i] for i in g.rows]
        assert g.rows.tolist() == [i for i in range(30) if labels[i] == g.group]
        np.testing.assert_array_equal(g.scores, pairwise(members, metric="chrf").to_numpy())
    for spec in ("chrf++", "chrf++:nc=0", "bleu", "pinc", "pinc:sets=no", "aev"):  # counted in one batch of groups
        for g in pairwise(texts, metric=spec, groups=labels).groups:
            alone = pairwise([texts[i] for i in g.rows], metric=spec).to_numpy()
            np.testing.assert_allclose(g.scores, alone, rtol=0, atol=1e-15)
    threaded = pairwise(texts, metric="chrf", groups=labels, jobs=2)
    for a, b in zip(whole.groups, threaded.groups):
        np.testing.assert_array_equal(a.scores, b.scores)
    one_big = pairwise(texts, metric="bleu", jobs=2).to_numpy()
    np.testing.assert_array_equal(one_big, pairwise(texts, metric="bleu").to_numpy())
    others, other_labels = generated(8, 6), [0, 1, 2, 3] * 2
    crossed = pairwise(texts, others, "chrf", labels, other_groups=other_labels)
    g = crossed.groups[2]
    assert g.cols.tolist() == [2, 6] and not g.same
    np.testing.assert_array_equal(
        g.scores, pairwise([texts[i] for i in g.rows], [others[2], others[6]], "chrf").to_numpy()
    )
    stream = iter_pairwise(texts, metric="chrf", groups=labels)
    assert next(stream).group == 0  # a generator: one group made at a time


@pytest.mark.filterwarnings("ignore")
def test_mbr_picks_the_best_mean_utility_and_ties_go_to_the_lowest_index() -> None:
    texts = msvd()[:20] or generated(20, 8)
    labels = [i // 10 for i in range(len(texts))]
    got = mbr(texts, "chrf", labels)
    chrf = CHRF()
    for c in got.choices:
        members = [i for i in range(len(texts)) if labels[i] == c.group]
        means = [np.mean([chrf.sentence_score(texts[i], [texts[j]]).score for j in members if j != i]) for i in members]
        assert c.index == members[int(np.argmax(means))]
        assert c.utility * 100 == pytest.approx(max(means), abs=1e-9)
    tied = mbr(["a b c", "x y", "a b c", "x y"], "bleu:eff=yes")  # 0 and 2 tie with 1 and 3 in mean utility
    assert tied.choices[0].index == 0
    cands = ["a b c d", "a b c d e", "a b x d", "q", "a b c x e"]
    loss = [np.mean([TER().sentence_score(h, [r]).score for r in cands if r is not h]) for h in cands]
    ter = mbr(cands, "ter").choices[0]  # a loss: the lowest expected TER wins
    assert ter.index == int(np.argmin(loss)) and ter.utility * 100 == pytest.approx(min(loss))
    assert got.to_numpy().tolist() == [c.index for c in got.choices]
    alone = mbr(["only one", "a", "b"], "chrf", ["x", "y", "y"]).choices[0]
    assert alone.index == 0 and math.isnan(alone.utility)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(("spec", "make"), [("bleu", BLEU), ("chrf", CHRF), ("ter", TER), ("chrf++", None)])
def test_multi_reference_scores_are_sacrebleus_with_every_other_text_as_a_reference(spec: str, make: object) -> None:
    metric = CHRF(word_order=2) if make is None else make()  # type: ignore[operator]
    texts = generated(14, 5)
    groups = [i % 3 for i in range(len(texts))]  # groups of 5, 5 and 4, interleaved
    got = multi_reference_scores(texts, spec, groups)
    for i, (t, g) in enumerate(zip(texts, groups)):
        refs = [u for j, (u, h) in enumerate(zip(texts, groups)) if h == g and j != i]
        assert got[i] * 100 == pytest.approx(metric.sentence_score(t, refs).score, abs=1e-9), i
    pool = summeval()[:5]  # against pseudo-references: every text of a group against all of its group's others
    hyps = generated(6, 9)
    got = multi_reference_scores(hyps, spec, [0, 1] * 3, others=pool, other_groups=[0, 0, 1, 1, 1])
    for i, h in enumerate(hyps):
        refs = pool[:2] if i % 2 == 0 else pool[2:]
        assert got[i] * 100 == pytest.approx(metric.sentence_score(h, refs).score, abs=1e-9), i
    alone = multi_reference_scores(["a b", "c d", "a b c"], spec, ["x", "y", "x"])
    assert math.isnan(alone[1]) and not math.isnan(alone[0])  # a text alone in its group has no reference
    assert np.array_equal(self_scores(texts[:4], spec), multi_reference_scores(texts[:4], spec), equal_nan=True)


def test_mbr_with_multi_reference_utility() -> None:
    cands = ["a b c d", "a b c d e", "a b x d", "q", "a b c x e", "the cat sat", "the cat sat down", "cat"]
    groups = [1, 1, 1, 1, 1, 2, 2, 2]
    for spec, pick in (("bleu", np.argmax), ("chrf", np.argmax), ("ter", np.argmin)):
        scores = multi_reference_scores(cands, spec, groups)
        got = mbr(cands, spec, groups, multi_reference=True).choices
        for choice, members in zip(got, ([0, 1, 2, 3, 4], [5, 6, 7])):
            best = members[int(pick(scores[members]))]
            assert (choice.index, choice.utility, choice.candidates) == (best, scores[best], len(members)), spec
    with pytest.raises(ConfigError, match="go together"):
        mbr(cands, "bleu", groups, others=cands, multi_reference=True)


@pytest.mark.filterwarnings("ignore")
def test_diversity_measures() -> None:
    texts = msvd()[:12] or generated(12, 9)
    d = diversity(texts, max_order=2).groups[0]
    tokens = [ne.tokenize_lines([t])[0] for t in texts]
    for n, value in zip((1, 2), d.distinct):
        grams = [tuple(t[k : k + n]) for t in tokens for k in range(len(t) - n + 1)]
        assert value == pytest.approx(len(set(grams)) / len(grams))
    others = [[t for j, t in enumerate(texts) if j != i] for i in range(len(texts))]
    self_bleu = np.mean([BLEU().sentence_score(t, o).score for t, o in zip(texts, others)])
    assert d.self_bleu * 100 == pytest.approx(self_bleu, abs=1e-9)
    self_chrf = np.mean([CHRF().sentence_score(t, o).score for t, o in zip(texts, others)])
    assert d.self_chrf * 100 == pytest.approx(self_chrf, abs=1e-9)
    pinc = pairwise(texts, metric="pinc", jobs=1).to_numpy()
    assert d.pinc == pytest.approx((pinc.sum() - np.trace(pinc)) / (len(texts) * (len(texts) - 1)))
    nltk = self_scores(texts[:4], spec_of("bleu:smooth=nltk1"))
    assert len(nltk) == 4 and np.all((nltk >= 0) & (nltk <= 1))


def test_results_to_numpy_and_pandas() -> None:
    pd = pytest.importorskip("pandas")
    r = ne.pairwise(["a b c", "a b", "c d"], metric="chrf", groups=["x", "x", "y"])
    with pytest.raises(ConfigError, match="groups"):
        r.to_numpy()
    assert r.groups[0].to_numpy().shape == (2, 2)
    frame = r.to_pandas()
    assert (
        isinstance(frame, pd.DataFrame) and len(frame) == 5 and list(frame.columns) == ["group", "row", "col", "score"]
    )
    assert r.groups[1].to_pandas().index.tolist() == [2]
    picked = mbr(["a b", "a b c"], "chrf")  # chrF leans to recall: the longer text against the shorter wins
    assert picked.to_pandas()[["group", "index"]].values.tolist() == [[None, 1]] and picked.to_numpy().tolist() == [1]
    assert diversity(["a b", "a b c"]).to_pandas().shape == (1, 7)


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: pairwise(["a", "b"], groups=["x"]), InputError, "groups has 1 labels"),
        (lambda: pairwise(["a", "b"], metric="nope"), ConfigError, "unknown metric"),
        (lambda: pairwise(["a", "b"], metric="bleu,chrf"), ConfigError, "one metric spec"),
        (lambda: pairwise(["a", "b"], metric=3), InputTypeError, "metric must be"),  # type: ignore[arg-type]
        (lambda: pairwise(["a", 1]), InputTypeError, "texts"),  # type: ignore[list-item]
        (lambda: pairwise(["a"], other_groups=["x"]), ConfigError, "give others too"),
        (lambda: pairwise(["a"], ["b"], groups=["x"]), ConfigError, "go together"),
        (lambda: pairwise(["a"], ["b"], groups=["x"], other_groups=["y"]), InputError, "group 'x'"),
        (lambda: pairwise(["a"], groups=[["x"]]), InputTypeError, "hashable"),
        (lambda: pairwise(["a"], jobs=0), ConfigError, "jobs"),
    ],
)
def test_bad_input_names_the_argument(call: object, error: type[Exception], words: str) -> None:
    with pytest.raises(error, match=words):
        call()  # type: ignore[operator]


# ------------------------------------------------------------------------------------------------ command line


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from ngrameval.cli import main

    try:
        code = main(argv)
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def cands(tmp_path: Path) -> Path:
    p = tmp_path / "cands.txt"
    p.write_text("the cat sat on the mat\na cat sat on the mat\nthe cat is on the mat\na dog barks\nthe dog barked\n"
                 "dogs bark\n")  # fmt: skip
    return p


@pytest.mark.filterwarnings("ignore")
def test_cli_mbr_summary_matrix_and_diversity(cands: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = cands.read_text().splitlines()
    code, out, _ = run_cli(["pairwise", str(cands), "--group-size", "3", "-m", "chrf", "--mbr", "-f", "json"], capsys)
    picks = json.loads(out)
    api = mbr(lines, "chrf", [i // 3 + 1 for i in range(6)])
    assert code == 0 and [p["line"] for p in picks] == [c.index + 1 for c in api.choices]
    assert [p["utility"] for p in picks] == pytest.approx([c.utility * 100 for c in api.choices])
    assert picks[0]["text"] == lines[api.choices[0].index]
    code, out, _ = run_cli(["pairwise", str(cands), "--group-size", "3", "-m", "ter", "--matrix", "-f", "csv"], capsys)
    rows = [r.split(",") for r in out.splitlines()[1:]]
    assert code == 0 and len(rows) == 18 and rows[1][:3] == ["1", "1", "2"]
    assert float(rows[1][3]) == pytest.approx(TER().sentence_score(lines[0], [lines[1]]).score)
    groups = tmp_path / "groups.txt"
    groups.write_text("x\ny\nx\ny\nx\ny\n")
    code, out, _ = run_cli(["pairwise", str(cands), "--groups", str(groups), "--jobs", "2"], capsys)
    assert code == 0 and out.splitlines()[2].split()[:3] == ["x", "3", "3"] and "diagonal left out" in out
    code, out, _ = run_cli(["pairwise", str(cands), "--group-size", "3", "--diversity", "-f", "csv"], capsys)
    head, first = out.splitlines()[:2]
    assert code == 0 and head == "group,texts,distinct-1,distinct-2,self-BLEU,self-chrF,PINC"
    want = diversity(lines[:3]).groups[0]
    assert float(first.split(",")[4]) == pytest.approx(want.self_bleu * 100)
    code, out, _ = run_cli(["pairwise", str(cands), "--group-size", "3", "--multi-reference", "-f", "json"], capsys)
    want = multi_reference_scores(lines, "bleu", [i // 3 for i in range(6)])
    assert code == 0 and [r["score"] for r in json.loads(out)] == pytest.approx(list(want * 100))
    assert [r["line"] for r in json.loads(out)] == list(range(1, 7))
    argv = ["pairwise", str(cands), "--group-size", "3", "--mbr", "--multi-reference", "-m", "chrf", "-f", "json"]
    code, out, _ = run_cli(argv, capsys)
    multi = mbr(lines, "chrf", [i // 3 for i in range(6)], multi_reference=True).choices
    assert code == 0 and [p["line"] for p in json.loads(out)] == [c.index + 1 for c in multi]
    out_file = tmp_path / "mbr.txt"
    assert run_cli(["pairwise", str(cands), "--mbr", "-o", str(out_file)], capsys)[0] == 0
    assert "ties go to the lowest line" in out_file.read_text()


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--group-size", "4"], "not a multiple of --group-size 4"),
        (["--groups", "{short}"], "has 2 labels"),
        (["--groups", "{short}", "--group-size", "2"], "not both"),
        (["-m", "bleu,chrf"], "one metric spec"),
        (["-m", "nope"], "unknown metric"),
        (["--mbr", "--diversity"], "one of them"),
        (["--diversity", "--others", "{cands}"], "--others"),
        (["--other-group-size", "2"], "give --others too"),
        (["--multi-reference", "--matrix"], "no --matrix"),
        (["--multi-reference", "--diversity"], "no --diversity"),
        (["--others", "{missing}"], "missing.txt"),
        (["--group-size", "0"], "--group-size"),
        (["-o", "{cands}"], "-o"),
    ],
)
def test_cli_bad_input_is_one_line_and_exit_2(
    cands: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], words: str
) -> None:
    short = tmp_path / "short.txt"
    short.write_text("a\nb\n")
    paths = {"short": str(short), "cands": str(cands), "missing": str(tmp_path / "missing.txt")}
    before = cands.read_text()
    code, out, err = run_cli(["pairwise", str(cands), *(a.format(**paths) for a in extra)], capsys)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1 and words in lines[0] and "Traceback" not in err, err
    assert out == "" and cands.read_text() == before


def test_cli_csv_round_trips_odd_group_labels(cands: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import csv
    import io

    groups = tmp_path / "groups.txt"
    groups.write_text('a,b\nq"x\na,b\nq"x\na,b\nq"x\n')
    code, out, _ = run_cli(
        ["pairwise", str(cands), "--groups", str(groups), "-m", "chrf", "--mbr", "-f", "csv"], capsys
    )
    rows = list(csv.reader(io.StringIO(out)))
    assert code == 0 and [r[0] for r in rows[1:]] == ["a,b", 'q"x'] and all(len(r) == len(rows[0]) for r in rows)


def test_packed_n_grams_count_as_interned_ones() -> None:
    """Batches of groups: n-grams packed into integers (the fast path) give the interned path's products."""
    from ngrameval.matrices.profiles import group_products, packed_group_products

    rng = np.random.default_rng(0)
    for _ in range(20):
        n = int(rng.integers(2, 40))
        off = np.concatenate([[0], np.cumsum(rng.integers(0, 15, n))]).astype(np.int64)
        ids = (rng.integers(0, 7, int(off[-1])) * 1000).astype(np.int32)
        sizes = np.diff(np.unique(np.concatenate([[0], rng.integers(1, n, 3), [n]]))).astype(np.int64)
        for sets in (False, True):
            for order in (1, 3, 6):
                packed = packed_group_products(Texts(ids, off), sizes, order, sets)
                assert packed is not None
                for a, b in zip(group_products(Texts(ids, off), sizes, order, sets), packed):
                    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    wide = Texts(np.arange(5000, dtype=np.int32), np.array([0, 2500, 5000]))  # 13 bits a unit: 6-grams do not fit
    assert packed_group_products(wide, np.array([2]), 6) is None


@pytest.mark.parametrize("jobs", [1, 2])
def test_undefined_scores_are_said_once_summed_over_groups(jobs: int) -> None:
    import warnings

    before = warnings.filters[:]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pairwise(["", "a b", "", "c d"], metric="pinc", groups=[0, 0, 1, 1], jobs=jobs)
    said = [str(w.message) for w in caught if "PINC" in str(w.message)]
    assert len(said) == 1 and "4 of 8" in said[0], said  # two empty candidates x two columns, in two groups
    assert warnings.filters == before  # the worker threads left the warning filters as they were
