"""The picture oracle: what a person sees in a picture we drew, checked against the op graph.

The suite once passed while most edges joined the wrong boxes, because every test read the
picture's structure and none its geometry.  This module reads the geometry.  It turns a picture
(our SVG, or the viewer's live DOM) into plain records, boxes with their outlines and edges with
where their paths start, where their arrows point, their dashes, width and label, and checks
every claim the picture makes:

* each edge starts on the border of the box (or stub) it names as its source, and its arrow
  ends on the border of its target, pointing at it, its line running into the arrowhead;
* it carries its own style and label: dashed when only control dependencies travel, a double
  line when only references do, otherwise solid; its label names the distinct tensors that
  travel (one tensor's shape, or ``N tensors``), drawn beside its own path;
* it runs through no box it does not join (open groups around its ends aside);
* every model edge between two visible boxes is drawn exactly once, as an edge or a stub;
* a stub names an auxiliary node drawn beside it, and its edges lead to that node; it sits
  beside the box at its edge's other end, across the ranks (a stub far aside reads as an edge
  to somewhere else), and no other box lies between the two along its edge (a stub past a
  neighbour reads as the neighbour's);
* a group box says how many ops it holds, and a scope holds every op named under it, and
  besides only loose ops of an enclosing level (TF2's gradient sums join ``gradient_tape``);
* two groups share a fill exactly when their structure is equal (a check of its own, not the
  renderer's templates), grey means no other group anywhere has that structure, and the legend
  counts every instance in the whole graph;
* arrows point from producer to consumer along the rank direction (up for ``BT``).

The expectations come from the model (its op graph and its NodeDefs' recorded shapes) and
from the hierarchy's membership (which ops a box holds).  Nothing here reuses the layout,
aggregation, template or styling code being checked.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import networkx as nx

from graphviz_tb.group.tree import Group, Hierarchy, Member, OpNode
from graphviz_tb.model.graph import CONTROL, DATA, REF, tensor_of
from graphviz_tb.model.shapes import format_shape
from graphviz_tb.style import OTHER_REPEATED

SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}"
#: How far (points) a path end may lie from the outline it should touch.
TOLERANCE = 3.5
#: How deep (points) a line may run inside a box it does not join: it may graze an outline.
CROSS_DEPTH = 2.0
#: How far (points) a line may stop short of its arrowhead's base (rounding in the drawing).
ARROW_GAP = 1.0
#: The farthest a stub may sit aside from the box at the other end of its edge (points,
#: across the ranks, box to box).
STUB_REACH = 72.0
GREY = {"#dcdcdc", "#4a4a4a"}
#: The one fill different structures may share: the legend's "other repeated structures".
SHARED = set(OTHER_REPEATED.values())


# --------------------------------------------------------------------------- records


@dataclass
class Box:
    """A drawn box.  ``key`` is the drawing's own id; ``kind`` is op, group, stub or legend."""

    key: str
    name: str
    kind: str
    shape: str  # "ellipse" or "rect"
    cx: float
    cy: float
    w: float
    h: float
    fill: str = ""
    texts: list[str] = field(default_factory=list)
    open: bool = False
    classes: set[str] = field(default_factory=set)

    def distance_to_outline(self, x: float, y: float) -> float:
        """How far a point lies from this box's outline (inside or outside)."""
        dx, dy = x - self.cx, y - self.cy
        if self.shape == "ellipse":
            rx, ry = self.w / 2, self.h / 2
            r = math.hypot(dx / rx, dy / ry) if rx and ry else 0.0
            if r == 0:
                return min(rx, ry)
            return abs(1 - 1 / r) * math.hypot(dx, dy)
        hw, hh = self.w / 2, self.h / 2
        ox, oy = abs(dx) - hw, abs(dy) - hh
        if ox <= 0 and oy <= 0:
            return min(-ox, -oy)
        return math.hypot(max(ox, 0.0), max(oy, 0.0))

    def contains(self, other: Box, eps: float = 0.5) -> bool:
        return (abs(other.cx - self.cx) + other.w / 2 <= self.w / 2 + eps
                and abs(other.cy - self.cy) + other.h / 2 <= self.h / 2 + eps)


@dataclass
class Edge:
    """A drawn edge: its claimed ends (box keys), geometry and style, in drawing coordinates
    (y grows downwards)."""

    key: str
    src: str
    dst: str
    title: str
    points: list[tuple[float, float]]  # the path's points: start, Bézier controls, end
    tip: tuple[float, float] | None  # the arrowhead polygon's point
    dashed: bool
    lines: int  # parallel strokes: 1, or 3 for Graphviz's double line (colour a:b:a)
    width: float
    label: str
    label_xy: tuple[float, float] | None
    tooltip: str = ""
    classes: set[str] = field(default_factory=set)
    #: Where the arrowhead's outline stroke visibly ends, past its polygon's point (the mitre
    #: of a stroked point reaches half the stroke width over the sine of half its angle).
    stroke_tip: tuple[float, float] | None = None
    #: The middle of the arrowhead's base: where the line must meet it (within half the
    #: arrowhead's outline stroke, ``head_stroke``, which covers the base's own edge).
    base: tuple[float, float] | None = None
    head_stroke: float = 0.0

    def samples(self, step: float = 2.0) -> list[tuple[float, float]]:
        """Points along the drawn cubic Bézier path, about ``step`` points apart."""
        pts = self.points
        out = [pts[0]]
        for i in range(0, len(pts) - 3, 3):
            p0, p1, p2, p3 = pts[i:i + 4]
            length = math.dist(p0, p1) + math.dist(p1, p2) + math.dist(p2, p3)
            n = max(4, int(length / step))
            for k in range(1, n + 1):
                t = k / n
                a, b, c, d = (1 - t) ** 3, 3 * t * (1 - t) ** 2, 3 * t * t * (1 - t), t ** 3
                out.append((a * p0[0] + b * p1[0] + c * p2[0] + d * p3[0],
                            a * p0[1] + b * p1[1] + c * p2[1] + d * p3[1]))
        return out


@dataclass
class Picture:
    boxes: dict[str, Box]
    edges: list[Edge]
    legend: list[tuple[str, str]] = field(default_factory=list)  # (fill, text)


# --------------------------------------------------------------------------- reading an SVG


def _numbers(text: str) -> list[float]:
    return [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", text or "")]


def _pairs(values: list[float]) -> list[tuple[float, float]]:
    return list(zip(values[0::2], values[1::2], strict=False))


def _title(el: ET.Element) -> str:
    node = el.find(f"{SVG}title")
    return node.text or "" if node is not None else ""


def _svg_box(g: ET.Element, key: str, classes: set[str]) -> Box:
    kind = ("stub" if "stub" in classes else "legend" if "legend" in classes
            else "op" if "op" in classes else "group")
    texts = [t.text or "" for t in g.iter(f"{SVG}text")]
    for el in g.iter():
        tag = el.tag.rsplit("}", 1)[-1]
        if tag == "ellipse" and el.get("fill") not in (None, "none", "transparent"):
            cx, cy = float(el.get("cx", 0)), float(el.get("cy", 0))
            rx, ry = float(el.get("rx", 0)), float(el.get("ry", 0))
            return Box(key, _title(g), kind, "ellipse", cx, cy, 2 * rx, 2 * ry,
                       el.get("fill", ""), texts, "expanded" in classes, classes)
        if tag in ("path", "polygon") and el.get("fill") not in (None, "none", "transparent"):
            xy = _pairs(_numbers(el.get("d") or el.get("points") or ""))
            xs, ys = [p[0] for p in xy], [p[1] for p in xy]
            x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
            return Box(key, _title(g), kind, "rect", (x0 + x1) / 2, (y0 + y1) / 2, x1 - x0,
                       y1 - y0, el.get("fill", ""), texts, "expanded" in classes, classes)
    # A stub is text only: its box is the text's extent.
    t = next(g.iter(f"{SVG}text"))
    x, y = float(t.get("x", 0)), float(t.get("y", 0))
    size = float(t.get("font-size", 7))
    w = len(t.text or "") * size * 0.6
    return Box(key, _title(g), kind, "rect", x, y - size * 0.35, w, size, "", texts, False,
               classes)


_DOT_EDGE = re.compile(r'^(\w+) -> (\w+) \[.*\bid="(e\d+)"', re.M)
_DOT_STUB = re.compile(r'^(\w+) \[shape=box, color=transparent, pos="([-\d.]+),([-\d.]+)!", '
                       r'width=([\d.]+), height=([\d.]+),.*class="stub"', re.M)
_DOT_POS = re.compile(r'^(\w+) \[.*?\bpos="([-\d.]+),([-\d.]+)!"', re.M)


def read_svg(svg: str, dot: str) -> Picture:
    """Read our SVG.  ``dot`` is the DOT of the same render (the same options give the same
    ids): it says which two drawn boxes each edge claims to join, which the SVG itself only
    says by name, and names can repeat (an op and a scope may share one)."""
    ends = {eid: (a, b) for a, b, eid in _DOT_EDGE.findall(dot)}
    stubs = {key: (float(x), -float(y), float(w) * 72, float(h) * 72)
             for key, x, y, w, h in _DOT_STUB.findall(dot)}
    placed = {key: (float(x), -float(y)) for key, x, y in _DOT_POS.findall(dot)}
    root = ET.fromstring(svg.encode("utf-8"))
    boxes: dict[str, Box] = {}
    edges: list[Edge] = []
    legend: list[tuple[str, str]] = []
    for g in root.iter(f"{SVG}g"):
        classes = set((g.get("class") or "").split())
        key = g.get("id", "")
        if "node" in classes:
            box = _svg_box(g, key, classes)
            boxes[key] = box
            if box.kind == "legend":
                legend = _svg_legend(g)
        elif "edge" in classes:
            edges.append(_svg_edge(g, key, ends[key], classes))
    # A stub is drawn as text only: its box is where the layout put it.  Graphviz may shift
    # the whole drawing when it draws; any other node tells by how much.
    shift = next(((b.cx - placed[k][0], b.cy - placed[k][1]) for k, b in boxes.items()
                  if b.kind in ("op", "group") and k in placed), (0.0, 0.0))
    for key, (x, y, w, h) in stubs.items():
        box = boxes[key]
        box.cx, box.cy, box.w, box.h = x + shift[0], y + shift[1], w, h
    return Picture(boxes, edges, legend)


def _svg_legend(g: ET.Element) -> list[tuple[str, str]]:
    """Legend rows as (swatch fill, text): a filled swatch is followed by its text."""
    rows: list[tuple[str, str]] = []
    fill = None
    for el in g.iter():
        tag = el.tag.rsplit("}", 1)[-1]
        if tag == "polygon" and el.get("fill") not in (None, "none", "transparent"):
            fill = el.get("fill")
        elif tag == "text" and fill is not None and (el.text or "").strip():
            rows.append((fill, el.text or ""))
            fill = None
    return rows


def _svg_edge(g: ET.Element, key: str, ends: tuple[str, str], classes: set[str]) -> Edge:
    paths = list(g.iter(f"{SVG}path"))
    main = paths[len(paths) // 2]  # the middle stroke of a double line is the edge's centre
    points = _pairs(_numbers(main.get("d", "")))
    polygons = list(g.iter(f"{SVG}polygon"))
    tip = stroke_tip = base = None
    head_stroke = 0.0
    if polygons:
        head = _pairs(_numbers(polygons[0].get("points", "")))
        # Graphviz's arrowhead: base corner, tip, base corner (closed): the tip is the corner
        # farthest from the path's end.
        end = points[-1]
        tip = max(head, key=lambda p: math.hypot(p[0] - end[0], p[1] - end[1]))
        stroke_tip = _stroke_tip(head, tip, polygons[0])
        base = _base(head, tip)
        if polygons[0].get("stroke") not in (None, "none", "transparent"):
            head_stroke = float(polygons[0].get("stroke-width", 1))
    texts = [t for t in g.iter(f"{SVG}text")]
    label = texts[0].text or "" if texts else ""
    label_xy = (float(texts[0].get("x", 0)), float(texts[0].get("y", 0)) - 3) if texts else None
    anchor = g.find(f".//{SVG}a")
    tooltip = anchor.get(f"{XLINK}title", "") if anchor is not None else ""
    return Edge(key, ends[0], ends[1], _title(g), points, tip,
                main.get("stroke-dasharray") is not None, len(paths),
                float(main.get("stroke-width", 1)), label, label_xy, tooltip, classes,
                stroke_tip, base, head_stroke)


def _base(head: list[tuple[float, float]], tip: tuple[float, float]) -> tuple[float, float]:
    """The middle of an arrowhead's base: the mean of its corners other than the point."""
    corners = [p for p in dict.fromkeys(head) if p != tip]
    return (sum(x for x, _ in corners) / len(corners), sum(y for _, y in corners) / len(corners))


def _stroke_tip(head: list[tuple[float, float]], tip: tuple[float, float],
                polygon: ET.Element) -> tuple[float, float] | None:
    """Where a stroked arrowhead visibly ends: its point pushed forward by the mitre of its
    outline (SVG's default joins are mitres up to a limit of 4, then bevels).

    Graphviz 2.43 puts the polygon's point on the target's outline, so a thick stroke pokes
    past it; newer Graphviz (graphviz-pure's 16.1) pulls the polygon back so that the visible
    tip lands there instead.  The oracle accepts either, each exactly.
    """
    if polygon.get("stroke") in (None, "none", "transparent"):
        return None
    base = [p for p in dict.fromkeys(head) if p != tip]
    if len(base) != 2:
        return None
    (ax, ay), (bx, by) = ((p[0] - tip[0], p[1] - tip[1]) for p in base)
    la, lb = math.hypot(ax, ay), math.hypot(bx, by)
    if not la or not lb:
        return None
    half = math.acos(max(-1.0, min(1.0, (ax * bx + ay * by) / (la * lb)))) / 2
    # Forward is away from the middle of the base.
    fx, fy = -(ax / la + bx / lb), -(ay / la + by / lb)
    norm = math.hypot(fx, fy)
    if not norm or not half:
        return None
    width = float(polygon.get("stroke-width", 1))
    reach = width / 2 / math.sin(half) if 1 / math.sin(half) <= 4 else \
        width / 2 * math.sin(half)
    return tip[0] + fx / norm * reach, tip[1] + fy / norm * reach


# --------------------------------------------------------------------------- reading the viewer

#: Run in the viewer page (``page.evaluate``): the drawn scene as the records above.
DOM_SCRIPT = (Path(__file__).with_name("picture_dom.js")).read_text(encoding="utf-8")


def read_dom(raw: dict[str, Any]) -> Picture:
    """The viewer's scene, as :data:`DOM_SCRIPT` returned it."""
    boxes = {}
    for b in raw["boxes"]:
        boxes[b["key"]] = Box(b["key"], b["name"], b["kind"], b["shape"], b["cx"], b["cy"],
                              b["w"], b["h"], b["fill"] or "", b["texts"], b["open"],
                              set(b["classes"]))
    edges = []
    for e in raw["edges"]:
        points = _pairs(_numbers(e["d"]))
        tip = base = None
        if e["poly"]:
            head = _pairs(_numbers(e["poly"]))
            tip = max(head, key=lambda p: math.hypot(p[0] - points[-1][0], p[1] - points[-1][1]))
            base = _base(head, tip)
        edges.append(Edge(e["key"], _dom_end(e["src"]), _dom_end(e["dst"]), e["title"], points,
                          tip, e["dashed"], 3 if "ref" in e["classes"] else 1, e["width"],
                          e["label"], (e["lx"], e["ly"]) if e["lx"] is not None else None,
                          e["title"], set(e["classes"]), base=base))
    return Picture(boxes, edges, [(fill, text) for fill, text in raw.get("legend", [])])


def _dom_end(value: str) -> str:
    """A wire's end as a box key: ``12`` is member 12, ``stub:5:12`` the stub of 5 near 12."""
    if value.startswith("stub:"):
        _, far, near = value.split(":")
        return f"s:{far}:{near}"
    return f"m:{value}"


# --------------------------------------------------------------------------- the model's side


def ops_under(member: Member) -> set[str]:
    """Every op (by name) a box stands for."""
    if isinstance(member, OpNode):
        return {member.name}
    assert isinstance(member, Group)
    return {m.name for m in member.walk() if isinstance(m, OpNode)}


class Truth:
    """What the model says a picture of hierarchy ``h`` must show."""

    def __init__(self, h: Hierarchy, *, dtypes: bool = False) -> None:
        self.h = h
        self.model = h.model
        self.graph = h.model.g
        self.dtypes = dtypes
        self._ops: dict[Member, set[str]] = {}

    def ops(self, member: Member) -> set[str]:
        if member not in self._ops:
            self._ops[member] = ops_under(member)
        return self._ops[member]

    def member(self, box: Box) -> Member:
        """The member a box of the picture draws, found by its name and kind."""
        if box.kind == "group":
            found = self.h.groups.get(box.name)
        else:  # an op sharing its name with a scope is titled ``scope/(label)``
            name = box.name.rpartition("/(")[0] if box.name.endswith(")") else box.name
            found = self.h.ops.get(name if name in self.h.groups else box.name)
        if box.name == "" and box.kind == "group":
            found = self.h.root
        assert found is not None, f"the picture draws {box.kind} {box.name!r}, which is no such"
        return found

    def model_edges(self, a: Member, b: Member) -> list[tuple[str, str, int, dict[str, Any]]]:
        """The op graph's edges from anything in ``a`` to anything in ``b``."""
        inside = self.ops(b)
        succ = self.graph.succ
        out = []
        for u in sorted(self.ops(a)):
            for v, keydict in succ[u].items():
                if v in inside and not (a is b and u == v and not isinstance(a, OpNode)):
                    out.extend((u, v, k, d) for k, d in keydict.items())
        return out

    def label(self, edges: list[tuple[str, str, int, dict[str, Any]]]) -> str:
        """The label the picture owes these edges: the carried tensors, counted distinct."""
        tensors = {tensor_of(u, d): (u, v, k) for u, v, k, d in edges if d["kind"] != CONTROL}
        if not tensors:
            return ""
        if len(tensors) > 1:
            return f"{len(tensors)} tensors"
        u, v, k = next(iter(tensors.values()))
        return format_shape(self.model.edge_tensor(u, v, k), dtype=self.dtypes)

    @staticmethod
    def kind(edges: list[tuple[str, str, int, dict[str, Any]]]) -> str:
        kinds = {d["kind"] for *_, d in edges}
        return DATA if DATA in kinds else REF if REF in kinds else CONTROL


# --------------------------------------------------------------------------- the checks


@dataclass
class Report:
    """What was checked and what was wrong, for assertion messages and the closing note."""

    edges: int = 0
    boxes: int = 0
    problems: list[str] = field(default_factory=list)

    def add(self, text: str) -> None:
        self.problems.append(text)

    def __bool__(self) -> bool:
        return not self.problems

    def summary(self, limit: int = 12) -> str:
        head = f"{len(self.problems)} problems in a picture of {self.boxes} boxes, " \
               f"{self.edges} edges"
        return "\n  ".join([head, *self.problems[:limit]])


#: Pictures and edges the oracle passed, per label (the tests use the Graphviz engine's name);
#: printed at the end of the run (conftest.py).
ORACLE_TALLY: defaultdict[str, list[int]] = defaultdict(lambda: [0, 0])


def tally(label: str, report: Report) -> int:
    """Count a passed picture under ``label``; returns its edges."""
    ORACLE_TALLY[label][0] += 1
    ORACLE_TALLY[label][1] += report.edges
    return report.edges


def check_picture(pic: Picture, h: Hierarchy, *, rankdir: str = "BT", dtypes: bool = False,
                  labels: bool = True, structure: bool = True) -> Report:
    """Every check in the module docstring; returns what failed."""
    truth = Truth(h, dtypes=dtypes)
    report = Report(edges=len(pic.edges), boxes=len(pic.boxes))
    members: dict[str, Member] = {}
    for key, box in pic.boxes.items():
        if box.kind in ("op", "group"):
            members[key] = truth.member(box)
    # Each box of an SVG its own title, so a reader finds an edge's ends by name (stubs aside:
    # a stub is titled after the auxiliary node it stands for).  The viewer's page names its
    # boxes by member id (``m:ID``) instead.
    titles = Counter(box.name for key, box in pic.boxes.items()
                     if box.kind in ("op", "group") and not key.startswith("m:"))
    for name, n in sorted(titles.items()):
        if n > 1:
            report.add(f"{n} boxes are titled {name!r}")
    stub_far = _stub_targets(pic, members, report)
    seen: Counter[tuple[Member, Member]] = Counter()
    aux = {m for key, m in members.items() if "aux" in pic.boxes[key].classes}
    stood_for: set[Member] = set()
    forward: list[tuple[str, Member, Member, Box, Box]] = []
    for edge in pic.edges:
        _check_edge(edge, pic, members, stub_far, truth, report, rankdir, labels, seen,
                    stood_for, forward)
    _check_directions(forward, seen, rankdir, report)
    for m in stood_for - aux:
        report.add(f"stubs stand for {m.name!r}, which is not drawn as an auxiliary node")
    _check_complete(pic, members, aux, truth, seen, report)
    _check_counts(pic, members, truth, report)
    if structure:
        _check_colours(pic, members, truth, report)
    return report


def _stub_targets(pic: Picture, members: dict[str, Member], report: Report
                  ) -> dict[str, list[Member]]:
    """The drawn nodes each stub may stand for: those drawn under the name it shows (an op and
    a scope may share a name; the edge's other end decides which, see :func:`_stub_far`)."""
    by_name: dict[str, list[Member]] = defaultdict(list)
    for key, m in members.items():
        by_name[pic.boxes[key].name].append(m)
    out = {}
    for key, box in pic.boxes.items():
        if box.kind != "stub":
            continue
        if key.startswith("s:"):  # the viewer says which member a stub stands for
            far = members.get(f"m:{key.split(':')[1]}")
            candidates = [far] if far is not None else []
        else:
            candidates = by_name.get(box.name, [])
        if not candidates:
            report.add(f"stub {box.name or key!r} names no drawn node")
            continue
        shown = " ".join(box.texts).strip()
        for far in candidates:
            if shown and shown.rstrip("…") != far.label[:len(shown.rstrip("…"))]:
                report.add(f"stub shows {shown!r} but stands for {far.name!r}")
        out[key] = candidates
    return out


def _stub_far(candidates: list[Member], near: Member, where: str, report: Report
              ) -> Member | None:
    """The auxiliary node a stub beside ``near`` stands for: drawn in the same group."""
    same = [m for m in candidates if m.parent is near.parent and m is not near]
    if len(same) != 1:
        report.add(f"{where}: its stub stands for no auxiliary node beside {near.name!r}")
        return None
    return same[0]


def _check_edge(edge: Edge, pic: Picture, members: dict[str, Member],
                stub_far: dict[str, list[Member]], truth: Truth, report: Report, rankdir: str,
                labels: bool, seen: Counter[tuple[Member, Member]], aux: set[Member],
                forward: list[tuple[str, Member, Member, Box, Box]]) -> None:
    where = f"edge {edge.key} {edge.title!r}"
    if edge.src not in pic.boxes or edge.dst not in pic.boxes:
        report.add(f"{where}: joins a box that is not drawn")
        return
    src_box, dst_box = pic.boxes[edge.src], pic.boxes[edge.dst]
    if edge.src in members and edge.dst in members:
        a, b = members[edge.src], members[edge.dst]
    elif edge.src in members and edge.dst in stub_far:
        a = members[edge.src]
        b = _stub_far(stub_far[edge.dst], a, where, report)  # type: ignore[assignment]
    elif edge.dst in members and edge.src in stub_far:
        b = members[edge.dst]
        a = _stub_far(stub_far[edge.src], b, where, report)  # type: ignore[assignment]
    else:
        report.add(f"{where}: joins two stubs, or a stub already reported")
        return
    if a is None or b is None:
        return
    if edge.src in stub_far:
        aux.add(a)
    if edge.dst in stub_far:
        aux.add(b)
    if edge.src in stub_far or edge.dst in stub_far:
        apart = _gap(src_box, dst_box, across=rankdir in ("BT", "TB"))
        if apart > STUB_REACH:
            report.add(f"{where}: its stub sits {apart:.0f} pt aside from the box at its other "
                       "end")
        between = _box_between(pic, edge.src, edge.dst)
        if between is not None:
            report.add(f"{where}: {between!r} lies between its stub and the box at its other "
                       "end")
    seen[(a, b)] += 1
    # The title (the tooltip's first line in the SVG) names the two ends.
    title = f"{truth.h.title(a)}->{truth.h.title(b)}"
    if edge.title and "->" in edge.title and edge.title != title:
        report.add(f"{where}: titled {edge.title!r} but joins {title!r}")
    # Geometry: the path starts on its source's outline, the arrow ends on its target's.
    start = edge.points[0]
    d0 = src_box.distance_to_outline(*start)
    if d0 > TOLERANCE:
        report.add(f"{where}: starts {d0:.0f} pt from its source {a.name!r}")
    if edge.tip is None:
        report.add(f"{where}: has no arrowhead")
    else:
        d1 = dst_box.distance_to_outline(*edge.tip)
        if edge.stroke_tip is not None:  # either Graphviz's convention (see _stroke_tip)
            d1 = min(d1, dst_box.distance_to_outline(*edge.stroke_tip))
        if d1 > TOLERANCE:
            report.add(f"{where}: its arrow ends {d1:.0f} pt from its target {b.name!r}")
        end = edge.points[-1]
        if math.dist(edge.tip, (dst_box.cx, dst_box.cy)) > \
                math.dist(end, (dst_box.cx, dst_box.cy)) + 0.5:
            report.add(f"{where}: its arrow points away from {b.name!r}")
        gap = math.dist(end, edge.base) - edge.head_stroke / 2 if edge.base else 0.0
        if gap > ARROW_GAP:
            report.add(f"{where}: its line stops {gap:.1f} pt short of its arrowhead")
    crossed = _crossed(edge, pic, src_box, dst_box)
    if crossed:
        report.add(f"{where}: runs through {crossed!r}, a box it does not join")
    # What travels: style and label.
    edges = truth.model_edges(a, b)
    if not edges:
        report.add(f"{where}: no model edge runs from {a.name!r} to {b.name!r}")
        return
    kind = truth.kind(edges)
    if edge.dashed != (kind == CONTROL):
        report.add(f"{where}: drawn {'dashed' if edge.dashed else 'solid'} but carries {kind}")
    if (edge.lines > 1) != (kind == REF):
        report.add(f"{where}: drawn with {edge.lines} strokes but carries {kind}")
    if labels:
        want = truth.label(edges)
        got = edge.label
        if got.endswith("…") and want.startswith(got[:-1]):
            got = want
        if got != want:
            report.add(f"{where}: labelled {edge.label!r}, but what travels is {want!r}")
        if edge.label and edge.label_xy is not None:
            near = min(math.dist(edge.label_xy, p) for p in edge.samples())
            reach = len(edge.label) * 8 * 0.6 / 2 + 14
            if near > reach:
                report.add(f"{where}: its label {edge.label!r} sits {near:.0f} pt from its path")
    # Direction (checked once every edge is known, see :func:`_check_directions`).
    if not any(d["back"] for *_, d in edges):
        forward.append((where, a, b, src_box, dst_box))


def _crossed(edge: Edge, pic: Picture, src: Box, dst: Box) -> str | None:
    """The first box (op or group) the edge's line runs through, more than ``CROSS_DEPTH``
    inside its outline, other than its own ends and the open groups around them: a line
    across a box reads as an edge into it, and a click there lands on the line."""
    points = edge.samples(3.0)
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    for key, box in pic.boxes.items():
        if box.kind not in ("op", "group") or key in (edge.src, edge.dst):
            continue
        hw, hh = box.w / 2 - CROSS_DEPTH, box.h / 2 - CROSS_DEPTH
        if hw <= 0 or hh <= 0 or box.cx + hw < x0 or box.cx - hw > x1 \
                or box.cy + hh < y0 or box.cy - hh > y1:
            continue
        if box.contains(src) or box.contains(dst):
            continue  # an open group the edge starts or ends inside
        for x, y in points:
            dx, dy = abs(x - box.cx), abs(y - box.cy)
            inside = (dx / hw) ** 2 + (dy / hh) ** 2 < 1 if box.shape == "ellipse" \
                else dx < hw and dy < hh
            if inside:
                return box.name
    return None


def _box_between(pic: Picture, one: str, other: str) -> str | None:
    """A box drawn across the straight line between two boxes' centres, outside both (open
    groups holding either end, and boxes holding or held by either, aside), or None."""
    a, b = pic.boxes[one], pic.boxes[other]
    steps = max(8, int(math.dist((a.cx, a.cy), (b.cx, b.cy)) / 2))
    points = [(a.cx + (b.cx - a.cx) * k / steps, a.cy + (b.cy - a.cy) * k / steps)
              for k in range(1, steps)]
    for key, box in pic.boxes.items():
        if key in (one, other) or box.kind not in ("op", "group"):
            continue
        if box.contains(a) or box.contains(b) or a.contains(box) or b.contains(box):
            continue
        if any(abs(x - box.cx) < box.w / 2 - 1 and abs(y - box.cy) < box.h / 2 - 1
               for x, y in points):
            return box.name
    return None


def _gap(a: Box, b: Box, *, across: bool) -> float:
    """How far apart two boxes lie across the ranks (along x when ``across``, the ranks
    running up or down; else along y): 0 when their extents overlap.  Along the ranks a stub
    is where its rank is, which a tall neighbour in that rank decides."""
    if across:
        return max(abs(a.cx - b.cx) - (a.w + b.w) / 2, 0.0)
    return max(abs(a.cy - b.cy) - (a.h + b.h) / 2, 0.0)


def _check_directions(forward: list[tuple[str, Member, Member, Box, Box]],
                      seen: Counter[tuple[Member, Member]], rankdir: str, report: Report) -> None:
    """The consumer sits further along the rank direction than its producer (up for ``BT``),
    for every edge that closes no loop of the drawn graph: where the boxes drawn form a
    directed cycle, some edge of it must point back, and that is the grouping's doing, not the
    drawing's."""
    drawn = nx.DiGraph(list(seen))
    loop = {}
    for i, part in enumerate(nx.strongly_connected_components(drawn)):
        for m in part:
            loop[m] = i
    for where, a, b, src, dst in forward:
        if loop[a] == loop[b] or src.kind == "stub" or dst.kind == "stub":
            continue
        ahead = {"BT": src.cy - dst.cy, "TB": dst.cy - src.cy, "LR": dst.cx - src.cx,
                 "RL": src.cx - dst.cx}[rankdir]
        if ahead <= 0:
            report.add(f"{where}: the consumer is not {rankdir}-ahead of the producer")


def _visible_box_of(op: str, truth: Truth, drawn: set[Member]) -> Member | None:
    """The innermost drawn box that holds an op (None when it is not drawn at all)."""
    m: Member | None = truth.h.ops[op]
    while m is not None and m not in drawn:
        m = m.parent
    return m


def _check_complete(pic: Picture, members: dict[str, Member], aux: set[Member],
                    truth: Truth, seen: Counter[tuple[Member, Member]], report: Report) -> None:
    """Every model edge between two drawn boxes is drawn once, between the two children of
    the lowest open group holding both (an edge to an auxiliary node, as a stub; an edge
    between two auxiliary nodes of one group is left out)."""
    drawn = set(members.values())
    opened = {m for key, m in members.items() if pic.boxes[key].open}
    opened.add(truth.h.root)
    expected: set[tuple[Member, Member]] = set()
    for u, v, _k, _d in truth.model.iter_edges():
        a, b = _visible_box_of(u, truth, drawn), _visible_box_of(v, truth, drawn)
        if a is None or b is None:
            continue
        if a is b and (a in opened or not isinstance(a, OpNode) or u != v):
            continue
        while a.depth > b.depth:
            a = a.parent  # type: ignore[assignment]
        while b.depth > a.depth:
            b = b.parent  # type: ignore[assignment]
        while a.parent is not b.parent:
            a, b = a.parent, b.parent  # type: ignore[assignment]
        if a is b:
            continue
        expected.add((a, b))
    for pair, n in seen.items():
        if n > 1:
            report.add(f"{pair[0].name!r} -> {pair[1].name!r} is drawn {n} times")
    missing = [p for p in expected - set(seen) if not (p[0] in aux and p[1] in aux)]
    for a, b in sorted(missing, key=lambda p: (p[0].name, p[1].name))[:10]:
        report.add(f"model edges run from {a.name!r} to {b.name!r}, but no edge is drawn")


_OPS = re.compile(r"([\d,]+) ops?\b")
#: The count of a Keras layer graph's box (its nodes are layers), and of a group of variables
#: that are all function arguments (no ops: it counts the handles).
_LAYERS = re.compile(r"([\d,]+) layers?\b")
_HANDLES = re.compile(r"^([\d,]+) handles?$")


def _check_counts(pic: Picture, members: dict[str, Member], truth: Truth, report: Report
                  ) -> None:
    """A collapsed group's caption counts its ops; a scope holds its named ops (and loose
    ops of an enclosing level, no others)."""
    graph = truth.graph
    for key, m in members.items():
        box = pic.boxes[key]
        if not isinstance(m, Group) or box.open or m is truth.h.root:
            continue
        count = _LAYERS if truth.h.model.kind == "conceptual" else _OPS
        found = next((count.search(t) for t in box.texts if count.search(t)), None)
        real = sum(1 for o in truth.ops(m) if graph.nodes[o]["role"] == "op")
        handles = next((_HANDLES.search(t) for t in box.texts if _HANDLES.search(t)), None)
        if found is None and m.kind == "variables" and real == 0 and handles is not None:
            if int(handles.group(1).replace(",", "")) != len(truth.ops(m)):
                report.add(f"group {m.name!r} says {handles.group(1)} handles but holds "
                           f"{len(truth.ops(m))}")
            continue
        if found is None:
            report.add(f"group {m.name!r} shows no op count")
            continue
        shown = int(found.group(1).replace(",", ""))
        if shown != real:
            report.add(f"group {m.name!r} says {shown} ops but holds {real}")
        if m.kind == "scope" and "//" not in m.name:
            # Every op named under it, and besides those only ops of an enclosing level that
            # have no scope of their own (TF2's gradient sums, which join the gradients).
            held = {o for o in truth.ops(m) if graph.nodes[o]["role"] == "op"}
            named = {o for o, d in graph.nodes(data=True) if d["role"] == "op" and (
                o == m.name or o.startswith(m.name + "/"))}
            if named - held:
                report.add(f"scope {m.name!r} holds {len(held)} ops, but {len(named)} are "
                           "named under it")
            for o in sorted(held - named):
                if not _loose_from_above(o, m.name, graph):
                    report.add(f"scope {m.name!r} holds {o!r}, which has a scope elsewhere")
                    break


def _loose_from_above(op: str, scope: str, graph: Any) -> bool:
    """Was ``op`` part of a loose unit of a level enclosing ``scope``: under the deepest
    scope enclosing both, its next name component is an op of its own (a loose op, or a
    call or tiny scope named after its op), not a scope of its own elsewhere."""
    parts = op.split("/")
    depth = 0
    while depth < len(parts) - 1 and scope.startswith("/".join(parts[:depth + 1]) + "/"):
        depth += 1
    unit = "/".join(parts[:depth + 1])
    return unit in graph.nodes and not scope.startswith(unit + "/")


# ----------------------------------------------------------------- structure, independently


def _structure_graph(g: Group) -> nx.DiGraph:
    """A group's subtree as one labelled digraph: members (op type, or group kind) joined by
    tree edges and by the model's edges between ops inside, with their kinds (names, and the
    function a body came from, are not structure)."""
    d = nx.DiGraph()
    graph = g.owner.model.g
    stack: list[Member] = [g]
    ops: list[str] = []
    while stack:
        m = stack.pop()
        if isinstance(m, Group):
            d.add_node(m.name + "\0g", t=("group", m.kind if m is not g else ""))
            for c in m._children:
                key = c.name + ("\0g" if isinstance(c, Group) else "\0o")
                d.add_edge(m.name + "\0g", key, t="tree")
                stack.append(c)
        else:
            d.add_node(m.name + "\0o", t=("op", m.op))  # type: ignore[attr-defined]
            ops.append(m.name)
    inside = set(ops)
    for u in ops:
        for v, keydict in graph.succ[u].items():
            if v in inside:
                kinds = tuple(sorted(Counter(x["kind"] for x in keydict.values()).items()))
                d.add_edge(u + "\0o", v + "\0o", t=kinds)
    return d


def _shown_as(g: Group) -> Group:
    """A series of groups is drawn in its members' structure."""
    kids = g._children
    if g.kind == "series" and kids and isinstance(kids[0], Group):
        return kids[0]  # type: ignore[return-value]
    return g


def _expanded(d: nx.DiGraph) -> nx.Graph:
    """A labelled digraph as an undirected node-labelled graph with its directions kept: each
    edge becomes a tail-side node and a head-side node between its two ends."""
    u = nx.Graph()
    for n, t in d.nodes(data="t"):
        u.add_node(("n", n), t=str(t))
    for i, (a, b, t) in enumerate(d.edges(data="t")):
        u.add_node(("o", i), t=f"out {t}")
        u.add_node(("i", i), t=f"in {t}")
        u.add_edges_from([(("n", a), ("o", i)), (("o", i), ("i", i)), (("i", i), ("n", b))])
    return u


#: Groups up to this many members are compared exactly (VF2++) as well as by hash.
_EXACT = 30


class StructureClasses:
    """Every group of a hierarchy partitioned by equal structure: the subtree graphs above
    compared by a Weisfeiler–Lehman hash, and exactly (labelled VF2++ isomorphism) where they
    are small enough for that to be quick.  Independent of the renderer's templates."""

    def __init__(self, h: Hierarchy) -> None:
        groups = [g for g in h.groups.values() if _shown_as(g) is g]
        buckets: dict[tuple, list[Group]] = defaultdict(list)
        graphs: dict[Group, nx.Graph] = {}
        for g in groups:
            d = graphs[g] = _expanded(_structure_graph(g))
            buckets[(d.number_of_nodes(),
                     d.number_of_edges(), nx.weisfeiler_lehman_graph_hash(
                         d, node_attr="t", iterations=8))].append(g)
        self.cls: dict[Group, int] = {}
        next_id = 0
        for members in buckets.values():
            reps: list[tuple[int, nx.Graph]] = []
            for g in sorted(members, key=lambda x: x.name):
                small = graphs[g].number_of_nodes() <= _EXACT
                for cid, rep in reps:
                    if not small or nx.vf2pp_is_isomorphic(graphs[g], rep, node_label="t"):
                        self.cls[g] = cid
                        break
                else:
                    next_id += 1
                    reps.append((next_id, graphs[g]))
                    self.cls[g] = next_id
        self.size = Counter(self.cls.values())

    def of(self, g: Group) -> int:
        return self.cls[_shown_as(g)]


def _check_colours(pic: Picture, members: dict[str, Member], truth: Truth, report: Report
                   ) -> None:
    """Same fill exactly when same structure (but the one colour the legend gives the
    "other repeated structures", past the palette or too small for a colour of their own);
    grey exactly when the structure is unique; the legend counts every instance in the whole
    graph."""
    classes = StructureClasses(truth.h)
    fills: dict[int, set[str]] = defaultdict(set)
    owners: dict[str, set[int]] = defaultdict(set)
    for key, m in members.items():
        if not isinstance(m, Group) or m is truth.h.root:
            continue
        fill = pic.boxes[key].fill.lower()
        cid = classes.of(m)
        unique = classes.size[cid] == 1
        if unique != (fill in GREY):
            report.add(f"group {m.name!r} is drawn {'grey' if fill in GREY else fill} but its "
                       f"structure has {classes.size[cid]} instances")
        if fill not in GREY:
            fills[cid].add(fill)
            owners[fill].add(cid)
    for fs in fills.values():
        if len(fs) > 1:
            report.add(f"one structure is drawn in {len(fs)} colours: {sorted(fs)}")
    shared = {fill for fill, text in pic.legend if text.endswith(
        ("repeated structure", "repeated structures"))}
    for fill, cids in owners.items():
        if len(cids) > 1 and not (fill in SHARED and fill in shared):
            report.add(f"colour {fill} is shared by {len(cids)} different structures")
    for fill, text in pic.legend:
        found = re.search(r"× (\d+)$", text)
        if not found or fill.lower() in GREY:
            continue
        cids = owners.get(fill.lower(), set())
        if len(cids) != 1:
            continue  # a legend row for a structure not drawn open here
        cid = next(iter(cids))
        if int(found.group(1)) != classes.size[cid]:
            report.add(f"legend says {text!r} but that structure has "
                       f"{classes.size[cid]} instances")
