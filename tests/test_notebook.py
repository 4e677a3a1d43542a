"""Results in notebooks: short reprs, escaped HTML tables and pandas frames holding the same numbers."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import ngrameval as ne
from ngrameval.cli.demo import load_sample, sample_human
from ngrameval.errors import MissingDependencyError
from ngrameval.io.tables import html_table
from ngrameval.meta import correlate, plane

HYPS = {"a<b": ["the cat sat on the mat", "a dog"], "c": ["the cat", "a dog barks"]}
REFS = [["the cat sat on a mat"], ["a dog barks", "the dog"]]


def test_scores_table_and_frame() -> None:
    got = ne.score(HYPS, REFS, "bleu,nist,chrf")
    assert isinstance(got, list) and len(got) == 6
    frame = got.to_pandas()
    assert list(frame.columns) == ["system", "metric", "score", "scale", "signature"]
    assert frame.loc[frame.metric == "NIST", "scale"].tolist() == ["raw", "raw"]
    grid = frame.pivot(index="system", columns="metric", values="score")
    assert grid.loc["a<b", "BLEU"] == got[0].score
    page = got._repr_html_()
    assert "a&lt;b" in page and "<script" not in page and f"{got[0].score100:.4g}" in page
    assert got.to_dict()[0]["score"] == got[0].score and "a&lt;b" in got[0]._repr_html_()


def test_comparison_correlations_and_plane() -> None:
    systems, refs = load_sample()
    small = dict(list(systems.items())[:4])
    cmp = ne.compare(small, refs, "bleu", n_resamples=99, seed=1)
    frame = cmp.to_pandas()
    assert len(frame) == 6 and set(frame.columns) >= {"metric", "system_a", "system_b", "p_value", "significant"}
    assert frame.p_value.tolist() == [p.p_value for p in cmp.metrics[0].pairs]
    assert "groups" in cmp._repr_html_() and cmp.to_dict()["seed"] == 1
    human = sample_human("relevance")
    rows = ne.measure(systems, refs, "bleu,rouge-2")
    corr = correlate(rows, human, coefficients=("pearson",), n_resamples=50, seed=1)
    assert isinstance(corr, tuple) and corr.to_pandas().value.tolist() == [c.value for c in corr]
    assert "ROUGE-2" in corr._repr_html_()
    p = plane(systems, refs, human, alphas=(0.0, 0.5, 1.0), orders=(1, 2))
    grid = p.to_pandas()
    assert list(grid.index) == [2, 1] and list(grid.columns) == [0.0, 0.5, 1.0]
    assert grid.loc[p.best_order, p.best_alpha] == p.best_value
    assert "N = 2" in p._repr_html_() and "best alpha" in p._repr_html_()


def test_nan_is_shown_as_na_and_pandas_is_optional(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "<td>n/a</td>" in html_table(["x"], [[math.nan]])
    import builtins

    real = builtins.__import__

    def no_pandas(name: str, *args: object, **kwargs: object) -> object:
        if name == "pandas":
            raise ImportError(name)
        return real(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_pandas)
    with pytest.raises(MissingDependencyError, match=r"ngrameval\[pandas\]"):
        ne.score(HYPS, REFS, "bleu").to_pandas()
    assert pd is not None


def test_short_reprs() -> None:
    systems, refs = load_sample()
    cmp = ne.compare(dict(list(systems.items())[:3]), refs, "bleu", n_resamples=99, seed=1)
    assert repr(cmp).startswith("Comparison(ar, 99 resamples, seed 1, holm; BLEU: 3 systems,") and len(repr(cmp)) < 200
    p = plane(systems, refs, sample_human("relevance"), alphas=(0.0, 1.0), orders=(1,))
    assert repr(p).startswith("Plane('relevance', r2, 2 alphas x 1 orders, best alpha=") and "array" not in repr(p)
