"""Charts written as SVG directly (``ngrameval.report.svg``): round ticks, colours at the map's stops, escaped
text, broken lines at missing values, and ``plane --plot x.svg`` without a plotting library."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from xml.etree import ElementTree

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ngrameval.report.svg import MAPS, Axis, Figure, Line, Panel, Points, colour_at, is_dark, nice_ticks, padded

finite = st.floats(-1e6, 1e6, allow_nan=False)


@given(finite, finite)
def test_ticks_are_round_even_and_inside(a: float, b: float) -> None:
    low, high = min(a, b), max(a, b)
    ticks = nice_ticks(low, high)
    slack = 1e-6 * (high - low)  # floating error of k x step, relative to the range
    assert ticks and all(low - slack <= t <= high + slack for t in ticks)
    if len(ticks) > 1:
        steps = np.diff(ticks)
        assert np.allclose(steps, steps[0], rtol=1e-6)
        mantissa = steps[0] / 10 ** math.floor(math.log10(steps[0]))
        assert any(math.isclose(mantissa, m, rel_tol=1e-6) for m in (1, 2, 5, 10))
        assert len(ticks) <= 11


def test_colours_at_the_stops_and_missing_values() -> None:
    assert colour_at("viridis", 0.0) == MAPS["viridis"][0] and colour_at("viridis", 1.0) == MAPS["viridis"][-1]
    assert colour_at("RdBu_r", 0.5) == "#f7f7f7"  # the diverging map's centre
    assert colour_at("viridis", -3) == MAPS["viridis"][0] and colour_at("viridis", float("nan")) == "#dddddd"
    assert is_dark(MAPS["viridis"][0]) and not is_dark(MAPS["viridis"][-1])
    assert padded([float("nan")]) == (0.0, 1.0) and padded([2.0]) == (1.5, 2.5)


def test_svg_is_well_formed_escaped_and_breaks_lines_at_nan() -> None:
    evil = '<script>alert("x")</script>&'
    axis = Axis(0.0, 2.0, ((0.0, evil), (1.0, "1\n(7)")), evil)
    line = Line((0.0, 1.0, 2.0, 3.0), (1.0, float("nan"), 1.0, 2.0), label=evil)
    panel = Panel(evil, axis, axis, (line, Points((0.0, float("inf")), (1.0, 1.0), tips=(evil, evil))))
    svg = Figure((panel,), legend=((evil, "#000000"),)).svg(evil)
    assert "<script" not in svg
    root = ElementTree.fromstring(svg)  # well-formed XML
    ns = "{http://www.w3.org/2000/svg}"
    assert root.get("aria-label") == evil and root.get("role") == "img"
    assert len(root.findall(f".//{ns}polyline")) == 2  # one line, broken at the missing value
    assert len(root.findall(f".//{ns}circle")) == 1  # the point at infinity is not drawn
    texts = [t.text for t in root.iter(f"{ns}text")]
    assert evil in texts and "1" in texts and "(7)" in texts


def test_plane_plot_svg_needs_no_plotting_library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ngrameval.meta.plane import Plane
    from ngrameval.report.plane import plot_plane

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # importing it would fail
    p = Plane("q", "r2", (0.0, 1.0), (2, 1), np.array([[0.2, 0.3], [0.25, 0.31]]), 1.0, 1, 0.31, 5, "sig")
    out = tmp_path / "plane.svg"
    plot_plane(p, str(out))
    root = ElementTree.fromstring(out.read_text("utf-8"))
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert {"20.0", "25.0", "30.0", "31.0"} <= set(texts) and "N" in texts
    assert [q.name for q in tmp_path.iterdir()] == ["plane.svg"]  # no temporary file left
