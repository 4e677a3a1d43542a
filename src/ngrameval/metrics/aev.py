"""The unified family AEv(alpha, N) of Soricut & Brill (2004), SPEC §2.

    P(n) = sum clipped hyp n-grams / sum hyp n-grams        (clip: max count over references)
    R(n) = sum clipped ref n-grams / sum ref n-grams        (every reference; clip: hyp count)
    PS(N) = BP * exp(sum_n w_n log P(n)),  BP = 1 if B|c| >= |r| else exp(1 - |r| / (B|c|))
    RS(N) = WP * exp(sum_n w_n log R(n)),  WP = 1 if |c| <= W|r| else exp(1 - |c| / (W|r|))
    AEv(alpha, N) = PS * RS / (alpha * RS + (1 - alpha) * PS)

alpha = 1 gives PS (precision), alpha = 0 gives RS (recall); |r| is the closest reference length.
A zero or undefined P(n) or R(n) with w_n > 0 makes that side 0 (UndefinedMetricWarning); sentence
level can smooth both sides with sacreBLEU's methods.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from ngrameval.errors import ConfigError
from ngrameval.metrics.choices import AEV_PRESETS
from ngrameval.metrics.policy import (
    SACREBLEU_SMOOTH,
    FloatArray,
    check_smooth_value,
    divide,
    exceed_penalty,
    smooth_label,
    smoothed_precisions,
    warn_undefined,
    weighted_log_mean,
)
from ngrameval.metrics.rows import RowMetric
from ngrameval.ngrams.stats import Stats
from ngrameval.text.validate import MAX_ORDER, integer, number


@dataclass(frozen=True)
class AEv(RowMetric):
    """AEv(alpha, N) with brevity constant B and wordiness constant W (``math.inf`` disables WP)."""

    alpha: float = 0.5
    n: int = 4
    brevity: float = 1.0
    wordiness: float = 2.0
    weights: tuple[float, ...] | None = None
    smooth_method: str = "none"
    smooth_value: float | None = None
    label: str | None = None

    name: ClassVar[str] = "AEv"
    counted: ClassVar[bool] = True  # rows: the shared n-gram statistics
    higher_is_better: ClassVar[bool] = True

    def __post_init__(self) -> None:
        number(self.alpha, "AEv alpha", 0.0, 1.0)
        integer(self.n, "AEv n", 1, MAX_ORDER)
        number(self.brevity, "AEv brevity constant B", 0.0, low_open=True)
        number(self.wordiness, "AEv wordiness constant W (inf: no penalty)", 0.0, low_open=True, allow_inf=True)
        if self.weights is not None:
            if len(self.weights) != self.n:
                raise ConfigError(f"AEv weights: need {self.n} (one per order 1..n), got {len(self.weights)}")
            for k, w in enumerate(self.weights):
                number(w, f"AEv weights[{k}]", 0.0)
            if sum(self.weights) <= 0:
                raise ConfigError("AEv weights must not all be 0")
        if self.smooth_method not in SACREBLEU_SMOOTH:
            raise ConfigError(f"unknown AEv smoothing {self.smooth_method!r}; valid: {', '.join(SACREBLEU_SMOOTH)}")
        check_smooth_value(self.smooth_method, self.smooth_value, "AEv smooth_value")

    @property
    def order_needed(self) -> int:
        return self.n

    def _w(self) -> FloatArray:
        if self.weights is None:
            return np.full(self.n, 1.0 / self.n)
        return np.asarray(self.weights, dtype=np.float64)

    def _sides(self, stats: Stats) -> tuple[FloatArray, NDArray[np.bool_], FloatArray, NDArray[np.bool_]]:
        """(PS, PS undefined, RS, RS undefined), penalties included; an undefined side is 0."""
        w = self._w()
        n = self.n
        p, _ = smoothed_precisions(
            stats.match[..., :n], stats.total_ngrams[..., :n], self.smooth_method, self.smooth_value
        )
        r, _ = smoothed_precisions(stats.rmatch[..., :n], stats.rtotal[..., :n], self.smooth_method, self.smooth_value)
        ps, ps_undef = weighted_log_mean(p, w)
        rs, rs_undef = weighted_log_mean(r, w)
        ps = ps * exceed_penalty(stats.ref_len, self.brevity * stats.hyp_len)
        if not math.isinf(self.wordiness):  # W = inf disables WP (and inf * 0 would be NaN)
            rs = rs * exceed_penalty(stats.hyp_len, self.wordiness * stats.ref_len)
        return ps, ps_undef, rs, rs_undef

    def precision_side(self, stats: Stats) -> FloatArray:
        """PS(N) (0 where undefined)."""
        return self._sides(stats)[0]

    def recall_side(self, stats: Stats) -> FloatArray:
        """RS(N) (0 where undefined)."""
        return self._sides(stats)[2]

    def __call__(self, stats: Stats) -> FloatArray:
        """AEv of each row of ``stats`` in [0, 1]."""
        ps, ps_undef, rs, rs_undef = self._sides(stats)
        used_p, used_r = self.alpha > 0, self.alpha < 1
        undefined = (ps_undef & used_p) | (rs_undef & used_r)
        warn_undefined(undefined, self.display_name(), "a zero or undefined n-gram precision/recall")
        # The ends are the families themselves (SPEC §2), also where the other side is 0 (0/0 otherwise).
        if self.alpha == 1.0:
            return ps
        if self.alpha == 0.0:
            return rs
        return divide(ps * rs, self.alpha * rs + (1.0 - self.alpha) * ps)

    def display_name(self) -> str:
        return self.label or f"AEv({self.alpha:g},{self.n})"

    def signature(self) -> str:
        w = "uniform" if self.weights is None else ",".join(f"{x:g}" for x in self.weights)
        smooth = smooth_label(self.smooth_method, self.smooth_value)
        return f"alpha:{self.alpha:g}|n:{self.n}|B:{self.brevity:g}|W:{self.wordiness:g}|w:{w}|smooth:{smooth}"


# The best members Soricut & Brill (2004) found (SPEC §2, :data:`ngrameval.metrics.choices.AEV_PRESETS`), with the
# paper's settings.
PAPER_TEXT = {"lowercase": True, "stem": True, "stopwords": "smart"}
PRESETS: dict[str, tuple[AEv, str]] = {
    name: (AEv(alpha=alpha, n=n, label=f"AEv:{name}"), what) for name, (alpha, n, what) in AEV_PRESETS.items()
}
