"""The scope tree: ops grouped by name scope, function body, shared name prefix and series.

An op ``a/b/c`` lives in group ``a/b``.  An op whose name is also a scope (``a/b`` beside
``a/b/...``) stays a distinct leaf inside that group, as TensorBoard draws it.  Function bodies
opened by :mod:`graphviz_tb.model.calls` become groups of kind ``function``.  Flat Keras 3 names
(every layer directly under the model) are split into virtual ``prefix`` groups by shared name
prefix, and runs of numbered siblings become ``series`` groups.

Every edge of the op graph is aggregated exactly once, at the lowest group containing both ends,
into an :class:`AggEdge` between two children of that group.  That is what a per-group layout
needs: a group's own picture is its children plus the edges between them.
"""

from __future__ import annotations

import re
from array import array
from collections import defaultdict
from operator import attrgetter
from typing import TYPE_CHECKING, Any, NamedTuple

from ..model.graph import CONTROL, DATA, REF

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

    from ..model.graph import GraphModel
    from .templates import Templates

__all__ = [
    "AggEdge",
    "Group",
    "Hierarchy",
    "Member",
    "OpNode",
    "TrainingParts",
    "is_section",
    "natural_key",
    "scope_path",
]

#: The numbers in a name.
DIGITS = re.compile(r"(\d+)")
_NAME = attrgetter("name")


class Member:
    """Anything drawn: an op or a group.  ``name`` is the full name; identity is the object.

    Plain classes with slots, not dataclasses: a 65,000-op graph makes about 100,000 members,
    and constructing them is a noticeable part of the default render.
    """

    __slots__ = ("depth", "label", "name", "page", "parent", "place")

    def __init__(self, name: str, parent: Group | None = None, depth: int = 0,
                 label: str | None = None) -> None:
        self.name, self.parent, self.depth = name, parent, depth
        #: Scratch for walks numbering members (``Templates._form``; ``page``: the viewer's
        #: page, draw.viewer_ops.OnPage): not a dict of every member (a million inserts).
        self.place = self.page = 0
        #: The short name shown in the picture: the last scope component (or ``label``, cut).
        self.label = label_of(name) if label is None else label

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    def ancestors(self) -> Iterator[Group]:
        node = self.parent
        while node is not None:
            yield node
            node = node.parent


class OpNode(Member):
    """One op of the model, as a leaf of the hierarchy."""

    __slots__ = ("op", "role")
    is_group = False

    def __init__(self, name: str, parent: Group, label: str, op: str, role: str) -> None:
        # No super().__init__: one call per op of the graph, and the caller has the label.
        self.name, self.parent, self.depth, self.label = name, parent, 0, label
        self.place = self.page = 0
        self.op = op
        self.role = role


class AggEdge:
    """Edges between two children of one group, counted by kind.

    ``flat`` lists the model edges it stands for, ``src, dst, key, data`` after one another
    (the ops themselves and the edge's dict, so a reader finds their place and the tensor
    carried without a lookup by name), so tracing and shape labels can reach the real
    tensors (a tuple per edge was 5% of a big page's memory); ``edges`` gives them as
    tuples of names.  ``back`` counts edges that close cycles.
    (A plain class with slots: a 65,000-op graph makes about 100,000 of these.)
    """

    __slots__ = ("back", "control", "data", "dst", "flat", "ref", "src")

    def __init__(self, src: Member, dst: Member, counts: tuple[int, int, int] = (0, 0, 0),
                 back: int = 0, flat: list[Any] | None = None) -> None:
        self.src, self.dst = src, dst
        #: The edges of each kind: three slots, not a dict, which was a tenth of a big
        #: graph's page in memory (a viewer page aggregates every group's edges).
        self.data, self.control, self.ref = counts
        self.back = back
        self.flat = flat if flat is not None else []

    @property
    def edges(self) -> list[tuple[str, str, int]]:
        """The model edges ``(src, dst, key)`` it stands for, by name, in order (a new
        list)."""
        flat = self.flat
        return [(flat[j].name, flat[j + 1].name, flat[j + 2]) for j in range(0, len(flat), 4)]

    @property
    def counts(self) -> dict[str, int]:
        """The edges of each kind by kind name (a new dict: the slots are the counts)."""
        return {DATA: self.data, CONTROL: self.control, REF: self.ref}

    @property
    def kind(self) -> str:
        """The style to draw: data wins over ref, ref over control."""
        if self.data:
            return DATA
        return REF if self.ref else CONTROL

    @property
    def total(self) -> int:
        return self.data + self.control + self.ref


class Group(Member):
    """A collapsible group: ``root``, ``scope``, ``function``, ``prefix``, ``series``,
    ``block`` or ``section`` (a slice of an oversized group).

    ``edges`` are aggregated on first use (see :class:`Hierarchy`): a picture needs them only
    for the groups it draws.  ``_template`` is the structural template id that
    :class:`~graphviz_tb.group.templates.Templates` decides.  ``size`` counts the members of
    its subtree and itself, as :func:`~.scopes.finish` or ``Templates._size`` found it, and
    ``form`` is the id of its relative form (``Templates._form``); 0 and -1 while unknown.
    """

    __slots__ = ("_children", "_deep", "_edges", "_settled", "_template", "form", "function",
                 "kind", "op_count", "op_hash", "owner", "size")
    is_group = True

    def __init__(self, name: str, owner: Hierarchy, parent: Group | None = None,
                 depth: int = 0, kind: str = "scope", settled: bool = False,
                 label: str | None = None) -> None:
        super().__init__(name, parent, depth, label)
        self.owner = owner
        self.kind = kind
        self._children: list[Member] = []
        #: Whether this group's own scope series are made (``_settled``), and those of every
        #: group below it too (``_deep``); see :meth:`Hierarchy.settle`.
        self._settled = settled
        self._deep = False
        self.op_count, self.size, self.form = 0, 0, -1
        #: The sum of the hashes of the op types below: equal structure, equal sum.
        self.op_hash = 0
        self.function: str | None = None
        self._edges: dict[tuple[Member, Member], AggEdge] | None = None
        self._template: int | None = None

    @property
    def children(self) -> list[Member]:
        """The members directly in this group (its scope series made first, if still due)."""
        if not self._settled:
            self.owner.settle_level(self)
        return self._children

    @property
    def edges(self) -> dict[tuple[Member, Member], AggEdge]:
        """The model edges between two of this group's children, aggregated per pair."""
        if self._edges is None:
            self.owner.aggregate(self)
        return self._edges  # type: ignore[return-value]

    def release_edges(self) -> None:
        """Forget the aggregated edges, to be aggregated again when next read (the same
        ones: see :meth:`Hierarchy.aggregate`).  A reader of every group's edges once (the
        viewer's page) lets each go as it is done with it: all held at once, they were a
        sixth of a million-op page's peak memory."""
        self._edges = None

    def walk(self) -> Iterator[Member]:
        """Every member below this group, parents before children, iteratively (deep trees);
        each group's series made as the walk reaches it, so a walk cut short settles no more
        than it read."""
        stack: list[Member] = list(reversed(self.children))
        while stack:
            member = stack.pop()
            yield member
            if isinstance(member, Group):
                stack.extend(reversed(member.children))


class TrainingParts(NamedTuple):
    """What a reader sees in a TF2 training step: the model, its gradients (``gradient_tape``,
    mirroring the model) and the optimizer's updates.  A step may train several models with
    several optimizers (a GAN's generator and discriminator, the discriminator called twice):
    ``models`` and ``optimizers`` list them all, ``model`` and ``optimizer`` first."""

    gradients: Group
    optimizer: Group
    model: Group | None
    models: tuple[Group, ...] = ()
    optimizers: tuple[Group, ...] = ()


class Hierarchy:
    """The tree of groups over a :class:`~graphviz_tb.model.graph.GraphModel`.

    Built by :func:`~graphviz_tb.group.build.build_hierarchy`: every op placed, every scope,
    prefix, op series, block and section group made.  The scope series (numbered sibling
    groups folded into one when their structural templates agree) are made on demand: a
    group's own when its ``children`` are first read, a subtree's by :meth:`settle`, the
    whole tree's before anything reads every group (:meth:`all_groups`, the viewer's page).
    A picture reads the children of the groups it opens: the default SVG of a 96,546-op
    graph settles 14,493 groups, not all 51,608.  Settling in any order gives the same tree: a
    group's series depend only on its children's subtrees as their forms and templates
    record them, and change nothing outside its own subtree.  What else is derived is
    computed when first asked for too: a group's aggregated ``edges`` (the default view of
    NASNet-Large reads those of a few groups of 35,000) and templates (:attr:`templates`).
    """

    def __init__(self, model: GraphModel, series_min: int | None = None) -> None:
        self.model = model
        #: The shortest scope series to make; None when series are off.
        self.series_min = series_min
        #: The group under which each series was made, in order: the subtrees of it and of its
        #: ancestors changed then (and no others did).
        self.series_made: list[Group] = []
        self.root = Group("", self, kind="root")
        #: Every group by full name.
        self.groups: dict[str, Group] = {}
        self.ops: dict[str, OpNode] = {}
        #: Structural templates, made by :func:`~graphviz_tb.group.build.build_hierarchy` once
        #: the tree is grouped.
        self.templates: Templates
        #: The blocks each group was cut into (see :func:`find_blocks`), in dataflow order.
        self.block_order: dict[Group, list[Group]] = {}
        #: Groups holding a TF2 training step -> its parts (see :func:`adopt_loose_ops`):
        #: the first picture opens the model and leaves the gradients and optimizer closed.
        self.training: dict[Group, TrainingParts] = {}
        self._meet: Meetings | None = None
        self._order: dict[str, int] | None = None
        #: Makes one group's scope series, once grouping is done (see :meth:`settle_level`).
        self.settler: Callable[[Group], None] | None = None

    def meetings(self) -> Meetings:
        """Where every model edge meets, kept true as the tree is regrouped (see
        :class:`Meetings`); made when the eager regrouping starts, and read by settling and
        aggregation after."""
        if self._meet is None:
            self._meet = Meetings(self)
        return self._meet

    def lookup(self, name: str) -> Member | None:
        """The group of that full name, else the op of that name (a scope series is looked
        for in the settled tree)."""
        found = self.groups.get(name) or self.ops.get(name)
        if found is None and not self.root._deep:
            self.settle()
            found = self.groups.get(name)
        return found

    def title(self, m: Member) -> str:
        """The name a picture gives a member, one per drawn box: its full name, except for an
        op that shares its name with a scope (drawn inside that scope, beside the scope's own
        box), which is ``scope/(label)`` as TensorBoard names it."""
        if isinstance(m, OpNode) and m.name in self.groups:
            return f"{m.name}/({m.label})"
        return m.name

    def all_groups(self) -> Iterator[Group]:
        """The root, then every group in creation order, the whole tree settled first."""
        self.settle()
        return self._raw_groups()

    def _raw_groups(self) -> Iterator[Group]:
        """The root, then every group made so far (a list copy: callers may add groups)."""
        yield self.root
        yield from list(self.groups.values())

    def settle(self, top: Group | None = None) -> None:
        """Make the scope series of every group in ``top``'s subtree (default: the tree), each
        group after the groups below it."""
        top = top or self.root
        if top._deep or self.settler is None:
            return
        preorder: list[Group] = []
        stack = [top]
        while stack:
            g = stack.pop()
            preorder.append(g)
            stack.extend(c for c in g._children if isinstance(c, Group) and not c._deep)
        for g in reversed(preorder):
            if not g._settled:
                self.settle_level(g)
            g._deep = True

    def settle_level(self, group: Group) -> None:
        """Make one group's own scope series, once, after grouping (while grouping, children
        are read as they stand)."""
        if self.settler is not None:
            group._settled = True
            self.settler(group)

    def aggregate(self, group: Group) -> None:
        """Fill one group's ``edges``: every model edge between two different children.

        Read from the edges meeting in the group (see :class:`Meetings`), in model order
        (source op, then destination, then input slot), so a group's edges do not depend on
        when they were asked for (:func:`aggregate_edges` fills every group's).
        """
        group.children  # noqa: B018  (its series made first: they change what meets in it)
        meet = self.meetings()
        src, dst, keys = meet.src, meet.dst, meet.keys
        edges: dict[tuple[Member, Member], AggEdge] = {}
        for i in meet.of(group):
            x, y = src[i], dst[i]
            a, b = child_of(group, x), child_of(group, y)
            if b is a and (x is not y or isinstance(a, Group)):
                continue  # within one child (only an op's self-loop stays)
            count_into(edges, a, b, x, y, keys[i])
        group._edges = edges

    def order(self) -> dict[str, int]:
        """Each op's position in the model (edge aggregation visits ops in this order)."""
        if self._order is None:
            self._order = {name: i for i, name in enumerate(self.model.g.succ)}
        return self._order


def count_into(edges: dict[tuple[Member, Member], AggEdge], a: Member, b: Member, u: OpNode,
               v: OpNode, keydict: dict[int, dict[str, Any]]) -> None:
    """Add the model edges ``u -> v`` (one per input slot) to the aggregate ``a -> b``."""
    agg = edges.get((a, b))
    if agg is None:
        agg = edges[(a, b)] = AggEdge(a, b)
    members = agg.flat
    for k, d in keydict.items():
        kind = d["kind"]
        if kind == DATA:
            agg.data += 1
        elif kind == CONTROL:
            agg.control += 1
        else:
            agg.ref += 1
        agg.back += d["back"]
        members += u, v, k, d


def label_of(name: str) -> str:
    return name.rstrip("/").rsplit("/", 1)[-1] or name


def scope_path(name: str) -> list[str]:
    """Scope path of a name; empty components (``a//b``, a trailing ``/``) are dropped."""
    if "//" not in name and name[:1] != "/" and name[-1:] != "/":
        return name.split("/")
    parts = [p for p in name.split("/") if p]
    return parts or [name]


def natural_key(name: str) -> list[str | int]:
    """Sort key: the numbers in a name compared as numbers (``add_9`` before ``add_10``)."""
    parts: list[str | int] = list(DIGITS.split(name))
    parts[1::2] = [int(p) for p in parts[1::2]]
    return parts


def ordered(members: list[Member]) -> list[Member]:
    """Deterministic child order: groups first, then ops, each by name."""
    groups = [m for m in members if isinstance(m, Group)]
    ops = [m for m in members if not isinstance(m, Group)]
    groups.sort(key=_NAME)
    ops.sort(key=_NAME)
    return groups + ops


def is_section(m: Member) -> bool:
    """Is this a section: a numbered slice of a group too big for one layout?"""
    return isinstance(m, Group) and m.kind == "section"


def reparent(members: list[Member], new: Group) -> None:
    """Move members into a new group (depths are fixed once, after all regrouping)."""
    for m in members:
        m.parent = new
    new._children = list(members)


def fix_depths(group: Group) -> None:
    stack = [group]
    while stack:
        g = stack.pop()
        depth = g.depth + 1
        for m in g._children:
            m.depth = depth
            if isinstance(m, Group):
                stack.append(m)


def op_members(group: Group) -> list[OpNode]:
    """Every op below a group (a plain loop: this runs over whole graphs)."""
    out: list[OpNode] = []
    stack = [group]
    while stack:
        for m in stack.pop()._children:
            if isinstance(m, Group):
                stack.append(m)
            else:
                out.append(m)  # type: ignore[arg-type]
    return out


def lowest_children(a: Member, b: Member) -> tuple[Member, Member]:
    """The two children of the lowest common group of ``a`` and ``b``."""
    while a.depth > b.depth:
        a = a.parent  # type: ignore[assignment]
    while b.depth > a.depth:
        b = b.parent  # type: ignore[assignment]
    while a.parent is not b.parent:
        a, b = a.parent, b.parent  # type: ignore[assignment]
    return a, b


def aggregate_edges(h: Hierarchy, top: Group | None = None) -> None:
    """Fill the ``edges`` of every group (or of every group in ``top``'s subtree) that has none
    yet: each model edge goes to its lowest common group (see module docstring).  Each group's
    are read from the edges meeting in it (:meth:`Hierarchy.aggregate`), which already knows
    that group, so no edge end is looked up by name."""
    top = top or h.root
    h.settle(top)  # series change where edges meet
    for g in [top, *top.walk()]:
        if type(g) is Group and g._edges is None:
            h.aggregate(g)


# --------------------------------------------------------------------------- dataflow

#: Kinds of group the hierarchy invents (the user's scopes and function bodies are not).
INVENTED = frozenset({"prefix", "series", "section", "block", "update", "metrics",
                      "clipping", "decay"})


# ------------------------------------------------------------------ TF2 training steps


def child_of(group: Group, m: Member) -> Member:
    """The child of ``group`` that holds ``m`` (a member below it)."""
    while m.parent is not group:
        m = m.parent  # type: ignore[assignment]
    return m


def ops_below(m: Member) -> int:
    return 1 if isinstance(m, OpNode) else len(op_members(m))  # type: ignore[arg-type]


def dissolve(h: Hierarchy, g: Group) -> None:
    """Forget an invented group: its members belong to its parent again."""
    for m in g._children:
        m.parent = g.parent
    del h.groups[g.name]


def free_name(h: Hierarchy, name: str) -> str:
    """``name``, or ``name (2)``, ``name (3)`` ... if a group or op has it already."""
    candidate, n = name, 2
    while candidate in h.groups or candidate in h.ops:
        candidate, n = f"{name} ({n})", n + 1
    return candidate


class Meetings:
    """Where every model edge meets: the lowest group holding both its ends.

    Each (source op, destination op) pair is listed once, its ends (the ops themselves: a name
    would cost a lookup per end at every reader) in ``src`` and ``dst``, in model order (source op,
    then its destinations in adjacency order: the order edges are aggregated in), and each group
    holds the indices of the pairs meeting in it, ascending, in an array of 4-byte ints (``at``; a
    list would hold a pointer and an int object per pair, and a tuple per pair cost 56 bytes more:
    about 90 MB at a million ops).  A group's aggregated edges and its children's DAG are then read
    from the edges meeting in it, in time proportional to those, not to everything below it (the
    root of a 65,000-op graph has a few dozen).  Regrouping keeps it true cheaply (:meth:`move`,
    :meth:`settle`). ``closing`` holds the pairs a DAG of children leaves out: self-loops, and
    pairs whose every edge closes a loop.  ``keys`` holds each pair's edges as the model's
    adjacency had them (input slot -> edge data): their slots, kinds and loop marks, which nothing
    changes once the model is built (shape inference replaces an edge's data to add a mark of its
    own, the rest copied).
    """

    __slots__ = ("at", "closing", "dst", "keys", "src")

    def __init__(self, h: Hierarchy) -> None:
        fix_depths(h.root)  # the walk up to the lowest common group compares depths
        ops, succ = h.ops, h.model.g.succ
        src: list[OpNode] = []
        dst: list[OpNode] = []
        keys: list[dict[int, dict[str, Any]]] = []
        closing: set[int] = set()
        at: dict[Group, array[int]] = defaultdict(_indices)
        # Each source op read beside its successors: build_scopes makes the ops' table from
        # the node dicts, whose order succ shares (insert_node adds a node to both at once).
        for (u, nbrs), a0 in zip(succ.items(), ops.values(), strict=True):
            pa = a0.parent
            for v, keydict in nbrs.items():
                i = len(src)
                b0 = ops[v]
                src.append(a0)
                dst.append(b0)
                keys.append(keydict)
                for d in keydict.values():
                    if not d["back"]:
                        break
                else:
                    closing.add(i)  # every edge u -> v closes a loop
                pb = b0.parent
                if pa is pb:
                    meet = pa
                elif pa.parent is pb.parent:  # type: ignore[union-attr]
                    meet = pa.parent  # type: ignore[union-attr]  # one layer to the next
                else:
                    meet = lowest_children(a0, b0)[0].parent
                if u == v:
                    closing.add(i)
                at[meet].append(i)  # type: ignore[index]
        self.src, self.dst, self.keys, self.closing, self.at = src, dst, keys, closing, at

    def of(self, group: Group) -> Sequence[int]:
        """The pairs meeting in ``group``."""
        return self.at.get(group, ())

    def move(self, old: Group, new: Group) -> None:
        """The edges meeting in ``old`` (dissolved into ``new``) meet in ``new`` now."""
        moved = self.at.pop(old, None)
        if moved:
            self._add(new, moved)

    def settle(self, h: Hierarchy, group: Group, made: list[Group]) -> None:
        """New groups were made under ``group``: edges with both ends in one of them meet
        there."""
        inside = {id(g) for g in made}
        kept = _indices()
        into: dict[Group, array[int]] = defaultdict(_indices)
        src, dst, children = self.src, self.dst, group._children
        slot = child_slots(group, children)
        for i in self.at.get(group, ()):
            a = slot(src[i])
            if id(children[a]) in inside and a == slot(dst[i]):
                into[children[a]].append(i)  # type: ignore[index]
            else:
                kept.append(i)
        self.at[group] = kept
        for g, indices in into.items():
            self._add(g, indices)

    def _add(self, group: Group, indices: array[int]) -> None:
        """Add ascending indices to a group's, keeping them ascending (a merge of two runs)."""
        mine = self.at[group]
        if not mine or mine[-1] < indices[0]:
            mine.extend(indices)
        else:
            self.at[group] = array("i", sorted(mine + indices))


def _indices() -> array[int]:
    """An empty array of pair indices (see :class:`Meetings`)."""
    return array("i")


def child_slots(group: Group, children: list[Member]) -> Callable[[Member], int]:
    """A function from a member below ``group`` to the index of the child holding it.

    Remembered per parent group, so each group below is climbed from once, not once per edge
    (a flat optimizer group's 40,000 ops share a few hundred parents)."""
    index = {id(c): i for i, c in enumerate(children)}
    above: dict[int, int] = {}

    def slot(m: Member) -> int:
        p = m.parent
        if p is group:
            return index[id(m)]
        found = above.get(id(p))
        if found is None:
            found = above[id(p)] = index[id(child_of(group, p))]  # type: ignore[arg-type]
        return found

    return slot
