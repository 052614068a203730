"""ONNX models (``.onnx`` files), read with the ``onnx`` package (the ``[onnx]`` extra).

What the file holds is written, as stored, into a GraphDef the model stage folds
(:mod:`graphviz_tb.model.onnx`), as a PyTorch trace is (:mod:`.onnx_graph` writes it): one
NodeDef per ONNX node, plus one per graph input, initializer and graph output, behind a
first NodeDef ``onnx::Model`` that marks the graph as ONNX and carries what the file says of
itself; ``If`` branches, ``Loop`` and ``Scan`` bodies and local functions as FunctionDefs.

Each ONNX node's NodeDef keeps its attributes, its ONNX name (``_name``), the names its op
schema gives its inputs (``_inputs``), its outputs' shapes and dtypes (``_output_shapes``,
``output_types``) from ``value_info``, else from ``onnx.shape_inference`` (no runtime:
shapes are inferred from the graph alone, bodies included), and the dynamo exporter's module
metadata (``_scopes``, ``_classes`` from ``pkg.torch.onnx.name_scopes`` and
``pkg.torch.onnx.class_hierarchy``).

Weights are never loaded: ``onnx.load(..., load_external_data=False)`` leaves a ``.data``
file unread, so a model whose external data is missing reads the same.  ``onnx`` is imported
only here, when an ONNX file is read: ``tbgraph --help`` and TensorFlow inputs never import it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tensorboard.compat.proto.graph_pb2 import GraphDef

from ..errors import InputError, NoGraphError
from ._proto import wire_fields
from .base import Discovery, GraphSource
from .onnx_graph import write_graph_def

__all__ = ["INSTALL", "discover", "is_onnx_model"]

#: What an ONNX input without the ``onnx`` package is told.
INSTALL = "reading an ONNX model needs the onnx package: pip install 'graphviz_tb[onnx]'"

# ModelProto's fields and their wire types (onnx.proto): 0 a number, 2 bytes or a message.
_MODEL_FIELDS = {1: 0, 2: 2, 3: 2, 4: 2, 5: 0, 6: 2, 7: 2, 8: 2, 14: 2, 20: 2, 21: 2, 25: 2}
_GRAPH_FIELDS = {1: 2, 2: 2, 5: 2, 10: 2, 11: 2, 12: 2, 13: 2, 14: 2, 15: 2, 16: 2}
_IR_VERSION, _GRAPH = 1, 7


def is_onnx_model(data: bytes) -> bool:
    """Whether ``data`` is a serialized ONNX ModelProto, told from its wire format alone (no
    ``onnx`` needed, so a user without it hears what to install): every top-level field is
    one ModelProto has, with its wire type; the IR version is a number and the graph a
    message whose fields are a GraphProto's.  A GraphDef (field 1 a message), MetaGraphDef
    and SavedModel (no field 7) fail this.

    The first field of the wrong wire type ends the scan: a GraphDef's first field (an op,
    a message where ModelProto has a number) says so, and its million ops are not walked."""
    fields: list[tuple[int, int | bytes | memoryview]] = []
    try:
        for number, wire, value in wire_fields(memoryview(data)):
            if _MODEL_FIELDS.get(number, wire) != wire:
                return False
            fields.append((number, value))
    except ValueError:
        return False
    seen = {number for number, _ in fields}
    if _IR_VERSION not in seen or _GRAPH not in seen:
        return False
    for number, value in fields:
        if number == _GRAPH:
            try:
                graph = list(wire_fields(value))  # type: ignore[arg-type]
            except ValueError:
                return False
            if any(_GRAPH_FIELDS.get(n, w) != w for n, w, _ in graph):
                return False
    return True


def discover(path: str | os.PathLike[str]) -> Discovery:
    """The one graph of an ONNX file, read now so a file ``onnx`` refuses fails at once.

    Raises
    ------
    InputError
        ``onnx`` is not installed (the message says what to install), or it cannot read the
        file.
    NoGraphError
        The model's graph holds no nodes.
    """
    name = os.fspath(path)
    graph = _read(name)
    source = GraphSource(name=Path(name).name, kind="op", origin="onnx", load=lambda: graph)
    return Discovery(path=name, source_kind="onnx", graphs=(source,))


def _read(name: str) -> GraphDef:
    try:
        # Imported here, not at the top: only ONNX inputs need it, and it is an extra.
        import onnx
    except ImportError:
        raise InputError(f"{name}: {INSTALL}") from None
    try:
        model = onnx.load(name, load_external_data=False)
    except Exception as exc:  # onnx raises DecodeError, ValueError, OSError...
        raise InputError(f"{name}: onnx cannot read it ({type(exc).__name__}: "
                         f"{str(exc).splitlines()[0] if str(exc) else 'no detail'})") from None
    if not model.graph.node:
        raise NoGraphError(f"{name}: the ONNX graph holds no nodes")
    inferred, note = _inferred(onnx, model)
    return write_graph_def(onnx, model, inferred, note, _function_types(onnx, inferred))


def _inferred(onnx: Any, model: Any) -> tuple[Any, str]:
    """The model with every tensor's type that ``onnx.shape_inference`` can tell (from the
    graph alone: weights are not needed), or the model as read and why not."""
    try:
        return onnx.shape_inference.infer_shapes(model), ""
    except Exception as exc:  # a custom op, a malformed graph, a model over 2 GB
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return model, f"onnx.shape_inference failed: {reason[:200]}"


def _function_types(onnx: Any, model: Any) -> dict[tuple[str, str, str], dict[str, Any]]:
    """Each local function's tensor types, by (domain, name, overload), inferred from what
    its calls pass when every call passes the same types.

    ``onnx.shape_inference`` types the model's graphs but leaves a function's body untyped:
    the body is one for all its calls.  Calls that pass different types give none (one body
    is drawn for all, and a shape true of one call would be false of another), and so does a
    body that reads its caller's attributes (its ops' attributes are not known alone)."""
    if not model.functions:  # most models: no second walk of every node
        return {}
    known: dict[str, Any] = {}
    calls: dict[tuple[str, str, str], list[Any]] = {}
    stack = [model.graph]
    while stack:
        graph = stack.pop()
        known.update((t.name, onnx.helper.make_tensor_type_proto(t.data_type, t.dims))
                     for t in graph.initializer)
        known.update((v.name, v.type) for v in (*graph.input, *graph.value_info, *graph.output))
        for node in graph.node:
            calls.setdefault((node.domain, node.op_type, getattr(node, "overload", "")),
                             []).append(node)
            for attribute in node.attribute:
                stack.extend([attribute.g] if attribute.HasField("g") else attribute.graphs)
    helper, found = onnx.helper, {}
    for function in model.functions:
        key = (function.domain, function.name, getattr(function, "overload", ""))
        passed = {tuple(known[t].SerializeToString() if t in known else b"" for t in n.input)
                  for n in calls.get(key, [])}
        if len(passed) != 1 or b"" in next(iter(passed)) or any(
                a.ref_attr_name for n in function.node for a in n.attribute):
            continue
        actual = calls[key][0].input
        body = helper.make_graph(
            list(function.node), function.name,
            [helper.make_value_info(formal, known[a])
             for formal, a in zip(function.input, actual, strict=False)],
            [helper.make_empty_tensor_value_info(o) for o in function.output])
        alone = helper.make_model(body, opset_imports=list(function.opset_import),
                                  functions=[f for f in model.functions if f is not function],
                                  ir_version=model.ir_version)
        try:
            typed = onnx.shape_inference.infer_shapes(alone).graph
        except Exception:  # a custom op, a function calling itself: the body stays untyped
            continue
        found[key] = {v.name: v.type for v in (*typed.input, *typed.value_info, *typed.output)}
    return found
