"""Issue 15: parameters outside their range, wrong argument types and lone surrogates raise documented errors
(ConfigError / InputError / InputTypeError naming the option or argument) instead of wrong numbers or tracebacks."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ngrameval as ne
from ngrameval.corpus.paraphrase import paraphrase
from ngrameval.errors import ConfigError, InputError, InputTypeError
from ngrameval.meta.plane import MAX_ALPHAS, alpha_grid
from ngrameval.metrics import AEv
from ngrameval.metrics.pinc import PINC
from ngrameval.metrics.registry import parse_spec
from ngrameval.text.pipeline import Preprocess
from ngrameval.text.validate import MAX_ORDER

H = ["the cat sat on the mat", "a dog ran"]
R = [["the cat is on the mat"], ["a dog ran away", "the dog ran"]]


@pytest.fixture(autouse=True)
def _quiet() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ne.UndefinedMetricWarning)
        yield


# 1. parameters: every numeric option outside its range is a ConfigError naming the option and the range
BAD_SPECS = [
    ("rouge-w:w=0.5", "w (weight)"),
    ("rouge-w:w=1", "w (weight)"),
    ("rouge-w:w=0.001", "w (weight)"),
    ("rouge-w:w=inf", "w (weight)"),
    ("rouge-w:w=nan", "w (weight)"),
    ("aev:b=nan", "brevity constant B"),
    ("aev:b=inf", "brevity constant B"),
    ("aev:b=0", "brevity constant B"),
    ("aev:w=nan", "wordiness constant W"),
    ("aev:w=-1", "wordiness constant W"),
    ("aev:alpha=nan", "alpha"),
    ("aev:alpha=1.5", "alpha"),
    ("aev:weights=nan/1/1/1", "weights[0]"),
    ("aev:weights=1/inf/1/1", "weights[1]"),
    ("aev:weights=1/-1/1/1", "weights[1]"),
    ("aev:weights=1/1", "weights"),
    ("aev:weights=0/0/0/0", "weights"),
    ("aev:n=0", "n"),
    ("aev:n=101", "n"),
    ("aev:smooth=add-k,smooth_value=nan", "smooth_value"),
    ("bleu:smooth=floor,smooth_value=inf", "smooth_value"),
    ("bleu:smooth=floor,smooth_value=2", "smooth_value"),
    ("bleu:smooth=add-k,smooth_value=-1", "smooth_value"),
    ("bleu:n=0", "max_order"),
    ("bleu:n=101", "max_order"),
    ("bleu:n=100,smooth=nltk5", "max_order"),
    ("bleu:n=99999999999999999999", "max_order"),
    ("nist:n=101", "NIST n"),
    ("nist:n=0", "NIST n"),
    ("pinc:n=101", "PINC max_order"),
    ("pinc:n=0", "PINC max_order"),
    ("rouge-101", "ROUGE-N n"),
    ("rouge-0", "n >= 1"),  # Rouge.__post_init__
    ("rouge-99999999999999999999", "ROUGE-N n"),
    ("rouge-1:alpha=nan", "alpha"),
    ("rouge-1:alpha=2", "alpha"),
    ("rouge-1:l=-1", "limit"),
    ("rouge-1:b=-5", "limit"),
    # issue 29, item 6: finite but extreme values whose squares overflow or vanish
    ("chrf:beta=1e200", "chrF beta must be a finite number in [0, 1e+100]"),
    ("chrf:beta=1e308", "chrF beta"),
    ("chrf++:beta=1e200", "chrF beta"),
    ("coco-rouge-l:beta=1e200", "coco ROUGE-L beta must be a finite number in [0, 1e+100]"),
    ("cider-d:sigma=1e200", "CIDEr-D sigma must be a finite number in [1e-100, 1e+100]"),
    ("cider-d:sigma=1e-300", "CIDEr-D sigma"),
    # item 9: a value that does not parse names the spec and the option
    ("chrf:nc=1.5", "nc: expected a whole number"),
    ("chrf:eps=nan", "eps: expected yes/no"),
    ("ter:case=maybe", "case: expected yes/no"),
    ("ter:norm=2", "norm: expected yes/no"),
    ("ter:normalize=nfd", "normalize: unknown Unicode normalisation"),
    ("bleu:tok=wmt19", "tok: unknown tokenizer"),
    ("rouge-l:profile=nope", "profile: unknown tokenizer"),
    # item 10: text options a metric does not read are refused, not dropped; so is an option given twice
    ("ter:tok=intl", "'tok' has no effect: TER has its own tokenizer"),
    ("ter:lc=no", "'lc' has no effect: TER has its own tokenizer (tercom) and case option (ter:case=yes|no)"),
    ("ter:stem=yes", "'stem' has no effect"),
    ("chrf:tok=char", "'tok' has no effect: chrF reads raw characters"),
    ("chrf:stem=yes", "'stem' has no effect"),
    ("chrf:stop=smart", "'stop' has no effect"),
    ("chrf++:tok=intl", "'tok' has no effect: chrF++ reads raw characters"),
    ("chrf:nc=6,nc=2", "option 'nc' given twice ('nc=6' and 'nc=2')"),
    ("bleu:lc=yes,lc=no", "option 'lc' given twice"),
    ("rouge-l:profile=rouge-score,tok=unicode", "option 'tok' given twice ('profile=rouge-score' and 'tok=unicode')"),
    ("aev:mt-adequacy,summary-coverage", "two AEv presets"),
    ("chrf:foo=1", "valid: nc, nw, beta, space, eps, lc, normalize"),
]


@pytest.mark.parametrize(("spec", "option"), BAD_SPECS)
def test_out_of_range_spec_option_is_a_config_error_naming_it(spec: str, option: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_spec(spec, Preprocess())
    assert option in str(err.value) and spec in str(err.value)


def test_order_bound_is_the_kernels() -> None:
    assert MAX_ORDER == 100
    assert parse_spec("bleu:n=100", Preprocess()).metric.order_needed == 100  # type: ignore[union-attr]
    assert ne.rouge(["a b"], ["a b"], ["rouge-100"])["rouge-100"].f == 0.0  # no 100-gram: 0, no error
    with pytest.raises(ConfigError, match="from 1 to 100"):
        ne.bleu(H, R, n=101)


def test_rouge_w_above_one_stays_in_unit_range() -> None:
    out = ne.rouge(["a b c d e"], ["c d a b x"], ["rouge-w:w=1.01", "rouge-w:w=5"])
    for s in out.values():
        assert 0.0 <= s.recall <= 1.0 and 0.0 <= s.precision <= 1.0 and 0.0 <= s.f <= 1.0


def test_huge_skip_gap_is_unlimited_not_an_overflow() -> None:
    out = ne.rouge(["a b c d"], ["a c b d"], ["rouge-s99999999999", "rouge-s*"])
    assert out["rouge-s99999999999"].f == out["rouge-s*"].f > 0


API_BAD_NUMBERS: list[tuple[Callable[[], object], str]] = [
    (lambda: ne.aev(H, R, brevity=math.nan), "brevity"),
    (lambda: ne.aev(H, R, brevity=math.inf), "brevity"),
    (lambda: ne.aev(H, R, wordiness=math.nan), "wordiness"),
    (lambda: ne.aev(H, R, alpha=math.nan), "alpha"),
    (lambda: ne.aev(H, R, n=0), "n"),
    (lambda: ne.aev(H, R, n=2.5), "n"),  # type: ignore[arg-type]
    (lambda: ne.bleu(H, R, smooth="floor", smooth_value=math.inf), "smooth_value"),
    (lambda: ne.bleu(H, R, smooth="add-k", smooth_value=math.nan), "smooth_value"),
    (lambda: ne.nist(H, R, n=101), "NIST n"),
    (lambda: ne.rouge(H, R, ["rouge-1"], alpha=math.nan), "alpha"),
    (lambda: ne.rouge(H, R, ["rouge-1"], length_limit=-1), "limit"),
    (lambda: ne.pinc(["a b"], ["a c"], n=0), "max_order"),
    (lambda: AEv(weights=(1.0, math.nan, 1.0, 1.0)), r"weights\[1\]"),
    (lambda: PINC(max_order=101), "max_order"),
]


@pytest.mark.parametrize(("call", "option"), API_BAD_NUMBERS)
def test_out_of_range_api_number_is_a_config_error(call: Callable[[], object], option: str) -> None:
    with pytest.raises(ConfigError, match=option):
        call()


@pytest.mark.parametrize("step", [1e-6, 0.0, -0.1, math.nan, math.inf, 2.0, 0.3])
def test_plane_alpha_step_is_bounded(step: float) -> None:
    with pytest.raises(ConfigError, match="alpha_step"):
        alpha_grid(step)


def test_plane_grid_and_constants_are_checked() -> None:
    from ngrameval.meta.correlate import HumanScores
    from ngrameval.meta.plane import plane

    assert len(alpha_grid(0.001)) == MAX_ALPHAS and alpha_grid(0.5) == (0.0, 0.5, 1.0)
    h = HumanScores("q", ("a", "b", "c"), np.array([1.0, 2.0, 3.0]), None, 3, 0)
    outs = {"a": ["x"], "b": ["x y"], "c": ["x y z"]}
    too_many = [i / 2000 for i in range(2001)]
    for kwargs, what in [
        ({"brevity": math.nan}, "brevity"),
        ({"wordiness": math.nan}, "wordiness"),
        ({"alphas": (0.0, math.nan)}, r"alphas\[1\]"),
        ({"alphas": too_many}, "1001 alphas"),
        ({"orders": (1, 101)}, r"orders\[1\]"),
    ]:
        with pytest.raises(ConfigError, match=what):
            plane(outs, ["x y z w"], h, **kwargs)


# 2. a segment without references is an InputError naming it, for every ROUGE multi-reference mode
@pytest.mark.parametrize("multi", ["A", "B", "max-f", "jk"])
@pytest.mark.parametrize("refs", [[[], ["a"]], [["a"], []]])
def test_rouge_segment_without_reference_is_an_input_error(multi: str, refs: list[list[str]]) -> None:
    seg = 1 if not refs[0] else 2
    with pytest.raises(InputError, match=f"segment {seg} has no reference"):
        ne.rouge(["x y", "a"], refs, ["rouge-1"], multi=multi)


@pytest.mark.parametrize(
    "call",
    [
        lambda r: ne.bleu(["a", "b"], r),
        lambda r: ne.se(["a", "b"], r),
        lambda r: ne.score({"s": ["a", "b"]}, r, "bleu"),
        lambda r: paraphrase({"s": ["a", "b"]}, ["a", "b"], r),
    ],
)
def test_every_function_names_the_segment_without_reference(call: Callable[[Any], object]) -> None:
    with pytest.raises(InputError, match="segment 2 has no reference"):
        call([["a"], []])


# 3. wrong argument types: an InputTypeError (a TypeError) naming the argument and the position
def test_bare_string_shows_the_right_call() -> None:
    with pytest.raises(TypeError) as err:
        ne.bleu("the cat", "the cat")  # type: ignore[arg-type]
    assert isinstance(err.value, InputTypeError) and isinstance(err.value, InputError)
    assert "ngrameval.bleu(['the cat'], [['the cat']])" in str(err.value)
    with pytest.raises(TypeError, match=r"refs must be a list of segments.*ngrameval.rouge\(hyps, \[\['a b'\]\]\)"):
        ne.rouge(["a b"], "a b")


BAD_VALUES: list[tuple[object, str]] = [
    ([None], r"\[0\].*None"),
    (["a", 3], r"\[1\].*int"),
    ([b"a"], r"\[0\].*bytes"),
    ([["a"]], r"\[0\].*list"),
    (None, "None"),
    (5, "int"),
    (b"ab", "bytes"),
    ("ab", "single str"),
    ({"a", "b"}, "set"),
    (np.array([1, 2]), "dtype int"),
    (np.array([b"a"]), "dtype"),
]

TEXT_CALLS: list[tuple[str, Callable[[Any], object]]] = [
    ("hyps", lambda x: ne.bleu(x, ["a"])),
    ("hyps", lambda x: ne.nist(x, ["a"])),
    ("hyps", lambda x: ne.aev(x, ["a"])),
    ("hyps", lambda x: ne.rouge(x, ["a"])),
    ("hyps", lambda x: ne.se(x, ["a"])),
    ("candidates", lambda x: ne.pinc(x, ["a"])),
    ("sources", lambda x: ne.pinc(["a"], x)),
    ("systems['s']", lambda x: ne.score({"s": x}, ["a"], "bleu")),
    ("systems['s']", lambda x: ne.measure({"s": x}, ["a"], "se")),
    ("systems['s']", lambda x: ne.compare({"s": x, "t": ["a"]}, ["a"], "bleu", n_resamples=9)),
    ("source", lambda x: ne.score({"s": ["a"]}, ["a"], "pinc", source=x)),
    ("systems['s']", lambda x: paraphrase({"s": x}, ["a"], ["a"])),
    ("sources", lambda x: paraphrase({"s": ["a"]}, x, ["a"])),
    ("lines", lambda x: ne.tokenize_lines(x)),
    ("lines", lambda x: ne.preprocess(x, ne.Preprocess())),
]


@pytest.mark.parametrize(("name", "call"), TEXT_CALLS)
@pytest.mark.parametrize(("value", "what"), BAD_VALUES)
def test_wrong_text_type_is_a_type_error_naming_argument(
    name: str, call: Callable[[Any], object], value: object, what: str
) -> None:
    if name == "source" and value is None:
        pytest.skip("source=None means: no source")
    with pytest.raises(TypeError, match=what) as err:
        call(value)
    assert isinstance(err.value, InputTypeError)
    assert name in str(err.value)


REF_CALLS: list[Callable[[Any], object]] = [
    lambda r: ne.bleu(["a"], r),
    lambda r: ne.rouge(["a"], r),
    lambda r: ne.se(["a"], r),
    lambda r: ne.score({"s": ["a"]}, r, "bleu"),
    lambda r: paraphrase({"s": ["a"]}, ["a"], r),
]


@pytest.mark.parametrize("call", REF_CALLS)
@pytest.mark.parametrize(
    ("refs", "what"),
    [([[None]], r"\[0\]\[0\].*None"), ([[["a"]]], r"\[0\]\[0\].*list"), ([3], r"\[0\].*int"), ([[b"a"]], "bytes")],
)
def test_wrong_reference_type_is_a_type_error(call: Callable[[Any], object], refs: object, what: str) -> None:
    with pytest.raises(TypeError, match=what):
        call(refs)


def test_low_level_entry_points_check_their_texts() -> None:
    built = ne.References.build([["a"], ["b"]], ne.Preprocess())
    with pytest.raises(TypeError, match=r"texts\[1\].*None"):
        ne.overlap_stats([["a", None]], built)  # type: ignore[list-item]
    with pytest.raises(TypeError, match="refs must be a list"):
        ne.measure({"s": ["a"]}, "a", "bleu")


def test_systems_must_be_a_mapping_and_specs_checked() -> None:
    with pytest.raises(TypeError, match="systems must be a mapping"):
        ne.score(["a"], ["a"], "bleu")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="specs must be"):
        ne.score({"s": ["a"]}, ["a"], [3])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="metrics must be"):
        ne.rouge(["a"], ["a"], [3])  # type: ignore[list-item]


def test_numpy_string_arrays_are_accepted_as_lists() -> None:
    hyps, refs = np.array(H), np.array([r[0] for r in R])
    assert ne.bleu(hyps, refs).score == ne.bleu(H, [r[0] for r in R]).score
    two = np.array([["the cat is on the mat", "x"], ["a dog ran away", "the dog ran"]])
    assert ne.bleu(H, two).score == ne.bleu(H, two.tolist()).score
    assert ne.rouge(hyps, refs)["rouge-l"].f == ne.rouge(H, [r[0] for r in R])["rouge-l"].f
    obj = np.array(H, dtype=object)
    assert ne.tokenize_lines(obj) == ne.tokenize_lines(H)
    assert ne.pinc(obj, np.array(["the cat sat", "a dog"])).score == ne.pinc(H, ["the cat sat", "a dog"]).score


# 4. lone surrogates: scored as characters by every function and option, like any other character
SURROGATE_CALLS: list[tuple[str, Callable[[list[str], list[str]], float]]] = [
    ("bleu", lambda h, r: ne.bleu(h, r, n=2).score),
    ("bleu intl", lambda h, r: ne.bleu(h, r, n=2, tokenize="intl").score),
    ("bleu char", lambda h, r: ne.bleu(h, r, n=2, tokenize="char").score),
    ("bleu lc", lambda h, r: ne.bleu(h, r, n=2, lowercase=True).score),
    ("nist", lambda h, r: ne.nist(h, r, n=2).score),
    ("aev", lambda h, r: ne.aev(h, r, n=2).score),
    ("aev stem stop", lambda h, r: ne.aev(h, r, n=2, stem=True, stopwords="smart").score),
    ("se", lambda h, r: ne.se(h, r).score),
    ("pinc", lambda h, r: ne.pinc(h, r, n=2).score),
    ("rouge-1", lambda h, r: ne.rouge(h, r, ["rouge-1"])["rouge-1"].f),
    ("rouge unicode stem", lambda h, r: ne.rouge(h, r, ["rouge-l"], profile="unicode", stem=True)["rouge-l"].f),
    ("rouge-score stem", lambda h, r: ne.rouge(h, r, ["rouge-2"], profile="rouge-score", stem=True)["rouge-2"].f),
    ("rouge su4", lambda h, r: ne.rouge(h, r, ["rouge-su4", "rouge-w"], profile="unicode")["rouge-su4"].f),
]


@pytest.mark.parametrize(("label", "call"), SURROGATE_CALLS)
def test_lone_surrogate_scores_like_any_other_character(
    label: str, call: Callable[[list[str], list[str]], float]
) -> None:
    # '\ud800' and the private-use '\ue000' are both one non-word character: the scores must be equal
    def texts(c: str) -> tuple[list[str], list[str]]:
        return [f"the x{c}ing sat {c} on mats", "a b"], [f"the x{c}ing sat {c} on the mat", "a c"]

    assert call(*texts("\ud800")) == call(*texts("\uf8ff"))


@pytest.mark.parametrize("limit", [{"length_limit": 3}, {"byte_limit": 9}])
def test_lone_surrogate_with_rouge_limits(limit: dict[str, int]) -> None:
    def f(c: str) -> float:
        return ne.rouge([f"a {c} b c d"], [f"a {c} b d"], ["rouge-1", "rouge-l"], profile="unicode", **limit)[
            "rouge-l"
        ].f

    assert f("\ud800") == f("\uf8ff")


def test_stemming_keeps_lone_surrogates() -> None:
    cfg = ne.Preprocess(stem=True)
    assert ne.preprocess(["ax\ud800ing \ud800 \udc00\ud800ies"], cfg) == [["ax\ud800", "\ud800", "\udc00\ud800i"]]
    assert ne.preprocess(["ax\uf8ffing"], cfg) == [["ax\uf8ff"]]


# 5. a string of specs for rouge()'s metrics, as the CLI's -m
def test_rouge_metrics_as_a_string() -> None:
    one = ne.rouge(H, R, "rouge-1")
    assert list(one) == ["rouge-1"] and one["rouge-1"].f == ne.rouge(H, R, ["rouge-1"])["rouge-1"].f
    two = ne.rouge(H, R, "rouge-1, rouge-w:w=1.5")
    assert list(two) == ["rouge-1", "rouge-w:w=1.5"]
    with pytest.raises(ConfigError, match="unknown metric 'bleux'"):
        ne.rouge(H, R, "bleux")


def test_parse_specs_needs_no_preprocess() -> None:
    assert ne.parse_specs("bleu,rouge-l") == ne.parse_specs("bleu,rouge-l", ne.Preprocess())
    assert ne.parse_specs("bleu")[0].pre == ne.Preprocess(tokenize="13a", lowercase=False)


def test_old_keyword_names_warn_and_still_work() -> None:
    """ne.bleu/ne.pinc take the -m specs' names (n, smooth, eff); the old ones work for one release."""
    with pytest.warns(FutureWarning, match=r"bleu\(max_order=\.\.\.\) is deprecated; use n="):
        old = ne.bleu(H, R, max_order=2, smooth_method="floor", effective_order=True)
    assert old.to_dict() == ne.bleu(H, R, n=2, smooth="floor", eff=True).to_dict()
    with pytest.warns(FutureWarning, match="use n="):
        assert ne.pinc(H, H, max_order=2).score == ne.pinc(H, H, n=2).score
    with pytest.raises(TypeError, match="unexpected keyword argument 'smoth'"):
        ne.bleu(H, R, smoth="exp")
    assert ne.bleu(H, R, stem=True, stopwords="smart").signature != ne.bleu(H, R).signature
    assert "stem:porter" in ne.nist(H, R, stem=True).signature


def test_generators_are_read_once_and_stream_major_refs_are_explained() -> None:
    hyps = ["a b c d", "e f", "g"]
    assert ne.bleu((h for h in hyps), iter(hyps)).score == ne.bleu(hyps, hyps).score == 1.0
    assert ne.score({"s": (h for h in hyps)}, hyps, "bleu")[0].score == 1.0
    for streams in ([hyps], [hyps, hyps]):
        with pytest.raises(InputError, match=r"stream-major .*pass list\(zip\(\*refs\)\)"):
            ne.bleu(hyps, streams)
        assert ne.bleu(hyps, list(zip(*streams))).score == 1.0


USED_UP: list[tuple[str, Callable[[Any], object], str]] = [
    ("bleu", lambda g: ne.bleu(g, ["a b"]), r"^hyps has 0 segments? but the references have 1; hyps is a generator"),
    ("rouge", lambda g: ne.rouge(g, ["a b"]), r"^hyps has 0 segments? but the references have 1; hyps is a generator"),
    ("se", lambda g: ne.se(g, [["a b"]]), r"^hyps has 0 segments? but the references have 1; hyps is a generator"),
    ("refs", lambda g: ne.bleu(["a b"], g), r"^hyps has 1 segments? but the references have 0; refs is a generator"),
    ("score", lambda g: ne.score({"system": g}, ["a b"], "bleu"), r"^system 'system' has 0 segments .*generator"),
    ("measure", lambda g: ne.measure({"s1": g}, ["a b"], "bleu"), r"systems\['s1'\] is a generator or iterator"),
]


@pytest.mark.parametrize(("label", "call", "pattern"), USED_UP, ids=[u[0] for u in USED_UP])
def test_a_used_up_generator_is_named(label: str, call: Callable[[Any], object], pattern: str) -> None:
    """Issue 29, item 13: a generator used up by an earlier call is named as such (the message was "system system
    has 0 segments"); a list is what to pass."""
    gen = (x for x in ["a b"])
    call(gen)
    with pytest.raises(InputError, match=pattern) as err:
        call(gen)
    assert "used up by an earlier call? Pass a list" in str(err.value)


@pytest.mark.parametrize("pre", [Preprocess(), Preprocess(stem=True, stopwords="smart"), Preprocess("rouge155")])
def test_references_shared_by_threads(pre: Preprocess) -> None:
    """Issue 29, item 12: one ``References`` used by several threads at once gives every thread the statistics it
    gets alone (it raised ``RuntimeError: this vocabulary is in use by another thread`` from the tokenizer, depending
    on timing). Four threads start together and each counts its own system three times."""
    import threading

    from ngrameval.ngrams.count import overlap_stats

    rng = np.random.default_rng(0)
    words = np.array([f"w{i}" for i in range(20_000)] + ["the", "running", "runs"])
    refs = [[" ".join(rng.choice(words, 30))] for _ in range(5_000)]
    built = ne.References.build(refs, pre)
    systems = [[" ".join(rng.choice(words, 30)) for _ in range(5_000)] for _ in range(4)]
    alone = [overlap_stats([s], built)[0].values for s in systems]
    start = threading.Barrier(len(systems))
    failures: list[BaseException] = []
    mismatches: list[int] = []

    def work(k: int) -> None:
        start.wait()
        try:
            for _ in range(3):
                if not np.array_equal(overlap_stats([systems[k]], built)[0].values, alone[k]):
                    mismatches.append(k)
        except BaseException as exc:  # reported below
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(systems))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures and not mismatches, (failures, mismatches)


# 4. the references are checked and made segment-major in one pass over them (issue 32 item 5: the 88k-segment lists
# of a corpus were walked once per check)
@pytest.mark.parametrize(
    "make",
    [
        lambda: ["a b", "c"],
        lambda: ("a b", "c"),
        lambda: [["a b"], ["c", "d"]],
        lambda: [["a b"], "c"],
        lambda: [("a b",), ["c"]],
        lambda: np.array(["a b", "c"]),
        lambda: iter([["a b"], ["c"]]),
    ],
)
def test_segments_are_the_checked_references_segment_major(make: Callable[[], Any]) -> None:
    from ngrameval.api import segment_major
    from ngrameval.text.validate import references, segments

    got = segments(make())
    assert got == segment_major(references(make()))
    assert all(type(r) is list for r in got)


@pytest.mark.parametrize(
    "call",
    [lambda h, r: ne.bleu(h, r), lambda h, r: ne.score({"s": h}, r, "bleu"), lambda h, r: ne.nist(h, r)],
)
def test_the_references_are_walked_once_by_the_checks(call: Callable[[Any, Any], object], monkeypatch: Any) -> None:
    from ngrameval import _direct

    seen: list[int] = []
    layout = _direct.layout
    refs = [["the cat is on the mat"], ["a dog ran away", "the dog ran"]]

    def counted(seq: Any) -> int:
        seen.extend([1] if list(seq) == refs else [])  # the references, or a copy of them
        return layout(seq)

    monkeypatch.setattr(_direct, "layout", counted)
    call(H, refs)
    assert len(seen) == 1


def test_segments_name_a_bad_reference_as_references_does() -> None:
    from ngrameval.text.validate import references, segments

    for bad in ([["a"], [3]], [["a"], None], [["a"], []]):
        with pytest.raises(InputError) as want:
            references(bad)
        with pytest.raises(type(want.value)) as got:
            segments(bad)
        assert str(got.value) == str(want.value)
