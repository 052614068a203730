"""A TF2 training step reads as the model it trains.

TF2 names some ops of a traced training step at the top level: the gradient sums ``AddN_k``
(hundreds in a ResNet), custom gradients (EfficientNet's swish), captured variables and the
optimizer's slot initialisers.  Left there, they were a fan of loose boxes wired across the
picture, and the model stayed closed.  Training steps TensorFlow made here (six Keras
applications under four optimizers, a Transformer with flat layer names, a step written by
``trace_export``) are drawn with default options and read back through the picture oracle.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import TrainingStep
from picture import Picture, check_picture, read_dom
from test_first_picture import _boxes_on_cycles as _on_cycles
from test_first_picture import _picture
from test_picture_truth import DOM_SCRIPT, _open

import graphviz_tb
from graphviz_tb.group.tree import Group, OpNode
from graphviz_tb.options import RenderOptions

pytestmark = [pytest.mark.dot, pytest.mark.tensorflow]

STEPS = ["resnet50_adam", "densenet121_momentum", "inception_v3_adam", "mobilenet_v2_rmsprop",
         "efficientnet_b0_adamw", "convnext_tiny_sgd", "transformer_adamw", "trace_export"]


def _closed(pic: Picture) -> list[Any]:
    return [b for b in pic.boxes.values() if b.kind in ("op", "group") and not b.open]


def _ops(box: Any) -> int:
    for text in box.texts:
        found = re.search(r"([\d,]+) ops?\b", text)
        if found:
            return int(found.group(1).replace(",", ""))
    return 1


def _box(pic: Picture, scope: str) -> Any:
    """The box of that scope (see :func:`_is`)."""
    found = [b for b in pic.boxes.values() if _is(b, scope)]
    assert found, (scope, sorted(b.name for b in pic.boxes.values() if b.kind == "group"))
    return found[0]


def _is(box: Any, scope: str) -> bool:
    """Is this box the scope (a logdir's graph puts it under the graph's own name, what
    Keras' ``fit`` runs under its call, and a trace suffixes a model's name: ``_1``)?"""
    return re.fullmatch(rf"(.*/)?{re.escape(scope)}(_\d+)?", box.name) is not None


@pytest.mark.parametrize("name", STEPS)
def test_the_first_picture_of_a_training_step_shows_the_model(
        training_steps: dict[str, TrainingStep], name: str) -> None:
    step = training_steps[name]
    graph = graphviz_tb.load(step.path)
    assert_reads_as_training_step(graph, _picture(graph, RenderOptions()), step.model,
                                  step.optimizer)


def assert_reads_as_training_step(graph: graphviz_tb.Graph, pic: Picture, model_scope: str,
                                  optimizer_scope: str) -> None:
    """What the first picture of any training step shows: 8 to 80 boxes and no fan of loose
    ops; the model (its scope named ``model_scope``, or that with the suffix a trace adds)
    opened into three parts or more; the loss in sight; the gradients and the optimizer
    (``optimizer_scope``) beside it, the optimizer closed; no closed box but the optimizer
    holding more than half the ops; no box on a cycle."""
    closed = _closed(pic)
    h = graph.hierarchy()
    total = h.root.op_count
    assert 8 <= len(closed) <= 80, len(closed)
    # No fan of loose ops: at most 12 ops of one type side by side in one group.
    ops = [h.ops[b.name] for b in closed if b.name in h.ops]
    fans = Counter((op.parent, op.op) for op in ops)
    assert max(fans.values(), default=0) <= 12, fans.most_common(3)
    loose = [op.name for op in ops if op.parent is h.root]
    assert not [n for n in loose if re.fullmatch(r"AddN(_\d+)?|zeros(_\d+)?", n)], loose
    # The model opens into its parts; the loss is in sight; the gradients and the optimizer
    # stand beside it.
    model = _box(pic, model_scope)
    assert model.open
    inside = [b for b in closed if model.contains(b) and b is not model]
    assert len(inside) >= 3, [b.name for b in inside]
    assert any("crossentropy" in b.name for b in closed)
    assert any(_is(b, "gradient_tape") for b in pic.boxes.values())
    optimizer = _box(pic, optimizer_scope)
    assert not optimizer.open
    # No closed box but the optimizer holds more than half the ops.
    big = [b.name for b in closed if 2 * _ops(b) > total and b is not optimizer]
    assert big == []
    assert _on_cycles(pic) == []


def test_a_transformers_last_layer_is_one_block_like_the_others(
        training_steps: dict[str, TrainingStep]) -> None:
    """The Transformer's last layer feeds the classifier head, so its closing norm shared a
    run of one-layer segments with the pooling and the head, and the layer was drawn as
    three boxes beside three whole layers.  It is a block of the layers' structure too: four
    alike layers, one colour, in order; the head a block of its own."""
    step = training_steps["transformer_adamw"]
    graph = graphviz_tb.load(step.path)
    h = graph.hierarchy()
    layers = [g for g in h.groups.values() if g.kind == "block" and g.parent is not None
              and g.parent.name.split("/")[0] == step.model
              and re.fullmatch(r"multi_head_attention(_\d+)* … layer_normalization(_\d+)*",
                               g.label)]
    assert len(layers) == 4, sorted(g.name for g in layers)
    assert len({g.op_count for g in layers}) == 1
    assert sorted(h.templates.alike(layers[0]), key=lambda g: g.name) == \
        sorted(layers, key=lambda g: g.name)
    pic = _picture(graph, RenderOptions())
    drawn = [b for b in pic.boxes.values() if b.name in {g.name for g in layers}]
    assert len(drawn) == 4 and len({b.fill for b in drawn}) == 1


@pytest.mark.parametrize("name", ["resnet50_adam", "efficientnet_b0_adamw", "transformer_adamw"])
def test_a_training_step_has_no_loop_at_depth_two(training_steps: dict[str, TrainingStep],
                                                  name: str) -> None:
    graph = graphviz_tb.load(training_steps[name].path)
    assert _on_cycles(_picture(graph, RenderOptions(depth=2))) == []


@pytest.mark.parametrize("name", ["resnet50_adam", "convnext_tiny_sgd", "trace_export"])
@pytest.mark.parametrize("variant", [{}, {"depth": 2}, {"expand": ("*gradient_tape",)}],
                         ids=["default", "depth=2", "gradients"])
def test_training_step_pictures_are_true(graphviz_engine: str,
                                         training_steps: dict[str, TrainingStep], name: str,
                                         variant: dict[str, Any]) -> None:
    """Every edge joins its own boxes and runs through no other, at the first view, at depth
    2 and with the gradients opened.  (The oracle's own structure check hashes every group
    of the graph, 25 s for 15,000 ops: colours are checked on the small step only.)"""
    graph = graphviz_tb.load(training_steps[name].path)
    options = RenderOptions(**variant)
    report = check_picture(_picture(graph, options), graph.hierarchy(options),
                           structure=name == "trace_export")
    assert report, report.summary()


def test_gradient_sums_join_the_gradients_of_the_layers_they_sum(
        training_steps: dict[str, TrainingStep]) -> None:
    """ResNet-50's 122 top-level ``AddN`` go into ``gradient_tape``, under the mirror of the
    model (``gradient_tape/resnet50_1``) where their inputs are; opened, the gradients show
    that mirror, not a fan."""
    step = training_steps["resnet50_adam"]
    graph = graphviz_tb.load(step.path)
    h = graph.hierarchy()
    sums = [op for name, op in h.ops.items() if re.fullmatch(r"AddN(_\d+)?", name)]
    assert len(sums) > 100
    mirror = h.groups[f"gradient_tape/{step.model}"]
    assert all(mirror in op.ancestors() for op in sums)
    assert not [m for m in h.root.children if isinstance(m, OpNode) and m.op == "AddN"]
    pic = _picture(graph, RenderOptions(expand=("gradient_tape",)))
    assert any(b.name == mirror.name for b in _closed(pic))


@pytest.mark.parametrize("name", ["resnet50_adam", "densenet121_momentum",
                                  "mobilenet_v2_rmsprop", "efficientnet_b0_adamw",
                                  "transformer_adamw"])
def test_the_optimizer_opens_into_the_mirror_of_the_model(
        training_steps: dict[str, TrainingStep], name: str) -> None:
    """Keras' optimizers trace one chain of ops per variable under flat numbered names
    (``adam/Mul_3``); opened, the optimizer was sections of 200 such names.  Each chain writes
    one layer's variable, so it goes under that layer's name, nested as the model is
    (``adam/resnet50_1/conv1_conv_1``, one group per variable below it): the optimizer opens
    into the model's mirror, as ``gradient_tape`` does, and what serves every layer (the
    step counter) stays beside it."""
    step = training_steps[name]
    graph = graphviz_tb.load(step.path)
    h = graph.hierarchy()
    optimizer = h.groups[step.optimizer]
    mirror = h.groups[f"{step.optimizer}/{step.model}"]
    assert mirror.kind == "update" and mirror.parent is optimizer
    assert len(optimizer.children) <= 12, [c.name for c in optimizer.children]
    assert 2 * mirror.op_count > optimizer.op_count
    layers = [g for g in mirror.walk() if isinstance(g, Group) and g.kind == "update"
              and not any(isinstance(c, Group) and c.kind == "update" for c in g.children)]
    assert len(layers) >= 10
    for layer in layers:  # each is named after a scope of the model, and updates it
        named = [g.name.removeprefix(f"{step.optimizer}/") for g in (layer, layer.parent)
                 if isinstance(g, Group) and g is not mirror]
        assert any(n in h.groups for n in named), named
        writes = [op for op in layer.walk() if isinstance(op, OpNode)
                  and (op.op.startswith(("Assign", "ResourceApply")))]
        assert writes, layer.name
    # No layer's update feeds another's: what they share (the step counter's handle, which
    # TensorFlow names after its first reader) stays outside them all.
    layer_of = {op.name: layer for layer in layers for op in layer.walk()
                if isinstance(op, OpNode)}
    crossing = [(u, v) for u, layer in layer_of.items() for v in graph.model.g.succ[u]
                if layer_of.get(v, layer) is not layer]
    assert crossing == []
    opened = _picture(graph, RenderOptions(expand=(step.optimizer,)))
    assert any(b.name == mirror.name for b in opened.boxes.values())


@pytest.mark.parametrize("name", ["resnet50_adam", "mobilenet_v2_rmsprop"])
def test_every_variable_an_update_group_writes_is_read_by_the_layer_it_is_named_after(
        training_steps: dict[str, TrainingStep], name: str) -> None:
    """The optimizer's mirror must say which layer each update is for.  With every update
    group named after the next layer, the mirror tests above passed (they read the mirror's
    shape) and this one failed on both steps.  Here each write's variable is followed in the
    graph itself, through the handle it writes, to the model's ops that read that handle:
    they are in the layer (or the layer's variable) the write's update group is named after.
    (A slot variable, ``m`` or ``v``, is read by no model op: there is nothing to check.)"""
    step = training_steps[name]
    graph = graphviz_tb.load(step.path)
    h, succ, nodes = graph.hierarchy(), graph.model.g.succ, graph.model.g.node_data
    optimizer = h.groups[step.optimizer]
    checked = 0
    for op in optimizer.walk():
        if not (isinstance(op, OpNode) and op.op in _WRITES) or op.parent is optimizer:
            continue
        update = next(g for g in op.ancestors() if g.kind == "update")
        mirrored = update.name.removeprefix(f"{step.optimizer}/")
        handle = _handle(graph, op.name)
        readers = [v for v in succ[handle] if v.startswith(f"{step.model}/")
                   and nodes[v]["op"] in ("ReadVariableOp", "ResourceGather")]
        if not readers:
            continue
        assert any(r.startswith(f"{mirrored}/") for r in readers), (op.name, update.name,
                                                                     readers)
        checked += 1
    assert checked >= 40, checked


_WRITES = frozenset({"AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp"})


def _handle(graph: graphviz_tb.Graph, write: str) -> str:
    """The op giving the variable handle a write acts on (its input 0), through Identity."""
    g = graph.model.g
    name = write
    while True:
        source = next(u for u, keys in g.pred[name].items()
                      for d in keys.values() if d["dst_input"] == 0 and d["kind"] != "control")
        if g.node_data[source]["op"] != "Identity":
            return source
        name = source


def test_slot_initialisers_join_the_optimizer(training_steps: dict[str, TrainingStep]
                                              ) -> None:
    """AdamW's unused ``zeros_N`` slot initialisers (no edges at all) were 48 top-level
    boxes; they belong to the optimizer."""
    step = training_steps["efficientnet_b0_adamw"]
    h = graphviz_tb.load(step.path).hierarchy()
    zeros = [op for name, op in h.ops.items() if re.fullmatch(r"zeros(_\d+)?", name)]
    assert len(zeros) > 10
    optimizer = h.groups[step.optimizer]
    assert all(optimizer in op.ancestors() for op in zeros)
    assert len(h.root.children) <= 16


def test_captured_variables_join_their_readers(training_steps: dict[str, TrainingStep]
                                               ) -> None:
    """In a traced step's function graph the optimizer's captured variables are resource
    arguments (``adam_sub_readvariableop_resource``); each joins the group reading it."""
    h = graphviz_tb.load(training_steps["trace_export"].path).hierarchy()
    captured = [op for op in h.ops.values()
                if op.op == "_Arg" and op.name.endswith("_readvariableop_resource")]
    assert len(captured) > 10
    stayed = [op.name for op in captured if op.parent is not None
              and any(isinstance(c, Group) and c.label == "gradient_tape"
                      for c in op.parent.children)]
    assert len(stayed) <= 2, stayed  # one read by two groups may stay


def test_an_inference_graph_keeps_its_input_and_output_in_sight(
        tf_made: dict[str, Path]) -> None:
    """Only training steps (and captured variables) give loose ops away: an inference trace
    keeps its input placeholder and its result at the top, where a reader looks for them."""
    h = graphviz_tb.load(tf_made["resnet50"]).hierarchy()
    top = {m.label for m in h.root.children if isinstance(m, OpNode)}
    assert "images" in top
    assert h.training == {}


@pytest.mark.browser
def test_the_viewer_draws_a_training_step_true(graphviz_engine: str, browser: Any,
                                               tmp_path: Path,
                                               training_steps: dict[str, TrainingStep]) -> None:
    """In Chromium: the first view, then the gradients opened, checked by the oracle (no
    edge through a box it does not join, among the rest)."""
    step = training_steps["resnet50_adam"]
    graph = graphviz_tb.load(step.path)
    options = RenderOptions()
    page = _open(browser, graph, tmp_path, options)
    try:
        for action in ("", "gradient_tape", f"gradient_tape/{step.model}"):
            if action:
                assert page.evaluate(f"window.tbgraph.expand({action!r})") is not False
            report = check_picture(read_dom(page.evaluate(DOM_SCRIPT)),
                                   graph.hierarchy(options), structure=False)
            assert report, f"after +{action}: {report.summary()}"
        assert page.errors == []  # type: ignore[attr-defined]
    finally:
        page.close()


def test_the_oracle_sees_an_edge_through_a_box_it_does_not_join() -> None:
    """The check can fail: a box moved onto the middle of an edge's line is reported."""
    graph = graphviz_tb.load(Path(__file__).resolve().parents[1] / "samples" / "mnist_tf1.pb")
    options = RenderOptions()
    pic = _picture(graph, options)
    h = graph.hierarchy(options)
    assert check_picture(pic, h), "the picture as drawn is true"
    edge = max(pic.edges, key=lambda e: len(e.samples()))
    x, y = edge.samples()[len(edge.samples()) // 2]
    box = next(b for b in _closed(pic) if b.key not in (edge.src, edge.dst)
               and not b.contains(pic.boxes[edge.src]) and not b.contains(pic.boxes[edge.dst]))
    box.cx, box.cy = x, y
    problems = check_picture(pic, h).problems
    assert any(f"runs through {box.name!r}" in p for p in problems), problems


@pytest.fixture(scope="module")
def unsigned_saved_model(tf: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    import keras
    import training_steps as steps

    path = tmp_path_factory.mktemp("unsigned") / "model"
    steps.unsigned_saved_model(tf, keras, path)
    return path


def test_a_savedmodel_without_signatures_opens_its_function(unsigned_saved_model: Path
                                                            ) -> None:
    """Saved with ``signatures={}``, a ``tf.Module``'s traced method lives only in the object
    graph: no op calls it.  It is drawn as a call named after the method and opened, beside
    the checkpoint's save and restore calls, which stay closed."""
    graph = graphviz_tb.load(unsigned_saved_model)
    pic = _picture(graph, RenderOptions())
    opened = {b.name for b in pic.boxes.values() if b.open}
    assert "classify" in opened
    method = graph.hierarchy().groups["classify"]
    assert method.kind == "function" and "classify" in (method.function or "")
    inside = {b.name for b in _closed(pic) if pic.boxes[
        next(k for k, x in pic.boxes.items() if x.name == "classify")].contains(b)}
    assert {"classify/dense", "classify/logits"} <= inside
    report = check_picture(pic, graph.hierarchy())
    assert report, report.summary()


def _without_recorded_shapes(saved_model: Path, into: Path) -> Path:
    """A copy of a SavedModel whose function bodies record no shapes (as some converters and
    older writers leave them): only the object graph still knows the variables' shapes."""
    import shutil

    from graphviz_tb.read.savedmodel import SavedModel

    shutil.copytree(saved_model, into)
    message = SavedModel()
    message.ParseFromString((saved_model / "saved_model.pb").read_bytes())
    for meta in message.meta_graphs:
        for fdef in meta.graph_def.library.function:
            for node in fdef.node_def:
                node.attr.pop("_output_shapes", None)
    (into / "saved_model.pb").write_bytes(message.SerializeToString())
    return into


@pytest.mark.tensorflow
def test_a_savedmodels_variable_shapes_reach_its_method_from_the_object_graph(
        unsigned_saved_model: Path, tmp_path: Path) -> None:
    """Nothing calls the traced method, so no variable handle flows into it; the object graph
    binds its captured arguments to the variables, whose shapes label the reads and, with
    ``--infer-shapes``, reach TensorFlow's inference of the body."""
    from graphviz_tb.model.shapes import format_shape

    bare = _without_recorded_shapes(unsigned_saved_model, tmp_path / "bare")
    graph = graphviz_tb.load(bare)
    model = graph.model
    reads = sorted(format_shape(model.op_outputs(n)[0]) for n in model.graph
                   if n.startswith("classify/") and model.op(n) == "ReadVariableOp")
    assert reads == ["16×3", "8×16"]
    matmul = "classify/dense/MatMul"
    assert format_shape(model.op_outputs(matmul)[0]) == "", "the body records no shapes"
    report = graph.infer_shapes()
    assert report.ok, report.failures[:1]
    assert format_shape(model.op_outputs(matmul)[0]) == "?×16"
    assert format_shape(model.op_outputs("classify/logits/MatMul")[0]) == "?×3"
