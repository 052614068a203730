"""Every picture tells the truth: the picture oracle (``picture.py``) over real graphs.

Each test draws a graph TensorFlow made, reads the picture back as a person would (boxes,
where each edge's path starts and where its arrow points, dashes, strokes, labels, fills and
the legend), and checks every claim against the op graph.  The static pictures are checked in
the SVG at several depths, fully expanded, without auxiliary nodes and in every rank
direction; the viewer is checked in its live DOM in Chromium, first as it opens and again after
every step of a sequence of expands and collapses.

The pictures are drawn through each Graphviz engine (``graphviz_engine``): Debian's native 2.43
and graphviz-pure, a port of Graphviz 16.1 that pip installs; the oracle must hold for both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pages import open_viewer
from picture import DOM_SCRIPT, Picture, check_picture, read_dom, read_svg, tally
from svgparse import op_name

import graphviz_tb
from graphviz_tb.layout import engine
from graphviz_tb.model.graph import tensor_of
from graphviz_tb.options import RenderOptions

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
SAMPLE_FILES = sorted([*SAMPLES.glob("*.pb"), *SAMPLES.glob("*.pbtxt"), *SAMPLES.glob("*.meta"),
                       SAMPLES / "saved_model", *(SAMPLES / "logs").iterdir()])
VARIANTS = [
    {"depth": 1}, {"depth": 2}, {"depth": 3}, {"expand_all": True},
    {"depth": 2, "aux": False}, {"expand_all": True, "aux": False},
    {"depth": 2, "rankdir": "TB"}, {"depth": 2, "rankdir": "LR"},
    {"depth": 2, "rankdir": "RL"}, {"depth": 2, "dtypes": True, "color_by": "op"},
]


def _variant_id(v: dict[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in v.items())


def assert_true_picture(graph: graphviz_tb.Graph, options: RenderOptions) -> int:
    """Render the SVG (and the DOT of the same render, which names each edge's two boxes),
    run the oracle, and return how many edges it checked."""
    svg = graph.render(options=options)
    dot = graph.render(format="dot", options=options)
    report = check_picture(read_svg(svg, dot), graph.hierarchy(options),
                           rankdir=options.rankdir, dtypes=options.dtypes,
                           structure=options.color_by == "structure")
    assert report, report.summary()
    return tally(engine.current().name, report)


# --------------------------------------------------------------------------- static pictures

pytestmark = pytest.mark.dot


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: p.name)
@pytest.mark.parametrize("variant", VARIANTS, ids=_variant_id)
def test_sample_pictures_are_true(graphviz_engine: str, path: Path,
                                  variant: dict[str, Any]) -> None:
    graph = graphviz_tb.load(path)
    edges = assert_true_picture(graph, RenderOptions(**variant))
    assert edges > 0


@pytest.mark.tensorflow
@pytest.mark.parametrize("variant", [{"depth": 1}, {"depth": 2}, {"depth": 3},
                                     {"expand_all": True}, {"depth": 3, "rankdir": "LR"}],
                         ids=_variant_id)
@pytest.mark.parametrize("name", ["resnet50", "tf1_training", "tf2_train_step", "keras_rnn",
                                  "tf1_rnn_training", "map_fn_cond"])
def test_tensorflow_pictures_are_true(graphviz_engine: str, tf_made: dict[str, Path],
                                      name: str, variant: dict[str, Any]) -> None:
    """Graphs TensorFlow made now: a Keras application's inference trace, a TF1 training
    graph with name scopes, a TF2 ``tf.function`` training step, and loops: Keras GRU and
    LSTM layers (``While`` over function bodies), a TF1 ``while_loop`` RNN trained by Adam
    (a loop and its gradient loop, with back edges) and ``map_fn`` around a ``cond``."""
    graph = graphviz_tb.load(tf_made[name])
    assert assert_true_picture(graph, RenderOptions(**variant)) > 0


#: The README's pictures and what each draws, from the repository's root.
README_PICTURES = {"mnist_tf1.svg": "samples/mnist_tf1.pb",
                   "resnet18_onnx.svg": "docs/models/resnet18.onnx",
                   "resnet18_add_graph.svg": "docs/models/resnet18_add_graph"}


@pytest.mark.parametrize("picture", sorted(README_PICTURES))
def test_the_readme_pictures_are_true(picture: str) -> None:
    """The README's pictures, exactly as committed, against what they draw (``make docs``
    draws them with Graphviz's own programs, the engine chosen when ``dot`` is present)."""
    root = SAMPLES.parent
    graph = graphviz_tb.load(root / README_PICTURES[picture])
    options = RenderOptions()
    assert (root / "docs" / "images" / picture).read_text(encoding="utf-8") == \
        graph.render(options=options), f"docs/images/{picture} is stale: run 'make docs'"
    assert_true_picture(graph, options)


def test_one_tensor_to_several_consumers_is_labelled_with_its_shape(graphviz_engine: str
                                                                    ) -> None:
    """MNIST's ``input`` scope hands the one reshaped image to two ops of ``conv1``: that is
    one tensor, labelled with its shape, and its tooltip names it."""
    import re

    graph = graphviz_tb.load(SAMPLES / "mnist_tf1.pb")
    h = graph.hierarchy()
    svg = graph.render()
    pic = read_svg(svg, graph.render(format="dot"))
    many = 0
    for edge in pic.edges:
        src, dst = pic.boxes[edge.src], pic.boxes[edge.dst]
        if src.kind == "stub" or dst.kind == "stub":
            continue
        a, b = h.lookup(src.name), h.lookup(dst.name)
        from picture import Truth

        edges = Truth(h).model_edges(a, b)  # type: ignore[arg-type]
        tensors = {tensor_of(u, d) for u, _, _, d in edges if d["kind"] != "control"}
        consumers = sum(1 for *_, d in edges if d["kind"] != "control")
        if len(tensors) == 1 and consumers > 1:
            many += 1
            assert "tensors" not in edge.label and edge.label, edge
            producer, index = next(iter(tensors))
            assert re.search(rf"{re.escape(producer)}:{index} \(\S", edge.tooltip), edge.tooltip
    assert many > 0, "the sample no longer has one tensor read twice across a group border"


def test_every_format_draws_the_same_positioned_document(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    """SVG, PNG and PDF are drawn by Graphviz from one positioned DOT document, the very text
    ``.dot`` output writes; so the geometry checked in the SVG is the geometry of them all
    (with Graphviz's own programs: graphviz-pure draws no PDF)."""
    from graphviz_tb import pipeline  # the driver hands the document to Graphviz

    graph = graphviz_tb.load(SAMPLES / "mnist_tf1.pb")
    seen: dict[str, str] = {}
    real = pipeline.run_neato

    def spy(doc: Any, fmt: str) -> bytes:
        seen[fmt] = doc.text
        return real(doc, fmt)

    monkeypatch.setattr(pipeline, "run_neato", spy)
    options = RenderOptions(depth=2)
    for fmt in ("svg", "png", "pdf"):
        graph.render(format=fmt, options=options)
    dot = graph.render(format="dot", options=options)
    assert seen["svg"] == seen["png"] == seen["pdf"] == dot


def test_the_fallback_row_layout_joins_its_own_boxes(graphviz_engine: str) -> None:
    """A group dot lays out absurdly wide falls back to rows: its straight edges still start
    on their source's outline and end, with an arrow, on their target's."""
    from tensorboard.compat.proto import graph_pb2

    gd = graph_pb2.GraphDef()
    gd.node.add(name="x", op="Placeholder")
    long = "a_rather_long_layer_name_like_keras_writes"
    for i in range(190):  # 190 short chains of wide boxes side by side: far wider than high
        gd.node.add(name=f"{long}_{i}", op="Relu").input.append("x")
        gd.node.add(name=f"{long}_{i}_out", op="Tanh").input.append(f"{long}_{i}")
    graph = graphviz_tb.load(gd)
    options = RenderOptions(series=False, prefix_groups=False)
    svg = graph.render(options=options)
    dot = graph.render(format="dot", options=options)
    pic = read_svg(svg, dot)
    report = check_picture(pic, graph.hierarchy(options), labels=True)
    # Rows read left to right then upwards: the direction rule is dot's, not this layout's.
    problems = [p for p in report.problems if "ahead of the producer" not in p]
    assert problems == [], "\n".join(problems[:10])
    assert len(pic.edges) > 100
    xs = [b.cx for b in pic.boxes.values()]
    ys = [b.cy for b in pic.boxes.values()]
    assert max(xs) - min(xs) < 4 * (max(ys) - min(ys)), "dot's flat layout, not the rows"



def test_the_oracle_sees_a_stub_drawn_past_a_neighbour() -> None:
    """A stub reads as belonging to the nearest box along its line: one drawn with another box
    between it and the box at its edge's other end is reported, though it stays near."""
    graph = graphviz_tb.load(SAMPLES / "mnist_tf1.pb")
    options = RenderOptions(depth=2)
    pic = read_svg(graph.render(options=options), graph.render(format="dot", options=options))
    h = graph.hierarchy(options)
    assert check_picture(pic, h), "the picture as drawn is true"
    edge = next(e for e in pic.edges if pic.boxes[e.dst].kind == "stub")
    stub, near = pic.boxes[edge.dst], pic.boxes[edge.src]
    other = min((b for b in pic.boxes.values() if b.kind == "op" and b is not near
                 and not b.contains(near) and not near.contains(b)),
                key=lambda b: (b.cx - near.cx) ** 2 + (b.cy - near.cy) ** 2)
    stub.cx, stub.cy = 2 * other.cx - near.cx, 2 * other.cy - near.cy  # past its neighbour
    problems = check_picture(pic, h).problems
    assert any("lies between its stub and the box at its other end" in p
               for p in problems), problems


# --------------------------------------------------------------------------- the viewer

def _open(browser: Any, graph: graphviz_tb.Graph, tmp_path: Path,
          options: RenderOptions | None = None) -> Any:
    """The graph's viewer page, written to ``tmp_path`` and opened once it is ready."""
    return open_viewer(browser, graph, tmp_path / "page.html", options)


def _check_dom(page: Any, graph: graphviz_tb.Graph, options: RenderOptions, step: str) -> int:
    pic = read_dom(page.evaluate(DOM_SCRIPT))
    report = check_picture(pic, graph.hierarchy(options), rankdir=options.rankdir,
                           dtypes=options.dtypes)
    assert report, f"after {step}: {report.summary()}"
    return tally(engine.current().name, report)


@pytest.mark.browser
@pytest.mark.parametrize(("sample", "steps"), [
    ("mnist_tf1.pb", ["+train", "+train/gradients", "+conv1", "-train", "+save",
                      "+train/gradients/conv1", "-conv1", "+fc1", "-train/gradients"]),
    ("keras_cnn.pb", ["+StatefulPartitionedCall", "+StatefulPartitionedCall/keras_cnn_1",
                      "+StatefulPartitionedCall/keras_cnn_1/conv_a_1",
                      "-StatefulPartitionedCall/keras_cnn_1", "-StatefulPartitionedCall"]),
    ("control_flow_v2.pb", ["+loop", "+loop/body", "+branch", "+branch/else", "-loop"]),
])
def test_the_viewer_draws_true_pictures_through_expand_and_collapse(
        graphviz_engine: str, browser: Any, tmp_path: Path, sample: str, steps: list[str]
) -> None:
    graph = graphviz_tb.load(SAMPLES / sample)
    options = RenderOptions()
    page = _open(browser, graph, tmp_path, options)
    try:
        checked = _check_dom(page, graph, options, "opening")
        graph.hierarchy(options)
        for step in steps:
            name = step[1:]
            if graph.hierarchy(options).groups.get(name) is None:
                pytest.fail(f"{sample} has no group {name!r} (the sample changed?)")
            verb = "expand" if step[0] == "+" else "collapse"
            done = page.evaluate(f"window.tbgraph.{verb}({name!r})")
            assert done is not False, f"{verb} {name} failed"
            checked += _check_dom(page, graph, options, step)
        assert checked > 0
        assert page.errors == []  # type: ignore[attr-defined]
    finally:
        page.close()


@pytest.mark.browser
@pytest.mark.tensorflow
@pytest.mark.parametrize("name", ["resnet50", "keras_rnn"])
def test_the_viewer_draws_tensorflow_graphs_true(graphviz_engine: str, browser: Any,
                                                 tmp_path: Path, tf_made: dict[str, Path],
                                                 name: str) -> None:
    graph = graphviz_tb.load(tf_made[name])
    options = RenderOptions(depth=2)
    page = _open(browser, graph, tmp_path, options)
    try:
        _check_dom(page, graph, options, "opening")
        h = graph.hierarchy(options)
        opened = [g.name for g in h.root.children if hasattr(g, "kind")][:1]
        deeper = [c.name for g in h.root.children if hasattr(g, "kind")
                  for c in g.children if hasattr(c, "kind")][:3]
        for name in [*opened, *deeper]:
            page.evaluate(f"window.tbgraph.expand({name!r})")
            _check_dom(page, graph, options, f"+{name}")
        for name in deeper:
            page.evaluate(f"window.tbgraph.collapse({name!r})")
            _check_dom(page, graph, options, f"-{name}")
    finally:
        page.close()


def test_control_flow_merges_are_drawn_in_place_not_aside() -> None:
    """A TF1 loop's ``Merge`` ops join its dataflow: they are no bookkeeping (as a summary
    merge is), so they stay in the picture with their edges, never moved aside to stubs."""
    graph = graphviz_tb.load(SAMPLES / "control_flow_v1.pbtxt")
    options = RenderOptions(expand_all=True)
    pic = read_svg(graph.render(options=options), graph.render(format="dot", options=options))
    merges = [b for b in pic.boxes.values() if b.kind == "op" and "Merge" in b.texts]
    assert merges, "the sample has no Merge op drawn"
    assert [b.name for b in merges if "aux" in b.classes] == []


def _assert_call_feeds_its_arguments(pic: Picture, h: Any) -> None:
    """keras_cnn's ``StatefulPartitionedCall`` drawn open: its call op in place (not aside as
    an auxiliary node, no stubs), one edge from it into each box of the body holding some of
    its 7 ``_Arg``s, and the picture true."""
    call = [k for k, b in pic.boxes.items()
            if b.kind == "op" and op_name(b.name) == "StatefulPartitionedCall"]
    assert len(call) == 1 and "aux" not in pic.boxes[call[0]].classes, call
    assert not [b.name for b in pic.boxes.values() if b.kind == "stub"]
    args = [n for n, op in h.ops.items() if op.role == "arg"
            and n.startswith("StatefulPartitionedCall/")]
    assert len(args) == 7
    drawn = {b.name: k for k, b in pic.boxes.items() if b.kind in ("op", "group")}
    body = h.groups["StatefulPartitionedCall"]
    holders = {drawn[next(a.name for a in [h.ops[n], *h.ops[n].ancestors()] if a.parent is body)]
               for n in args}
    assert {e.dst for e in pic.edges if e.src == call[0]} == holders, \
        "one edge from the call op into each of the body's boxes holding its arguments"
    report = check_picture(pic, h)
    assert report, report.summary()


def test_a_call_opened_into_its_body_feeds_its_arguments_in_place() -> None:
    """keras_cnn's default view opens ``StatefulPartitionedCall`` into its body.  The call op
    inside is the body's entry: it feeds every ``_Arg`` with its own inputs.  With seven inputs
    its degree made it an outlier, so it was moved aside as an auxiliary node: a lone ellipse
    in the group's corner, and a stub under each argument naming the group's own name.  (The
    captured variables' arguments now join the layers that read them.)"""
    graph = graphviz_tb.load(SAMPLES / "keras_cnn.pb")
    options = RenderOptions(expand_all=True)
    pic = read_svg(graph.render(options=options), graph.render(format="dot", options=options))
    _assert_call_feeds_its_arguments(pic, graph.hierarchy(options))


def _assert_names_shown_whole(pic: Picture, h: Any) -> int:
    """Every closed box shows its whole name (up to 60 characters), on one line or two, and no
    line longer than a box of a short name would be wide.  Returns how many were wrapped."""
    wrapped = 0
    for box in pic.boxes.values():
        if box.kind not in ("op", "group") or box.open or {"const", "stub"} & box.classes:
            continue
        # An op sharing its name with a scope is titled ``scope/(label)``.
        member = h.lookup(box.name) or h.ops.get(box.name.rsplit("/(", 1)[0])
        assert member is not None, box.name
        label, texts = member.label, [t.strip() for t in box.texts if t.strip()]
        lines = 1 if len(label) <= 28 else 2
        assert "".join(texts[:lines]) == label, (box.name, texts)
        assert all(len(t) <= 36 for t in texts[:lines]), (box.name, texts)
        wrapped += lines - 1
    return wrapped


def test_long_names_are_shown_whole_on_two_lines() -> None:
    """TF2 names a function's captured variables after the op reading them
    (``keras_cnn_1_conv_a_1_convolution_readvariableop_resource``): cut at 48 characters on one
    line, seven of them made keras_cnn's first picture 3,569 px wide and ended in ``…``.  They
    now join the layers that read them: every group open shows them."""
    graph = graphviz_tb.load(SAMPLES / "keras_cnn.pb")
    options = RenderOptions(expand_all=True)
    pic = read_svg(graph.render(options=options), graph.render(format="dot", options=options))
    assert _assert_names_shown_whole(pic, graph.hierarchy(options)) == 6


@pytest.mark.browser
def test_the_viewer_shows_long_names_as_the_svg_does(graphviz_engine: str, browser: Any,
                                                    tmp_path: Path) -> None:
    """The viewer wraps names rule for rule with the boxes Python sized."""
    graph = graphviz_tb.load(SAMPLES / "keras_cnn.pb")
    options = RenderOptions(expand_all=True)
    page = _open(browser, graph, tmp_path, options)
    try:
        pic = read_dom(page.evaluate(DOM_SCRIPT))
        assert _assert_names_shown_whole(pic, graph.hierarchy(options)) == 6
        # ... and laid out by the page itself, after a collapse and an expand.
        page.evaluate("window.tbgraph.collapse('StatefulPartitionedCall')")
        page.evaluate("window.tbgraph.expand('StatefulPartitionedCall')")
        pic = read_dom(page.evaluate(DOM_SCRIPT))
        assert _assert_names_shown_whole(pic, graph.hierarchy(options)) >= 6
        assert page.errors == []  # type: ignore[attr-defined]
    finally:
        page.close()


@pytest.mark.browser
def test_the_viewer_wraps_names_of_wide_characters_as_python_does(
        graphviz_engine: str, browser: Any, tmp_path: Path) -> None:
    """Python counts a name's characters, JavaScript's strings their UTF-16 units, in which an
    emoji or a mathematical letter is two: the viewer must wrap and cut by characters too."""
    from hostile_inputs import graph_def, node, write_pb

    names = ["\U0001f389" * 20, "conv_\U0001d465\U0001d466_" * 5, "\U0001d4b3" * 40 + "_tail",
             "layer_" + "\U0001f389" * 10 + "_" + "é" * 15]
    gd = graph_def([node("input", "Placeholder", attrs={}),
                    *(node(name, "Identity", ["input"]) for name in names)])
    graph = graphviz_tb.load(write_pb(tmp_path / "wide.pb", gd))
    svg_pic = read_svg(graph.render(), graph.render(format="dot"))
    assert _assert_names_shown_whole(svg_pic, graph.hierarchy()) == 3
    page = _open(browser, graph, tmp_path)
    try:
        pic = read_dom(page.evaluate(DOM_SCRIPT))
        assert _assert_names_shown_whole(pic, graph.hierarchy()) == 3
        assert page.errors == []  # type: ignore[attr-defined]
    finally:
        page.close()


@pytest.mark.browser
def test_the_viewer_keeps_a_call_op_in_its_opened_body(graphviz_engine: str, browser: Any,
                                                       tmp_path: Path) -> None:
    """The viewer lays out a call it opens itself as the SVG does."""
    graph = graphviz_tb.load(SAMPLES / "keras_cnn.pb")
    options = RenderOptions(depth=1)  # the call closed: the viewer opens it, not Python
    page = _open(browser, graph, tmp_path, options)
    try:
        assert page.evaluate("window.tbgraph.expand('StatefulPartitionedCall')") is not False
        _assert_call_feeds_its_arguments(read_dom(page.evaluate(DOM_SCRIPT)),
                                          graph.hierarchy(options))
        assert page.errors == []  # type: ignore[attr-defined]
    finally:
        page.close()
