"""Building the op graph from a GraphDef: one node per NodeDef, wired input by input (the common
cases inlined: this runs once per edge), then the edges that close cycles marked."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from google.protobuf.message import DecodeError

from ..errors import InputError, NoGraphError
from ..read.graphdef import HEAD_MESSAGE
from .graph import (
    BARE,
    CONTROL,
    DATA,
    MUTATING_PREFIXES,
    REF,
    GraphModel,
    InputRef,
    OpGraph,
    Warnings,
    insert_edge,
    insert_node,
    is_ref_edge,
    node_def_of,
    parse_input,
)

if TYPE_CHECKING:
    from ..read.base import GraphSource

__all__ = ["ModelBuilder", "finish_model", "mark_back_edges", "start_model"]


_BACK_EDGE_SOURCES = frozenset({"NextIteration", "RefNextIteration"})


class ModelBuilder:
    """Adds NodeDefs to a MultiDiGraph, resolving inputs within one naming scope."""

    def __init__(self, model: GraphModel, warnings: Warnings) -> None:
        self.model = model
        self.g = model.g
        self.warn = warnings
        #: Every op's node dict by name: its ``op`` is the op's type (no dict of the types
        #: beside it: a million-op graph's is a million inserts more).
        self.node = model.g.node_data
        #: Names a duplicate must not be renamed to: every name the graph itself uses, so an
        #: input naming a later op ``a (duplicate 2)`` is never wired to a renamed ``a``.
        self.reserved: set[str] = set()
        self._next_copy: dict[str, int] = {}
        #: Per distinct ``(kind, src_output, dst_input)``, the edge dict and the key dict of
        #: a pair joined by that edge alone (see :meth:`shared_edge`).
        self.shared_edges: dict[tuple[str, int, int],
                                tuple[dict[str, Any], dict[int, dict[str, Any]]]] = {}
        #: The edges pointing back in the ops' order, as the top-level wiring found them (see
        #: :class:`Backward`); None once an edge is added another way.
        self.backward: Backward | None = None

    def add_node(self, name: str, node_def: Any, **extra: Any) -> str:
        """Add one op; a duplicate name is kept under a new name, with a warning."""
        if name in self.node:
            base, n = name, self._next_copy.get(name, 2)
            while True:
                name = f"{base} (duplicate {n})"
                if name not in self.node and name not in self.reserved:
                    break
                n += 1
            self._next_copy[base] = n + 1  # 10,000 copies of one name stay linear
            self.warn.add("duplicate op names", f"duplicate op name {base!r}; kept as {name!r}")
        op = node_def.op if node_def is not None else extra.pop("op")
        attrs = {"op": op, "device": node_def.device if node_def is not None else "",
                 "node_def": node_def, "role": extra.pop("role", "op")}
        attrs.update(extra)
        insert_node(self.g, name, attrs)
        return name

    def ensure_missing(self, name: str, wanted_by: str) -> None:
        if name not in self.node:
            insert_node(self.g, name, {"op": "(missing)", "device": "", "node_def": None,
                                        "role": "missing"})
            self.warn.add(
                "inputs that name no op",
                f"op {wanted_by!r} has input {name!r}, which names no op; drawn as a missing node",
            )

    def edge(self, src: str, dst: str, slot: int, control: bool, out_index: int) -> None:
        self.backward = None  # not noted for an edge added here
        if control:
            kind = CONTROL
        elif is_ref_edge(self.node[src]["op"], self.node[dst]["op"]):
            kind = REF
        else:
            kind = DATA
        if src == dst:
            self.warn.add("self-loops", f"op {dst!r} takes its own output as input")
        attrs, alone = self.shared_edge(kind, out_index, slot)
        if dst in self.g.succ[src]:
            insert_edge(self.g, src, dst, slot, attrs)
        else:
            self.g.succ[src][dst] = self.g.pred[dst][src] = alone

    def shared_edge(self, kind: str, out: int, slot: int
                    ) -> tuple[dict[str, Any], dict[int, dict[str, Any]]]:
        """The data of an edge of ``kind`` from output ``out`` into input ``slot``, and the key
        dict of a pair joined by that edge alone: each shared by every such edge and pair,
        never changed in place (see :class:`~graphviz_tb.model.graph.OpGraph`).  A graph's
        edges hold a few thousand distinct ones: a dict per edge and per pair were two
        fifths of a big model's memory."""
        key = (kind, out, slot)
        found = self.shared_edges.get(key)
        if found is None:
            attrs = {"kind": kind, "src_output": out, "dst_input": slot, "back": False}
            found = self.shared_edges[key] = (attrs, {slot: attrs})
        return found


def _add_graph_nodes(builder: ModelBuilder, node_defs: Any, names: list[str]
                     ) -> tuple[list[str], list[dict[str, Any]], list[dict[str, Any]]]:
    """Add the top-level NodeDefs (the common path of :meth:`ModelBuilder.add_node`, inlined: it
    runs once per op of the graph); returns each one's name in the model, its node dict and
    its dict of predecessors, for the wiring to fill without looking each up by name (three
    lookups per op in dicts of every op were a tenth of a million-op model's build)."""
    node, succ, pred = builder.node, builder.g.succ, builder.g.pred
    named = []
    datas = []
    intos = []
    # One string per op type and per device: protobuf makes a new one per read (a million
    # ``Const`` strings), and a shared one keeps its hash for every later dict keyed by it.
    types: dict[str, str] = {}
    devices: dict[str, str] = {}
    for name, nd in zip(names, node_defs, strict=True):
        if name in node:
            if not builder.reserved:
                builder.reserved = {other.name for other in node_defs}
            name = builder.add_node(name, nd)
            data = node[name]
            data["node_def"] = None  # serialized as it is wired, as below
            into = pred[name]
        else:
            op = nd.op
            op = types.setdefault(op, op)
            device = nd.device
            # The NodeDef is kept serialized (see :func:`~.graph.node_def_of`: a parsed one
            # keeps the whole parsed GraphDef alive), written when the op is wired, which
            # makes most bare: every op's whole bytes at once were the file's size again.
            data = node[name] = {"op": op, "device": devices.setdefault(device, device),
                                 "node_def": None, "role": "op"}
            succ[name] = {}
            into = pred[name] = {}
        named.append(name)
        datas.append(data)
        intos.append(into)
    return named, datas, intos


def _wire_graph_inputs(builder: ModelBuilder,
                       node_defs: Iterable[tuple[str, dict[str, Any], dict[str, Any], Any]],
                       *, consume: bool) -> list[tuple[str, dict[str, Any]]]:
    """Top-level wiring: inputs are ``x``, ``x:N`` or ``^x`` and name graph ops directly.
    ``node_defs`` are each op's name, node dict and predecessors (see :func:`_add_graph_nodes`)
    and its NodeDef; ``consume``: the NodeDefs are the model's to change (a graph's head, see
    :func:`start_model`), and each kept bare loses its name and inputs in place.  Returns,
    for a head, the name and node dict of one op per distinct NodeDef kept: what
    :func:`_check_node_defs` decodes."""
    node, succ = builder.node, builder.g.succ
    # Each op's own name string, for the source of every edge: the input's text cut at its
    # colon is a new string per edge, which the edge and its source's key would keep (a
    # tenth of the model's memory on a big graph) and later lookups would compare in full.
    # It is found by the op's position, which also tells whether the edge points back (see
    # Backward): noted here rather than found by another pass over every edge.
    order = list(node)
    position = {name: i for i, name in enumerate(order)}
    outs = list(succ.values())  # each op's successors by its position, as ``order``
    heads: list[str] | None = []
    last = -1
    shared = builder.shared_edges
    renamed = bool(builder.reserved)  # duplicate names were renamed: compare each op's own
    # One bytes object per distinct bare NodeDef: ops of one type and attributes share it (a
    # traced training step's 69,000 ops have 168), which saves their copies and lets a reader
    # of every op's NodeDef (the viewer's details) parse each distinct one once.
    bare: dict[bytes, bytes] = {}
    fresh: list[tuple[str, dict[str, Any]]] = []
    for name, data, into, node_def in node_defs:
        here = position[name]
        inputs = node_def.input[:]  # one list: iterating the protobuf field costs more
        # Kept bare (see node_def_of) unless its inputs could not be written back from its
        # edges exactly: one taking the long way below, or spelt ``x:0``.
        whole = renamed and node_def.name != name
        op = data["op"]
        mutating = op.startswith(MUTATING_PREFIXES)
        for slot, text in enumerate(inputs):
            # The common cases, ``x``, ``x:N`` and ``^x``, inlined (this loop runs once per
            # edge of the graph); anything else, or odd, goes the long way below.
            # The text itself names the source when it has no colon (no string cut per edge).
            cut = text.find(":")
            index = ""
            if cut < 0:
                src, out = text, 0
            else:
                src, index = text[:cut], text[cut + 1:]
                out = int(index) if index.isascii() and index.isdigit() else -1
            if src.startswith("^"):
                src = src[1:]
                kind = CONTROL
                if cut >= 0:
                    out = -1
            else:
                kind = REF if mutating and is_ref_edge(
                    node[src]["op"] if src in node else "", op) else DATA
            at = position.get(src, -1) if out >= 0 and src else -1
            if at >= 0 and at != here:
                source = order[at]
                if at > here and heads is not None \
                        and node[source]["op"] not in _BACK_EDGE_SOURCES:
                    heads.append(name)
                    last = max(last, at)
                found = shared.get((kind, out, slot))  # builder.shared_edge, inlined
                if found is None:
                    found = builder.shared_edge(kind, out, slot)
                keydict = into.get(source)
                outs[at][name] = into[source] = found[1] if keydict is None else {
                    **keydict, slot: found[0]}
                if cut >= 0 and index[0] == "0":
                    whole = True
                continue
            whole, heads = True, None  # the long way: not noted
            ref = parse_input(text)
            if ref.arg is not None:  # "x:out:0" outside a function: take x's output 0 leniently
                ref = InputRef(ref.node, ref.index, error=f"function-style input {text!r}")
            if ref.error:
                builder.warn.add("malformed inputs", f"op {name!r}: input {text!r}: {ref.error}")
                if not ref.node:
                    continue
            if ref.node not in node:
                builder.ensure_missing(ref.node, name)
            builder.edge(ref.node, name, slot, ref.control, ref.index)
        if whole:
            kept = raw = node_def.SerializeToString()
        else:
            if consume:  # cut by protobuf: a third faster than cutting the bytes (_bare)
                node_def.ClearField("name")
                node_def.ClearField("input")
                raw = BARE + node_def.SerializeToString()
            else:
                raw = _bare(node_def.SerializeToString(), name, op, inputs)
            kept = bare.setdefault(raw, raw)
        data["node_def"] = kept
        if consume and kept is raw:
            fresh.append((name, data))
    builder.backward = Backward(position, heads, last) if heads is not None else None
    return fresh


class Backward(NamedTuple):
    """The edges of a graph pointing back in its ops' order, but those out of a while loop's
    ``NextIteration`` (back edges by definition): each op's ``position``, the ``heads`` of
    those edges and the ``last`` position of their sources (see :func:`_acyclic`)."""

    position: dict[str, int]
    heads: list[str]
    last: int


def _bare(raw: bytes, name: str, op: str, inputs: list[str]) -> bytes:
    """A serialized NodeDef made bare (see :func:`~.graph.node_def_of`): its name and inputs cut
    out.  Protobuf writes known fields first, in field order, and the name (1), op (2) and
    inputs (3) are the first three, so they are cut by their lengths; ``raw`` itself when it
    is not laid out so.  (Runs once per op: short ASCII strings, nearly all of them, are
    sized without a call each.)"""
    # An empty name or op type is not written at all (protobuf writes no default).
    n = len(name)
    start = (n + 2 if n < 0x80 and name.isascii() else _field_size(name)) if n else 0
    n = len(op)
    op_end = start + ((n + 2 if n < 0x80 and op.isascii() else _field_size(op)) if n else 0)
    end = op_end
    if inputs:
        if max(map(len, inputs)) < 0x80 and all(map(str.isascii, inputs)):
            end += sum(map(len, inputs)) + 2 * len(inputs)
        else:
            end += sum(_field_size(text) for text in inputs)
    if (name and raw[0] != _NAME_TAG) or (op and raw[start] != _OP_TAG) \
            or (inputs and raw[op_end] != _INPUT_TAG) or end > len(raw):
        return raw
    return b"".join((BARE, raw[start:op_end], raw[end:]))


#: The first byte of NodeDef's name, op and input fields (field number << 3 | length-delimited).
_NAME_TAG, _OP_TAG, _INPUT_TAG = 0x0A, 0x12, 0x1A


def _field_size(text: str) -> int:
    """The bytes of a string field (tag, length, UTF-8) with a one-byte tag."""
    n = len(text) if text.isascii() else len(text.encode("utf-8"))
    size = n + 2
    while n >= 0x80:
        n >>= 7
        size += 1
    return size


def mark_back_edges(g: OpGraph, order: Iterable[str] | None = None, *,
                    backward: Backward | None = None) -> int:
    """Mark the edges that close cycles, so the rest of the graph is a DAG.

    NextIteration -> Merge edges of TF1 while loops are back edges by definition.  Any cycle
    left after them (a malformed graph) is broken by an iterative DFS in node order, so the
    choice is deterministic.  Most graphs have none, which one peeling pass (Kahn's algorithm)
    proves cheaply before any DFS runs; ``order`` is the order of the ops to try that pass in
    (default: the graph's; see :func:`_acyclic`).  ``backward``: the edges pointing back in
    the graph's order, as the caller found them (the pass need not look).  Returns the number
    of edges marked.
    """
    succ, nodes = g.succ, g.node_data
    marked = 0
    loops = {u for u, data in nodes.items() if data["op"] in _BACK_EDGE_SOURCES}
    for u in loops:
        for v, keydict in succ[u].items():
            for k, data in keydict.items():  # new dicts: they are shared (see OpGraph)
                insert_edge(g, u, v, k, {**data, "back": True})
                marked += 1
    if _peeled(succ, loops, *backward) if backward is not None \
            else _acyclic(succ, loops, order):
        return marked
    state: dict[str, int] = {}  # 1 = on the DFS stack, 2 = done
    for root in succ:
        if root in state:
            continue
        state[root] = 1
        stack = [(root, _out(succ, root))]
        while stack:
            node, edges = stack[-1]
            for v, k in edges:
                data = succ[node][v][k]
                if data["back"]:
                    continue
                seen = state.get(v)
                if seen == 1:
                    insert_edge(g, node, v, k, {**data, "back": True})
                    marked += 1
                elif seen is None:
                    state[v] = 1
                    stack.append((v, _out(succ, v)))
                    break
            else:
                state[node] = 2
                stack.pop()
    return marked


def _out(succ: dict, node: str) -> Iterator[tuple[str, int]]:
    """Each edge out of ``node`` as its destination and key (its data may be replaced)."""
    for v, keydict in succ[node].items():
        for k in keydict:
            yield v, k


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
    # Each op's successors beside its position: in the graph's order, read in that order
    # rather than looked up by name (a dict of a million ops).
    nbrs = succ.values() if order is None else (succ[u] for u in position)
    for (u, i), out in zip(position.items(), nbrs, strict=True):  # 90,000 edges on NASNet
        if u not in loops:
            for v in out:
                if position[v] <= i:
                    heads.append(v)
                    last = i
    return _peeled(succ, loops, position, heads, last)


def _peeled(succ: dict, loops: set[str], position: dict[str, int], heads: list[str],
            last: int) -> bool:
    """:func:`_acyclic` once the edges pointing back are known: ``heads`` their destinations
    and ``last`` the latest of their sources; what they reach up to there is peeled."""
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
    :mod:`graphviz_tb.model.calls`, the second step).  Returns the model, the builder that adds
    to it, and the names of the top-level ops.

    ``names`` are the NodeDefs' names when the caller has read them already (each read from
    protobuf makes a new string).  A graph's head (``read.graphdef.parse_head``) is changed:
    the nodes kept bare lose their names and inputs, which the model holds.

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
    named, datas, intos = _add_graph_nodes(
        builder, nodes, names if names is not None else [nd.name for nd in nodes])
    # Each NodeDef read again rather than kept from the pass above: a list of a million
    # protobuf wrappers would stay alive beside the parsed graph for the whole wiring.  A
    # graph's head (read.graphdef.parse_head) is made for one model, which may change it.
    _check_node_defs(_wire_graph_inputs(builder, zip(named, datas, intos, nodes, strict=True),
                                        consume=graph_def.DESCRIPTOR.full_name == HEAD_MESSAGE),
                     where)
    return model, builder, named


def _check_node_defs(kept: list[tuple[str, dict[str, Any]]], where: str) -> None:
    """Decode each distinct NodeDef a head's model keeps, once, so a corrupt one is refused here
    in one line naming its op: a head reads only the nodes' names, types, inputs and devices,
    and the later stages that read an op's attributes expect them to decode.  Ops of one type
    and attributes share their NodeDef, so this is a fraction of a whole parse."""
    for name, data in kept:
        try:
            node_def_of(data)
        except DecodeError:
            raise InputError(f"{where}: op {name!r}: its attributes do not decode as a "
                             "NodeDef's; the file is corrupt or not a TensorFlow graph") from None


def finish_model(model: GraphModel, order: Iterable[str] | None = None, *,
                 backward: Backward | None = None) -> GraphModel:
    """The last step: mark the edges that close cycles (see :func:`mark_back_edges`; ``order``
    is the ops in an order where most edges point forward, when the graph's is not;
    ``backward``: the edges pointing back in the graph's order, as the wiring noted them)."""
    back = mark_back_edges(model.g, order, backward=backward)
    if back and not any(model.g.nodes[n]["op"] in _BACK_EDGE_SOURCES for n in model.g):
        model.warnings.add("cycles", f"{back} edge(s) close cycles outside a while loop")
    return model
