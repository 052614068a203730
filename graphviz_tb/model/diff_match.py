"""Matching two versions of a graph op by op: scopes paired by name and by content, then ops
paired within each pair of scopes (renames found where the wiring agrees)."""

from __future__ import annotations

import re
import zlib
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from .graph import CONTROL, GraphModel, node_def_of
from .onnx import ONNX_BOOKKEEPING

__all__ = ["Scopes", "Side", "by_scope", "match_ops"]


#: How many rounds of neighbourhood refinement a structural signature takes.
_ROUNDS = 3


_FUNCTION_SUFFIX = re.compile(r"_\d+$")


def by_scope(names: list[str], tree: Scopes) -> list[tuple[str, int]]:
    """Names (of the side whose scopes are ``tree``) counted by the widest scope all of whose
    ops they are (a whole inserted layer reads as one), else by their own scope; most
    first."""
    widest = tree.outermost(tree.whole(names))
    counts: Counter[int] = Counter()
    for name in names:
        scope = tree.of(name)
        counts[widest.get(scope, scope)] += 1
    return sorted(((tree.name(s), n) for s, n in counts.items()), key=lambda kv: (-kv[1], kv[0]))


class Scopes:
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

    def shared(self, other: Scopes) -> set[int]:
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


class Side:
    """What matching needs of one model: op types, data inputs by slot, control inputs,
    consumers, structural signatures, and comparable attributes."""

    def __init__(self, model: GraphModel) -> None:
        self.model = model
        g = model.g
        self.type: dict[str, str] = {n: d["op"] for n, d in g.node_data.items()}
        self.inputs: dict[str, dict[int, tuple[str, int]]] = defaultdict(dict)
        self.control: dict[str, set[str]] = defaultdict(set)
        self.consumers: dict[tuple[str, int], list[tuple[str, int]]] = defaultdict(list)
        self.used: dict[str, set[int]] = defaultdict(set)  # the outputs something consumes
        for u, nbrs in g.succ.items():
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
        around = [(n, [u for _, (u, _o) in sorted(self.inputs[n].items())], list(g.succ[n]))
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

    def same_attrs(self, name: str, other: Side, other_name: str) -> bool:
        """Are the two ops' attributes equal as stored?  Most are, and comparing the
        protobuf values is far cheaper than decoding them; unequal ones are decoded and
        compared by :meth:`attrs`."""
        x = node_def_of(self.model.g.node_data[name])
        y = node_def_of(other.model.g.node_data[other_name])
        if x is None or y is None:
            return x is y
        return x.attr.keys() == y.attr.keys() and all(x.attr[k] == y.attr[k] for k in x.attr)

    def same_outputs(self, name: str, other: Side, other_name: str, same_attrs: bool) -> bool:
        """Equal stored attributes (``_output_shapes`` among them) mean equal outputs, unless
        shape inference has replaced what the file said; otherwise they are compared."""
        return (same_attrs and "outputs" not in self.model.g.node_data[name]
                and "outputs" not in other.model.g.node_data[other_name]) or (
            self.model.op_outputs(name) == other.model.op_outputs(other_name))


def _normalised(value: Any) -> Any:
    """Function names lose their numeric suffix (``__inference_call_1234``)."""
    if isinstance(value, dict) and "function" in value:
        return {**value, "function": _FUNCTION_SUFFIX.sub("", str(value["function"]))}
    if isinstance(value, list):
        return [_normalised(v) for v in value]
    return value


def match_ops(a: Side, b: Side) -> dict[str, str]:
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
    def tree(side: Side) -> _Scope:
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


def _pair_scopes(a: Side, b: Side, old: _Scope, new: _Scope, pair: Any) -> None:
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


def _unique(side: Side, names: Iterable[str]) -> dict[int, str]:
    """Signature -> name, for the signatures only one of ``names`` has."""
    seen: dict[int, str] = {}
    twice: set[int] = set()
    for name in names:
        sig = side.signature[name]
        if sig in seen:
            twice.add(sig)
        seen[sig] = name
    return {sig: name for sig, name in seen.items() if sig not in twice}


def _spread(a: Side, b: Side, pairs: dict[str, str], taken: set[str], pair: Any) -> None:
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


def _compatible(a: Side, b: Side, o: str, n: str, pairs: dict[str, str]) -> bool:
    """May these two unpaired ops be the same op, changed at most?  Same type; or, for a swap
    (``Relu`` for ``Tanh``), every data input already paired slot by slot."""
    if a.type[o] == b.type[n]:
        return True
    ins_o, ins_n = a.inputs[o], b.inputs[n]
    return bool(ins_o) and ins_o.keys() == ins_n.keys() and all(
        pairs.get(ins_o[k][0]) == ins_n[k][0] for k in ins_o)


#: Attributes TensorFlow writes for itself, which differ between exports of one model, and
#: those :mod:`.onnx` records of the file's bookkeeping (an exporter's node names, the
#: plumbing folded into an op).
_IGNORED_ATTRS = frozenset({"config_proto", "executor_type", *ONNX_BOOKKEEPING})
