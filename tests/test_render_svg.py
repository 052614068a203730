"""Render real graphs to SVG and check what a reader of the picture sees.

The SVG is parsed, never string-matched: node and edge groups by class, titles as full names,
fills, dash patterns, label texts, and the geometry of the boxes.
"""

from __future__ import annotations

import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from svgparse import (
    SAMPLES,
    assert_no_overlaps,
    bbox,
    classes,
    edge_groups,
    edge_path,
    fill_of,
    node_groups,
    parse,
    title,
)

import graphviz_tb
from graphviz_tb.style import UNIQUE_COLOR

pytestmark = pytest.mark.dot

@pytest.fixture(scope="module")
def mnist() -> graphviz_tb.Graph:
    return graphviz_tb.load(SAMPLES / "mnist_tf1.pb")


@pytest.fixture(scope="module")
def mnist_svg(mnist: graphviz_tb.Graph) -> ET.Element:
    return parse(mnist.render())


def test_top_level_groups_are_collapsed_boxes(mnist_svg: ET.Element) -> None:
    """The model's scopes are closed boxes; ``train`` (a third of the ops: gradients and
    optimizer) opens in the default view, so no closed box hides that much."""
    groups = node_groups(mnist_svg, "group")
    for name in ("conv1", "conv2", "fc1", "loss", "accuracy", "train", "input"):
        assert name in groups, f"{name} is not drawn as a group"
        assert ("expanded" in classes(groups[name])) is (name == "train")
    texts = ["".join(t.itertext()) for t in groups["conv1"].iter("{http://www.w3.org/2000/svg}text")]
    assert "conv1" in texts and any(re.fullmatch(r"\d+ ops", t) for t in texts)
    ops = node_groups(mnist_svg, "op")
    assert not any(name.startswith("conv1/") for name in ops), "collapsed groups show no ops"


def test_identical_scopes_share_a_colour_and_unique_ones_are_grey(mnist_svg: ET.Element) -> None:
    groups = node_groups(mnist_svg, "group")
    conv1, conv2 = fill_of(groups["conv1"]), fill_of(groups["conv2"])
    assert conv1 == conv2
    assert conv1.lower() != UNIQUE_COLOR["light"]
    assert fill_of(groups["train"]).lower() == UNIQUE_COLOR["light"]
    assert fill_of(groups["loss"]).lower() == UNIQUE_COLOR["light"]


def test_legend_lists_templates_and_edge_styles(mnist_svg: ET.Element) -> None:
    legends = [g for g in mnist_svg.iter("{http://www.w3.org/2000/svg}g") if "legend" in classes(g)]
    assert len(legends) == 1
    text = " ".join("".join(t.itertext()) for t in legends[0].iter(
        "{http://www.w3.org/2000/svg}text"))
    assert "same colour = same structure" in text
    assert "conv1 × 2" in text
    assert "control dependency" in text and "data" in text and "reference" in text


def _legend_of(svg: ET.Element) -> ET.Element:
    return next(g for g in svg.iter("{http://www.w3.org/2000/svg}g") if "legend" in classes(g))


def test_legend_rows_of_two_structures_read_differently(mnist_svg: ET.Element) -> None:
    """The default view shows the model's ``conv1``/``conv2`` and, opened, the gradients'
    ``conv1``/``conv2``: two structures, each first seen in a group named ``conv1``.  Two
    legend rows both reading ``conv1 × 2`` told the reader nothing; the second names its
    parent too."""
    legend = _legend_of(mnist_svg)
    rows = [t for t in ("".join(e.itertext()) for e in legend.iter(
        "{http://www.w3.org/2000/svg}text")) if " × " in t]
    assert len(rows) == len(set(rows)), rows
    assert {"conv1 × 2", "gradients/conv1 × 2"} <= set(rows)
    groups = node_groups(mnist_svg, "group")
    assert fill_of(groups["conv1"]) != fill_of(groups["train/gradients/conv1"])


def test_the_legend_box_holds_its_longest_row() -> None:
    """Two alike scopes with 40-character names: the legend's row for them (cut at 36, then
    ``× 2``) runs past a legend box of fixed width (190 pt), out of its border.  (Three ops
    each: a structure of two shares the colour of other repeated structures, unnamed.)"""
    from tensorboard.compat.proto import graph_pb2

    gd = graph_pb2.GraphDef()
    gd.node.add(name="x", op="Placeholder")
    for side in ("left", "right"):
        scope = f"a_rather_long_layer_name_on_the_{side}_hand_side"
        gd.node.add(name=f"{scope}/mul", op="Mul", input=["x", "x"])
        gd.node.add(name=f"{scope}/relu", op="Relu", input=[f"{scope}/mul"])
        gd.node.add(name=f"{scope}/out", op="Identity", input=[f"{scope}/relu"])
    svg = parse(graphviz_tb.load(gd).render(depth=1))
    legend = _legend_of(svg)
    box = [float(v) for v in re.findall(r"-?[\d.]+", legend.find(
        "{http://www.w3.org/2000/svg}path").get("d", ""))[0::2]]  # the outline's x values
    left, right = min(box), max(box)
    texts = list(legend.iter("{http://www.w3.org/2000/svg}text"))
    assert any(" × " in (t.text or "") for t in texts), "the legend lists the alike scopes"
    for t in texts:  # Graphviz centres the table on the box: too wide, it spills both ways
        x = float(t.get("x", 0))
        assert x >= left, t.text
        assert x + 0.55 * 9 * len(t.text or "") <= right, t.text  # 9 pt Helvetica, about


def test_legend_glyphs_draw_with_the_pip_installed_engine(mnist: graphviz_tb.Graph,
                                                          tmp_path: Path) -> None:
    """The legend's line samples are text glyphs.  graphviz-pure (what a pip-only install
    draws PNG with) has a font of its own, and a glyph it lacks comes out as an empty box:
    each non-ASCII glyph of the legend must draw differently from one no font has."""
    from graphviz_tb.layout.engine import pure_executable

    program = pure_executable()
    assert program is not None, "graphviz-pure is a dependency; it must be installed"
    samples = re.findall(r'<TR><TD>([^<]+)</TD><TD ALIGN="LEFT">', mnist.render(format="dot"))
    assert len(samples) == 3  # data, control, reference
    glyphs = sorted({c for text in samples for c in text if not c.isascii()})

    def png(char: str) -> bytes:
        dot = tmp_path / "glyph.dot"
        dot.write_text(f'digraph {{ a [shape=plaintext label="{char}"] }}', encoding="utf-8")
        return subprocess.run([program, "-Tpng", str(dot)], capture_output=True,
                              check=True).stdout

    # Code points no font draws, one per UTF-8 length (a missing glyph's box is as wide as
    # its bytes): unassigned, and private use twice.
    missing = {n: png(c) for n, c in ((2, "\u0378"), (3, "\ue000"), (4, "\U0010fffd"))}
    assert [c for c in glyphs if png(c) == missing[len(c.encode())]] == []


def test_control_edges_are_dashed_and_data_edges_solid(mnist: graphviz_tb.Graph) -> None:
    root = parse(mnist.render(expand=("train",)))
    kinds: dict[str, list[ET.Element]] = {"data": [], "control": [], "ref": []}
    for e in edge_groups(root):
        for kind in kinds:
            if kind in classes(e):
                kinds[kind].append(e)
    assert kinds["control"] and kinds["data"]
    for e in kinds["control"]:
        assert edge_path(e).get("stroke-dasharray"), title(e)
    for e in kinds["data"]:
        assert not edge_path(e).get("stroke-dasharray"), title(e)
    for e in edge_groups(root):
        assert "->" in title(e)
        src, dst = title(e).split("->", 1)
        assert src and dst


def test_edges_are_labelled_with_shapes(mnist: graphviz_tb.Graph) -> None:
    root = parse(mnist.render(expand=("input", "conv1")))
    labels = {"".join(t.itertext()) for e in edge_groups(root)
              for t in e.iter("{http://www.w3.org/2000/svg}text")}
    assert "?×784" in labels
    assert any(re.fullmatch(r"\d+ tensors", t) for t in labels)
    assert "scalar" in labels and "?×28×28×1" in labels


def test_expanded_groups_hold_their_ops_without_overlap(mnist: graphviz_tb.Graph) -> None:
    root = parse(mnist.render(depth=2))
    groups = node_groups(root, "group")
    assert "expanded" in classes(groups["conv1"])
    ops = node_groups(root, "op")
    assert "conv1/Conv2D" in ops and "conv1/Relu" in ops
    assert_no_overlaps(root)


def test_no_overlaps_when_everything_is_open(mnist: graphviz_tb.Graph) -> None:
    root = parse(mnist.render(expand_all=True))
    ops = node_groups(root, "op")
    assert len(ops) > 200
    assert_no_overlaps(root)


def test_auxiliary_nodes_leave_stubs_and_can_be_kept(mnist_svg: ET.Element,
                                                     mnist: graphviz_tb.Graph) -> None:
    stubs = [title(g) for g in node_groups(mnist_svg, "stub").values()]
    assert "init" in stubs or "save" in stubs
    kept = parse(mnist.render(aux=False))
    assert not node_groups(kept, "stub")
    init_edges = [e for e in edge_groups(kept) if title(e).startswith(("init->", "save->"))
                  or "->init" in title(e) or "->save" in title(e)]
    assert init_edges, "with --no-aux the bookkeeping edges are drawn in full"


def test_render_is_deterministic(mnist: graphviz_tb.Graph) -> None:
    fresh = graphviz_tb.load(SAMPLES / "mnist_tf1.pb")
    assert mnist.render(depth=2) == fresh.render(depth=2)


@pytest.mark.parametrize(("fmt", "magic"), [("png", b"\x89PNG\r\n\x1a\n"), ("pdf", b"%PDF-")])
def test_png_and_pdf_are_written(mnist: graphviz_tb.Graph, tmp_path: Path, fmt: str,
                                 magic: bytes) -> None:
    out = tmp_path / f"mnist.{fmt}"
    mnist.render(out)
    data = out.read_bytes()
    assert data.startswith(magic) and len(data) > 10_000
    if fmt == "pdf":
        assert data.rstrip().endswith(b"%%EOF")


def test_dot_output_is_valid_graphviz(mnist: graphviz_tb.Graph, tmp_path: Path) -> None:
    out = tmp_path / "mnist.dot"
    mnist.render(out, depth=2)
    proc = subprocess.run(["neato", "-n2", "-Tsvg", str(out)], capture_output=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert parse(proc.stdout.decode()).tag.endswith("svg")


def test_focus_draws_only_a_neighbourhood(mnist: graphviz_tb.Graph) -> None:
    root = parse(mnist.render(focus="loss/cross_entropy", radius=1))
    drawn = set(node_groups(root, "op")) | set(node_groups(root, "group"))
    assert "loss/cross_entropy" in drawn
    assert "conv1" not in drawn and "train" not in drawn


@pytest.mark.parametrize("rankdir", ["TB", "LR"])
def test_rankdir_changes_the_flow(mnist: graphviz_tb.Graph, rankdir: str) -> None:
    root = parse(mnist.render(rankdir=rankdir))
    groups = node_groups(root, "group")
    inp, train = bbox(groups["input"]), bbox(groups["train"])
    if rankdir == "TB":
        assert inp[1] < train[1], "inputs at the top"
    else:
        assert inp[0] < train[0], "inputs at the left"


def test_default_puts_inputs_at_the_bottom(mnist_svg: ET.Element) -> None:
    groups = node_groups(mnist_svg, "group")
    assert bbox(groups["input"])[1] > bbox(groups["loss"])[1]


def test_color_by_op_gives_a_legend_of_op_types(mnist: graphviz_tb.Graph) -> None:
    root = parse(mnist.render(depth=2, color_by="op"))
    legend = next(g for g in root.iter("{http://www.w3.org/2000/svg}g")
                  if "legend" in classes(g))
    text = " ".join("".join(t.itertext()) for t in legend.iter("{http://www.w3.org/2000/svg}text"))
    assert "colour = op type" in text and "Conv2D" in text
    ops = node_groups(root, "op")
    assert fill_of(ops["conv1/Conv2D"]) == fill_of(ops["conv2/Conv2D"])
    assert fill_of(ops["conv1/Conv2D"]) != fill_of(ops["conv1/Relu"])


def test_dark_theme(mnist: graphviz_tb.Graph) -> None:
    root = parse(mnist.render(theme="dark"))
    background = next(p for p in root.iter("{http://www.w3.org/2000/svg}polygon"))
    assert background.get("fill", "").lower() == "#1e1f22"


def test_function_calls_open_into_bodies() -> None:
    graph = graphviz_tb.load(SAMPLES / "control_flow_v2.pb")
    root = parse(graph.render(expand_all=True))
    groups = node_groups(root, "group")
    kinds = {name: classes(g) for name, g in groups.items()}
    assert any(name.endswith("/body") for name in kinds), kinds
    assert any(name.endswith("/cond") for name in kinds)
    assert any(name.endswith("/then") for name in kinds) and any(
        name.endswith("/else") for name in kinds)
    assert all("function" in kinds[n] for n in kinds if n.endswith(("/body", "/then")))
    assert_no_overlaps(root)


def test_recursive_functions_are_cut_with_a_visible_marker(tmp_path: Path) -> None:
    from tensorboard.compat.proto import graph_pb2

    g = graph_pb2.GraphDef()
    x = g.node.add(name="x", op="Placeholder")
    x.attr["dtype"].type = 1
    call = g.node.add(name="call", op="StatefulPartitionedCall", input=["x"])
    call.attr["f"].func.name = "f"
    f = g.library.function.add()
    f.signature.name = "f"
    f.signature.input_arg.add(name="a", type=1)
    f.signature.output_arg.add(name="out", type=1)
    inner = f.node_def.add(name="again", op="StatefulPartitionedCall", input=["a"])
    inner.attr["f"].func.name = "f"
    f.ret["out"] = "again:output:0"
    path = tmp_path / "recursive.pb"
    path.write_bytes(g.SerializeToString())
    graph = graphviz_tb.load(path)
    assert any("recursively" in w for w in graph.model.warnings.lines())
    root = parse(graph.render(expand_all=True))
    cut = node_groups(root, "recursion-cut")
    assert list(cut) == ["call/again"]
    assert len(list(cut["call/again"].iter("{http://www.w3.org/2000/svg}ellipse"))) == 2


def test_oversized_groups_open_in_sections(tmp_path: Path) -> None:
    from tensorboard.compat.proto import graph_pb2

    g = graph_pb2.GraphDef()
    g.node.add(name="c", op="Const")
    for i in range(1000):
        g.node.add(name=f"wide/neg_{i}", op="Neg", input=["c"])
        g.node.add(name=f"wide/abs{i}", op="Abs", input=[f"wide/neg_{i}"])
    path = tmp_path / "wide.pb"
    path.write_bytes(g.SerializeToString())
    graph = graphviz_tb.load(path)
    h = graph.hierarchy(graphviz_tb.RenderOptions(series=False, prefix_groups=False))
    wide = h.groups["wide"]
    assert [c.kind for c in wide.children] == ["section"] * 10
    # In the order of their numbers, not of their names ("[1001–1200 …" sorts before "[201…").
    assert [c.label for c in wide.children] == [
        f"[{i * 200 + 1}–{i * 200 + 200} of 2000]" for i in range(10)]
    # Dealt out in dataflow order (each neg_i before the abs_i it feeds), numbers compared as
    # numbers among the ready: neg_0, abs0 … neg_99, abs99 first, not abs0, abs1, abs10 …
    first = {c.name for c in wide.children[0].children}
    assert first == {f"wide/{op}{i}" for i in range(100) for op in ("neg_", "abs")}
    assert all(len(c.children) == 200 for c in wide.children)
    assert sum(c.op_count for c in wide.children) == 2000
    root = parse(graph.render(series=False, prefix_groups=False, expand=("wide",)))
    sections = [n for n, el in node_groups(root, "group").items() if "section" in classes(el)]
    assert len(sections) == 10
    assert_no_overlaps(root)


def test_groups_too_wide_for_dot_fall_back_to_rows(mnist: graphviz_tb.Graph,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from graphviz_tb.layout import dot_layout, rows

    monkeypatch.setattr(rows, "_MAX_WIDTH", 100.0)  # every wide, flat group takes the fallback
    monkeypatch.setattr(dot_layout, "_cache", dot_layout.LayoutCache())
    root = parse(mnist.render(expand_all=True))
    assert len(node_groups(root, "op")) > 200
    assert_no_overlaps(root)

