"""One group laid out by Graphviz: its DOT (children as boxes of known size), the runs batched
on every core and cached by the DOT's text, and the positions and splines read back."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from ..errors import GraphvizTbError
from ..group.tree import AggEdge, Member
from ..model.graph import CONTROL, DATA
from ..style import PT
from . import engine
from .parts import ARROW_SIZE, STUB_WEIGHT, GroupLayout, Stub, Wire
from .text import edge_look, outline, text_width

if TYPE_CHECKING:
    from ..group.tree import Hierarchy
    from ..options import RenderOptions

__all__ = ["attach_label", "group_dot", "laid_edge", "layout_all", "read_local"]


_BATCH = 64  # group layouts per engine call


_cache: dict[str, dict | None] = {}


def _q(text: str) -> str:
    """A DOT quoted string (used for edge labels, which carry shapes we format ourselves)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def laid_edge(h: Hierarchy, agg: AggEdge, options: RenderOptions
               ) -> tuple[AggEdge, str, float]:
    """An edge of a group's layout problem: its label and its width (the tensors it carries
    worked out once for both)."""
    label, width = edge_look(h, agg, shapes=options.shapes, dtypes=options.dtypes)
    return agg, label, width


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
            # Drawn this thick (draw/dot.py): newer Graphviz leaves the arrowhead room for
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


def layout_all(sources: list[str], progress: Callable[[int], None] | None
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


def read_local(res: dict, children: list[Member],
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
    half = text_width(label, 8) / 2
    qx, qy = min(_bezier_points(points), key=lambda q: (q[0] - lp[0]) ** 2 + (q[1] - lp[1]) ** 2)
    if rankdir in ("BT", "TB"):
        if math.hypot(qx - lp[0], qy - lp[1]) <= half + 10:
            return lp
        return (qx + (half + 4) * (1 if lp[0] >= qx else -1), qy)
    if math.hypot(qx - lp[0], qy - lp[1]) <= 14:
        return lp
    return (qx, qy + 8 * (1 if lp[1] >= qy else -1))
