"""The scope tree: ops grouped by name scope, function body, shared name prefix and series.

An op ``a/b/c`` lives in group ``a/b``.  An op whose name is also a scope (``a/b`` beside
``a/b/...``) stays a distinct leaf inside that group, as TensorBoard draws it.  Function bodies
opened by :mod:`graphviz_tb.functions` become groups of kind ``function``.  Flat Keras 3 names
(every layer directly under the model) are split into virtual ``prefix`` groups by shared name
prefix, and runs of numbered siblings become ``series`` groups.

Every edge of the op graph is aggregated exactly once, at the lowest group containing both ends,
into an :class:`AggEdge` between two children of that group.  That is what a per-group layout
needs: a group's own picture is its children plus the edges between them.
"""

from __future__ import annotations

import re
import zlib
from collections import defaultdict
from operator import attrgetter
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from ._gc import paused_gc
from .blocks import (
    ChildGraph,
    blocks,
    convex_chunks,
    cyclic_parts,
    has_sequence,
    label_groups,
    strong_components,
    topological_order,
)
from .model import CONTROL, DATA, REF
from .options import RenderOptions

if TYPE_CHECKING:
    from collections.abc import Callable, Container, Iterable, Iterator

    from .model import GraphModel

__all__ = [
    "AggEdge",
    "Group",
    "Hierarchy",
    "Member",
    "OpNode",
    "TemplateSource",
    "TrainingParts",
    "build_hierarchy",
    "is_bookkeeping",
    "is_section",
    "scope_path",
]

#: A group with more children than this is split by shared name prefix (Keras 3 flat names).
PREFIX_SPLIT_THRESHOLD = 12
#: A group with more children than this is split into sections of ``SECTION_SIZE``.
SECTION_LIMIT = 400
SECTION_SIZE = 200
_NUMBERED = re.compile(r"^(.*?)(_?)(\d+)$")
_DIGITS = re.compile(r"(\d+)")
_NAME = attrgetter("name")


class TemplateSource(Protocol):
    """What the tree needs from the next stage, :mod:`graphviz_tb.structure`: structural
    templates, to fold numbered sibling scopes into a series only when they are alike."""

    def of(self, group: Group) -> int:
        """The group's template id (equal ids, equal structure)."""

    def classes(self, groups: list[Group]) -> list[list[Group]]:
        """``groups`` partitioned by structure."""

    def complete(self) -> None:
        """Decide every group's template."""


class Member:
    """Anything drawn: an op or a group.  ``name`` is the full name; identity is the object.

    Plain classes with slots, not dataclasses: a 65,000-op graph makes about 100,000 members,
    and their construction was a tenth of the default render.
    """

    __slots__ = ("depth", "label", "name", "parent")

    def __init__(self, name: str, parent: Group | None = None, depth: int = 0) -> None:
        self.name = name
        self.parent = parent
        self.depth = depth
        #: The short name shown in the picture: the last scope component.
        self.label = _label_of(name)

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
        self.op = op
        self.role = role


class AggEdge:
    """Edges between two children of one group, counted by kind.

    ``edges`` lists the model edges ``(src, dst, key)`` it stands for, so tracing and shape
    labels can reach the real tensors; ``back`` counts edges that close cycles.  (A plain class
    with slots: a 65,000-op graph makes about 100,000 of these.)
    """

    __slots__ = ("back", "counts", "dst", "edges", "src")

    def __init__(self, src: Member, dst: Member, counts: dict[str, int] | None = None,
                 back: int = 0, edges: list[tuple[str, str, int]] | None = None) -> None:
        self.src, self.dst = src, dst
        self.counts = counts if counts is not None else {DATA: 0, CONTROL: 0, REF: 0}
        self.back = back
        self.edges = edges if edges is not None else []

    @property
    def kind(self) -> str:
        """The style to draw: data wins over ref, ref over control."""
        if self.counts[DATA]:
            return DATA
        return REF if self.counts[REF] else CONTROL

    @property
    def total(self) -> int:
        return sum(self.counts.values())


class Group(Member):
    """A collapsible group: ``root``, ``scope``, ``function``, ``prefix``, ``series`` or
    ``section`` (a slice of an oversized group).

    ``edges`` and ``template`` are computed on first use (see :class:`Hierarchy`): a picture
    needs them only for the groups it draws.
    """

    __slots__ = ("_children", "_deep", "_edges", "_settled", "_template", "function", "kind",
                 "op_count", "op_hash", "owner")
    is_group = True

    def __init__(self, name: str, owner: Hierarchy, parent: Group | None = None,
                 depth: int = 0, kind: str = "scope", settled: bool = False) -> None:
        super().__init__(name, parent, depth)
        self.owner = owner
        self.kind = kind
        self._children: list[Member] = []
        #: Whether this group's own scope series are made (``_settled``), and those of every
        #: group below it too (``_deep``); see :meth:`Hierarchy.settle`.
        self._settled = self._deep = settled
        self.op_count = 0
        #: The sum of the hashes of the op types below: equal structure, equal sum.
        self.op_hash = 0
        self.function: str | None = None
        self._edges: dict[tuple[Member, Member], AggEdge] | None = None
        #: Structural template id, set by :class:`~graphviz_tb.structure.Templates`.
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

    @property
    def template(self) -> int:
        """The structural template: equal ids mean equal structure (op types and wiring,
        recursively)."""
        if self._template is None:
            self.owner.structure().of(self)
        return self._template  # type: ignore[return-value]

    def walk(self) -> Iterator[Member]:
        """Every member below this group, parents before children, iteratively (deep trees)."""
        self.owner.settle(self)
        stack: list[Member] = list(reversed(self._children))
        while stack:
            member = stack.pop()
            yield member
            if isinstance(member, Group):
                stack.extend(reversed(member._children))


class Hierarchy:
    """The tree of groups over a :class:`~graphviz_tb.model.GraphModel`.

    Built in two steps.  Eagerly: every op placed, every scope, prefix, op series and section
    group made.  On demand: scope series (numbered sibling groups folded into one when their
    structural templates agree), which need templates and so cost as much as the rest of the
    tree together; a group's own series are made when its ``children`` are first read, and
    :meth:`settle` makes them for a whole subtree.  Aggregated edges and templates are also
    computed when first asked for.  The default view of NASNet-Large reads the children of one
    group of 35,000 and the edges of the same one, which is what brings it within a few times
    the protobuf parse.  :meth:`complete` computes everything, for the interactive viewer.

    Settling in any order gives the same tree: a group's series depend only on its children's
    subtrees, which are settled first, and change nothing outside its own subtree.
    """

    def __init__(self, model: GraphModel, series_min: int | None = None,
                 templates: Callable[[Hierarchy], TemplateSource] | None = None) -> None:
        self.model = model
        #: The shortest scope series to make; None when series are off.
        self.series_min = series_min
        #: The group under which each series was made, in order: the subtrees of it and of its
        #: ancestors changed then (and no others did).
        self.series_made: list[Group] = []
        self.root = Group("", self, kind="root")
        #: Every group by full name; scope series appear here once made (see :meth:`settle`).
        self.groups: dict[str, Group] = {}
        self.ops: dict[str, OpNode] = {}
        #: Structural templates, from the next stage (see :func:`build_hierarchy`).
        self.templates = templates(self) if templates is not None else None
        #: The blocks each group was cut into (see :func:`_find_blocks`), in dataflow order.
        self.block_order: dict[Group, list[Group]] = {}
        #: Groups holding a TF2 training step -> its parts (see :func:`_adopt_loose_ops`):
        #: the first picture opens the model and leaves the gradients and optimizer closed.
        self.training: dict[Group, TrainingParts] = {}
        self._meet: Meetings | None = None
        self._order: dict[str, int] | None = None

    def meetings(self) -> Meetings:
        """Where every model edge meets, kept true as the tree is regrouped (see
        :class:`Meetings`); made when the eager regrouping starts, and read by settling and
        aggregation after."""
        if self._meet is None:
            self._meet = Meetings(self)
        return self._meet

    def structure(self) -> TemplateSource:
        """The templates of this tree (the hierarchy was built with them, or this raises)."""
        if self.templates is None:
            raise RuntimeError("this hierarchy was built without structural templates; build "
                               "it with graphviz_tb.structure.structured_hierarchy")
        return self.templates

    def lookup(self, name: str) -> Member | None:
        """The group of that full name, else the op of that name."""
        return self.groups.get(name) or self.ops.get(name)

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
        """Make the scope series of every group in ``top``'s subtree (default: the tree)."""
        top = top or self.root
        if top._deep:
            return
        preorder: list[Group] = []
        stack = [top]
        while stack:
            g = stack.pop()
            preorder.append(g)
            stack.extend(c for c in g._children if isinstance(c, Group) and not c._deep)
        for g in reversed(preorder):  # every group after all the groups below it
            if not g._settled:
                self.settle_level(g)
            g._deep = True

    def settle_level(self, group: Group) -> None:
        """Make one group's scope series: runs of at least ``series_min`` numbered sibling
        groups with one base name, one op count and one structure, and runs of as many alike
        blocks in a row; a series that would sit on a loop of the picture is not made.

        Only those candidates are compared (:meth:`~graphviz_tb.structure.Templates.classes`,
        which seldom needs templates); the rest of the children are left as they are.
        """
        group._settled = True
        minimum = self.series_min
        children = group._children
        if minimum is None or self.templates is None or len(children) < minimum:
            return
        made = self._block_series(group, minimum)
        named: dict[tuple[str, int], list[Group]] = defaultdict(list)
        for m in children:
            if isinstance(m, Group) and m.kind != "series":
                named[(_numbered(m.label)[0], m.op_count)].append(m)
        candidates: dict[tuple[str, tuple[int, int]], list[Member]] = {}
        for (base, count), members in named.items():
            if len(members) >= minimum:
                for i, same in enumerate(self.templates.classes(members)):
                    if len(same) >= minimum:
                        candidates[(base, (count, i))] = list(same)
        scope_series = bool(candidates) and _make_series(self, group, candidates, minimum)
        if not (made or scope_series):
            return
        self.meetings().settle(self, group, [c for c in group._children if isinstance(
            c, Group) and c.kind == "series"])
        if scope_series:
            _drop_looping_series(self, group)
        for series in group._children:
            if isinstance(series, Group) and series.kind == "series" and not series.op_count:
                inside = series._children
                series.op_count = sum(c.op_count for c in inside)  # type: ignore[attr-defined]
                series.op_hash = sum(c.op_hash for c in inside)  # type: ignore[attr-defined]
                _fix_depths(series)  # its members moved one level down
        group._children = _ordered(group._children)

    def _block_series(self, group: Group, minimum: int) -> bool:
        """Fold runs of at least ``minimum`` alike blocks in a row (in dataflow order, so the
        series is convex) into series, such as NASNet's normal cells between reductions."""
        order = [b for b in self.block_order.get(group, ()) if b.parent is group]
        if len(order) < minimum:
            return False
        # Classes, not templates: alike blocks built by the same code are told apart by their
        # forms, and deciding the templates of NASNet-Large's 19 cells cost a tenth of a second.
        kind: dict[Group, int] = {}
        for i, same in enumerate(self.structure().classes(order)):
            kind.update(dict.fromkeys(same, i))
        runs: list[list[Group]] = []
        for b in order:
            if runs and kind[runs[-1][-1]] == kind[b]:
                runs[-1].append(b)
            else:
                runs.append([b])
        made = False
        for run in runs:
            if len(run) < minimum:
                continue
            first = order.index(run[0]) + 1
            label = _series_label([b.label for b in run]) or \
                f"block[{first}-{first + len(run) - 1}]"
            full = _free_name(self, f"{group.name}/{label}" if group.name else label)
            series = Group(full, self, group, group.depth + 1, kind="series", settled=True)
            series._deep = all(b._deep for b in run)
            gone = set(run)
            group._children = [c for c in group._children if c not in gone]
            _reparent(list(run), series)
            group._children.append(series)
            self.groups[full] = series
            self.series_made.append(group)
            made = True
        return made

    def aggregate(self, group: Group) -> None:
        """Fill one group's ``edges``: every model edge between two different children.

        Read from the edges meeting in the group (see :class:`Meetings`), in model order
        (source op, then destination, then input slot), the order :func:`aggregate_edges`
        uses, so a group's edges do not depend on which of the two filled them.
        """
        group.children  # noqa: B018  (its series made first: they change what meets in it)
        meet = self.meetings()
        ops, succ, pairs = self.ops, self.model.g._succ, meet.pairs
        edges: dict[tuple[Member, Member], AggEdge] = {}
        for i in meet.of(group):
            u, v = pairs[i]
            a, b = _child_of(group, ops[u]), _child_of(group, ops[v])
            if b is a and (u != v or isinstance(a, Group)):
                continue  # within one child (only an op's self-loop stays)
            _count_into(edges, a, b, u, v, succ[u][v])
        group._edges = edges

    def order(self) -> dict[str, int]:
        """Each op's position in the model (edge aggregation visits ops in this order)."""
        if self._order is None:
            self._order = {name: i for i, name in enumerate(self.model.g._succ)}
        return self._order

    def complete(self) -> None:
        """Aggregate every edge and assign every template (the viewer ships them all)."""
        aggregate_edges(self)
        self.structure().complete()


def _count_into(edges: dict[tuple[Member, Member], AggEdge], a: Member, b: Member, u: str,
                v: str, keydict: dict[int, dict[str, Any]]) -> None:
    """Add the model edges ``u -> v`` (one per input slot) to the aggregate ``a -> b``."""
    agg = edges.get((a, b))
    if agg is None:
        agg = edges[(a, b)] = AggEdge(a, b)
    counts, members = agg.counts, agg.edges
    for k, d in keydict.items():
        counts[d["kind"]] += 1
        agg.back += d["back"]
        members.append((u, v, k))


def _label_of(name: str) -> str:
    return name.rstrip("/").rsplit("/", 1)[-1] or name


def scope_path(name: str) -> list[str]:
    """Scope path of a name; empty components (``a//b``, a trailing ``/``) are dropped."""
    if "//" not in name and name[:1] != "/" and name[-1:] != "/":
        return name.split("/")
    parts = [p for p in name.split("/") if p]
    return parts or [name]


def _ensure_group(h: Hierarchy, path: str) -> Group:
    """The group for a clean scope path (no empty components), creating it and its ancestors.

    The search starts from the deepest ancestor that already exists, not from the root: ops
    usually arrive beside or just below a known scope, and walking down from the root re-hashed
    every ancestor's full name, which made a scope nested 3,000 deep cost seconds (quadratic in
    the depth, times the name length).
    """
    groups = h.groups
    cut = len(path)
    missing: list[int] = []  # where the names of the groups to create end in ``path``
    while cut > 0 and path[:cut] not in groups:
        missing.append(cut)
        cut = path.rfind("/", 0, cut)
    node = groups[path[:cut]] if cut > 0 else h.root
    for end in reversed(missing):
        name = path[:end]
        child = groups[name] = Group(name, h, node, node.depth + 1)
        node._children.append(child)
        node = child
    return node


def _build_scopes(h: Hierarchy) -> None:
    placed: list[tuple[OpNode, str]] = []
    callers: list[tuple[str, list[str]]] = []
    by_scope: dict[str, Group] = {"": h.root}
    ops = h.ops
    for name, data in h.model.g._node.items():  # the node dict itself: no view overhead
        if "//" not in name and name[:1] != "/" and name[-1:] != "/":
            scope, _, label = name.rpartition("/")
            path = name
        else:  # empty components (``a//b``, a trailing ``/``) are dropped
            parts = scope_path(name)
            scope, path = "/".join(parts[:-1]), "/".join(parts)
            label = _label_of(name)
        parent = by_scope.get(scope)
        if parent is None:
            parent = by_scope[scope] = _ensure_group(h, scope)
        op = ops[name] = OpNode(name, parent, label, data["op"], data["role"])
        placed.append((op, path))
        if "calls" in data:
            callers.append((path, data["calls"]))
    groups = h.groups
    for op, path in placed:
        # An op whose name is also a scope becomes a leaf inside that scope.
        home = groups.get(path)
        if home is not None:
            op.parent = home
        op.parent._children.append(op)  # type: ignore[union-attr]
    for prefix, fname in h.model.function_groups.items():
        group = groups.get("/".join(scope_path(prefix)))
        if group is not None:
            group.kind, group.function = "function", fname
    for path, calls in callers:
        group = groups.get(path) if calls else None
        if group is not None and group.kind != "function":
            group.kind, group.function = "function", ", ".join(dict.fromkeys(calls))


def _ordered(members: list[Member]) -> list[Member]:
    """Deterministic child order: groups first, then ops, each by name."""
    groups = [m for m in members if isinstance(m, Group)]
    ops = [m for m in members if not isinstance(m, Group)]
    groups.sort(key=_NAME)
    ops.sort(key=_NAME)
    return groups + ops


def _finish(h: Hierarchy) -> None:
    """Once the eager regrouping is done, in one walk of the tree: every member's depth and
    place among its siblings (see :func:`_ordered`; sections keep their numeric order), and
    each group's op count and the sum of the hashes of the op types below it (a cheap
    invariant of its structure that scope series leave alone; see :mod:`.structure`)."""
    preorder: list[Group] = []
    stack = [h.root]
    while stack:
        g = stack.pop()
        preorder.append(g)
        children = g._children
        if len(children) > 1 and not is_section(children[0]):  # sections are made in order
            g._children = children = _ordered(children)
        depth = g.depth + 1
        for m in children:
            m.depth = depth
            if isinstance(m, Group):
                stack.append(m)
    for g in reversed(preorder):  # children before parents
        count = total = 0
        for c in g._children:
            if isinstance(c, Group):
                count += c.op_count
                total += c.op_hash
            else:
                count += c.role == "op"  # type: ignore[attr-defined]
                total += hash(c.op)  # type: ignore[attr-defined]
        g.op_count, g.op_hash = count, total


def is_section(m: Member) -> bool:
    """Is this a section: a numbered slice of a group too big for one layout?"""
    return isinstance(m, Group) and m.kind == "section"


def _reparent(members: list[Member], new: Group) -> None:
    """Move members into a new group (depths are fixed once, after all regrouping)."""
    for m in members:
        m.parent = new
    new._children = list(members)


def _fix_depths(group: Group) -> None:
    stack = [group]
    while stack:
        g = stack.pop()
        depth = g.depth + 1
        for m in g._children:
            m.depth = depth
            if isinstance(m, Group):
                stack.append(m)


def _op_names(group: Group) -> list[str]:
    """The names of every op below a group."""
    return [m.name for m in _op_members(group)]


def _op_members(group: Group) -> list[OpNode]:
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


def _first_token(label: str, prefix: str) -> str | None:
    """``prefix`` and the next ``_``-separated token of ``label``, if it has one more token
    after it.  An empty token (``_x``, ``a__b``) is none: it named a group ``""``, the root's
    name, or one ending in ``_``."""
    rest = label[len(prefix):] if label.startswith(prefix) else None
    if not rest or "_" not in rest:
        return None
    token = rest.split("_", 1)[0]
    return prefix + token if token else None


def _split_by_prefix(h: Hierarchy, group: Group, prefix: str = "") -> None:
    """Form virtual groups of children sharing a name prefix, level by level (iteratively)."""
    work = [(group, prefix)]
    while work:
        grp, pre = work.pop()
        if len(grp._children) <= PREFIX_SPLIT_THRESHOLD:
            continue
        base = grp.name if grp.kind != "prefix" else grp.parent.name  # type: ignore[union-attr]
        taken = {m.label for m in grp._children}
        buckets: dict[str, list[Member]] = defaultdict(list)
        for m in grp._children:
            key = _first_token(m.label, pre)
            if key is not None:
                buckets[key].append(m)
        keys = [k for k, ms in buckets.items() if len(ms) >= 2 and k not in taken]
        if len(keys) == 1 and len(buckets[keys[0]]) == len(grp._children):
            work.append((grp, keys[0] + "_"))  # all share it: look one token further
            continue
        if not keys:
            continue
        moved = {m for k in keys for m in buckets[k]}  # a set: list membership was quadratic
        keep = [m for m in grp._children if m not in moved]
        new_groups = []
        for key in sorted(keys):
            full = f"{base}/{key}" if base else key
            if full in h.groups or full in h.ops:
                keep.extend(buckets[key])
                continue
            virt = Group(full, h, grp, grp.depth + 1, kind="prefix")
            _reparent(buckets[key], virt)
            h.groups[full] = virt
            new_groups.append(virt)
            work.append((virt, key + "_"))
        grp._children = new_groups + keep


def _prefix_groups(h: Hierarchy) -> None:
    for group in list(h._raw_groups()):
        if group.kind != "prefix" and len(group._children) > PREFIX_SPLIT_THRESHOLD:
            _split_by_prefix(h, group)


def _numbered(label: str) -> tuple[str, int]:
    """``add_3`` -> (add, 3), ``block12`` -> (block, 12), ``add`` -> (add, 0)."""
    if not label[-1:].isdecimal():  # most labels: no regex (``\d`` is exactly isdecimal)
        return label, 0
    m = _NUMBERED.match(label)
    return (m.group(1), int(m.group(3))) if m and m.group(1) else (label, 0)


def _separator(labels: list[str]) -> str:
    """``_`` when the numbered names use one (``add_1``), else nothing (``block2``)."""
    return "_" if any((m := _NUMBERED.match(x)) and m.group(2) for x in labels) else ""


def _runs(numbers: list[tuple[int, Member]], minimum: int) -> list[list[tuple[int, Member]]]:
    """Split sorted (number, member) pairs into runs of consecutive numbers, long enough."""
    runs: list[list[tuple[int, Member]]] = []
    current: list[tuple[int, Member]] = []
    for n, m in numbers:
        if current and n != current[-1][0] + 1:
            runs.append(current)
            current = []
        current.append((n, m))
    runs.append(current)
    return [r for r in runs if len(r) >= minimum]


def _make_series(h: Hierarchy, parent: Group, clusters: dict[Any, list], minimum: int) -> bool:
    made = False
    for (base, _), members in sorted(clusters.items(), key=lambda kv: str(kv[0])):
        numbered = sorted(((_numbered(m.label)[1], m) for m in members), key=lambda t: t[0])
        if len({n for n, _ in numbered}) != len(numbered):
            continue
        sep = _separator([m.label for m in members])
        for run in _runs(numbered, minimum):
            lo, hi = run[0][0], run[-1][0]
            label = f"{base}{sep}[{lo}-{hi}]"
            full = f"{parent.name}/{label}" if parent.name else label
            if full in h.groups:
                continue
            series = Group(full, h, parent, parent.depth + 1, kind="series", settled=True)
            ms = [m for _, m in run]
            # Members compared by name (not template) may still have series of their own due.
            series._deep = all(m._deep for m in ms if isinstance(m, Group))
            gone = set(ms)
            parent._children = [c for c in parent._children if c not in gone]
            _reparent(ms, series)
            parent._children.append(series)
            h.groups[full] = series
            h.series_made.append(parent)
            made = True
    return made


def _drop_looping_series(h: Hierarchy, group: Group) -> None:
    """Dissolve the scope series just made in ``group`` that would sit on a loop of its
    picture (members that feed each other through siblings outside the series)."""
    kids = group._children
    part = [i if isinstance(c, Group) and c.kind == "series" else -1
            for i, c in enumerate(kids)]
    meet = h.meetings()
    bad = cyclic_parts(_local_graph(h, group, meet)[0], part)
    if not bad:
        return
    kept: list[Member] = []
    for i, c in enumerate(kids):
        if i in bad:
            _dissolve(h, c)  # type: ignore[arg-type]
            meet.move(c, group)  # type: ignore[arg-type]
            kept.extend(c._children)  # type: ignore[attr-defined]
        else:
            kept.append(c)
    group._children = kept


def _series_label(labels: list[str]) -> str | None:
    """One label for a run of alike names that differ only in their numbers:
    ``… normal_concat_0_1`` ... ``… normal_concat_5_1`` -> ``… normal_concat_[0-5]_1``.
    None when the names differ otherwise."""
    split = [_DIGITS.split(x) for x in labels]
    if len({len(p) for p in split}) != 1 or any(p[0::2] != split[0][0::2] for p in split):
        return None
    out = list(split[0])
    for k in range(1, len(out), 2):
        values = [int(p[k]) for p in split]
        if len(set(values)) > 1:
            out[k] = f"[{min(values)}-{max(values)}]"
    return "".join(out)


def _op_series(h: Hierarchy, minimum: int) -> None:
    for group in list(h._raw_groups()):
        children = group._children
        # A series has at least ``minimum - 1`` numbered names (one may be unnumbered, as
        # number 0): most groups have fewer, and are passed over without grouping names.
        if len(children) < minimum or sum(
                m.label[-1:].isdecimal() for m in children) < minimum - 1:
            continue
        clusters: dict[tuple[str, str], list[Member]] = defaultdict(list)
        for m in group._children:
            if isinstance(m, OpNode) and m.role == "op":
                base, _ = _numbered(m.label)
                clusters[(base, m.op)].append(m)
        candidates = {k: v for k, v in clusters.items() if len(v) >= minimum}
        if candidates:
            _make_series(h, group, candidates, minimum)


def _lowest_children(a: Member, b: Member) -> tuple[Member, Member]:
    """The two children of the lowest common group of ``a`` and ``b``."""
    while a.depth > b.depth:
        a = a.parent  # type: ignore[assignment]
    while b.depth > a.depth:
        b = b.parent  # type: ignore[assignment]
    while a.parent is not b.parent:
        a, b = a.parent, b.parent  # type: ignore[assignment]
    return a, b


def aggregate_edges(h: Hierarchy, top: Group | None = None) -> None:
    """Fill the ``edges`` of every group (or of every group in ``top``'s subtree) in one pass:
    each model edge goes to its lowest common group (see module docstring).  Groups that
    already have theirs keep them (the same content, from :meth:`Hierarchy.aggregate`)."""
    ops = h.ops
    if top is None or top is h.root:
        top = h.root
        names: Iterable[str] = h.model.g._succ
        inside: Container[str] = ops
    else:
        inside = set(_op_names(top))
        names = sorted(inside, key=h.order().__getitem__)
    found: dict[Group, dict[tuple[Member, Member], AggEdge]] = {top: {}}
    found.update((m, {}) for m in top.walk() if isinstance(m, Group))
    succ = h.model.g._succ
    for u in names:  # per (u, v) pair: one walk up the tree
        a0 = ops[u]
        for v, keydict in succ[u].items():
            if v not in inside:
                continue
            a: Member
            b: Member
            if a0.parent is ops[v].parent or u == v:
                a, b = a0, ops[v]
            else:
                a, b = _lowest_children(a0, ops[v])
            _count_into(found[a.parent], a, b, u, v, keydict)  # type: ignore[index]
    for group, edges in found.items():
        if group._edges is None:
            group._edges = edges


def _natural(m: Member) -> tuple:
    """Sort key: groups before ops, names with their numbers compared as numbers."""
    parts = _DIGITS.split(m.name)
    parts[1::2] = [int(p) for p in parts[1::2]]
    return (not isinstance(m, Group), parts)


def _sections(h: Hierarchy, meet: Meetings, known: LocalGraphs) -> None:
    """Split any group with more than ``SECTION_LIMIT`` children into sections of
    ``SECTION_SIZE``, so that opening it never hands Graphviz one flat layout of thousands of
    nodes (20,000 flat children take minutes; 100 sections of 200 take seconds).

    Members are dealt out in dataflow order (a topological order of the group's children,
    natural name order among the ready, so ``add_150`` sits with ``add_0`` when nothing orders
    them), which keeps every section convex: a path leaving a section only reaches later
    ones, so the sections drawn never form a loop.  Children on a common cycle (the user's
    own scopes need not be convex) go into one section together (see
    :func:`~graphviz_tb.blocks.convex_chunks`); when that is nearly all of them (NASNet's
    gradients and the 606 ``AddN`` summing them), the group is left whole.
    """
    for group in list(h._raw_groups()):
        if len(group._children) <= SECTION_LIMIT:
            continue
        cached = known.get(group)
        graph, children = cached if cached and cached[1] is group._children else \
            _local_graph(h, group, meet)
        chunks = convex_chunks(graph, [_natural(c) for c in children], SECTION_SIZE)
        if len(chunks) == 1:  # one cycle through most children: sections would hide them
            continue
        sections: list[Group] = []
        start = 0
        for chunk in chunks:
            members = [children[i] for i in chunk]
            label = f"[{start + 1}–{start + len(members)} of {len(children)}]"
            start += len(members)
            full = f"{group.name}/{label}" if group.name else label
            section = Group(full, h, group, kind="section")
            _reparent(members, section)
            h.groups[full] = section
            sections.append(section)
        group._children = [*sections]
        meet.settle(h, group, sections)


# --------------------------------------------------------------------------- dataflow

#: Kinds of group the hierarchy invents (the user's scopes and function bodies are not).
INVENTED = frozenset({"prefix", "series", "section", "block"})
#: A group with at least this many children that are not invented groups is cut into blocks.
BLOCK_MIN_CHILDREN = 16
#: Ops whose outputs are parameters, not the data a model transforms.
_PARAMETER_OPS = frozenset({"Const", "HostConst", "VarHandleOp", "VariableV2", "Variable",
                            "ReadVariableOp", "VarIsInitializedOp"})
#: Ops where data enters a graph.
_DATA_SOURCE_OPS = frozenset({"Placeholder", "PlaceholderV2", "PlaceholderWithDefault",
                              "IteratorGetNext", "IteratorGetNextSync", "_Arg"})


# ------------------------------------------------------------------ TF2 training steps

#: The scope TF2 puts a ``GradientTape``'s gradients under (``gradient_tape/<model>/...``).
GRADIENT_SCOPE = "gradient_tape"
#: Ops whose output leaves the graph (the step's results): they stay where the user sees them.
_OUTPUT_OPS = frozenset({"Identity", "IdentityN", "_Retval", "NoOp"})
#: An op-named scope this small (``sub_7`` holding ``sub_7/x``: an op and its constants) is as
#: loose as an op of its own.
_LOOSE_SCOPE_OPS = 4
#: Names that are bookkeeping by convention (``init``, ``save``, summaries ...), whatever
#: their degree: drawn aside (:mod:`graphviz_tb.auxiliary`), never opened by themselves, never
#: given loose ops.
_CONVENTIONAL = re.compile(
    r"^(init(_\d+)?|save(_\d+)?|summaries|MergeSummary(_\d+)?|global_step|"
    r"report_uninitialized_variables|restore_all|saver_filename|train_op|group_deps)$"
)


def is_bookkeeping(label: str) -> bool:
    """Is this a name conventional for bookkeeping (``init``, ``save``, ``summaries`` ...)?"""
    return _CONVENTIONAL.match(label) is not None


class TrainingParts(NamedTuple):
    """What a reader sees in a TF2 training step: the model, its gradients (``gradient_tape``,
    mirroring the model) and the optimizer's updates."""

    gradients: Group
    optimizer: Group
    model: Group | None


def _loose(h: Hierarchy, m: Member) -> bool:
    """Is this child an op with no scope of its own, a tiny scope named after its op, or a
    function call (TF2 calls the gradient of a function through one at the top level)?"""
    if isinstance(m, OpNode):
        return True
    if not isinstance(m, Group) or m.name not in h.ops:
        return False
    return m.kind == "function" or (m.kind == "scope" and len(
        m._children) <= _LOOSE_SCOPE_OPS and not any(isinstance(c, Group) for c in m._children))


def _unit_ops(m: Member) -> list[OpNode]:
    return [m] if isinstance(m, OpNode) else _op_members(m)  # type: ignore[arg-type, list-item]


def _anchored(h: Hierarchy, m: Member) -> bool:
    """Does this loose child hold a graph input or a result (which stay in sight)?"""
    nodes, succ = h.model.g._node, h.model.g._succ
    # A call's body has arguments and results of its own; the call itself is what counts.
    for op in [h.ops[m.name]] if isinstance(m, Group) and m.kind == "function" \
            else _unit_ops(m):
        kind = nodes[op.name]["op"]
        if kind in _DATA_SOURCE_OPS and not _is_parameter(h, op.name, 0):
            return True
        if kind in _OUTPUT_OPS and not succ[op.name]:
            return True
    return False


def _captured(h: Hierarchy, m: Member) -> bool:
    """Is this a captured variable as TF2 names it among a function's arguments
    (``*_readvariableop_resource``)?  (A graph's own capture, ``…/ReadVariableOp/resource``,
    sits inside its reader's scope already.)"""
    return isinstance(m, OpNode) and m.label.endswith("_resource") \
        and m.op in _DATA_SOURCE_OPS and _is_parameter(h, m.name, 0)


def _common(a: Group, b: Group) -> Group:
    """The lowest group holding both."""
    while a.depth > b.depth:
        a = a.parent  # type: ignore[assignment]
    while b.depth > a.depth:
        b = b.parent  # type: ignore[assignment]
    while a is not b:
        a, b = a.parent, b.parent  # type: ignore[assignment]
    return a


def _adopt_loose_ops(h: Hierarchy) -> None:
    """Ops with no scope of their own that serve a group are drawn with it.

    TF2 names some ops of a traced training step at the top level: the gradient sums
    (``AddN_k``, one per tensor with several consumers: hundreds in a ResNet), ops of custom
    gradients (EfficientNet's swish), captured variables (``*_readvariableop_resource``) and
    the optimizer's slot initialisers (``zeros_N``).  Left there they are a fan of hundreds of
    loose boxes wired across the picture.  In a group (the root, a function body, one graph
    of a logdir) holding a ``gradient_tape`` scope, every loose op that is not an input or a
    result joins a neighbouring group; elsewhere only captured variables do (see
    :func:`_adopt_in`).
    """
    for container in [h.root, *list(h.groups.values())]:
        kids = container._children
        grads = next((c for c in kids if isinstance(c, Group) and c.label == GRADIENT_SCOPE
                      and not _loose(h, c)), None)
        if grads is None and not any(_captured(h, c) for c in kids):
            continue
        _adopt_in(h, container, grads)


def _adopt_in(h: Hierarchy, container: Group, grads: Group | None) -> None:
    """Move the loose children of ``container`` into the groups they serve.

    The container's children are ranked in dataflow order (the condensation of their DAG).
    In that order, a loose child whose inputs all come from groups joins the latest of them;
    then, in reverse order, one with no inputs joins the earliest group it feeds, and one
    wired to nothing joins the optimizer.  Every edge between children then still runs from
    an earlier rank to a later one, so no loop appears that was not there (the user's own
    scopes may hold loops already).  Inside its group, a child goes to the lowest subgroup
    holding the ops it is wired to.
    """
    kids = container._children
    where = _where(kids)
    succ = h.model.g._succ
    edges: set[tuple[int, int]] = set()
    from_grads: dict[int, int] = defaultdict(int)
    g_index = kids.index(grads) if grads is not None else -1
    for u, i in where.items():
        for v, keydict in succ[u].items():
            j = where.get(v)
            if j is None or j == i or all(d["back"] for d in keydict.values()):
                continue
            edges.add((i, j))
            if i == g_index:
                from_grads[j] += len(keydict)
    graph = ChildGraph(len(kids), sorted(edges))
    component = strong_components(graph)
    rank = [-c for c in component]  # Tarjan numbers sinks first: a -> b means rank a < rank b
    loose = [i for i, c in enumerate(kids) if _loose(h, c) and not _anchored(h, kids[i])]
    if grads is None:
        loose = [i for i in loose if _captured(h, kids[i])]
    target = [isinstance(c, Group) and not _loose(h, c) and not is_bookkeeping(c.label)
              for c in kids]
    optimizer = max((j for j in from_grads if target[j] and j != g_index),
                    key=lambda j: (from_grads[j], kids[j].name), default=None)
    size = [0] * len(kids)
    for i in where.values():
        size[i] += 1
    home = list(range(len(kids)))
    key = lambda j: (rank[j], kids[j].name)  # noqa: E731
    # Loose ops in dataflow order among themselves too: a chain of them (a custom gradient)
    # may sit on a loop through the gradient scope, where ranks do not order it.
    ranked = sorted(loose, key=key)
    among = {i: n for n, i in enumerate(ranked)}
    chain = ChildGraph(len(among), [(among[a], among[b]) for a in among
                                    for b in graph.succ[a] if b in among])
    order = [ranked[n] for n in topological_order(chain)]
    # Inputs from loose sources (constants) do not count: those follow their consumers.
    fed = {i: {p for p in graph.pred[i] if not (p in among and not graph.pred[p])}
           for i in order}
    for i in order:  # inputs before their consumers
        ins = {home[p] for p in fed[i]}
        if ins and all(target[j] for j in ins):
            home[i] = _bigger(max(ins, key=key), i, size)
    for i in reversed(order):  # consumers before their inputs
        outs = {home[s] for s in graph.succ[i]}
        if g_index >= 0 and outs == {g_index} and home[i] != g_index and all(
                rank[home[p]] <= rank[g_index] for p in graph.pred[i]):
            # What feeds only the gradients is part of them (a custom gradient recomputing
            # the model's activations), though it reads the model: still forwards.
            home[i] = g_index
            continue
        if fed[i] or home[i] != i:
            continue
        if outs and all(target[j] for j in outs):
            home[i] = _bigger(min(outs, key=key), i, size)
        elif not outs and optimizer is not None:
            home[i] = optimizer
    if optimizer is not None and grads is not None:
        model = max((j for j in range(len(kids)) if target[j] and j not in (g_index, optimizer)),
                    key=lambda j: (size[j], kids[j].name), default=None)
        h.training[container] = TrainingParts(
            grads, kids[optimizer], None if model is None else kids[model]  # type: ignore[arg-type]
        )
    moved = [i for i in order if home[i] != i]
    if not moved:
        return
    _place(h, kids, moved, home, where)
    gone = {id(kids[i]) for i in moved}
    container._children = [c for c in kids if id(c) not in gone]


def _bigger(j: int, i: int, size: list[int]) -> int:
    """``j`` if that group is bigger than the loose child ``i`` (a call holding the model
    itself is not a loose op of a smaller group), else ``i``: it stays."""
    return j if size[j] > size[i] else i


def _place(h: Hierarchy, kids: list[Member], moved: list[int], home: list[int],
           where: dict[str, int]) -> None:
    """Put each moved child into the lowest group of its new home holding what it is wired to.

    Its neighbours in the home count where they are; a neighbour in the model, seen from the
    gradient scope, counts as its mirror (``gradient_tape/<its scope>``) where that exists;
    a neighbour adopted too counts where it went (a second pass, for chains of them).
    """
    succ, pred, ops = h.model.g._succ, h.model.g._pred, h.ops
    gradients = {parts.gradients for parts in h.training.values()}
    spots: dict[int, Group | None] = {}
    later: dict[int, list[int]] = {}
    for i in moved:
        top = kids[home[i]]
        assert isinstance(top, Group)
        spot: Group | None = None
        for op in _unit_ops(kids[i]):
            for v in (*pred[op.name], *succ[op.name]):
                j = where.get(v)
                if j is None or j == i:
                    continue
                if j == home[i]:
                    at: Group | None = ops[v].parent  # type: ignore[assignment]
                elif home[j] != j:  # adopted too: counted where it goes, below
                    later.setdefault(i, []).append(j)
                    continue
                elif top in gradients:
                    at = _mirror(h, top, ops[v].parent)  # type: ignore[arg-type]
                else:
                    continue
                if at is not None:
                    spot = at if spot is None else _common(spot, at)
        spots[i] = spot
    for i in moved:
        for j in later.get(i, ()):
            at = spots.get(j)
            if at is not None and home[j] == home[i]:
                spot = spots[i]
                spots[i] = at if spot is None else _common(spot, at)
    for i in moved:
        m, into = kids[i], spots[i] or kids[home[i]]
        assert isinstance(into, Group)
        m.parent = into
        m.depth = into.depth + 1
        into._children.append(m)
        if isinstance(m, Group):
            _fix_depths(m)


def _mirror(h: Hierarchy, gradients: Group, scope: Group) -> Group | None:
    """The deepest group of ``gradients`` named after ``scope`` or one of its ancestors
    (``gradient_tape/resnet50_1/conv2_block1_add`` for ``resnet50_1/conv2_block1_add``)."""
    while scope is not None and scope.name:
        found = h.groups.get(f"{gradients.name}/{scope.name}")
        if found is not None:
            return found
        scope = scope.parent  # type: ignore[assignment]
    return None


class Meetings:
    """Where every model edge meets: the lowest group holding both its ends.

    Each (source op, destination op) pair is listed once in ``pairs``, in model order (source
    op, then its destinations in adjacency order: the order edges are aggregated in), and each
    group holds the indices of the pairs meeting in it, ascending (``at``).  A group's
    aggregated edges and its children's DAG are then read from the edges meeting in it, in
    time proportional to those, not to everything below it (the root of a 65,000-op graph
    has a few dozen).  Regrouping keeps it true cheaply (:meth:`move`, :meth:`settle`).
    ``closing`` holds the pairs a DAG of children leaves out: self-loops, and pairs whose
    every edge closes a loop.
    """

    __slots__ = ("at", "closing", "pairs")

    def __init__(self, h: Hierarchy) -> None:
        _fix_depths(h.root)  # the walk up to the lowest common group compares depths
        ops, succ = h.ops, h.model.g._succ
        pairs: list[tuple[str, str]] = []
        closing: set[int] = set()
        at: dict[Group, list[int]] = defaultdict(list)
        for u, nbrs in succ.items():
            a0 = ops[u]
            pa = a0.parent
            for v, keydict in nbrs.items():
                i = len(pairs)
                pairs.append((u, v))
                for d in keydict.values():
                    if not d["back"]:
                        break
                else:
                    closing.add(i)  # every edge u -> v closes a loop
                pb = ops[v].parent
                if pa is pb:
                    meet = pa
                elif pa.parent is pb.parent:  # type: ignore[union-attr]
                    meet = pa.parent  # type: ignore[union-attr]  # one layer to the next
                else:
                    meet = _lowest_children(a0, ops[v])[0].parent
                if u == v:
                    closing.add(i)
                at[meet].append(i)  # type: ignore[index]
        self.pairs, self.closing, self.at = pairs, closing, at

    def of(self, group: Group) -> list[int]:
        """The pairs meeting in ``group``."""
        return self.at.get(group, [])

    def move(self, old: Group, new: Group) -> None:
        """The edges meeting in ``old`` (dissolved into ``new``) meet in ``new`` now."""
        moved = self.at.pop(old, None)
        if moved:
            self._add(new, moved)

    def settle(self, h: Hierarchy, group: Group, made: list[Group]) -> None:
        """New groups were made under ``group``: edges with both ends in one of them meet
        there."""
        inside = {id(g) for g in made}
        kept: list[int] = []
        into: dict[Group, list[int]] = {}
        ops, pairs, children = h.ops, self.pairs, group._children
        slot = _child_slots(group, children)
        for i in self.at.get(group, ()):
            u, v = pairs[i]
            a = slot(ops[u])
            if id(children[a]) in inside and a == slot(ops[v]):
                into.setdefault(children[a], []).append(i)  # type: ignore[arg-type]
            else:
                kept.append(i)
        self.at[group] = kept
        for g, indices in into.items():
            self._add(g, indices)

    def _add(self, group: Group, indices: list[int]) -> None:
        """Add ascending indices to a group's, keeping them ascending (a merge of two runs)."""
        mine = self.at[group]
        ordered = not mine or mine[-1] < indices[0]
        mine.extend(indices)
        if not ordered:
            mine.sort()


def _child_of(group: Group, m: Member) -> Member:
    """The child of ``group`` that holds ``m`` (a member below it)."""
    while m.parent is not group:
        m = m.parent  # type: ignore[assignment]
    return m


def _local_graph(h: Hierarchy, group: Group, meet: Meetings
                 ) -> tuple[ChildGraph, list[Member]]:
    """The group's children as a DAG (see :class:`~graphviz_tb.blocks.ChildGraph`), from the
    edges meeting in it: O(those edges × nesting), not O(everything below)."""
    children = group._children
    slot = _child_slots(group, children)
    ops, pairs, closing = h.ops, meet.pairs, meet.closing
    edges = {(slot(ops[pairs[i][0]]), slot(ops[pairs[i][1]]))
             for i in meet.of(group) if i not in closing}
    graph = ChildGraph(len(children), sorted(e for e in edges if e[0] != e[1]))
    return graph, children


def _child_slots(group: Group, children: list[Member]) -> Callable[[Member], int]:
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
            found = above[id(p)] = index[id(_child_of(group, p))]  # type: ignore[arg-type]
        return found

    return slot


def _where(children: list[Member]) -> dict[str, int]:
    """Each op below ``children`` -> the index of the child holding it."""
    where: dict[str, int] = {}
    for i, c in enumerate(children):
        if isinstance(c, OpNode):
            where[c.name] = i
        else:
            where.update(dict.fromkeys(_op_names(c), i))  # type: ignore[arg-type]
    return where


def _flow_ends(h: Hierarchy, group: Group, children: list[Member],
               parameter: dict[tuple[str, int], bool]) -> tuple[set[int], set[int]]:
    """Which children take data from outside the group (or hold a data source), and which
    feed data out of it.  ``parameter`` remembers :func:`_is_parameter` across groups."""
    graph = h.model.g
    nodes, succ, pred = graph._node, graph._succ, graph._pred
    if group is h.root:
        # Nothing lies outside the root: data enters at its sources only, and leaves nowhere;
        # no walk of every edge is needed to find that.
        index = {id(c): i for i, c in enumerate(children)}
        return {index[id(_child_of(group, h.ops[u]))] for u, d in nodes.items()
                if d["op"] in _DATA_SOURCE_OPS and not _is_parameter(h, u, 0)}, set()
    where = _where(children)
    data_in: set[int] = set()
    data_out: set[int] = set()
    for u, i in where.items():
        if i in data_in and i in data_out:
            continue  # settled: the rest of this child's ops can tell nothing more
        if i not in data_in and nodes[u]["op"] in _DATA_SOURCE_OPS \
                and not _is_parameter(h, u, 0):
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
                    parameter[key] = _is_parameter(h, s, d["src_output"])
                if not parameter[key]:
                    data_in.add(i)
                    break
            if i in data_in:
                break
    return data_in, data_out


def _is_parameter(h: Hierarchy, op: str, output: int) -> bool:
    """Is this op output a parameter (a constant, a variable, a resource handle) rather than
    data flowing through the model?"""
    if h.model.g._node[op]["op"] in _PARAMETER_OPS:
        return True
    info = h.model.tensor(op, output)
    return info is not None and info.dtype == "resource"


#: A name group may take in ops between its members up to this share of its own ops.
_HULL_SHARE = 0.25


def _repair_convexity(h: Hierarchy, meet: Meetings) -> LocalGraphs:
    """Make every prefix group and op series convex, or give it up.

    Contract a group's invented children; each one on a cycle of the result first tries to
    take in what lies on the paths between its members (its hull: the residual adds between
    ConvNeXt's blocks, outside their ``stage_0`` names), when that is only a few ops of plain
    children; otherwise, or if it is still on a cycle, it is dissolved (its members move up).
    Until none is on a cycle (see :mod:`graphviz_tb.blocks`).  The user's own scopes stay as
    they are.  Returns the DAG of each group it looked at, for :func:`_find_blocks`.
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
            graph = _local_graph(h, g, meet)[0]
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
                    _dissolve(h, c)  # type: ignore[arg-type]
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
    ops = sum(_op_count(kids[x]) for x in extra)
    return extra if ops <= _HULL_SHARE * _op_count(kids[i]) else None


def _op_count(m: Member) -> int:
    return 1 if isinstance(m, OpNode) else len(_op_members(m))  # type: ignore[arg-type]


def _absorb(group: Group, members: list[Member]) -> None:
    """Move ``members`` (siblings of ``group``) into it."""
    for m in members:
        m.parent = group
    group._children.extend(members)


def _dissolve(h: Hierarchy, g: Group) -> None:
    """Forget an invented group: its members belong to its parent again."""
    for m in g._children:
        m.parent = g.parent
    del h.groups[g.name]


#: A group's children as a DAG, with the list of children it was made from.
LocalGraphs = dict[Group, tuple[ChildGraph, list[Member]]]


def _find_blocks(h: Hierarchy, meet: Meetings, known: LocalGraphs) -> LocalGraphs:
    """Cut every group whose names left it flat into blocks found from its dataflow (see
    :mod:`graphviz_tb.blocks`); ``known`` holds DAGs :func:`_repair_convexity` made.
    Returns the DAGs of the groups too big for one layout that it left as they were, for
    :func:`_sections` (100,000 children take a third of a second to wire)."""
    signature_of = _Signatures()
    parameter: dict[tuple[str, int], bool] = {}
    uncut = {g: dag for g, dag in known.items() if len(dag[1]) > SECTION_LIMIT}
    for group in list(h._raw_groups()):
        kids = group._children
        plain = sum(1 for c in kids if not (isinstance(c, Group) and c.kind in INVENTED))
        if plain < BLOCK_MIN_CHILDREN or group.kind in ("series", "section") \
                or group in h.training:  # a block there would swallow the model's parts
            continue
        cached = known.get(group)
        graph, children = cached if cached and cached[1] is kids else \
            _local_graph(h, group, meet)
        if len(children) > SECTION_LIMIT:
            uncut[group] = graph, children
        if not has_sequence(graph):
            continue
        graph.data_in, graph.data_out = _flow_ends(h, group, children, parameter)
        signature = [signature_of(c) for c in children]
        found = [b for b in blocks(graph, signature) if len(b) >= 2]
        if len(found) < 2:
            continue
        uncut.pop(group, None)
        labels = label_groups(graph, [c.label for c in children],
                              [s[0] for s in signature], found)
        made = []
        inside: set[int] = set()
        for members, label in zip(found, labels, strict=True):
            full = _free_name(h, f"{group.name}/{label}" if group.name else label)
            block = Group(full, h, group, group.depth + 1, kind="block")
            _reparent([children[i] for i in members], block)
            h.groups[full] = block
            made.append(block)
            inside.update(members)
        group._children = made + [c for i, c in enumerate(children) if i not in inside]
        h.block_order[group] = made
        meet.settle(h, group, made)
    return uncut


class _Signatures:
    """A cheap fingerprint of each member's structure: how many ops, and a sum over their types
    (equal structure, equal fingerprint; the same in every process).

    Remembered per member and summed children first, so the groups cut at every level of a
    tree cost one walk of it, not one walk per level; and each op type is hashed once.
    """

    def __init__(self) -> None:
        self._of: dict[Member, tuple[int, int]] = {}
        self._type: dict[str, int] = {}

    def __call__(self, m: Member) -> tuple[int, int]:
        of, crc = self._of, self._type
        found = of.get(m)
        if found is not None:
            return found
        if isinstance(m, OpNode):  # most children of a flat group: no walk to set up
            t = crc.get(m.op)
            if t is None:
                t = crc[m.op] = zlib.crc32(m.op.encode())
            found = of[m] = (1, t)
            return found
        stack: list[tuple[Member, bool]] = [(m, False)]
        while stack:
            x, ready = stack.pop()
            if isinstance(x, OpNode):
                t = crc.get(x.op)
                if t is None:
                    t = crc[x.op] = zlib.crc32(x.op.encode())
                of[x] = (1, t)
            elif ready:
                count = total = 0
                for c in x._children:  # type: ignore[attr-defined]
                    n, t = of[c]
                    count += n
                    total += t
                of[x] = (count, total)
            else:
                stack.append((x, True))
                stack.extend((c, False) for c in x._children  # type: ignore[attr-defined]
                             if c not in of)
        return of[m]



def _free_name(h: Hierarchy, name: str) -> str:
    """``name``, or ``name (2)``, ``name (3)`` ... if a group or op has it already."""
    candidate, n = name, 2
    while candidate in h.groups or candidate in h.ops:
        candidate, n = f"{name} ({n})", n + 1
    return candidate


@paused_gc
def build_hierarchy(model: GraphModel, options: RenderOptions | None = None, *,
                    templates: Callable[[Hierarchy], TemplateSource] | None = None
                    ) -> Hierarchy:
    """Group the model's ops into scopes, function bodies, prefix groups and series.

    Scope series need structural templates: ``layer_1 ... layer_12`` form a series only if they
    share one, so they are made when a group's children are first read (see
    :class:`Hierarchy`), like edges and templates, and only when ``templates`` makes the
    tree's :class:`TemplateSource`.  :func:`graphviz_tb.structure.structured_hierarchy` passes
    it; without, the tree has no scope series and no templates.
    """
    options = options or RenderOptions()
    h = Hierarchy(model, options.series_min if options.series else None, templates)
    _build_scopes(h)
    _adopt_loose_ops(h)
    if options.prefix_groups:
        _prefix_groups(h)
    if options.series:
        _op_series(h, options.series_min)
    meet = h.meetings()
    known = _repair_convexity(h, meet)
    if options.blocks:
        known = _find_blocks(h, meet, known)
    _sections(h, meet, known)
    _finish(h)
    return h
