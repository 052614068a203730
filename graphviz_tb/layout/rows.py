"""The rows fallback: a group far too wide for ``dot`` (thousands of unconnected children) is
laid out in rows, its edges drawn straight between neighbours and along the gaps between rows
and a lane at the left otherwise, so no line crosses a box it does not join."""

from __future__ import annotations

import math
from itertools import pairwise

from ..group.tree import AggEdge, Member
from ..model.graph import DATA
from ..style import ARROW_SIZE
from . import engine
from .parts import GroupLayout, Stub, Wire
from .text import outline, text_width

__all__ = ["rows_layout", "too_flat"]

#: A group layout wider than this (points) and much wider than high is re-done in rows.
_MAX_WIDTH = 14_400.0


def too_flat(local: GroupLayout) -> bool:
    return local.width > _MAX_WIDTH and local.width > 4 * local.height


def rows_layout(nodes: list[Member], sizes: dict[Member, tuple[float, float]],
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
    drawn = width if agg.kind == DATA else 1.0  # as draw/dot.py draws it
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
    drawn = width if agg.kind == DATA else 1.0  # as draw/dot.py draws it
    back = min(_ARROW + engine.current().arrow_pullback(drawn), length / 2) / length
    end = (tip[0] - (tip[0] - start[0]) * back, tip[1] - (tip[1] - start[1]) * back)
    third = ((2 * start[0] + end[0]) / 3, (2 * start[1] + end[1]) / 3)
    two = ((start[0] + 2 * end[0]) / 3, (start[1] + 2 * end[1]) / 3)
    mid = ((start[0] + end[0]) / 2, (start[1] + end[1]) / 2)
    lp = (mid[0] + text_width(label, 8) / 2 + 4, mid[1]) if label else None
    return Wire(agg, [start, third, two, end], tip, label, lp, width)
