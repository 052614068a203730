"""What a person sees first in the viewer, at 1400×900 in real headless Chromium: names they
can read without zooming, and boxes that take a double-click anywhere, edges or not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_html import _bundle_or_fail

import graphviz_tb
from graphviz_tb.options import RenderOptions
from graphviz_tb.view.opening import choose_picture

pytestmark = [pytest.mark.browser, pytest.mark.tensorflow, pytest.mark.dot]

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
#: The smallest on-screen height of a box's name that reads without zooming.
READABLE_PX = 9.0

#: The height of every box name (10 pt text) in view, in screen pixels.
_NAME_HEIGHTS = """() => {
  const [W, H] = [window.innerWidth, window.innerHeight];
  return [...document.querySelectorAll('svg.canvas .nodes text, svg.canvas .frames text')]
    .filter((t) => t.getAttribute('font-size') === '10')
    .map((t) => t.getBoundingClientRect())
    .filter((r) => r.width > 0 && r.right > 0 && r.bottom > 0 && r.left < W && r.top < H)
    .map((r) => r.height);
}"""

#: Closed groups wholly in view (on the canvas, not under the toolbar or the status line),
#: largest first: [name, centre x, centre y].
_CLOSED_IN_VIEW = """() => {
  const c = document.querySelector('svg.canvas').getBoundingClientRect();
  const [W, H] = [Math.min(window.innerWidth, c.right), Math.min(window.innerHeight, c.bottom)];
  const open = new Set(window.tbgraph.boxes().filter((b) => b.open).map((b) => b.name));
  return [...document.querySelectorAll('svg.canvas [data-node]')]
    .filter((g) => !open.has(g.dataset.node) && g.querySelector('.shape')
      && g.classList.contains('group'))
    .map((g) => [g.dataset.node, g.querySelector('.shape').getBoundingClientRect()])
    .filter(([, r]) => r.left > c.left && r.top > c.top && r.right < W && r.bottom < H)
    .sort((a, b) => b[1].width * b[1].height - a[1].width * a[1].height)
    .map(([n, r]) => [n, r.left + r.width / 2, r.top + r.height / 2]);
}"""


def _open(browser: Any, path: Path) -> Any:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(path.resolve().as_uri())
    for _ in range(400):
        if page.evaluate("window.tbgraph && window.tbgraph.ready === true"):
            return page
        page.wait_for_timeout(50)
    raise AssertionError(f"{path.name}: the viewer never became ready")


@pytest.fixture(scope="module")
def first_pages(training_steps: dict[str, Any],
                tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The viewer pages of TF1 MNIST and two Keras training steps, one of them tall
    (DenseNet-121: 121 layers in a column)."""
    _bundle_or_fail()
    out = tmp_path_factory.mktemp("first_view")
    sources = {"mnist": SAMPLES / "mnist_tf1.pb",
               "resnet50": training_steps["resnet50_adam"].path,
               "densenet121": training_steps["densenet121_momentum"].path}
    pages = {}
    for name, source in sources.items():
        pages[name] = out / f"{name}.html"
        graphviz_tb.load(source).render(pages[name])
    return pages


@pytest.mark.parametrize("which", ["mnist", "resnet50", "densenet121"])
def test_the_first_view_draws_names_a_person_can_read(
        which: str, browser: Any, first_pages: dict[str, Path]) -> None:
    """At 1400×900, with no zoom, every box name in view stands 9 px or more; fitting the
    whole picture stays one key away."""
    page = _open(browser, first_pages[which])
    try:
        heights = page.evaluate(_NAME_HEIGHTS)
        assert len(heights) >= 3, "the first view shows names"
        assert min(heights) >= READABLE_PX, sorted(heights)[:5]
        page.keyboard.press("f")  # the whole picture, however small its names
        outside = page.evaluate("""() => [...document.querySelectorAll('svg.canvas [data-node]')]
          .map((g) => [g.dataset.node, g.getBoundingClientRect()])
          .filter(([, r]) => r.left < -1 || r.top < -1 || r.right > window.innerWidth + 1
            || r.bottom > window.innerHeight + 1).map(([n]) => n)""")
        assert outside == [], outside[:5]
    finally:
        page.close()


@pytest.mark.parametrize("which", ["mnist", "resnet50", "densenet121"])
def test_a_double_click_at_a_boxs_centre_opens_it(
        which: str, browser: Any, first_pages: dict[str, Path]) -> None:
    """The largest closed groups in the first view, each double-clicked at the centre of its
    box, open: no edge drawn over a box takes the click."""
    for k in range(3):  # each on a fresh page: opening one moves the others
        page = _open(browser, first_pages[which])
        try:
            closed = page.evaluate(_CLOSED_IN_VIEW)
            assert closed, "the first view shows a closed group"
            if k >= len(closed):
                break
            name, x, y = closed[k]
            page.mouse.dblclick(x, y)
            for _ in range(200):
                if name in {b["name"] for b in page.evaluate("window.tbgraph.boxes()")
                            if b["open"]}:
                    break
                page.wait_for_timeout(50)
            else:
                raise AssertionError(f"double-clicking {name!r} at its centre did not open it")
        finally:
            page.close()


def test_the_details_of_a_group_tbgraph_made_do_not_pass_its_name_off_as_a_scope(
        browser: Any, tmp_path: Path) -> None:
    """The SavedModel sample has prefix groups (``read…`` inside a call): their details say
    tbgraph grouped them and where, instead of showing ``StatefulPartitionedCall_1/read`` as
    if the model had that scope; a real scope still shows its full name."""
    _bundle_or_fail()
    graph = graphviz_tb.load(SAMPLES / "saved_model")
    h = graph.hierarchy()
    made = next(g for g in h.groups.values() if g.kind == "prefix")
    scope = next(g for g in h.groups.values() if g.kind == "scope")
    path = tmp_path / "saved_model.html"
    graph.render(path)
    page = _open(browser, path)
    try:
        shown = {}
        for group in (made, scope):
            page.evaluate("(n) => window.tbgraph.select(n)", group.name)
            page.wait_for_timeout(100)
            shown[group.kind] = page.evaluate(
                "document.querySelector('.details .fullname').textContent")
        parent = made.parent.name if made.parent is not None else ""
        assert shown["prefix"].startswith("grouped by tbgraph: names sharing a prefix")
        assert parent in shown["prefix"] and made.name not in shown["prefix"]
        assert shown["scope"] == scope.name
    finally:
        page.close()


#: Boxes in view, cut by the window's left edge, and the picture's own left edge on screen.
_LEFT_EDGE = """() => {
  const W = window.innerWidth;
  const shapes = [...document.querySelectorAll('svg.canvas [data-node] > .shape')]
    .map((s) => [s.parentNode.dataset.node, s.getBoundingClientRect()]);
  return {
    cut: shapes.filter(([, r]) => r.left < 0 && r.right > 0).map(([n]) => n),
    inView: shapes.filter(([, r]) => r.left >= 0 && r.right <= W).length,
    left: Math.min(...shapes.map(([, r]) => r.left)),
    width: Math.max(...shapes.map(([, r]) => r.right)) - Math.min(...shapes.map(([, r]) => r.left)),
  };
}"""


def test_a_picture_wider_than_the_window_starts_at_its_left_edge(
        browser: Any, tmp_path: Path) -> None:
    """The SavedModel sample opened three deep, at a readable zoom, is wider than 1400 px:
    centred, its serving call lost its left edge (``temperature`` cut in half).  The first
    view keeps the top box (an output) in the middle as far as the picture allows, never past
    its left edge; the rest is one drag away.  (Its default view, its variables folded beside
    the call, now fits.)"""
    _bundle_or_fail()
    path = tmp_path / "saved_model.html"
    graphviz_tb.load(SAMPLES / "saved_model").render(path, depth=3)
    page = _open(browser, path)
    try:
        seen = page.evaluate(_LEFT_EDGE)
        assert seen["width"] > 1400, "the picture fits: the test would prove nothing"
        assert seen["cut"] == [], seen
        assert seen["left"] >= 0 and seen["inView"] >= 10, seen
    finally:
        page.close()


#: The frame of the open group ``name`` on screen, and the window's size.
_FRAME = """(name) => {
  const g = [...document.querySelectorAll('svg.canvas [data-node]')]
    .find((e) => e.dataset.node === name);
  const r = g.querySelector('.shape').getBoundingClientRect();
  const bar = document.querySelector('.toolbar, header');
  return { top: r.top, bottom: r.bottom, left: r.left, right: r.right,
           W: window.innerWidth, H: window.innerHeight,
           below: bar ? bar.getBoundingClientRect().bottom : 0 };
}"""


@pytest.mark.parametrize("which", ["resnet50_adam", "densenet121_momentum"])
def test_the_first_view_of_a_training_step_shows_its_model(
        which: str, browser: Any, training_steps: dict[str, Any],
        first_pages: dict[str, Path]) -> None:
    """A step's top is its plumbing (outputs, NoOp, the optimizer), as inputs sit at the
    bottom: the first view shows the opened model instead, whole when its names stay
    readable so (ResNet-50), else its top part filling the window (DenseNet-121: 121 layers
    in a column).  The page names the model it leads with; it is the step's model scope."""
    step = training_steps[which]
    h = graphviz_tb.load(step.path).hierarchy()
    lead = choose_picture(h, RenderOptions().view).lead
    assert lead is not None and lead.name.split("/")[0].startswith(step.model), lead
    page = _open(browser, first_pages[which.split("_")[0]])
    try:
        frame = page.evaluate(_FRAME, lead.name)
        height = frame["H"] - frame["below"]
        assert frame["below"] <= frame["top"] <= frame["below"] + 0.15 * height, frame
        assert frame["left"] >= 0 and frame["right"] <= frame["W"], frame
        # The whole model in view, or its top part down to the window's bottom edge.
        assert frame["bottom"] <= frame["H"] or frame["bottom"] - frame["top"] >= 0.8 * height
        assert min(frame["bottom"], frame["H"]) - frame["top"] >= 0.6 * height, frame
        heights = page.evaluate(_NAME_HEIGHTS)
        assert min(heights) >= READABLE_PX, sorted(heights)[:5]
    finally:
        page.close()
