"""Debugging shape mismatches: shapes from the file, TensorFlow's inference, pinned inputs.

The story: a frozen Keras classifier (Flatten -> Dense 128 -> Dense 10, input [?, 28, 28])
fails with "Cannot reshape a tensor ..." when fed 28x29 images.  Pinning the input shows where
and why; pinning a batch of 4 shows the shapes that follow.  TF1 graphs saved with their shapes
need no TensorFlow at all.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from svgparse import (
    SAMPLES,
    classes,
    edge_groups,
    edge_path,
    node_groups,
    op_name,
    parse,
    texts,
    title,
)

import graphviz_tb
from graphviz_tb.cli import main
from graphviz_tb.cli.common import input_shape
from graphviz_tb.model.graph import CONTROL
from graphviz_tb.model.shapes import format_shape

REPO = Path(__file__).resolve().parents[1]
DENSE = str(SAMPLES / "dense_frozen.pb")
MNIST = str(SAMPLES / "mnist_tf1.pb")
RESHAPE = "classifier_1/flatten_1/Reshape"
HIDDEN = "classifier_1/hidden_1"
RED = "#c62828"


def _shape(graph: graphviz_tb.Graph, op: str, index: int = 0) -> str:
    return format_shape(graph.model.op_outputs(op)[index])


def _run_python(code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter at the repository root (what a user's shell sees)."""
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=REPO, env=env, check=False, timeout=300)


def _edge_labels(svg: ET.Element) -> dict[str, list[str]]:
    return {title(e): [t.text or "" for t in e.iter("{http://www.w3.org/2000/svg}text")]
            for e in edge_groups(svg)}


# --------------------------------------------------------------------------- without TensorFlow


def test_tf1_shapes_show_without_importing_tensorflow() -> None:
    code = (
        "import sys\n"
        "from graphviz_tb.cli import main\n"
        f"status = main(['shapes', {MNIST!r}, '--node', 'input/*'])\n"
        f"import graphviz_tb\n"
        f"svg = graphviz_tb.load({MNIST!r}).render(format='svg', depth=2)\n"
        "print('LABEL', '?×784' in svg)\n"
        "print('TF', 'tensorflow' in sys.modules)\n"
        "sys.exit(status)\n"
    )
    result = _run_python(code)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    row = next(line for line in lines if line.startswith("input/x "))
    assert row.split()[1:] == ["Placeholder", "-", "float32", "?×784"]
    assert "LABEL True" in lines
    assert "TF False" in lines


def test_importing_the_cli_does_not_import_tensorflow() -> None:
    result = _run_python("import sys, graphviz_tb, graphviz_tb.cli, graphviz_tb.model.inference, "
                         "graphviz_tb.write.shape_table\nprint('tensorflow' in sys.modules)")
    assert result.stdout.strip() == "False", result.stderr


@pytest.mark.parametrize("argv", [
    ["shapes", DENSE, "--infer-shapes"],
    ["render", DENSE, "--input-shape", "pixels=1,28,29", "-o", os.devnull, "--format", "dot"],
    ["trace", DENSE, RESHAPE, "--infer-shapes"],
])
def test_without_tensorflow_inference_says_how_to_install(argv: list[str]) -> None:
    code = (
        "import sys\n"
        "sys.modules['tensorflow'] = None  # as if it were not installed\n"
        "from graphviz_tb.cli import main\n"
        f"sys.exit(main({argv!r}))\n"
    )
    result = _run_python(code)
    assert result.returncode == 1
    assert "needs TensorFlow" in result.stderr
    assert "pip install 'graphviz_tb[tf]'" in result.stderr
    assert "Traceback" not in result.stderr


def test_trace_prints_the_chain_of_inputs_with_shapes(capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    assert main(["trace", MNIST, "fc1/Relu", "--depth", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "fc1/Relu (Relu) → float32 ?×1024"
    assert lines[1] == "└─ [0] float32 ?×1024 ← fc1/add (AddV2)"
    assert "   ├─ [0] float32 ?×1024 ← fc1/MatMul (MatMul)" in lines
    assert any(line.endswith("[0] float32 ?×3136 ← flatten (Reshape)  …") for line in lines)
    assert any("[1] float32 1024 ← fc1/biases/read (Identity)" in line for line in lines)


def test_trace_outputs_and_control_inputs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", MNIST, "flatten", "--outputs", "--depth", "1"]) == 0
    out = capsys.readouterr().out
    assert "out 0 float32 ?×3136 → fc1/MatMul (MatMul) [input 0]" in out
    assert main(["trace", DENSE, "Identity", "--depth", "1"]) == 0
    out = capsys.readouterr().out
    assert "^control ← NoOp (NoOp)" in out


def test_trace_of_a_group_names_its_ops(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", MNIST, "fc1"]) == 1
    assert "'fc1' is a group; its ops include: fc1/" in capsys.readouterr().err


def test_changes_keeps_rank_changes_and_unknown_dims(capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    assert main(["shapes", MNIST, "--node", "flatten*", "--node", "fc1/Relu", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)["ops"]}
    assert rows["flatten"]["inputs"][0]["shape"] == [None, 7, 7, 64]
    assert rows["flatten"]["outputs"][0] == {"dtype": "float32", "shape": [None, 3136],
                                             "text": "float32 ?×3136"}
    assert main(["shapes", MNIST, "--node", "flatten", "--node", "fc1/Relu", "--json",
                 "--changes"]) == 0
    kept = {r["name"] for r in json.loads(capsys.readouterr().out)["ops"]}
    assert "flatten" in kept  # rank 4 -> 2
    assert "fc1/Relu" in kept  # ?×1024: the batch is unknown
    assert main(["shapes", MNIST, "--node", "fc1", "--changes", "--json"]) == 0
    kept = {r["name"] for r in json.loads(capsys.readouterr().out)["ops"]}
    assert "fc1/truncated_normal/TruncatedNormal" in kept  # a shape vector becomes 3136×1024
    assert "fc1/weights/read" not in kept  # 3136×1024 in and out: nothing to see


@pytest.mark.parametrize(("text", "expected"), [
    ("images=8,224,224,3", ("images", (8, 224, 224, 3))),
    ("pixels=?,28,-1", ("pixels", (None, 28, None))),
    ("x:0=[4, 28]", ("x:0", (4, 28))),
    ("scale=", ("scale", ())),
])
def test_input_shape_syntax(text: str, expected: tuple[str, tuple[int | None, ...]]) -> None:
    assert input_shape(text) == expected


@pytest.mark.parametrize("text", ["pixels", "=1,2", "pixels=1,a", "pixels=1.5"])
def test_bad_input_shapes_are_usage_errors(text: str, capsys: pytest.CaptureFixture[str]
                                           ) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["shapes", DENSE, "--input-shape", text])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "NAME=DIMS" in err or "is not a size" in err


# --------------------------------------------------------------------------- with TensorFlow


@pytest.mark.tensorflow
def test_pinning_a_wrong_width_names_the_flatten_reshape(tf: Any) -> None:
    graph = graphviz_tb.load(DENSE)
    report = graph.infer_shapes({"pixels": (1, 28, 29)})
    first = report.failures[0]
    assert (first.node, first.op, first.function) == (RESHAPE, "Reshape", None)
    assert "812 elements" in first.message and "784" in first.message
    assert [(e.src, format_shape(e.tensor)) for e in first.inputs] == [
        ("pixels", "1×28×29"), (f"{RESHAPE}/shape", "2")]
    assert len(report.failures) == 1
    assert report.pins[0].before == (None, 28, 28)
    g = graph.model.graph
    assert g.nodes[RESHAPE]["shape_error"] == first.message
    assert all(d.get("shape_error") for _, _, d in g.in_edges(RESHAPE, data=True))
    # Everything upstream still has TensorFlow's shapes; downstream is unknown, not stale.
    assert _shape(graph, "pixels") == "1×28×29"
    assert _shape(graph, f"{RESHAPE}/shape") == "2"
    assert not graph.model.op_outputs(f"{HIDDEN}/MatMul")[0].known_shape


@pytest.mark.tensorflow
def test_shapes_command_explains_the_failure_and_exits_1(
        tf: Any, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["shapes", DENSE, "--input-shape", "pixels=1,28,29"])
    out = capsys.readouterr().out
    assert status == 1
    assert f"shape inference failed at {RESHAPE} (Reshape)" in out
    assert "pinned input: pixels  ?×28×28 → 1×28×29" in out
    assert "[0] float32 1×28×29  from pixels" in out
    assert "TensorFlow: Cannot reshape a tensor with 812 elements to shape [1,784]" in out
    assert f"└─ [1] int32 2 ← {RESHAPE}/shape (Pack)" in out  # the chain of input edges
    table_row = next(line for line in out.splitlines() if line.startswith(RESHAPE + " "))
    assert table_row.endswith("✗ shape error")


@pytest.mark.tensorflow
def test_shapes_json_carries_the_failure(tf: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["shapes", DENSE, "--input-shape", "pixels:0=1,28,29", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["pins"] == [{"node": "pixels", "before": [None, 28, 28], "after": [1, 28, 29]}]
    assert data["failures"][0]["node"] == RESHAPE
    assert "812" in data["failures"][0]["message"]
    row = next(r for r in data["ops"] if r["name"] == RESHAPE)
    assert row["shape_error"] == data["failures"][0]["message"]


@pytest.mark.tensorflow
@pytest.mark.dot
def test_render_marks_the_failing_reshape_and_its_input_edges(tf: Any, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]
                                                              ) -> None:
    out = tmp_path / "x.svg"
    assert main(["render", DENSE, "--input-shape", "pixels=1,28,29", "-o", str(out)]) == 0
    assert f"shape inference failed at {RESHAPE}" in capsys.readouterr().err
    svg = parse(out.read_text())
    failing = [name for name, g in node_groups(svg).items() if "shape-error" in classes(g)]
    assert failing == [RESHAPE]  # its groups were opened so the op is in view
    node = node_groups(svg)[RESHAPE]
    assert any(el.get("stroke") == RED for el in node.iter())
    assert "Cannot reshape a tensor with 812 elements" in "".join(
        a.get("{http://www.w3.org/1999/xlink}title", "") for a in node.iter())
    red_edges = [e for e in edge_groups(svg) if "shape-error" in classes(e)]
    assert {op_name(title(e).split("->")[1]) for e in red_edges} >= {RESHAPE}
    assert all(edge_path(e).get("stroke") == RED for e in red_edges)


@pytest.mark.tensorflow
def test_a_pinned_batch_follows_downstream(tf: Any) -> None:
    graph = graphviz_tb.load(DENSE)
    report = graph.infer_shapes({"pixels": (4, 28, 28)})
    assert report.ok
    assert _shape(graph, RESHAPE) == "4×784"
    for op in ("MatMul", "BiasAdd", "Relu"):
        assert _shape(graph, f"{HIDDEN}/{op}") == "4×128"
    assert _shape(graph, "classifier_1/probabilities_1/Softmax") == "4×10"
    assert _shape(graph, "Identity") == "4×10"
    # The picture follows: the hidden layer's output edge reads 4×128.
    svg = parse(graph.render(format="svg", depth=2, input_shapes=(("pixels", (4, 28, 28)),)))
    assert ["4×128"] in _edge_labels(svg).values()


@pytest.mark.tensorflow
def test_pinning_again_replaces_the_earlier_result(tf: Any) -> None:
    graph = graphviz_tb.load(DENSE)
    assert not graph.infer_shapes({"pixels": (1, 28, 29)}).ok
    graph.hierarchy()
    assert graph.infer_shapes({"pixels": (4, 28, 28)}).ok
    g = graph.model.graph
    assert not any(d.get("shape_error") for _, d in g.nodes(data=True))
    assert not any(d.get("shape_error") for _, _, d in g.edges(data=True))
    assert _shape(graph, f"{HIDDEN}/Relu") == "4×128"
    assert graph.infer_shapes().ok  # unpinned again: the batch is open, not a leftover 4
    assert _shape(graph, f"{HIDDEN}/Relu") == "?×128"
    assert _shape(graph, "pixels") == "?×28×28"


@pytest.mark.tensorflow
@pytest.mark.dot
def test_infer_shapes_fills_a_frozen_graph_without_recorded_shapes(tf: Any, tmp_path: Path
                                                                   ) -> None:
    def unlabelled(graph: graphviz_tb.Graph) -> list[tuple[str, str]]:
        model = graph.model
        return [(u, v) for u, v, k, d in model.data_edges()
                if not format_shape(model.edge_tensor(u, v, k))]

    before_graph = graphviz_tb.load(DENSE)
    assert len(unlabelled(before_graph)) > 5  # only constants and the placeholder are known
    after_graph = graphviz_tb.load(DENSE)
    report = after_graph.infer_shapes()
    assert report.ok and not report.pins
    assert unlabelled(after_graph) == []

    edge = f"{HIDDEN}/MatMul->{HIDDEN}/BiasAdd"
    before, after = tmp_path / "before.svg", tmp_path / "after.svg"
    assert main(["render", DENSE, "--expand-all", "-o", str(before)]) == 0
    assert main(["render", DENSE, "--expand-all", "--infer-shapes", "-o", str(after)]) == 0
    assert _edge_labels(parse(before.read_text()))[edge] == []
    assert _edge_labels(parse(after.read_text()))[edge] == ["?×128"]


@pytest.mark.tensorflow
def test_unknown_input_name_lists_the_placeholders(tf: Any,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["shapes", DENSE, "--input-shape", "images=1,28,28"]) == 1
    err = capsys.readouterr().err
    assert "--input-shape 'images' names no op; the graph's placeholders: pixels" in err


@pytest.fixture(scope="module")
def nested_function_graph(tf: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A serving tf.function calling an inner one that flattens to 784 and multiplies."""

    @tf.function
    def inner(x: Any) -> Any:
        return tf.matmul(tf.reshape(x, [-1, 784]), tf.ones([784, 10]))

    @tf.function(input_signature=[tf.TensorSpec([None, 28, 28], tf.float32, name="images")])
    def serve(x: Any) -> Any:
        return tf.nn.softmax(inner(x) + 1.0)

    path = tmp_path_factory.mktemp("fn") / "nested.pb"
    path.write_bytes(serve.get_concrete_function().graph.as_graph_def().SerializeToString())
    return path


@pytest.mark.tensorflow
def test_shapes_are_inferred_inside_function_bodies(tf: Any, nested_function_graph: Path
                                                    ) -> None:
    graph = graphviz_tb.load(nested_function_graph)
    (call,) = [n for n, d in graph.model.graph.nodes(data=True) if d["op"] == "PartitionedCall"]
    assert not graph.model.op_outputs(f"{call}/MatMul")[0].known_shape  # nothing recorded
    report = graph.infer_shapes({"images": (3, 28, 28)})
    assert report.ok and report.bodies_inferred == 1
    assert _shape(graph, f"{call}/x") == "3×28×28"  # the body's argument
    assert _shape(graph, f"{call}/Reshape") == "3×784"
    assert _shape(graph, f"{call}/MatMul") == "3×10"
    assert _shape(graph, "Softmax") == "3×10"


@pytest.mark.tensorflow
def test_a_failure_inside_a_function_body_names_the_body_op(tf: Any,
                                                            nested_function_graph: Path) -> None:
    graph = graphviz_tb.load(nested_function_graph)
    report = graph.infer_shapes({"images": (1, 28, 29)})
    (first,) = report.failures
    call = first.node.rsplit("/", 1)[0]
    assert first.node == f"{call}/Reshape" and first.op == "Reshape"
    assert first.function is not None and "inner" in first.function
    assert "812" in first.message and "784" in first.message
    assert [format_shape(e.tensor) for e in first.inputs if e.kind != CONTROL] == ["1×28×29", "2"]
    assert graph.model.graph.nodes[first.node]["shape_error"]
    assert "shape_error" not in graph.model.graph.nodes[call]


@pytest.mark.tensorflow
def test_variable_shapes_reach_nested_function_bodies(tf: Any) -> None:
    """The SavedModel's layers sit two calls deep and read variables through resource
    arguments; the mismatch is still pinned on the body's MatMul, not on the outer call."""
    graph = graphviz_tb.load(SAMPLES / "saved_model")
    report = graph.infer_shapes({"features": (2, 9)})  # a signature input's name
    first = report.failures[0]
    assert first.node.endswith("/hidden/MatMul") and first.node.count("/") >= 3
    assert first.op == "MatMul" and first.function is not None
    assert "Dimensions must be equal, but are 9 and 8" in first.message
    assert [format_shape(e.tensor) for e in first.inputs if e.kind != CONTROL] == ["2×9", "8×16"]
    assert report.pins[0].node == "serving_default_features"


@pytest.mark.tensorflow
def test_names_tensorflow_refuses_to_import_are_renamed_for_inference(tf: Any) -> None:
    """A partitioned RunMetadata graph (TensorBoard's demo) has ``_send_``/``_recv_`` ops and
    device strings; inference still reaches every op, under its own name."""
    corpus = REPO.parent / "shared" / "corpus" / "tensorboard-graph-plugin"
    if not corpus.is_dir():
        pytest.skip(f"no conformance corpus at {corpus}")
    graph = graphviz_tb.load(corpus / "tf_graph_demo_graph.pbtxt")
    underscored = [n for n in graph.model.graph if n.startswith("_")]
    assert underscored
    report = graph.infer_shapes()
    assert report.ok, report.failures[:1]
    assert all(graph.model.op_outputs(n) == [] or graph.model.op_outputs(n)[0].known_shape
               for n in underscored)


# --------------------------------------------------------------------------- saying why


def _legend(root: Any) -> Any:
    return next(g for g in root.iter("{http://www.w3.org/2000/svg}g") if "legend" in classes(g))


def test_a_graph_without_shapes_says_so_in_one_line_with_the_remedy(capsys: Any) -> None:
    """A frozen graph written without ``add_shapes`` records no computed shape: ``info`` and
    the legend say so in one line and name the remedies; a TF1 graph with shapes says
    nothing of the kind."""
    from graphviz_tb.cli import main

    for sample, silent in ((DENSE, False), (MNIST, True)):
        assert main(["info", sample]) == 0
        text = capsys.readouterr().out
        said = [line for line in text.splitlines() if "--infer-shapes" in line]
        legend = " ".join(texts(_legend(parse(graphviz_tb.load(sample).render(depth=1)))))
        if silent:
            assert said == [] and "--infer-shapes" not in legend
        else:
            assert len(said) == 1 and "add_shapes=True" in said[0] and "SavedModel" in said[0]
            assert "no shapes recorded" in legend and "--infer-shapes" in legend


def test_a_shape_of_unknown_rank_is_left_unlabelled_with_the_reason_in_the_tooltip() -> None:
    """TensorFlow's inference gives some outputs no rank: the edge then carries no label (a
    bare ``*`` told the reader nothing) and its tooltip says the rank is unknown."""
    from tensorboard.compat.proto import graph_pb2

    gd = graph_pb2.GraphDef()
    x = gd.node.add(name="x", op="Placeholder")
    x.attr["_output_shapes"].list.shape.add().dim.add(size=3)
    y = gd.node.add(name="y", op="Relu", input=["x"])
    y.attr["_output_shapes"].list.shape.add().unknown_rank = True
    gd.node.add(name="z", op="Relu", input=["y"])
    root = parse(graphviz_tb.load(gd).render(expand_all=True))
    edges = {title(e): e for e in edge_groups(root)}
    into_z = next(e for t, e in edges.items() if t.startswith("y") and t.endswith("z"))
    assert texts(into_z) == []
    tip = " ".join(a.get("{http://www.w3.org/1999/xlink}title", "")
                   for a in into_z.iter("{http://www.w3.org/2000/svg}a"))
    assert "rank unknown" in tip
    into_y = next(e for t, e in edges.items() if t.startswith("x") and t.endswith("y"))
    assert texts(into_y) == ["3"]


# --------------------------------------------------------------------------- variable handles


def _resource_read_graph() -> Any:
    """A GraphDef as an MLIR export writes it: a resource input recording what it points to in
    ``_handle_shapes``/``_handle_dtypes``, read at the top level and, through a call, by a
    function body whose argument records it in ``arg_attr``; no read records its own shape."""
    from tensorboard.compat.proto import graph_pb2, types_pb2

    gd = graph_pb2.GraphDef()
    var = gd.node.add(name="w", op="Placeholder")
    var.attr["dtype"].type = types_pb2.DT_RESOURCE
    var.attr["_handle_dtypes"].list.type.append(types_pb2.DT_FLOAT)
    dims = var.attr["_handle_shapes"].list.shape.add()
    dims.dim.add(size=3)
    dims.dim.add(size=4)
    read = gd.node.add(name="read", op="ReadVariableOp", input=["w"])
    read.attr["dtype"].type = types_pb2.DT_FLOAT
    gd.node.add(name="use", op="Relu", input=["read"])
    fdef = gd.library.function.add()
    fdef.signature.name = "body"
    fdef.signature.input_arg.add(name="v", type=types_pb2.DT_RESOURCE)
    fdef.signature.output_arg.add(name="out", type=types_pb2.DT_FLOAT)
    arg = fdef.arg_attr[0].attr
    arg["_handle_dtypes"].list.type.append(types_pb2.DT_FLOAT)
    arg["_handle_shapes"].list.shape.add().dim.add(size=7)
    inner = fdef.node_def.add(name="r", op="ReadVariableOp", input=["v"])
    inner.attr["dtype"].type = types_pb2.DT_FLOAT
    fdef.ret["out"] = "r:value:0"
    call = gd.node.add(name="call", op="StatefulPartitionedCall")
    call.attr["f"].func.name = "body"
    passed = gd.node.add(name="passed", op="StatefulPartitionedCall", input=["w"])
    passed.attr["f"].func.name = "body"
    return gd


def test_variable_reads_take_the_shape_their_handle_records() -> None:
    """A variable read records no shape in a TF2 body; the handle it reads does (a
    ``VarHandleOp``'s ``shape``, a resource input's ``_handle_shapes``, a body argument's
    ``arg_attr``), so the read's edge is labelled without TensorFlow.  A handle passed into a
    call is followed through the call to the body's read."""
    graph = graphviz_tb.load(_resource_read_graph())
    assert _shape(graph, "read") == "3×4"
    assert _shape(graph, "call/r") == "7"
    assert _shape(graph, "passed/r") == "3×4", "the handle the call passes wins"
    assert graph.model.op_outputs("read")[0].dtype == "float32"
    root = parse(graph.render(expand_all=True))
    labels = _edge_labels(root)
    assert any("3×4" in texts for name, texts in labels.items() if name.startswith("read"))
