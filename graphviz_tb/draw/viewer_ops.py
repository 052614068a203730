"""Per-op details for the viewer's data: attributes and outputs interned (most ops share them,
attribute by attribute), each op's notes, and what loops carry from one iteration to the next."""

from __future__ import annotations

from array import array
from collections import Counter
from functools import cache
from typing import TYPE_CHECKING, Any

from ..group.tree import Member, OpNode
from ..model.calls import call_targets, call_wiring
from ..model.graph import BARE, CONTROL, node_def_of
from ..model.shapes import OUTPUT_ATTRS, format_shape, outputs_of
from ..read.attrs import decode_attr, serialized_attrs

__all__ = ["Interner", "OnPage", "OpEdgeTensors", "OpsData", "loop_carry"]

if TYPE_CHECKING:
    from ..group.tree import Hierarchy
    from ..model.graph import GraphModel
    from ..model.shapes import TensorInfo


class Interner:
    """Values -> dense indices, so repeated attribute maps, labels and keys are stored once."""

    def __init__(self) -> None:
        self.index: dict[Any, int] = {}
        self.values: list[Any] = []

    def __call__(self, key: Any, value: Any = None) -> int:
        i = self.index.get(key)
        if i is None:
            i = self.index[key] = len(self.values)
            self.values.append(key if value is None else value)
        return i


class OnPage:
    """Each member's id on a page (its index in ``members``), read as a dict of them is: kept
    in the member's ``page`` slot, and the member's only while ``members`` holds it there (a
    tree is paged again with other members left out, and a member left out keeps an old
    id).  A dict of every member was a twentieth of a million-op page's peak memory, and
    its lookups a tenth of the page's build."""

    __slots__ = ("members",)

    def __init__(self, members: list[Member]) -> None:
        self.members = members

    def add(self, m: Member) -> None:
        """Give ``m`` the next id."""
        m.page = len(self.members)
        self.members.append(m)

    def __contains__(self, m: Member | None) -> bool:
        if m is None:
            return False
        i = m.page
        return i < len(self.members) and self.members[i] is m

    def __getitem__(self, m: Member | None) -> int:
        if m is None or m not in self:
            raise KeyError(m)
        return m.page

    def get(self, m: Member) -> int | None:
        return m.page if m in self else None


class _Keys:
    """One colour key of every op (an op type, a device, a dtype), as an index into its
    distinct values (4 bytes an op: a list of the strings took 8).  Once all are in, the values
    are ranked by how many ops carry them, most first (then by name): the page's colour keys,
    so the commonest take the first colours."""

    def __init__(self) -> None:
        self.at = array("i")
        self.values = Interner()
        self.names: list[str] = []
        self.index: dict[str, int] = {}  # name -> its place in ``names``
        self.rank: list[int] = []

    def add(self, value: str) -> None:
        self.at.append(self.values(value))

    def value(self, k: int) -> str:
        """Op ``k``'s value."""
        return self.values.values[self.at[k]]

    def ranked(self, k: int) -> int:
        """Op ``k``'s value's index in ``names`` (once sealed)."""
        return self.rank[self.at[k]]

    def seal(self) -> None:
        counts = Counter(self.at)
        distinct = self.values.values
        self.names = sorted(distinct, key=lambda v: (-counts[self.values.index[v]], v))
        self.index = {v: i for i, v in enumerate(self.names)}
        self.rank = [self.index[v] for v in distinct]


class _AttrTable:
    """Op attributes interned twice: each distinct ``[name, value]`` pair once (``pairs``), and
    each op's sorted tuple of pair indices once (``sets``: a tuple is the key and the value).

    Ops share most attributes (a dtype, a colocation class, a padding) but seldom all of them,
    so interning whole maps kept a third of NASNet-Large's page in near-copies.  And an
    AttrValue is decoded once per distinct serialized form, not once per op: decoding every
    op's attributes was a sixth of the page's build.  Pairs are told apart by their decoded
    value, so two encodings of one value (a map inside a ``func``) still make one pair.
    """

    def __init__(self) -> None:
        self.pairs: list[list[Any]] = []
        self.sets = Interner()
        #: Serialized attribute -> (its id among the serialized forms, its pair or -1).
        self._by_raw: dict[tuple[str, bytes], tuple[int, int]] = {}
        self._by_value: dict[tuple[str, str], int] = {}

    def seal(self) -> None:
        """Drop what finds a pair or set already interned, once every op's attributes are in
        (``pairs`` and ``sets.values`` stay): a third of a big graph's ops each have a pair of
        their own (a colocation class naming the op's variable), and those lookups were a
        tenth of a million-op page's peak memory."""
        self._by_raw = {}
        self._by_value = {}
        self.sets.index = {}

    def __call__(self, entries: list[tuple[str, bytes]]) -> tuple[int, tuple[int, ...]]:
        """The index of an op's attributes (``_output_shapes`` left to the outputs), or -1
        for none, from its attributes' names and serialized values in name order; and the ids
        of the serialized values of its :data:`~graphviz_tb.model.shapes.OUTPUT_ATTRS`: two ops
        of one type with equal ids have equal outputs."""
        ids = []
        raws = []
        by_raw = self._by_raw
        for raw in entries:
            found = by_raw.get(raw)
            key = raw[0]
            if found is None:
                pair = -1
                if key != "_output_shapes":
                    decoded = decode_attr(_attr_value(raw[1]))
                    pair = self._by_value.setdefault((key, repr(decoded)), len(self.pairs))
                    if pair == len(self.pairs):
                        self.pairs.append([key, decoded])
                found = by_raw[raw] = (len(by_raw), pair)
            if key in OUTPUT_ATTRS:
                raws.append(found[0])
            if found[1] >= 0:
                ids.append(found[1])
        return (self.sets(tuple(ids)) if ids else -1), tuple(raws)


def _attr_value(raw: bytes) -> Any:
    """An AttrValue message parsed from its bytes."""
    return _attr_value_parser()(raw)


@cache
def _attr_value_parser() -> Any:
    """AttrValue's parser, imported on first use (loaded with the GraphDef; see
    :func:`graphviz_tb.model.graph._node_def_parser`)."""
    from tensorboard.compat.proto.attr_value_pb2 import AttrValue  # loaded with the GraphDef

    return AttrValue.FromString


def _parts(raw: Any, data: dict[str, Any]) -> tuple[str, list[tuple[str, bytes]]] | None:
    """A kept NodeDef's op type and serialized attributes (see
    :func:`~graphviz_tb.read.attrs.serialized_attrs`), read from its bytes where they can be,
    else from the parsed message; None for an op no NodeDef made."""
    if type(raw) is bytes:
        parts = serialized_attrs(raw, 1 if raw[:1] == BARE else 0)
        if parts is not None:
            return parts
    node_def = node_def_of(data)
    if node_def is None:
        return None
    amap = node_def.attr
    return node_def.op, [(key, amap[key].SerializeToString()) for key in sorted(amap)]


def _op_notes(m: OpNode, data: dict[str, Any]) -> list[str]:
    """What the details panel says of an op beyond its attributes and edges."""
    notes = []
    if data.get("function"):
        notes.append(f"in the body of function {data['function']}")
    if m.role == "missing":
        notes.append("missing: named as an input, but no such op exists")
    if data.get("recursion_cut"):
        notes.append("recursion cut here: the function calls itself")
    if data.get("depth_cut"):
        notes.append("left closed: a call nested too deep to open")
    if data.get("shape_error"):
        notes.append(f"shape error: {data['shape_error']}")
    return notes


class OpsData:
    """What the page shows of each op, in the order given: its device and first output's
    dtype (colour keys), its attributes and outputs (interned), its calls and notes."""

    def __init__(self, model: GraphModel, members: list[OpNode]) -> None:
        node = model.g.node_data  # the node dicts themselves: networkx's view is slower
        known = model.cached_outputs()
        self.members = members
        self.types = _Keys()
        self.devices = _Keys()
        self.dtypes = _Keys()
        self.attr = array("i")  # 4 bytes an op, not a list's 8
        self.out = array("i")
        self.calls: dict[int, list[str]] = {}
        self.notes: dict[int, list[str]] = {}
        #: Each op's outputs, as ``model.op_outputs`` gives them, for the edge labels
        #: (:class:`OpEdgeTensors`): kept here, not in the model's cache of every op by name.
        self.outputs: list[list[TensorInfo]] = []
        self.attrs = _AttrTable()
        self.outs = Interner()
        by_info: dict[tuple[TensorInfo, ...], int] = {}  # outputs -> index in ``outs``
        # An op's outputs follow from its type and attributes alone (shapes.node_outputs):
        # worked out once per distinct pair, not once per op (a seventh of the page's build),
        # as op_outputs would work them out.
        by_attrs: dict[Any, list[Any]] = {}  # [outputs, None until an op takes them]

        def outputs_found(infos: list[TensorInfo]) -> tuple[list[TensorInfo], int, str]:
            """Outputs as the columns take them: themselves, their index in ``outs``
            (interned as an op first takes them, so in op order) and the first one's dtype."""
            outs = tuple(infos)
            index = by_info.get(outs, -1) if outs else -1
            if outs and index < 0:
                index = by_info[outs] = self.outs(tuple(
                    (o.dtype, format_shape(o) or None) for o in infos))
            return infos, index, (infos[0].dtype if infos else None) or "(unknown)"

        # A kept NodeDef -> its op type, interned attributes and the outputs its type and
        # attributes give (by_attrs, worked out as it is first read: only the parsed parts
        # say them).  The model keeps one bytes object per distinct bare NodeDef (type,
        # device, attributes), so ops sharing one are read once (a traced NASNet-Large step's
        # 69,453 ops have 168); what is kept of each is what the ops take, not its parts (a
        # million-op page held 380,000 lists of serialized attributes).
        by_raw: dict[Any, tuple[str | None, int, list[Any]]] = {}
        types: dict[str, str] = {}
        for j, m in enumerate(members):
            data = node[m.name]
            self.types.add(m.op)
            self.devices.add(data["device"] or "(no device)")
            raw = data.get("node_def")
            kept = type(raw) is bytes
            seen = by_raw.get(raw) if kept else None
            if seen is None:
                parts = _parts(raw, data)
                if parts is None:
                    seen = (None, -1, [])  # no type: the model says the outputs
                else:
                    typ = types.setdefault(parts[0], parts[0])  # else a string per NodeDef
                    attr, raws = self.attrs(parts[1])
                    key = (typ, raws)
                    given = by_attrs.get(key)
                    if given is None:  # as op_outputs would, from the parts, not parsed again
                        given = by_attrs[key] = [outputs_of(typ, {
                            k: _attr_value(v) for k, v in parts[1] if k in OUTPUT_ATTRS}), None]
                    seen = (typ, attr, given)
                if kept:
                    by_raw[raw] = seen
            op_type, attr, given = seen
            self.attr.append(attr)
            # The outputs are the type's and the attributes' alone but for an op with no
            # NodeDef or whose outputs are known otherwise.
            if op_type is None or m.name in known or "outputs" in data:
                found = outputs_found(model.op_outputs(m.name))
            else:
                taken = given[1]
                if taken is None:
                    taken = given[1] = outputs_found(given[0])
                found = taken
            self.outputs.append(found[0])
            self.out.append(found[1])
            self.dtypes.add(found[2])
            if data.get("calls"):
                self.calls[j] = list(data["calls"])
            notes = _op_notes(m, data)
            if notes:
                self.notes[j] = notes
        self.attrs.seal()
        self.types.seal()
        self.devices.seal()
        self.dtypes.seal()


class OpEdgeTensors:
    """The tensor each op edge carries (``GraphModel.carried``), for the page's edge labels:
    an edge out of an op on the page reads its source's outputs from the ops' table
    (:attr:`OpsData.outputs`, by the op's place on the page), not from the model's cache of
    every op by name (a million inserts, and as many lookups); any other edge asks the model."""

    def __init__(self, model: GraphModel, on_page: OnPage) -> None:
        self.model = model
        self.on_page = on_page
        self.outputs: list[list[TensorInfo]] = []
        self.op_at = array("i")  # page id -> index in ``outputs``, or -1

    def note(self, ops: OpsData) -> None:
        """Read the ops' outputs from their table, once it is made."""
        self.outputs = ops.outputs
        self.op_at = array("i", [-1]) * len(self.on_page.members)
        for j, m in enumerate(ops.members):
            self.op_at[m.page] = j

    def __call__(self, x: OpNode, data: dict[str, Any], tensor: Any, index: int
                 ) -> TensorInfo | None:
        """What an edge out of ``x`` carries, given its dict and what ``tensor_of`` reads
        from it (the tensor it names, if any, and its source output)."""
        if tensor is None and x in self.on_page:
            j = self.op_at[x.page]
            if j >= 0:
                outs = self.outputs[j]
                info = outs[index] if 0 <= index < len(outs) else None
                if (info is not None and info.known) or x.role != "retval":
                    return info
        return self.model.carried(x.name, data)


def loop_carry(h: Hierarchy, members: list[Member], callers_found: list[OpNode],
               ids: OnPage) -> list[int]:
    """What loops carry between iterations, as dependencies for the page's trace (flat
    ``[src, dst, ...]``, never drawn).  A ``While``: the body's result ``i`` becomes
    argument ``i`` of the body and of the condition in the next iteration, and the
    condition's result decides every result of the loop.  A loop whose ``_calls`` says
    what it carries (ONNX's ``Loop`` and ``Scan``): each result becomes the argument it
    names."""
    model = h.model
    graph, ops = model.g, h.ops
    node = graph.node_data  # the node dicts themselves: the view cost more than the rest
    groups = model.function_groups
    results: dict[str, dict[int, int]] = {}  # body prefix -> result index -> member
    args: dict[str, dict[int, int]] = {}  # body prefix -> argument index -> member
    # The calling ops as the ops' table found them (not a lookup of every op's node dict).
    callers = [(m, node[m.name]) for m in callers_found]
    for m in members:
        if type(m) is OpNode and m.role in ("retval", "arg"):
            data = node[m.name]
            prefix = m.name.rpartition("/")[0]
            index = data.get("ret_index" if m.role == "retval" else "arg_index")
            if groups.get(prefix) == data.get("function") and index is not None:
                (results if m.role == "retval" else args).setdefault(prefix, {})[
                    index] = ids[m]
    out: list[int] = []
    for m, op_data in callers:
        node_def = node_def_of(op_data)
        if node_def is None:
            continue
        targets = call_targets(node_def, model.functions)[0]
        for t, (sub, _) in enumerate(targets):
            said = call_wiring(node_def, t)
            prefix = f"{m.name}/{sub}" if sub else m.name
            body, into = results.get(prefix, {}), args.get(prefix, {})
            for r, a in enumerate(said[2] if said is not None else ()):
                if r in body and a in into:
                    out.extend((body[r], into[a]))
        if {sub for sub, _ in targets} != {"cond", "body"}:
            continue
        body = results.get(f"{m.name}/body", {})
        for _, v, d in graph.out_edges(m.name, data=True):
            arg = ops.get(v)
            src = body.get(d["src_output"])
            if (d["kind"] != CONTROL and src is not None and arg is not None
                    and arg.role == "arg" and arg in ids):
                out.extend((src, ids[arg]))
        cond = results.get(f"{m.name}/cond", {}).get(0)
        if cond is not None:
            for i in sorted(body):
                out.extend((cond, body[i]))
    return out
