"""ONNX models (``.onnx`` files), read with the ``onnx`` package (the ``[onnx]`` extra).

What the file holds is written, as stored, into a GraphDef the model stage folds
(:mod:`graphviz_tb.model.onnx`), as a PyTorch trace is: one NodeDef per ONNX node, plus one
per graph input, initializer and graph output (ops ``onnx::Input``, ``onnx::Initializer``,
``onnx::Output``), behind a first NodeDef ``onnx::Model`` that marks the graph as ONNX and
carries what the file says of itself.  NodeDefs are named by position (``n12``), their ONNX
names kept in the ``_name`` attribute, so no name an exporter writes (empty, repeated, a
tensor's) can collide; inputs name their producer and its output index (``n12:1``).

Each ONNX node's NodeDef keeps its attributes, the names its op schema gives its inputs
(``_inputs``), its outputs' shapes and dtypes (``_output_shapes``, ``output_types``) from
``value_info``, else from ``onnx.shape_inference`` (no runtime: shapes are inferred from the
graph alone), and the dynamo exporter's module metadata (``_scopes``, ``_classes`` from
``pkg.torch.onnx.name_scopes`` and ``pkg.torch.onnx.class_hierarchy``).

Weights are never loaded: ``onnx.load(..., load_external_data=False)`` leaves a ``.data``
file unread, so a model whose external data is missing reads the same.  ``onnx`` is imported
only here, when an ONNX file is read: ``tbgraph --help`` and TensorFlow inputs never import it.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path
from typing import Any

from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto

from ..errors import InputError, NoGraphError
from ._proto import wire_fields
from .base import Discovery, GraphSource
from .dtypes import dtype_enum

__all__ = ["INSTALL", "discover", "is_onnx_model"]

#: What an ONNX input without the ``onnx`` package is told.
INSTALL = "reading an ONNX model needs the onnx package: pip install 'graphviz_tb[onnx]'"

# ModelProto's fields and their wire types (onnx.proto): 0 a number, 2 bytes or a message.
_MODEL_FIELDS = {1: 0, 2: 2, 3: 2, 4: 2, 5: 0, 6: 2, 7: 2, 8: 2, 14: 2, 20: 2, 21: 2, 25: 2}
_GRAPH_FIELDS = {1: 2, 2: 2, 5: 2, 10: 2, 11: 2, 12: 2, 13: 2, 14: 2, 15: 2, 16: 2}
_IR_VERSION, _GRAPH = 1, 7
#: ONNX TensorProto.DataType numbers, by the names people know.
_DTYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32",
           7: "int64", 8: "string", 9: "bool", 10: "float16", 11: "float64", 12: "uint32",
           13: "uint64", 14: "complex64", 15: "complex128", 16: "bfloat16"}
_METADATA = {"pkg.torch.onnx.name_scopes": "_scopes", "pkg.torch.onnx.class_hierarchy": "_classes"}
#: Constants with at most this many values show them.
_MAX_VALUES = 16
_DEFAULT_DOMAINS = ("", "ai.onnx")


def is_onnx_model(data: bytes) -> bool:
    """Whether ``data`` is a serialized ONNX ModelProto, told from its wire format alone (no
    ``onnx`` needed, so a user without it hears what to install): every top-level field is
    one ModelProto has, with its wire type; the IR version is a number and the graph a
    message whose fields are a GraphProto's.  A GraphDef (field 1 a message), MetaGraphDef
    and SavedModel (no field 7) fail this."""
    try:
        fields = list(wire_fields(memoryview(data)))
    except ValueError:
        return False
    seen = {number for number, _, _ in fields}
    if _IR_VERSION not in seen or _GRAPH not in seen:
        return False
    for number, wire, value in fields:
        if _MODEL_FIELDS.get(number, wire) != wire:
            return False
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
    return _Writer(onnx, model, inferred, note).write()


def _inferred(onnx: Any, model: Any) -> tuple[Any, str]:
    """The model with every tensor's type that ``onnx.shape_inference`` can tell (from the
    graph alone: weights are not needed), or the model as read and why not."""
    try:
        return onnx.shape_inference.infer_shapes(model), ""
    except Exception as exc:  # a custom op, a malformed graph, a model over 2 GB
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return model, f"onnx.shape_inference failed: {reason[:200]}"


class _Writer:
    """One ModelProto written as the GraphDef of the module docstring."""

    def __init__(self, onnx: Any, model: Any, inferred: Any, note: str) -> None:
        self.onnx, self.model, self.note = onnx, model, note
        self.graph = model.graph
        self.types: dict[str, Any] = {}
        for info in (*inferred.graph.input, *inferred.graph.value_info,
                     *inferred.graph.output, *self.graph.value_info):
            self.types[info.name] = info.type
        self.producers: dict[str, str] = {}
        self.schemas: dict[tuple[str, str], list[str]] = {}
        self.out = GraphDef()

    def write(self) -> GraphDef:
        header = self.out.node.add(name="model", op="onnx::Model")
        header.attr["producer"].s = f"{self.model.producer_name} {self.model.producer_version}" \
            .strip().encode("utf-8")
        header.attr["opset"].list.s.extend(
            f"{o.domain or 'ai.onnx'} {o.version}".encode() for o in self.model.opset_import)
        header.attr["nodes"].i = len(self.graph.node)
        if self.note:
            header.attr["shapes note"].s = self.note.encode("utf-8")
        stored = {t.name for t in self.graph.initializer} | \
            {t.values.name for t in self.graph.sparse_initializer}
        for tensor in self.graph.initializer:
            self._initializer(tensor.name, list(tensor.dims), tensor.data_type)
        for sparse in self.graph.sparse_initializer:
            self._initializer(sparse.values.name, list(sparse.dims), sparse.values.data_type)
        for value in self.graph.input:
            if value.name not in stored:
                node = self._add("onnx::Input", value.name, [value.name])
                self.producers[value.name] = node.name
        for index, onnx_node in enumerate(self.graph.node):
            self._node(index, onnx_node)
        for value in self.graph.output:
            node = self._add("onnx::Output", value.name, [value.name])
            node.input.append(self.producers.get(value.name, value.name))
        return self.out

    def _add(self, op: str, name: str, outputs: list[str]) -> Any:
        node = self.out.node.add(name=f"n{len(self.out.node)}", op=op)
        node.attr["_name"].s = name.encode("utf-8", "replace")
        self._types(node, outputs)
        return node

    def _initializer(self, name: str, dims: list[int], data_type: int) -> None:
        node = self._add("onnx::Initializer", name, [])
        node.attr["_text"].s = (f"{name} (initializer, {_dims(dims)}, "
                                f"{_DTYPES.get(data_type, f'dtype {data_type}')})").encode()
        self.producers[name] = node.name

    def _node(self, index: int, onnx_node: Any) -> None:
        domain = "" if onnx_node.domain in _DEFAULT_DOMAINS else onnx_node.domain
        op = f"{domain}::{onnx_node.op_type}" if domain else onnx_node.op_type
        node = self._add(op, onnx_node.name or f"{onnx_node.op_type}_{index}",
                         list(onnx_node.output))
        names = self._input_names(onnx_node)
        present = []
        for slot, tensor in enumerate(onnx_node.input):
            if tensor:  # "" is an optional input left out
                node.input.append(self.producers.get(tensor, tensor))
                present.append(names[slot] if slot < len(names) else f"input {slot}")
        for tensor in self._captured(onnx_node):
            node.input.append(self.producers[tensor])
            present.append(f"captured {tensor}")
        node.attr["_inputs"].list.s.extend(n.encode() for n in present)
        for k, tensor in enumerate(onnx_node.output):
            if tensor:
                self.producers[tensor] = node.name if k == 0 else f"{node.name}:{k}"
        for attribute in onnx_node.attribute:
            node.attr[attribute.name].CopyFrom(self._attribute(attribute))
        for prop in onnx_node.metadata_props:
            key = _METADATA.get(prop.key)
            if key is not None:
                node.attr[key].list.s.extend(str(v).encode() for v in _literal_list(prop.value))
        if onnx_node.op_type == "Constant" and not domain:
            node.attr["_text"].s = self._constant(onnx_node).encode("utf-8")

    def _captured(self, onnx_node: Any) -> list[str]:
        """The outer tensors the node's subgraphs (``If``'s branches, ``Loop``'s and
        ``Scan``'s bodies, nested ones too) read by name: real inputs of the node, though
        its input list omits them."""
        kind = self.onnx.AttributeProto
        stack = [a.g for a in onnx_node.attribute if a.type == kind.GRAPH]
        stack += [g for a in onnx_node.attribute if a.type == kind.GRAPHS for g in a.graphs]
        defined: set[str] = set()
        used: dict[str, None] = {}
        while stack:
            graph = stack.pop()
            defined.update(v.name for v in graph.input)
            defined.update(t.name for t in graph.initializer)
            for inner in graph.node:
                defined.update(inner.output)
                used.update(dict.fromkeys(inner.input))
                stack.extend(a.g for a in inner.attribute if a.type == kind.GRAPH)
                stack.extend(g for a in inner.attribute if a.type == kind.GRAPHS
                             for g in a.graphs)
            used.update(dict.fromkeys(v.name for v in graph.output))
        return [t for t in used if t and t not in defined and t in self.producers
                and t not in onnx_node.input]

    def _input_names(self, onnx_node: Any) -> list[str]:
        """The schema's names of the node's inputs (``X``, ``W``, ``B``), variadic ones
        numbered; none for an op the installed onnx does not know (a custom domain)."""
        key = (onnx_node.op_type, onnx_node.domain)
        if key not in self.schemas:  # once per op type: a lookup costs as much as the rest
            try:
                schema = self.onnx.defs.get_schema(*key)
                self.schemas[key] = [p.name for p in schema.inputs]
            except Exception:  # onnx raises SchemaError for an unknown op
                self.schemas[key] = []
        names = list(self.schemas[key])
        if names and len(onnx_node.input) > len(names):
            last = names[-1]
            names[-1:] = [f"{last} {i}" for i in range(len(onnx_node.input) - len(names) + 1)]
        return names

    def _types(self, node: Any, outputs: list[str]) -> None:
        types = [self.types.get(name) for name in outputs]
        tensors = [t.tensor_type if t is not None and t.HasField("tensor_type") else None
                   for t in types]
        if any(t is not None and t.elem_type for t in tensors):
            node.attr["output_types"].list.type.extend(
                dtype_enum(_DTYPES.get(t.elem_type, "")) or 0 if t is not None else 0
                for t in tensors)
        if not any(t is not None and t.HasField("shape") for t in tensors):
            return  # no output's rank is known (ONNX: no shape field)
        shapes = node.attr["_output_shapes"].list.shape
        for tensor in tensors:
            shape = shapes.add()
            if tensor is None or not tensor.HasField("shape"):
                shape.CopyFrom(TensorShapeProto(unknown_rank=True))
            else:
                for dim in tensor.shape.dim:
                    shape.dim.add(size=dim.dim_value if dim.HasField("dim_value") else -1)

    def _attribute(self, attribute: Any) -> AttrValue:
        """An ONNX attribute as the AttrValue the details show: numbers and strings as such,
        a tensor summarised, a subgraph by its size."""
        kind = self.onnx.AttributeProto
        value = AttrValue()
        if attribute.type == kind.INT:
            value.i = attribute.i
        elif attribute.type == kind.FLOAT:
            value.f = attribute.f
        elif attribute.type == kind.STRING:
            value.s = attribute.s
        elif attribute.type == kind.INTS:
            value.list.i.extend(attribute.ints)
        elif attribute.type == kind.FLOATS:
            value.list.f.extend(attribute.floats)
        elif attribute.type == kind.STRINGS:
            value.list.s.extend(attribute.strings)
        elif attribute.type == kind.TENSOR:
            value.s = self._tensor_text(attribute.t).encode("utf-8")
        elif attribute.type == kind.GRAPH:
            value.s = f"a graph of {len(attribute.g.node)} nodes".encode()
        elif attribute.type == kind.GRAPHS:
            value.list.s.extend(f"a graph of {len(g.node)} nodes".encode()
                                for g in attribute.graphs)
        else:
            value.s = f"({kind.AttributeType.Name(attribute.type).lower()})".encode()
        return value

    def _constant(self, onnx_node: Any) -> str:
        for attribute in onnx_node.attribute:
            if attribute.type == self.onnx.AttributeProto.TENSOR:
                return self._tensor_text(attribute.t)
            if attribute.name.startswith("value_"):
                return str(self.onnx.helper.get_attribute_value(attribute))[:200]
        return "constant"

    def _tensor_text(self, tensor: Any) -> str:
        """``[1, -1] (int64)`` for a small tensor, ``float32 64×3 constant`` for a larger
        one or one whose data is elsewhere (never loaded)."""
        dtype = _DTYPES.get(tensor.data_type, f"dtype {tensor.data_type}")
        count = 1
        for dim in tensor.dims:
            count *= dim
        external = tensor.data_location == self.onnx.TensorProto.EXTERNAL
        if count <= _MAX_VALUES and not external:
            try:
                values = self.onnx.numpy_helper.to_array(tensor).tolist()
            except Exception:  # a malformed tensor: its size alone
                values = None
            if values is not None:
                return f"{values} ({dtype})"
        return f"{dtype} {_dims(list(tensor.dims))} constant"


def _dims(dims: list[int]) -> str:
    return "×".join(str(d) for d in dims) if dims else "scalar"


def _literal_list(text: str) -> list[Any]:
    """A metadata value the dynamo exporter writes as a Python list's repr."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return []
    return value if isinstance(value, list) else []
