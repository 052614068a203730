"""One group laid out by Graphviz: its DOT (children as boxes of known size), the runs batched
on every core and cached by the DOT's text (the recent ones: :class:`LayoutCache`), and the
positions and splines read back."""

from __future__ import annotations

import math
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from ..errors import GraphvizTbError
from ..escaping import dot_string
from ..group.tree import AggEdge, Member
from ..model.graph import CONTROL, DATA
from ..style import (
    ARROW_SIZE,
    EDGE_LABEL_SIZE,
    LABEL_GAP,
    LABEL_GAP_ALONG,
    LABEL_REACH,
    LABEL_REACH_ALONG,
    NODESEP,
    PT,
    RANKSEP,
    STUB_WEIGHT,
)
from . import engine
from .parts import GroupLayout, Stub, Wire
from .text import edge_look, outline, text_width

if TYPE_CHECKING:
    from ..group.tree import Hierarchy
    from ..options import LayoutOptions

__all__ = ["LayoutCache", "attach_label", "group_dot", "laid_edge", "layout_all", "read_local"]


_BATCH = 64  # group layouts per engine call


class LayoutCache:
    """Graphviz's answers by DOT text, the least recently used dropped first once the texts
    kept pass ``max_chars`` in all.

    Why a cache: laying out is most of a render, and the same DOT gets the same answer.  A
    graph drawn again reuses every group's layout: a notebook cell run again, the page after
    the SVG of the same view, a docs build drawing a graph another page drew, the tests
    drawing each sample many times.  Why bounded: a session that draws graph after graph
    would otherwise keep every layout it ever made.  Why by characters: an answer holds
    about 17 bytes per character of its DOT, so the bound is a memory budget whatever the
    groups' sizes; the default (4 million characters, about 70 MB) holds the layouts of
    about a hundred views of an 18,000-op training step at depth 3 (38,000 characters each),
    so the recent graphs, the ones drawn again, stay.  One text over the whole budget is not
    kept.  A lock keeps it whole when an API user renders from several threads at once.
    """

    def __init__(self, max_chars: int = 4_000_000) -> None:
        self.max_chars = max_chars
        #: The characters of the DOT texts kept.
        self.chars = 0
        self._items: OrderedDict[str, dict | None] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def held(self, sources: Iterable[str]) -> dict[str, dict | None]:
        """The answers kept for these DOT texts, each now the most recently used."""
        with self._lock:
            found = {}
            for source in sources:
                if source in self._items:
                    self._items.move_to_end(source)
                    found[source] = self._items[source]
            return found

    def add(self, source: str, result: dict | None) -> None:
        """Keep an answer (None: Graphviz refused the graph), dropping the least recently
        used ones until the texts fit the budget."""
        if len(source) > self.max_chars:
            return
        with self._lock:
            if source not in self._items:  # another thread may have laid it out meanwhile
                self.chars += len(source)
            self._items[source] = result
            self._items.move_to_end(source)
            while self.chars > self.max_chars:
                dropped, _ = self._items.popitem(last=False)
                self.chars -= len(dropped)


_cache = LayoutCache()


def laid_edge(h: Hierarchy, agg: AggEdge, options: LayoutOptions
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
        f"graph [rankdir={rankdir}, nodesep={NODESEP}, ranksep={RANKSEP}, fontname=Helvetica];",
        "node [fixedsize=true, label=\"\", shape=box];",
        f"edge [fontname=Helvetica, fontsize={EDGE_LABEL_SIZE}, arrowsize={ARROW_SIZE}];",
    ]
    for m in children:
        w, hgt = sizes[m]
        shape = ", shape=ellipse" if outline(m) == "ellipse" else ""
        out.append(f"n{index[m]} [width={w / PT:.3f}, height={hgt / PT:.3f}{shape}];")
    for j, (agg, label, width) in enumerate(edges):
        attrs = [f"id=e{j}"]
        if label:
            attrs.append(f"label={dot_string(label)}")
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
    """Lay out many group graphs: cached ones free, the rest batched over all cores (each
    answered from this call's results, whatever the cache keeps of them)."""
    known = _cache.held(sources)
    todo = sorted({s for s in sources if s not in known}, key=len)
    batches = [todo[i:i + _BATCH] for i in range(0, len(todo), _BATCH)]
    if batches:
        workers = max(1, min(len(batches), os.cpu_count() or 1))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for batch, results in zip(batches, pool.map(_run_batch, batches), strict=True):
                for src, res in zip(batch, results, strict=True):
                    known[src] = res
                    _cache.add(src, res)
                if progress:
                    progress(len(batch))
    return [known[s] for s in sources]


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


#: Even steps of the parameter at which each cubic segment of a path is sampled, and the
#: golden-section steps that then narrow the neighbourhood of every sample nearer than both
#: its neighbours: work fixed per segment, however long it is drawn (sampling every few
#: points along the path would grow with the edges' drawn length).  ``spline.js``
#: does the same, operation for operation, so the page puts a label where Python does.
SPLINE_SAMPLES = 8
SPLINE_REFINE = 30

#: The golden section's smaller part, written out so that JavaScript has the same bits.
_GOLDEN = 0.6180339887498949


#: A cubic Bézier segment: its four points, flat.
_Segment = tuple[float, float, float, float, float, float, float, float]


def _point_at(segments: list[_Segment], s: float) -> tuple[float, float]:
    """The point at ``s`` along a path of cubic Béziers ``(x0, y0, ..., x3, y3)``: segment
    ``int(s)`` at parameter ``s - int(s)`` (products, not powers: the page's JavaScript gets
    the same bits)."""
    i = min(int(s), len(segments) - 1)
    t = s - i
    x0, y0, x1, y1, x2, y2, x3, y3 = segments[i]
    u = 1 - t
    a, b, c, d = u * u * u, 3 * t * u * u, 3 * t * t * u, t * t * t
    return a * x0 + b * x1 + c * x2 + d * x3, a * y0 + b * y1 + c * y2 + d * y3


def nearest_on_spline(points: list[tuple[float, float]], p: tuple[float, float],
                      enough: float = 0.0) -> tuple[float, float]:
    """The point of a B-spline as DOT writes it (start, then three points per segment; at
    least one segment) nearest ``p``, or the first sample within ``enough`` of it (all a
    caller asking whether the path passes that close needs).

    Each segment is sampled at :data:`SPLINE_SAMPLES` even steps; around every sample nearer
    than both its neighbours, golden-section search narrows the nearest point down (the
    distance is one-humped that close, or the sample stays), and the nearest of those wins
    (the first, on a tie).
    """
    px, py = p
    segments: list[_Segment] = [(*points[i], *points[i + 1], *points[i + 2], *points[i + 3])
                                for i in range(0, len(points) - 3, 3)]

    def dist(s: float) -> float:
        x, y = _point_at(segments, s)
        return (x - px) * (x - px) + (y - py) * (y - py)

    last = len(segments) * SPLINE_SAMPLES
    near = []
    for k in range(last + 1):
        near.append(dist(k / SPLINE_SAMPLES))
        if near[k] <= enough * enough:
            return _point_at(segments, k / SPLINE_SAMPLES)
    best, best_d = 0.0, near[0]
    for k, d in enumerate(near):
        if (k and d >= near[k - 1]) or (k < last and d > near[k + 1]):
            continue
        s, found = _golden(dist, max(0, k - 1) / SPLINE_SAMPLES, min(last, k + 1) / SPLINE_SAMPLES)
        if found >= d:  # no nearer than the sample itself
            s, found = k / SPLINE_SAMPLES, d
        if found < best_d:
            best, best_d = s, found
    return _point_at(segments, best)


def _golden(f: Callable[[float], float], lo: float, hi: float) -> tuple[float, float]:
    """Where ``f`` is least on ``[lo, hi]`` (one-humped there), to
    :data:`SPLINE_REFINE` golden-section steps, and its value there."""
    c, d = hi - (hi - lo) * _GOLDEN, lo + (hi - lo) * _GOLDEN
    fc, fd = f(c), f(d)
    for _ in range(SPLINE_REFINE):
        if fc < fd:
            hi, d, fd = d, c, fc
            c = hi - (hi - lo) * _GOLDEN
            fc = f(c)
        else:
            lo, c, fc = c, d, fd
            d = lo + (hi - lo) * _GOLDEN
            fd = f(d)
    s = (lo + hi) / 2
    return s, f(s)


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
    half = text_width(label, EDGE_LABEL_SIZE) / 2
    across = rankdir in ("BT", "TB")
    touch = half + LABEL_REACH if across else LABEL_REACH_ALONG
    qx, qy = nearest_on_spline(points, lp, touch)
    dx, dy = qx - lp[0], qy - lp[1]
    if math.sqrt(dx * dx + dy * dy) <= touch:  # as the page computes it, bit for bit
        return lp
    if across:
        return (qx + (half + LABEL_GAP) * (1 if lp[0] >= qx else -1), qy)
    return (qx, qy + LABEL_GAP_ALONG * (1 if lp[1] >= qy else -1))
