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

import re
import zlib
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ._gc import paused_gc
from .model import CONTROL, GraphModel, OpGraph
from .shapes import format_shape

__all__ = ["ADDED", "CHANGED", "JSON_FORMAT", "JSON_VERSION", "REMOVED", "STATUSES", "UNCHANGED",
           "EdgeChange", "GraphDiff", "OpChange",
           "diff_models"]

ADDED, REMOVED, CHANGED, UNCHANGED = "added", "removed", "changed", "unchanged"
#: Statuses in the order legends and summaries list them.
STATUSES = (ADDED, REMOVED, CHANGED, UNCHANGED)

#: How many rounds of neighbourhood refinement a structural signature takes.
_ROUNDS = 3
#: Attributes TensorFlow writes for itself, which differ between exports of one model.
_IGNORED_ATTRS = frozenset({"config_proto", "executor_type"})
_FUNCTION_SUFFIX = re.compile(r"_\d+$")
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
    _scopes: dict[int, _Scopes] = field(default_factory=dict, init=False, repr=False,
                                        compare=False)

    @paused_gc
    def scopes(self, side: GraphModel) -> _Scopes:
        """The scopes of one side's op names, found once for the summary and the merged
        model both (0.06 s a side on NASNet-Large, with the collector paused: a dict a
        scope)."""
        found = self._scopes.get(id(side))
        if found is None:
            found = self._scopes[id(side)] = _Scopes(side.g)
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
            for scope, n in (_by_scope(names, self.scopes(side)) if names else [])[:limit]:
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


def _by_scope(names: list[str], tree: _Scopes) -> list[tuple[str, int]]:
    """Names (of the side whose scopes are ``tree``) counted by the widest scope all of whose
    ops they are (a whole inserted layer reads as one), else by their own scope; most
    first."""
    widest = tree.outermost(tree.whole(names))
    counts: Counter[int] = Counter()
    for name in names:
        scope = tree.of(name)
        counts[widest.get(scope, scope)] += 1
    return sorted(((tree.name(s), n) for s, n in counts.items()), key=lambda kv: (-kv[1], kv[0]))


class _Scopes:
    """Every scope of one side's op names, once, as a tree of numbered scopes: each one's
    enclosing scope (0 is the top level), its last name component, and how many ops sit
    directly in it.

    Scopes are named by their path of components, not their full names, which only the few
    a summary prints are spelt out for: the full names of scopes nested ``d`` deep add up to
    ``d²`` characters (a 4,000-deep chain, 42 MB a side).  Only the full names of scopes
    holding ops are kept, to find them again: those are no longer than the op names
    themselves.  Building the tree and every question below are one pass: linear in the
    names' total length.
    """

    def __init__(self, names: Iterable[str]) -> None:
        #: Each scope's enclosing scope (-1 for the top level, scope 0); an enclosing scope
        #: is numbered before the scopes in it.
        self.parent: list[int] = [-1]
        #: Each scope's last name component.
        self.label: list[str] = [""]
        #: Each scope's child scopes by component.
        self.kids: list[dict[str, int]] = [{}]
        #: How many ops sit directly in each scope.
        self.own: list[int] = [0]
        #: The scopes that hold ops, by full name.
        self._holding: dict[str, int] = {"": 0}
        for name in names:
            self.own[self._find(name.rpartition("/")[0])] += 1

    def _find(self, scope: str) -> int:
        """The number of a scope named as ``str.rpartition`` names an op's scope (``a/b`` is
        in ``a``; ``/a`` and ``/`` are at the top), made with those enclosing it if new."""
        found = self._holding.get(scope)
        if found is not None:
            return found
        parts = scope.split("/")
        if parts[0] == "":  # a leading "/" belongs to the first component
            parts[0:2] = ["/" + parts[1]]
        node = 0
        for part in parts:  # from the top, by components: no prefix of the name is copied
            node = self._child(node, part)
        self._holding[scope] = node
        return node

    def _child(self, node: int, label: str) -> int:
        child = self.kids[node].get(label)
        if child is None:
            child = self.kids[node][label] = len(self.parent)
            self.parent.append(node)
            self.label.append(label)
            self.kids.append({})
            self.own.append(0)
        return child

    def of(self, name: str) -> int:
        """The scope holding an op of this side."""
        return self._holding[name.rpartition("/")[0]]

    def name(self, scope: int) -> str:
        """A scope's full name (``""`` for the top level)."""
        parts = []
        while scope > 0:
            parts.append(self.label[scope])
            scope = self.parent[scope]
        return "/".join(reversed(parts))

    def whole(self, chosen: Iterable[str]) -> set[int]:
        """The scopes (not the top level) all of whose ops, at any depth, are among
        ``chosen`` (ops of this side)."""
        total = list(self.own)
        hit = [0] * len(total)
        for name in chosen:
            hit[self.of(name)] += 1
        for scope in range(len(total) - 1, 0, -1):  # inner scopes first, summed into outer
            up = self.parent[scope]
            total[up] += total[scope]
            hit[up] += hit[scope]
        return {scope for scope in range(1, len(total)) if hit[scope] == total[scope]}

    def outermost(self, among: set[int]) -> dict[int, int]:
        """Each scope -> the outermost of it and the scopes holding it that is in ``among``
        (scopes with none left out)."""
        out: dict[int, int] = {}
        for scope in range(1, len(self.parent)):  # outer scopes first
            found = out.get(self.parent[scope])
            if found is not None:
                out[scope] = found
            elif scope in among:
                out[scope] = scope
        return out

    def shared(self, other: _Scopes) -> set[int]:
        """The scopes of this side whose full name is a scope of ``other`` too."""
        out: set[int] = set()
        work = [(0, 0)]
        while work:
            mine, theirs = work.pop()
            kids = other.kids[theirs]
            for label, child in self.kids[mine].items():
                match = kids.get(label)
                if match is not None:
                    out.add(child)
                    work.append((child, match))
        return out


# --------------------------------------------------------------------------- one side


class _Side:
    """What matching needs of one model: op types, data inputs by slot, control inputs,
    consumers, structural signatures, and comparable attributes."""

    def __init__(self, model: GraphModel) -> None:
        self.model = model
        g = model.g
        self.type: dict[str, str] = {n: d["op"] for n, d in g._node.items()}
        self.inputs: dict[str, dict[int, tuple[str, int]]] = defaultdict(dict)
        self.control: dict[str, set[str]] = defaultdict(set)
        self.consumers: dict[tuple[str, int], list[tuple[str, int]]] = defaultdict(list)
        self.used: dict[str, set[int]] = defaultdict(set)  # the outputs something consumes
        for u, nbrs in g._succ.items():
            for v, keydict in nbrs.items():
                for slot, d in keydict.items():
                    if d["kind"] == CONTROL:
                        self.control[v].add(u)
                    else:
                        self.inputs[v][slot] = (u, d["src_output"])
                        self.consumers[(u, d["src_output"])].append((v, slot))
                        self.used[u].add(d["src_output"])
        self.signature = self._signatures()

    def _signatures(self) -> dict[str, int]:
        """Op type refined by the types around it, ``_ROUNDS`` steps out, names ignored."""
        g = self.model.g
        label = {n: zlib.crc32(t.encode()) for n, t in self.type.items()}
        around = [(n, [u for _, (u, _o) in sorted(self.inputs[n].items())], list(g._succ[n]))
                  for n in g]
        for _ in range(_ROUNDS):
            # hash() of a tuple of ints is the same in every run (only str hashes are salted)
            label = {n: hash((label[n], tuple(label[u] for u in ins),
                              tuple(sorted(label[v] for v in outs))))
                     for n, ins, outs in around}
        return label

    def attrs(self, name: str) -> dict[str, Any]:
        """The attributes that say what an op computes: generated ones dropped, function
        names without their numeric suffixes."""
        out = {}
        for key, value in self.model.attrs(name).items():
            if key.startswith("_") or key in _IGNORED_ATTRS:
                continue
            out[key] = _normalised(value)
        return out

    def same_attrs(self, name: str, other: _Side, other_name: str) -> bool:
        """Are the two ops' attributes equal as stored?  Most are, and comparing the
        protobuf values is far cheaper than decoding them; unequal ones are decoded and
        compared by :meth:`attrs`."""
        x = self.model.g._node[name].get("node_def")
        y = other.model.g._node[other_name].get("node_def")
        if x is None or y is None:
            return x is y
        return x.attr.keys() == y.attr.keys() and all(x.attr[k] == y.attr[k] for k in x.attr)

    def same_outputs(self, name: str, other: _Side, other_name: str, same_attrs: bool) -> bool:
        """Equal stored attributes (``_output_shapes`` among them) mean equal outputs, unless
        shape inference has replaced what the file said; otherwise they are compared."""
        return (same_attrs and "outputs" not in self.model.g._node[name]
                and "outputs" not in other.model.g._node[other_name]) or (
            self.model.op_outputs(name) == other.model.op_outputs(other_name))


def _normalised(value: Any) -> Any:
    """Function names lose their numeric suffix (``__inference_call_1234``)."""
    if isinstance(value, dict) and "function" in value:
        return {**value, "function": _FUNCTION_SUFFIX.sub("", str(value["function"]))}
    if isinstance(value, list):
        return [_normalised(v) for v in value]
    return value


# --------------------------------------------------------------------------- matching


@paused_gc
def diff_models(old: GraphModel, new: GraphModel) -> GraphDiff:
    """Match ``old`` and ``new`` and class every op and edge (see the module docstring)."""
    a, b = _Side(old), _Side(new)
    pairs = _match(a, b)
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


def _match(a: _Side, b: _Side) -> dict[str, str]:
    pairs: dict[str, str] = {}
    taken: set[str] = set()

    def pair(o: str, n: str) -> None:
        if o not in pairs and n not in taken:
            pairs[o] = n
            taken.add(n)

    # 1. Scopes first: renumbering happens to whole layers (dense_3 -> dense_4).
    _pair_scopes(a, b, _Scope.tree(a), _Scope.tree(b), pair)
    # 2. Same name, same type, same neighbourhood, outside any scope paired so far.
    for o in a.type:
        if o in b.type and a.type[o] == b.type[o] and a.signature[o] == b.signature[o]:
            pair(o, o)
    # 3. A neighbourhood unique in both graphs, whatever the names.
    left = _unique(a, (o for o in a.type if o not in pairs))
    right = _unique(b, (n for n in b.type if n not in taken))
    for sig, n in right.items():
        match = left.get(sig)
        if match is not None and a.type[match] == b.type[n]:
            pair(match, n)
    # 4. Along the dataflow, from every pair.
    _spread(a, b, pairs, taken, pair)
    # 5. What is left: same name and type.
    for o in a.type:
        if o not in pairs and o in b.type and o not in taken and a.type[o] == b.type[o]:
            pair(o, o)
    _spread(a, b, pairs, taken, pair)
    return pairs


class _Scope:
    """A name scope of one side: its last name component (its full name is not kept: scopes
    nested ``d`` deep have ``d²`` characters of them), its ops (by their last name component),
    child scopes, the op-type multiset of everything below (its contents, names ignored), and
    where it first appears in the dataflow."""

    __slots__ = ("children", "contents", "first", "label", "ops")

    def __init__(self, label: str) -> None:
        self.label = label
        self.children: dict[str, _Scope] = {}
        self.ops: dict[str, str] = {}
        self.contents: tuple = ()
        self.first = 0

    @staticmethod
    def tree(side: _Side) -> _Scope:
        root = _Scope("")
        for name in side.type:
            parts = name.split("/")
            node = root
            for part in parts[:-1]:
                child = node.children.get(part)
                if child is None:
                    child = node.children[part] = _Scope(part)
                node = child
            node.ops[parts[-1]] = name
        stack, order = [root], []
        while stack:
            node = stack.pop()
            order.append(node)
            stack.extend(node.children.values())
        index = {name: k for k, name in enumerate(side.type)}
        for node in reversed(order):  # children before parents
            counts: Counter[str] = Counter(side.type[n] for n in node.ops.values())
            firsts = [index[n] for n in node.ops.values()]
            for child in node.children.values():
                counts.update(dict(child.contents))
                firsts.append(child.first)
            node.contents = tuple(sorted(counts.items()))
            node.first = min(firsts, default=0)
        return root


def _pair_scopes(a: _Side, b: _Side, old: _Scope, new: _Scope, pair: Any) -> None:
    """Pair two paired scopes' ops by name, then their child scopes: same name and contents;
    then, in dataflow order, alike contents (the longest common subsequence); then same name
    (contents changed).  And so on down, paired scopes before their children (a loop, not
    recursion: scopes nest thousands deep)."""
    work = [(old, new)]
    while work:
        old, new = work.pop()
        for label, o in old.ops.items():
            n = new.ops.get(label)
            if n is not None and a.type[o] == b.type[n]:
                pair(o, n)
        matched: list[tuple[_Scope, _Scope]] = []
        left = dict(old.children)
        right = dict(new.children)
        for name in sorted(left.keys() & right.keys()):
            if left[name].contents == right[name].contents:
                matched.append((left.pop(name), right.pop(name)))
        rest_o = sorted(left.values(), key=lambda s: s.first)
        rest_n = sorted(right.values(), key=lambda s: s.first)
        for x, y in _common_subsequence(rest_o, rest_n):
            matched.append((x, y))
            left.pop(x.label)
            right.pop(y.label)
        for name in sorted(left.keys() & right.keys()):
            matched.append((left[name], right[name]))
        work.extend(reversed(matched))


def _common_subsequence(xs: list[_Scope], ys: list[_Scope]) -> list[tuple[_Scope, _Scope]]:
    """The longest common subsequence of two scope sequences by contents (dynamic
    programming; the sequences are what is left after pairing by name, seldom long)."""
    if not xs or not ys or len(xs) * len(ys) > 4_000_000:
        return []
    m, n = len(xs), len(ys)
    best = [[0] * (n + 1) for _ in range(m + 1)]
    for i in range(m - 1, -1, -1):
        for j in range(n - 1, -1, -1):
            best[i][j] = (best[i + 1][j + 1] + 1 if xs[i].contents == ys[j].contents
                          else max(best[i + 1][j], best[i][j + 1]))
    out, i, j = [], 0, 0
    while i < m and j < n:
        if xs[i].contents == ys[j].contents:
            out.append((xs[i], ys[j]))
            i, j = i + 1, j + 1
        elif best[i + 1][j] >= best[i][j + 1]:
            i += 1
        else:
            j += 1
    return out


def _unique(side: _Side, names: Iterable[str]) -> dict[int, str]:
    """Signature -> name, for the signatures only one of ``names`` has."""
    seen: dict[int, str] = {}
    twice: set[int] = set()
    for name in names:
        sig = side.signature[name]
        if sig in seen:
            twice.add(sig)
        seen[sig] = name
    return {sig: name for sig, name in seen.items() if sig not in twice}


def _spread(a: _Side, b: _Side, pairs: dict[str, str], taken: set[str], pair: Any) -> None:
    """Pair along the dataflow: the ops feeding a pair's input slot ``k`` (same output), and
    its sole consumers of each output at the same slot, until nothing more pairs."""
    work = list(pairs.items())
    while work:
        o, n = work.pop()
        for slot, (po, out_o) in a.inputs[o].items():
            found = b.inputs[n].get(slot)
            if found is None:
                continue
            pn, out_n = found
            if po not in pairs and pn not in taken and out_o == out_n and _compatible(
                    a, b, po, pn, pairs):
                pair(po, pn)
                work.append((po, pn))
        for out in sorted(a.used[o] & b.used[n]):
            co, cn = a.consumers.get((o, out), []), b.consumers.get((n, out), [])
            free_o = [(c, s) for c, s in co if c not in pairs]
            free_n = [(c, s) for c, s in cn if c not in taken]
            if len(free_o) == 1 and len(free_n) == 1 and free_o[0][1] == free_n[0][1]:
                (x, _), (y, _) = free_o[0], free_n[0]
                if _compatible(a, b, x, y, pairs):
                    pair(x, y)
                    work.append((x, y))


def _compatible(a: _Side, b: _Side, o: str, n: str, pairs: dict[str, str]) -> bool:
    """May these two unpaired ops be the same op, changed at most?  Same type; or, for a swap
    (``Relu`` for ``Tanh``), every data input already paired slot by slot."""
    if a.type[o] == b.type[n]:
        return True
    ins_o, ins_n = a.inputs[o], b.inputs[n]
    return bool(ins_o) and ins_o.keys() == ins_n.keys() and all(
        pairs.get(ins_o[k][0]) == ins_n[k][0] for k in ins_o)


# --------------------------------------------------------------------------- classes


def _changes(a: _Side, b: _Side, o: str, n: str, pairs: dict[str, str],
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


def _edge_changes(a: _Side, b: _Side, pairs: dict[str, str]
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
    for name, data in new.g._node.items():
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
    merged.source = new.source
    merged.inputs, merged.outputs = new.inputs, new.outputs
    merged.functions = {**old.functions, **new.functions}
    merged.function_groups = {**{place.get(k, k): v for k, v in old.function_groups.items()},
                              **new.function_groups}
    merged.top_level_nodes = len(g)
    merged.warnings = new.warnings
    for name, outputs in new.cached_outputs().items():
        merged.set_outputs(name, outputs)
    known = old.cached_outputs()
    for name in d.removed:
        if name in known:
            merged.set_outputs(place[name], known[name])
    return merged
