"""Per-group layout: each open group laid out on its own by Graphviz, and cached.

Graphviz on a flat graph of tens of thousands of nodes takes minutes to hours, so it never sees
one.  Each open group is laid out on its own by ``dot``, with its children as boxes of known
size (an open child is a box as big as its own layout), deepest groups first.  Edges between
children of a group are routed by that group's layout; an edge to an open group ends at the
group's border.  :mod:`graphviz_tb.layout.scene` then composes the group layouts by translation.

What each box and edge says, and so its size, is :mod:`.text`'s; one group's DOT, its run
and reading it back are :mod:`.dot_layout`'s (batched on every core, cached by the DOT's
text, so repeated renders and identical blocks cost nothing); a group far too wide for ``dot``
falls back to :mod:`.rows`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..group.auxiliary import auxiliary_children
from ..group.tree import AggEdge, Group, Member
from ..style import LABEL_H, PAD, STUB_H, STUB_LABEL_SIZE, STUB_PAD, TITLE_SIZE, TITLE_SLACK
from .dot_layout import group_dot, laid_edge, layout_all, read_local
from .parts import GroupLayout, GroupLayouts, Stub
from .rows import rows_layout, too_flat
from .text import leaf_size, text_width

if TYPE_CHECKING:
    from ..group.tree import Hierarchy
    from ..options import LayoutOptions

__all__ = ["layout_groups"]


# --------------------------------------------------------------------------- sizes and labels


# --------------------------------------------------------------------------- per-group DOT


# --------------------------------------------------------------------------- group layouts


def _visible_children(group: Group, keep: set[Member] | None) -> list[Member]:
    if keep is None:
        return list(group.children)
    return [c for c in group.children if c in keep]


def layout_groups(
    h: Hierarchy,
    options: LayoutOptions,
    expanded: frozenset[Group],
    *,
    keep: set[Member] | None = None,
    progress: Callable[[int], None] | None = None,
    notes: Callable[[Member], str | None] | None = None,
    titles: Callable[[Member], str | None] | None = None,
) -> GroupLayouts:
    """Lay out every open group on its own, deepest first.

    Parameters
    ----------
    expanded:
        The groups drawn open (the root among them).
    keep:
        When set, only these members are drawn (``--focus``).
    progress:
        Called with the number of group layouts finished, for progress bars.
    notes:
        What each collapsed member's second line adds (its cost), sized with it.
    titles:
        What an open group's frame title adds (its total cost), sized with it.
    """
    order = sorted(expanded, key=lambda g: -g.depth)  # deepest first
    sizes: dict[Member, tuple[float, float]] = {}
    lines: dict[Member, tuple[str, ...]] = {}
    layouts: dict[Group, GroupLayout] = {}
    # Children of one depth can be laid out together; each depth waits for the deeper ones.
    by_depth: dict[int, list[Group]] = {}
    for g in order:
        by_depth.setdefault(g.depth, []).append(g)
    for depth in sorted(by_depth, reverse=True):
        groups = sorted(by_depth[depth], key=lambda g: g.name)
        jobs = []
        for g in groups:
            children = _visible_children(g, keep)
            for c in children:
                if c not in sizes:
                    if c in expanded:
                        loc = layouts[c]  # type: ignore[index]
                        extra = titles(c) if titles else None
                        title = f"{c.label} · {extra}" if extra else c.label
                        sizes[c] = (max(loc.width + 2 * PAD, leaf_size(c)[0],
                                        text_width(title, TITLE_SIZE) * TITLE_SLACK + 2 * PAD),
                                    loc.height + 2 * PAD + LABEL_H)
                        lines[c] = (title,)
                    else:
                        w, hh, ls = leaf_size(c, notes(c) if notes else None)
                        sizes[c], lines[c] = (w, hh), ls
            shown = set(children)
            aggs = [agg for (a, b), agg in sorted(g.edges.items(),
                                                  key=lambda kv: (kv[0][0].name, kv[0][1].name))
                    if a in shown and b in shown]
            aux = auxiliary_children(g, children, aggs) if options.aux else set()
            main = [c for c in children if c not in aux]
            stubs, aggs = _stub_edges(g, aux, aggs)
            for stub in stubs:
                w = text_width(stub.label, STUB_LABEL_SIZE) + STUB_PAD
                sizes[stub], lines[stub] = (w, STUB_H), (stub.label,)
            edges = [laid_edge(h, agg, options) for agg in aggs]
            nodes = main + stubs
            jobs.append((g, nodes, aux, edges, group_dot(nodes, sizes, edges, options.rankdir)))
        results = layout_all([j[4] for j in jobs], progress)
        for (g, nodes, aux, edges, _), res in zip(jobs, results, strict=True):
            local = (read_local(res, nodes, edges, options.rankdir) if res is not None
                     else None)
            if local is None or too_flat(local):
                local = rows_layout(nodes, sizes, edges, options.rankdir)
            layouts[g] = local
            if aux:
                _place_aux(layouts[g], sorted(aux, key=lambda m: m.name), sizes)
    return GroupLayouts(layouts, sizes, lines)


def _stub_edges(g: Group, aux: set[Member], aggs: list[AggEdge]
                ) -> tuple[list[Stub], list[AggEdge]]:
    """Replace each edge touching an auxiliary child by an edge to a stub beside the other end
    (one stub per pair); edges between two auxiliary children are dropped."""
    if not aux:
        return [], aggs
    stubs: dict[tuple[Member, Member], Stub] = {}
    kept: list[AggEdge] = []
    for agg in aggs:
        a_aux, b_aux = agg.src in aux, agg.dst in aux
        if a_aux and b_aux:
            continue
        if not (a_aux or b_aux):
            kept.append(agg)
            continue
        far, near = (agg.src, agg.dst) if a_aux else (agg.dst, agg.src)
        stub = stubs.get((far, near))
        if stub is None:
            stub = stubs[(far, near)] = Stub(name=far.name, parent=g, depth=g.depth + 1,
                                             target=far)
        pair = (stub, agg.dst) if a_aux else (agg.src, stub)
        kept.append(AggEdge(pair[0], pair[1], (agg.data, agg.control, agg.ref), 0, agg.flat))
    return list(stubs.values()), kept


def _place_aux(layout: GroupLayout, aux: list[Member],
               sizes: dict[Member, tuple[float, float]]) -> None:
    """Stack auxiliary children in a column to the right of the group's main layout."""
    gap = 28.0
    column = max(sizes[m][0] for m in aux)
    x = layout.width + gap + column / 2
    y = max(layout.height, sum(sizes[m][1] + 12 for m in aux))
    top = y
    for m in aux:
        hh = sizes[m][1]
        layout.pos[m] = (x, top - hh / 2)
        top -= hh + 12
    layout.width += gap + column
    layout.height = y
    layout.aux = list(aux)


