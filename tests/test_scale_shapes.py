"""Graphs of the shapes that used to find quadratic and cubic paths, at a small size.

Each shape comes from ``bench/graphs_shapes.py`` (the scaling bench draws the same shapes at
1×, 2× and 4× a large size and reports time and memory per doubling).  Here every test checks
what is drawn and grouped; none times anything.  Where the defect was memory, the test bounds
what the render allocates (``tracemalloc``, deterministic for the same code and input), and how
that grows when the shape doubles.
"""

from __future__ import annotations

import json
import re
import sys
import tracemalloc
from pathlib import Path

import pytest
from hostile_inputs import svg_titles

import graphviz_tb

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import graphs_shapes

pytestmark = pytest.mark.dot


def _payload(page: str) -> str:
    """The JSON the viewer page embeds."""
    match = re.search(r'<script type="application/json" id="tbgraph-data">(.*?)</script>',
                      page, re.S)
    assert match, "no embedded data"
    return match.group(1)


def _peak_bytes(graph_def: object, fmt: str = "svg") -> tuple[int, bytes, graphviz_tb.Graph]:
    """Peak Python allocation of loading and drawing a graph (modules imported beforehand, so
    only the graph's own structures count), what was drawn, and the loaded graph."""
    graphviz_tb.load(graphs_shapes.deep(2)).render(format=fmt)  # imports, outside the count
    tracemalloc.start()
    try:
        graph = graphviz_tb.load(graph_def)
        data = graph.render(format=fmt)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, data.encode("utf-8") if isinstance(data, str) else data, graph


def test_deep_scopes_hold_little_beyond_their_names() -> None:
    """Two ops under 800 nested scopes: the picture is the top scope, and drawing it holds
    little beyond the nested groups' own names (800 names of up to 4,000 characters, which
    the tree keeps).  Each nested group used to keep a copy of its whole subtree's relative
    names, to compare with the others: 450 MB here, cubic in the depth, and a kill by the
    kernel at 24 GB for 3,000 levels."""
    peak, data, graph = _peak_bytes(graphs_shapes.deep(800))
    names = sum(len(g.name) for g in graph.hierarchy().groups.values())
    assert names > 1_400_000  # what the tree must hold: the sum of 800 nested names
    assert svg_titles(data, "group") == ["s0"]
    assert svg_titles(data, "op") == ["input"]
    assert peak < 2 * names + 2**21, (
        f"{peak / 2**20:.1f} MB allocated for {names / 2**20:.1f} MB of group names")


def test_deep_scopes_page_data_is_linear_in_depth() -> None:
    """The viewer's data names each member by its suffix after an ancestor's name, so 800
    nested scopes take tens of bytes per level, not the 4,000-character full names; and
    writing the page holds little beyond the page itself and the tree's names."""
    peak, page, graph = _peak_bytes(graphs_shapes.deep(800), "html")
    names = sum(len(g.name) for g in graph.hierarchy().groups.values())
    payload = _payload(page.decode("utf-8"))
    assert json.loads(payload)["ns"][1:4] == ["s0", "s1", "s2"]
    assert len(payload) < 100 * 800
    assert peak < 2 * names + 4 * len(page), (
        f"{peak / 2**20:.1f} MB allocated for a {len(page) / 2**20:.1f} MB page")
