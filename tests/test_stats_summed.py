"""``ngrams.stats.summed`` is ``values.sum(axis=0)`` bit for bit: every corpus total goes through it, and a corpus
summed piece by piece (``add_rows``) must stay the corpus summed at once."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from ngrameval.ngrams.stats import add_rows, summed

FLOATS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.sampled_from([0.0, -0.0, 1.0, 0.1, 1e-300, 1e300, 2.0**53, -(2.0**53) + 1]),
)


@settings(max_examples=300, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(0, 60), st.integers(1, 30)), elements=FLOATS))
def test_summed_is_the_axis0_sum_bit_for_bit(values: np.ndarray) -> None:
    with np.errstate(over="ignore", invalid="ignore"):  # (huge elements: both overflow alike)
        want, got = values.sum(axis=0), summed(values)
        chunked = add_rows(add_rows(None, values[:1]), values[1:]) if len(values) else None
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()
    if len(values) and values.shape[1] >= 2:  # and the sequential order add_rows documents
        assert chunked is not None and got.tobytes() == chunked.tobytes()


def test_summed_of_views_integers_and_wide_sums_is_numpys() -> None:
    rng = np.random.default_rng(7)
    v = rng.random((100_000, 3)) * 10.0 ** rng.integers(-8, 12, (100_000, 3))
    assert summed(v).tobytes() == v.sum(axis=0).tobytes()
    assert summed(v[::2]).tobytes() == v[::2].sum(axis=0).tobytes()  # not contiguous: numpy's own sum
    assert summed(v.T).tobytes() == v.T.sum(axis=0).tobytes()
    ints = rng.integers(0, 100, (1000, 4))
    assert summed(ints).tobytes() == ints.sum(axis=0).tobytes()
