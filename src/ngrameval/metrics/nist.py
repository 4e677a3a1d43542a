"""NIST (Doddington 2002) exactly as mteval-v13a.pl computes it.

    NIST-N = (sum_{n<=N} info_n / max(t_n, 1)) * exp(beta * log^2(min(c / r_avg, 1)))
    info(w1..wn) = log2(count(w1..wn-1) / count(w1..wn))   over every reference of the test set

with info_n the information-weighted clipped matches of order n, t_n the hypothesis n-grams, c the
hypothesis length, r_avg the average reference length (per segment, over the references that segment
has), and beta chosen so that the factor is 0.5 at c / r_avg = 2/3.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ngrameval.errors import ConfigError
from ngrameval.metrics.policy import FloatArray, divide
from ngrameval.ngrams.stats import Stats

BETA = -math.log(0.5) / math.log(1.5) ** 2


def nist_penalty(ratio: FloatArray) -> FloatArray:
    """exp(-beta log^2 ratio) for 0 < ratio < 1; 1 at or above 1; 0 at or below 0."""
    safe = np.clip(ratio, 1e-300, 1.0)
    return np.where(ratio >= 1, 1.0, np.where(ratio <= 0, 0.0, np.exp(-BETA * np.log(safe) ** 2)))


@dataclass(frozen=True)
class NIST:
    """NIST-N from :class:`Stats` counted with ``nist=True`` (unbounded scale, not 0-1)."""

    n: int = 5

    name: ClassVar[str] = "NIST"
    needs_info: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ConfigError(f"NIST n must be >= 1, got {self.n}")

    @property
    def order_needed(self) -> int:
        return self.n

    def __call__(self, stats: Stats) -> FloatArray:
        if not stats.has_info:
            raise ConfigError("NIST needs statistics counted with nist=True")
        gain = (stats.info[..., : self.n] / np.maximum(stats.total_ngrams[..., : self.n], 1.0)).sum(axis=-1)
        return np.asarray(gain * nist_penalty(divide(stats.hyp_len, stats.ref_len_mean)))

    def display_name(self) -> str:
        return f"NIST-{self.n}" if self.n != 5 else "NIST"

    def signature(self) -> str:
        return f"n:{self.n}"
