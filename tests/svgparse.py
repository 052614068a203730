"""Reading the SVG we produce the way a person reads the picture: nodes and edges by class,
titles as full names, fills, dash patterns, label texts and box geometry."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
NS = {"svg": "http://www.w3.org/2000/svg"}


def classes(el: ET.Element) -> set[str]:
    return set(el.get("class", "").split())


def title(el: ET.Element) -> str:
    node = el.find("svg:title", NS)
    return "" if node is None or node.text is None else node.text


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg.encode("utf-8"))


def op_name(text: str) -> str:
    """The op a title names: an op sharing its name with a scope is titled ``name/(label)``."""
    base, sep, tail = text.rpartition("/(")
    if sep and tail.endswith(")") and base.rsplit("/", 1)[-1] == tail[:-1]:
        return base
    return text


def node_groups(root: ET.Element, kind: str | None = None) -> dict[str, ET.Element]:
    """Drawn nodes by full name (the last one wins when a group and its op share a name)."""
    out = {}
    for g in root.iter("{http://www.w3.org/2000/svg}g"):
        cls = classes(g)
        if "node" in cls and (kind is None or kind in cls):
            out[op_name(title(g)) if "op" in cls else title(g)] = g
    return out


def edge_groups(root: ET.Element) -> list[ET.Element]:
    return [g for g in root.iter("{http://www.w3.org/2000/svg}g") if "edge" in classes(g)]


def edge_path(e: ET.Element) -> ET.Element:
    return next(e.iter("{http://www.w3.org/2000/svg}path"))


def texts(g: ET.Element) -> list[str]:
    """The lines of visible text a drawn box shows, in order."""
    return ["".join(t.itertext()) for t in g.iter("{http://www.w3.org/2000/svg}text")]


def fill_of(g: ET.Element) -> str:
    for child in g.iter():
        if child.tag.endswith(("path", "polygon", "ellipse")) and child.get("fill"):
            return child.get("fill", "")
    return ""


def _numbers(text: str) -> list[float]:
    return [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", text)]


def bbox(g: ET.Element) -> tuple[float, float, float, float]:
    """Bounding box of a node's outline (its first path, polygon or ellipse)."""
    for child in g.iter():
        tag = child.tag.rsplit("}", 1)[-1]
        if tag == "ellipse":
            cx, cy = float(child.get("cx", 0)), float(child.get("cy", 0))
            rx, ry = float(child.get("rx", 0)), float(child.get("ry", 0))
            return cx - rx, cy - ry, cx + rx, cy + ry
        if tag in ("path", "polygon"):
            nums = _numbers(child.get("d") or child.get("points") or "")
            xs, ys = nums[0::2], nums[1::2]
            return min(xs), min(ys), max(xs), max(ys)
    raise AssertionError(f"node {title(g)!r} has no outline")


def assert_no_overlaps(root: ET.Element) -> None:
    """Any two drawn boxes are either disjoint or one holds the other (an open group)."""
    boxes = [(title(g), bbox(g)) for g in node_groups(root).values()
             if "legend" not in classes(g)]
    eps = 0.5
    for i, (na, a) in enumerate(boxes):
        for nb, b in boxes[i + 1:]:
            disjoint = a[2] <= b[0] + eps or b[2] <= a[0] + eps or \
                a[3] <= b[1] + eps or b[3] <= a[1] + eps
            a_in_b = a[0] >= b[0] - eps and a[2] <= b[2] + eps and \
                a[1] >= b[1] - eps and a[3] <= b[3] + eps
            b_in_a = b[0] >= a[0] - eps and b[2] <= a[2] + eps and \
                b[1] >= a[1] - eps and b[3] <= a[3] + eps
            assert disjoint or a_in_b or b_in_a, f"{na!r} overlaps {nb!r}: {a} vs {b}"
