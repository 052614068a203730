"""Structural templates: groups with the same internal structure get the same colour.

Structure means op types and wiring, recursively; not names, and not which function a body
was inlined from (Keras 2 makes one function per layer's branch).  Children are decided
before their parents (TensorBoard checks parents first, so identical blocks often end up with
different colours), a cheap signature buckets candidates, and real equality is then verified
with a labelled graph isomorphism test, so two templates never share a colour by hash
collision.  The repeated structures with the most ops in all take the fills of
:data:`~graphviz_tb.style.STRUCTURE_COLORS`, one each, picked to be told apart at a glance;
those past the palette, or too small to spend a colour on, share one other fill; unique
structure is grey.

Templates are computed on demand.  A picture asks for the groups it draws; a group's template
needs its subtree's, and whether it has another instance anywhere is answered by first
bucketing every group by a cheap invariant (its op-type multiset), which equal structures
always share, and deciding exactly only within the bucket.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from ..style import MIN_COLORED_OPS, STRUCTURE_COLORS, UNIQUE_COLOR, structure_color
from .tree import Group, Hierarchy, aggregate_edges
from .updates import DECAY_KIND
from .wiring import ChildGraph, DescriptionIds, by_names, by_order, canonical, same_structure

if TYPE_CHECKING:
    from collections.abc import Iterable


__all__ = ["PictureColors", "Templates"]

_K = TypeVar("_K")

#: Above this many children, a group is matched by signature alone (isomorphism is costly).
_VERIFY_LIMIT = 600
#: Deciding more groups than this without their edges aggregates the subtree in one pass.
_ONE_PASS = 8


class Templates:
    """Structural templates of one hierarchy's groups, decided on demand (see module doc)."""

    def __init__(self, h: Hierarchy) -> None:
        self.h = h
        self._op_ids: dict[str, int] = {}
        self._intern = DescriptionIds()
        #: Per description: each template's id, its witnesses (wiring by child names, and by
        #: child places in natural name order) and its child graph (for isomorphism tests).
        self._buckets: dict[tuple, list[tuple[int, tuple | None, tuple | None,
                                              ChildGraph | None]]] = {}
        self._next = 0
        #: Groups by invariant key, a group's ``op_hash`` (see :meth:`_bucket_all`).
        self._bucketed: dict[int, list[Group]] | None = None
        self._split: dict[int, dict[Group, list[Group]]] = {}
        #: Relative forms (each kept in its group), and how many series had been made when they
        #: were: a picture compares the groups that settling just compared (see :meth:`_form`).
        #: A form is an id: equal ids, equal forms (see :meth:`_form`).
        self._form_ids: dict[tuple, int] = {}
        self._forms_made = 0
        #: After :meth:`complete`: every template's instances (forward copies first), and the
        #: templates with two or more, in legend order; and the palette slot of each.
        self.instances: dict[int, list[Group]] = {}
        self.repeated: list[int] = []
        self._slots: dict[int, int] | None = None

    def of(self, group: Group) -> int:
        """The group's template id, deciding its subtree's first (iteratively: deep trees)."""
        # Read into a local: narrowing the attribute itself to None here would make the
        # compiled module (scripts/hatch_build.py) check the final return against None.
        known = group._template
        if known is not None:
            return known
        self.h.settle(group)  # its template is taken over the final tree below it
        todo: list[Group] = []  # the undecided groups below, children before parents
        stack: list[tuple[Group, bool]] = [(group, False)]
        while stack:
            g, ready = stack.pop()
            if ready:
                todo.append(g)
                continue
            stack.append((g, True))
            stack.extend((c, False) for c in g._children
                         if isinstance(c, Group) and c._template is None)
        if sum(g._edges is None for g in todo) > _ONE_PASS:
            aggregate_edges(self.h, group)  # the subtree's edges in one pass, not one per group
        for g in todo:
            self._decide(g)
        decided = group._template
        assert decided is not None  # _decide gave every group of todo, this one last, its id
        return decided

    def shown(self, group: Group) -> int:
        """The template a group is drawn in: a series of groups takes its members'."""
        return self.of(_drawn_as(group))

    def alike(self, group: Group) -> list[Group]:
        """Every group with the structure ``group`` is drawn in, in name order (a series of
        groups counts as its members, not as a group of its own).  A group alone in its
        invariant bucket is unique without deciding its template at all."""
        if self._bucketed is None:
            self._bucket_all()
        drawn = _drawn_as(group)
        key = drawn.op_hash
        bucket = self._bucketed[key]  # type: ignore[index]
        if len(bucket) == 1:
            return [drawn]
        split = self._split.get(key)
        if split is None:  # once per bucket: a picture may show thousands of its groups
            split = self._split[key] = {}
            for same in self.classes(sorted(bucket, key=lambda g: g.name), keyed=True):
                split.update(dict.fromkeys(same, same))
        return split[drawn]

    def classes(self, groups: list[Group], *, keyed: bool = False) -> list[list[Group]]:
        """Partition ``groups`` by structure, each class in the given order, the classes in
        order of their first group.

        Templates are the last resort.  Groups with a different invariant (op-type multiset;
        the bucket key, or ``keyed`` when the caller bucketed already) differ.  Groups whose
        subtrees are the same member for member (:meth:`_form`: repeated blocks
        built by the same code) are alike, the positions being the witness.  Only when one
        invariant holds several such forms are templates decided, once per form, to merge
        forms that are alike in another member order.  Groups whose templates are all
        decided already are split by template.
        """
        position = {g: i for i, g in enumerate(groups)}
        by_key: dict[tuple, list[Group]] = {}
        for g in groups:
            by_key.setdefault(() if keyed else (g.op_hash,), []).append(g)
        out: list[list[Group]] = []
        for same_key in by_key.values():
            if len(same_key) == 1:
                out.append(same_key)
            elif all(g._template is not None for g in same_key):
                out.extend(self._by_template(same_key).values())
            elif len({self._size(g) for g in same_key}) == 1:
                out.extend(self._by_form(same_key, position))
            else:
                # Settled, subtrees of different sizes differ in structure (equal templates
                # mean alike children, recursively), so sizes split the key before forms are
                # compared: the adjust blocks of NASNet's 18 cells come in two sizes, and
                # deciding all their templates instead cost a sixth of the default render.
                # A scope nested 3,000 deep is 3,000 sizes of one: no forms are built, which
                # would each hold every level below.
                for g in same_key:
                    self.h.settle(g)
                by_size: dict[int, list[Group]] = {}
                for g in same_key:
                    by_size.setdefault(self._size(g), []).append(g)
                for same_size in by_size.values():
                    out.extend(self._by_form(same_size, position))
        out.sort(key=lambda same: position[same[0]])
        return out

    def _by_template(self, groups: list[Group]) -> dict[int, list[Group]]:
        """Groups by template, in the given order (deciding the templates not yet decided)."""
        out: dict[int, list[Group]] = {}
        for g in groups:
            out.setdefault(self.of(g), []).append(g)
        return out

    def _by_form(self, groups: list[Group], position: dict[Group, int]) -> list[list[Group]]:
        """Groups of one invariant and size partitioned by structure: alike when their
        relative forms are equal, templates deciding only between the forms' first groups."""
        if len(groups) == 1:
            return [groups]
        forms: dict[int, list[Group]] = {}  # in order of their first group
        for g in groups:
            forms.setdefault(self._form(g), []).append(g)
        if len(forms) == 1:
            return list(forms.values())
        forms_of = {gs[0]: gs for gs in forms.values()}
        out = []
        for members in self._by_template([gs[0] for gs in forms.values()]).values():
            merged = [g for rep in members for g in forms_of[rep]]
            merged.sort(key=position.__getitem__)
            out.append(merged)
        return out

    def _form(self, group: Group) -> int:
        """The id of the group's relative form, remembered until a series is made in its
        subtree: two groups have one id exactly when their forms are equal.

        A form is made of its children's (children first, iteratively: deep trees): each
        child its op type, or its kind and form id (an empty group its kind alone, as its
        relative form says no more), and the model edges meeting in the group (see
        :class:`~graphviz_tb.group.tree.Meetings`) between positions in the whole subtree.
        Equal children's forms place their members and inner edges alike, so this is equal
        exactly when the relative forms are, without rebuilding every level's subtree: the
        copies of a million-op graph were read once per level of nesting before.
        """
        self._fresh()
        if group.form >= 0:
            return group.form
        todo: list[Group] = []
        stack = [group]
        while stack:
            g = stack.pop()
            todo.append(g)
            stack.extend([c for c in g._children if type(c) is Group and c.form < 0])
        # Each member's position in the subtree's tree order (its ``place``, set here and
        # read below): a member's position in a group's form is its position less the
        # group's, less one.
        n = 0
        below = group._children[::-1]
        while below:
            m = below.pop()
            m.place = n
            if type(m) is Group:
                below.extend(m._children[::-1])
            n += 1
        meet = self.h.meetings()
        at, src, dst, keys, ids = meet.at, meet.src, meet.dst, meet.keys, self._form_ids
        for g in reversed(todo):
            described = tuple([
                ((c.kind, c.form) if c._children else c.kind) if type(c) is Group
                else c.op  # type: ignore[attr-defined]
                for c in g._children])
            base = 0 if g is group else g.place + 1
            edges = []
            for i in at.get(g, ()):
                a, b = src[i].place - base, dst[i].place - base
                for k, d in keys[i].items():
                    edges.append((a, b, k, d["kind"]))
            edges.sort()
            g.form = ids.setdefault((described, tuple(edges)), len(ids))
        return group.form

    def _fresh(self) -> None:
        """Forget the forms and sizes of the subtrees a series was made in since: those of the
        group it was made under and of its ancestors.  The series' members keep theirs (NASNet's
        cells are compared when their parent settles, and again when a picture colours them)."""
        made = self.h.series_made
        if self._forms_made == len(made):
            return
        seen: set[Group] = set()
        for g in made[self._forms_made:]:
            m: Group | None = g
            while m is not None and m not in seen:  # a shared chain of ancestors once
                seen.add(m)
                m.form = -1
                m.size = 0
                m = m.parent
        self._forms_made = len(made)

    def _size(self, group: Group) -> int:
        """How many members the group's subtree holds as it stands (a form's length), each
        subtree counted once however deep the nesting: children before parents.  Kept in the
        group (see :class:`~graphviz_tb.group.tree.Group`): :func:`~.scopes.finish` counts
        every group's in its walk, so only those a series was made below since are counted
        here (counting all here took a million-op graph half a second)."""
        self._fresh()
        if group.size:
            return group.size
        todo: list[Group] = []  # parents before children
        stack = [group]
        while stack:
            g = stack.pop()
            todo.append(g)
            stack.extend([c for c in g._children if type(c) is Group and not c.size])
        for g in reversed(todo):
            size = 1  # a loop, not sum() of a list: one list per group cost more than the sum
            for c in g._children:
                size += c.size if type(c) is Group else 1  # type: ignore[attr-defined]
            g.size = size
        return group.size

    def _bucket_all(self) -> None:
        """Key every group by an invariant equal structures share: the multiset of op types
        below (``op_hash``; a collision only costs work).  It is unchanged by
        scope series, so groups not yet settled are keyed as they will be, and read from the
        group itself (a dict of every group's was 20 MB of a million-op page)."""
        buckets: dict[int, list[Group]] = {}
        for g in self.h._raw_groups():
            if _is_group_series(g):
                continue  # drawn as its members; not an instance of its own
            buckets.setdefault(g.op_hash, []).append(g)
        self._bucketed = buckets

    def complete(self) -> None:
        """Decide every group, and list the repeated templates in legend order (the viewer
        ships them all)."""
        self._decide_all()
        # Every group has its template: the forms that found them are done with (their ids'
        # keys held 60 MB of a million-op graph to the end of its page), and a later one is
        # worked out afresh.  The sizes kept in the groups are brought up to date first.
        self._fresh()
        self._form_ids = {}
        instances: dict[int, list[Group]] = {}
        for g in self.h.all_groups():
            g.form = -1  # its id is let go with the rest
            if not _is_group_series(g):
                instances.setdefault(self.of(g), []).append(g)
        for gs in instances.values():
            if len(gs) > 1:  # a sort works out the key of a list's one item too
                # With no gradient among them, forward first is by name: no key tuples.
                gs.sort(key=_forward_first if any("grad" in g.name for g in gs) else _name)
        self.instances = instances
        self.repeated = _legend_order(instances)

    def _decide_all(self) -> None:
        """Give every group its template, children before parents, deciding only the first
        group of each relative form (:meth:`_form`): equal forms are equal subtrees, member
        for member, so their templates are equal, and the rest copy it.  NASNet-Large's step
        has 27,464 groups in 172 forms: compiled, the whole tree's forms take 0.11 s, where
        deciding every group took 0.22 s.  Templates, and the ids they get, are what
        :meth:`of` on the root would give: the groups are decided in its order, and a copy
        is never a new template."""
        root = self.h.root
        self.h.settle(root)
        self._form(root)  # every group's, in one pass over the tree
        first: dict[int, int] = {}  # form id -> its template
        stack: list[tuple[Group, bool]] = [(root, False)]
        while stack:
            g, ready = stack.pop()
            if not ready:
                stack.append((g, True))
                stack.extend((c, False) for c in g._children if type(c) is Group)
                continue
            form = g.form
            template = g._template
            if template is None:
                template = first.get(form)
                if template is None:
                    self._decide(g)
                    template = g._template
                    assert template is not None  # _decide gives every group its id
                g._template = template
            first.setdefault(form, template)

    def slot(self, group: Group) -> int | None:
        """The place of ``group``'s structure in :data:`~graphviz_tb.style.STRUCTURE_COLORS`:
        the repeated structures with the most ops in all (ops times instances) in the whole
        tree come first, so a structure has one colour in the SVG, the viewer and at every
        depth.  None past the palette, for a structure too small to spend a colour on, or
        for a unique one."""
        if self._slots is None:
            self._slots = self._largest()
        # Only a bucket with a place can give one (a palette's worth of them): others answer
        # before their groups are split into structures (``alike``), a large bucket's
        # lookup once per template on a page.
        key = _drawn_as(group).op_hash
        place = self._slots.get(key)
        if place is None:
            return None
        same = self.alike(group)
        if len(same) < 2:
            return None
        # A bucket holding several structures (one op multiset, wired two ways) lends its
        # place to the structure of its first group by name, the same in every picture.
        first = min(self._bucketed[key], key=lambda g: g.name)  # type: ignore[index]
        return place if self.alike(first) is same else None

    def _largest(self) -> dict[int, int]:
        """The palette's places, by invariant bucket (see :meth:`_bucket_all`): the buckets
        with the most ops in all first, then by their first group's name.

        No template or form is needed: a bucket's groups share their op count, so its ops in
        all are its size times that count, and ranking needs no large bucket split into its
        structures.  A variable's weight decay (one in each of an optimizer's update groups,
        hundreds alike, never in a default view) spends no colour: it would take the
        place of a structure of the model.
        """
        if self._bucketed is None:
            self._bucket_all()
        ranked = sorted(
            (-max(g.op_count for g in b) * len(b), min(g.name for g in b), key)
            for key, b in self._bucketed.items()  # type: ignore[union-attr]
            if len(b) >= 2 and max(g.op_count for g in b) >= MIN_COLORED_OPS
            and any(g.kind != DECAY_KIND for g in b))
        size = len(STRUCTURE_COLORS["light"])
        return {key: place for place, (_, _, key) in enumerate(ranked[:size])}

    def representative(self, template: int) -> Group:
        return self.instances[template][0]

    def picture(self, present: Iterable[Group]) -> PictureColors:
        """Colours for one picture: each repeated structure's fill comes from the whole
        tree's ranking (:meth:`slot`), whatever else the picture shows.  A structure is keyed
        by its first instance in name order, which needs no template."""
        shown: dict[Group, Group] = {}
        alike: dict[Group, list[Group]] = {}
        for g in present:
            same = self.alike(g)
            if len(same) >= 2:
                shown[g] = same[0]
                alike[same[0]] = same
        return PictureColors(self, shown, alike)

    def _decide(self, group: Group) -> None:
        op_ids = self._op_ids
        # Children's templates are decided first (see :meth:`of`): none is None here.
        label: dict[int, int] = {
            id(m): (m._template if isinstance(m, Group)  # type: ignore[misc]
                    else op_ids.setdefault(m.op, -len(op_ids) - 1))  # type: ignore[attr-defined]
            for m in group.children}
        description, exact = canonical(group, label, self._intern)
        bucket = self._buckets.setdefault(description, [])
        template = None
        named = ordered = graph = None
        if exact or len(group.children) > _VERIFY_LIMIT:
            template = bucket[0][0] if bucket else None
        else:
            named = by_names(group, label)
            template = next((tid for tid, rep, _, _ in bucket
                             if named is not None and rep == named), None)
            if template is None and bucket:
                ordered = by_order(group, label)
                template = next((tid for tid, _, rep, _ in bucket if rep == ordered), None)
            if template is None and bucket:
                graph = ChildGraph(group, label)
                for tid, _, _, rep_graph in bucket:
                    if rep_graph is not None and same_structure(graph, rep_graph):
                        template = tid
                        break
        if template is None:
            self._next += 1
            template = self._next
            if not exact:
                ordered = ordered or by_order(group, label)
                graph = graph or ChildGraph(group, label)
            bucket.append((template, named, ordered, graph))
        group._template = template


class PictureColors:
    """The structure colours of one picture (see :meth:`Templates.picture`): ``shown`` maps
    each drawn group of a repeated structure to the structure's first instance (its key),
    ``alike`` each key to every instance, and ``repeated`` lists the keys drawn, those with
    a colour of their own first, in palette order."""

    def __init__(self, templates: Templates, shown: dict[Group, Group],
                 alike: dict[Group, list[Group]]) -> None:
        self.templates, self.shown, self.alike = templates, shown, alike
        slot = {key: templates.slot(key) for key in alike}
        self._slot = slot
        self.repeated = sorted(alike, key=lambda k: (
            slot[k] is None, slot[k] or 0, -k.op_count * len(alike[k]), k.name))

    def color(self, group: Group, theme: str = "light") -> str:
        key = self.shown.get(group)
        return UNIQUE_COLOR[theme] if key is None else self.template_color(key, theme)

    def template_color(self, key: Group, theme: str = "light") -> str:
        """The fill of the structure keyed by ``key`` (its first instance)."""
        return structure_color(self._slot[key], theme)

    def instances(self, key: Group) -> list[Group]:
        """The structure's groups in the whole tree, forward copies before gradients (the
        first names it in the legend)."""
        return sorted(self.alike[key], key=_forward_first)


def _is_group_series(g: Group) -> bool:
    return g.kind == "series" and bool(g._children) and isinstance(g._children[0], Group)


def _drawn_as(g: Group) -> Group:
    """Whose template a group is drawn in: a series of groups is drawn as its first member."""
    return g._children[0] if _is_group_series(g) else g  # type: ignore[return-value]


def _name(g: Group) -> str:
    return g.name


def _forward_first(g: Group) -> tuple[bool, str]:
    """Instances of a structure in the order a reader recognises them: the forward model's
    copies before their gradients' (``reshape`` before ``gradients/Reshape_1_grad``), then by
    name; the first names the structure in the legend."""
    name = g.name
    if "gradient" not in name and "_grad" not in name:  # no part can say so: not split
        return False, name
    return (any(p.startswith(("gradients", "gradient_tape")) or p.endswith("_grad")
                for p in name.split("/")), name)


def _legend_order(instances: dict[_K, list[Group]]) -> list[_K]:
    """Structures with two or more instances, largest footprint (ops times instances) first,
    then by the name of the first instance."""
    repeated = [t for t, gs in instances.items() if len(gs) >= 2]
    repeated.sort(key=lambda t: (-instances[t][0].op_count * len(instances[t]),
                                 instances[t][0].name))
    return repeated
