"""Grouping from the dataflow: invented groups kept convex, flat groups cut into blocks, and
groups too big for one layout dealt into sections (the algorithms are
:mod:`graphviz_tb.group.partition`'s)."""

from __future__ import annotations

import zlib
from collections import defaultdict

from ..model.graph import CONTROL
from .partition import (
    ChildGraph,
    blocks,
    convex_chunks,
    has_sequence,
    label_groups,
    strong_components,
)
from .tree import (
    INVENTED,
    Group,
    Hierarchy,
    Meetings,
    Member,
    OpNode,
    child_of,
    child_slots,
    dissolve,
    free_name,
    natural_key,
    op_members,
    ops_below,
    reparent,
)

#: A group with more children than this is split into sections of ``SECTION_SIZE``.
SECTION_LIMIT = 400


SECTION_SIZE = 200


def _natural(m: Member) -> tuple:
    """Sort key: groups before ops, names with their numbers compared as numbers."""
    return (not isinstance(m, Group), natural_key(m.name))


def sections(h: Hierarchy, meet: Meetings, known: LocalGraphs) -> None:
    """Split any group with more than ``SECTION_LIMIT`` children into sections of
    ``SECTION_SIZE``, so that opening it never hands Graphviz one flat layout of thousands of
    nodes (dot's time grows far faster than its node count, so many small layouts cost much
    less than one big one).

    Members are dealt out in dataflow order (a topological order of the group's children,
    natural name order among the ready, so ``add_150`` sits with ``add_0`` when nothing orders
    them), which keeps every section convex: a path leaving a section only reaches later
    ones, so the sections drawn never form a loop.  Children on a common cycle (the user's
    own scopes need not be convex) go into one section together (see
    :func:`~graphviz_tb.group.partition.convex_chunks`); when that is nearly all of them (NASNet's
    gradients and the 606 ``AddN`` summing them), the group is left whole.
    """
    for group in list(h._raw_groups()):
        if len(group._children) <= SECTION_LIMIT:
            continue
        cached = known.get(group)
        graph, children = cached if cached and cached[1] is group._children else \
            local_graph(h, group, meet)
        chunks = convex_chunks(graph, [_natural(c) for c in children], SECTION_SIZE)
        if len(chunks) == 1:  # one cycle through most children: sections would hide them
            continue
        made: list[Group] = []
        start = 0
        for chunk in chunks:
            members = [children[i] for i in chunk]
            label = f"[{start + 1}–{start + len(members)} of {len(children)}]"
            start += len(members)
            full = f"{group.name}/{label}" if group.name else label
            section = Group(full, h, group, kind="section")
            reparent(members, section)
            h.groups[full] = section
            made.append(section)
        group._children = [*made]
        meet.settle(h, group, made)


#: A group with at least this many children that are not invented groups is cut into blocks.
BLOCK_MIN_CHILDREN = 16


#: Ops whose outputs are parameters, not the data a model transforms.
PARAMETER_OPS = frozenset({"Const", "HostConst", "VarHandleOp", "VariableV2", "Variable",
                            "ReadVariableOp", "VarIsInitializedOp"})


#: Ops where data enters a graph.
DATA_SOURCE_OPS = frozenset({"Placeholder", "PlaceholderV2", "PlaceholderWithDefault",
                              "IteratorGetNext", "IteratorGetNextSync", "_Arg"})


def child_ops(children: list[Member]) -> list[list[OpNode]]:
    """Each child's ops: an op child alone, a group's every op below it."""
    return [[c] if isinstance(c, OpNode) else op_members(c)  # type: ignore[arg-type]
            for c in children]


def child_index(children: list[Member], held: list[list[OpNode]] | None = None
                ) -> dict[str, int]:
    """Each op below ``children`` -> the index of the child holding it (``held``: their
    :func:`child_ops`, when the caller has them)."""
    held = child_ops(children) if held is None else held
    return {op.name: i for i, ops in enumerate(held) for op in ops}


def _flow_ends(h: Hierarchy, group: Group, children: list[Member],
               parameter: dict[tuple[str, int], bool]) -> tuple[set[int], set[int]]:
    """Which children take data from outside the group (or hold a data source), and which
    feed data out of it.  ``parameter`` remembers :func:`is_parameter` across groups."""
    graph = h.model.g
    nodes, succ, pred = graph.node_data, graph.succ, graph.pred
    if group is h.root:
        # Nothing lies outside the root: data enters at its sources only, and leaves nowhere;
        # no walk of every edge is needed to find that.
        index = {id(c): i for i, c in enumerate(children)}
        return {index[id(child_of(group, h.ops[u]))] for u, d in nodes.items()
                if d["op"] in DATA_SOURCE_OPS and not is_parameter(h, u, 0)}, set()
    # Each child's ops as a list: their types read from the ops themselves (not from their
    # node dicts, found by name), and the rest of a child passed over once it is settled.
    held = child_ops(children)
    where = child_index(children, held)
    data_in: set[int] = set()
    data_out: set[int] = set()
    for i, ops in enumerate(held):
        for op in ops:
            if i in data_in and i in data_out:
                break  # settled: the rest of this child's ops can tell nothing more
            u = op.name
            if i not in data_in and op.op in DATA_SOURCE_OPS and not is_parameter(h, u, 0):
                data_in.add(i)
            if i not in data_out:
                for v, keydict in succ[u].items():
                    if v not in where and any(d["kind"] != CONTROL for d in keydict.values()):
                        data_out.add(i)
                        break
            if i in data_in:
                continue
            for s, keydict in pred[u].items():
                if s in where:
                    continue
                for d in keydict.values():
                    if d["kind"] == CONTROL:
                        continue
                    key = (s, d["src_output"])
                    if key not in parameter:
                        parameter[key] = is_parameter(h, s, d["src_output"])
                    if not parameter[key]:
                        data_in.add(i)
                        break
                if i in data_in:
                    break
    return data_in, data_out


def is_parameter(h: Hierarchy, op: str, output: int) -> bool:
    """Is this op output a parameter (a constant, a variable, a resource handle) rather than
    data flowing through the model?"""
    if h.model.g.node_data[op]["op"] in PARAMETER_OPS:
        return True
    info = h.model.tensor(op, output)
    return info is not None and info.dtype == "resource"


#: A name group may take in ops between its members up to this share of its own ops.
_HULL_SHARE = 0.25


def repair_convexity(h: Hierarchy, meet: Meetings) -> LocalGraphs:
    """Make every prefix group and op series convex, or give it up.

    Contract a group's invented children; each one on a cycle of the result first tries to
    take in what lies on the paths between its members (its hull: the residual adds between
    ConvNeXt's blocks, outside their ``stage_0`` names), when that is only a few ops of plain
    children; otherwise, or if it is still on a cycle, it is dissolved (its members move up).
    Until none is on a cycle (see :mod:`graphviz_tb.group.partition`).  The user's own scopes stay
    as they are.  Returns the DAG of each group it looked at, for :func:`find_blocks`.
    """
    # Only parents of invented groups have anything to repair; parents first (a dissolved
    # group's invented children become its parent's).
    parents = sorted({g.parent for g in h.groups.values()
                      if g.kind in INVENTED and g.parent is not None},
                     key=lambda g: (g.depth, g.name))
    seen: LocalGraphs = {}
    for g in parents:
        extended: set[Group] = set()
        while True:
            kids = g._children
            part = [i if isinstance(c, Group) and c.kind in INVENTED else -1
                    for i, c in enumerate(kids)]
            if all(p < 0 for p in part):
                break
            graph = local_graph(h, g, meet)[0]
            # Each invented child is a part of its own, so the parts on a cycle are the
            # children in a strongly connected component of more than one.
            cycles = _cycles(strong_components(graph))
            bad = {i for i, p in enumerate(part) if p >= 0 and i in cycles}
            if not bad:
                seen[g] = graph, kids
                break
            taken: set[int] = set()
            for i in sorted(bad, key=lambda i: kids[i].name):
                extra = _extension(cycles[i], kids, part, i) \
                    if kids[i] not in extended else None
                if extra is not None and not extra & taken:
                    extended.add(kids[i])  # type: ignore[arg-type]
                    taken |= extra
                    _absorb(kids[i], [kids[x] for x in sorted(extra)])  # type: ignore[arg-type]
                else:
                    taken.add(i)
            kept: list[Member] = []
            for i, c in enumerate(kids):
                if i in bad and c not in extended:
                    dissolve(h, c)  # type: ignore[arg-type]
                    meet.move(c, g)  # type: ignore[arg-type]
                    kept.extend(c._children)  # type: ignore[attr-defined]
                elif i not in taken or i in bad:
                    kept.append(c)
            g._children = kept
            meet.settle(h, g, list(extended))
    return seen


def _cycles(component: list[int]) -> dict[int, set[int]]:
    """Each node on a directed cycle -> the nodes of its strongly connected component (shared
    by them all).  A node's hull, every node on a path from it back to itself, is exactly
    that component."""
    members: dict[int, set[int]] = defaultdict(set)
    for i, c in enumerate(component):
        members[c].add(i)
    return {i: m for m in members.values() if len(m) > 1 for i in m}


def _extension(cycle: set[int], kids: list[Member], part: list[int], i: int
               ) -> set[int] | None:
    """The children invented group ``kids[i]`` would take in to become convex (the others on
    its ``cycle``), or None when that means taking another invented group or more than a few
    ops."""
    extra = cycle - {i}
    if not extra or any(part[x] >= 0 for x in extra):
        return None
    ops = sum(ops_below(kids[x]) for x in extra)
    return extra if ops <= _HULL_SHARE * ops_below(kids[i]) else None


def _absorb(group: Group, members: list[Member]) -> None:
    """Move ``members`` (siblings of ``group``) into it."""
    for m in members:
        m.parent = group
    group._children.extend(members)


def find_blocks(h: Hierarchy, meet: Meetings, known: LocalGraphs) -> LocalGraphs:
    """Cut every group whose names left it flat into blocks found from its dataflow (see
    :mod:`graphviz_tb.group.partition`); ``known`` holds DAGs :func:`repair_convexity` made.
    Returns the DAGs of the groups too big for one layout that it left as they were, for
    :func:`sections` (100,000 children take a third of a second to wire)."""
    signature_of = _Signatures()
    parameter: dict[tuple[str, int], bool] = {}
    uncut = {g: dag for g, dag in known.items() if len(dag[1]) > SECTION_LIMIT}
    for group in list(h._raw_groups()):
        kids = group._children
        plain = sum(1 for c in kids if not (isinstance(c, Group) and c.kind in INVENTED))
        if plain < BLOCK_MIN_CHILDREN or group.kind in ("series", "section", "update") \
                or group in h.training:  # a block there would swallow the model's parts
            continue
        cached = known.get(group)
        graph, children = cached if cached and cached[1] is kids else \
            local_graph(h, group, meet)
        if len(children) > SECTION_LIMIT:
            uncut[group] = graph, children
        if not has_sequence(graph):
            continue
        graph.data_in, graph.data_out = _flow_ends(h, group, children, parameter)
        signature = [signature_of(c) for c in children]
        weight = [s[0] for s in signature]
        found = [b for b in blocks(graph, signature) if len(b) >= 2]
        if len(found) < 2 or (_one_holds_most(found, weight)
                               and _named_modules_alone(h, children)):
            continue
        uncut.pop(group, None)
        labels = label_groups(graph, [c.label for c in children], weight, found)
        made = []
        inside: set[int] = set()
        for members, label in zip(found, labels, strict=True):
            full = free_name(h, f"{group.name}/{label}" if group.name else label)
            block = Group(full, h, group, group.depth + 1, kind="block")
            reparent([children[i] for i in members], block)
            h.groups[full] = block
            made.append(block)
            inside.update(members)
        group._children = made + [c for i, c in enumerate(children) if i not in inside]
        h.block_order[group] = made
        meet.settle(h, group, made)
    return uncut


def _one_holds_most(found: list[list[int]], weight: list[int]) -> bool:
    """Does one block hold more than half the group's ops?"""
    total = sum(weight)
    return any(2 * sum(weight[i] for i in members) > total for members in found)


def _named_modules_alone(h: Hierarchy, children: list[Member]) -> bool:
    """Are the group's children the modules the format names (PyTorch's and ONNX's module
    paths), besides the graph's inputs and outputs?

    Their names already group them, so a cut whose one block holds most of them shows
    nothing: the view opens that block at once, and the few children left outside it are
    hidden in blocks of their own.  A U-Net's skip connections leave no waist between its
    stem and its head: its input went into ``input … stem``, its output into ``head …
    output``, and every level into one block between them.  (A flat TF graph's big block
    stays: closed, it keeps hundreds of ops out of the first view.)"""
    labels = h.model.scope_labels
    if not labels:
        return False
    pred, succ = h.model.g.pred, h.model.g.succ
    return all(c.name in labels if isinstance(c, Group) else not (pred[c.name] and succ[c.name])
               for c in children)


class _Signatures:
    """A cheap fingerprint of each member's structure: how many ops, and a sum over their types
    (equal structure, equal fingerprint; the same in every process).

    Remembered per group and summed children first, so the groups cut at every level of a
    tree cost one walk of it, not one walk per level; an op's is its type's, one tuple per type
    (a tuple and an entry per op were most of a million-op graph's walk).
    """

    def __init__(self) -> None:
        self._of: dict[Member, tuple[int, int]] = {}
        self._type: dict[str, tuple[int, int]] = {}

    def __call__(self, m: Member) -> tuple[int, int]:
        if isinstance(m, OpNode):  # most children of a flat group: no walk to set up
            return self._op(m)
        of = self._of
        found = of.get(m)
        if found is not None:
            return found
        stack: list[tuple[Member, bool]] = [(m, False)]
        while stack:
            x, ready = stack.pop()
            if ready:
                count = total = 0
                for c in x._children:  # type: ignore[attr-defined]
                    n, t = self._op(c) if isinstance(c, OpNode) else of[c]
                    count += n
                    total += t
                of[x] = (count, total)
            else:
                stack.append((x, True))
                stack.extend((c, False) for c in x._children  # type: ignore[attr-defined]
                             if not isinstance(c, OpNode) and c not in of)
        return of[m]

    def _op(self, x: OpNode) -> tuple[int, int]:
        """An op's fingerprint, its type hashed once per type."""
        found = self._type.get(x.op)
        if found is None:
            found = self._type[x.op] = (1, zlib.crc32(x.op.encode()))
        return found


def local_graph(h: Hierarchy, group: Group, meet: Meetings
                 ) -> tuple[ChildGraph, list[Member]]:
    """The group's children as a DAG (see :class:`~graphviz_tb.group.partition.ChildGraph`), from
    the edges meeting in it: O(those edges × nesting), not O(everything below)."""
    children = group._children
    slot = child_slots(group, children)
    src, dst, closing = meet.src, meet.dst, meet.closing
    edges = {(slot(src[i]), slot(dst[i]))
             for i in meet.of(group) if i not in closing}
    graph = ChildGraph(len(children), sorted(e for e in edges if e[0] != e[1]))
    return graph, children


#: A group's children as a DAG, with the list of children it was made from.


LocalGraphs = dict[Group, tuple[ChildGraph, list[Member]]]
