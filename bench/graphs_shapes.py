"""Synthetic GraphDefs of the shapes that find super-linear paths, at any size.

Real models are one shape each: a few hundred scopes, a few levels deep, names of tens of
characters.  Graphs from the wild are not.  Each function here builds one shape at a given
size, so the scaling bench (bench/scale.py) can double the size and watch the cost, and the
tests (tests/test_scale_shapes.py) can check the result at a small one:

* :func:`deep` -- two ops under ``levels`` nested scopes (``s0/s1/…/sN/x``);
* :func:`wide` -- ``count`` siblings in one group, numbered (``add_1``…) or not (``kqzv``…),
  each fed by the one before and by an input outside the group;
* :func:`prefixes` -- Keras-3-like flat layer names under one model scope, many distinct
  multi-token prefixes (``separable_conv_1_normal_left1_7``);
* :func:`long_names` -- ops whose names are ``length`` characters long;
* :func:`functions` -- a TF2-style library: ``count`` functions, each called by a
  ``StatefulPartitionedCall`` and each calling one shared leaf function.

Only the GraphDef proto (from TensorBoard, a dependency) is needed; no TensorFlow.
"""

from __future__ import annotations

import string
from collections.abc import Iterator

from tensorboard.compat.proto import graph_pb2, node_def_pb2

__all__ = ["deep", "functions", "long_names", "prefixes", "unnumbered_label", "wide"]

_FLOAT = 1  # DT_FLOAT


def _node(graph: graph_pb2.GraphDef, name: str, op: str, *inputs: str
          ) -> node_def_pb2.NodeDef:
    node = graph.node.add(name=name, op=op)
    node.input.extend(inputs)
    node.attr["T"].type = _FLOAT
    return node


def deep(levels: int) -> graph_pb2.GraphDef:
    """An input at the top, then ``x -> y`` under ``levels`` nested scopes ``s0/…/s{N-1}``."""
    graph = graph_pb2.GraphDef()
    scope = "/".join(f"s{i}" for i in range(levels))
    _node(graph, "input", "Placeholder")
    _node(graph, f"{scope}/x", "Identity", "input")
    _node(graph, f"{scope}/y", "Relu", f"{scope}/x")
    return graph


def deep_changed(levels: int) -> graph_pb2.GraphDef:
    """:func:`deep` as a later version: its ``Relu`` now a ``Tanh``, and a ``Sigmoid`` added
    after it, at the bottom of the nesting (a diff's other side)."""
    graph = deep(levels)
    scope = graph.node[-1].name.rpartition("/")[0]
    graph.node[-1].op = "Tanh"
    _node(graph, f"{scope}/z", "Sigmoid", f"{scope}/y")
    return graph


def unnumbered_label(i: int) -> str:
    """A distinct lower-case name with no digit and no ``_`` (no series, no prefix)."""
    letters = string.ascii_lowercase
    out = []
    i += 26 ** 3  # every label four letters or more
    while i:
        i, r = divmod(i, 26)
        out.append(letters[r])
    return "".join(reversed(out))


def wide(count: int, numbered: bool = True) -> graph_pb2.GraphDef:
    """``count`` sibling ops in group ``wide``: a chain, each also reading ``input``."""
    graph = graph_pb2.GraphDef()
    _node(graph, "input", "Placeholder")
    previous = "input"
    for i in range(count):
        name = f"wide/add_{i + 1}" if numbered else f"wide/{unnumbered_label(i)}"
        _node(graph, name, "AddV2", previous, "input")
        previous = name
    _node(graph, "output", "Identity", previous)
    return graph


#: Keras 3 layer names inside a NASNet cell: layer kind, branch, then the cell number.
_LAYERS = ("separable_conv_1", "separable_bn_1", "activation", "separable_conv_2",
           "separable_bn_2")
_BRANCHES = ("normal_left1", "normal_right1", "normal_left2", "normal_right2", "adjust_conv")


def prefixes(cells: int) -> graph_pb2.GraphDef:
    """``cells`` × 25 layer scopes directly under ``model`` (2 ops each), named as Keras 3
    names the layers of a NASNet cell (``separable_bn_1_normal_left1_12``), chained."""
    graph = graph_pb2.GraphDef()
    _node(graph, "input", "Placeholder")
    previous = "input"
    for cell in range(cells):
        for branch in _BRANCHES:
            for layer in _LAYERS:
                scope = f"model/{layer}_{branch}_{cell}"
                _node(graph, f"{scope}/ReadVariableOp", "ReadVariableOp")
                _node(graph, f"{scope}/BiasAdd", "BiasAdd", previous,
                      f"{scope}/ReadVariableOp")
                previous = f"{scope}/BiasAdd"
    _node(graph, "output", "Identity", previous)
    return graph


def _long_component(tag: str, length: int) -> str:
    return (tag + "_" + "long" * length)[:length]


def long_names(length: int, groups: int = 20, per_group: int = 25) -> graph_pb2.GraphDef:
    """``groups`` × ``per_group`` ops, each name about ``length`` characters: two scope
    components of ``length // 2``, then a short op name; each op reads the one before."""
    graph = graph_pb2.GraphDef()
    half = length // 2
    outer = _long_component("outer", half)
    previous = _node(graph, "input", "Placeholder").name
    for g in range(groups):
        inner = _long_component(f"inner{g}", half)
        for i in range(per_group):
            previous = _node(graph, f"{outer}/{inner}/op{i}", "Relu", previous).name
    return graph


def _function(library: graph_pb2.FunctionDefLibrary, name: str, calls: str | None) -> None:
    """``y = relu(x * c)``, and with ``calls`` its result passed through that function."""
    f = library.function.add()
    f.signature.name = name
    f.signature.input_arg.add(name="x", type=_FLOAT)
    f.signature.output_arg.add(name="y", type=_FLOAT)
    c = f.node_def.add(name="c", op="Const")
    c.attr["dtype"].type = _FLOAT
    mul = f.node_def.add(name="mul", op="Mul")
    mul.input.extend(["x", "c:output:0"])
    relu = f.node_def.add(name="relu", op="Relu")
    relu.input.append("mul:z:0")
    out = "relu:activations:0"
    if calls is not None:
        call = f.node_def.add(name="inner", op="PartitionedCall")
        call.input.append(out)
        call.attr["f"].func.name = calls
        out = "inner:output:0"
    f.ret["y"] = out


def functions(count: int) -> graph_pb2.GraphDef:
    """``count`` functions ``f_i``, each called once from ``model/block_i`` (a chain of
    ``StatefulPartitionedCall``), each calling the shared leaf function ``leaf``."""
    graph = graph_pb2.GraphDef()
    _function(graph.library, "leaf", None)
    previous = _node(graph, "input", "Placeholder").name
    for i in range(count):
        fname = f"__inference_block_{i}_{1000 + i}"
        _function(graph.library, fname, "leaf")
        call = _node(graph, f"model/block_{i}/StatefulPartitionedCall",
                     "StatefulPartitionedCall", previous)
        call.attr["f"].func.name = fname
        previous = call.name
    _node(graph, "output", "Identity", previous)
    return graph


def nested_calls(depth: int) -> graph_pb2.GraphDef:
    """Calls nested ``depth`` deep: ``model/call`` runs ``f_{depth-1}``, whose body calls
    ``f_{depth-2}``, and so on down to ``f_0``; each body is :func:`_function`'s."""
    graph = graph_pb2.GraphDef()
    _function(graph.library, "f_0", None)
    for i in range(1, depth):
        _function(graph.library, f"f_{i}", f"f_{i - 1}")
    _node(graph, "input", "Placeholder")
    call = _node(graph, "model/call", "StatefulPartitionedCall", "input")
    call.attr["f"].func.name = f"f_{depth - 1}"
    _node(graph, "output", "Identity", call.name)
    return graph


def all_ops(graph: graph_pb2.GraphDef) -> Iterator[str]:
    """Every NodeDef name, top level then function bodies (for tests)."""
    yield from (n.name for n in graph.node)
    for f in graph.library.function:
        yield from (n.name for n in f.node_def)
