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
from svgparse import node_groups, parse

import graphviz_tb
from graphviz_tb.group.build import complete
from graphviz_tb.view.opening import AUTO_DEPTH
from graphviz_tb.write.page import page_json

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import graphs_shapes

pytestmark = pytest.mark.dot


def _payload(page: str) -> str:
    """The JSON the viewer page embeds."""
    return page_json(page)


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
    """Two ops under 800 nested scopes: the picture opens the top scopes, and drawing it holds
    little beyond the nested groups' own names (800 names of up to 4,000 characters, which
    the tree keeps).  Each nested group used to keep a copy of its whole subtree's relative
    names, to compare with the others: 450 MB here, cubic in the depth, and a kill by the
    kernel at 24 GB for 3,000 levels."""
    peak, data, graph = _peak_bytes(graphs_shapes.deep(800))
    names = sum(len(g.name) for g in graph.hierarchy().groups.values())
    assert names > 1_400_000  # what the tree must hold: the sum of 800 nested names
    # the default view opens the chain of single scopes a few levels down (AUTO_DEPTH)
    chain = ["/".join(f"s{k}" for k in range(n + 1)) for n in range(AUTO_DEPTH + 1)]
    assert svg_titles(data, "group") == chain
    assert svg_titles(data, "op") == ["input"]
    assert peak < 2 * names + 2**21, (
        f"{peak / 2**20:.1f} MB allocated for {names / 2**20:.1f} MB of group names")


def test_deep_scopes_page_data_is_linear_in_depth() -> None:
    """The viewer's data names each member by its suffix after an ancestor's name, so 800
    nested scopes take tens of bytes per level, not the 4,000-character full names; and
    writing the page holds little beyond the tree's names and the page's own machinery (the
    peak of writing the page of a two-level graph)."""
    fixed, _, _ = _peak_bytes(graphs_shapes.deep(2), "html")
    peak, page, graph = _peak_bytes(graphs_shapes.deep(800), "html")
    names = sum(len(g.name) for g in graph.hierarchy().groups.values())
    payload = _payload(page.decode("utf-8"))
    assert json.loads(payload)["ns"][1:4] == ["s0", "s1", "s2"]
    assert len(payload) < 100 * 800
    assert peak - fixed < 2 * names + 20 * len(payload), (
        f"{(peak - fixed) / 2**20:.1f} MB allocated beyond a small page's, for a "
        f"{len(payload) / 2**20:.2f} MB payload")


def _tree(graph: graphviz_tb.Graph) -> graphviz_tb.group.tree.Hierarchy:
    """The settled scope tree (every series made)."""
    h = graph.hierarchy()
    return h


def _placed_once(h: graphviz_tb.group.tree.Hierarchy) -> None:
    """Every op of the model sits in the tree exactly once."""
    ops = [m.name for m in h.root.walk() if not m.is_group]
    assert sorted(ops) == sorted(h.model.graph)


@pytest.mark.parametrize("numbered", [True, False])
def test_wide_group_is_dealt_into_sections(numbered: bool) -> None:
    """1,000 siblings in one group: numbered ones fold into one series, and either way they
    are dealt into sections of 200, in natural name order; the picture shows the group."""
    graph = graphviz_tb.load(graphs_shapes.wide(1000, numbered))
    h = _tree(graph)
    _placed_once(h)
    wide = h.groups["wide"]
    holder = wide.children[0] if numbered else wide
    if numbered:
        assert [c.name for c in wide.children] == ["wide/add_[1-1000]"]
        assert holder.kind == "series"
    sections = holder.children
    assert [s.label for s in sections] == [
        f"[{i}–{i + 199} of 1000]" for i in range(1, 1000, 200)]
    assert all(s.kind == "section" and len(s.children) == 200 for s in sections)
    first = {m.label for m in sections[0].children}
    if numbered:
        assert first == {f"add_{i}" for i in range(1, 201)}
    else:
        assert first == {graphs_shapes.unnumbered_label(i) for i in range(200)}
    data = graph.render(format="svg", depth=1).encode("utf-8")
    assert svg_titles(data, "group") == ["wide"]
    assert sorted(svg_titles(data, "op")) == ["input", "output"]


def test_shared_prefixes_in_one_chain_are_dealt_along_the_dataflow() -> None:
    """Keras-3-like flat names (``separable_bn_1_normal_left1_7``) under one scope, the 500
    layers one chain.  Prefix groups by shared leading tokens would not be convex here (each
    prefix recurs all along the chain, so edges would leave a box and come back), so they are
    given up, and the layers are dealt into sections along the chain: whole cells, in order."""
    graph = graphviz_tb.load(graphs_shapes.prefixes(20))
    h = _tree(graph)
    _placed_once(h)
    model = h.groups["model"]
    assert [(c.name, c.kind) for c in model.children] == [
        ("model/[1–200 of 500]", "section"), ("model/[201–400 of 500]", "section"),
        ("model/[401–500 of 500]", "section")]
    cells = [sorted({int(x.name.rsplit("_", 1)[1]) for x in c.children})
             for c in model.children]
    assert cells == [list(range(0, 8)), list(range(8, 16)), list(range(16, 20))]
    assert sum(s.op_count for s in model.children) == 20 * 25 * 2


def test_long_names_are_kept_whole_and_drawn_short() -> None:
    """Names of 10,000 characters: the tree keeps them whole, the picture cuts its labels
    (a few kB of SVG, not the names), and the page stores each scope's name once, as a
    suffix after its parent's."""
    graph = graphviz_tb.load(graphs_shapes.long_names(10_000, groups=3, per_group=4))
    h = _tree(graph)
    _placed_once(h)
    assert all(len(m.name) > 10_000 for m in h.root.walk() if not m.is_group
               and m.name != "input")
    svg = graph.render(format="svg", depth=1).encode("utf-8")
    (outer,) = svg_titles(svg, "group")
    assert len(outer) == 5_000
    assert len(svg) < 5 * 5_000 + 20_000  # the name in the title and ids, not per label
    payload = _payload(graph.render(format="html"))
    assert len(payload) < 4 * 5_000 + 30_000  # outer + 3 inner scopes, each once


def test_many_functions_open_each_call_into_its_body() -> None:
    """30 functions, each called once by a StatefulPartitionedCall and each calling one
    shared function: every call opens into its own body, the shared one once per caller."""
    graph_def = graphs_shapes.functions(30)
    graph = graphviz_tb.load(graph_def)
    info = graph.info()
    assert (info["nodes"], info["functions"]) == (len(graph_def.node), 31)
    assert info["function_nodes"] == sum(len(f.node_def) for f in graph_def.library.function)
    h = _tree(graph)
    _placed_once(h)
    bodies = sorted((g.name, g.function) for g in h.groups.values() if g.kind == "function")
    calls = [(f"model/block_{i}/StatefulPartitionedCall", f"__inference_block_{i}_{1000 + i}")
             for i in range(30)]
    leaves = [(f"{name}/inner", "leaf") for name, _ in calls]
    assert bodies == sorted(calls + leaves)
    assert h.groups["model"].op_count == 30 * 8  # call, 3 ops, inner call, leaf's 3 ops


def test_calls_nested_past_the_bound_are_drawn_closed() -> None:
    """Calls nested 150 deep: the first 100 open into their bodies, and the call past the
    bound is drawn closed, marked, with a warning.  Each opened body's ops are named under
    every call above them, so opening all of them held names quadratic in the depth (1.7 GB
    for a 1.4 MB file 8,000 deep)."""
    depth, bound = 150, graphviz_tb.LoadOptions().max_call_depth
    assert bound == 100
    graph = graphviz_tb.load(graphs_shapes.nested_calls(depth))
    h = _tree(graph)
    _placed_once(h)
    opened = [g for g in h.groups.values() if g.kind == "function"]
    assert len(opened) == bound
    cut = [n for n, d in graph.model.g.nodes(data=True) if d.get("depth_cut")]
    assert len(cut) == 1 and cut[0].count("/inner") == bound  # the 101st call, closed
    assert any(f"more than {bound} deep" in w for w in graph.model.warnings.lines())
    root = parse(graph.render(expand_all=True))
    marked = node_groups(root, "depth-cut")
    assert list(marked) == cut
    assert len(list(marked[cut[0]].iter("{http://www.w3.org/2000/svg}ellipse"))) == 2


def test_nested_calls_hold_names_linear_in_the_depth() -> None:
    """Past the bound, deeper nesting adds closed calls' own names only: drawing calls
    nested 800 deep allocates at most a little over twice what 400 deep does (four times,
    quadratic, when every level opened)."""
    small, _, _ = _peak_bytes(graphs_shapes.nested_calls(400))
    large, _, _ = _peak_bytes(graphs_shapes.nested_calls(800))
    assert large < 2.2 * small, f"{large / small:.2f}x the memory for twice the depth"


def test_sections_of_a_series_are_proved_alike_without_a_search(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The sections of one long series of chained identical ops (``add_1…add_200``,
    ``add_201…add_400`` …) are alike, and their children's places in natural name order prove
    it: no isomorphism search, which took a fifth of a second per section (22 s for 25,000
    ops)."""
    from graphviz_tb.group import templates as structure

    def no_search(*_: object) -> bool:
        raise AssertionError("isomorphism search")

    monkeypatch.setattr(structure, "same_structure", no_search)
    graph = graphviz_tb.load(graphs_shapes.wide(1000))
    h = graph.hierarchy()
    h.settle()
    sections = [g for g in h.groups.values() if g.kind == "section"]
    assert len(sections) == 5
    # Section by section, as a picture asks: complete() would copy the first one's template
    # to the others by their equal forms, deciding none of them against another.
    assert len({h.templates.of(g) for g in sections}) == 1
    complete(h)
    assert len({h.templates.of(g) for g in sections}) == 1


def test_composed_copies_of_a_real_model_are_alike() -> None:
    """The 1,000,000-op bench graph is copies of real models side by side
    (``bench/graphs_synthetic.py``); three copies of the MNIST sample: three times its ops and
    edges, one top-level group per copy, all three one structure."""
    from graphs_synthetic import compose, load_graph_def

    source = load_graph_def(Path(__file__).resolve().parents[1] / "samples" / "mnist_tf1.pb")
    composed = compose([source], target=3 * len(source.node))
    assert len(composed.node) == 3 * len(source.node)
    one = graphviz_tb.load(source).info()
    graph = graphviz_tb.load(composed)
    info = graph.info()
    assert info["nodes"] == 3 * one["nodes"]
    assert info["edges"] == {k: 3 * v for k, v in one["edges"].items()}
    h = graph.hierarchy()
    copies = [h.groups[f"copy_{i}"] for i in range(3)]
    assert [c.parent for c in copies] == [h.root] * 3
    complete(h)
    assert len({h.templates.of(c) for c in copies}) == 1


def test_a_diff_of_deep_scopes_says_what_changed(tmp_path: Path) -> None:
    """Scopes nested 1,500 deep on both sides, a ``Relu`` swapped for a ``Tanh`` and an op
    added at the bottom: the diff names both and draws the merged graph.  Pairing the two
    sides' scopes recursed once a level, a traceback from 1,000 levels on."""
    old, new = graphs_shapes.deep(1500), graphs_shapes.deep_changed(1500)
    scope = new.node[-1].name.rpartition("/")[0]
    paths = []
    for name, graph_def in (("old", old), ("new", new)):
        paths.append(tmp_path / f"{name}.pb")
        paths[-1].write_bytes(graph_def.SerializeToString())
    d = graphviz_tb.diff(*paths)
    assert d.result.added == [f"{scope}/z"] and d.result.removed == []
    assert [c.new for c in d.result.changed] == [f"{scope}/y"]
    assert d.summary() == ["ops: 1 added, 0 removed, 1 changed; edges: 1 added, 0 removed",
                           f"1 op added under {scope}", f"changed {scope}/y: op: Relu -> Tanh",
                           f"data edge added: {scope}/y -> {scope}/z"]
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", d.render())
    assert "3 ops · +1 ~1" in texts  # the closed group holding both changes says so


def test_a_diff_of_deep_scopes_holds_their_names_once() -> None:
    """Diffing two versions of scopes nested 800 deep, summary and picture, holds little more
    than drawing the new version alone: the scope names once, in the merged tree.  Pairing
    the sides' scopes and summing their ops kept every scope's full name too, one more copy
    a side (quadratic in the depth: the bench's diff_deep shape grew 2.46x in memory from
    2,000 to 4,000 levels)."""
    old, new = graphs_shapes.deep(800), graphs_shapes.deep_changed(800)
    alone, _, graph = _peak_bytes(new)
    names = sum(len(g.name) for g in graph.hierarchy().groups.values())
    graphviz_tb.diff(graphs_shapes.deep(2), graphs_shapes.deep_changed(2)).render()  # imports
    tracemalloc.start()
    try:
        d = graphviz_tb.diff(old, new)
        summary = d.summary()
        d.render()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert summary[1].startswith("1 op added under s0/s1/s2/")
    assert peak - alone < names / 2, (
        f"{(peak - alone) / 2**20:.1f} MB more than drawing the new side alone, for "
        f"{names / 2**20:.1f} MB of group names")
