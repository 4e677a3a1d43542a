"""Metric specs as users write them: ``bleu``, ``nist:n=4``, ``aev:alpha=0.3,n=2``, ``aev:mt-adequacy``,
``pinc:n=3,sets=no`` (needs the source sentences), ``se``.

A spec may also set text options for that metric alone (``tok=intl``, ``lc=yes``, ``stem=yes``,
``stop=smart``); metrics with the same text settings share one counting pass.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from ngrameval.errors import ConfigError
from ngrameval.metrics.aev import PAPER_TEXT, PRESETS, AEv
from ngrameval.metrics.bleu import BLEU
from ngrameval.metrics.nist import NIST
from ngrameval.metrics.pinc import AVERAGES, PINC
from ngrameval.metrics.policy import FloatArray
from ngrameval.metrics.se import SE
from ngrameval.ngrams.stats import Stats
from ngrameval.text.pipeline import Preprocess


class Metric(Protocol):
    """What every metric configuration offers."""

    @property
    def order_needed(self) -> int: ...

    @property
    def needs_info(self) -> bool: ...

    def __call__(self, stats: Stats) -> FloatArray: ...

    def display_name(self) -> str: ...

    def signature(self) -> str: ...


SentenceMetric = PINC | SE  # means of sentence scores that are not computed from Stats


@dataclass(frozen=True)
class MetricSpec:
    """A metric with the text settings it is counted under; ``fraction`` metrics print x100."""

    metric: Metric | SentenceMetric
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


_TEXT_KEYS: dict[str, tuple[str, Callable[[str], Any]]] = {
    "tok": ("tokenize", str),
    "lc": ("lowercase", _bool),
    "stem": ("stem", _bool),
    "stop": ("stopwords", lambda v: None if v.lower() in ("no", "none") else v),
}

_KEYS: dict[str, dict[str, tuple[str, Callable[[str], Any]]]] = {
    "bleu": {
        "n": ("max_order", _int),
        "smooth": ("smooth_method", str),
        "smooth_value": ("smooth_value", _float),
        "eff": ("effective_order", _bool),
    },
    "nist": {"n": ("n", _int)},
    "pinc": {
        "n": ("max_order", _int),
        "sets": ("sets", _bool),
        "avg": ("average", lambda v: v if v in AVERAGES else _bad(v, AVERAGES)),
    },
    "se": {},
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
_FACTORIES: dict[str, Callable[..., Metric | SentenceMetric]] = {
    "bleu": BLEU,
    "nist": NIST,
    "aev": AEv,
    "pinc": PINC,
    "se": SE,
}


def _bad(value: str, valid: Sequence[str]) -> str:
    raise ConfigError(f"expected one of {', '.join(valid)}, got {value!r}")


def split_specs(text: str) -> list[str]:
    """``bleu,aev:alpha=0.3,n=2`` -> ``['bleu', 'aev:alpha=0.3,n=2']`` (a ``k=v`` joins the spec before)."""
    specs: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if "=" in part and ":" not in part and specs:
            specs[-1] += "," + part
        else:
            specs.append(part)
    return specs


def valid_names() -> str:
    presets = ", ".join(f"aev:{p}" for p in PRESETS)
    return f"bleu, nist, aev (presets: {presets}), pinc (needs the source), se"


def parse_spec(spec: str, pre: Preprocess) -> MetricSpec:
    """One metric spec against the default text settings ``pre``."""
    name, _, rest = spec.partition(":")
    name = name.strip().lower()
    if name not in _FACTORIES:
        raise ConfigError(f"unknown metric {name!r}; valid: {valid_names()}")
    kwargs: dict[str, Any] = {}
    text: dict[str, Any] = {}
    base: Metric | None = None
    for item in filter(None, (x.strip() for x in rest.split(","))):
        key, eq, value = item.partition("=")
        key = key.strip().lower()
        if not eq:
            if name == "aev" and key in PRESETS:
                base = PRESETS[key][0]
                text.update(PAPER_TEXT)
                continue
            raise ConfigError(f"{spec!r}: expected key=value or an AEv preset ({', '.join(PRESETS)}), got {item!r}")
        if key in _TEXT_KEYS:
            field, conv = _TEXT_KEYS[key]
            text[field] = conv(value.strip())
        elif key in _KEYS[name]:
            field, conv = _KEYS[name][key]
            kwargs[field] = conv(value.strip())
        else:
            valid = ", ".join([*_KEYS[name], *_TEXT_KEYS])
            raise ConfigError(f"{spec!r}: unknown option {key!r} for {name}; valid: {valid}")
    metric = replace(base, **kwargs) if base is not None else _FACTORIES[name](**kwargs)  # type: ignore[type-var]
    return MetricSpec(metric, replace(pre, **text), fraction=name != "nist")


def parse_specs(text: str, pre: Preprocess) -> list[MetricSpec]:
    """All specs of a ``-m`` argument."""
    specs = [parse_spec(s, pre) for s in split_specs(text)]
    if not specs:
        raise ConfigError(f"no metric given; valid: {valid_names()}")
    return specs
