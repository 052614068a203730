"""Where an edge's label is anchored: the point of the edge's drawn path nearest the place
Graphviz chose, found to a small fraction of a point, with work that does not grow with how
long the path is drawn, and the same in the page as in Python (the viewer's ``spline.js``
mirrors ``layout.dot_layout.nearest_on_spline``)."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import graphviz_tb
from graphviz_tb.layout import dot_layout
from graphviz_tb.layout.dot_layout import (
    SPLINE_REFINE,
    SPLINE_SAMPLES,
    attach_label,
    nearest_on_spline,
)
from graphviz_tb.layout.scene import build_scene
from graphviz_tb.options import RenderOptions
from graphviz_tb.view.opening import choose_picture

SAMPLES = Path(__file__).parents[1] / "samples"
SPLINE_JS = Path(dot_layout.__file__).parents[1] / "draw" / "viewer" / "src" / "spline.js"

Point = tuple[float, float]


@pytest.fixture(scope="module")
def drawn_paths() -> list[list[Point]]:
    """Every edge path Graphviz draws for the MNIST sample with every group open (435 paths
    of one to six segments) and for the control-flow sample."""
    out = []
    for name in ("mnist_tf1.pb", "control_flow_v1.pbtxt"):
        h = graphviz_tb.load(SAMPLES / name).hierarchy()
        options = RenderOptions(expand_all=True)
        scene = build_scene(h, options.layout, choose_picture(h, options.view))
        out += [w.points for w in scene.wires if len(w.points) >= 4]
    assert len(out) > 400
    return out


def _places(paths: list[list[Point]], seed: int, scale: float
            ) -> list[tuple[list[Point], Point]]:
    """Each path scaled, with a place within 20 points (scaled too) of one of its points:
    where the nearest point is worth finding exactly."""
    rng = random.Random(seed)
    out = []
    for path in paths:
        points = [(x * scale, y * scale) for x, y in path]
        along = _dense(points, 8)
        x, y = along[rng.randrange(len(along))]
        out.append((points, (x + rng.uniform(-20, 20) * scale,
                             y + rng.uniform(-20, 20) * scale)))
    return out


def _dense(points: list[Point], steps: int) -> np.ndarray:
    """``steps + 1`` points along each cubic segment of a path, end points included."""
    t = np.linspace(0.0, 1.0, steps + 1)[:, None]
    out = []
    for i in range(0, len(points) - 3, 3):
        p0, p1, p2, p3 = (np.array(p) for p in points[i:i + 4])
        u = 1 - t
        out.append(u ** 3 * p0 + 3 * t * u ** 2 * p1 + 3 * t ** 2 * u * p2 + t ** 3 * p3)
    return np.concatenate(out)


@pytest.mark.parametrize("scale", [1, 100])
def test_the_anchor_is_as_near_as_the_densest_sampling(drawn_paths: list[list[Point]],
                                                       scale: float) -> None:
    """Against 20,000 samples a segment (hundredths of a point apart), the anchor is never
    farther from the label's place.  Sampling every 4 points of the drawn path, as before,
    missed by up to half a point where the place is near the path."""
    worst = 0.0
    for points, p in _places(drawn_paths, 1, scale):
        qx, qy = nearest_on_spline(points, p)
        found = np.hypot(qx - p[0], qy - p[1])
        dense = _dense(points, 20_000)
        best = np.hypot(dense[:, 0] - p[0], dense[:, 1] - p[1]).min()
        worst = max(worst, (found - best) / scale)
    assert worst <= 1e-6, f"the anchor is {worst:.4f} pt farther than the densest sample"


def test_the_nearest_point_of_a_path_that_doubles_back_is_the_nearest_of_all() -> None:
    """A path out and back (a loop a control edge draws around a box) comes near a place
    twice: first at a distance, then closer.  A search that stops at the first point nearer
    than its neighbours anchors the label by the far pass; the anchor is the nearest point of
    the whole path, whichever pass and segment it lies on.  The places are drawn at random
    around the U-turn and checked against 20,000 samples a segment."""
    out_and_back = [(0.0, 0.0), (0.0, 60.0), (0.0, 120.0), (20.0, 160.0),
                    (40.0, 200.0), (80.0, 200.0), (100.0, 160.0),
                    (120.0, 120.0), (120.0, 60.0), (120.0, 0.0)]
    dense = _dense(out_and_back, 20_000)
    rng = random.Random(7)
    farther = 0
    for _ in range(200):
        p = (rng.uniform(60.0, 118.0), rng.uniform(0.0, 150.0))  # nearer the way back
        qx, qy = nearest_on_spline(out_and_back, p)
        best = np.hypot(dense[:, 0] - p[0], dense[:, 1] - p[1]).min()
        farther += np.hypot(qx - p[0], qy - p[1]) - best > 1e-6
        assert qx > 60.0, (p, (qx, qy))  # on the way back, not the way out
    assert farther == 0


def test_the_work_does_not_grow_with_the_drawn_length(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same path drawn ten thousand times longer costs the same number of points along
    it, a fixed number a segment (every 4 points it was 5.6 million points on one picture of
    long edges, so the picture's geometry set the cost)."""
    evaluated = 0
    point_at = dot_layout._point_at

    def counting(segments: list[tuple[float, ...]], s: float) -> Point:
        nonlocal evaluated
        evaluated += 1
        return point_at(segments, s)

    monkeypatch.setattr(dot_layout, "_point_at", counting)
    counts = []
    anchors = []
    for scale in (1, 10_000):
        points = [(0.0, 0.0), (30.0 * scale, 10.0 * scale), (60.0 * scale, 80.0 * scale),
                  (90.0 * scale, 90.0 * scale), (120 * scale, 100 * scale),
                  (150 * scale, 10 * scale), (200 * scale, 0.0)]
        evaluated = 0
        anchors.append(nearest_on_spline(points, (70.0 * scale, 50.0 * scale)))
        counts.append(evaluated)
    samples = 2 * SPLINE_SAMPLES + 1
    assert counts[0] == counts[1] <= samples + (samples // 2 + 1) * (SPLINE_REFINE + 3) + 1
    assert anchors[1] == pytest.approx((anchors[0][0] * 10_000, anchors[0][1] * 10_000))


def test_a_label_far_from_its_path_moves_beside_the_nearest_point() -> None:
    """Graphviz left the label 70 points off a vertical path: it goes beside the path, at the
    height of the path's nearest point, a gap of half its width and 4 points from it."""
    points = [(0.0, 0.0), (0.0, 50.0), (0.0, 100.0), (0.0, 150.0)]
    x, y = attach_label(points, (70.0, 75.0), "3×3", "BT")
    half = dot_layout.text_width("3×3", 8) / 2
    assert (x, y) == pytest.approx((half + 4, 75.0))
    assert attach_label(points, (5.0, 75.0), "3×3", "BT") == (5.0, 75.0)  # touching: kept


def test_the_page_anchors_labels_where_python_does(drawn_paths: list[list[Point]]) -> None:
    """The viewer's ``spline.js``, run by Node on the same paths, gives the same anchors
    bit for bit, so a group laid out in the page labels its edges where the SVG does."""
    node = shutil.which("node") or shutil.which("nodejs")
    assert node, "Node.js is needed to run the viewer's JavaScript (make viewer installs it)"
    cases = [*_places(drawn_paths, 2, 1), *_places(drawn_paths, 3, 1000)]
    script = (f"import {{ nearestOnSpline }} from {json.dumps(SPLINE_JS.as_uri())};\n"
              "let text = '';\n"
              "process.stdin.on('data', (d) => { text += d; });\n"
              "process.stdin.on('end', () => {\n"
              "  const out = JSON.parse(text).map(([p, x, y, r]) => nearestOnSpline(p, x, y, r));\n"
              "  process.stdout.write(JSON.stringify(out));\n"
              "});\n")
    # Half of them ask only whether the path passes within a label's reach of the place.
    enough = [(i % 2) * (5 + i % 17) for i in range(len(cases))]
    given = [[[c for pt in points for c in pt], p[0], p[1], r]
             for (points, p), r in zip(cases, enough, strict=True)]
    done = subprocess.run([node, "--input-type=module", "-e", script], input=json.dumps(given),
                          capture_output=True, text=True, timeout=60, check=True)
    page = [tuple(q) for q in json.loads(done.stdout)]
    python = [nearest_on_spline(points, p, r) for (points, p), r in zip(cases, enough, strict=True)]
    assert page == python
