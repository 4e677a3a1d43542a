"""NIST (Doddington 2002) exactly as mteval-v13a.pl computes it.

    NIST-N = (sum_{n<=N} info_n / max(t_n, 1)) * exp(beta * log^2(min(c / r, 1)))
    info(w1..wn) = log2(count(w1..wn-1) / count(w1..wn))   over every reference of the test set

with info_n the information-weighted clipped matches of order n, t_n the hypothesis n-grams, c the
hypothesis length, r the reference length and beta chosen so that the factor is 0.5 at c / r = 2/3.

Options:

* ``profile="mteval"`` (default) reproduces mteval-v13a.pl's Perl truthiness test on the prefix key
  (``$mgram ? count/count{$mgram} : count/$tot_wrds``): the prefix ``"0"`` is false, so a bigram whose
  first token is ``0`` is weighted log2(total reference words / count(0 x)). Only that key is affected
  (``"00"``, ``"0.0"``, ``"0 0"`` are true in Perl). ``profile="plain"`` uses count(0) as the formula says.
* ``ref_len="mean"`` (default): r = sum over segments of the mean length of the segment's references
  (mteval-v13a.pl's total reference words / number of reference sets, when every segment has them all).
  ``ref_len="average"``: r = total reference words / (non-empty references / segments), as the E2E NLG
  challenge's mteval-v13a-sig.pl (tuetschek/e2e-metrics) computes it for a variable number of references.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ngrameval.errors import ConfigError
from ngrameval.metrics.choices import NIST_PROFILES, NIST_REF_LENS
from ngrameval.metrics.policy import FloatArray, divide
from ngrameval.metrics.rows import RowMetric
from ngrameval.ngrams.stats import Stats
from ngrameval.text.validate import MAX_ORDER, integer

BETA = -math.log(0.5) / math.log(1.5) ** 2
PROFILES = NIST_PROFILES
REF_LENS = NIST_REF_LENS


def nist_penalty(ratio: FloatArray) -> FloatArray:
    """exp(-beta log^2 ratio) for 0 < ratio < 1; 1 at or above 1; 0 at or below 0."""
    safe = np.clip(ratio, 1e-300, 1.0)
    return np.where(ratio >= 1, 1.0, np.where(ratio <= 0, 0.0, np.exp(-BETA * np.log(safe) ** 2)))


@dataclass(frozen=True)
class NIST(RowMetric):
    """NIST-N from :class:`Stats` counted with ``nist=True`` (unbounded scale, not 0-1); ``profile`` and
    ``ref_len`` as in the module docstring."""

    n: int = 5
    profile: str = "mteval"
    ref_len: str = "mean"

    name: ClassVar[str] = "NIST"
    counted: ClassVar[bool] = True  # rows: the shared n-gram statistics, with information weights
    needs_info: ClassVar[bool] = True
    corpus_wide: ClassVar[bool] = True  # weights from every reference of the corpus
    higher_is_better: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ConfigError(f"NIST n must be >= 1, got {self.n}")
        if self.profile not in PROFILES:
            raise ConfigError(f"NIST profile must be one of {', '.join(PROFILES)}, got {self.profile!r}")
        if self.ref_len not in REF_LENS:
            raise ConfigError(f"NIST ref_len must be one of {', '.join(REF_LENS)}, got {self.ref_len!r}")

    @property
    def order_needed(self) -> int:
        return self.n

    def reference_length(self, stats: Stats) -> FloatArray:
        """r of the length penalty under ``ref_len``."""
        if self.ref_len == "mean":
            return stats.ref_len_mean
        return divide(stats.rtotal[..., 0] * stats.segments, stats.ref_count)

    def __call__(self, stats: Stats) -> FloatArray:
        if not stats.has_info:
            raise ConfigError("NIST needs statistics counted with nist=True")
        info = stats.info[..., : self.n]
        if self.profile == "mteval" and self.n >= 2:
            info = info.copy()
            info[..., 1] += stats.info_zero
        gain = (info / np.maximum(stats.total_ngrams[..., : self.n], 1.0)).sum(axis=-1)
        return np.asarray(gain * nist_penalty(divide(stats.hyp_len, self.reference_length(stats))))

    def check(self) -> None:
        integer(self.n, "NIST n", 1, MAX_ORDER)

    def display_name(self) -> str:
        return f"NIST-{self.n}" if self.n != 5 else "NIST"

    def signature(self) -> str:
        """``n:5``, plus ``profile:plain`` / ``ref_len:average`` when not the default."""
        extra = "" if self.profile == "mteval" else f"|profile:{self.profile}"
        extra += "" if self.ref_len == "mean" else f"|ref_len:{self.ref_len}"
        return f"n:{self.n}{extra}"
