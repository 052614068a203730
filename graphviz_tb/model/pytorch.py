"""PyTorch's JIT traces read as the model: ``SummaryWriter.add_graph`` writes one NodeDef per
traced *value*, and most of those values are plumbing.

What the tracer writes, and what this pass makes of it (a new GraphDef, so the stages after
the model stay format-blind):

* ``prim::Constant`` (a stride, an epsilon, ``None``), ``prim::ListConstruct`` and
  ``prim::TupleConstruct`` of constants (a kernel size), and ``prim::GetAttr`` (a parameter or
  buffer read from the module object, which is never a node) become attributes of the op they
  feed, named by the op's argument (``stride``, ``weight``; :mod:`.aten_args`).  A parameter
  read shows as its dotted name (``layer1.0.conv1.weight``).  The tracer defines a constant
  once, in the first module that uses it, and later modules read it from there: folded, those
  reads are no longer edges between modules.
* Lists and tuples that hold tensors (``torch.cat``'s inputs, an LSTM's state) are looked
  through: each tensor is an edge into the op that uses the list.  ``prim::TupleUnpack`` and
  ``prim::ListUnpack`` pick the element, or the output of the op that made the list.
  ``prim::NumToTensor`` and ``aten::Int`` (a number made a tensor and back) are looked through.
* A call with several outputs (``aten::lstm``, multi-head attention) is written once per
  output, with the same op, inputs and attributes, one after the other: it becomes one op
  with several outputs.
* ``IO Node`` values are the model's inputs and outputs: one op each, named after the
  argument (``x``, ``src``) or ``output``, and the model's inputs and outputs in ``info``.
* An op is named after what it does (``ResNet/Sequential[layer1]/Bottleneck[0]/relu_2``),
  never after the tracer's value numbers (``input.5``, ``676``); a module's scope keeps its
  full trace path as its name and reads as the code does (``layer1.0.conv1 (Conv2d)``).  A
  ``ModuleList`` iterated in ``forward`` is never called, so the scopes of its members' ops
  lack it: their dotted paths are taken from the parameters they read.

Nothing here imports PyTorch: reading a trace needs only the GraphDef.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto

from ..errors import InputError
from ..read.base import TensorSpec
from ..read.dtypes import shape_from_proto
from .aten_args import ARGUMENTS

if TYPE_CHECKING:
    from .graph import GraphModel

__all__ = ["SHAPES_REMEDY", "FoldedTrace", "fold_trace", "is_jit_trace", "unique_names"]

#: What a trace that records few shapes is told (TensorFlow's remedies do not apply).
SHAPES_REMEDY = ("few shapes recorded: PyTorch's add_graph records the shapes of traced "
                 "tensors only (not of numbers, lists or parameters)")

_IO = "IO Node"
#: Ops looked through: their one output is their first input.
_PASS_THROUGH = frozenset({"prim::NumToTensor", "aten::Int", "aten::Float",
                           "aten::ScalarImplicit"})
#: Plumbing folded into the ops it feeds (any other op, ``prim::PythonOp`` included, is drawn).
_FOLDED = frozenset({"prim::Constant", "prim::GetAttr", "prim::ListConstruct",
                     "prim::TupleConstruct", "prim::TupleIndex", *_PASS_THROUGH})
#: Ops whose output is a number (torch records no shape for it), by their argument count.
_NUMBERS = {"aten::size": 2, "aten::numel": 1, "aten::dim": 1}
_BUILDS = frozenset({"prim::ListConstruct", "prim::TupleConstruct"})
_UNPACKS = frozenset({"prim::ListUnpack", "prim::TupleUnpack"})
#: PyTorch's ScalarType numbers, for arguments that name a dtype.
_DTYPES = {0: "uint8", 1: "int8", 2: "int16", 3: "int32", 4: "int64", 5: "float16",
           6: "float32", 7: "float64", 8: "complex32", 9: "complex64", 10: "complex128",
           11: "bool", 15: "bfloat16"}
_MODULE = re.compile(r"^(.*)\[(.*)\]$")
_VALUE_NUMBER = re.compile(r"\.\d+$")


def is_jit_trace(graph_def: Any) -> bool:
    """Whether a GraphDef is a PyTorch JIT trace: ``add_graph`` writes the model's inputs and
    outputs (``IO Node``) first, then ops named with a namespace (``aten::``, ``prim::``);
    TensorFlow's op names never hold ``::``.  A TensorFlow graph is told apart at its first
    node."""
    nodes = graph_def.node
    return bool(nodes) and nodes[0].op == _IO and all(
        node.op == _IO or "::" in node.op for node in nodes)


@dataclass
class _Call:
    """One traced op: its NodeDefs (one per output) merged."""

    op: str
    value: str  # the name of its first value (``input/x.1``)
    scope: str
    inputs: list[str]
    text: str  # the attribute text torch wrote (``{}`` for ATen ops)
    shapes: list[Any] = field(default_factory=list)  # TensorShapeProto or None, per output
    name: str = ""


@dataclass(frozen=True)
class FoldedTrace:
    """A trace folded into the model's graph, and what the model stage records of it."""

    graph_def: GraphDef
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    #: Module scope -> the label a picture gives it (``layer1.0.conv1 (Conv2d)``).
    scope_labels: dict[str, str]
    #: What a graph that records few shapes is told (the format's own remedies).
    shapes_remedy: str = SHAPES_REMEDY
    #: Nodes as the file stores them (``info``'s count, as the format's own tools count);
    #: None for the NodeDefs of the GraphDef folded.
    stored_nodes: int | None = None
    #: Op types whose ops run functions by their ``_calls`` (see :mod:`.calls`).
    call_ops: frozenset[str] = frozenset()

    def annotate(self, model: GraphModel) -> None:
        """Record on the model what the graph alone does not say."""
        model.inputs, model.outputs = self.inputs, self.outputs
        model.scope_labels = self.scope_labels
        model.shapes_remedy = self.shapes_remedy
        model.call_ops = self.call_ops


def fold_trace(graph_def: Any, where: str = "graph") -> FoldedTrace:
    """Fold a JIT trace's plumbing into the ops it feeds (see the module docstring).

    Raises
    ------
    InputError
        Lists nested thousands deep (no tracer writes them: a malformed file).
    """
    try:
        return _Folder(graph_def).fold()
    except RecursionError:
        raise InputError(f"{where}: its lists and tuples are nested too deeply to read "
                         "(thousands of levels); it is malformed") from None


class _Folder:
    def __init__(self, graph_def: Any) -> None:
        self.source = graph_def
        self.defs: dict[str, Any] = {}
        #: Value name -> ("tensor", call, out) for an op's output, or the NodeDef of a plumbing
        #: value, resolved on demand.
        self.values: dict[str, Any] = {}
        self.calls: list[_Call] = []
        #: Unpacked values: name -> (the unpacked value's name, element index, its shape).
        self.unpacked: dict[str, tuple[str, int, Any]] = {}
        self.resolved: dict[str, Any] = {}
        #: Module scope (its trace path) -> the dotted path of the module, from the parameters
        #: its ops read (a ModuleList member's call path lacks the list).
        self.paths: dict[str, list[str]] = {}

    # ------------------------------------------------------------------ reading the values

    def fold(self) -> FoldedTrace:
        self._read()
        args = [[self._resolve(text) for text in call.inputs] for call in self.calls]
        for call, resolved in zip(self.calls, args, strict=True):
            self._learn_paths(call, resolved)
        self._name_calls()
        out = GraphDef()
        out.versions.CopyFrom(self.source.versions)
        for call, resolved in zip(self.calls, args, strict=True):
            self._write(out.node.add(), call, resolved)
        return FoldedTrace(out, *self._signature(args), self._scope_labels())

    def _read(self) -> None:
        """Index every value; merge the NodeDefs of one call with several outputs."""
        last: tuple[Any, ...] | None = None
        for node in self.source.node:
            name, op = node.name, node.op
            self.defs[name] = node
            inputs = list(node.input)
            text = node.attr["attr"].s.decode("utf-8", "replace") if "attr" in node.attr else ""
            scope = name.rpartition("/")[0]
            key = (op, scope, tuple(inputs), text)
            if op in _UNPACKS:
                index = self.unpacked[last[1]][1] + 1 if last and last[0] == key else 0
                self.unpacked[name] = (inputs[0] if inputs else "", index, _shape_of(node))
                last = (key, name)
                continue
            if op in _FOLDED:
                self.values[name] = node
                last = None
                continue
            shape = _shape_of(node)
            if shape is None and op in _NUMBERS and len(inputs) == _NUMBERS[op]:
                shape = TensorShapeProto()  # a number: scalar, though torch records none
            if last is not None and last[0] == key and op != _IO:
                call = self.calls[-1]
                self.values[name] = ("tensor", len(self.calls) - 1, len(call.shapes))
                call.shapes.append(shape)
                continue
            self.values[name] = ("tensor", len(self.calls), 0)
            self.calls.append(_Call(op, name, scope, inputs, text, [shape]))
            last = (key, name)

    def _resolve(self, name: str) -> Any:
        """What value ``name`` is to an op using it: ``("tensor", call, out)``, ``("const",
        v)``, ``("param", dotted name, owner scope)``, ``("seq", [values])`` or ``("missing",
        name)`` (memoised; a malformed file's loop resolves to missing)."""
        if name in self.resolved:
            return self.resolved[name]
        self.resolved[name] = ("missing", name)  # until known: breaks loops
        found: Any
        if name in self.unpacked:
            found = self._element(*self.unpacked[name])
        else:
            value = self.values.get(name)
            if value is None:
                found = ("missing", name)
            elif isinstance(value, tuple):
                found = value
            else:
                found = self._plumbing(value)
        self.resolved[name] = found
        return found

    def _plumbing(self, node: Any) -> Any:
        op, inputs = node.op, list(node.input)
        if op == "prim::Constant":
            return ("const", _constant(node))
        if op == "prim::GetAttr":
            scope = node.name.rpartition("/")[0]
            parts = scope.split("/")[1:]
            return ("param", ".".join(_attribute(p) for p in parts), parts[:-1])
        if op in _BUILDS:
            return ("seq", [self._resolve(i) for i in inputs])
        if op == "prim::TupleIndex" and len(inputs) == 2:
            index = self._resolve(inputs[1])
            if index[0] == "const" and isinstance(index[1], int):
                return self._element(inputs[0], index[1], _shape_of(node))
        if op in _PASS_THROUGH and inputs:
            found = self._resolve(inputs[0])
            shape = _shape_of(node)
            if found[0] == "tensor" and shape is not None:  # a number made a tensor: the
                shapes = self.calls[found[1]].shapes       # number's shape (scalar)
                if shapes[found[2]] is None:
                    shapes[found[2]] = shape
            return found
        return ("missing", node.name)  # a malformed TupleIndex

    def _element(self, name: str, index: int, shape: Any = None) -> Any:
        """Element ``index`` of a list or tuple: an item of one built here, or an output of
        the op that returned it (``aten::chunk``, ``aten::lstm``'s state), whose shape the
        unpacking recorded."""
        whole = self._resolve(name)
        if whole[0] == "seq":
            items = whole[1]
            return items[index] if 0 <= index < len(items) else ("missing", name)
        if whole[0] == "tensor":
            call = self.calls[whole[1]]
            while len(call.shapes) <= index:
                call.shapes.append(None)
            if call.shapes[index] is None:
                call.shapes[index] = shape
            return ("tensor", whole[1], index)
        return whole

    # ------------------------------------------------------------------ names

    def _learn_paths(self, call: _Call, resolved: list[Any]) -> None:
        """Match an op's scope to the attribute path of the parameters it reads: the call path
        ``TransformerEncoder[encoder]/TransformerEncoderLayer[0]/Linear[linear1]`` is the
        module ``encoder.layers.0.linear1``.  The call path's modules are the attribute path's
        in order, with the containers iterated in ``forward`` left out."""
        scope = call.scope.split("/")
        for value in _leaves(resolved):
            if value[0] != "param":
                continue
            owner = value[2]
            matched = _subsequence(scope[1:], owner)
            if matched is None:
                continue
            for i, end in enumerate(matched):
                self.paths.setdefault("/".join(scope[:i + 2]), owner[:end + 1])

    def _name_calls(self) -> None:
        """Each op named after what it does, numbered within its scope as TensorFlow numbers
        (``add``, ``add_1``); inputs and outputs named after the argument (``x``)."""
        outputs = sum(c.op == _IO and c.scope == "output" for c in self.calls)
        bases = []
        for call in self.calls:
            if call.op == _IO:
                bases.append(_io_name(call.value, several=outputs > 1))
            else:
                short = call.op.rpartition("::")[2].strip("_") or call.op
                bases.append(f"{call.scope}/{short}" if call.scope else short)
        scopes = [c.scope for c in self.calls if c.op != _IO]
        for call, name in zip(self.calls, unique_names(bases, scopes), strict=True):
            call.name = name

    def _scope_labels(self) -> dict[str, str]:
        """Each module scope's label: its dotted path and class (``layer1.0.conv1
        (Conv2d)``); the model's own scope keeps its class name."""
        labels: dict[str, str] = {}
        dotted: dict[str, list[str]] = {}
        scopes = sorted({c.scope for c in self.calls if c.op != _IO})
        for scope in scopes:
            parts = scope.split("/")
            for i in range(2, len(parts) + 1):
                path = "/".join(parts[:i])
                if path in labels:
                    continue
                known = self.paths.get(path)
                if known is None:
                    known = [*dotted.get("/".join(parts[:i - 1]), []), parts[i - 1]]
                dotted[path] = known
                module = _MODULE.match(parts[i - 1])
                text = ".".join(_attribute(p) for p in known)
                labels[path] = f"{text} ({module.group(1)})" if module else text
        return labels

    # ------------------------------------------------------------------ writing

    def _write(self, node: Any, call: _Call, resolved: list[Any]) -> None:
        node.name = call.name
        node.op = {"input": "input", "output": "output"}.get(call.scope, call.op) \
            if call.op == _IO else call.op
        names = _argument_names(call.op, len(resolved))
        slot = 0
        for arg, value in zip(names, resolved, strict=True):
            leaves = _leaves([value])
            tensors = [v for v in leaves if v[0] in ("tensor", "missing")]
            node.input.extend(self._input_text(t) for t in tensors)
            if len(tensors) < len(leaves) or not leaves:  # not tensors alone: an attribute
                node.attr[arg].CopyFrom(_attr(arg, value, slot))
            slot += len(tensors)
        if any(s is not None for s in call.shapes):
            shapes = node.attr["_output_shapes"].list.shape
            for shape in call.shapes:
                shapes.add().CopyFrom(shape if shape is not None
                                      else TensorShapeProto(unknown_rank=True))
        if call.text not in ("", "{}") and call.op != _IO:
            node.attr["attributes"].s = call.text.encode("utf-8")

    def _input_text(self, value: Any) -> str:
        if value[0] == "missing":
            return value[1]
        call = self.calls[value[1]]
        return call.name if value[2] == 0 else f"{call.name}:{value[2]}"

    def _signature(self, args: list[list[Any]]
                   ) -> tuple[tuple[TensorSpec, ...], tuple[TensorSpec, ...]]:
        inputs, outputs = [], []
        for call, resolved in zip(self.calls, args, strict=True):
            if call.op != _IO:
                continue
            if call.scope == "input":
                inputs.append(TensorSpec(call.name, f"{call.name}:0", None,
                                         _spec_shape(call.shapes)))
                continue
            for value in _leaves(resolved):
                if value[0] == "tensor":
                    outputs.append(TensorSpec(call.name, self._input_text(value), None,
                                              _spec_shape(call.shapes)))
        return tuple(inputs), tuple(outputs)


# ---------------------------------------------------------------------- helpers


def unique_names(bases: list[str], scopes: Iterable[str]) -> list[str]:
    """Each base name made unique as TensorFlow numbers ops (``add``, ``add_1``), never taking
    the name of a scope or of one of its ancestors: an op named like a scope would merge with
    it in the hierarchy."""
    taken: set[str] = set()
    for scope in set(scopes):
        parts = scope.split("/")
        taken.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
    names = []
    for base in bases:
        name, n = base, 1
        while name in taken:
            name, n = f"{base}_{n}", n + 1
        taken.add(name)
        names.append(name)
    return names


def _shape_of(node: Any) -> Any:
    if "_output_shapes" in node.attr and node.attr["_output_shapes"].list.shape:
        return node.attr["_output_shapes"].list.shape[0]
    return None


def _spec_shape(shapes: list[Any]) -> tuple[int | None, ...] | None:
    return shape_from_proto(shapes[0]) if shapes and shapes[0] is not None else None


def _attribute(component: str) -> str:
    """``Conv2d[conv1]`` -> ``conv1``; a component without brackets is its own name."""
    module = _MODULE.match(component)
    return module.group(2) if module else component


def _subsequence(call: list[str], owner: list[str]) -> list[int] | None:
    """Where each component of ``call`` sits in ``owner``, matched from the end, or None
    when ``call`` is not ``owner`` (or an ancestor of it: a fused kernel reads its
    submodules' weights) less some containers; None too when the op reads another module's
    parameter (a tied weight)."""
    if not call or call[-1] not in owner:
        return None
    matched: list[int] = []
    j = len(owner) - 1 - owner[::-1].index(call[-1])
    for part in reversed(call):
        while j >= 0 and owner[j] != part:
            j -= 1
        if j < 0:
            return None
        matched.append(j)
        j -= 1
    return matched[::-1]


def _io_name(value: str, *, several: bool) -> str:
    """``input/x.1`` -> ``x`` (the tracer numbers a name it has seen); ``output/output.1`` ->
    ``output``, or ``output_1`` ... when the model returns several."""
    debug = value.partition("/")[2] or value
    if debug.startswith("output.") and value.startswith("output/"):
        return debug.replace(".", "_") if several else "output"
    return _VALUE_NUMBER.sub("", debug) or debug


def _leaves(values: list[Any]) -> list[Any]:
    """The values inside lists and tuples, in order (the values themselves otherwise)."""
    out: list[Any] = []
    stack = list(reversed(values))
    while stack:
        value = stack.pop()
        if value[0] == "seq":
            stack.extend(reversed(value[1]))
        else:
            out.append(value)
    return out


def _argument_names(op: str, count: int) -> list[str]:
    for names in ARGUMENTS.get(op, ()):
        split = names.split()
        if len(split) == count:
            return split
    return [f"arg {i}" for i in range(count)]


def _constant(node: Any) -> Any:
    """A ``prim::Constant``'s value from the text torch wrote: ``{ value : 3}``, ``{}`` (None),
    ``{ value :  cpu }`` (a string: torch replaced its quotes with spaces)."""
    text = node.attr["attr"].s.decode("utf-8", "replace") if "attr" in node.attr else ""
    body = text.strip()[1:-1] if text.strip().startswith("{") else text
    _, colon, raw = body.partition(":")
    if not colon:
        return None
    if raw.startswith("  ") and raw.endswith(" "):
        return raw.strip()
    raw = raw.strip()
    if raw in ("inf", "-inf", "nan"):
        return float(raw)
    try:
        return ast.literal_eval(raw)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return raw  # a tensor's printout: tensor([1., 2.])


def _attr(arg: str, value: Any, slot: int) -> AttrValue:
    """An argument folded into an attribute: numbers and lists of numbers as such, anything
    else as text (a parameter by its name, a list holding tensors by their input slots)."""
    kind = value[0]
    if kind == "const":
        return _plain(arg, value[1])
    if kind == "seq":
        items = [v[1] for v in value[1] if v[0] == "const"]
        if len(items) == len(value[1]) and items:
            for field_name, types in (("b", (bool,)), ("i", (int,)), ("f", (float, int))):
                if all(isinstance(x, types) for x in items):
                    attr = AttrValue()
                    getattr(attr.list, field_name).extend(
                        [float(x) for x in items] if field_name == "f" else items)
                    return attr
        if not any(v[0] in ("tensor", "missing") for v in _leaves(value[1])):
            attr = AttrValue()  # parameters (an LSTM's weights): one item each
            attr.list.s.extend(_text(v, [slot]).encode("utf-8") for v in value[1])
            return attr
    return AttrValue(s=_text(value, [slot]).encode("utf-8"))


def _plain(arg: str, value: Any) -> AttrValue:
    if isinstance(value, bool):
        return AttrValue(b=value)
    if isinstance(value, int):
        if arg in ("dtype", "scalar_type") and value in _DTYPES:
            return AttrValue(s=_DTYPES[value].encode())
        return AttrValue(i=value) if -2**63 <= value < 2**63 else AttrValue(s=str(value).encode())
    if isinstance(value, float) and math.isfinite(value):
        return AttrValue(f=value)
    return AttrValue(s=("None" if value is None else str(value)).encode("utf-8"))


def _text(value: Any, slot: list[int]) -> str:
    """A folded value as text; tensors inside it by the input slot they arrive on."""
    kind = value[0]
    if kind == "param":
        return f"{value[1]} (parameter)"
    if kind == "seq":
        return "[" + ", ".join(_text(v, slot) for v in value[1]) + "]"
    if kind in ("tensor", "missing"):
        slot[0] += 1
        return f"input {slot[0] - 1}"
    return "None" if value[1] is None else str(value[1])
