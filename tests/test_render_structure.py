"""Structure colours and grouping on graphs traced by TensorFlow in this session.

Keras 3 puts every layer of a ResNet-50 directly under the model scope; prefix groups must
turn that into stages and blocks, identical blocks must share a colour, and a run of identical
numbered blocks must fold into one series.  Identical bodies of different functions are
identical structure too.
"""

from __future__ import annotations

import glob
import re
from pathlib import Path
from typing import Any

import pytest
from svgparse import fill_of, node_groups, parse

import graphviz_tb
from graphviz_tb.model.graph import node_def_of
from graphviz_tb.style import UNIQUE_COLOR

pytestmark = [pytest.mark.tensorflow, pytest.mark.dot]


@pytest.fixture(scope="module")
def resnet50(tf: Any, tmp_path_factory: pytest.TempPathFactory) -> graphviz_tb.Graph:
    """ResNet-50 (random weights) inference traced as a tf.function, as Keras 3 writes it."""
    import keras

    model = keras.applications.ResNet50(weights=None)

    @tf.function
    def infer(images: Any) -> Any:
        return model(images, training=False)

    concrete = infer.get_concrete_function(tf.TensorSpec([None, 224, 224, 3], tf.float32))
    path = Path(tmp_path_factory.mktemp("resnet")) / "resnet50.pb"
    path.write_bytes(concrete.graph.as_graph_def().SerializeToString())
    return graphviz_tb.load(path)


def test_resnet_opens_as_stages_then_blocks(resnet50: graphviz_tb.Graph) -> None:
    h = resnet50.hierarchy()
    model_scope = next(g for g in h.root.children if g.is_group and g.op_count > 1000)
    stages = {c.label for c in model_scope.children if c.is_group}
    assert {"conv2", "conv3", "conv4", "conv5"} <= stages
    conv3 = next(c for c in model_scope.children if c.label == "conv3")
    assert [c.label for c in conv3.children] == [f"conv3_block{i}" for i in range(1, 5)]


def test_identical_resnet_blocks_share_a_colour(resnet50: graphviz_tb.Graph) -> None:
    root = parse(resnet50.render(expand=("*conv2", "*conv3", "*conv5")))
    groups = {name.rsplit("/", 1)[-1]: g for name, g in node_groups(root, "group").items()}
    identity = {fill_of(groups[f"conv{s}_block{b}"]) for s, b in
                [(2, 2), (2, 3), (3, 2), (3, 3), (3, 4), (5, 2), (5, 3)]}
    projection = {fill_of(groups[f"conv{s}_block1"]) for s in (2, 3, 5)}
    assert len(identity) == 1 and len(projection) == 1
    assert identity != projection
    assert UNIQUE_COLOR["light"] not in identity | projection


def test_identical_numbered_blocks_fold_into_a_series(resnet50: graphviz_tb.Graph) -> None:
    root = parse(resnet50.render(expand=("*conv4",)))
    series = [name for name in node_groups(root, "series")]
    assert any(name.endswith("conv4_block[2-6]") for name in series), series
    block = parse(resnet50.render(expand=("*conv2",)))
    identity = fill_of(node_groups(block, "group")[
        next(n for n in node_groups(block, "group") if n.endswith("conv2_block2"))])
    assert fill_of(node_groups(root, "series")[series[0]]) == identity


def test_alike_bodies_of_different_functions_share_a_colour(tf: Any, tmp_path: Path) -> None:
    """Keras 2 gives every layer's branch a function of its own: structure is the body, not
    the function's name, so identical bodies of two functions are coloured alike."""

    def body(x: Any) -> Any:
        return tf.nn.relu(tf.matmul(x, x) + 1.0)

    first, second = tf.function(body), tf.function(body)  # two functions, one body

    @tf.function
    def model(x: Any) -> Any:
        with tf.name_scope("a"):
            y = first(x)
        with tf.name_scope("b"):
            return second(y)

    concrete = model.get_concrete_function(tf.TensorSpec([3, 3], tf.float32))
    path = tmp_path / "two_functions.pb"
    path.write_bytes(concrete.graph.as_graph_def().SerializeToString())
    graph = graphviz_tb.load(path)
    h = graph.hierarchy()
    bodies = sorted((g for g in h.groups.values() if g.kind == "function"), key=lambda g: g.name)
    assert [g.name for g in bodies] == ["a/PartitionedCall", "b/PartitionedCall"]
    assert bodies[0].function != bodies[1].function
    groups = node_groups(parse(graph.render(expand_all=True)), "group")
    fills = {fill_of(groups[g.name]) for g in bodies}
    assert len(fills) == 1 and UNIQUE_COLOR["light"] not in fills


def test_recurrent_layers_open_into_their_loop_bodies(tf_made: dict[str, Path]) -> None:
    """Keras runs a GRU and an LSTM as ``While`` ops: each opens into its condition and its
    body, and the body holds the cell's matrix products, fed by the loop's arguments."""
    graph = graphviz_tb.load(tf_made["keras_rnn"])
    h = graph.hierarchy()
    g = h.model.g
    loops = sorted(n for n, op in g.nodes(data="op") if op in ("While", "StatelessWhile"))
    # the layer holding each loop, without the suffix Keras adds inside a trace (encoder_1)
    assert [re.sub(r"_\d+$", "", n.rsplit("/", 2)[-2]) for n in loops] == ["decoder", "encoder"]
    for loop in loops:
        group = h.groups[loop]
        assert group.kind == "function"
        assert {c.label for c in group.children if hasattr(c, "kind")} >= {"cond", "body"}
        body = h.groups[f"{loop}/body"]
        inside = {m.name for m in body.walk() if not hasattr(m, "kind")}
        products = [n for n in inside if g.nodes[n]["op"] == "MatMul"]
        assert len(products) >= 2, f"{loop}: the cell's kernels are not in its body"
        for product in products:
            feeders = set()
            stack = [product]
            while stack:  # what feeds it, within the body
                for u in g.predecessors(stack.pop()):
                    if u in inside and u not in feeders:
                        feeders.add(u)
                        stack.append(u)
            assert any(h.ops[u].role == "arg" for u in feeders), product


def test_a_closed_loop_is_captioned_by_its_body(tf_made: dict[str, Path]) -> None:
    """A closed ``While`` box names the function it repeats, its body, first: the condition
    (``..._while_cond_...``) says only when it stops, and the caption is cut after one name."""
    graph = graphviz_tb.load(tf_made["keras_rnn"])
    g = graph.model.g
    loops = sorted(n for n, op in g.nodes(data="op") if op in ("While", "StatelessWhile"))
    node_def = {n: node_def_of(g.nodes[n]) for n in loops}
    h = graph.hierarchy()
    around = sorted({a.name for n in loops for a in h.groups[n].ancestors() if a.name})
    root = parse(graph.render(expand=tuple(glob.escape(a) for a in around)))
    drawn = node_groups(root, "group")
    for loop in loops:
        body = node_def[loop].attr["body"].func.name
        texts = [t.text or "" for t in drawn[loop].iter("{http://www.w3.org/2000/svg}text")]
        caption = next(t for t in texts if "ƒ" in t)
        named = caption.split("ƒ ", 1)[1].rstrip("…")
        assert body.startswith(named) and "cond" not in named, (loop, caption)


def test_a_tf1_rnn_and_its_gradient_loop_close_only_their_own_loops(
        tf_made: dict[str, Path]) -> None:
    """A TF1 ``while_loop`` trained by Adam has two loops, the RNN and its gradient run
    backwards: the edges from their ``NextIteration`` ops into ``Merge`` close them, and they
    alone are drawn as loops closing, so the rest of the picture points one way."""
    graph = graphviz_tb.load(tf_made["tf1_rnn_training"])
    g = graph.model.g
    back = [(u, v) for u, v, d in g.edges(data=True) if d["back"]]
    nexts = [(u, v) for u, v in g.edges() if g.nodes[u]["op"] == "NextIteration"]
    assert sorted(back) == sorted(nexts)
    assert all(g.nodes[v]["op"] == "Merge" for _, v in back)
    frames = {u.split("/")[0] for u, _ in back}
    assert frames == {"lstm_loop", "gradients"}
    drawn = re.findall(r'class="edge ([^"]*)"', graph.render(expand_all=True))
    assert sum("back" in c.split() for c in drawn) == len(back) > 0
