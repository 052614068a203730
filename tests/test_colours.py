"""A structure's colour depends on the structure: the same group has the same fill in the SVG
and in the viewer, at every depth, in every process; the palette goes to the largest repeated
structures first, its colours are told apart at a glance, and a structure is named after the
copy a reader recognises.  The viewer is driven in real headless Chromium."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hostile_inputs import graph_def, node
from svgparse import classes, fill_of, node_groups, parse, texts
from test_html import Page, _bundle_or_fail

import graphviz_tb

pytestmark = [pytest.mark.dot]

SAMPLES = Path(__file__).resolve().parents[1] / "samples"


def _svg_fills(graph: graphviz_tb.Graph, **options: Any) -> dict[str, str]:
    """Each drawn group's fill in the static picture (open groups' frames included)."""
    root = parse(graph.render(format="svg", **options))
    return {name: fill_of(g)[:7].lower() for name, g in node_groups(root).items()
            if "op" not in classes(g)}


def _viewer_fills(browser: Any, graph: graphviz_tb.Graph, path: Path,
                  **options: Any) -> dict[str, str]:
    graph.render(path, **options)
    page = Page(browser, path)
    try:
        fills = page.page.evaluate("window.tbgraph.fills(true)")  # groups only
    finally:
        page.close()
    return {name: fill[:7].lower() for name, fill in fills.items()}


def _lab(color: str) -> tuple[float, float, float]:
    """CIELAB of an sRGB hex colour (D65)."""
    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(int(color[i:i + 2], 16) / 255) for i in (1, 3, 5))
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def distance(a: str, b: str) -> float:
    """CIE76 colour difference: about 2 is just noticeable, 15 or more is at a glance."""
    return sum((p - q) ** 2 for p, q in zip(_lab(a), _lab(b), strict=True)) ** 0.5


@pytest.mark.browser
@pytest.mark.tensorflow
@pytest.mark.parametrize("which", ["mnist", "resnet50"])
def test_a_group_has_one_fill_in_the_svg_and_the_viewer_at_every_depth(
        which: str, browser: Any, tf_made: dict[str, Path], tmp_path: Path) -> None:
    """TF1 MNIST and a Keras ResNet-50: every group drawn in two of the four pictures (SVG
    and viewer, default view and depth 2) has one fill in all of them."""
    _bundle_or_fail()
    path = SAMPLES / "mnist_tf1.pb" if which == "mnist" else tf_made["resnet50"]
    graph = graphviz_tb.load(path)
    pictures = {
        "svg": _svg_fills(graph),
        "svg --depth 2": _svg_fills(graph, depth=2),
        "viewer": _viewer_fills(browser, graph, tmp_path / "first.html"),
        "viewer --depth 2": _viewer_fills(browser, graph, tmp_path / "two.html", depth=2),
    }
    seen: dict[str, dict[str, str]] = {}
    for picture, fills in pictures.items():
        for name, fill in fills.items():
            seen.setdefault(name, {})[picture] = fill
    twice = {name: fills for name, fills in seen.items() if len(fills) >= 2}
    assert len(twice) >= 10
    differ = {name: fills for name, fills in twice.items() if len(set(fills.values())) > 1}
    assert differ == {}


def test_a_groups_fill_does_not_depend_on_what_else_is_drawn() -> None:
    """Opening a scope, focusing elsewhere or drawing every op leaves the fills of the groups
    drawn in both pictures as they were (the palette is the whole graph's, not the
    picture's)."""
    graph = graphviz_tb.load(SAMPLES / "mnist_tf1.pb")
    first = _svg_fills(graph)
    for options in ({"expand": ("conv*",)}, {"expand_all": True}, {"depth": 3},
                    {"series": True, "depth": 1}):
        other = _svg_fills(graph, **options)
        common = first.keys() & other.keys()
        assert common
        assert {n: (first[n], other[n]) for n in common if first[n] != other[n]} == {}


def _blocks(name: str, ops: int) -> list[Any]:
    """A scope of a chain of ``ops`` alike ops."""
    return [node(f"{name}/op{k}", "Relu", [f"{name}/op{k - 1}"] if k else [])
            for k in range(ops)]


def test_the_palette_goes_to_the_largest_structures_first() -> None:
    """Three copies of a 10-op block (30 ops) come before five copies of a 4-op block (20
    ops) and two of a 6-op one (12); copies of a 2-op helper get no colour of their own."""
    from graphviz_tb.style import OTHER_REPEATED, STRUCTURE_COLORS

    nodes = []
    for name, ops, copies in (("tiny", 2, 6), ("mid", 6, 2), ("small", 4, 5), ("big", 10, 3)):
        for i in range(copies):
            nodes += _blocks(f"{name}_{chr(97 + i)}", ops)
    graph = graphviz_tb.load(graph_def(nodes))
    fills = _svg_fills(graph, series=False, prefix_groups=False, blocks=False)
    assert fills["big_a"] == STRUCTURE_COLORS["light"][0]
    assert fills["small_a"] == STRUCTURE_COLORS["light"][1]
    assert fills["mid_a"] == STRUCTURE_COLORS["light"][2]
    assert fills["tiny_a"] == OTHER_REPEATED["light"]
    legend = " ".join(texts(parse(graph.render(format="svg", series=False, blocks=False,
                                               prefix_groups=False))))
    assert legend.index("big_a × 3") < legend.index("small_a × 5") < legend.index("mid_a × 2")
    assert "1 other repeated structure" in legend


def test_legend_colours_are_told_apart_at_a_glance() -> None:
    """Every two structure colours, the colour of other repeated structures and the grey of
    unique ones differ by a CIE76 distance of 15 or more, in both themes."""
    from graphviz_tb.style import OTHER_REPEATED, STRUCTURE_COLORS, UNIQUE_COLOR

    for theme in ("light", "dark"):
        colors = [*STRUCTURE_COLORS[theme], OTHER_REPEATED[theme], UNIQUE_COLOR[theme]]
        closest = min((distance(a, b), a, b) for i, a in enumerate(colors)
                      for b in colors[:i])
        assert closest[0] >= 15, closest


def test_a_structure_is_named_after_its_forward_copy() -> None:
    """A reshape and its gradient have one structure; the legend names it after the forward
    ``reshape``, not ``Reshape_1_grad`` (which sorts first)."""
    nodes = []
    for scope in ("net/reshape", "net/reshape_1", "gradients/net/Reshape_grad",
                  "gradients/net/Reshape_1_grad"):
        nodes += [node(f"{scope}/Shape", "Shape", ["x"]),
                  node(f"{scope}/Cast", "Cast", [f"{scope}/Shape"]),
                  node(f"{scope}/Reshape", "Reshape", ["x", f"{scope}/Cast"])]
    graph = graphviz_tb.load(graph_def([node("x", "Placeholder"), *nodes]))
    legend = texts(parse(graph.render(format="svg", expand_all=True, series=False)))
    rows = [t for t in legend if "×" in t]
    assert "reshape × 4" in rows
    assert not [row for row in rows if "_grad" in row]


def _render_in_a_process(path: Path, theme: str, fmt: str, seed: str) -> str:
    code = ("import json, sys, graphviz_tb\n"
            "from graphviz_tb.write.page import page_data\n"
            "out = graphviz_tb.load(sys.argv[1]).render(format=sys.argv[3], theme=sys.argv[2])\n"
            "print(json.dumps(page_data(out), sort_keys=True) if sys.argv[3] == 'html'"
            " else out)")
    done = subprocess.run([sys.executable, "-c", code, str(path), theme, fmt],
                          capture_output=True, text=True, check=True,
                          env={**os.environ, "PYTHONHASHSEED": seed})
    return done.stdout


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_same_input_draws_the_same_bytes_in_every_process(theme: str) -> None:
    """Two processes with different string hashing draw byte-identical SVG and page data, in
    both themes: no colour or order depends on the order groups were met in one run."""
    path = SAMPLES / "mnist_tf1.pb"
    for fmt in ("svg", "html"):
        one, two = (_render_in_a_process(path, theme, fmt, seed) for seed in ("1", "2"))
        assert one == two
        if fmt == "html":
            assert json.loads(one)["options"]["theme"] == theme


def _twenty_structures(path: Path) -> Path:
    """A graph of 20 structures, each drawn twice in a chain: ``p07q`` and ``r07q`` hold
    three ops of types of their own (``T07a``, ``T07b``, ``T07c``), in a row, so every
    structure is repeated, as big as the others, and unlike every other (the names share no
    prefix or number a series or prefix group would fold)."""
    nodes, previous = [node("x", "Placeholder", attrs={})], "x"
    for i in range(20):
        for copy in "pr":
            scope = f"{copy}{i:02d}q"
            for part in "abc":
                nodes.append(node(f"{scope}/{part}", f"T{i:02d}{part}", [previous]))
                previous = f"{scope}/{part}"
    path.write_bytes(graph_def(nodes).SerializeToString())
    return path


@pytest.mark.browser
def test_with_more_structures_than_colours_the_first_sixteen_each_have_their_own(
        browser: Any, tmp_path: Path) -> None:
    """Twenty repeated structures are drawn, more than the palette's 16 colours: sixteen
    of them get a colour each, both copies alike, and the other four share the legend's
    "other repeated structures" colour; in the static picture and in the viewer alike.  (Taken
    modulo 8 in the logic both share, MNIST's 16 structures folded onto 8 colours, and the
    colour tests, comparing three structures and Python with the page, passed.)"""
    from graphviz_tb.style import OTHER_REPEATED, STRUCTURE_COLORS

    graph = graphviz_tb.load(_twenty_structures(tmp_path / "twenty.pb"))
    for where, fills in (("svg", _svg_fills(graph, depth=1)),
                         ("viewer", _viewer_fills(browser, graph, tmp_path / "p.html",
                                                  depth=1))):
        pairs = {i: (fills[f"p{i:02d}q"], fills[f"r{i:02d}q"]) for i in range(20)}
        assert all(a == b for a, b in pairs.values()), (where, pairs)
        own = [a for a, _ in pairs.values() if a != OTHER_REPEATED["light"]]
        assert len(own) == len(set(own)) == len(STRUCTURE_COLORS["light"]) == 16, (where, own)
        assert set(own) == {c.lower() for c in STRUCTURE_COLORS["light"]}, where
        assert sum(a == OTHER_REPEATED["light"] for a, _ in pairs.values()) == 4, where


@pytest.mark.browser
def test_a_legend_listing_no_structure_says_no_other(browser: Any, tmp_path: Path) -> None:
    """Two alike 2-op scopes, a structure too small for a colour of its own: the legend's
    row for it says ``1 repeated structure``, not ``1 other repeated structure`` below no
    other (PyTorch's TinyMLP, fc1 and fc2), in the static picture and in the viewer."""
    nodes = [node("x", "Placeholder")]
    for side in ("left", "right"):
        nodes += [node(f"{side}/mul", "Mul", ["x", "x"]),
                  node(f"{side}/relu", "Relu", [f"{side}/mul"])]
    graph = graphviz_tb.load(graph_def(nodes))
    svg = " ".join(texts(parse(graph.render(format="svg", depth=1))))
    graph.render(tmp_path / "p.html", depth=1)
    page = Page(browser, tmp_path / "p.html")
    try:
        viewer = page.page.locator(".legend").inner_text()
    finally:
        page.close()
    for where, legend in (("svg", svg), ("viewer", viewer)):
        assert "1 repeated structure" in legend, (where, legend)
        assert "other" not in legend, (where, legend)
