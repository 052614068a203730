"""Keras model configs as conceptual graphs: Keras 3 files and callback, and Keras 2 configs."""

from __future__ import annotations

import json
import zipfile

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphviz_tb.errors import InputError
from graphviz_tb.options import LoadOptions
from graphviz_tb.read import discover, select
from graphviz_tb.read.keras_config import ConfigError, to_graph_def

NESTED_NODES = {
    "x": ("InputLayer", []),
    "fc": ("Dense", ["x"]),
    "inner/input_layer": ("InputLayer", ["fc"]),
    "inner/d1": ("Dense", ["inner/input_layer"]),
    "inner/d2": ("Dense", ["inner/d1"]),
    "sub/sub_in": ("InputLayer", ["inner/d2"]),
    "sub/a": ("Dense", ["sub/sub_in"]),
    "sub/b": ("Dense", ["sub/sub_in"]),
    "y": ("InputLayer", []),
    "cat": ("Concatenate", ["sub/a", "sub/b", "y"]),
    "pre": ("Dense", ["cat"]),
    "shared": ("Dense", ["cat", "pre"]),  # one node, called twice
    "add": ("Add", ["shared", "shared"]),
}


def _nodes(graph):
    return {n.name: (n.op, list(n.input)) for n in graph.node}


def _shape(node, index=0):
    shape = node.attr["_output_shapes"].list.shape[index]
    return None if shape.unknown_rank else [d.size for d in shape.dim]


@pytest.mark.tensorflow
@pytest.mark.parametrize("key", ["keras", "h5", "json"])
def test_keras3_files_give_the_nested_conceptual_graph(reader_keras, key):
    made = reader_keras[key]
    discovery = discover(made.path)
    assert discovery.source_kind == "keras"
    source = select(discovery, LoadOptions())
    assert (source.kind, source.origin) == ("conceptual", "keras")
    graph = source.load()
    assert len(graph.node) == made.nodes
    assert _nodes(graph) == NESTED_NODES
    by_name = {n.name: n for n in graph.node}
    assert _shape(by_name["x"]) == [-1, 4]
    if key != "h5":  # legacy .h5 configs carry no build_config
        assert _shape(by_name["inner/d1"]) == [-1, 5]  # from the next layer's build_config
    assert _shape(by_name["sub/b"]) == [-1, 3]  # from the keras tensor consumed by "cat"
    fc = by_name["fc"].attr
    assert (fc["units"].s, fc["activation"].s, fc["dtype"].type) == (b"8", b"relu", 1)


@pytest.mark.tensorflow
def test_keras_archive_offers_the_traced_op_graph(reader_keras):
    discovery = discover(reader_keras["keras"].path)
    op = discovery.graphs[1]
    assert (op.kind, op.origin) == ("op", "keras")
    graph = op.load()
    ops = {n.op for n in graph.node}
    assert {"MatMul", "BiasAdd", "ConcatV2", "Placeholder"} <= ops
    assert {"x", "y"} <= {n.name for n in graph.node if n.op == "Placeholder"}


def test_keras2_functional_config():
    """The list-of-lists inbound_nodes format of tf.keras 2, with a tensor in a kwarg."""
    config = {
        "class_name": "Functional",
        "config": {
            "name": "model",
            "layers": [
                {"class_name": "InputLayer", "name": "input_1", "inbound_nodes": [],
                 "config": {"batch_input_shape": [None, 4], "dtype": "float32",
                            "name": "input_1"}},
                {"class_name": "Dense", "name": "dense",
                 "config": {"name": "dense", "units": 3, "activation": "relu",
                            "dtype": "float32", "kernel_size": None},
                 "inbound_nodes": [[["input_1", 0, 0, {}]]]},
                {"class_name": "Sequential", "name": "seq",
                 "config": {"name": "seq", "layers": [
                     {"class_name": "Dense", "config": {"name": "dense_1", "units": 2,
                                                        "batch_input_shape": [None, 3]}},
                     {"class_name": "Dropout", "config": {"name": "drop", "rate": 0.5}}]},
                 "inbound_nodes": [[["dense", 0, 0, {}]]]},
                {"class_name": "TFOpLambda", "name": "tf.math.multiply",
                 "config": {"name": "tf.math.multiply", "function": "math.multiply"},
                 "inbound_nodes": [["seq", 0, 0, {"y": ["dense", 0, 0], "name": None}]]},
            ],
            "input_layers": [["input_1", 0, 0]],
            "output_layers": [["tf.math.multiply", 0, 0]],
        },
        "keras_version": "2.15.0",
        "backend": "tensorflow",
    }
    graph = to_graph_def(json.dumps(config))
    assert _nodes(graph) == {
        "input_1": ("InputLayer", []),
        "dense": ("Dense", ["input_1"]),
        "seq/dense_1_input": ("InputLayer", ["dense"]),
        "seq/dense_1": ("Dense", ["seq/dense_1_input"]),
        "seq/drop": ("Dropout", ["seq/dense_1"]),
        "tf.math.multiply": ("TFOpLambda", ["seq/drop", "dense"]),
    }
    by_name = {n.name: n for n in graph.node}
    assert _shape(by_name["input_1"]) == [-1, 4]
    assert _shape(by_name["seq/dense_1_input"]) == [-1, 3]
    assert "function" not in by_name["tf.math.multiply"].attr
    assert "kernel_size" not in by_name["dense"].attr  # None values are left out


def test_old_sequential_config_is_a_list():
    config = {"class_name": "Sequential", "config": [
        {"class_name": "Dense", "config": {"name": "d", "batch_input_shape": [None, 2]}},
        {"class_name": "Activation", "config": {"name": "act", "activation": "tanh"}}]}
    assert _nodes(to_graph_def(config)) == {
        "d_input": ("InputLayer", []), "d": ("Dense", ["d_input"]),
        "act": ("Activation", ["d"])}


def test_lambda_layer_is_never_executed():
    config = {"class_name": "Sequential", "config": {"name": "s", "layers": [
        {"class_name": "Lambda", "config": {
            "name": "boom", "function": {"class_name": "__lambda__", "config": {
                "code": "4wEAAAAAAAAAAAAAAAEAAAADAAAAQwAAAHMEAAAAfABTAKkBTqkA"}},
            "arguments": {}}}]}}
    (node,) = to_graph_def(config).node
    assert (node.name, node.op) == ("boom", "Lambda")
    assert "function" not in node.attr


def test_not_a_model_config(tmp_path):
    with pytest.raises(ConfigError, match="config of a Dense lists no layers"):
        to_graph_def({"class_name": "Dense", "config": {"name": "d", "units": 3}})
    path = tmp_path / "layer.json"
    path.write_text(json.dumps({"class_name": "MyModel", "config": {"name": "m"}}))
    # Listed, so a file's other graphs stay in reach; refused in one line when chosen.
    source = select(discover(path), LoadOptions())
    with pytest.raises(InputError, match=r"layer\.json: the Keras config of a MyModel lists no "):
        source.load()


def test_keras_archive_without_tensorflow_reading(tmp_path):
    """A .keras archive's conceptual graph comes from config.json alone."""
    path = tmp_path / "tiny.keras"
    config = {"class_name": "Sequential", "config": {"name": "s", "layers": [
        {"class_name": "InputLayer", "config": {"name": "in", "batch_shape": [None, 2]}},
        {"class_name": "Dense", "config": {"name": "out", "units": 1}}]}}
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("config.json", json.dumps(config))
        archive.writestr("metadata.json", "{}")
    discovery = discover(path)
    assert _nodes(select(discovery, LoadOptions()).load()) == {
        "in": ("InputLayer", []), "out": ("Dense", ["in"])}


_names = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)


@given(st.lists(_names, min_size=1, max_size=8, unique=True))
def test_hostile_layer_names_chain_in_order(names):
    layers = [{"class_name": "Dense", "config": {"name": name, "units": 1},
               "build_config": {"input_shape": [None, 3]}} for name in names]
    graph = to_graph_def({"class_name": "Sequential", "config": {"name": "s", "layers": layers}})
    assert [n.name for n in graph.node] == names
    assert [list(n.input) for n in graph.node] == [[], *[[name] for name in names[:-1]]]
