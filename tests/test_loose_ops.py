"""Ops with no scope of their own join the group they serve, in training steps only.

Small GraphDefs written the way TF2 names a traced training step (no TensorFlow needed), and a
flat TF1-style graph whose top-level ops are the user's own, which must stay where they are.
"""

from __future__ import annotations

from typing import Any

from tensorboard.compat.proto import graph_pb2

import graphviz_tb


def _node(gd: Any, name: str, op: str, *inputs: str, dtype: int | None = None) -> None:
    node = gd.node.add(name=name, op=op, input=list(inputs))
    if dtype is not None:
        node.attr["dtype"].type = dtype


def _step(layers: int = 4) -> Any:
    """model/layer_i, gradient_tape/model/layer_i mirroring it (with a top-level ``AddN_i``
    summing the two gradient paths into each), an optimizer ``adam`` reading the gradients,
    its unused slot initialisers ``zeros_i``, and the step's input and result."""
    gd = graph_pb2.GraphDef()
    _node(gd, "images", "Placeholder", dtype=1)
    previous = "images"
    for i in range(layers):
        _node(gd, f"model/layer_{i}/MatMul", "MatMul", previous)
        _node(gd, f"model/layer_{i}/Relu", "Relu", f"model/layer_{i}/MatMul")
        previous = f"model/layer_{i}/Relu"
    _node(gd, "loss/Mean", "Mean", previous)
    grad = "loss/Mean"
    for i in reversed(range(layers)):
        _node(gd, f"gradient_tape/model/layer_{i}/ReluGrad", "ReluGrad", grad,
              f"model/layer_{i}/Relu")
        _node(gd, f"gradient_tape/model/layer_{i}/MatMul_1", "MatMul",
              f"gradient_tape/model/layer_{i}/ReluGrad")
        _node(gd, f"gradient_tape/model/layer_{i}/MatMul_2", "MatMul",
              f"gradient_tape/model/layer_{i}/ReluGrad")
        _node(gd, f"AddN_{i}" if i else "AddN", "AddN", f"gradient_tape/model/layer_{i}/MatMul_1",
              f"gradient_tape/model/layer_{i}/MatMul_2")
        grad = f"AddN_{i}" if i else "AddN"
        _node(gd, f"adam/update_{i}", "AssignSubVariableOp",
              f"gradient_tape/model/layer_{i}/MatMul_2")
        _node(gd, f"zeros_{i}" if i else "zeros", "Const")
    _node(gd, "Identity", "Identity", "loss/Mean")
    return gd


def test_gradient_sums_join_the_gradients_of_the_layers_they_sum() -> None:
    h = graphviz_tb.load(_step()).hierarchy()
    top = sorted(m.name for m in h.root.children)
    assert top == ["Identity", "adam", "gradient_tape", "images", "loss", "model"]
    # Each sum joins the lowest scope holding what it sums and what it feeds: the mirror of
    # the model when those are two layers, the layer's own when it feeds nothing else.
    assert h.ops["AddN"].parent is h.groups["gradient_tape/model/layer_0"]
    for i in range(1, 4):
        assert h.ops[f"AddN_{i}"].parent is h.groups["gradient_tape/model"]
    parts = h.training[h.root]
    assert (parts.gradients.name, parts.optimizer.name, parts.model.name) == (
        "gradient_tape", "adam", "model")


def test_slot_initialisers_join_the_optimizer_and_the_model_opens_first() -> None:
    graph = graphviz_tb.load(_step())
    h = graph.hierarchy()
    for i in range(4):
        assert h.ops[f"zeros_{i}" if i else "zeros"].parent is h.groups["adam"]
    from graphviz_tb.view.opening import auto_open

    opened = {g.name for g in auto_open(h, 40)}
    assert "model" in opened
    assert not {"adam", "gradient_tape"} & opened


def test_a_flat_graph_keeps_its_loose_ops() -> None:
    """Without a ``gradient_tape`` the top-level ops are the user's: a TF1 graph with a few
    scopes between flat ops keeps them all where they are."""
    gd = graph_pb2.GraphDef()
    _node(gd, "x", "Placeholder", dtype=1)
    _node(gd, "conv1/Conv2D", "Conv2D", "x")
    _node(gd, "relu", "Relu", "conv1/Conv2D")
    _node(gd, "pool", "MaxPool", "relu")
    _node(gd, "fc/MatMul", "MatMul", "pool")
    _node(gd, "softmax", "Softmax", "fc/MatMul")
    h = graphviz_tb.load(gd).hierarchy()
    assert sorted(m.name for m in h.root.children) == [
        "conv1", "fc", "pool", "relu", "softmax", "x"]
    assert h.training == {}


def test_a_custom_gradient_joins_the_gradients() -> None:
    """A custom gradient's loose chain (EfficientNet's swish) recomputes from the model and
    feeds the gradients: all of it joins the gradients, the later of the two, so no edge of
    the top level runs backwards and no loop appears.  An op reading the model and feeding
    nothing (a dead ``zeros_like``) joins the model."""
    gd = _step(2)
    _node(gd, "Sigmoid", "Sigmoid", "model/layer_0/MatMul")
    _node(gd, "mul", "Mul", "Sigmoid", "gradient_tape/model/layer_1/MatMul_1")
    _node(gd, "mul_1", "Mul", "mul", "Sigmoid")
    _node(gd, "gradient_tape/model/layer_0/swish_grad", "Identity", "mul_1")
    _node(gd, "zeros_like", "ZerosLike", "model/layer_1/Relu")
    graph = graphviz_tb.load(gd)
    h = graph.hierarchy()
    tape = h.groups["gradient_tape"]
    for name in ("Sigmoid", "mul", "mul_1"):
        assert tape in h.ops[name].ancestors(), name
    assert h.ops["zeros_like"].parent is h.groups["model/layer_1"]
    from test_first_picture import _boxes_on_cycles as _on_cycles
    from test_first_picture import _picture

    from graphviz_tb.options import RenderOptions

    for depth in (1, 2, 3):
        assert _on_cycles(_picture(graph, RenderOptions(depth=depth))) == []
