"""``ngrameval.memory``: large arrays in private anonymous memory, whole 2 MB pages advised into transparent huge
pages (a fresh 4 kB page costs ~2.3 us to fault in here); small ones and everything about them as ``np.empty``."""

from __future__ import annotations

import mmap

import numpy as np
import pytest
from tests.conftest import huge_pages_on_request, mapping_of

from ngrameval import memory


@pytest.mark.parametrize(("shape", "dtype"), [((100_000, 2), np.float64), ((3, 100_000), np.float64),
                                              (200_000, np.int64), ((7, 5, 3), np.int64), (0, np.float64)])  # fmt: skip
def test_empty_is_numpys_empty_in_shape_and_type(shape: int | tuple[int, ...], dtype: type) -> None:
    got = memory.empty(shape, dtype=dtype)
    want = np.empty(shape, dtype=dtype)
    assert (got.shape, got.dtype, got.flags.c_contiguous, got.flags.writeable) == (want.shape, want.dtype, True, True)
    got[...] = 7
    assert (got == 7).all()


def test_small_arrays_are_numpys_own() -> None:
    assert memory.empty((100, 2)).base is None  # (np.empty owns its data)
    assert memory.empty(memory.BIG // 8).base is not None  # (kept alive by the mapping it views)


@pytest.mark.skipif(not hasattr(mmap, "MADV_HUGEPAGE"), reason="no transparent huge pages to ask for")
def test_large_buffers_are_whole_huge_pages() -> None:
    buf = memory.anonymous(memory.BIG + 1)
    assert len(buf) % memory.HUGE_PAGE == 0 and len(buf) >= memory.BIG + 1
    assert len(memory.anonymous(memory.BIG - 1)) == memory.BIG - 1


@pytest.mark.skipif(not huge_pages_on_request(), reason="transparent huge pages: Linux, not switched off")
def test_a_rows_array_of_100k_segments_is_in_huge_pages() -> None:
    """ROUGE's rows of 100k segments (1.6 MB, below NumPy's 4 MB for advising huge pages): private memory, and all of
    it in huge pages once written (the mapping is whole 2 MB pages on a 2 MB boundary)."""
    rows = memory.empty((100_000, 2))
    if rows.ctypes.data % memory.HUGE_PAGE:
        pytest.skip("this kernel does not place a 2 MB anonymous mapping on a 2 MB boundary (Linux before 6.7)")
    rows[:] = 1.0
    perms, huge = mapping_of(rows.ctypes.data)
    assert perms.endswith("p")
    assert huge == 2048  # kB: the one 2 MB page
