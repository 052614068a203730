"""The op graph: one node per op, one edge per input slot, typed and shaped.

This is the value every later stage reads.  It keeps what TensorBoard throws away:

* every input slot is its own edge (a ``MultiDiGraph`` keyed by the destination's input index),
  so ``x:0`` and ``x:1`` feeding one op stay two edges (TensorBoard issue #6430);
* edges are typed ``data``, ``control`` (``^x``) or ``ref`` (an input mutated in place);
* TF1 while loops stay cyclic; their back edges are marked (``back=True``) so layout and
  tracing can treat the rest as a DAG;
* function calls (``StatefulPartitionedCall``, ``While``, ``If``, ``Case`` ...) keep their call
  op and gain the function body under the call's name, wired argument by argument
  (see :mod:`graphviz_tb.functions`).

Bad wiring never raises: an input naming no op becomes a ``missing`` node, and duplicate names,
self-loops and malformed input strings become warnings.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

from .attrs import decode_attrs
from .errors import NoGraphError
from .shapes import TensorInfo, node_outputs

if TYPE_CHECKING:
    import networkx as nx

    from .readers.base import GraphSource, TensorSpec

__all__ = [
    "CONTROL",
    "DATA",
    "REF",
    "GraphModel",
    "InputRef",
    "ModelBuilder",
    "OpGraph",
    "Warnings",
    "finish_model",
    "is_ref_edge",
    "mark_back_edges",
    "parse_input",
    "reachable",
    "start_model",
]

DATA = "data"
CONTROL = "control"
REF = "ref"

#: Ops whose output is a variable (a TF1 ref or a TF2 resource handle).
_VARIABLE_OPS = frozenset(
    {"VariableV2", "Variable", "TemporaryVariable", "VarHandleOp", "RefIdentity", "RefEnter",
     "RefSwitch", "RefMerge", "RefNextIteration", "RefExit"}
)
#: Op-name prefixes of ops that mutate an input in place.
_MUTATING_PREFIXES = (
    "Assign", "Scatter", "Apply", "ResourceApply", "ResourceScatter", "ResourceSparseApply",
    "SparseApply", "CountUpTo", "ResourceCountUpTo", "DestroyTemporaryVariable",
)
_BACK_EDGE_SOURCES = frozenset({"NextIteration", "RefNextIteration"})


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


def is_ref_edge(src_op: str, dst_op: str) -> bool:
    """An edge is a reference edge when it hands a variable to an op that mutates it."""
    return src_op in _VARIABLE_OPS and dst_op.startswith(_MUTATING_PREFIXES)


class OpGraph:
    """A directed multigraph kept exactly as networkx keeps a ``MultiDiGraph``: ``_node``
    (name -> attribute dict), ``_succ`` and ``_pred`` (name -> neighbour -> key -> the edge's
    attribute dict, one dict shared by both sides), ``graph`` (the graph's attributes).

    Why not networkx itself: importing it costs 0.13 s, more than everything else a small
    graph's render does, and every stage here reads these dicts directly anyway.  This class
    offers the few networkx methods the stages use; :meth:`networkx` wraps the same dicts in a
    real ``MultiDiGraph`` (no copy) for API users and for networkx's algorithms.
    """

    __slots__ = ("_networkx", "_node", "_pred", "_succ", "graph")

    def __init__(self) -> None:
        self._node: dict[str, dict[str, Any]] = {}
        self._succ: dict[str, dict[str, dict[int, dict[str, Any]]]] = {}
        self._pred: dict[str, dict[str, dict[int, dict[str, Any]]]] = {}
        self.graph: dict[str, Any] = {}
        self._networkx: nx.MultiDiGraph | None = None

    def networkx(self) -> nx.MultiDiGraph:
        """The same graph as a ``networkx.MultiDiGraph`` sharing these dicts (made once)."""
        if self._networkx is None:
            import networkx as nx  # imported when asked: see the class docstring

            g = nx.MultiDiGraph()
            g.graph, g._node, g._pred = self.graph, self._node, self._pred
            g._adj = g._succ = self._succ
            self._networkx = g
        # Tell networkx its caches may be stale: the stages fill and mark the dicts directly.
        getattr(self._networkx, "__networkx_cache__", {}).clear()
        return self._networkx

    def __contains__(self, name: object) -> bool:
        return name in self._node

    def __iter__(self) -> Iterator[str]:
        return iter(self._node)

    def __len__(self) -> int:
        return len(self._node)

    @property
    def nodes(self) -> _Nodes:
        """``nodes[name]`` is an op's attribute dict; ``nodes(data="role")`` yields
        ``(name, role)`` pairs and ``nodes(data=True)`` ``(name, attrs)``, as networkx's node
        view does."""
        return _Nodes(self._node)

    @property
    def edges(self) -> _Edges:
        """``edges[src, dst, key]`` is an edge's attribute dict; ``edges(keys=, data=)`` lists
        them, as in networkx."""
        return _Edges(self._succ)

    def has_edge(self, u: str, v: str, key: int) -> bool:
        return key in self._succ.get(u, {}).get(v, {})

    def in_edges(self, name: str, *, keys: bool = False, data: bool = False
                 ) -> list[tuple[Any, ...]]:
        """The edges into ``name``: ``(src, name[, key][, data])``, as networkx gives them."""
        return [(u, name, *((k,) if keys else ()), *((d,) if data else ()))
                for u, keydict in self._pred[name].items() for k, d in keydict.items()]

    def out_edges(self, name: str, *, keys: bool = False, data: bool = False
                  ) -> list[tuple[Any, ...]]:
        """The edges out of ``name``: ``(name, dst[, key][, data])``."""
        return [(name, v, *((k,) if keys else ()), *((d,) if data else ()))
                for v, keydict in self._succ[name].items() for k, d in keydict.items()]

    def successors(self, name: str) -> Iterator[str]:
        return iter(self._succ[name])

    def predecessors(self, name: str) -> Iterator[str]:
        return iter(self._pred[name])

    def remove_edges_from(self, edges: Iterable[tuple[str, str, int]]) -> None:
        """Remove each ``(src, dst, key)`` edge there is, as networkx does (the rest are
        ignored); a pair left with no edge is no longer adjacent."""
        for u, v, k in edges:
            keydict = self._succ.get(u, {}).get(v)
            if keydict is not None and k in keydict:
                del keydict[k]
                if not keydict:
                    del self._succ[u][v]
                    del self._pred[v][u]

    def add_node(self, name: str, **attrs: Any) -> None:
        if name in self._node:
            self._node[name].update(attrs)
        else:
            _insert_node(self, name, attrs)

    def add_edge(self, u: str, v: str, key: int, **attrs: Any) -> None:
        """Add (or update) the edge ``u -> v`` with ``key``; both ends must exist."""
        keydict = self._succ[u].get(v)
        if keydict is not None and key in keydict:
            keydict[key].update(attrs)
        else:
            _insert_edge(self, u, v, key, attrs)


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

    Node data: ``op``, ``device``, ``node_def`` (the NodeDef, or None for synthetic nodes),
    ``role`` (``op``, ``missing``, ``arg``, ``retval``), ``calls`` (function names opened under
    this op), ``function`` (the function whose body holds the node), ``recursion_cut``.

    Edge data (key = destination input slot): ``kind``, ``src_output``, ``dst_input``,
    ``tensor`` (producer, output index) whose shape the edge carries, ``back``.
    """

    def __init__(self, graph: OpGraph, *, kind: str = "op") -> None:
        #: The op graph every stage reads (see :class:`OpGraph`).
        self.g = graph
        self.kind = kind
        self.source: GraphSource | None = None
        self.warnings = Warnings()
        self.functions: dict[str, Any] = {}
        self.top_level_nodes = 0
        self.function_nodes = 0
        self.inputs: tuple[TensorSpec, ...] = ()
        self.outputs: tuple[TensorSpec, ...] = ()
        #: Group name -> function name, for every function body opened under a call.
        self.function_groups: dict[str, str] = {}
        self._attrs: dict[str, dict[str, Any]] = {}
        self._outputs: dict[str, list[TensorInfo]] = {}

    @property
    def graph(self) -> nx.MultiDiGraph:
        """The op graph as a ``networkx.MultiDiGraph`` (the same dicts as :attr:`g`, so a
        change to one is a change to both); networkx is imported on first use."""
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
            node_def = self.g._node[name].get("node_def")
            decoded = decode_attrs(node_def.attr) if node_def is not None else {}
            decoded.pop("_output_shapes", None)
            self._attrs[name] = decoded
        return self._attrs[name]

    def op_outputs(self, name: str) -> list[TensorInfo]:
        """What is known about each output of an op."""
        cached = self._outputs.get(name)
        if cached is None:
            data = self.g._node[name]  # the node dict itself: 3x faster than the view
            node_def = data.get("node_def")
            if "outputs" in data:
                cached = data["outputs"]
            elif node_def is not None:
                cached = node_outputs(node_def)
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

    def edge_tensor(self, src: str, dst: str, key: int) -> TensorInfo | None:
        """The tensor a data edge carries (looking through a function's return node)."""
        data = self.g._succ[src][dst][key]  # not networkx's edge view: a hot path
        if data["kind"] == CONTROL:
            return None
        info = self.tensor(*data["tensor"])
        if (info is None or not info.known) and self.g._node[src]["role"] == "retval":
            for _u, _, d in self.g.in_edges(src, data=True):
                if d["kind"] != CONTROL:
                    return self.tensor(*d["tensor"])
        return info

    def data_edges(self) -> Iterator[tuple[str, str, int, dict[str, Any]]]:
        """The data and reference edges (everything but control), as :meth:`iter_edges`."""
        for u, v, k, d in self.iter_edges():
            if d["kind"] != CONTROL:
                yield u, v, k, d

    def shape_error_ops(self) -> list[str]:
        """The ops where shape inference failed (none unless it ran: no scan then)."""
        if not self.g.graph.get("shapes_inferred"):
            return []
        return [name for name, data in self.g._node.items() if data.get("shape_error")]

    def iter_edges(self) -> Iterator[tuple[str, str, int, dict[str, Any]]]:
        """Every edge as ``(src, dst, key, data)``, in insertion order.

        Walks the adjacency dicts directly: several times faster than networkx's
        ``graph.edges(keys=True, data=True)`` on 100,000 edges, and the hot loops need it.
        """
        for u, nbrs in self.g._succ.items():
            for v, keydict in nbrs.items():
                for k, data in keydict.items():
                    yield u, v, k, data

    def edge_counts(self) -> dict[str, int]:
        counts = {DATA: 0, CONTROL: 0, REF: 0}
        for _, _, _, data in self.iter_edges():
            counts[data["kind"]] += 1
        return counts


def _insert_node(g: OpGraph, name: str, attrs: dict[str, Any]) -> None:
    """``g.add_node`` for a new node, without a call's keyword packing.

    networkx's public add_node/add_edges_from cost about 1 s for a 65,000-op graph, most of the
    time we have beyond parsing; filling its documented adjacency dicts (``_node``, ``_succ``,
    ``_pred``, keyed edge dicts shared between ``_succ[u][v]`` and ``_pred[v][u]``) the same
    way they do, as :class:`OpGraph` keeps them, takes a fifth of that.
    """
    g._node[name] = attrs
    g._succ[name] = {}
    g._pred[name] = {}


def _insert_edge(g: OpGraph, u: str, v: str, key: int, attrs: dict[str, Any]) -> None:
    """``g.add_edge(u, v, key, **attrs)`` for nodes already present (see :func:`_insert_node`)."""
    keydict = g._succ[u].get(v)
    if keydict is None:
        keydict = g._succ[u][v] = {}
        g._pred[v][u] = keydict
    keydict[key] = attrs


class ModelBuilder:
    """Adds NodeDefs to a MultiDiGraph, resolving inputs within one naming scope."""

    def __init__(self, model: GraphModel, warnings: Warnings) -> None:
        self.model = model
        self.g = model.g
        self.warn = warnings
        self.ops: dict[str, str] = {}
        #: Names a duplicate must not be renamed to: every name the graph itself uses, so an
        #: input naming a later op ``a (duplicate 2)`` is never wired to a renamed ``a``.
        self.reserved: set[str] = set()
        self._next_copy: dict[str, int] = {}

    def add_node(self, name: str, node_def: Any, **extra: Any) -> str:
        """Add one op; a duplicate name is kept under a new name, with a warning."""
        if name in self.ops:
            base, n = name, self._next_copy.get(name, 2)
            while True:
                name = f"{base} (duplicate {n})"
                if name not in self.ops and name not in self.reserved:
                    break
                n += 1
            self._next_copy[base] = n + 1  # 10,000 copies of one name stay linear
            self.warn.add("duplicate op names", f"duplicate op name {base!r}; kept as {name!r}")
        op = node_def.op if node_def is not None else extra.pop("op")
        self.ops[name] = op
        attrs = {"op": op, "device": node_def.device if node_def is not None else "",
                 "node_def": node_def, "role": extra.pop("role", "op")}
        attrs.update(extra)
        _insert_node(self.g, name, attrs)
        return name

    def ensure_missing(self, name: str, wanted_by: str) -> None:
        if name not in self.ops:
            self.ops[name] = "(missing)"
            _insert_node(self.g, name, {"op": "(missing)", "device": "", "node_def": None,
                                        "role": "missing"})
            self.warn.add(
                "inputs that name no op",
                f"op {wanted_by!r} has input {name!r}, which names no op; drawn as a missing node",
            )

    def edge(self, src: str, dst: str, slot: int, control: bool, out_index: int) -> None:
        if control:
            kind = CONTROL
        elif is_ref_edge(self.ops[src], self.ops[dst]):
            kind = REF
        else:
            kind = DATA
        if src == dst:
            self.warn.add("self-loops", f"op {dst!r} takes its own output as input")
        _insert_edge(self.g, src, dst, slot,
                     {"kind": kind, "src_output": out_index, "dst_input": slot,
                      "tensor": (src, out_index), "back": False})


def _add_graph_nodes(builder: ModelBuilder, node_defs: Any,
                     names: list[str]) -> list[tuple[str, Any]]:
    """Add the top-level NodeDefs (the common path of :meth:`ModelBuilder.add_node`, inlined: it
    runs once per op of the graph)."""
    ops, node, succ, pred = builder.ops, builder.g._node, builder.g._succ, builder.g._pred
    named = []
    for name, nd in zip(names, node_defs, strict=True):
        if name in ops:
            if not builder.reserved:
                builder.reserved = {other.name for other in node_defs}
            name = builder.add_node(name, nd)
        else:
            op = ops[name] = nd.op
            node[name] = {"op": op, "device": nd.device, "node_def": nd, "role": "op"}
            succ[name] = {}
            pred[name] = {}
        named.append((name, nd))
    return named


def _wire_graph_inputs(builder: ModelBuilder, node_defs: Iterable[tuple[str, Any]]) -> None:
    """Top-level wiring: inputs are ``x``, ``x:N`` or ``^x`` and name graph ops directly."""
    ops, succ, pred = builder.ops, builder.g._succ, builder.g._pred
    for name, node_def in node_defs:
        inputs = node_def.input[:]  # one list: iterating the protobuf field costs more
        if not inputs:
            continue
        mutating = ops[name].startswith(_MUTATING_PREFIXES)
        into = pred[name]
        for slot, text in enumerate(inputs):
            # The common cases, ``x``, ``x:N`` and ``^x``, inlined (this loop runs once per
            # edge of the graph); anything else, or odd, goes the long way below.
            src, colon, index = text.partition(":")
            if src[:1] == "^":
                src = src[1:]
                kind = CONTROL
                out = 0 if not colon else -1
            else:
                out = 0 if not colon else int(index) if index.isascii() and index.isdigit() \
                    else -1
                kind = REF if mutating and is_ref_edge(ops.get(src, ""), ops[name]) else DATA
            if out >= 0 and src and src in ops and src != name:
                keydict = into.get(src)
                if keydict is None:
                    keydict = succ[src][name] = into[src] = {}
                keydict[slot] = {"kind": kind, "src_output": out, "dst_input": slot,
                                 "tensor": (src, out), "back": False}
                continue
            ref = parse_input(text)
            if ref.arg is not None:  # "x:out:0" outside a function: take x's output 0 leniently
                ref = InputRef(ref.node, ref.index, error=f"function-style input {text!r}")
            if ref.error:
                builder.warn.add("malformed inputs", f"op {name!r}: input {text!r}: {ref.error}")
                if not ref.node:
                    continue
            if ref.node not in ops:
                builder.ensure_missing(ref.node, name)
            builder.edge(ref.node, name, slot, ref.control, ref.index)


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


def mark_back_edges(g: OpGraph, order: Iterable[str] | None = None) -> int:
    """Mark the edges that close cycles, so the rest of the graph is a DAG.

    NextIteration -> Merge edges of TF1 while loops are back edges by definition.  Any cycle
    left after them (a malformed graph) is broken by an iterative DFS in node order, so the
    choice is deterministic.  Most graphs have none, which one peeling pass (Kahn's algorithm)
    proves cheaply before any DFS runs; ``order`` is the order of the ops to try that pass in
    (default: the graph's; see :func:`_acyclic`).  Returns the number of edges marked.
    """
    succ, nodes = g._succ, g._node
    marked = 0
    loops = {u for u, data in nodes.items() if data["op"] in _BACK_EDGE_SOURCES}
    for u in loops:
        for keydict in succ[u].values():
            for data in keydict.values():
                data["back"] = True
                marked += 1
    if _acyclic(succ, loops, order):
        return marked
    state: dict[str, int] = {}  # 1 = on the DFS stack, 2 = done
    for root in succ:
        if root in state:
            continue
        state[root] = 1
        stack = [(root, _out(succ, root))]
        while stack:
            node, edges = stack[-1]
            for v, data in edges:
                if data["back"]:
                    continue
                seen = state.get(v)
                if seen == 1:
                    data["back"] = True
                    marked += 1
                elif seen is None:
                    state[v] = 1
                    stack.append((v, _out(succ, v)))
                    break
            else:
                state[node] = 2
                stack.pop()
    return marked


def _out(succ: dict, node: str) -> Iterator[tuple[str, dict[str, Any]]]:
    for v, keydict in succ[node].items():
        for data in keydict.values():
            yield v, data


def _acyclic(succ: dict, loops: set[str], order: Iterable[str] | None = None) -> bool:
    """Whether the graph minus the out-edges of ``loops`` (its marked back edges) has no cycle.

    Nodes nearly always come in an order where every edge points forward (TensorFlow creates
    an op after its inputs), which one pass proves.  A few edges may point backward (a
    control input added later).  Every cycle passes through one of those, and stays at or
    before the last of their sources (its latest node has a backward edge out), so only what
    their destinations reach up to there is peeled (Kahn's algorithm), not the whole graph.
    That holds in any order of the nodes; ``order`` gives a better one than the graph's where
    there is (function bodies placed at their calls), and the nodes it leaves out come first.
    """
    position = {n: i for i, n in enumerate(succ if order is None else order)}
    if len(position) != len(succ):  # the ops the order leaves out (missing inputs)
        first = [n for n in succ if n not in position]
        position = {n: i for i, n in enumerate(first + list(position))}
    heads: list[str] = []
    last = -1
    for u, i in position.items():  # a plain loop: 90,000 edges on NASNet
        if u not in loops:
            for v in succ[u]:
                if position[v] <= i:
                    heads.append(v)
                    last = i
    if not heads:
        return True
    region = set(heads)
    stack = list(region)
    while stack:
        u = stack.pop()
        if u not in loops:
            for v in succ[u]:
                if v not in region and position[v] <= last:
                    region.add(v)
                    stack.append(v)
    indegree = dict.fromkeys(region, 0)
    for u in region:
        if u not in loops:
            for v in succ[u]:
                if v in region:
                    indegree[v] += 1
    ready = [n for n, d in indegree.items() if d == 0]
    seen = 0
    while ready:
        u = ready.pop()
        seen += 1
        if u in loops:
            continue
        for v in succ[u]:
            if v in region:
                indegree[v] -= 1
                if indegree[v] == 0:
                    ready.append(v)
    return seen == len(region)


def start_model(graph_def: Any, *, source: GraphSource | None = None, kind: str = "op",
                where: str = "graph", names: list[str] | None = None
                ) -> tuple[GraphModel, ModelBuilder, list[str]]:
    """The first step of the model stage: a :class:`GraphModel` of the GraphDef's own ops,
    wired input by input, with its function library recorded but not yet opened (that is
    :mod:`graphviz_tb.functions`, the second step).  Returns the model, the builder that adds
    to it, and the names of the top-level ops.

    ``names`` are the NodeDefs' names when the caller has read them already (each read from
    protobuf makes a new string: 30 ms on NASNet-Large).

    Raises
    ------
    NoGraphError
        When the GraphDef has no ops and no function library to show.
    """
    model = GraphModel(OpGraph(), kind=kind)
    model.source = source
    if source is not None:
        model.inputs, model.outputs = source.inputs, source.outputs
    library = graph_def.library.function if graph_def.HasField("library") else []
    model.functions = {f.signature.name: f for f in library}
    model.top_level_nodes = len(graph_def.node)
    model.function_nodes = sum(len(f.node_def) for f in library)
    if not graph_def.node and not model.functions:
        raise NoGraphError(f"{where}: the graph holds no ops")
    builder = ModelBuilder(model, model.warnings)
    nodes = graph_def.node
    named = _add_graph_nodes(builder, nodes,
                             names if names is not None else [nd.name for nd in nodes])
    _wire_graph_inputs(builder, named)
    return model, builder, [name for name, _ in named]


def finish_model(model: GraphModel, order: Iterable[str] | None = None) -> GraphModel:
    """The last step: mark the edges that close cycles (see :func:`mark_back_edges`; ``order``
    is the ops in an order where most edges point forward, when the graph's is not)."""
    back = mark_back_edges(model.g, order)
    if back and not any(model.g.nodes[n]["op"] in _BACK_EDGE_SOURCES for n in model.g):
        model.warnings.add("cycles", f"{back} edge(s) close cycles outside a while loop")
    return model
