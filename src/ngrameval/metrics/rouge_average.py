"""The system average ROUGE-1.5.5 prints: the mean of bootstrap means, not the mean of the items.

ROUGE-1.5.5 (``-a -c C -r R``) sorts the instances as strings by test id ``"<eval id>.<peer id>"``
(``"10.S1" < "2.S1"``); for seed ``s = 0 .. R-1`` it calls ``srand(s)`` and draws ``n`` indices
``int(n * rand())`` with Perl's drand48 (``x0 = (s << 16) + 0x330E``, ``x <- (0x5DEECE66D x + 0xB) mod 2^48``,
``rand = x / 2^48``), summing the 5-decimal item values in draw order. The R means, sorted, are summed in
order and divided by R (the printed ``Average``); the interval interpolates the sorted means at
``delta = R (100 - C) / 200``. Use it to reproduce published ROUGE-1.5.5 tables digit for digit; for
inference use :mod:`ngrameval.meta` (seeded, shared with every other metric).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ngrameval.metrics.policy import FloatArray

_A, _C, _MASK = np.uint64(0x5DEECE66D), np.uint64(0xB), np.uint64((1 << 48) - 1)


@dataclass(frozen=True)
class PerlAverage:
    """ROUGE-1.5.5's printed ``Average`` and 95% (or ``confidence``) interval."""

    average: float
    low: float
    high: float


def rouge155_average(
    values: FloatArray, test_ids: Sequence[str], n_resamples: int = 1000, confidence: float = 95.0
) -> PerlAverage:
    """ROUGE-1.5.5's ``Average_X`` line for one system: ``values[i]`` is the (5-decimal) score of the
    instance with test id ``test_ids[i]`` (``"<eval id>.<system id>"``).

    >>> a = rouge155_average(np.array([0.5, 0.25, 0.75]), ["1.A", "2.A", "10.A"])
    >>> round(a.average, 5), a.low < a.average < a.high
    (0.49983, True)
    """
    n = len(values)
    if n == 0 or n_resamples < 1:
        return PerlAverage(0.0, 0.0, 0.0)
    ordered = np.asarray(values, dtype=np.float64)[sorted(range(n), key=lambda i: test_ids[i])]
    x = (np.arange(n_resamples, dtype=np.uint64) << np.uint64(16)) + np.uint64(0x330E)
    sums = np.zeros(n_resamples)
    for _ in range(n):
        x = (x * _A + _C) & _MASK  # uint64 arithmetic wraps mod 2^64, so mod 2^48 is exact
        sums += ordered[np.floor(n * (x.astype(np.float64) / 2.0**48)).astype(np.int64)]
    means = np.sort(sums / n)
    average = float(np.cumsum(means)[-1] / n_resamples)  # summed in sorted order, as Perl does
    delta = n_resamples * (100 - confidence) / 200
    top = n_resamples - delta - 1
    g = top - int(top)

    def at(k: int) -> float:
        k = min(max(k, 0), n_resamples - 1)
        nxt = min(k + 1, n_resamples - 1)
        return float(means[k] + (means[nxt] - means[k]) * g)

    return PerlAverage(average, at(int(delta)), at(int(top)))
