"""The op graph: one node per op, one edge per input slot, typed and shaped.

This is the value every later stage reads.  It keeps what TensorBoard throws away:

* every input slot is its own edge (a ``MultiDiGraph`` keyed by the destination's input index),
  so ``x:0`` and ``x:1`` feeding one op stay two edges (TensorBoard issue #6430);
* edges are typed ``data``, ``control`` (``^x``) or ``ref`` (an input mutated in place);
* TF1 while loops stay cyclic; their back edges are marked (``back=True``) so layout and
  tracing can treat the rest as a DAG;
* function calls (``StatefulPartitionedCall``, ``While``, ``If``, ``Case`` ...) keep their call
  op and gain the function body under the call's name, wired argument by argument
  (see :mod:`graphviz_tb.model.calls`).

Bad wiring never raises: an input naming no op becomes a ``missing`` node, and duplicate names,
self-loops and malformed input strings become warnings.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

from ..read.attrs import decode_attrs
from .shapes import TensorInfo, node_outputs

if TYPE_CHECKING:
    import networkx as nx

    from ..read.base import GraphSource, TensorSpec

__all__ = [
    "BARE",
    "CONTROL",
    "DATA",
    "REF",
    "SHAPES_REMEDY",
    "GraphModel",
    "InputRef",
    "OpGraph",
    "Warnings",
    "is_ref_edge",
    "node_def_of",
    "parse_input",
    "reachable",
    "tensor_of",
]

DATA = "data"
CONTROL = "control"
REF = "ref"
#: What a picture or ``info`` says of a graph that records no shapes (see
#: :meth:`GraphModel.shapes_note`).
SHAPES_REMEDY = ("no shapes recorded: pass --infer-shapes, or write the graph with "
                 "add_shapes=True, or save a SavedModel")
#: Ops whose outputs record their shapes whatever the writer did: not evidence either way.
_SHAPE_SOURCES = frozenset({"Const", "HostConst", "Placeholder", "PlaceholderWithDefault",
                            "_Arg", "VarHandleOp", "ReadVariableOp", "Identity", "NoOp"})
#: How many data edges :meth:`GraphModel.shapes_note` reads at most.
_SHAPES_SAMPLE = 5000

#: Ops whose output is a variable (a TF1 ref or a TF2 resource handle).
_VARIABLE_OPS = frozenset(
    {"VariableV2", "Variable", "TemporaryVariable", "VarHandleOp", "RefIdentity", "RefEnter",
     "RefSwitch", "RefMerge", "RefNextIteration", "RefExit"}
)
#: Op-name prefixes of ops that mutate an input in place.
MUTATING_PREFIXES = (
    "Assign", "Scatter", "Apply", "ResourceApply", "ResourceScatter", "ResourceSparseApply",
    "SparseApply", "CountUpTo", "ResourceCountUpTo", "DestroyTemporaryVariable",
)


@dataclass
class Warnings:
    """Collects warnings by category, so 10,000 dangling inputs make one readable line each kind.

    The first few examples of each category are kept verbatim; the rest are counted.
    """

    per_category: int = 5
    _items: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    _counts: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def add(self, category: str, message: str) -> None:
        self._counts[category] += 1
        if len(self._items[category]) < self.per_category:
            self._items[category].append(message)

    def lines(self) -> list[str]:
        out: list[str] = []
        for category, items in self._items.items():
            out.extend(items)
            extra = self._counts[category] - len(items)
            if extra > 0:
                out.append(f"... and {extra:,} more: {category}")
        return out

    def count(self, category: str) -> int:
        """How many warnings of one category were added (all of them, not only those kept)."""
        return self._counts.get(category, 0)

    def __len__(self) -> int:
        return sum(self._counts.values())


@dataclass(frozen=True)
class InputRef:
    """One parsed NodeDef input string.

    ``"x"`` -> (x, 0); ``"x:2"`` -> (x, 2); ``"^x"`` -> control; inside function bodies
    ``"x:out:1"`` names output arg ``out`` of node ``x``.  ``error`` is set when the string is
    malformed (``x:-1``, ``x:abc``, empty); ``node`` is then the best guess or ``""``.
    """

    node: str
    index: int = 0
    control: bool = False
    arg: str | None = None
    error: str | None = None


def parse_input(text: str) -> InputRef:
    """Parse one NodeDef input string (see :class:`InputRef`)."""
    if not text:
        return InputRef("", error="empty input string")
    if text[0] == "^":
        return InputRef(text[1:], control=True, error=None if len(text) > 1 else "empty input")
    parts = text.split(":")
    if len(parts) == 1:
        return InputRef(text)
    if len(parts) == 2:
        name, index = parts
        if index.isascii() and index.isdigit():  # int() refuses ², TF refuses ٣
            return InputRef(name, int(index))
        return InputRef(name, 0, error=f"bad output index {index!r}")
    name, arg, index = parts[0], ":".join(parts[1:-1]), parts[-1]
    if index.isascii() and index.isdigit():
        return InputRef(name, int(index), arg=arg)
    return InputRef(name, 0, arg=arg, error=f"bad output index {index!r}")


#: The first byte of a bare NodeDef (see :func:`node_def_of`): field number 0, which starts no
#: protobuf message, so a bare NodeDef is never read as a whole one.
BARE = b"\x00"


def node_def_of(data: dict[str, Any]) -> Any:
    """An op's NodeDef message, from its node dict; None for a node no NodeDef made.

    A graph's own ops keep their NodeDef serialized, as ``bytes``: any message parsed from a
    GraphDef keeps the whole parsed GraphDef alive, about three times the file's size, and
    most ops' attributes are never read.  Most keep it bare (:data:`BARE`, then the NodeDef
    without its name and inputs): the op's key and in-edges hold both, and they were two
    thirds of its bytes; :meth:`OpGraph.node_def` puts them back.  Each call parses anew, so
    callers read it once per op.  Ops of a function body keep the message of the function
    library, which the model holds anyway (:attr:`GraphModel.functions`).
    """
    node_def = data.get("node_def")
    if type(node_def) is not bytes:
        return node_def
    return _node_def_parser()(memoryview(node_def)[1:] if node_def[:1] == BARE else node_def)


@cache
def _node_def_parser() -> Any:
    """NodeDef's parser, imported once: in :func:`node_def_of`, a sixth of its time."""
    from tensorboard.compat.proto.node_def_pb2 import NodeDef  # loaded with the GraphDef
    return NodeDef.FromString


def tensor_of(src: str, data: dict[str, Any]) -> tuple[str, int]:
    """The tensor ``(producer, output index)`` whose shape an edge out of ``src`` carries: its
    source's output, unless the edge names another (an opened call's argument and result
    edges carry the call's tensors).  Only those keep a ``tensor``: a tuple on every edge
    was a twentieth of a big model's memory, and kept its dict from being shared."""
    tensor = data.get("tensor")
    return (src, data["src_output"]) if tensor is None else tensor


def is_ref_edge(src_op: str, dst_op: str) -> bool:
    """An edge is a reference edge when it hands a variable to an op that mutates it."""
    return src_op in _VARIABLE_OPS and dst_op.startswith(MUTATING_PREFIXES)


class OpGraph:
    """A directed multigraph, kept in three plain dicts that every stage reads directly:

    * ``node_data``: op name -> the op's attribute dict (see :class:`GraphModel`);
    * ``succ``: op name -> successor name -> edge key (the destination's input slot) -> the
      edge's attribute dict;
    * ``pred``: op name -> predecessor name -> the same key dicts as ``succ``'s (one dict
      per adjacent pair, shared by both sides, so an edge is written once);

    and ``graph``, the graph's own attributes.  Every op has an entry in all three, an empty
    dict when it has no edges.  Dicts rather than views or methods because the stages walk
    every op and edge of graphs 100,000 ops large, several times per picture: a dict lookup
    is the cheapest step there is.  The layout is networkx's ``MultiDiGraph``'s, and this
    class answers the few networkx calls the stages make; networkx itself is not imported
    for a render, as importing it costs more than all the rest of a small graph's render
    (``bench/`` measures it).
    :meth:`networkx` makes a real ``MultiDiGraph`` for API users and networkx's algorithms.

    Key dicts and edge dicts are never changed in place: a pair joined by one edge shares its
    key dict with every pair whose edge has the same data (see
    :meth:`~graphviz_tb.model.builder.ModelBuilder.shared_edge`), and a change puts a new
    dict in its place (:func:`insert_edge`, :meth:`remove_edges_from`).  Sharing them halves
    the memory a big graph's edges take.
    """

    __slots__ = ("graph", "node_data", "pred", "succ")

    def __init__(self) -> None:
        self.node_data: dict[str, dict[str, Any]] = {}
        self.succ: dict[str, dict[str, dict[int, dict[str, Any]]]] = {}
        self.pred: dict[str, dict[str, dict[int, dict[str, Any]]]] = {}
        self.graph: dict[str, Any] = {}

    def networkx(self) -> nx.MultiDiGraph:
        """A new ``networkx.MultiDiGraph`` equal to this graph, made on each call through
        networkx's public API: its nodes, edges and attribute dicts are copies (the values in
        them are shared), so changing it leaves the picture alone; every edge of a model
        names its ``tensor`` (:func:`tensor_of`), as networkx users read it.  Nodes and each node's
        out-edges keep their order; a node's in-edges come in the order of their sources."""
        import networkx as nx  # imported when asked: see the class docstring

        g = nx.MultiDiGraph(**self.graph)
        g.add_nodes_from((name, {**data, "node_def": self.node_def(name)}
                          if type(data.get("node_def")) is bytes else data)
                         for name, data in self.node_data.items())
        g.add_edges_from((u, v, k, {**d, "tensor": tensor_of(u, d)} if "src_output" in d else d)
                         for u, nbrs in self.succ.items()
                         for v, keydict in nbrs.items() for k, d in keydict.items())
        return g

    def node_def(self, name: str) -> Any:
        """An op's whole NodeDef (:func:`node_def_of`), with the name and inputs a bare one
        leaves to the graph put back: the inputs from its in-edges in slot order, each the
        tensor it carries (so an opened call's consumers name the call's output, as written).
        A diff's model names the ops of its old side as the diff places them."""
        data = self.node_data[name]
        node_def = node_def_of(data)
        raw = data.get("node_def")
        if type(raw) is bytes and raw[:1] == BARE:
            inputs = []
            for src, keydict in self.pred[name].items():
                for slot, d in keydict.items():
                    producer, out = tensor_of(src, d)
                    inputs.append((slot, f"^{producer}" if d["kind"] == CONTROL
                                   else f"{producer}:{out}" if out else producer))
            node_def.name = name
            node_def.input.extend(text for _, text in sorted(inputs))
        return node_def

    def __contains__(self, name: object) -> bool:
        return name in self.node_data

    def __iter__(self) -> Iterator[str]:
        return iter(self.node_data)

    def __len__(self) -> int:
        return len(self.node_data)

    @property
    def nodes(self) -> _Nodes:
        """``nodes[name]`` is an op's attribute dict; ``nodes(data="role")`` yields
        ``(name, role)`` pairs and ``nodes(data=True)`` ``(name, attrs)``, as networkx's node
        view does."""
        return _Nodes(self.node_data)

    @property
    def edges(self) -> _Edges:
        """``edges[src, dst, key]`` is an edge's attribute dict; ``edges(keys=, data=)`` lists
        them, as in networkx."""
        return _Edges(self.succ)

    def has_edge(self, u: str, v: str, key: int) -> bool:
        return key in self.succ.get(u, {}).get(v, {})

    def in_edges(self, name: str, *, keys: bool = False, data: bool = False
                 ) -> list[tuple[Any, ...]]:
        """The edges into ``name``: ``(src, name[, key][, data])``, as networkx gives them."""
        return [(u, name, *((k,) if keys else ()), *((d,) if data else ()))
                for u, keydict in self.pred[name].items() for k, d in keydict.items()]

    def out_edges(self, name: str, *, keys: bool = False, data: bool = False
                  ) -> list[tuple[Any, ...]]:
        """The edges out of ``name``: ``(name, dst[, key][, data])``."""
        return [(name, v, *((k,) if keys else ()), *((d,) if data else ()))
                for v, keydict in self.succ[name].items() for k, d in keydict.items()]

    def successors(self, name: str) -> Iterator[str]:
        return iter(self.succ[name])

    def predecessors(self, name: str) -> Iterator[str]:
        return iter(self.pred[name])

    def remove_edges_from(self, edges: Iterable[tuple[str, str, int]]) -> None:
        """Remove each ``(src, dst, key)`` edge there is, as networkx does (the rest are
        ignored); a pair left with no edge is no longer adjacent."""
        for u, v, k in edges:
            keydict = self.succ.get(u, {}).get(v)
            if keydict is not None and k in keydict:
                if len(keydict) == 1:
                    del self.succ[u][v]
                    del self.pred[v][u]
                else:  # a new key dict: they are shared (see the class docstring)
                    self.succ[u][v] = self.pred[v][u] = {
                        key: d for key, d in keydict.items() if key != k}

    def add_node(self, name: str, **attrs: Any) -> None:
        if name in self.node_data:
            self.node_data[name].update(attrs)
        else:
            insert_node(self, name, attrs)

    def add_edge(self, u: str, v: str, key: int, **attrs: Any) -> None:
        """Add (or update) the edge ``u -> v`` with ``key``; both ends must exist."""
        keydict = self.succ[u].get(v)
        if keydict is not None and key in keydict:
            attrs = {**keydict[key], **attrs}  # a new dict: they are shared
        insert_edge(self, u, v, key, attrs)


class _Nodes:
    __slots__ = ("_node",)

    def __init__(self, node: dict[str, dict[str, Any]]) -> None:
        self._node = node

    def __getitem__(self, name: str) -> dict[str, Any]:
        return self._node[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._node)

    def get(self, name: str, default: Any = None) -> Any:
        return self._node.get(name, default)

    def __call__(self, data: str | Literal[True]) -> Iterator[tuple[str, Any]]:
        """``(name, attrs)`` with ``data=True``, ``(name, attrs[data])`` (or None) else."""
        if data is True:
            return iter(self._node.items())
        return ((n, d.get(data)) for n, d in self._node.items())


class _Edges:
    __slots__ = ("_succ",)

    def __init__(self, succ: dict[str, dict[str, dict[int, dict[str, Any]]]]) -> None:
        self._succ = succ

    def __getitem__(self, edge: tuple[str, str, int]) -> dict[str, Any]:
        u, v, k = edge
        return self._succ[u][v][k]

    def __call__(self, *, keys: bool = False, data: bool = False) -> Iterator[tuple[Any, ...]]:
        """Every edge, ``(src, dst[, key][, attrs])``, in insertion order."""
        for u, nbrs in self._succ.items():
            for v, keydict in nbrs.items():
                for k, d in keydict.items():
                    yield (u, v, *((k,) if keys else ()), *((d,) if data else ()))


class GraphModel:
    """An op graph ready for the hierarchy: an :class:`OpGraph` plus lookups.

    Node data: ``op``, ``device``, ``node_def`` (the NodeDef, read through
    :func:`node_def_of`; None for synthetic nodes),
    ``role`` (``op``, ``missing``, ``arg``, ``retval``), ``calls`` (function names opened under
    this op), ``function`` (the function whose body holds the node), ``recursion_cut``.

    Edge data (key = destination input slot): ``kind``, ``src_output``, ``dst_input``,
    ``back``, and ``tensor`` (producer, output index) where the tensor whose shape the edge
    carries is not its source's output ``src_output``: read it with :func:`tensor_of`.  The
    graph's own edges share one dict per distinct ``(kind, src_output, dst_input)`` (see
    :meth:`~graphviz_tb.model.builder.ModelBuilder.shared_edge`), so a stage that changes an
    edge's data puts a new dict in its place.
    """

    def __init__(self, graph: OpGraph, *, kind: str = "op") -> None:
        #: The op graph every stage reads (see :class:`OpGraph`).
        self.g = graph
        self.kind = kind
        #: A diff's merged model (:func:`graphviz_tb.model.diff.diff_models`): its ops and
        #: edges say whether they were added, removed or changed.
        self.is_diff = False
        self.source: GraphSource | None = None
        self.warnings = Warnings()
        self.functions: dict[str, Any] = {}
        self.top_level_nodes = 0
        self.function_nodes = 0
        self.inputs: tuple[TensorSpec, ...] = ()
        self.outputs: tuple[TensorSpec, ...] = ()
        #: What the reader should know about the graph as a whole, beside the picture: in
        #: its legend and in ``info`` (the shapes note aside, see :meth:`shapes_note`).
        self.notes: list[str] = []
        #: Group name -> function name, for every function body opened under a call.
        self.function_groups: dict[str, str] = {}
        #: Op types beyond TensorFlow's whose ops may run functions, by their ``_calls``
        #: attribute (ONNX's ``If``, ``Loop``, ``Scan``; see :mod:`.calls`).
        self.call_ops: frozenset[str] = frozenset()
        #: Group name -> the label a picture gives it, where the format names its scopes
        #: otherwise than by the last component (PyTorch: ``layer1.0.conv1 (Conv2d)``).
        self.scope_labels: dict[str, str] = {}
        #: What :meth:`shapes_note` advises when shapes are missing.
        self.shapes_remedy = SHAPES_REMEDY
        self._attrs: dict[str, dict[str, Any]] = {}
        self._outputs: dict[str, list[TensorInfo]] = {}
        #: A kept NodeDef's outputs by its bytes: ops sharing one (see node_def_of) have the
        #: same outputs, worked out once (a training step's variable reads are thousands).
        self._outputs_of: dict[bytes, list[TensorInfo]] = {}

    @property
    def unit(self) -> str:
        """What one node of the graph is to its reader: ``layer`` in a Keras layer graph
        (conceptual), else ``op``; boxes, legends and summaries count in it."""
        return "layer" if self.kind == "conceptual" else "op"

    @property
    def graph(self) -> nx.MultiDiGraph:
        """The op graph as a new ``networkx.MultiDiGraph`` on each read (see
        :meth:`OpGraph.networkx`: a copy, so changing it changes no picture); networkx is
        imported on first use."""
        return self.g.networkx()

    def __len__(self) -> int:
        return len(self.g)

    def __contains__(self, name: object) -> bool:
        return name in self.g

    def op(self, name: str) -> str:
        return self.g.nodes[name]["op"]

    def attrs(self, name: str) -> dict[str, Any]:
        """Decoded attributes of an op (cached; ``_output_shapes`` left to :meth:`outputs`)."""
        if name not in self._attrs:
            node_def = node_def_of(self.g.node_data[name])
            decoded = decode_attrs(node_def.attr) if node_def is not None else {}
            decoded.pop("_output_shapes", None)
            self._attrs[name] = decoded
        return self._attrs[name]

    def op_outputs(self, name: str) -> list[TensorInfo]:
        """What is known about each output of an op."""
        cached = self._outputs.get(name)
        if cached is None:
            data = self.g.node_data[name]  # the node dict itself: no view built per op
            raw = data.get("node_def")
            if "outputs" in data:
                cached = data["outputs"]
            elif type(raw) is bytes:
                cached = self._outputs_of.get(raw)
                if cached is None:
                    cached = self._outputs_of[raw] = node_outputs(node_def_of(data))
            elif raw is not None:
                cached = node_outputs(node_def_of(data))
            else:
                cached = []
            self._outputs[name] = cached
        return cached

    def cached_outputs(self) -> dict[str, list[TensorInfo]]:
        """The outputs worked out or replaced so far, by op: what a model copying these ops
        must carry over (the rest it works out from the same NodeDefs)."""
        return dict(self._outputs)

    def set_outputs(self, name: str, outputs: list[TensorInfo]) -> None:
        """Replace what is known of an op's outputs (TensorFlow shape inference, pinned inputs)."""
        self._outputs[name] = outputs

    def tensor(self, name: str, index: int) -> TensorInfo | None:
        outs = self.op_outputs(name) if name in self.g else []
        return outs[index] if 0 <= index < len(outs) else None

    def input_tensor(self, name: str, slot: int = 0) -> tuple[str, int] | None:
        """The tensor ``(producer, output index)`` feeding data input ``slot`` of an op, or
        None when nothing does (the handle a variable read or write acts on is input 0)."""
        for src, keydict in self.g.pred[name].items():
            for d in keydict.values():
                if d["dst_input"] == slot and d["kind"] != CONTROL:
                    return tensor_of(src, d)
        return None

    def edge_tensor(self, src: str, dst: str, key: int) -> TensorInfo | None:
        """The tensor a data edge carries (looking through a function's return node)."""
        return self.carried(src, self.g.succ[src][dst][key])  # no edge view: a hot path

    def carried(self, src: str, data: dict[str, Any]) -> TensorInfo | None:
        """:meth:`edge_tensor` of an edge out of ``src`` given its dict, for a reader that
        holds it already (the viewer's page reads every edge's)."""
        if data["kind"] == CONTROL:
            return None
        info = self.tensor(*tensor_of(src, data))
        if (info is None or not info.known) and self.g.node_data[src]["role"] == "retval":
            for u, _, d in self.g.in_edges(src, data=True):
                if d["kind"] != CONTROL:
                    return self.tensor(*tensor_of(u, d))
        return info

    def data_edges(self) -> Iterator[tuple[str, str, int, dict[str, Any]]]:
        """The data and reference edges (everything but control), as :meth:`iter_edges`."""
        for u, v, k, d in self.iter_edges():
            if d["kind"] != CONTROL:
                yield u, v, k, d

    def legend_notes(self) -> list[str]:
        """The notes a legend shows: :attr:`notes`, then the shapes note if any."""
        note = self.shapes_note()
        return [*self.notes, *([note] if note else [])]

    def shapes_note(self) -> str | None:
        """One line when the graph records (almost) no shapes of the tensors it computes, with
        the remedies; None when it does, or when inference ran.  TF2 function bodies and
        frozen graphs written without ``add_shapes`` record none: only the inputs' edges then
        have labels, and the picture should say why.  Read from the first data edges out of
        computing ops (constants, inputs and variable reads record theirs anyway)."""
        if self.g.graph.get("shapes_inferred"):
            return None
        nodes = self.g.node_data
        known = seen = 0
        for u, _v, _k, d in self.data_edges():
            src, index = tensor_of(u, d)
            if nodes[src]["op"] in _SHAPE_SOURCES:
                continue
            info = self.tensor(src, index)
            known += info is not None and info.known_shape
            seen += 1
            if seen >= _SHAPES_SAMPLE:
                break
        if not seen or known >= 0.1 * seen:
            return None
        return self.shapes_remedy

    def shape_error_ops(self) -> list[str]:
        """The ops where shape inference failed (none unless it ran: no scan then)."""
        if not self.g.graph.get("shapes_inferred"):
            return []
        return [name for name, data in self.g.node_data.items() if data.get("shape_error")]

    def iter_edges(self) -> Iterator[tuple[str, str, int, dict[str, Any]]]:
        """Every edge as ``(src, dst, key, data)``, in insertion order.

        Walks the adjacency dicts directly, building no view object per edge: the hot loops
        walk every edge of the graph.
        """
        for u, nbrs in self.g.succ.items():
            for v, keydict in nbrs.items():
                for k, data in keydict.items():
                    yield u, v, k, data

    def edge_counts(self) -> dict[str, int]:
        counts = {DATA: 0, CONTROL: 0, REF: 0}
        for _, _, _, data in self.iter_edges():
            counts[data["kind"]] += 1
        return counts


def insert_node(g: OpGraph, name: str, attrs: dict[str, Any]) -> None:
    """``g.add_node`` for a new node, without a call's keyword packing: the builder adds every
    op of graphs 100,000 ops large one by one, and these two functions are most of its time
    beyond parsing."""
    g.node_data[name] = attrs
    g.succ[name] = {}
    g.pred[name] = {}


def insert_edge(g: OpGraph, u: str, v: str, key: int, attrs: dict[str, Any]) -> None:
    """``g.add_edge(u, v, key, **attrs)`` for nodes already present (see :func:`insert_node`),
    or the edge's data replaced: in a new key dict, as the pair's may be shared (see
    :class:`OpGraph`), where the edge keeps its place."""
    keydict = g.succ[u].get(v)
    g.succ[u][v] = g.pred[v][u] = {key: attrs} if keydict is None else {**keydict, key: attrs}


_N = TypeVar("_N")


class Adjacency(Protocol[_N]):
    """Each node's next nodes: a dict by name, or a list by index."""

    def __getitem__(self, node: _N, /) -> Iterable[_N]: ...


def reachable(seeds: Iterable[_N], step: Adjacency[_N]) -> set[_N]:
    """``seeds`` and everything reachable from them along ``step`` (a loop, not recursion:
    graphs hold chains thousands long).  Shape inference and the dataflow blocks both ask."""
    seen = set(seeds)
    stack = list(seen)
    while stack:
        for nxt in step[stack.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


