"""What changed between two versions of a model: a match between their op graphs, every op
and edge classed, and one merged model to draw.

**Matching.**  Names first, but only where the neighbourhood agrees: when a layer is inserted,
Keras renumbers every layer after it (``dense_3`` becomes ``dense_4``), and pairing the old
``dense_3`` with the new one would report every later layer as changed.  So an op is paired
with the op of the same name only if their op types and their structural signatures (op
types around them, a few steps out, names ignored) agree.  Then ops whose signature is unique
in both graphs are paired, whatever their names; then pairs spread along the dataflow, input
slot by input slot and consumer by consumer, which pairs an activation swapped for another
(``dense_1/Relu`` and ``dense_1/Tanh`` between the same two ops); last, what is left pairs by
name if the op types agree.

**Classes.**  A paired op is *changed* when its op type, an attribute, its device, its output
shapes or dtypes, or its inputs (rewired through the pairing, control inputs included) differ;
otherwise it is unchanged, and *renamed* if only its name differs.  Generated names do not make
a difference: numeric suffixes of function names (``__inference_call_1234``), attributes
TensorFlow adds for itself (``_user_specified_name`` ...) and graph metadata are ignored.

**The merged model** holds the new graph, the removed ops (under their old names) and the
removed edges, each op and edge marked ``diff``: ``added``, ``removed``, ``changed`` or
``unchanged``; the hierarchy, the view and the writers draw it like any model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .._gc import paused_gc
from .diff_match import Scopes, Side, by_scope, match_ops
from .graph import CONTROL, GraphModel, OpGraph
from .shapes import format_shape

__all__ = ["ADDED", "CHANGED", "JSON_FORMAT", "JSON_VERSION", "REMOVED", "STATUSES", "UNCHANGED",
           "EdgeChange", "GraphDiff", "OpChange",
           "diff_models"]

ADDED, REMOVED, CHANGED, UNCHANGED = "added", "removed", "changed", "unchanged"
#: Statuses in the order legends and summaries list them.
STATUSES = (ADDED, REMOVED, CHANGED, UNCHANGED)

#: Longest attribute value quoted in a change line.
_QUOTE = 80


@dataclass
class OpChange:
    """A paired op that changed: its old and new names and what changed, in words."""

    old: str
    new: str
    what: list[str]


class EdgeChange(NamedTuple):
    """One edge added or removed, by its ends: the source op and its output, the consumer and
    its input slot (None for a control input, which has no slot of its own)."""

    src: str
    output: int
    dst: str
    input: int | None
    kind: str

    def to_json(self) -> dict[str, Any]:
        return {"src": self.src, "output": self.output, "dst": self.dst, "input": self.input,
                "kind": self.kind}


#: What ``tbgraph diff --json`` prints, and the version of its keys (2: edges by their ends,
#: rewired edges of kept ops included).
JSON_FORMAT, JSON_VERSION = "tbgraph-diff", 2


@dataclass
class GraphDiff:
    """The difference between two graph models (see the module docstring)."""

    old: GraphModel
    new: GraphModel
    #: Old op name -> new op name, for every paired op.
    pairs: dict[str, str]
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[OpChange] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)
    #: Edges with at least one kept end, by new names (removed ones by old names); edges
    #: inside an added or removed part go with it.
    edges_added: list[EdgeChange] = field(default_factory=list)
    edges_removed: list[EdgeChange] = field(default_factory=list)
    #: Each side's scopes, by ``id`` of its model (see :meth:`scopes`).
    _scopes: dict[int, Scopes] = field(default_factory=dict, init=False, repr=False,
                                        compare=False)

    @paused_gc
    def scopes(self, side: GraphModel) -> Scopes:
        """The scopes of one side's op names, found once for the summary and the merged
        model both (a pass over every name, with the collector paused: a dict a scope)."""
        found = self._scopes.get(id(side))
        if found is None:
            found = self._scopes[id(side)] = Scopes(side.g)
        return found

    @property
    def equal(self) -> bool:
        """No op added, removed or changed, and no edge either (renames alone are equal)."""
        return not (self.added or self.removed or self.changed or self.edges_added
                    or self.edges_removed)

    def status(self) -> dict[str, str]:
        """Every new op's status, by new name (removed ops are not in the new graph)."""
        out = dict.fromkeys(self.new.g, UNCHANGED)
        out.update(dict.fromkeys(self.added, ADDED))
        out.update((c.new, CHANGED) for c in self.changed)
        return out

    def to_json(self, groups: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """The JSON ``tbgraph diff --json`` prints; ``groups`` adds the roll-up per group."""
        return {
            "format": JSON_FORMAT,
            "version": JSON_VERSION,
            "equal": self.equal,
            "ops": {
                "added": self.added,
                "removed": self.removed,
                "changed": [{"old": c.old, "new": c.new, "what": c.what} for c in self.changed],
                "renamed": [{"old": o, "new": n} for o, n in self.renamed],
            },
            "edges": {
                "added": [e.to_json() for e in self.edges_added],
                "removed": [e.to_json() for e in self.edges_removed],
            },
            "groups": groups or [],
        }

    def summary_lines(self, limit: int = 20) -> list[str]:
        """A few sentences a person reads: what was added or removed where, what changed."""
        if self.equal:
            renamed = f" ({len(self.renamed)} ops renamed)" if self.renamed else ""
            return [f"the graphs are equal{renamed}"]
        lines = [_count_line(self)]
        for verb, names, side in (("added", self.added, self.new),
                                  ("removed", self.removed, self.old)):
            for scope, n in (by_scope(names, self.scopes(side)) if names else [])[:limit]:
                where = f" under {scope}" if scope else " at the top level"
                lines.append(f"{n} op{'s' if n != 1 else ''} {verb}{where}")
        for c in self.changed[:limit]:
            name = c.new if c.old == c.new else f"{c.old} (now {c.new})"
            lines.append(f"changed {name}: {'; '.join(c.what)}")
        if len(self.changed) > limit:
            lines.append(f"… and {len(self.changed) - limit} more changed ops")
        for verb, edges in (("removed", self.edges_removed), ("added", self.edges_added)):
            for e in edges[:limit]:
                src, dst = _tensor((e.src, e.output)), e.dst
                if verb == "removed":  # by old names: say what a renamed end is called now
                    src, dst = self._now(e.src, src), self._now(e.dst, dst)
                lines.append(f"{e.kind} edge {verb}: {src} -> {dst}")
        return lines

    def _now(self, old: str, shown: str) -> str:
        new = self.pairs.get(old, old)
        return shown if new == old else f"{shown} (now {new})"

    def merged(self) -> GraphModel:
        """One model holding both graphs, every op and edge marked ``diff`` (see module)."""
        return _merge(self)


def _count_line(d: GraphDiff) -> str:
    parts = [f"{len(d.added)} added", f"{len(d.removed)} removed", f"{len(d.changed)} changed"]
    if d.renamed:
        parts.append(f"{len(d.renamed)} renamed")
    edges = f"; edges: {len(d.edges_added)} added, {len(d.edges_removed)} removed"
    return "ops: " + ", ".join(parts) + edges


# --------------------------------------------------------------------------- one side


# --------------------------------------------------------------------------- matching


@paused_gc
def diff_models(old: GraphModel, new: GraphModel) -> GraphDiff:
    """Match ``old`` and ``new`` and class every op and edge (see the module docstring)."""
    a, b = Side(old), Side(new)
    pairs = match_ops(a, b)
    d = GraphDiff(old, new, pairs)
    paired_new = set(pairs.values())
    d.removed = sorted(n for n in old.g if n not in pairs)
    d.added = sorted(n for n in new.g if n not in paired_new)
    for o in sorted(pairs):
        n = pairs[o]
        what = _changes(a, b, o, n, pairs, paired_new)
        if what:
            d.changed.append(OpChange(o, n, what))
        elif o != n:
            d.renamed.append((o, n))
    d.edges_added, d.edges_removed = _edge_changes(a, b, pairs)
    return d


# --------------------------------------------------------------------------- classes


def _changes(a: Side, b: Side, o: str, n: str, pairs: dict[str, str],
             paired_new: set[str]) -> list[str]:
    what = []
    if a.type[o] != b.type[n]:
        what.append(f"op: {a.type[o]} -> {b.type[n]}")
    same = a.same_attrs(o, b, n)
    if not same:
        attrs_o, attrs_n = a.attrs(o), b.attrs(n)
        for key in sorted(attrs_o.keys() | attrs_n.keys()):
            x, y = attrs_o.get(key), attrs_n.get(key)
            if x != y:
                what.append(f"attr {key}: {_quote(x)} -> {_quote(y)}")
    dev_o = a.model.g.nodes[o]["device"]
    dev_n = b.model.g.nodes[n]["device"]
    if dev_o != dev_n:
        what.append(f"device: {dev_o or '(none)'} -> {dev_n or '(none)'}")
    if not a.same_outputs(o, b, n, same):
        outs_o = [format_shape(t, dtype=True) for t in a.model.op_outputs(o)]
        outs_n = [format_shape(t, dtype=True) for t in b.model.op_outputs(n)]
        if outs_o != outs_n and any(outs_o) and any(outs_n):
            what.append(f"output: {', '.join(outs_o) or '?'} -> {', '.join(outs_n) or '?'}")
    ins_o, ins_n = a.inputs[o], b.inputs[n]
    for slot in sorted(ins_o.keys() | ins_n.keys()):
        x, y = ins_o.get(slot), ins_n.get(slot)
        mapped = (pairs.get(x[0]), x[1]) if x else None
        if mapped != y:
            what.append(f"input {slot}: {_tensor(x)} -> {_tensor(y)}")
    # Control inputs from added or removed ops go with those ops, as data inputs do.
    ctl_o = {pairs[u] for u in a.control[o] if u in pairs}
    ctl_n = {u for u in b.control[n] if u in paired_new}
    for u in sorted(ctl_o - ctl_n):
        what.append(f"control input ^{u} removed")
    for u in sorted(ctl_n - ctl_o):
        what.append(f"control input ^{u} added")
    return what


def _tensor(t: tuple[str, int] | None) -> str:
    if t is None:
        return "(none)"
    return t[0] if t[1] == 0 else f"{t[0]}:{t[1]}"


def _quote(value: Any) -> str:
    text = "(none)" if value is None else str(value)
    return text if len(text) <= _QUOTE else text[:_QUOTE - 1] + "…"


def _edge_changes(a: Side, b: Side, pairs: dict[str, str]
                  ) -> tuple[list[EdgeChange], list[EdgeChange]]:
    """Edges matched by their ends (source op and output, consumer op and input slot)
    through the pairing of ops: those of either side the other lacks.  A data edge with a
    kept end is listed, so an inserted layer reads as the edge it cut and the two joining it;
    one inside an added or removed part goes with that part, as do its control edges."""
    back = {n: o for o, n in pairs.items()}

    def ends(model: GraphModel, to_new: dict[str, str] | None, mark: str
             ) -> dict[tuple[str, int, str, int | None, str], EdgeChange]:
        out = {}
        for u, v, k, d in model.iter_edges():
            if to_new is None:
                su, sv = (u if u in back else None), (v if v in back else None)
            else:
                su, sv = to_new.get(u), to_new.get(v)
            if (su is None or sv is None) and (su is sv or d["kind"] == CONTROL):
                continue  # inside an added or removed part, or its control dependencies
            # A control input's key is only its place after the data inputs: no slot.
            slot = None if d["kind"] == CONTROL else k
            key = (su or mark + u, d["src_output"], sv or mark + v, slot, d["kind"])
            out[key] = EdgeChange(u, d["src_output"], v, slot, d["kind"])
        return out

    old, new = ends(a.model, pairs, "\0-"), ends(b.model, None, "\0+")
    return sorted(new[e] for e in new.keys() - old.keys()), \
        sorted(old[e] for e in old.keys() - new.keys())


# --------------------------------------------------------------------------- merging


def _removed_name(name: str, taken: set[str], layer: str | None) -> str:
    """Where a removed op goes in the merged model.  Under its widest scope that was removed
    whole, if the new graph has a scope of that name (``layer``: the layer now holding the old
    layer's number), renamed ``scope (removed)``, so a removed layer stays one group of its
    own; else its own name when free; else ``name (removed)``."""
    if layer is not None:
        return f"{layer} (removed){name[len(layer):]}"
    return name if name not in taken else f"{name} (removed)"


@paused_gc
def _merge(d: GraphDiff) -> GraphModel:
    g = OpGraph()
    new, old = d.new, d.old
    status = d.status()
    what = {c.new: c.what for c in d.changed}
    back = {n: o for o, n in d.pairs.items()}
    for name, data in new.g.node_data.items():
        g.add_node(name, **{**data, "diff": status[name], "diff_what": what.get(name, []),
                            "diff_old": back.get(name)})
        if name in what:  # what it was: shown beside what it is
            before = back[name]
            g.nodes[name]["diff_before"] = {
                "op": old.g.nodes[before]["op"], "device": old.g.nodes[before]["device"],
                "attrs": old.attrs(before)}
    place: dict[str, str] = {o: n for o, n in d.pairs.items()}
    taken = set(new.g)
    layers: dict[str, str] = {}  # a removed op -> the widest removed layer holding it
    if d.removed:
        old_scopes = d.scopes(old)
        widest = old_scopes.outermost(
            old_scopes.whole(d.removed) & old_scopes.shared(d.scopes(new)))
        spelt = {w: old_scopes.name(w) for w in set(widest.values())}
        layers = {name: spelt[w] for name in d.removed
                  if (w := widest.get(old_scopes.of(name))) is not None}
    for name in d.removed:
        kept_as = _removed_name(name, taken, layers.get(name))
        k = 2
        while kept_as in g:
            kept_as, k = f"{name} (removed {k})", k + 1
        place[name] = kept_as
        g.add_node(kept_as, **{**old.g.nodes[name], "diff": REMOVED, "diff_what": [],
                               "diff_old": name})
    added_edges = {(e.src, e.dst) for e in d.edges_added}
    for u, v, k, data in new.iter_edges():
        mark = ADDED if status[u] == ADDED or status[v] == ADDED or (u, v) in added_edges \
            else UNCHANGED
        g.add_edge(u, v, key=k, **{**data, "diff": mark})
    gone = set(d.removed)
    cut = {(e.src, e.dst, e.kind) for e in d.edges_removed}
    for u, v, k, data in old.iter_edges():
        if u in gone or v in gone or (u, v, data["kind"]) in cut:
            mu, mv = place[u], place[v]
            key = k + 1_000_000 if g.has_edge(mu, mv, k) else k
            g.add_edge(mu, mv, key=key,
                       **{**data, "diff": REMOVED, "tensor": (mu, data["src_output"])})
    merged = GraphModel(g, kind=new.kind)
    merged.is_diff = True
    merged.source = new.source
    merged.inputs, merged.outputs = new.inputs, new.outputs
    merged.functions = {**old.functions, **new.functions}
    merged.function_groups = {**{place.get(k, k): v for k, v in old.function_groups.items()},
                              **new.function_groups}
    # Modules named as the code names them (PyTorch's ``layer1.0.conv1 (Conv2d)``): the new
    # version's, and the old one's for scopes only it had (a removed layer under its name).
    merged.scope_labels = {**old.scope_labels, **new.scope_labels}
    merged.top_level_nodes = len(g)
    merged.warnings = new.warnings
    for name, outputs in new.cached_outputs().items():
        merged.set_outputs(name, outputs)
    known = old.cached_outputs()
    for name in d.removed:
        if name in known:
            merged.set_outputs(place[name], known[name])
    return merged
