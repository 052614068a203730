"""ONNX models read as the model: the GraphDef :mod:`graphviz_tb.read.onnx` wrote, as stored,
folded into the ops a person reads, as :mod:`.pytorch` folds a JIT trace (a new GraphDef, so
the stages after the model stay format-blind).

* **No plumbing drawn.**  Initializers (weights) are never ops: each shows in the details of
  the op it feeds, under the input's schema name (``W: conv1.weight (initializer, 64×3×7×7,
  float32)``).  ``Constant`` nodes fold the same way, with their value when small, and so do
  the ``Identity`` copies the TorchScript exporter makes of a shared weight (the op shows the
  weight itself).  Shape arithmetic (``Shape`` → ``Gather`` → ``Unsqueeze`` → ``Concat``
  feeding a ``Reshape``: any of a few integer ops whose inputs are all shapes or constants)
  folds into each op it serves, written as the expression it computes; the tensor whose shape
  it reads becomes an input of that op.  Each op lists the ONNX nodes folded into it
  (``folded nodes``) and keeps its own ONNX name (``onnx node``).
* **The hierarchy**, from the first of: the dynamo exporter's module metadata
  (``pkg.torch.onnx.name_scopes``, with ``class_hierarchy`` for each module's class), node
  names with ``/`` (the TorchScript exporter's ``/layer1/layer1.0/conv1/Conv``; any other
  exporter's scopes are taken as written; TorchScript names a module's second call ``relu_1``,
  labelled ``layer1.0.relu (call 2)``; the dynamo exporter's calls of one leaf module are
  split likewise), else none (the grouping stage's dataflow blocks
  then apply).  Both PyTorch exporters give one module the same scope (``layer1/0/conv1``),
  labelled as the code names it (``layer1.0.conv1 (Conv2d)``; the class only where the file
  says it).  An op is named after its type within its module (``layer1/0/conv1/Conv``).
* Graph inputs and outputs are ``input`` and ``output`` ops, and the model's signature.

Nothing here imports ``onnx``: the reader did.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tensorboard.compat.proto.graph_pb2 import GraphDef

from ..read.base import TensorSpec
from ..read.dtypes import dtype_name, shape_from_proto
from .pytorch import FoldedTrace, unique_names

__all__ = ["ONNX_BOOKKEEPING", "SHAPES_REMEDY", "fold_onnx", "is_onnx_graph"]

SHAPES_REMEDY = ("few shapes recorded: the file has little value_info and onnx.shape_inference "
                 "could not infer the rest (export with shapes, or run onnx's shape inference)")

_MODEL, _INPUT, _OUTPUT, _INITIALIZER = "onnx::Model", "onnx::Input", "onnx::Output", \
    "onnx::Initializer"
#: Ops whose output is a shape or size read from a tensor.
_SHAPE_SOURCES = frozenset({"Shape", "Size"})
#: Arithmetic on shapes and constants, and tensors made from them (``ConstantOfShape``: the
#: onnx wheel's "light" test models make every weight so): folded when every input is itself
#: folded.
_ARITHMETIC = frozenset({
    "Identity", "Gather", "Unsqueeze", "Squeeze", "Concat", "Slice", "Cast", "Add", "Sub",
    "Mul", "Div", "Mod", "Neg", "Abs", "Floor", "Ceil", "Min", "Max", "Equal", "Less",
    "Greater", "Not", "Where", "Reshape", "ReduceProd", "Sqrt", "ConstantOfShape", "Range"})
#: A folded value's expression is cut here (shape arithmetic can nest deep).
_MAX_TEXT = 300
_NUMBERED_OUTPUT = "output"
#: An op's own ONNX node name and the nodes folded into it: in its details, but not what a
#: diff compares (two exports of one model number their nodes differently).  Spaced, so no
#: TensorFlow attribute can be named so.
_NODE, _FOLDED = "onnx node", "folded nodes"
ONNX_BOOKKEEPING = frozenset({_NODE, _FOLDED})
_CALL = re.compile(r"(.+)_(\d+)")


@dataclass(frozen=True)
class _Folded:
    """What a folded value is to an op reading it: its text, the real tensors it reads (a
    ``Shape``'s input) and the ONNX nodes it folds."""

    text: str
    reads: tuple[str, ...]
    members: frozenset[str]


def is_onnx_graph(graph_def: Any) -> bool:
    """Whether a GraphDef is an ONNX model as :mod:`graphviz_tb.read.onnx` writes it (its
    first NodeDef is ``onnx::Model``; TensorFlow's op names never hold ``::``)."""
    return bool(graph_def.node) and graph_def.node[0].op == _MODEL


def fold_onnx(graph_def: Any) -> FoldedTrace:
    """Fold an ONNX model's plumbing into its ops and name them by module (see the module
    docstring)."""
    return _Folder(graph_def).fold()


class _Folder:
    def __init__(self, graph_def: Any) -> None:
        self.header = graph_def.node[0]
        self.nodes = list(graph_def.node[1:])
        self.index = {node.name: node for node in self.nodes}
        self.consumers: dict[str, int] = {}
        for node in self.nodes:
            for text in node.input:
                producer = text.partition(":")[0]
                self.consumers[producer] = self.consumers.get(producer, 0) + 1
        self.folded: dict[str, _Folded] = {}
        self.names: dict[str, str] = {}  # raw NodeDef name -> the op's name
        self.labels: dict[str, str] = {}
        self.recorded: set[str] = set()  # scopes from the dynamo exporter's metadata

    def fold(self) -> FoldedTrace:
        for node in self.nodes:
            self._classify(node)
        drawn = [n for n in self.nodes if n.name not in self.folded]
        scopes = self._split_calls(drawn, [self._scope(n) for n in drawn])
        bases = [self._base(n, scope) for n, scope in zip(drawn, scopes, strict=True)]
        for node, name in zip(drawn, unique_names(bases, scopes), strict=True):
            self.names[node.name] = name
        out = GraphDef()
        for node in drawn:
            self._write(out.node.add(), node)
        note = self.header.attr["shapes note"].s.decode() if "shapes note" in self.header.attr \
            else ""
        return FoldedTrace(out, *self._signature(drawn), self.labels,
                           shapes_remedy=f"{SHAPES_REMEDY}; {note}" if note else SHAPES_REMEDY,
                           stored_nodes=self.header.attr["nodes"].i)

    # ------------------------------------------------------------------ folding

    def _classify(self, node: Any) -> None:
        """Fold ``node`` when it is plumbing (nodes come in dataflow order, as ONNX requires:
        an input named later is never folded)."""
        op, name = node.op, _name(node)
        if op == _INITIALIZER:
            self.folded[node.name] = _Folded(_text(node), (), frozenset())
            return
        if node.name not in self.consumers or op in (_INPUT, _OUTPUT):
            return
        inputs = [self.folded.get(text.partition(":")[0]) for text in node.input]
        member = frozenset({f"{op} {name}"})
        if op == "Constant":
            self.folded[node.name] = _Folded(_text(node), (), member)
        elif op in _SHAPE_SOURCES and node.input:
            source = node.input[0]
            reads = (source,) if inputs[0] is None else inputs[0].reads
            self.folded[node.name] = _Folded(f"{op}({self._source(source)})", reads, member)
        elif op in _ARITHMETIC and node.input and all(f is not None for f in inputs):
            parts = [f for f in inputs if f is not None]
            if op == "Identity":  # a weight's copy: the weight itself
                text = parts[0].text
            else:
                text = f"{op}({', '.join(p.text for p in parts)})"
            self.folded[node.name] = _Folded(
                text if len(text) <= _MAX_TEXT else f"{text[:_MAX_TEXT]}…",
                tuple(dict.fromkeys(r for p in parts for r in p.reads)),
                member.union(*(p.members for p in parts)))

    def _source(self, text: str) -> str:
        producer = self.index.get(text.partition(":")[0])
        return _name(producer) if producer is not None else text

    # ------------------------------------------------------------------ names

    def _scope(self, node: Any) -> str:
        """The node's module scope (``layer1/0/conv1``), its modules labelled on the way."""
        if node.op in (_INPUT, _OUTPUT):
            return ""
        scopes = [s.decode("utf-8", "replace") for s in node.attr["_scopes"].list.s] \
            if "_scopes" in node.attr else []
        if len(scopes) >= 2:
            classes = [c.decode("utf-8", "replace") for c in node.attr["_classes"].list.s] \
                if "_classes" in node.attr else []
            if len(classes) != len(scopes):
                classes = []
            scope = self._modules(scopes[1:-1], [c.rpartition(".")[2] for c in classes[1:-1]])
            self.recorded.add(scope)
            return scope
        name = _name(node)
        if name.startswith("/"):  # TorchScript: /layer1/layer1.0/conv1/Conv
            return self._modules([p for p in name.split("/")[1:-1] if p], [])
        return name.rpartition("/")[0]  # another exporter's scopes, as written

    def _split_calls(self, drawn: list[Any], scopes: list[str]) -> list[str]:
        """A leaf module the dynamo exporter's metadata says was called more than once
        (ResNet's ``relu``) split into one scope per call, as TorchScript names them
        (``relu``, ``relu_1``): one scope for both would be a box that the data leaves and
        comes back into.  A call is a connected part of the module's ops."""
        position = {node.name: i for i, node in enumerate(drawn)}
        members: dict[str, list[int]] = {}
        for i, scope in enumerate(scopes):
            if scope in self.recorded:
                members.setdefault(scope, []).append(i)
        parents = {s.rpartition("/")[0] for s in set(scopes)}
        for scope, ops in members.items():
            if len(ops) < 2 or scope in parents:
                continue
            root = {i: i for i in ops}
            for i in ops:
                for text in drawn[i].input:
                    j = position.get(text.partition(":")[0])
                    if j in root:
                        root[_find(root, i)] = _find(root, j)
            calls = list(dict.fromkeys(_find(root, i) for i in ops))
            label = self.labels.get(scope, scope)
            for n, call in enumerate(calls[1:], start=2):
                name, k = f"{scope}_{n - 1}", n
                while name in self.labels:
                    name, k = f"{scope}_{k}", k + 1
                self.labels[name] = f"{label[:-1]}, call {n})" if label.endswith(")") \
                    else f"{label} (call {n})"
                for i in ops:
                    if _find(root, i) == call:
                        scopes[i] = name
        return scopes

    def _modules(self, paths: list[str], classes: list[str]) -> str:
        """Module paths as scope components relative to their parent (``layer1.0`` under
        ``layer1`` is ``0``), each scope labelled with its dotted path and class.  The dynamo
        exporter writes full paths (``layer1.0.conv1``); TorchScript a module's name in its
        parent, but a container's members by the container's name (``downsample.0``)."""
        dotted, parts = "", list[str]()
        for i, path in enumerate(paths):
            if dotted and path.startswith(dotted + "."):
                part = path[len(dotted) + 1:]
            elif parts and path.startswith(parts[-1] + "."):
                part = path[len(parts[-1]) + 1:]
            else:
                part = path
            kind = classes[i] if i < len(classes) else ""
            called = _CALL.fullmatch(part)
            prefix = "/".join(parts)
            if not classes and called and f"{prefix}/{called.group(1)}".lstrip("/") \
                    in self.labels:  # TorchScript's name for a module's next call: relu_1
                dotted = f"{dotted}.{called.group(1)}" if dotted else called.group(1)
                kind = f"call {int(called.group(2)) + 1}"
            else:
                dotted = f"{dotted}.{part}" if dotted else part
            parts.append(part.replace("/", "∕"))
            scope = "/".join(parts)
            if scope not in self.labels or (kind and "(" not in self.labels[scope]):
                self.labels[scope] = f"{dotted} ({kind})" if kind else dotted
        return "/".join(parts)

    def _base(self, node: Any, scope: str) -> str:
        if node.op in (_INPUT, _OUTPUT):
            name = _name(node).replace("/", "_") or node.op.partition("::")[2].lower()
            return _NUMBERED_OUTPUT if node.op == _OUTPUT and name.isdigit() else name
        short = node.op.rpartition("::")[2]
        return f"{scope}/{short}" if scope else short

    # ------------------------------------------------------------------ writing

    def _write(self, out: Any, node: Any) -> None:
        out.name = self.names[node.name]
        out.op = {_INPUT: "input", _OUTPUT: "output"}.get(node.op, node.op)
        arguments = [a.decode() for a in node.attr["_inputs"].list.s] \
            if "_inputs" in node.attr else []
        members: set[str] = set()
        for slot, text in enumerate(node.input):
            folded = self.folded.get(text.partition(":")[0])
            if folded is None:
                out.input.append(self._input_text(text))
                continue
            argument = arguments[slot] if slot < len(arguments) else f"input {slot}"
            out.attr[argument].s = folded.text.encode("utf-8")
            members |= folded.members
            for read in folded.reads:
                if self._input_text(read) not in out.input:
                    out.input.append(self._input_text(read))
        for key in node.attr:
            if not key.startswith("_") or key == "_output_shapes":
                out.attr[key].CopyFrom(node.attr[key])
        if node.op not in (_INPUT, _OUTPUT):
            out.attr[_NODE].s = node.attr["_name"].s
        if members:
            out.attr[_FOLDED].list.s.extend(m.encode("utf-8") for m in sorted(members))

    def _input_text(self, text: str) -> str:
        producer, colon, index = text.partition(":")
        name = self.names.get(producer)
        if name is None:
            return text  # a tensor nothing produces: a missing node, with a warning
        return f"{name}:{index}" if colon and index != "0" else name

    def _signature(self, drawn: list[Any]
                   ) -> tuple[tuple[TensorSpec, ...], tuple[TensorSpec, ...]]:
        inputs, outputs = [], []
        for node in drawn:
            if node.op == _INPUT:
                name = self.names[node.name]
                inputs.append(TensorSpec(name, f"{name}:0", *_spec(node)))
            elif node.op == _OUTPUT and node.input:
                producer = self.index.get(node.input[0].partition(":")[0])
                spec = _spec(producer) if producer is not None else (None, None)
                outputs.append(TensorSpec(self.names[node.name],
                                          self._input_text(node.input[0]), *spec))
        return tuple(inputs), tuple(outputs)


def _find(root: dict[int, int], i: int) -> int:
    """The representative of ``i``'s part (union-find, paths halved)."""
    while root[i] != i:
        root[i] = root[root[i]]
        i = root[i]
    return i


def _name(node: Any) -> str:
    return node.attr["_name"].s.decode("utf-8", "replace")


def _text(node: Any) -> str:
    return node.attr["_text"].s.decode("utf-8", "replace") if "_text" in node.attr else ""


def _spec(node: Any) -> tuple[str | None, tuple[int | None, ...] | None]:
    """The dtype and shape of a node's first output, as a signature lists them."""
    dtypes = node.attr["output_types"].list.type if "output_types" in node.attr else []
    shapes = node.attr["_output_shapes"].list.shape if "_output_shapes" in node.attr else []
    return (dtype_name(dtypes[0]) if dtypes and dtypes[0] else None,
            shape_from_proto(shapes[0]) if shapes else None)
