"""An ONNX ModelProto written, as stored, into the GraphDef :mod:`graphviz_tb.model.onnx` folds
(see :mod:`.onnx` for what a NodeDef keeps of its node).

* **The model's graph** is ``GraphDef.node``: one NodeDef per ONNX node, plus one per graph
  input, initializer and graph output (ops ``onnx::Input``, ``onnx::Initializer``,
  ``onnx::Output``), behind a first NodeDef ``onnx::Model``.  NodeDefs are named by position
  (``n12``) across the whole file, bodies included, so no name an exporter writes (empty,
  repeated, a tensor's) can collide; an input names its producer and output (``n12:1``).
* **Subgraphs and local functions** are ``GraphDef.library``: a FunctionDef per ``If``
  branch, ``Loop`` or ``Scan`` body (any node's graph attribute: ONNX Runtime's contrib ops
  carry them too), written like the model's graph (its formal inputs and outputs are
  ``onnx::Input`` and ``onnx::Output`` NodeDefs), and one per ``ModelProto.functions``
  entry.  A body comes before the bodies nested in it.  Its ``_call`` attribute names the
  NodeDef whose body it is; ``_outer`` maps each NodeDef of an enclosing graph the body reads
  (ONNX subgraphs read outer names implicitly) to the tensor name it reads it by.
* **Calls**: a node that runs bodies, or calls a local function, lists them in ``_calls``,
  each a ``NameAttrList`` naming the FunctionDef with ``scope`` (the sub-scope its body opens
  under: the graph attribute's name, ``then_branch``; empty for a function call), ``args``
  (for each formal input, the NodeDef input that feeds it, -1 for none), ``rets`` (for each
  formal output, the node output it is, -1 for none) and ``carry`` (for a loop, the formal
  input each formal output becomes in the next iteration, -1 for none): what ``If``,
  ``Loop``, ``Scan`` and a function call mean, said once here so later stages need not know
  ONNX.  The graph attribute itself names its FunctionDef.
"""

from __future__ import annotations

import ast
import re
from collections import ChainMap
from collections.abc import MutableMapping
from typing import Any

from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto

from .dtypes import dtype_enum

__all__ = ["write_graph_def"]

#: ONNX TensorProto.DataType numbers, by the names people know.
_DTYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32",
          7: "int64", 8: "string", 9: "bool", 10: "float16", 11: "float64", 12: "uint32",
          13: "uint64", 14: "complex64", 15: "complex128", 16: "bfloat16"}
_METADATA = {"pkg.torch.onnx.name_scopes": "_scopes", "pkg.torch.onnx.class_hierarchy": "_classes"}
#: The onnxscript rewrites an op went through (the dynamo exporter's optimizer writes them).
_RULES = "pkg.onnxscript.rewriter.rule_name"
#: The rewrites that fold a batch norm into the op before it (``FuseBatchNormIntoConv``).
_FUSED_NORM = re.compile(r"\bFuseBatchNormInto\w+")
#: Constants with at most this many values show them.
_MAX_VALUES = 16
_DEFAULT_DOMAINS = ("", "ai.onnx")


def write_graph_def(onnx: Any, model: Any, inferred: Any, note: str,
                    function_types: dict[tuple[str, str, str], dict[str, Any]]) -> GraphDef:
    """``model`` as the GraphDef of the module docstring; ``inferred`` is the same model with
    ``onnx.shape_inference``'s types (or ``model`` itself, ``note`` saying why not), and
    ``function_types`` the types of each local function's tensors, by (domain, name,
    overload), where they could be told."""
    return _Writer(onnx, model, inferred, note, function_types).write()


class _Scope:
    """The tensor names one graph can read: its own, then its enclosing graphs' (a subgraph
    reads outer names implicitly; a local function reads none).

    The model's own graph looks names up in plain dicts, a subgraph in a ChainMap over them:
    a ChainMap lookup costs several times a dict's, and a 100,000-node model makes 230,000."""

    def __init__(self, types: dict[str, Any], parent: _Scope | None = None,
                 outer: Any = None) -> None:
        self._own: dict[str, str] = {}
        self.producers: MutableMapping[str, str] = _chain(
            self._own, None if parent is None else parent.producers)
        self.types: MutableMapping[str, Any] = _chain(
            types, None if parent is None else parent.types)
        #: The FunctionDef's ``_outer`` map, where reads of enclosing graphs are recorded.
        self.outer = outer

    def resolve(self, tensor: str) -> str:
        """The NodeDef input that reads ``tensor`` (the name itself when nothing makes it)."""
        ref = self.producers.get(tensor)
        if ref is None:
            return tensor
        if self.outer is not None and tensor not in self._own:
            self.outer[ref].s = tensor.encode("utf-8", "replace")
        return ref


def _chain(own: dict[str, Any], parent: MutableMapping[str, Any] | None
           ) -> MutableMapping[str, Any]:
    """``own`` in front of ``parent``'s names (writes go to ``own``); ``own`` alone at the top."""
    if parent is None:
        return own
    return ChainMap(own, *(parent.maps if isinstance(parent, ChainMap) else [parent]))


class _Writer:
    """One ModelProto written as the GraphDef of the module docstring."""

    def __init__(self, onnx: Any, model: Any, inferred: Any, note: str,
                 function_types: dict[tuple[str, str, str], dict[str, Any]]) -> None:
        self.onnx, self.model, self.inferred, self.note = onnx, model, inferred, note
        self.function_types = function_types
        self.kind = onnx.AttributeProto
        self.schemas: dict[tuple[str, str], list[str]] = {}
        #: Serialized output types -> the attributes they make (see ``_types``).
        self.built_types: dict[tuple[bytes, ...], list[tuple[str, AttrValue]]] = {}
        #: Serialized small constants -> their text (TorchScript exports repeat a few
        #: shape constants thousands of times; numpy made each one's text anew).
        self.constant_texts: dict[bytes, str] = {}
        #: (domain, name, overload) of each local function -> its FunctionDef's name.
        self.functions: dict[tuple[str, str, str], str] = {}
        self.taken: set[str] = set()
        self.weights: set[str] = set()  # the initializers' names
        self.count = 0
        self.out = GraphDef()

    def write(self) -> GraphDef:
        model, graph = self.model, self.inferred.graph
        header = self.out.node.add(name="model", op="onnx::Model")
        header.attr["producer"].s = f"{model.producer_name} {model.producer_version}" \
            .strip().encode("utf-8")
        header.attr["opset"].list.s.extend(
            f"{o.domain or 'ai.onnx'} {o.version}".encode() for o in model.opset_import)
        header.attr["nodes"].i = len(model.graph.node)
        if self.note:
            header.attr["shapes note"].s = self.note.encode("utf-8")
        functions = list(self.inferred.functions)
        for function in functions:
            key = (function.domain, function.name, getattr(function, "overload", ""))
            name = _op(function.domain, function.name)
            self.functions[key] = self._unique(f"{name} ({key[2]})" if key[2] else name)
        # A body is never named as an op type: the model stage would take that op for a call.
        self.taken.update(_op_types([graph, *(f for f in functions)]))
        types = _types(graph)
        types.update((v.name, v.type) for v in model.graph.value_info)  # the file's own win
        self._graph(self.out.node, _Scope(types), graph)
        for (key, name), function in zip(self.functions.items(), functions, strict=True):
            fdef = self.out.library.function.add()
            fdef.signature.name = name
            scope = _Scope({**self.function_types.get(key, {}),
                            **{v.name: v.type for v in getattr(function, "value_info", ())}})
            self._body(fdef.node_def, scope, list(function.input), (), function.node,
                       list(function.output))
        return self.out

    def _unique(self, name: str) -> str:
        """A FunctionDef name no other takes (subgraphs are often all ``sub_graph``)."""
        base, n = name or "graph", 2
        name = base
        while name in self.taken:
            name, n = f"{base}_{n}", n + 1
        self.taken.add(name)
        return name

    def _graph(self, sink: Any, scope: _Scope, graph: Any) -> None:
        stored = {t.name for t in graph.initializer} | \
            {t.values.name for t in graph.sparse_initializer}
        initializers = [(t.name, list(t.dims), t.data_type) for t in graph.initializer]
        initializers += [(s.values.name, list(s.dims), s.values.data_type)
                         for s in graph.sparse_initializer]
        self._body(sink, scope, [v.name for v in graph.input if v.name not in stored],
                   initializers, graph.node, [v.name for v in graph.output])

    def _body(self, sink: Any, scope: _Scope, inputs: list[str],
              initializers: Any, nodes: Any, outputs: list[str]) -> None:
        """One graph's NodeDefs: its initializers, inputs, nodes and outputs."""
        for name, dims, data_type in initializers:
            node = self._add(sink, scope, "onnx::Initializer", name, [])
            node.attr["_text"].s = (f"{name} (initializer, {_dims(dims)}, "
                                    f"{_DTYPES.get(data_type, f'dtype {data_type}')})").encode()
            scope.producers[name] = node.name
            self.weights.add(name)
        for name in inputs:
            scope.producers[name] = self._add(sink, scope, "onnx::Input", name, [name]).name
        for index, onnx_node in enumerate(nodes):
            self._node(sink, scope, index, onnx_node)
        for name in outputs:
            node = self._add(sink, scope, "onnx::Output", name, [name])
            node.input.append(scope.resolve(name))

    def _add(self, sink: Any, scope: _Scope, op: str, name: str, outputs: list[str]) -> Any:
        self.count += 1
        node = sink.add(name=f"n{self.count}", op=op)
        node.attr["_name"].s = name.encode("utf-8", "replace")
        self._types(node, [scope.types.get(o) for o in outputs])
        return node

    def _node(self, sink: Any, scope: _Scope, index: int, onnx_node: Any) -> None:
        node = self._add(sink, scope, _op(onnx_node.domain, onnx_node.op_type),
                         onnx_node.name or f"{onnx_node.op_type}_{index}",
                         list(onnx_node.output))
        names = self._input_names(onnx_node)
        present, slots = [], {}
        for position, tensor in enumerate(onnx_node.input):
            if tensor:  # "" is an optional input left out
                slots[position] = len(node.input)
                node.input.append(scope.resolve(tensor))
                present.append(names[position] if position < len(names)
                               else f"input {position}")
        node.attr["_inputs"].list.s.extend(n.encode() for n in present)
        for attribute in onnx_node.attribute:
            if attribute.type in (self.kind.GRAPH, self.kind.GRAPHS):
                self._bodies(node, scope, onnx_node, attribute, slots)
            else:
                node.attr[attribute.name].CopyFrom(self._attribute(attribute))
        function = self.functions.get((onnx_node.domain, onnx_node.op_type,
                                       getattr(onnx_node, "overload", "")))
        if function is not None:
            _call(node, function, "", [slots.get(i, -1) for i in range(len(onnx_node.input))],
                  list(range(len(onnx_node.output))), [])
        for k, tensor in enumerate(onnx_node.output):
            if tensor:
                scope.producers[tensor] = node.name if k == 0 else f"{node.name}:{k}"
        found = {_METADATA[p.key]: [str(v) for v in _literal_list(p.value)]
                 for p in onnx_node.metadata_props if p.key in _METADATA}
        if found:
            rules = next((p.value for p in onnx_node.metadata_props if p.key == _RULES), "")
            _fused_norm(found, rules, onnx_node.input[1:2], self.weights)
        for key, values in found.items():
            node.attr[key].list.s.extend(v.encode() for v in values)
        if onnx_node.op_type == "Constant" and onnx_node.domain in _DEFAULT_DOMAINS:
            node.attr["_text"].s = self._constant(onnx_node).encode("utf-8")

    def _bodies(self, node: Any, scope: _Scope, onnx_node: Any, attribute: Any,
                slots: dict[int, int]) -> None:
        """The graphs of one attribute, each a FunctionDef the node calls; the attribute
        names them."""
        many = attribute.type == self.kind.GRAPHS
        graphs = list(attribute.graphs) if many else [attribute.g]
        for i, graph in enumerate(graphs):
            sub = f"{attribute.name}_{i}" if many else attribute.name
            fdef = self.out.library.function.add()  # before the bodies nested in it
            fdef.signature.name = name = self._unique(graph.name or sub)
            fdef.attr["_call"].s = node.name.encode()
            inner = _Scope(_types(graph), scope, fdef.attr["_outer"].func.attr)
            self._graph(fdef.node_def, inner, graph)
            if many:
                node.attr[attribute.name].list.func.add(name=name)
            else:
                node.attr[attribute.name].func.name = name
            _call(node, name, sub, *_wiring(onnx_node, graph, slots))

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

    def _types(self, node: Any, types: list[Any]) -> None:
        """The outputs' dtypes and shapes as the NodeDef's ``output_types`` and
        ``_output_shapes``.  Built once per distinct list of output types and copied after:
        a model repeats a handful of them (ten thousand ``float32 2×16×32``), and building
        the attributes field by field was a quarter of the reading."""
        key = tuple(b"" if t is None else t.SerializeToString() for t in types)
        built = self.built_types.get(key)
        if built is None:
            built = self.built_types[key] = _type_attrs(types)
        for name, value in built:
            node.attr[name].CopyFrom(value)

    def _attribute(self, attribute: Any) -> AttrValue:
        """An ONNX attribute as the AttrValue the details show: numbers and strings as such,
        a tensor summarised, a local function's parameter by its name."""
        kind = self.kind
        value = AttrValue()
        if attribute.ref_attr_name:
            value.s = f"(the caller's attribute {attribute.ref_attr_name})".encode()
        elif attribute.type == kind.INT:
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
        else:
            value.s = f"({kind.AttributeType.Name(attribute.type).lower()})".encode()
        return value

    def _constant(self, onnx_node: Any) -> str:
        for attribute in onnx_node.attribute:
            if attribute.type == self.kind.TENSOR:
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
            key = tensor.SerializeToString()
            text = self.constant_texts.get(key)
            if text is None:
                try:
                    values = self.onnx.numpy_helper.to_array(tensor).tolist()
                except Exception:  # a malformed tensor: its size alone
                    values = None
                text = self.constant_texts[key] = "" if values is None else f"{values} ({dtype})"
            if text:
                return text
        return f"{dtype} {_dims(list(tensor.dims))} constant"


def _wiring(onnx_node: Any, graph: Any, slots: dict[int, int]
            ) -> tuple[list[int], list[int], list[int]]:
    """How a node passes values to one of its bodies, as ``_calls`` says it (module
    docstring): ``If``'s branches take nothing and give its outputs; ``Loop``'s body takes
    (iteration, condition, carried values) from (trip count, condition, initial values) and
    gives (condition, carried values, scan outputs), the first not an output of the loop;
    ``Scan``'s body takes and gives its state and scans one for one.  Another op's graph
    (ONNX Runtime's contrib ops): what it reads from outside alone, wired later."""
    ins, outs = len(graph.input), len(graph.output)
    op = onnx_node.op_type if onnx_node.domain in _DEFAULT_DOMAINS else ""
    if op == "If":
        return [-1] * ins, list(range(outs)), []
    if op == "Loop":
        carried = max(0, ins - 2)
        return ([slots.get(i, -1) for i in range(ins)], [j - 1 for j in range(outs)],
                [1 if j == 0 else j + 1 if j <= carried else -1 for j in range(outs)])
    if op == "Scan":
        offset = max(0, len(onnx_node.input) - ins)  # opset 8: sequence_lens comes first
        scans = next((a.i for a in onnx_node.attribute if a.name == "num_scan_inputs"), 0)
        return ([slots.get(offset + i, -1) for i in range(ins)], list(range(outs)),
                [j if j < ins - scans else -1 for j in range(outs)])
    return [-1] * ins, [-1] * outs, []


def _call(node: Any, function: str, scope: str, args: list[int], rets: list[int],
          carry: list[int]) -> None:
    entry = node.attr["_calls"].list.func.add(name=function)
    entry.attr["scope"].s = scope.encode("utf-8", "replace")
    entry.attr["args"].list.i.extend(args)
    entry.attr["rets"].list.i.extend(rets)
    if carry:
        entry.attr["carry"].list.i.extend(carry)


def _op_types(graphs: list[Any]) -> set[str]:
    """The op type of every node of ``graphs`` (graphs or functions), their bodies' too."""
    found, stack = set(), list(graphs)
    while stack:
        for node in stack.pop().node:
            found.add(_op(node.domain, node.op_type))
            for attribute in node.attribute:
                stack.extend([attribute.g] if attribute.HasField("g") else attribute.graphs)
    return found


def _types(graph: Any) -> dict[str, Any]:
    """Each tensor's type as a graph's inputs, value_info and outputs give it."""
    return {info.name: info.type for info in (*graph.input, *graph.value_info, *graph.output)}


def _type_attrs(types: list[Any]) -> list[tuple[str, AttrValue]]:
    """``output_types`` (when a dtype is known) and ``_output_shapes`` (when a rank is) of
    outputs of these ONNX types (None: not known)."""
    tensors = [t.tensor_type if t is not None and t.HasField("tensor_type") else None
               for t in types]
    attrs = []
    if any(t is not None and t.elem_type for t in tensors):
        value = AttrValue()
        value.list.type.extend(dtype_enum(_DTYPES.get(t.elem_type, "")) or 0
                               if t is not None else 0 for t in tensors)
        attrs.append(("output_types", value))
    if any(t is not None and t.HasField("shape") for t in tensors):
        value = AttrValue()
        for tensor in tensors:
            shape = value.list.shape.add()
            if tensor is None or not tensor.HasField("shape"):
                shape.CopyFrom(TensorShapeProto(unknown_rank=True))
            else:
                for dim in tensor.shape.dim:
                    shape.dim.add(size=dim.dim_value if dim.HasField("dim_value") else -1)
        attrs.append(("_output_shapes", value))
    return attrs


def _op(domain: str, op_type: str) -> str:
    return f"{domain}::{op_type}" if domain and domain not in _DEFAULT_DOMAINS else op_type


def _dims(dims: list[int]) -> str:
    return "×".join(str(d) for d in dims) if dims else "scalar"


def _fused_norm(found: dict[str, list[str]], rules: str, weight: Any,
                weights: set[str]) -> None:
    """Put an op made by folding a batch norm into the convolution (or linear layer) before
    it in the module of the weight it reads, as the TorchScript exporter does.

    The rewrite keeps the norm's metadata, so the dynamo exporter's ResNet has ``bn1`` where
    the TorchScript exporter's has ``conv1`` (whose weight it is, ``conv1.weight``); each
    exporter's picture would show its own modules.  Only a sibling of the norm's module
    (one parent module) is taken, and the class, which the file says for the norm only, is
    left unsaid."""
    scopes, classes = found.get("_scopes", []), found.get("_classes", [])
    if not _FUSED_NORM.search(rules) or len(scopes) < 3 or not weight:
        return
    module, _, kind = weight[0].rpartition(".")
    norm = scopes[-2]
    if kind != "weight" or weight[0] not in weights or module == norm \
            or module.rpartition(".")[0] != norm.rpartition(".")[0]:
        return
    scopes[-2] = module
    if len(classes) == len(scopes):
        classes[-2] = ""


def _literal_list(text: str) -> list[Any]:
    """A metadata value the dynamo exporter writes as a Python list's repr."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return []
    return value if isinstance(value, list) else []
