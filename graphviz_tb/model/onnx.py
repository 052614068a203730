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
  (``folded nodes``) and keeps its own ONNX name (``onnx node``).  Folding reaches into
  bodies: a loop's body reading an outer weight shows it as the model's ops do.
* **The hierarchy** of each graph by module (:mod:`.onnx_names`), else none (the grouping
  stage's dataflow blocks then apply).
* Graph inputs and outputs are ``input`` and ``output`` ops, and the model's signature.
* **Bodies and local functions** are FunctionDefs in the library, as TensorFlow's function
  bodies are, so :mod:`.calls` opens them into groups under their call, wired argument by
  argument.  A body's arguments are its formal inputs, then every tensor of an enclosing
  graph it reads (those of bodies nested in it included), which the call op takes as inputs
  beside its own; a node whose output is a body's result is never folded, so the result is
  drawn.  Each call op's ``_calls`` (see :mod:`graphviz_tb.read.onnx_graph`) says which of
  its inputs feeds each argument, after folding.

Nothing here imports ``onnx``: the reader did.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tensorboard.compat.proto.graph_pb2 import GraphDef

from ..read.base import TensorSpec
from ..read.dtypes import dtype_name, shape_from_proto
from .onnx_names import INPUT as _INPUT
from .onnx_names import OUTPUT as _OUTPUT
from .onnx_names import ModuleNames, node_name, safe_name
from .pytorch import FoldedTrace, unique_names

__all__ = ["ONNX_BOOKKEEPING", "SHAPES_REMEDY", "fold_onnx", "is_onnx_graph"]

SHAPES_REMEDY = ("few shapes recorded: the file has little value_info and onnx.shape_inference "
                 "could not infer the rest (export with shapes, or run onnx's shape inference)")

_MODEL, _INITIALIZER = "onnx::Model", "onnx::Initializer"
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
#: An op's own ONNX node name and the nodes folded into it: in its details, but not what a
#: diff compares (two exports of one model number their nodes differently).  Spaced, so no
#: TensorFlow attribute can be named so.
_NODE, _FOLDED = "onnx node", "folded nodes"
ONNX_BOOKKEEPING = frozenset({_NODE, _FOLDED})
_CALLS = "_calls"


@dataclass(frozen=True)
class _Folded:
    """What a folded value is to an op reading it: its text, the real tensors it reads (a
    ``Shape``'s input) and the ONNX nodes it folds."""

    text: str
    reads: tuple[str, ...]
    members: frozenset[str]


@dataclass
class _Graph:
    """One graph of the file: the model's (``name`` empty), a body of the op ``call`` (a
    NodeDef name), or a local function's."""

    name: str
    nodes: list[Any]
    call: str | None = None
    #: Raw NodeDef of an enclosing graph -> the tensor name the body reads it by.
    outer: dict[str, str] = field(default_factory=dict)
    drawn: list[Any] = field(default_factory=list)
    #: What it reads from enclosing graphs: raw inputs (``n12:1``), in the order first read.
    captured: list[str] = field(default_factory=list)
    #: Raw formal input or captured input -> its argument's name; the results' names.
    args: dict[str, str] = field(default_factory=dict)
    rets: list[str] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)


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
        self.main = _Graph("", list(graph_def.node[1:]))
        self.graphs = [self.main]
        for fdef in graph_def.library.function:  # bodies before the bodies nested in them
            self.graphs.append(_Graph(
                fdef.signature.name, list(fdef.node_def),
                fdef.attr["_call"].s.decode() if "_call" in fdef.attr else None,
                {k: v.s.decode("utf-8", "replace")
                 for k, v in fdef.attr["_outer"].func.attr.items()}
                if "_outer" in fdef.attr else {}))
        self.index = {node.name: node for graph in self.graphs for node in graph.nodes}
        self.home = {node.name: graph for graph in self.graphs for node in graph.nodes}
        self.bodies = {graph.name: graph for graph in self.graphs[1:] if graph.call}
        #: What any body reads each outer tensor by (a nested body's read, for its parent).
        self.outer = {ref: name for graph in reversed(self.graphs) for ref, name in
                      graph.outer.items()}
        self.library = {graph.name: graph for graph in self.graphs[1:]}  # by function name
        self.consumers: dict[str, int] = {}
        self.results: set[str] = set()  # what bodies return: drawn, never folded
        for graph in self.graphs:
            for node in graph.nodes:
                for text in node.input:
                    producer = text.partition(":")[0]
                    self.consumers[producer] = self.consumers.get(producer, 0) + 1
                    if graph is not self.main and node.op == _OUTPUT:
                        self.results.add(producer)
        self.folded: dict[str, _Folded] = {}
        self.names: dict[str, str] = {}  # raw NodeDef name -> the op's name in its graph

    def fold(self) -> FoldedTrace:
        for graph in self.graphs:
            for node in graph.nodes:
                self._classify(node)
        self._fold_weight_arguments()
        for graph in reversed(self.graphs):  # a body's captures before its parent's
            graph.drawn = [n for n in graph.nodes if n.name not in self.folded
                           and (graph is self.main or n.op not in (_INPUT, _OUTPUT))]
            if graph is not self.main:
                graph.captured = self._captures(graph)
        for graph in self.graphs:
            self._name(graph)
        out = GraphDef()
        for node in self.main.drawn:
            self._write(out.node.add(), node, self.main)
        for graph in self.graphs[1:]:
            self._function(out.library.function.add(), graph)
        note = self.header.attr["shapes note"].s.decode() if "shapes note" in self.header.attr \
            else ""
        calling = frozenset(n.op for g in self.graphs for n in g.drawn if _CALLS in n.attr)
        return FoldedTrace(out, *self._signature(self.main.drawn), self.main.labels,
                           shapes_remedy=f"{SHAPES_REMEDY}; {note}" if note else SHAPES_REMEDY,
                           stored_nodes=self.header.attr["nodes"].i, call_ops=calling)

    # ------------------------------------------------------------------ folding

    def _classify(self, node: Any) -> None:
        """Fold ``node`` when it is plumbing (nodes come in dataflow order, as ONNX requires:
        an input named later is never folded; a body comes after the graph that holds its
        call)."""
        op, name = node.op, node_name(node)
        if op == _INITIALIZER:
            self.folded[node.name] = _Folded(_text(node), (), frozenset())
            return
        if node.name not in self.consumers or op in (_INPUT, _OUTPUT) \
                or node.name in self.results:
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

    def _fold_weight_arguments(self) -> None:
        """A local function's formal input that every call feeds with a weight or a constant
        folds as they do: PyTorch's ``export_modules_as_functions`` passes each call its
        module's parameters, which are never drawn, so the argument stood unfed in every
        call, named after one call's weight.  The op reading it lists what each call passes."""
        if all(graph.call is not None for graph in self.graphs[1:]):
            return  # no local function: no node's attributes need reading
        passed: dict[str, list[list[str] | None]] = {}  # per formal input: texts, or None
        for graph in self.graphs:
            for node in graph.nodes:
                for entry in node.attr[_CALLS].list.func if _CALLS in node.attr else ():
                    function = self.library.get(entry.name)
                    if function is None or function.call is not None:
                        continue  # a body: its op passes the values it computes
                    slots = list(entry.attr["args"].list.i)
                    seen = passed.setdefault(entry.name, [[] for _ in slots])
                    for i, slot in enumerate(slots[:len(seen)]):
                        folded = self.folded.get(node.input[slot].partition(":")[0]) \
                            if 0 <= slot < len(node.input) else None
                        texts = seen[i]
                        if folded is None or folded.reads:
                            seen[i] = None
                        elif texts is not None:
                            texts.append(folded.text)
        for name, seen in passed.items():
            formals = [n for n in self.library[name].nodes if n.op == _INPUT]
            for node, texts in zip(formals, seen, strict=False):
                if texts and node.name not in self.results:
                    text = f"at each call: {'; '.join(dict.fromkeys(texts))}"
                    self.folded[node.name] = _Folded(
                        text if len(text) <= _MAX_TEXT else f"{text[:_MAX_TEXT]}…", (),
                        frozenset())

    def _source(self, text: str) -> str:
        producer = self.index.get(text.partition(":")[0])
        return node_name(producer) if producer is not None else text

    def _captures(self, graph: _Graph) -> list[str]:
        """The tensors of enclosing graphs a body reads: by its ops and results, through
        the values folded into them, and by the bodies nested in it."""
        found: dict[str, None] = {}
        for node in graph.drawn + [n for n in graph.nodes if n.op == _OUTPUT]:
            reads: list[str] = []
            for text in node.input:
                folded = self.folded.get(text.partition(":")[0])
                reads.extend(folded.reads if folded is not None else (text,))
            for entry in node.attr[_CALLS].list.func if _CALLS in node.attr else ():
                inner = self.bodies.get(entry.name)
                reads.extend(inner.captured if inner is not None and inner.call == node.name
                             else ())
            for ref in reads:
                home = self.home.get(ref.partition(":")[0])
                if home is not None and home is not graph:
                    found[ref] = None
        return list(found)

    # ------------------------------------------------------------------ names

    def _name(self, graph: _Graph) -> None:
        """The names of a graph's ops, and of a body's arguments and results (unique among
        them, as one group holds them all)."""
        namer = ModuleNames()
        drawn = graph.drawn
        scopes = namer.split_calls(drawn, [namer.scope(n) for n in drawn])
        bases = [namer.base(n, scope) for n, scope in zip(drawn, scopes, strict=True)]
        graph.labels = namer.labels
        inputs, outputs = [], []
        if graph is not self.main:
            inputs = [n.name for n in graph.nodes if n.op == _INPUT
                      and n.name not in self.folded] + graph.captured
            outputs = [n for n in graph.nodes if n.op == _OUTPUT]
            bases += [safe_name(self._tensor(graph, ref)) or "input" for ref in inputs]
            bases += [namer.base(n, "") for n in outputs]
        names = unique_names(bases, scopes)
        for node, name in zip(drawn, names[:len(drawn)], strict=True):
            self.names[node.name] = name
        graph.args = dict(zip(inputs, names[len(drawn):len(drawn) + len(inputs)], strict=True))
        graph.rets = names[len(drawn) + len(inputs):]

    def _tensor(self, graph: _Graph, ref: str) -> str:
        """The tensor name a body reads ``ref`` by: a formal input's own, else the name the
        reader recorded for a read of the enclosing graph's tensor (this body's, or a nested
        body's), else the op's."""
        producer = self.index.get(ref)
        if producer is not None and producer.op == _INPUT:
            return node_name(producer)
        found = graph.outer.get(ref) or self.outer.get(ref)
        if found:
            return found
        name, colon, index = ref.partition(":")
        return f"{self.names.get(name, name)}{'_' + index if colon else ''}"

    # ------------------------------------------------------------------ writing

    def _write(self, out: Any, node: Any, graph: _Graph) -> None:
        out.name = self.names[node.name]
        out.op = {_INPUT: "input", _OUTPUT: "output"}.get(node.op, node.op)
        arguments = [a.decode() for a in node.attr["_inputs"].list.s] \
            if "_inputs" in node.attr else []
        members: set[str] = set()
        slots: dict[int, int] = {}  # the reader's input slot -> the op's
        for slot, text in enumerate(node.input):
            folded = self.folded.get(text.partition(":")[0])
            if folded is None:
                slots[slot] = len(out.input)
                out.input.append(self._ref(text, graph))
                continue
            argument = arguments[slot] if slot < len(arguments) else f"input {slot}"
            out.attr[argument].s = folded.text.encode("utf-8")
            members |= folded.members
            for read in folded.reads:
                if self._ref(read, graph) not in out.input:
                    out.input.append(self._ref(read, graph))
        for key in node.attr:
            if not key.startswith("_") or key == "_output_shapes":
                out.attr[key].CopyFrom(node.attr[key])
        if _CALLS in node.attr:
            self._calls(out, node, graph, slots)
        if node.op not in (_INPUT, _OUTPUT):
            out.attr[_NODE].s = node.attr["_name"].s
        if members:
            out.attr[_FOLDED].list.s.extend(m.encode("utf-8") for m in sorted(members))

    def _calls(self, out: Any, node: Any, graph: _Graph, slots: dict[int, int]) -> None:
        """The op's ``_calls``, its arguments fed from its inputs after folding; what its
        bodies read from outside, inputs of the op too."""
        for entry in node.attr[_CALLS].list.func:
            call = out.attr[_CALLS].list.func.add()
            call.CopyFrom(entry)
            callee = self.library.get(entry.name)
            formals = [n.name for n in callee.nodes if n.op == _INPUT] if callee else []
            args = [slots.get(slot, -1) for i, slot in enumerate(entry.attr["args"].list.i)
                    if i >= len(formals) or formals[i] not in self.folded]
            body = self.bodies.get(entry.name)
            for ref in body.captured if body is not None and body.call == node.name else ():
                text = self._ref(ref, graph)
                if text not in out.input:
                    out.input.append(text)
                args.append(list(out.input).index(text))
            del call.attr["args"].list.i[:]
            call.attr["args"].list.i.extend(args)

    def _function(self, fdef: Any, graph: _Graph) -> None:
        """A body or local function as a FunctionDef: arguments, results, ops, and the
        labels of its module scopes."""
        fdef.signature.name = graph.name
        for i, (ref, name) in enumerate(graph.args.items()):
            arg = fdef.signature.input_arg.add(name=name)
            producer, _, index = ref.partition(":")
            dtype, shape = _output(self.index.get(producer), int(index or 0))
            arg.type = dtype
            if shape is not None:
                fdef.arg_attr[i].attr["_output_shapes"].list.shape.add().CopyFrom(shape)
        outputs = [n for n in graph.nodes if n.op == _OUTPUT]
        for node, name in zip(outputs, graph.rets, strict=True):
            fdef.signature.output_arg.add(name=name, type=_output(node, 0)[0])
            if node.input and node.input[0].partition(":")[0] not in self.folded:
                fdef.ret[name] = self._ref(node.input[0], graph)
        for node in graph.drawn:
            self._write(fdef.node_def.add(), node, graph)
        for scope, label in graph.labels.items():
            fdef.attr["_scope_labels"].func.attr[scope].s = label.encode("utf-8")

    def _ref(self, text: str, graph: _Graph) -> str:
        """How ``graph``'s ops read the raw input ``text``: the model's ops by name (``op``,
        ``op:1``), a body's as a FunctionDef's do (``op:output:1``, an argument's name; a
        local function's result by its name)."""
        producer, colon, index = text.partition(":")
        home = self.home.get(producer)
        if home is None or home is not graph:
            # A tensor nothing makes (a missing node, with a warning), or an outer one.
            return graph.args.get(text, text)
        if producer in graph.args:
            return graph.args[producer]
        name = self.names.get(producer)
        if name is None:  # folded: what reads it says so
            return text
        k = int(index) if colon else 0
        if graph is self.main:
            return f"{name}:{k}" if k else name
        callee = self.library.get(self.index[producer].op)
        if callee is not None and k < len(callee.rets):
            return f"{name}:{callee.rets[k]}:0"
        return f"{name}:output:{k}"

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
                                          self._ref(node.input[0], self.main), *spec))
        return tuple(inputs), tuple(outputs)


def _text(node: Any) -> str:
    return node.attr["_text"].s.decode("utf-8", "replace") if "_text" in node.attr else ""


def _output(node: Any, index: int) -> tuple[int, Any]:
    """The dtype enum (0 unknown) and the shape proto (None unknown) of a node's output."""
    if node is None:
        return 0, None
    dtypes = node.attr["output_types"].list.type if "output_types" in node.attr else []
    shapes = node.attr["_output_shapes"].list.shape if "_output_shapes" in node.attr else []
    return (dtypes[index] if index < len(dtypes) else 0,
            shapes[index] if index < len(shapes) else None)


def _spec(node: Any) -> tuple[str | None, tuple[int | None, ...] | None]:
    """The dtype and shape of a node's first output, as a signature lists them."""
    dtype, shape = _output(node, 0)
    return (dtype_name(dtype) if dtype else None,
            shape_from_proto(shape) if shape is not None else None)
