"""Keras 3 as TensorFlow users have it now: every ``.keras`` file and exported SavedModel
reads, and the training step ``fit`` runs can be drawn.

The artifacts are made here by the installed TensorFlow and Keras (see :mod:`keras3_models`):
four applications, a ``Sequential``, a two-input and a nested functional model, a subclassed
model and one with a custom layer; a legacy ``.h5``; ``model.export()`` of two models and
``tf.saved_model.save`` of one; and the logdirs of ``fit`` with Keras' ``TensorBoard``
callback, with :class:`graphviz_tb.keras.OpGraphCallback` and with ``trace_export``.
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import keras3_models as zoo
import pytest
from conftest import _tf
from hostile_inputs import page_problems
from test_first_picture import _picture
from test_training_steps import assert_reads_as_training_step
from training_steps import scopes

import graphviz_tb
from graphviz_tb.cli import main
from graphviz_tb.options import RenderOptions

pytestmark = [pytest.mark.tensorflow, pytest.mark.dot, pytest.mark.slow]

ARTIFACTS = [*zoo.APPLICATIONS, "sequential", "h5", "two_inputs", "nested", "subclassed",
             "custom_layer", "mobilenet_v2_export", "sequential_export",
             "two_inputs_saved_model", "callback_logdir", "opgraph_logdir",
             "trace_export_logdir"]


@pytest.fixture(scope="session")
def keras3(tmp_path_factory: pytest.TempPathFactory) -> dict[str, zoo.Artifact]:
    tf = _tf()
    import keras
    import numpy as np

    root = tmp_path_factory.mktemp("keras3")
    made = {**zoo.applications(keras, np, root), **zoo.hand_built(keras, np, root),
            **zoo.custom(keras, root)}
    made.update(zoo.exported(tf, made, root))
    made.update(zoo.logdirs(tf, keras, np, root))
    keras.backend.clear_session()  # later fixtures' layer names count from zero again
    return made


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def _refused_in_one_line(status: int, err: str) -> bool:
    lines = err.strip().splitlines()
    return status == 1 and len(lines) == 1 and lines[0].startswith("tbgraph: error: ") \
        and "internal error" not in lines[0]


@pytest.mark.parametrize("name", ARTIFACTS)
def test_every_graph_of_a_keras3_artifact_reads(keras3: dict[str, zoo.Artifact], name: str,
                                                capsys: pytest.CaptureFixture[str],
                                                tmp_path: Path) -> None:
    """``info`` lists every graph the artifact holds, and each one draws, or is refused in
    one line: never a traceback, never the whole file refused for one graph."""
    path = str(keras3[name].path)
    status, out, err = _run(capsys, "info", "--json", path)
    assert status == 0 or _refused_in_one_line(status, err), err  # listed all the same
    graphs = json.loads(out)["graphs"]
    assert graphs
    drawn = 0
    for entry in graphs:
        n = str(entry["index"])
        status, _, err = _run(capsys, "info", path, "--graph", n)
        assert status == 0 or _refused_in_one_line(status, err), (n, err)
        status, _, err = _run(capsys, "render", path, "--graph", n,
                              "-o", str(tmp_path / f"{n}.svg"))
        assert status == 0 or _refused_in_one_line(status, err), (n, err)
        drawn += status == 0
    assert drawn >= 1


def test_a_custom_class_keras_cannot_build_refuses_that_graph_alone(
        keras3: dict[str, zoo.Artifact], capsys: pytest.CaptureFixture[str]) -> None:
    """The layer graph comes from the file's config, so it draws; the op graph needs Keras
    to build the unregistered layer, and only it is refused, in one line."""
    path = str(keras3["custom_layer"].path)
    status, out, err = _run(capsys, "info", path)
    assert status == 0, err
    assert "[0]" in out and "[1]" in out
    status, out, err = _run(capsys, "info", "--json", path, "--graph", "0")
    assert status == 0 and json.loads(out)["kind"] == "conceptual"
    assert json.loads(out)["op_types"][0]["op"] in {"Scale", "Dense", "InputLayer"}
    status, _, err = _run(capsys, "info", path, "--graph", "1")
    assert _refused_in_one_line(status, err), err
    assert "zoo>Scale" in err or "Scale" in err


def _quiet_env() -> dict[str, str]:
    """The environment of a user who never set TensorFlow's log level."""
    return {k: v for k, v in os.environ.items() if not k.startswith("TF_CPP")}


@pytest.mark.parametrize("args", [["--graph", "1"], ["--step", "train"]],
                         ids=["op graph", "train step"])
def test_tensorflow_start_up_lines_never_reach_the_user(keras3: dict[str, zoo.Artifact],
                                                        tmp_path: Path, args: list[str]) -> None:
    out = tmp_path / "x.svg"
    done = subprocess.run([sys.executable, "-m", "graphviz_tb", "render",
                           str(keras3["sequential"].path), *args, "-o", str(out)],
                          capture_output=True, text=True, env=_quiet_env(), timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [f"wrote {out} ({out.stat().st_size:,} bytes)"]


def test_a_layer_graph_counts_layers(keras3: dict[str, zoo.Artifact],
                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Boxes of the layer graph say ``N layers``, and their tooltips; ``info`` counts
    layers; nothing in it says ops."""
    graph = graphviz_tb.load(keras3["mobilenet_v2"].path)
    assert graph.model.kind == "conceptual"
    pic = _picture(graph, RenderOptions())
    groups = [b for b in pic.boxes.values() if b.kind == "group" and not b.open]
    assert groups
    for box in groups:
        assert re.search(r"^[\d,]+ layers?\b", box.texts[1]), box.texts
        assert not any(re.search(r"\bops?\b", t) for t in box.texts)
    tooltips = re.findall(r'tooltip="([^"]*)"', str(graph.render(format="dot")))
    assert any(re.search(r": [\d,]+ layers", t) for t in tooltips)
    assert not any(re.search(r"[\d,]+ ops?\b", t) for t in tooltips)
    status, out, _ = _run(capsys, "info", str(keras3["mobilenet_v2"].path))
    assert status == 0 and re.search(r"^layers: [\d,]+$", out, re.M)
    assert not re.search(r"^ops:", out, re.M)


def _size(svg: str) -> tuple[float, float]:
    """The picture's width and height in points."""
    width, height = (float(re.search(rf'{key}="([\d.]+)pt"', svg).group(1))  # type: ignore[union-attr]
                     for key in ("width", "height"))
    return width, height


def test_an_exported_savedmodel_reads_as_the_model(keras3: dict[str, zoo.Artifact]) -> None:
    """``model.export()``: the serving function opens into the model's layers; the
    variables stand folded beside it, not at the top level dressed as layers; the picture
    is no wider than 4:1."""
    graph = graphviz_tb.load(keras3["mobilenet_v2_export"].path)
    pic = _picture(graph, RenderOptions())
    h = graph.hierarchy()
    boxes = {b.name: b for b in pic.boxes.values() if b.kind in ("op", "group")}
    top = [m for m in h.root.children if m.name in boxes]
    assert [m.name for m in top if getattr(m, "kind", "") == "variables"] == ["variables"]
    assert not boxes["variables"].open
    assert not [m.name for m in top if re.match(r"(block_\d+|Conv1|bn_Conv1|Variable)", m.name)]
    model = [b for b in boxes.values() if b.open and b.name.split("/")[-1].startswith(
        "mobilenetv2")]
    assert model, sorted(n for n, b in boxes.items() if b.open)
    inside = [b for b in boxes.values() if model[0].contains(b) and b is not model[0]]
    assert any(re.search(r"(^|/)block(_\d+)?$", b.name) for b in inside), \
        sorted(b.name for b in inside)
    width, height = _size(str(graph.render(format="svg")))
    assert width <= 4 * height, (width, height)


STEP_MODELS = list(zoo.APPLICATIONS)


@pytest.mark.parametrize("name", STEP_MODELS)
def test_step_train_draws_what_fit_runs_as_a_training_step(keras3: dict[str, zoo.Artifact],
                                                           name: str) -> None:
    """``--step train`` on a saved compiled model: the function ``fit`` runs, opened, read
    as the training step the suite asserts for hand-written ones."""
    made = keras3[name]
    graph = graphviz_tb.load(made.path, step="train")
    assert graph.source.origin == "keras-step"
    model, optimizer = scopes(graph.source.load(), made.model_name)
    assert_reads_as_training_step(graph, _picture(graph, RenderOptions()), model, optimizer)


@pytest.mark.parametrize("name", ["sequential", "nested"])
def test_load_a_live_model_with_step_train(keras3: dict[str, zoo.Artifact], name: str) -> None:
    made = keras3[name]
    graph = graphviz_tb.load(made.model, step="train", batch_size=8)
    h = graph.hierarchy()
    assert h.training, "no training step found"
    (parts,) = h.training.values()
    assert parts.model is not None and parts.model.label.startswith(made.model_name)
    # The batch size is pinned: the batch comes from the dataset 8 at a time.
    batch = graph.model.tensor("IteratorGetNext", 0)
    assert batch is not None and batch.shape is not None and batch.shape[0] == 8, batch


@pytest.mark.parametrize("step", ["test", "predict"])
def test_evaluate_and_predict_steps_draw(keras3: dict[str, zoo.Artifact], step: str) -> None:
    graph = graphviz_tb.load(keras3["resnet50"].path, step=step)
    h = graph.hierarchy()
    names = {g.label for g in h.groups.values()}
    assert keras3["resnet50"].model_name in {n.rsplit("_", 1)[0] for n in names} | names
    assert "gradient_tape" not in names  # no gradients outside training
    pic = _picture(graph, RenderOptions())
    assert 4 <= len([b for b in pic.boxes.values() if b.kind in ("op", "group")]) <= 80


def test_opgraph_callback_gives_tensorboard_a_training_graph(
        keras3: dict[str, zoo.Artifact]) -> None:
    """TensorBoard's own reader finds the graph the callback wrote, and tbgraph draws it as a
    training step."""
    from tensorboard.backend.event_processing import event_multiplexer

    made = keras3["opgraph_logdir"]
    mux = event_multiplexer.EventMultiplexer()
    mux.AddRunsFromDirectory(str(made.path))
    mux.Reload()
    nodes = {run: len(mux.GetAccumulator(run).Graph().node) for run in mux.Runs()}
    assert nodes and min(nodes.values()) > 0
    graph = graphviz_tb.load(made.path)
    model, optimizer = scopes(graph.source.load(), made.model_name)
    assert_reads_as_training_step(graph, _picture(graph, RenderOptions()), model, optimizer)


def test_the_function_fit_runs_opens_from_a_trace_export_logdir(
        keras3: dict[str, zoo.Artifact]) -> None:
    """Written by ``trace_export``, its variables are numbered placeholders: they fold beside
    the call, which opens into the step."""
    graph = graphviz_tb.load(keras3["trace_export_logdir"].path)
    h = graph.hierarchy()
    assert h.training
    loose = [m for m in h.root.children if not hasattr(m, "children")]
    assert len(loose) <= 12, [m.name for m in loose]
    pic = _picture(graph, RenderOptions())
    (container, parts), = h.training.items()
    boxes = {b.name: b for b in pic.boxes.values() if b.kind in ("op", "group")}
    assert boxes[container.name].open
    assert parts.model is not None and boxes[parts.model.name].open


def test_a_logdir_with_only_the_layer_graph_says_how_to_get_the_op_graph(
        keras3: dict[str, zoo.Artifact], capsys: pytest.CaptureFixture[str]) -> None:
    path = str(keras3["callback_logdir"].path)
    status, out, _ = _run(capsys, "info", path)
    assert status == 0
    note = next(line for line in out.splitlines() if line.startswith("note: "))
    assert "--step train" in note and "OpGraphCallback" in note
    svg = graphviz_tb.load(path).render(format="svg")
    legend = html.unescape(" ".join(re.findall(r">([^<>]+)</text>", str(svg))))
    assert "--step" in legend and "OpGraphCallback" in legend


@pytest.mark.browser
@pytest.mark.parametrize("name", ["callback_logdir", "mobilenet_v2", "sequential_export",
                                  "opgraph_logdir"])
def test_keras3_pages_open_in_the_viewer(keras3: dict[str, zoo.Artifact], browser: Any,
                                         tmp_path: Path, name: str) -> None:
    """Each artifact's page gets ready with no script error; a layer graph's page counts
    layers where the static picture does, and a logdir holding only the layer graph says in
    the viewer's legend how to get the op graph."""
    graph = graphviz_tb.load(keras3[name].path)
    path = tmp_path / "page.html"
    graph.render(path)
    assert page_problems(browser, path) == []
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(path.resolve().as_uri())
    page.wait_for_function("window.tbgraph && window.tbgraph.ready === true", timeout=30_000)
    status = page.inner_text("footer.status")
    legend = page.inner_text(".legend")
    if graph.model.kind == "conceptual":
        assert "layers and groups in all" in status and " ops " not in status
        group = next(b["name"] for b in page.evaluate("window.tbgraph.boxes()")
                     if graph.hierarchy().groups.get(b["name"]) is not None)
        page.evaluate("name => window.tbgraph.select(name)", group)
        details = page.inner_text(".details")
        assert re.search(r"\blayers\b", details) and not re.search(r"\bops\b", details)
    if name == "callback_logdir":
        assert "--step train" in legend and "OpGraphCallback" in legend
    page.close()
