"""Live objects from a notebook: tf.Graph, GraphDef, tf.function, ConcreteFunction, Keras."""

from __future__ import annotations

import pytest

from graphviz_tb.errors import InputError
from graphviz_tb.options import LoadOptions
from graphviz_tb.read import TensorSpec, discover_object, select

pytestmark = pytest.mark.tensorflow


def _graph(tf):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None, 3], name="x")
        with tf.name_scope("block"):
            tf.nn.relu(x * 2.0, name="act")
    return graph


def test_tf_graph(tf):
    graph = _graph(tf)
    discovery = discover_object(graph)
    assert discovery.source_kind == "live"
    loaded = select(discovery, LoadOptions()).load()
    assert len(loaded.node) == len(graph.as_graph_def().node)
    assert "_output_shapes" in loaded.node[0].attr  # add_shapes=True


@pytest.mark.parametrize("which", ["tensorflow", "tensorboard"])
def test_graphdef_protos_of_either_package(tf, which):
    graph_def = _graph(tf).as_graph_def()
    if which == "tensorboard":
        from tensorboard.compat.proto.graph_pb2 import GraphDef

        graph_def = GraphDef.FromString(graph_def.SerializeToString())
    loaded = select(discover_object(graph_def), LoadOptions()).load()
    assert [n.name for n in loaded.node] == [n.name for n in graph_def.node]


def test_tf_function_with_input_signature(tf):
    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32, name="features")])
    def scale(features):
        return {"scaled": features * 3.0}

    source = select(discover_object(scale), LoadOptions())
    concrete = scale.get_concrete_function()
    assert len(source.load().node) == len(concrete.graph.as_graph_def().node)
    assert source.inputs == (TensorSpec("features", "features:0", "float32", (None, 4)),)
    assert [o.name for o in source.outputs] == ["scaled"]


def test_tf_function_uses_the_latest_trace(tf):
    @tf.function
    def add_one(v):
        return v + 1

    add_one(tf.ones([2]))
    add_one(tf.ones([2, 5]))
    source = select(discover_object(add_one), LoadOptions())
    assert source.inputs[0].shape == (2, 5)


def test_untraced_tf_function_says_what_to_do(tf):
    @tf.function
    def never(v):
        return v

    with pytest.raises(InputError, match="input_signature"):
        discover_object(never)


def test_concrete_function(tf):
    variable = tf.Variable(2.0)

    @tf.function
    def mul(v):
        return v * variable

    concrete = mul.get_concrete_function(tf.TensorSpec([3], tf.float32))
    source = select(discover_object(concrete), LoadOptions())
    assert len(source.load().node) == len(concrete.graph.as_graph_def().node)
    assert len(source.inputs) == 1  # the captured variable is not a user input
    assert source.outputs[0].shape == (3,)


def test_keras_model_op_graph_and_conceptual_graph(reader_keras):
    model = reader_keras["keras"].extra["model"]
    discovery = discover_object(model)
    assert [g.kind for g in discovery.graphs] == ["op", "conceptual"]
    op = select(discovery, LoadOptions())
    assert op.kind == "op"
    assert [(s.name, s.shape) for s in op.inputs] == [("x", (None, 4)), ("y", (None, 6))]
    assert op.outputs[0].shape == (None, 2)
    assert len(discovery.graphs[1].load().node) == reader_keras["keras"].nodes


def test_unbuilt_keras_model(tf):
    import keras

    model = keras.Sequential([keras.layers.Dense(2)])
    with pytest.raises(InputError, match="is not built"):
        discover_object(model)


def test_unknown_object():
    with pytest.raises(InputError, match="cannot draw an object of type dict"):
        discover_object({"node": []})
