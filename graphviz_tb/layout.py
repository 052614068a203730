"""Per-group Graphviz layout, composed into one scene.

Graphviz on a flat graph of tens of thousands of nodes takes minutes to hours, so it never sees
one.  Each expanded group is laid out on its own by ``dot``, with its children as boxes of known
size (an expanded child is a box as big as its own layout), and the results are composed by
translation, deepest groups first.  Edges between children of a group are routed by that group's
layout; an edge to an expanded group ends at the group's border.

Many small layouts go to ``dot`` in one process (it reads several graphs from one input), the
batches run on all cores, and every group layout is cached by the text of its DOT, so repeated
renders and identical blocks cost nothing.
"""

from __future__ import annotations

import fnmatch
import json
import math
import os
import subprocess
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .auxiliary import auxiliary_children
from .errors import ExecutableNotFound, GraphvizTbError
from .hierarchy import AggEdge, Group, Member, OpNode, aggregate_edges
from .model import CONTROL, DATA, REF
from .shapes import format_shape, tensor_bytes

if TYPE_CHECKING:
    from .hierarchy import Hierarchy
    from .options import RenderOptions

__all__ = [
    "LABEL_H",
    "MAX_EDGE_LABEL",
    "PAD",
    "Box",
    "GroupLayout",
    "Scene",
    "Stub",
    "Wire",
    "compute_layout",
    "edge_label",
    "expanded_groups",
    "group_dot",
    "leaf_size",
]

#: Points per inch (Graphviz sizes are in inches, positions in points).
PT = 72.0
PAD = 10.0  # inside an expanded group's border
LABEL_H = 20.0  # room for an expanded group's title
_BATCH = 64  # group layouts per dot process
_CHAR = 0.58  # average glyph width / font size for Helvetica-ish fonts
#: Longest edge label drawn (a shape such as ``?×224×224×3`` is far shorter).
MAX_EDGE_LABEL = 40

_cache: dict[str, dict] = {}
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
class Box:
    """A drawn member: position of its centre and size, in points (y grows upwards, as in DOT)."""

    member: Member
    x: float
    y: float
    w: float
    h: float
    expanded: bool = False
    lines: tuple[str, ...] = ()


@dataclass
class Wire:
    """A drawn aggregated edge: a B-spline as DOT writes it (``e,x,y`` arrow tip then points)."""

    agg: AggEdge
    points: list[tuple[float, float]]
    arrow: tuple[float, float] | None
    label: str = ""
    label_pos: tuple[float, float] | None = None
    width: float = 1.0


@dataclass
class Scene:
    """Everything to draw, in absolute coordinates; ``boxes`` parents before children."""

    boxes: list[Box] = field(default_factory=list)
    wires: list[Wire] = field(default_factory=list)
    width: float = 0.0
    height: float = 0.0
    expanded: frozenset[Group] = frozenset()
    #: Each open group's own layout, and the size every visible member was drawn at.
    layouts: dict[Group, GroupLayout] = field(default_factory=dict)
    sizes: dict[Member, tuple[float, float]] = field(default_factory=dict)


# --------------------------------------------------------------------------- which groups open


def _matches(name: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def expanded_groups(h: Hierarchy, options: RenderOptions, focus_ops: set[str] | None = None
                    ) -> frozenset[Group]:
    """The groups drawn open: the root, those within ``depth``, those matching ``expand`` (and
    their ancestors), all with ``expand_all``, minus those matching ``collapse``.

    Depth alone is answered top-down, reading only the children of open groups, so the tree
    below stays unsettled (see :class:`~graphviz_tb.hierarchy.Hierarchy`).  A pattern can name
    any group and a focus any op, so those settle the whole tree first.
    """
    opened: set[Group] = {h.root}
    if options.expand_all or options.expand or focus_ops:
        for group in h.all_groups():
            if group is h.root:
                continue
            if options.expand_all or group.depth < options.depth:
                opened.add(group)
            elif options.expand and _matches(group.name, options.expand):
                opened.add(group)
                opened.update(group.ancestors())
    else:
        stack = [h.root]
        while stack:
            for c in stack.pop().children:
                if isinstance(c, Group) and c.depth < options.depth:
                    opened.add(c)
                    stack.append(c)
    if focus_ops:
        for name in focus_ops:
            opened.update(h.ops[name].ancestors())
    if options.collapse:
        opened = {g for g in opened if g is h.root or not _matches(g.name, options.collapse)}
    # A group is visible only if all its ancestors are open.
    return frozenset(g for g in opened if all(a in opened for a in g.ancestors()))


# --------------------------------------------------------------------------- sizes and labels


def _text_width(text: str, size: float) -> float:
    return len(text) * size * _CHAR


def _is_const(m: OpNode) -> bool:
    return m.op in ("Const", "HostConst")


def leaf_size(m: Member) -> tuple[float, float, tuple[str, ...]]:
    """Size in points and label lines of a collapsed member."""
    if isinstance(m, OpNode):
        if _is_const(m):
            lines: tuple[str, ...] = (m.label,)
            return max(36.0, _text_width(m.label, 8) + 14), 20.0, lines
        lines = (m.label, m.op) if m.op != m.label else (m.label,)
        w = max(_text_width(lines[0], 10), _text_width(m.op, 8)) * 1.15 + 24
        return max(54.0, w), 36.0 if len(lines) == 2 else 28.0, lines
    assert isinstance(m, Group)
    lines = (m.label, _group_caption(m))
    w = max(_text_width(lines[0], 10), _text_width(lines[1], 8)) + 24
    return max(64.0, w), 40.0, lines


def _group_caption(g: Group) -> str:
    ops = f"{g.op_count:,} op" + ("s" if g.op_count != 1 else "")
    if g.kind == "series":
        kinds = {c.op for c in g.children if isinstance(c, OpNode)}
        each = f" × {next(iter(kinds))}" if len(kinds) == 1 else ""
        return f"{len(g.children)}{each} · {ops}" if each else f"{len(g.children)} blocks · {ops}"
    if g.kind == "function" and g.function:
        return f"ƒ {g.function} · {ops}"
    return ops


def edge_label(h: Hierarchy, agg: AggEdge, *, dtypes: bool = False) -> str:
    """``?×784`` for one tensor, ``3 tensors`` for several, nothing for control-only edges.

    Cut to :data:`MAX_EDGE_LABEL` characters here, where the layout sizes it, so a shape with
    thousands of dimensions neither widens the layout nor differs from what is drawn.
    """
    label = _edge_label(h, agg, dtypes=dtypes)
    return label if len(label) <= MAX_EDGE_LABEL else label[:MAX_EDGE_LABEL - 1] + "…"


def _edge_label(h: Hierarchy, agg: AggEdge, *, dtypes: bool) -> str:
    carried = agg.counts[DATA] + agg.counts[REF]
    if carried == 0:
        return ""
    if carried > 1:
        return f"{carried} tensors"
    model = h.model
    for u, v, k in agg.edges:
        if model.graph.edges[u, v, k]["kind"] != CONTROL:
            return format_shape(model.edge_tensor(u, v, k), dtype=dtypes)
    return ""


def _edge_width(h: Hierarchy, agg: AggEdge) -> float:
    model = h.model
    total = 0
    for u, v, k in agg.edges[:64]:
        if model.graph.edges[u, v, k]["kind"] != CONTROL:
            total += tensor_bytes(model.edge_tensor(u, v, k))
    if total <= 0:
        return 1.0
    return round(min(5.0, 1.0 + math.log10(max(total, 1)) / 2.0), 2)


# --------------------------------------------------------------------------- per-group DOT


def _q(text: str) -> str:
    """A DOT quoted string (used for edge labels, which carry shapes we format ourselves)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def group_dot(
    children: list[Member], sizes: dict[Member, tuple[float, float]],
    edges: list[tuple[AggEdge, str]], rankdir: str,
) -> str:
    index = {m: i for i, m in enumerate(children)}
    out = [
        "digraph G {",
        f"graph [rankdir={rankdir}, nodesep=0.22, ranksep=0.32, fontname=Helvetica];",
        "node [fixedsize=true, label=\"\", shape=box];",
        "edge [fontname=Helvetica, fontsize=8];",
    ]
    for m in children:
        w, hgt = sizes[m]
        out.append(f"n{index[m]} [width={w / PT:.3f}, height={hgt / PT:.3f}];")
    for agg, label in edges:
        attrs = []
        if label:
            attrs.append(f"label={_q(label)}")
        if agg.back and agg.back == agg.total:
            attrs.append("constraint=false")
        if agg.kind == CONTROL:
            attrs.append("weight=0")
        tail = f"n{index[agg.src]}"
        head = f"n{index[agg.dst]}"
        out.append(f"{tail} -> {head} [{', '.join(attrs)}];")
    out.append("}")
    return "\n".join(out)


def _run_dot(sources: list[str]) -> list[dict]:
    """Lay out several graphs in one ``dot`` process; returns their ``-Tjson0`` objects."""
    try:
        proc = subprocess.run(
            ["dot", "-Tjson0"], input="\n".join(sources).encode("utf-8"),
            capture_output=True, check=False,
        )
    except FileNotFoundError:
        raise ExecutableNotFound() from None
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GraphvizTbError(f"Graphviz dot failed: {message[-1] if message else 'no output'}")
    text = proc.stdout.decode("utf-8")
    decoder = json.JSONDecoder()
    results, pos = [], 0
    while len(results) < len(sources):
        while pos < len(text) and text[pos].isspace():
            pos += 1
        obj, pos = decoder.raw_decode(text, pos)
        results.append(obj)
    return results


def _run_batch(sources: list[str]) -> list[dict | None]:
    """One dot process for the batch; if dot refuses it, each graph alone, so one graph it
    cannot lay out (an overwide node) gets ``None`` and the fallback, not the whole batch."""
    try:
        return list(_run_dot(sources))
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


# --------------------------------------------------------------------------- composition


@dataclass
class GroupLayout:
    """One group's own layout, relative to its content's lower-left corner.

    ``pos`` holds each visible child's centre; ``wires`` the edges between children.  The HTML
    viewer receives these per group and composes them exactly as :func:`_compose` does.
    """

    width: float
    height: float
    pos: dict[Member, tuple[float, float]]
    wires: list[Wire]


def _visible_children(group: Group, keep: set[Member] | None) -> list[Member]:
    if keep is None:
        return list(group.children)
    return [c for c in group.children if c in keep]


def compute_layout(
    h: Hierarchy,
    options: RenderOptions,
    *,
    expanded: frozenset[Group] | None = None,
    keep: set[Member] | None = None,
    progress: Callable[[int], None] | None = None,
) -> Scene:
    """Lay out the visible part of the hierarchy.

    Parameters
    ----------
    expanded:
        Groups drawn open (default: :func:`expanded_groups` for ``options``).
    keep:
        When set, only these members are drawn (``--focus``).
    progress:
        Called with the number of group layouts finished, for progress bars.
    """
    expanded = expanded if expanded is not None else expanded_groups(h, options)
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
                        sizes[c] = (max(loc.width + 2 * PAD, leaf_size(c)[0]),
                                    loc.height + 2 * PAD + LABEL_H)
                        lines[c] = (c.label,)
                    else:
                        w, hh, ls = leaf_size(c)
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
            edges = [(agg, edge_label(h, agg, dtypes=options.dtypes) if options.shapes else "")
                     for agg in aggs]
            nodes = main + stubs
            jobs.append((g, nodes, aux, edges, group_dot(nodes, sizes, edges, options.rankdir)))
        results = _layout_all([j[4] for j in jobs], progress)
        for (g, nodes, aux, edges, _), res in zip(jobs, results, strict=True):
            local = _read_local(h, res, nodes, edges) if res is not None else None
            if local is None or _too_flat(local):
                local = _rows_layout(h, nodes, sizes, edges, options.rankdir)
            layouts[g] = local
            if aux:
                _place_aux(layouts[g], sorted(aux, key=lambda m: m.name), sizes)
    return _compose(h, layouts, sizes, lines, expanded)


#: A group layout wider than this (points) and much wider than high is re-done in rows.
_MAX_WIDTH = 14_400.0


def _too_flat(local: GroupLayout) -> bool:
    return local.width > _MAX_WIDTH and local.width > 4 * local.height


def _rows_layout(h: Hierarchy, nodes: list[Member], sizes: dict[Member, tuple[float, float]],
                 edges: list[tuple[AggEdge, str]], rankdir: str) -> GroupLayout:
    """The fallback for a group dot cannot lay out well (hundreds of independent siblings lie
    side by side, until dot refuses the width): children in wrapped rows, in dataflow order,
    inputs first (at the bottom for ``BT``), edges as straight lines."""
    index = {m: i for i, m in enumerate(nodes)}
    preds: dict[Member, set[Member]] = {m: set() for m in nodes}
    for agg, _ in edges:
        if agg.src is not agg.dst and not (agg.back and agg.back == agg.total):
            preds[agg.dst].add(agg.src)
    order: list[Member] = []
    placed: set[Member] = set()
    pending = sorted(nodes, key=lambda m: index[m])
    while pending:  # Kahn-like, stable; cycles are broken by taking the first pending node
        ready = [m for m in pending if preds[m] <= placed] or pending[:1]
        order.extend(ready)
        placed.update(ready)
        pending = [m for m in pending if m not in placed]
    area = sum(sizes[m][0] * sizes[m][1] for m in nodes)
    target = max(max(sizes[m][0] for m in nodes), (area * 2.0) ** 0.5)
    gap = 18.0
    rows: list[list[Member]] = [[]]
    width = 0.0
    for m in order:
        if rows[-1] and width + sizes[m][0] > target:
            rows.append([])
            width = 0.0
        rows[-1].append(m)
        width += sizes[m][0] + gap
    pos: dict[Member, tuple[float, float]] = {}
    y = 0.0
    layout_w = 0.0
    for row in rows:
        row_h = max(sizes[m][1] for m in row)
        x = 0.0
        for m in row:
            pos[m] = (x + sizes[m][0] / 2, y + row_h / 2)
            x += sizes[m][0] + gap
        layout_w = max(layout_w, x - gap)
        y += row_h + 2 * gap
    height = y - 2 * gap
    if rankdir == "TB":  # inputs at the top instead
        pos = {m: (x, height - yy) for m, (x, yy) in pos.items()}
    wires = []
    for agg, label in edges:
        (x0, y0), (x1, y1) = pos[agg.src], pos[agg.dst]
        tip = (x1, y1 - sizes[agg.dst][1] / 2 if y1 > y0 else y1 + sizes[agg.dst][1] / 2)
        start = (x0, y0)
        wires.append(Wire(agg, [start, start, tip, tip], None, label,
                          ((x0 + x1) / 2, (y0 + y1) / 2) if label else None,
                          _edge_width(h, agg)))
    return GroupLayout(layout_w, height, pos, wires)


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


def _read_local(h: Hierarchy, res: dict, children: list[Member],
                edges: list[tuple[AggEdge, str]]) -> GroupLayout:
    bb = _floats(res.get("bb", "0,0,0,0"))
    pos: dict[Member, tuple[float, float]] = {}
    for obj in res.get("objects", []):
        name = obj.get("name", "")
        if name.startswith("n") and "pos" in obj:
            x, y = _floats(obj["pos"])
            pos[children[int(name[1:])]] = (x - bb[0], y - bb[1])
    wires = []
    for e, (agg, label) in zip(res.get("edges", []), edges, strict=True):
        points, arrow = _parse_spline(e.get("pos", ""))
        shift = [(x - bb[0], y - bb[1]) for x, y in points]
        tip = (arrow[0] - bb[0], arrow[1] - bb[1]) if arrow else None
        lp = None
        if "lp" in e:
            lx, ly = _floats(e["lp"])
            lp = (lx - bb[0], ly - bb[1])
        wires.append(Wire(agg, shift, tip, label, lp, _edge_width(h, agg)))
    return GroupLayout(bb[2] - bb[0], bb[3] - bb[1], pos, wires)


def _compose(
    h: Hierarchy,
    layouts: dict[Group, GroupLayout],
    sizes: dict[Member, tuple[float, float]],
    lines: dict[Member, tuple[str, ...]],
    expanded: frozenset[Group],
) -> Scene:
    root = layouts[h.root]
    scene = Scene(width=root.width, height=root.height, expanded=expanded, layouts=layouts,
                  sizes=sizes)
    stack: list[tuple[Group, float, float]] = [(h.root, 0.0, 0.0)]
    while stack:
        group, ox, oy = stack.pop()
        loc = layouts[group]
        for wire in loc.wires:
            scene.wires.append(Wire(
                wire.agg, [(x + ox, y + oy) for x, y in wire.points],
                (wire.arrow[0] + ox, wire.arrow[1] + oy) if wire.arrow else None,
                wire.label,
                (wire.label_pos[0] + ox, wire.label_pos[1] + oy) if wire.label_pos else None,
                wire.width,
            ))
        for child, (x, y) in sorted(loc.pos.items(), key=lambda kv: kv[0].name):
            w, hh = sizes[child]
            ax, ay = x + ox, y + oy
            is_open = child in expanded
            scene.boxes.append(Box(child, ax, ay, w, hh, is_open, lines[child]))
            if is_open:
                inner = layouts[child]  # type: ignore[index]
                # Content sits centred horizontally, PAD above the bottom border.
                cx = ax - inner.width / 2
                cy = ay - hh / 2 + PAD
                stack.append((child, cx, cy))  # type: ignore[arg-type]
    return scene
