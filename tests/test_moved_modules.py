"""Modules that moved keep their old import path for one minor release (docs/deprecations.md): the old path
forwards every name, public and private, to the new module, with one FutureWarning naming it."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings

import pytest

import ngrameval


@pytest.mark.parametrize("old", sorted(ngrameval.MOVED))
def test_every_moved_module_still_imports_with_a_warning(old: str) -> None:
    new = importlib.import_module(ngrameval.MOVED[old])
    module = importlib.import_module(old)
    module.warned = False  # type: ignore[attr-defined]  # as in a fresh process
    names = [k for k in vars(new) if not k.startswith("__")]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        same = [getattr(module, k) is getattr(new, k) for k in names]
    assert names and all(same), old
    assert [w.category for w in caught] == [FutureWarning], old  # once, however many names are used
    assert f"import {ngrameval.MOVED[old]} instead" in str(caught[0].message) and "0.2.0" in str(caught[0].message)


def test_old_paths_in_a_fresh_process_cost_nothing_until_used_and_warn_at_the_user() -> None:
    code = (
        "import sys, warnings\n"
        "warnings.simplefilter('always')\n"
        "import ngrameval, ngrameval.distributed.cluster, ngrameval.demo\n"
        "assert 'ngrameval.scale.dask.cluster' not in sys.modules and 'ngrameval.cli.demo' not in sys.modules\n"
        "assert callable(ngrameval.paraphrase)  # importing the old module did not rebind the function's name\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    from ngrameval.distributed.cluster import from_text_shards\n"
        "    from ngrameval.distributed import cluster\n"
        "from ngrameval.scale.dask import cluster as new\n"
        "assert from_text_shards is new.from_text_shards and cluster is new\n"
        "print([(w.category.__name__, w.filename) for w in caught])\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["[('FutureWarning',", "'<string>'),", "('FutureWarning',", "'<string>')]"]
