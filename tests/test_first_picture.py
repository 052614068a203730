"""The first picture shows the architecture: groups that follow the dataflow, opened to an
overview by themselves.

Graphs TensorFlow made (Keras applications with random weights, a Transformer encoder whose
layers have flat names, a TF1 training graph) are drawn with default options and read back from
the SVG through the picture oracle (``picture.py``): which boxes are drawn, in which colour, and
the edges between them.  Property tests then check the rule every grouping we invent obeys, on
graphs nobody designed: it is convex, so the picture of an acyclic graph stays acyclic.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from picture import Picture, read_svg

import graphviz_tb
from graphviz_tb.group.partition import ChildGraph, blocks, cyclic_parts, segments
from graphviz_tb.group.tree import INVENTED, Group
from graphviz_tb.options import RenderOptions

pytestmark = pytest.mark.dot

SAMPLES = Path(__file__).resolve().parents[1] / "samples"


def _picture(graph: graphviz_tb.Graph, options: RenderOptions) -> Picture:
    return read_svg(graph.render(options=options), graph.render(format="dot", options=options))


def _collapsed(pic: Picture) -> list[Any]:
    return [b for b in pic.boxes.values() if b.kind in ("op", "group") and not b.open
            and "aux" not in b.classes]


def _boxes_on_cycles(pic: Picture) -> list[str]:
    """Drawn boxes on a directed cycle of the drawn edges (edges that close loops of the
    model aside: a TF1 while loop is a cycle on purpose)."""
    drawn = nx.DiGraph()
    for e in pic.edges:
        if "back" not in e.classes:
            drawn.add_edge(e.src, e.dst)
    return sorted(pic.boxes[k].name for c in nx.strongly_connected_components(drawn)
                  if len(c) > 1 for k in c)


def _ops(box: Any) -> int:
    found = next((re.search(r"([\d,]+) ops?\b", t) for t in box.texts
                  if re.search(r"([\d,]+) ops?\b", t)), None)
    return int(found.group(1).replace(",", "")) if found else 1


@pytest.mark.tensorflow
@pytest.mark.parametrize("name", ["resnet50", "inception_v3", "transformer", "tf1_training",
                                  "tf2_train_step", "keras_rnn", "map_fn_cond"])
@pytest.mark.parametrize("variant", [{}, {"depth": 2}], ids=["default", "depth=2"])
def test_no_box_lies_on_a_cycle(tf_made: dict[str, Path], name: str,
                                variant: dict[str, Any]) -> None:
    graph = graphviz_tb.load(tf_made[name])
    pic = _picture(graph, RenderOptions(**variant))
    assert _boxes_on_cycles(pic) == []


@pytest.mark.tensorflow
@pytest.mark.parametrize("name", ["resnet50", "inception_v3"])
def test_keras_applications_open_to_their_stages_or_modules(tf_made: dict[str, Path],
                                                            name: str) -> None:
    """Not one grey box: the model scope opens by itself, until no closed box holds more
    than an eighth of the ops."""
    graph = graphviz_tb.load(tf_made[name])
    pic = _picture(graph, RenderOptions())
    collapsed = _collapsed(pic)
    total = graph.hierarchy().root.op_count
    assert 12 <= len(collapsed) <= 40
    assert max(_ops(b) for b in collapsed) <= total / 8
    labels = {b.name.rsplit("/", 1)[-1] for b in collapsed}
    if name == "resnet50":  # every stage opened to its blocks, in the stages drawn open
        assert "conv1" in labels
        for stage in (2, 3, 4, 5):
            assert f"conv{stage}" in {b.name.rsplit("/", 1)[-1] for b in pic.boxes.values()
                                      if b.open}
            assert f"conv{stage}_block1" in labels
    else:  # its eleven modules, each named by the concatenation that closes it
        modules = sorted(int(m.group(1)) for lab in labels
                         if (m := re.fullmatch(r"… mixed(\d+)(_\d+)?", lab)))
        assert modules == list(range(11))


@pytest.mark.tensorflow
def test_identical_inception_modules_share_a_colour(tf_made: dict[str, Path]) -> None:
    graph = graphviz_tb.load(tf_made["inception_v3"])
    pic = _picture(graph, RenderOptions())
    fill = {re.sub(r"_\d+$", "", b.name.rsplit("/", 1)[-1]): b.fill
            for b in _collapsed(pic) if "mixed" in b.name}
    # Keras builds mixed0-2, mixed4-7 and mixed9-10 alike, and 3 and 8 unlike any other.
    assert fill["… mixed0"] == fill["… mixed1"] == fill["… mixed2"] != fill["… mixed4"]
    assert fill["… mixed4"] == fill["… mixed5"] == fill["… mixed6"] == fill["… mixed7"]
    assert fill["… mixed9"] == fill["… mixed10"] not in (fill["… mixed0"], fill["… mixed4"])
    assert fill["… mixed3"] == fill["… mixed8"] == "#dcdcdc"  # unique structure: grey


@pytest.mark.tensorflow
def test_a_flat_named_transformer_shows_its_four_layers_in_order(tf_made: dict[str, Path]
                                                                 ) -> None:
    """Its layers (``mha_i``, ``ln_i``, ``ffn_i_*``, ``ln2_i``, all directly under the model)
    are found from the dataflow, one block each, drawn bottom to top in order."""
    graph = graphviz_tb.load(tf_made["transformer"])
    pic = _picture(graph, RenderOptions())
    layers = {}
    for box in pic.boxes.values():
        found = re.fullmatch(r".*/mha_(\d)(?:_\d+)? … ln2_(\d)(?:_\d+)?", box.name)
        if found and found.group(1) == found.group(2):
            layers[int(found.group(1))] = box
    assert sorted(layers) == [0, 1, 2, 3]
    heights = [layers[i].cy for i in range(4)]
    assert heights == sorted(heights, reverse=True), "inputs at the bottom: layer 0 lowest"
    assert len({layers[i].fill for i in range(4)}) == 1  # four alike layers, one colour


@pytest.mark.tensorflow
def test_a_tf1_training_graph_keeps_its_scopes(tf_made: dict[str, Path]) -> None:
    graph = graphviz_tb.load(tf_made["tf1_training"])
    pic = _picture(graph, RenderOptions())
    names = {b.name for b in pic.boxes.values() if b.kind == "group"}
    assert {"hidden", "softmax_linear", "train"} <= names
    assert not any(g.kind == "block" for g in graph.hierarchy().groups.values())


def test_depth_one_is_the_top_level() -> None:
    graph = graphviz_tb.load(SAMPLES / "keras_cnn.pb")
    h = graph.hierarchy()
    pic = _picture(graph, RenderOptions(depth=1))
    drawn = {b.name for b in pic.boxes.values() if b.kind in ("op", "group")}
    assert drawn == {m.name for m in h.root.children}
    assert not any(b.open for b in pic.boxes.values())
    # ... whereas the default view opens the one scope holding nearly everything.
    assert any(b.open for b in _picture(graph, RenderOptions()).boxes.values())


def _training_graph(cells: int = 6, grads: int = 450) -> Any:
    """A model of ``cells`` alike cells (5 parts of 20 ops each) and a gradient scope of
    ``grads`` ops in a chain, with names that make no series and no prefix group: too many
    children for one layout, so it is cut into sections."""
    from tensorboard.compat.proto import graph_pb2

    gd = graph_pb2.GraphDef()
    gd.node.add(name="images", op="Placeholder")
    previous = "images"
    for c in range(cells):
        for p in range(5):
            for k in range(20):
                name = f"model/cell_{c}/part_{p}/op{k}"
                gd.node.add(name=name, op=("Conv2D", "Relu", "AddV2", "Mul")[k % 4],
                            input=[previous])
                previous = name
    letters = "abcdefghijklmnopqrstuvwxyz"
    for i in range(grads):
        a, b = divmod(i, 26)
        name = f"train/gradients/{letters[a]}{letters[b]}"
        gd.node.add(name=name, op="AddN", input=[previous])
        previous = name
    return gd


def test_the_first_picture_opens_the_model_not_a_scope_cut_into_sections() -> None:
    """NASNet-Large's training step opened ``train/gradients`` (42% of the ops, 607
    children) into three numbered slices, and left the model's cells closed.  A group cut
    into sections opens by itself only when it holds most of the graph."""
    graph = graphviz_tb.load(_training_graph())
    h = graph.hierarchy()
    assert [c.kind for c in h.groups["train/gradients"].children] == ["section"] * 3
    drawn = _drawn(graph)
    assert not [n for n in drawn if "section" in drawn[n].classes]
    assert not drawn["train/gradients"].open
    assert drawn["model/cell_0"].open  # the model opens down to its cells' parts
    # ... unless it holds most of the graph: then its slices beat one box of everything.
    drawn = _drawn(graphviz_tb.load(_training_graph(cells=1, grads=600)))
    assert drawn["train/gradients"].open
    assert [n for n in drawn if "section" in drawn[n].classes] == [
        "train/gradients/[1–200 of 600]", "train/gradients/[201–400 of 600]",
        "train/gradients/[401–600 of 600]"]


def _accumulating_gradients(addns: int = 500) -> Any:
    """A TF1 gradient scope as NASNet-Large's: a model's gradients (one scope) and the
    ``AddN`` ops summing them, each fed by the scope and feeding it back (so all lie on one
    cycle), after three ops and before one."""
    from tensorboard.compat.proto import graph_pb2

    gd = graph_pb2.GraphDef()
    gd.node.add(name="loss", op="Placeholder")
    for name in ("grad_ys_0", "Shape", "Fill"):
        gd.node.add(name=f"train/gradients/{name}", op="Identity", input=["loss"])
    previous = "train/gradients/Fill"
    for i in range(addns):
        grad = f"train/gradients/net/layer_{i}/grad"
        gd.node.add(name=grad, op="Mul", input=[previous])
        gd.node.add(name=f"train/gradients/AddN_{i}" if i else "train/gradients/AddN",
                    op="AddN", input=[grad])
        previous = f"train/gradients/AddN_{i}" if i else "train/gradients/AddN"
    gd.node.add(name="train/gradients/zeros_like", op="ZerosLike", input=[previous])
    return gd


def test_a_group_is_never_cut_into_slivers() -> None:
    """NASNet-Large's ``train/gradients`` (the model's gradients and 606 ``AddN`` on one
    cycle through them) was cut into ``[1–3 of 611]``, ``[4–610 of 611]`` and
    ``[611–611 of 611]``: a level that only hid its 611 children one click deeper.  A section
    of less than a quarter of the size joins its neighbour, and one section is none."""
    h = graphviz_tb.load(_accumulating_gradients()).hierarchy()
    children = h.groups["train/gradients"].children
    assert len(children) == 505
    assert not [c for c in children if getattr(c, "kind", "") == "section"]
    # A chain of 401 ops: two sections of 200 and 201, not a third of one op.
    from tensorboard.compat.proto import graph_pb2

    gd = graph_pb2.GraphDef()
    gd.node.add(name="x", op="Placeholder")
    for i in range(401):
        gd.node.add(name=f"chain/op{i:03d}x", op="Relu", input=[f"chain/op{i - 1:03d}x" if i
                                                             else "x"])
    h = graphviz_tb.load(gd).hierarchy()
    assert [(c.label, c.op_count) for c in h.groups["chain"].children] == [
        ("[1–200 of 401]", 200), ("[201–401 of 401]", 201)]


def _drawn(graph: graphviz_tb.Graph) -> dict[str, Any]:
    """The default view's boxes (ops and groups, open or closed) by full name."""
    pic = _picture(graph, RenderOptions())
    return {b.name: b for b in pic.boxes.values() if b.kind in ("op", "group")}


def test_a_budget_caps_the_first_picture() -> None:
    graph = graphviz_tb.load(SAMPLES / "keras_cnn.pb")
    for budget in (5, 12, 40):
        pic = _picture(graph, RenderOptions(budget=budget))
        assert len(_collapsed(pic)) <= max(budget, len(graph.hierarchy().root.children))


def test_series_of_adds_that_feed_each_other_are_not_formed() -> None:
    """Residual adds spread through a model (``add_1`` feeds ``add_2`` through the layer
    between) are no series: a box holding them all would sit on a loop."""
    from tensorboard.compat.proto import graph_pb2

    gd = graph_pb2.GraphDef()
    gd.node.add(name="x", op="Placeholder")
    previous = "x"
    for i in range(8):
        gd.node.add(name=f"layer_{i}/Relu", op="Relu").input.append(previous)
        gd.node.add(name=f"Add_{i}", op="AddV2").input.extend([previous, f"layer_{i}/Relu"])
        previous = f"Add_{i}"
    parallel = [gd.node.add(name=f"AddN_{i}", op="AddN", input=["x", "x"]).name
                for i in range(6)]
    gd.node.add(name="out", op="Pack").input.extend([previous, *parallel])
    h = graphviz_tb.load(gd).hierarchy()
    series = [g for g in h.groups.values() if g.kind == "series"]
    assert [g.label for g in series if any(c.op == "AddV2" for c in g.children)] == []
    assert any(c.op == "AddN" for g in series for c in g.children)  # parallel ones fold


# --------------------------------------------------------------------------- properties


@st.composite
def dags(draw: Any, max_nodes: int = 40) -> tuple[int, list[tuple[int, int]]]:
    """Random DAGs: edges only from a lower number to a higher one."""
    n = draw(st.integers(2, max_nodes))
    edges = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                          max_size=3 * n))
    return n, sorted({(min(a, b), max(a, b)) for a, b in edges if a != b})


@settings(max_examples=300, deadline=None)
@given(dags(), st.data())
def test_segments_and_blocks_are_convex(dag: tuple[int, list[tuple[int, int]]],
                                        data: Any) -> None:
    n, edges = dag
    starts = data.draw(st.sets(st.integers(0, n - 1), max_size=3))
    ends = data.draw(st.sets(st.integers(0, n - 1), max_size=3))
    g = ChildGraph(n, edges, starts, ends)
    seg = segments(g)
    for a, b in edges:  # every edge runs forward, so no segment can be left and re-entered
        if seg[a] >= 0 and seg[b] >= 0:
            assert seg[a] <= seg[b]
    found = blocks(g, [(i % 3,) for i in range(n)])
    part = [-1] * n
    for k, members in enumerate(found):
        for i in members:
            assert part[i] == -1, "a child in two blocks"
            part[i] = k
    assert cyclic_parts(g, part) == set()


def _names(draw: Any, n: int) -> list[str]:
    """Flat, Keras-like layer names with shared prefixes and numbers (collisions allowed)."""
    bases = ["conv", "conv2d", "dense", "add", "Add", "layer", "block", "mha", "ln"]
    out = []
    for i in range(n):
        base = draw(st.sampled_from(bases))
        tail = draw(st.sampled_from(["", f"_{i % 7}", f"_{i % 3}_x", f"{i % 5}", "_a_b"]))
        out.append(f"m/{base}{tail}_{i}")
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dags(max_nodes=60), st.data())
def test_every_invented_group_is_convex(dag: tuple[int, list[tuple[int, int]]],
                                        data: Any) -> None:
    """Prefix groups, series, sections and blocks, on random graphs with random Keras-like
    names: no path leaves one of them and comes back in."""
    from tensorboard.compat.proto import graph_pb2

    n, edges = dag
    names = _names(data.draw, n)
    gd = graph_pb2.GraphDef()
    inputs: dict[int, list[str]] = {i: [] for i in range(n)}
    for a, b in edges:
        inputs[b].append(names[a])
    for i in range(n):
        gd.node.add(name=names[i], op=data.draw(st.sampled_from(["Relu", "AddV2", "Conv2D"])),
                    input=inputs[i])
    graph = graphviz_tb.load(gd)
    h = graph.hierarchy(RenderOptions(series_min=2))
    model = h.model.graph
    for g in list(h.groups.values()):
        if g.kind not in INVENTED:
            continue
        inside = {m.name for m in g.walk() if not isinstance(m, Group)}
        outside_reached = set()
        for u in inside:
            outside_reached |= {v for v in nx.descendants(model, u) if v not in inside}
        for v in outside_reached:
            assert not set(model.successors(v)) & inside or all(
                s not in inside for s in model.successors(v)), f"{g.name}: {v} re-enters"


def test_a_savedmodel_opens_its_serving_function_not_its_checkpointing() -> None:
    """TF2 SavedModels trace functions that save and restore variables; the first picture
    opens the model's own function, and leaves the bookkeeping closed."""
    graph = graphviz_tb.load(SAMPLES / "saved_model")
    opened = {b.name for b in _picture(graph, RenderOptions()).boxes.values() if b.open}
    functions = {g.name: g.function for g in graph.hierarchy().root.children
                 if isinstance(g, Group)}
    assert "StatefulPartitionedCall" in opened
    assert "signature_wrapper" in functions["StatefulPartitionedCall"]
    assert not any("traced_save" in (functions.get(n) or "") or
                   "traced_restore" in (functions.get(n) or "") for n in opened)
