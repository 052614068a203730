"""Per-group layout: each open group laid out on its own by Graphviz, and cached.

Graphviz on a flat graph of tens of thousands of nodes takes minutes to hours, so it never sees
one.  Each open group is laid out on its own by ``dot``, with its children as boxes of known
size (an open child is a box as big as its own layout), deepest groups first.  Edges between
children of a group are routed by that group's layout; an edge to an open group ends at the
group's border.  :mod:`graphviz_tb.scene` then composes the group layouts by translation.

This module also decides what each box and edge says, because the layout must size it: a
collapsed member's label lines and size, an edge's shape label and width.

Many small layouts go to the engine in one call, the batches run on all cores, and every group
layout is cached by the text of its DOT, so repeated renders and identical blocks cost nothing.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import islice, pairwise
from typing import TYPE_CHECKING

from . import engine
from .auxiliary import auxiliary_children
from .errors import GraphvizTbError
from .hierarchy import AggEdge, Group, Member, OpNode, aggregate_edges
from .model import CONTROL, DATA, REF
from .shapes import format_shape, tensor_bytes

if TYPE_CHECKING:
    from .hierarchy import Hierarchy
    from .options import RenderOptions
    from .shapes import TensorInfo

__all__ = [
    "ARROW_SIZE",
    "LABEL_H",
    "MAX_EDGE_LABEL",
    "MAX_LINE",
    "PAD",
    "PT",
    "GroupLayout",
    "GroupLayouts",
    "Stub",
    "Wire",
    "attach_label",
    "carried_tensors",
    "edge_look",
    "group_dot",
    "label_lines",
    "layout_groups",
    "leaf_size",
    "outline",
    "tensor_lines",
]

#: Points per inch (Graphviz sizes are in inches, positions in points).
PT = 72.0
PAD = 10.0  # inside an expanded group's border
LABEL_H = 20.0  # room for an expanded group's title
_BATCH = 64  # group layouts per engine call
_CHAR = 0.58  # average glyph width / font size for Helvetica-ish fonts
#: Longest edge label drawn (a shape such as ``?×224×224×3`` is far shorter).
MAX_EDGE_LABEL = 40
#: An edge's width weighs at most this many of the tensors it carries.
_WEIGHED = 64
#: Graphviz's ``arrowsize`` of every edge: the layouts leave room for the arrowhead the
#: drawing puts there, so each line runs into its arrowhead (the default size left a 4 pt gap).
ARROW_SIZE = 0.6

_cache: dict[str, dict | None] = {}
#: With more groups open than this, every group's edges are aggregated in one pass.
_MANY_OPEN = 32


class Stub(Member):
    """A short labelled stub standing for an edge to an auxiliary node (``target``)."""

    __slots__ = ("target",)

    def __init__(self, name: str, parent: Group | None = None, depth: int = 0,
                 target: Member | None = None) -> None:
        super().__init__(name, parent, depth)
        self.target = target



@dataclass
class Wire:
    """A drawn aggregated edge: a B-spline as DOT writes it (``e,x,y`` arrow tip then points)."""

    agg: AggEdge
    points: list[tuple[float, float]]
    arrow: tuple[float, float] | None
    label: str = ""
    label_pos: tuple[float, float] | None = None
    width: float = 1.0



# --------------------------------------------------------------------------- sizes and labels


def _text_width(text: str, size: float) -> float:
    return len(text) * size * _CHAR


def _is_const(m: OpNode) -> bool:
    return m.op in ("Const", "HostConst")


#: A box's name longer than this is drawn on two lines ...
WRAP = 28
#: ... and one longer than this is cut (with ``…``) first.
WRAP_MOST = 60
#: A line may end after one of these: the separators of TensorFlow's generated names.
_BREAKS = frozenset("_-/.: ")


def label_lines(label: str) -> list[str]:
    """The lines a box shows its name on: one, or two for a name longer than :data:`WRAP`,
    broken after the separator (or between the words of ``CamelCase``) nearest the middle, at
    the middle when none is within a quarter of the length; a block's name (``first … last``)
    breaks after its ``…`` when that is within a quarter.

    TF2 names the arguments a function captures after the op that reads them
    (``keras_cnn_1_conv_a_1_convolution_readvariableop_resource``): a row of them on one line
    each made keras_cnn's first picture 3,569 px wide.  The viewer wraps rule for rule
    (``labelLines`` in draw.js); the box sizes it draws come from here.
    """
    if len(label) <= WRAP:
        return [label]
    if len(label) > WRAP_MOST:
        label = label[:WRAP_MOST - 1] + "…"
    mid = len(label) // 2
    best = -1
    for i in range(1, len(label)):
        if (label[i - 1] in _BREAKS or (label[i - 1].islower() and label[i].isupper())) \
                and abs(i - mid) < abs(best - mid):
            best = i
    block = label.find(" … ") + 3  # a block named by its first and last members: between them
    if block > 2 and abs(block - mid) <= len(label) // 4:
        best = block
    cut = best if abs(best - mid) <= len(label) // 4 else mid
    return [label[:cut], label[cut:]]


def leaf_size(m: Member, note: str | None = None) -> tuple[float, float, tuple[str, ...]]:
    """Size in points and label lines of a collapsed member.

    ``note`` joins the second line (an op's type, a group's op count): what the member cost
    when colouring by cost.  A constant has one small line, and the note below it.
    """
    if isinstance(m, OpNode):
        if _is_const(m):
            lines: tuple[str, ...] = (m.label, note) if note else (m.label,)
            width = max(_text_width(t, 8) for t in lines) + 14
            return max(36.0, width), 30.0 if note else 20.0, lines
        second = _with_note(m.op, note) if note else m.op
        lines = (m.label, second) if second != m.label else (m.label,)
        name = label_lines(m.label)
        w = max(*(_text_width(t, 10) for t in name), _text_width(second, 8)) * 1.15 + 24
        return (max(54.0, w), (36.0 if len(lines) == 2 else 28.0) + 12.0 * (len(name) - 1),
                lines)
    assert isinstance(m, Group)
    caption = _group_caption(m)
    lines = (m.label, _with_note(_op_count(m), note) if note else caption)
    name = label_lines(m.label)
    w = max(*(_text_width(t, 10) for t in name), _text_width(lines[1], 8)) + 24
    return max(64.0, w), 40.0 + 12.0 * (len(name) - 1), lines


#: The longest line a box shows (the writers cut longer ones: ``render/dot.py``, ``draw.js``).
MAX_LINE = 48


def _with_note(head: str, note: str) -> str:
    """``head · note`` within :data:`MAX_LINE`, the head cut rather than the note: a long op
    type (``SparseSoftmaxCrossEntropyWithLogits``) cut its time's share off."""
    line = f"{head} · {note}"
    if len(line) <= MAX_LINE:
        return line
    return f"{head[:max(1, MAX_LINE - len(note) - 4)]}… · {note}"


def _op_count(g: Group) -> str:
    return f"{g.op_count:,} op" + ("s" if g.op_count != 1 else "")


def _group_caption(g: Group) -> str:
    """The second line of a collapsed group: its op count first (a long function name may be
    cut, the count never is), then what kind of group it is."""
    ops = _op_count(g)
    if g.kind == "series":
        kinds = {c.op for c in g.children if isinstance(c, OpNode)}
        if len(kinds) == 1 and all(isinstance(c, OpNode) for c in g.children):
            return f"{ops} · {len(g.children)} × {next(iter(kinds))}"
        return f"{ops} · {len(g.children)} blocks"
    if g.kind == "function" and g.function:
        return f"{ops} · ƒ {g.function}"
    return ops


#: The distinct tensors an edge carries (see :func:`carried_tensors`).
Carried = dict[tuple[str, int], tuple[str, str, int]]


def carried_tensors(h: Hierarchy, agg: AggEdge) -> Carried:
    """The distinct tensors an aggregated edge carries, each ``(producer, output index)``
    with one model edge that carries it.

    One tensor read by several consumers inside a group is one tensor, not several: labels
    and widths count what travels, not how many ops read it.
    """
    succ = h.model.g._succ  # the adjacency dicts: networkx's edge view costs 3x more
    out: dict[tuple[str, int], tuple[str, str, int]] = {}
    for u, v, k in agg.edges:
        data = succ[u][v][k]
        if data["kind"] != CONTROL:
            out.setdefault(data["tensor"], (u, v, k))
    return out


def edge_look(h: Hierarchy, agg: AggEdge, *, shapes: bool = True, dtypes: bool = False,
              tensors: Carried | None = None) -> tuple[str, float]:
    """An edge's label and line width, each carried tensor described once for both (the
    viewer labels and weighs every edge of the graph).  ``tensors`` is
    :func:`carried_tensors` when the caller has it already.

    The label is ``?×784`` for one tensor, ``3 tensors`` for several, nothing for
    control-only edges or without ``shapes``; cut to :data:`MAX_EDGE_LABEL` characters here,
    where the layout sizes it, so a shape with thousands of dimensions neither widens the
    layout nor differs from what is drawn.  The width comes from the bytes carried (see
    :func:`_width`).
    """
    if tensors is None:
        tensors = carried_tensors(h, agg)
    edge_tensor = h.model.edge_tensor
    infos = [edge_tensor(u, v, k) for u, v, k in islice(tensors.values(), _WEIGHED)]
    label = ""
    if shapes and agg.counts[DATA] + agg.counts[REF]:
        label = (f"{len(tensors)} tensors" if len(tensors) > 1
                 else format_shape(infos[0], dtype=dtypes))
        if len(label) > MAX_EDGE_LABEL:
            label = label[:MAX_EDGE_LABEL - 1] + "…"
    return label, _width(infos)


def tensor_lines(h: Hierarchy, agg: AggEdge, limit: int = 12) -> list[str]:
    """The tensors an edge carries, one ``producer:index (shape)`` line each, for tooltips."""
    tensors = carried_tensors(h, agg)
    lines = []
    for (producer, index), (u, v, k) in list(tensors.items())[:limit]:
        shape = format_shape(h.model.edge_tensor(u, v, k), dtype=True) or "shape unknown"
        lines.append(f"{producer}:{index} ({shape})")
    if len(tensors) > limit:
        lines.append(f"… and {len(tensors) - limit} more")
    return lines


def _width(infos: list[TensorInfo | None]) -> float:
    """Line width from the bytes of the tensors described (log scale, 1 at a byte to 3.5 at
    100 MB).  Not wider: Graphviz 7 and later pull a thick line's arrowhead back by its stroke
    (see :meth:`~graphviz_tb.engine.Engine.arrow_pullback`), and at 5 points the line then
    stopped 13 points short of its target, too far for the eye to join them."""
    total = sum(tensor_bytes(info) for info in infos)
    if total <= 0:
        return 1.0
    return round(min(3.5, 1.0 + math.log10(max(total, 1)) / 3.2), 2)


def outline(m: Member) -> str:
    """The Graphviz shape a member is drawn with, so edges are clipped at its real outline:
    ops are ellipses; groups, constants, summaries and stubs are boxes."""
    if isinstance(m, OpNode) and not _is_const(m) and "Summary" not in m.op:
        return "ellipse"
    return "box"


# --------------------------------------------------------------------------- per-group DOT


def _q(text: str) -> str:
    """A DOT quoted string (used for edge labels, which carry shapes we format ourselves)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _laid_edge(h: Hierarchy, agg: AggEdge, options: RenderOptions
               ) -> tuple[AggEdge, str, float]:
    """An edge of a group's layout problem: its label and its width (the tensors it carries
    worked out once for both)."""
    label, width = edge_look(h, agg, shapes=options.shapes, dtypes=options.dtypes)
    return agg, label, width


#: How hard the layout pulls a stub towards the end it stands beside (ordinary edges: 1).
STUB_WEIGHT = 8


def group_dot(
    children: list[Member], sizes: dict[Member, tuple[float, float]],
    edges: list[tuple[AggEdge, str, float]], rankdir: str,
) -> str:
    """One group's layout problem.  Every edge is named (``id="e3"``, its place in ``edges``)
    because Graphviz returns edges in an order of its own, not the order given."""
    index = {m: i for i, m in enumerate(children)}
    out = [
        "digraph G {",
        f"graph [rankdir={rankdir}, nodesep=0.22, ranksep=0.32, fontname=Helvetica];",
        "node [fixedsize=true, label=\"\", shape=box];",
        f"edge [fontname=Helvetica, fontsize=8, arrowsize={ARROW_SIZE}];",
    ]
    for m in children:
        w, hgt = sizes[m]
        shape = ", shape=ellipse" if outline(m) == "ellipse" else ""
        out.append(f"n{index[m]} [width={w / PT:.3f}, height={hgt / PT:.3f}{shape}];")
    for j, (agg, label, width) in enumerate(edges):
        attrs = [f"id=e{j}"]
        if label:
            attrs.append(f"label={_q(label)}")
        if agg.kind == DATA and width != 1.0:
            # Drawn this thick (render/dot.py): newer Graphviz leaves the arrowhead room for
            # its stroke only if the layout knows the width.
            attrs.append(f"penwidth={width:.2f}")
        if agg.back and agg.back == agg.total:
            attrs.append("constraint=false")
        if isinstance(agg.src, Stub) or isinstance(agg.dst, Stub):
            # A stub stands for its edge's far end: kept beside its near end, not wherever
            # a control edge's zero weight let it drift.
            attrs.append(f"weight={STUB_WEIGHT}")
        elif agg.kind == CONTROL:
            attrs.append("weight=0")
        tail = f"n{index[agg.src]}"
        head = f"n{index[agg.dst]}"
        out.append(f"{tail} -> {head} [{', '.join(attrs)}];")
    out.append("}")
    return "\n".join(out)


def _run_batch(sources: list[str]) -> list[dict | None]:
    """One engine call for the batch; if Graphviz refuses it, each graph alone, so one graph
    it cannot lay out (an overwide node) gets ``None`` and the fallback, not the whole batch."""
    try:
        return list(engine.current().layout(sources))
    except GraphvizTbError:
        if len(sources) == 1:
            return [None]
        return [_run_batch([s])[0] for s in sources]


def _layout_all(sources: list[str], progress: Callable[[int], None] | None
                ) -> list[dict | None]:
    """Lay out many group graphs: cached ones free, the rest batched over all cores."""
    todo = sorted({s for s in sources if s not in _cache}, key=len)
    batches = [todo[i:i + _BATCH] for i in range(0, len(todo), _BATCH)]
    if batches:
        workers = max(1, min(len(batches), os.cpu_count() or 1))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for batch, results in zip(batches, pool.map(_run_batch, batches), strict=True):
                for src, res in zip(batch, results, strict=True):
                    _cache[src] = res
                if progress:
                    progress(len(batch))
    return [_cache[s] for s in sources]


def _floats(text: str) -> list[float]:
    return [float(v) for v in text.split(",")]


def _parse_spline(pos: str) -> tuple[list[tuple[float, float]], tuple[float, float] | None]:
    points: list[tuple[float, float]] = []
    arrow = None
    for token in pos.split():
        if token.startswith("e,"):
            x, y = _floats(token[2:])
            arrow = (x, y)
        elif token.startswith("s,"):
            continue
        else:
            x, y = _floats(token)
            points.append((x, y))
    return points, arrow



# --------------------------------------------------------------------------- group layouts


@dataclass
class GroupLayout:
    """One group's own layout, relative to its content's lower-left corner.

    ``pos`` holds each visible child's centre; ``wires`` the edges between children.  The HTML
    viewer receives these per group and composes them as :func:`graphviz_tb.scene.compose` does.
    """

    width: float
    height: float
    pos: dict[Member, tuple[float, float]]
    wires: list[Wire]
    #: Children moved to the side column (see :mod:`graphviz_tb.auxiliary`), in column order.
    aux: list[Member] = field(default_factory=list)



@dataclass
class GroupLayouts:
    """Every open group's own layout, and the size and label lines of every member drawn."""

    layouts: dict[Group, GroupLayout]
    sizes: dict[Member, tuple[float, float]]
    lines: dict[Member, tuple[str, ...]]


def _visible_children(group: Group, keep: set[Member] | None) -> list[Member]:
    if keep is None:
        return list(group.children)
    return [c for c in group.children if c in keep]



def layout_groups(
    h: Hierarchy,
    options: RenderOptions,
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
    if len(expanded) > _MANY_OPEN:
        aggregate_edges(h)  # one pass over all edges beats a subtree walk per open group
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
                                        _text_width(title, 10) * 1.1 + 2 * PAD),
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
                w = _text_width(stub.label, 8) + 10
                sizes[stub], lines[stub] = (w, 14.0), (stub.label,)
            edges = [_laid_edge(h, agg, options) for agg in aggs]
            nodes = main + stubs
            jobs.append((g, nodes, aux, edges, group_dot(nodes, sizes, edges, options.rankdir)))
        results = _layout_all([j[4] for j in jobs], progress)
        for (g, nodes, aux, edges, _), res in zip(jobs, results, strict=True):
            local = (_read_local(res, nodes, edges, options.rankdir) if res is not None
                     else None)
            if local is None or _too_flat(local):
                local = _rows_layout(nodes, sizes, edges, options.rankdir)
            layouts[g] = local
            if aux:
                _place_aux(layouts[g], sorted(aux, key=lambda m: m.name), sizes)
    return GroupLayouts(layouts, sizes, lines)



#: A group layout wider than this (points) and much wider than high is re-done in rows.
_MAX_WIDTH = 14_400.0


def _too_flat(local: GroupLayout) -> bool:
    return local.width > _MAX_WIDTH and local.width > 4 * local.height


def _rows_layout(nodes: list[Member], sizes: dict[Member, tuple[float, float]],
                 edges: list[tuple[AggEdge, str, float]], rankdir: str) -> GroupLayout:
    """The fallback for a group dot cannot lay out well (hundreds of independent siblings lie
    side by side, until dot refuses the width): children in wrapped rows, in dataflow order,
    inputs first (at the bottom for ``BT``), edges as straight lines.  Each stub comes right
    after the child it stands beside, in the same row."""
    index = {m: i for i, m in enumerate(nodes)}
    beside: dict[Member, list[Member]] = {}  # a child -> its stubs, in node order
    for agg, _, _ in sorted(edges, key=lambda e: (index[e[0].src], index[e[0].dst])):
        for stub, near in ((agg.src, agg.dst), (agg.dst, agg.src)):
            if isinstance(stub, Stub) and stub not in beside.get(near, ()):
                beside.setdefault(near, []).append(stub)
    stubs = {stub for group in beside.values() for stub in group}
    nodes = [m for m in nodes if m not in stubs]
    preds: dict[Member, set[Member]] = {m: set() for m in nodes}
    for agg, _, _ in edges:
        if agg.src is not agg.dst and not (agg.back and agg.back == agg.total) \
                and agg.src not in stubs and agg.dst not in stubs:
            preds[agg.dst].add(agg.src)
    order: list[Member] = []
    placed: set[Member] = set()
    pending = sorted(nodes, key=lambda m: index[m])
    while pending:  # Kahn-like, stable; cycles are broken by taking the first pending node
        ready = [m for m in pending if preds[m] <= placed] or pending[:1]
        order.extend(ready)
        placed.update(ready)
        pending = [m for m in pending if m not in placed]
    gap = 18.0
    units = [[m, *beside.get(m, ())] for m in order]  # never split across rows
    wide = [sum(sizes[m][0] + gap for m in unit) - gap for unit in units]
    area = sum(sizes[m][0] * sizes[m][1] for unit in units for m in unit)
    target = max(max(wide), (area * 2.0) ** 0.5)
    rows: list[list[Member]] = [[]]
    width = 0.0
    for unit, w in zip(units, wide, strict=True):
        if rows[-1] and width + w > target:
            rows.append([])
            width = 0.0
        rows[-1].extend(unit)
        width += w + gap
    pos: dict[Member, tuple[float, float]] = {}
    y = 0.0
    layout_w = 0.0
    lanes = _Lanes(gap)
    for r, row in enumerate(rows):
        row_h = max(sizes[m][1] for m in row)
        x = gap  # a lane at the left, for edges between rows apart
        for k, m in enumerate(row):
            pos[m] = (x + sizes[m][0] / 2, y + row_h / 2)
            lanes.place[m] = (r, k)
            x += sizes[m][0] + gap
        lanes.above.append(y + row_h + gap)
        layout_w = max(layout_w, x - gap)
        y += row_h + 2 * gap
    height = y - gap  # the gap above the last row holds edges entering it from above
    wires = [lanes.wire(agg, label, width, pos, sizes) for agg, label, width in edges
             if agg.src is not agg.dst]
    if rankdir == "TB":  # inputs at the top instead
        pos = {m: (x, height - yy) for m, (x, yy) in pos.items()}
        wires = [_flipped(w, height) for w in wires]
    return GroupLayout(layout_w, height, pos, wires)


class _Lanes:
    """Routes for the rows layout's edges that run through no box: neighbours in a row are
    joined by a straight line; any other edge leaves its source upwards into the gap above
    its row, runs along gaps (and the lane left of the rows, to pass rows between) and enters
    its target from the gap below it (or above it, for an edge to its own row or back)."""

    def __init__(self, gap: float) -> None:
        self.gap = gap
        self.place: dict[Member, tuple[int, int]] = {}  # (row, position in the row)
        self.above: list[float] = []  # each row's gap line above it

    def wire(self, agg: AggEdge, label: str, width: float,
             pos: dict[Member, tuple[float, float]],
             sizes: dict[Member, tuple[float, float]]) -> Wire:
        (rs, ks), (rt, kt) = self.place[agg.src], self.place[agg.dst]
        if rs == rt and abs(ks - kt) == 1:
            return _straight_wire(agg, label, width, pos, sizes)
        (sx, sy), (tx, ty) = pos[agg.src], pos[agg.dst]
        route = [(sx, sy + sizes[agg.src][1] / 2), (sx, self.above[rs])]
        if rt == rs + 1:
            route += [(tx, self.above[rs]), (tx, ty - sizes[agg.dst][1] / 2)]
        else:
            into = self.above[rt - 1] if rt > rs else self.above[rt]
            end = ty - sizes[agg.dst][1] / 2 if rt > rs else ty + sizes[agg.dst][1] / 2
            lane = self.gap / 2
            route += [(lane, self.above[rs]), (lane, into), (tx, into), (tx, end)]
        route = [p for i, p in enumerate(route) if i == 0 or p != route[i - 1]]
        return _polyline_wire(agg, label, width, route)


def _polyline_wire(agg: AggEdge, label: str, width: float,
                   route: list[tuple[float, float]]) -> Wire:
    """A wire along straight segments (each a cubic Bézier piece), its last one shortened by
    the arrowhead, labelled beside its second segment."""
    tip, before = route[-1], route[-2]
    length = math.dist(tip, before) or 1.0
    drawn = width if agg.kind == DATA else 1.0  # as render/dot.py draws it
    back = min(_ARROW + engine.current().arrow_pullback(drawn), length / 2) / length
    route = [*route[:-1], (tip[0] - (tip[0] - before[0]) * back,
                           tip[1] - (tip[1] - before[1]) * back)]
    points = [route[0]]
    for a, b in pairwise(route):
        points += [((2 * a[0] + b[0]) / 3, (2 * a[1] + b[1]) / 3),
                   ((a[0] + 2 * b[0]) / 3, (a[1] + 2 * b[1]) / 3), b]
    a, b = route[min(1, len(route) - 2)], route[min(2, len(route) - 1)]
    mid = ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
    lp = (mid[0], mid[1] + 6) if label else None
    return Wire(agg, points, tip, label, lp, width)


def _flipped(w: Wire, height: float) -> Wire:
    """The same wire, upside down (``rankdir=TB``)."""
    def flip(p: tuple[float, float]) -> tuple[float, float]:
        return p[0], height - p[1]

    return Wire(w.agg, [flip(p) for p in w.points], w.arrow and flip(w.arrow), w.label,
                w.label_pos and flip(w.label_pos), w.width)


#: Length of an arrowhead in points (Graphviz's 10 points times :data:`ARROW_SIZE`).
_ARROW = 10 * ARROW_SIZE


def _border(m: Member, centre: tuple[float, float], size: tuple[float, float],
            toward: tuple[float, float]) -> tuple[float, float]:
    """Where the line from a member's centre toward a point leaves its outline."""
    dx, dy = toward[0] - centre[0], toward[1] - centre[1]
    a, b = size[0] / 2, size[1] / 2
    if dx == 0 and dy == 0:
        return centre
    if outline(m) == "ellipse":
        t = 1 / math.hypot(dx / a, dy / b)
    else:
        t = min(a / abs(dx) if dx else math.inf, b / abs(dy) if dy else math.inf)
    return centre[0] + t * dx, centre[1] + t * dy


def _straight_wire(agg: AggEdge, label: str, width: float,
                   pos: dict[Member, tuple[float, float]],
                   sizes: dict[Member, tuple[float, float]]) -> Wire:
    """A straight edge from the source's outline to an arrowhead on the target's."""
    c0, c1 = pos[agg.src], pos[agg.dst]
    start = _border(agg.src, c0, sizes[agg.src], c1)
    tip = _border(agg.dst, c1, sizes[agg.dst], c0)
    length = math.hypot(tip[0] - start[0], tip[1] - start[1]) or 1.0
    drawn = width if agg.kind == DATA else 1.0  # as render/dot.py draws it
    back = min(_ARROW + engine.current().arrow_pullback(drawn), length / 2) / length
    end = (tip[0] - (tip[0] - start[0]) * back, tip[1] - (tip[1] - start[1]) * back)
    third = ((2 * start[0] + end[0]) / 3, (2 * start[1] + end[1]) / 3)
    two = ((start[0] + 2 * end[0]) / 3, (start[1] + 2 * end[1]) / 3)
    mid = ((start[0] + end[0]) / 2, (start[1] + end[1]) / 2)
    lp = (mid[0] + _text_width(label, 8) / 2 + 4, mid[1]) if label else None
    return Wire(agg, [start, third, two, end], tip, label, lp, width)


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
        kept.append(AggEdge(pair[0], pair[1], dict(agg.counts), 0, agg.edges))
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


def _read_local(res: dict, children: list[Member],
                edges: list[tuple[AggEdge, str, float]], rankdir: str) -> GroupLayout:
    """One group's layout from Graphviz's json0 answer: nodes by their names (``n3``), edges
    by their ids (``e5``), never by position in the answer."""
    bb = _floats(res.get("bb", "0,0,0,0"))
    pos: dict[Member, tuple[float, float]] = {}
    for obj in res.get("objects", []):
        name = obj.get("name", "")
        if name.startswith("n") and "pos" in obj:
            x, y = _floats(obj["pos"])
            pos[children[int(name[1:])]] = (x - bb[0], y - bb[1])
    drawn: dict[int, dict] = {}
    for e in res.get("edges", []):
        eid = e.get("id", "")
        if eid.startswith("e") and eid[1:].isdigit():
            drawn[int(eid[1:])] = e
    if len(drawn) != len(edges):
        raise GraphvizTbError(f"Graphviz returned {len(drawn)} of {len(edges)} edges")
    wires = []
    for j, (agg, label, width) in enumerate(edges):
        e = drawn[j]
        points, arrow = _parse_spline(e.get("pos", ""))
        shift = [(x - bb[0], y - bb[1]) for x, y in points]
        tip = (arrow[0] - bb[0], arrow[1] - bb[1]) if arrow else None
        lp = None
        if "lp" in e and label:
            lx, ly = _floats(e["lp"])
            lp = attach_label(shift, (lx - bb[0], ly - bb[1]), label, rankdir)
        wires.append(Wire(agg, shift, tip, label, lp, width))
    return GroupLayout(bb[2] - bb[0], bb[3] - bb[1], pos, wires)


def _bezier_points(points: list[tuple[float, float]], step: float = 4.0
                   ) -> list[tuple[float, float]]:
    """Points along a B-spline as DOT writes it (start, then three points per segment)."""
    out = [points[0]]
    for i in range(0, len(points) - 3, 3):
        (x0, y0), (x1, y1), (x2, y2), (x3, y3) = points[i:i + 4]
        length = math.hypot(x1 - x0, y1 - y0) + math.hypot(x2 - x1, y2 - y1) + \
            math.hypot(x3 - x2, y3 - y2)
        n = max(2, int(length / step))
        for k in range(1, n + 1):
            t = k / n
            a, b, c, d = (1 - t) ** 3, 3 * t * (1 - t) ** 2, 3 * t * t * (1 - t), t ** 3
            out.append((a * x0 + b * x1 + c * x2 + d * x3, a * y0 + b * y1 + c * y2 + d * y3))
    return out


def attach_label(points: list[tuple[float, float]], lp: tuple[float, float], label: str,
                 rankdir: str) -> tuple[float, float]:
    """Where an edge's label is drawn: Graphviz's place when it touches the edge's path, else
    beside the path's point nearest that place.

    dot reserves room for a label in one rank, but when a tall box shares that rank the path
    may pass far from it (70 points on the MNIST sample), and a floating label reads as
    another edge's.  A label always sits beside its own line.
    """
    if len(points) < 4:
        return lp
    half = _text_width(label, 8) / 2
    qx, qy = min(_bezier_points(points), key=lambda q: (q[0] - lp[0]) ** 2 + (q[1] - lp[1]) ** 2)
    if rankdir in ("BT", "TB"):
        if math.hypot(qx - lp[0], qy - lp[1]) <= half + 10:
            return lp
        return (qx + (half + 4) * (1 if lp[0] >= qx else -1), qy)
    if math.hypot(qx - lp[0], qy - lp[1]) <= 14:
        return lp
    return (qx, qy + 8 * (1 if lp[1] >= qy else -1))
