"""Metric specs as users write them: ``bleu``, ``nist:n=4``, ``nist:profile=plain,ref_len=average``,
``aev:alpha=0.3,n=2``, ``aev:mt-adequacy``,
``pinc:n=3,sets=no`` (needs the source sentences), ``se``, ``rouge-2``, ``rouge-l``, ``rouge-w:w=1.5``,
``rouge-s4``, ``rouge-su*:stat=r,multi=B``.

Captioning (coco-caption, ``pycocoevalcap`` 1.2): ``cider-d`` (options ``n``, ``sigma``), ``cider`` (the original,
option ``n``), ``coco-bleu`` (BLEU-N, ``coco-bleu:n=1`` .. ``n=4``) and ``coco-rouge-l`` (option ``beta``); they read
text as coco-caption's PTB tokenizer leaves it (``tok=ptb-coco``) unless the spec sets ``tok`` (``tok=none``:
text already tokenized, split on whitespace).

A spec may also set text options for that metric alone (``tok=intl``, ``lc=yes``, ``stem=yes``,
``stop=smart``); metrics with the same text settings share one counting pass.
"""

from __future__ import annotations

import functools
import importlib
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ngrameval.errors import ConfigError
from ngrameval.metrics.choices import AEV_PRESETS, NIST_PROFILES, NIST_REF_LENS, PINC_AVERAGES, ROUGE_MULTI
from ngrameval.metrics.choices import ROUGE_STATS as ROUGE_STAT
from ngrameval.metrics.rows import RowMetric
from ngrameval.text.normalize import check_norm
from ngrameval.text.pipeline import Preprocess
from ngrameval.text.sentences import SPLITTERS
from ngrameval.text.tokenize import LOWERCASING, TOKENIZERS
from ngrameval.text.validate import MAX_ORDER as KERNEL_MAX_ORDER

if TYPE_CHECKING:
    from ngrameval.metrics.rouge import Rouge

MAX_ORDER = KERNEL_MAX_ORDER  # the highest n-gram order the C counting kernels take (_overlap.MAX_ORDER)


# What every metric configuration offers orchestration: its own rows (:meth:`RowMetric.rows`) and the flags of
# :mod:`ngrameval.metrics.rows`; which class a metric is matters only to its own module and to parsing here.
Metric = RowMetric
SentenceMetric = RowMetric  # (the name of its type before metrics brought their own rows)


@dataclass(frozen=True)
class MetricSpec:
    """A metric with the text settings it is counted under; ``fraction`` metrics print x100."""

    metric: Metric
    pre: Preprocess
    fraction: bool = True


def _bool(v: str) -> bool:
    if v.lower() in ("yes", "true", "1", "on"):
        return True
    if v.lower() in ("no", "false", "0", "off"):
        return False
    raise ConfigError(f"expected yes/no, got {v!r}")


def _float(v: str) -> float:
    if v.lower() in ("inf", "infinity", "none"):
        return math.inf
    try:
        return float(v)
    except ValueError:
        raise ConfigError(f"expected a number, got {v!r}") from None


def _int(v: str) -> int:
    try:
        return int(v)
    except ValueError:
        raise ConfigError(f"expected a whole number, got {v!r}") from None


def _tokenizer(v: str) -> str:
    if v not in TOKENIZERS:
        raise ConfigError(f"unknown tokenizer {v!r}; valid: {', '.join(TOKENIZERS)}")
    return v


def _norm(v: str) -> str | None:
    form = None if v.lower() in ("no", "none") else v.lower()
    check_norm(form)
    return form


_TEXT_KEYS: dict[str, tuple[str, Callable[[str], Any]]] = {
    "tok": ("tokenize", _tokenizer),
    "lc": ("lowercase", _bool),
    "stem": ("stem", _bool),
    "stop": ("stopwords", lambda v: None if v.lower() in ("no", "none") else v),
    "normalize": ("normalize", _norm),
}

_KEYS: dict[str, dict[str, tuple[str, Callable[[str], Any]]]] = {
    "bleu": {
        "n": ("max_order", _int),
        "smooth": ("smooth_method", str),
        "smooth_value": ("smooth_value", _float),
        "eff": ("effective_order", _bool),
    },
    "nist": {
        "n": ("n", _int),
        "profile": ("profile", lambda v: v.lower() if v.lower() in NIST_PROFILES else _bad(v, NIST_PROFILES)),
        "ref_len": ("ref_len", lambda v: v.lower() if v.lower() in NIST_REF_LENS else _bad(v, NIST_REF_LENS)),
    },
    "pinc": {
        "n": ("max_order", _int),
        "sets": ("sets", _bool),
        "avg": ("average", lambda v: v if v in PINC_AVERAGES else _bad(v, PINC_AVERAGES)),
    },
    "se": {},
    "chrf": {
        "nc": ("char_order", _int),
        "nw": ("word_order", _int),
        "beta": ("beta", _float),
        "space": ("whitespace", _bool),
        "eps": ("eps_smoothing", _bool),
    },
    "rouge": {
        "stat": ("stat", lambda v: v.lower() if v.lower() in ROUGE_STAT else _bad(v, ROUGE_STAT)),
        "alpha": ("alpha", _float),
        "multi": ("multi", lambda v: v if v in ROUGE_MULTI else _bad(v, ROUGE_MULTI)),
        "l": ("length_limit", _int),
        "b": ("byte_limit", _int),
        "w": ("weight", _float),
        "split": ("split", _bool),
        "round": ("round5", lambda v: v == "5" or _bool(v)),
        "sentences": ("sentences", lambda v: v.lower() if v.lower() in SPLITTERS else _bad(v, SPLITTERS)),
    },
    "aev": {
        "alpha": ("alpha", _float),
        "n": ("n", _int),
        "b": ("brevity", _float),
        "w": ("wordiness", _float),
        "smooth": ("smooth_method", str),
        "smooth_value": ("smooth_value", _float),
        "weights": ("weights", lambda v: tuple(_float(x) for x in v.split("/"))),
    },
}
_KEYS["chrf++"] = _KEYS["chrf"]
_KEYS["ter"] = {
    "norm": ("normalized", _bool),
    "punct": ("no_punct", lambda v: not _bool(v)),
    "asian": ("asian_support", _bool),
    "case": ("case_sensitive", _bool),
}
_KEYS["cider-d"] = {"n": ("n", _int), "sigma": ("sigma", _float)}
_KEYS["cider"] = {"n": ("n", _int)}
_KEYS["coco-bleu"] = {"n": ("max_order", _int)}
_KEYS["coco-rouge-l"] = {"beta": ("beta", _float)}
COCO_NAMES = ("cider-d", "cider", "coco-bleu", "coco-rouge-l")  # tokenized as coco-caption by default


@dataclass(frozen=True)
class _Factory:
    """What makes a spec's metric: ``name`` of the module ``ngrameval.metrics.<module>``, imported when a spec first
    names the metric (``score -m bleu`` loads no other metric module: TER's edit distances, CIDEr, coco-caption's)."""

    module: str
    name: str

    def __call__(self, **kwargs: Any) -> Metric:
        made: Metric = getattr(importlib.import_module(f"ngrameval.metrics.{self.module}"), self.name)(**kwargs)
        return made


_FACTORIES: dict[str, Callable[..., Metric]] = {
    "bleu": _Factory("bleu", "BLEU"),
    "nist": _Factory("nist", "NIST"),
    "aev": _Factory("aev", "AEv"),
    "pinc": _Factory("pinc", "PINC"),
    "se": _Factory("se", "SE"),
    "chrf": _Factory("chrf", "ChrF"),
    "chrf++": _Factory("chrf", "chrf_plus"),
    "ter": _Factory("ter", "TER"),
    "rouge": _Factory("rouge", "Rouge"),
    "cider-d": _Factory("cider", "Cider"),
    "cider": _Factory("cider", "cider"),
    "coco-bleu": _Factory("coco", "CocoBleu"),
    "coco-rouge-l": _Factory("coco", "CocoRougeL"),
}
# rouge-1 .. rouge-9.., rouge-l, rouge-lsum, rouge-w, rouge-s4 / rouge-s* / rouge-s, rouge-su4 / rouge-su* / rouge-su
_ROUGE_NAME = re.compile(r"rouge-(?:(?P<n>\d+)|(?P<l>l|lsum)|(?P<w>w)|(?P<s>su|s)(?P<gap>\d+|\*)?)")
ROUGE_PROFILES = ("rouge155", "rouge-score", "unicode")
ROUGE_STATS = ("f", "rpf")  # what each ROUGE spec reports by default (rouge defaults' "stats"; --rouge-stats)


def _rouge_name(name: str) -> dict[str, Any] | None:
    """The :class:`Rouge` fields a ROUGE spec name fixes, or None when ``name`` is not one."""
    m = _ROUGE_NAME.fullmatch(name)
    if m is None:
        return None
    if m["n"]:
        return {"variant": "n", "n": int(m["n"])}
    if m["l"]:
        return {"variant": "l", **({"split": True, "lsum": True} if m["l"] == "lsum" else {})}
    if m["w"]:
        return {"variant": "w"}
    return {"variant": m["s"], "gap": None if m["gap"] in (None, "*") else int(m["gap"])}


def _rouge_defaults(tokenize: str) -> dict[str, Any]:
    """What a ROUGE profile implies: ROUGE-1.5.5 rounds to 5 decimals; rouge-score keeps the reference with
    the best F and scores ROUGE-L over the whole text (its rougeL; rouge-lsum splits sentences)."""
    if tokenize == "rouge-score":
        return {"multi": "max-f", "split": False}
    return {"round5": tokenize == "rouge155"}


def check_metric(metric: Metric) -> None:
    """ConfigError naming the option and its range for any numeric option outside it (:meth:`RowMetric.check`;
    BLEU, NIST and ROUGE check theirs here, AEv and PINC when built). Orders run 1 .. the counting kernel's
    MAX_ORDER (100)."""
    metric.check()


_YES_NO = "yes|no"
_ORDER = f"1..{MAX_ORDER}"


@functools.cache
def valid_values() -> dict[tuple[str, str], str]:
    """The valid values of every spec option, as ``ngrameval metrics`` lists them (the checks are in the metrics and
    check_metric; this is their documentation, pinned by tests/test_cli.py); it imports BLEU's module (its smoothing
    methods), so only the commands listing them build it."""
    from ngrameval.metrics.bleu import SMOOTH_METHODS
    from ngrameval.metrics.policy import SACREBLEU_SMOOTH

    return _valid(SMOOTH_METHODS, tuple(SACREBLEU_SMOOTH))


def _valid(bleu_smooth: Sequence[str], aev_smooth: Sequence[str]) -> dict[tuple[str, str], str]:
    return {
        ("bleu", "n"): f"{_ORDER} (nltk5/nltk7: 1..{MAX_ORDER - 1}; nltk6: 3..)",
        ("bleu", "smooth"): "|".join(bleu_smooth),
        ("bleu", "smooth_value"): "floor: 0..1; add-k: >= 0 (default: sacreBLEU's)",
        ("bleu", "eff"): _YES_NO,
        ("nist", "n"): _ORDER,
        ("nist", "profile"): "|".join(NIST_PROFILES),
        ("nist", "ref_len"): "|".join(NIST_REF_LENS),
        ("aev", "alpha"): "0..1 (0 recall, 1 precision)",
        ("aev", "n"): _ORDER,
        ("aev", "b"): "> 0",
        ("aev", "w"): "> 0 or inf",
        ("aev", "smooth"): "|".join(aev_smooth),
        ("aev", "smooth_value"): "floor: 0..1; add-k: >= 0",
        ("aev", "weights"): "n numbers >= 0, not all 0: a/b/c/d",
        ("pinc", "n"): _ORDER,
        ("pinc", "sets"): _YES_NO,
        ("pinc", "avg"): "|".join(PINC_AVERAGES),
        ("chrf", "nc"): ">= 0",
        ("chrf", "nw"): ">= 0 (chrf++: 2)",
        ("chrf", "beta"): "0..1e100",
        ("chrf", "space"): _YES_NO,
        ("chrf", "eps"): _YES_NO,
        ("ter", "norm"): _YES_NO,
        ("ter", "punct"): _YES_NO,
        ("ter", "asian"): _YES_NO,
        ("ter", "case"): _YES_NO,
        ("rouge", "stat"): "|".join(ROUGE_STAT),
        ("rouge", "alpha"): "0..1 (1 precision, 0 recall: ROUGE-1.5.5 -p)",
        ("rouge", "multi"): "|".join(ROUGE_MULTI),
        ("rouge", "l"): ">= 0 words (0: no limit)",
        ("rouge", "b"): ">= 0 bytes (0: no limit)",
        ("rouge", "w"): "> 1 (rouge-w)",
        ("rouge", "split"): _YES_NO,
        ("rouge", "round"): "5|no",
        ("rouge", "sentences"): "lines|pysbd (pysbd: split lines into sentences; pip install 'ngrameval[sentences]')",
        ("cider-d", "n"): _ORDER,
        ("cider-d", "sigma"): "1e-100..1e100",
        ("cider", "n"): _ORDER,
        ("coco-bleu", "n"): "1..4",
        ("coco-rouge-l", "beta"): "0..1e100",
    }


_INVERTED = {("ter", "punct")}  # the option says the opposite of its field (punct=yes: no_punct=False)
# the text options of a spec (default: the command line's -tok, -lc, --stem, --stopwords, --normalize)
TEXT_OPTIONS = {"tok": "a tokenizer of -tok", "lc": _YES_NO, "stem": _YES_NO, "stop": "smart|FILE|no",
                "normalize": "nfc|nfkc|no"}  # fmt: skip
# metrics that read text their own way take only some of them: (those they take, why not the others)
OWN_TEXT: dict[str, tuple[tuple[str, ...], str]] = {
    "chrf": (("lc", "normalize"), "chrF reads raw characters (no tokenizer, stemmer or stop words)"),
    "chrf++": (("lc", "normalize"), "chrF++ reads raw characters and whitespace-split words (no tokenizer, stemmer "
               "or stop words)"),
    "ter": (("normalize",), "TER has its own tokenizer (tercom) and case option (ter:case=yes|no)"),
}  # fmt: skip


def text_keys(name: str) -> tuple[str, ...]:
    """The text options a spec of metric ``name`` takes (``chrf``: ``lc``, ``normalize``; most: all of them)."""
    return OWN_TEXT[name][0] if name in OWN_TEXT else tuple(_TEXT_KEYS)


def describe() -> list[tuple[str, str, str, str]]:
    """Every spec option of every metric: (metric, option, default, valid values), for ``ngrameval metrics``."""
    out = []
    for name, factory in _FACTORIES.items():
        metric = factory()
        for key, (field, _) in _KEYS.get(name, {}).items():
            value = getattr(metric, field)
            if (name, key) in _INVERTED:
                value = not value
            shown = _YES_NO.split("|")[not value] if isinstance(value, bool) else "-" if value is None else str(value)
            out.append((name, key, shown, valid_values()[("chrf" if name == "chrf++" else name, key)]))
    return out


def metric_types() -> dict[str, type[Metric]]:
    """Every metric class that specs build, by its class name: what rebuilds a metric from its fields (a stats file
    records a metric as its class name and fields, :mod:`ngrameval.scale.stored`)."""
    return {type(factory()).__name__: type(factory()) for factory in _FACTORIES.values()}


def ignored_options(spec: MetricSpec, pre: Preprocess) -> list[tuple[str, str]]:
    """The command line's text options (``pre``: tokenizer, lower-casing, stop words, stemming as given) that
    have no effect on ``spec``'s metric, each with the reason: (option, reason)."""
    return spec.metric.ignored_options(spec.pre, pre)


def _bad(value: str, valid: Sequence[str]) -> str:
    raise ConfigError(f"expected one of {', '.join(valid)}, got {value!r}")


ROUGE_FAMILY = ("rouge-1", "rouge-2", "rouge-l")  # what a bare ``rouge`` spec stands for


def split_specs(text: str) -> list[str]:
    """``bleu,aev:alpha=0.3,n=2`` -> ``['bleu', 'aev:alpha=0.3,n=2']`` (a ``k=v`` joins the spec before); a
    bare ``rouge`` (with its options) stands for ROUGE-1, ROUGE-2 and ROUGE-L (:data:`ROUGE_FAMILY`)."""
    specs: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if "=" in part and ":" not in part and specs:
            specs[-1] += "," + part
        else:
            specs.append(part)
    out = []
    for spec in specs:
        name, colon, rest = spec.partition(":")
        out += [f"{r}{colon}{rest}" for r in ROUGE_FAMILY] if name.strip().lower() == "rouge" else [spec]
    return out


def valid_names() -> str:
    presets = ", ".join(f"aev:{p}" for p in AEV_PRESETS)
    return (
        f"bleu, nist, aev (presets: {presets}), pinc (needs the source), se, chrf, chrf++, ter, "
        "rouge (= rouge-1,rouge-2,rouge-l), rouge-N, rouge-l, rouge-lsum, rouge-w, rouge-sK, rouge-s*, rouge-suK, "
        "rouge-su*, "
        "cider-d, cider, coco-bleu (n=1..4), coco-rouge-l"
    )


def parse_spec(spec: str, pre: Preprocess | None = None, rouge: Mapping[str, Any] | None = None) -> MetricSpec:
    """One metric spec against the default text settings ``pre`` (default: 13a, cased); ``rouge`` holds defaults
    for ROUGE specs (``profile`` and any :class:`Rouge` field), below what the spec itself says."""
    pre = Preprocess() if pre is None else pre
    name, _, rest = spec.partition(":")
    name = name.strip().lower()
    fixed = _rouge_name(name)
    if fixed is not None:
        name = "rouge"
    elif name not in _FACTORIES or name == "rouge":
        raise ConfigError(f"unknown metric {name!r}; valid: {valid_names()}")
    kwargs: dict[str, Any] = {}
    text: dict[str, Any] = {}
    base: Metric | None = None
    seen: dict[str, str] = {}  # option -> how the spec wrote it
    for item in filter(None, (x.strip() for x in rest.split(","))):
        key, eq, value = item.partition("=")
        key = key.strip().lower()
        if not eq:
            if name == "aev" and key in AEV_PRESETS:
                if base is not None:
                    raise ConfigError(f"{spec!r}: two AEv presets; give one")
                from ngrameval.metrics.aev import PAPER_TEXT, PRESETS

                base = PRESETS[key][0]
                text.update(PAPER_TEXT)
                continue
            raise ConfigError(f"{spec!r}: expected key=value or an AEv preset ({', '.join(AEV_PRESETS)}), got {item!r}")
        given = key
        if key == "profile" and name == "rouge":
            key = "tok"
        if key in seen:
            raise ConfigError(f"{spec!r}: option {key!r} given twice ({seen[key]!r} and {item!r}); give it once")
        seen[key] = item
        if key in _KEYS[name]:
            field, conv = _KEYS[name][key]
            kwargs[field] = _converted(spec, given, conv, value.strip())
        elif key in text_keys(name):
            field, conv = _TEXT_KEYS[key]
            text[field] = _converted(spec, given, conv, value.strip())
        elif key in _TEXT_KEYS:
            raise ConfigError(f"{spec!r}: option {key!r} has no effect: {OWN_TEXT[name][1]}")
        else:
            valid = ", ".join([*_KEYS[name], *text_keys(name)])
            raise ConfigError(f"{spec!r}: unknown option {key!r} for {name}; valid: {valid}")
    if name in COCO_NAMES:
        text.setdefault("tokenize", "ptb-coco")
    if fixed is not None:
        defaults = dict(rouge or {})
        text.setdefault("tokenize", defaults.pop("profile", "rouge155"))
        if text["tokenize"] in LOWERCASING:
            text["lowercase"] = False  # the ROUGE profiles lower-case by themselves
        kwargs = {**_rouge_defaults(text["tokenize"]), **defaults, **kwargs, **fixed}
    try:
        metric = replace(base, **kwargs) if base is not None else _FACTORIES[name](**kwargs)  # type: ignore[type-var]
        check_metric(metric)
        spec_pre = replace(pre, **text)
    except ConfigError as exc:
        raise ConfigError(f"{spec!r}: {exc}") from None
    return MetricSpec(metric, spec_pre, fraction=name != "nist")


def rouge_metric(spec: str, parsed: MetricSpec) -> Rouge:
    """The ROUGE variant of ``parsed`` (``spec``: as written), or a ConfigError saying it is not one."""
    from ngrameval.metrics.rouge import Rouge

    if not isinstance(parsed.metric, Rouge):
        raise ConfigError(f"{spec!r} is not a ROUGE spec")
    return parsed.metric


def _rouge_of(spec: MetricSpec) -> Rouge | None:
    """``spec``'s metric if it is a ROUGE variant, else None (imports ROUGE's module: only ``--rouge-stats rpf``
    asks)."""
    from ngrameval.metrics.rouge import Rouge

    return spec.metric if isinstance(spec.metric, Rouge) else None


def _converted(spec: str, key: str, conv: Callable[[str], Any], value: str) -> Any:
    """``conv(value)``, its ConfigError naming the spec and the option (``'chrf:nc=1.5': nc: expected ...``)."""
    try:
        return conv(value)
    except ConfigError as exc:
        raise ConfigError(f"{spec!r}: {key}: {exc}") from None


def _sets(spec: str, key: str) -> bool:
    """Whether the spec string gives the option ``key`` itself (``rouge-l:stat=r``)."""
    return any(item.partition("=")[0].strip().lower() == key for item in spec.partition(":")[2].split(","))


def parse_specs(text: str, pre: Preprocess | None = None, rouge: Mapping[str, Any] | None = None) -> list[MetricSpec]:
    """All specs of a ``-m`` argument (``pre``: default text settings, 13a and cased when None; ``rouge``: defaults
    of ROUGE specs, see :func:`parse_spec`, and ``"stats": "rpf"`` to get recall, precision and F of every ROUGE spec
    that does not set ``stat`` itself, in that order: ``ROUGE-L-R``, ``ROUGE-L-P``, ``ROUGE-L``)."""
    defaults = dict(rouge or {})
    stats = defaults.pop("stats", "f")
    if stats not in ROUGE_STATS:
        raise ConfigError(f"ROUGE stats must be one of {', '.join(ROUGE_STATS)}, got {stats!r}")
    specs = []
    for s in split_specs(text):
        spec = parse_spec(s, pre, defaults)
        split = _rouge_of(spec) if stats == "rpf" and not _sets(s, "stat") else None
        if split is not None:  # R, P, F as ROUGE prints
            specs += [replace(spec, metric=replace(split, stat=x)) for x in ("r", "p", "f")]
        else:
            specs.append(spec)
    if not specs:
        raise ConfigError(f"no metric given; valid: {valid_names()}")
    return specs
