"""ONNX files nobody exported here: the real CNNs the ``onnx`` wheel ships as backend test
data, graphs made at random as an exporter might write them (or break them), and the checks
that need no model at all (other formats never pass for ONNX; ``--infer-shapes`` refused).
The models PyTorch exports are in ``test_onnx.py``: these need no PyTorch, and no export.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
from onnx_oracle import need_onnx
from picture import check_picture, ops_under, read_svg

import graphviz_tb
from graphviz_tb.read.detect import detect

pytestmark = pytest.mark.dot

REPO = Path(__file__).resolve().parents[1]


def test_other_graphs_never_import_onnx_nor_pass_for_it() -> None:
    """A TensorFlow graph is read without importing onnx, and no sample's bytes (GraphDefs,
    MetaGraphDefs, a SavedModel) pass for an ONNX model."""
    from graphviz_tb.read.onnx import is_onnx_model

    samples = REPO / "samples"
    files = [*samples.glob("*.pb"), *samples.glob("*.meta"), *samples.glob("*/*.pb"),
             *samples.glob("saved_model/*.pb")]
    assert len(files) >= 3
    assert not [f for f in files if is_onnx_model(f.read_bytes())]
    code = ("import sys, graphviz_tb\n"
            f"graphviz_tb.load({str(samples / 'mnist_tf1.pb')!r}).render(format='dot')\n"
            "print('onnx' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, cwd=REPO)
    assert done.stdout.strip() == "False"


@pytest.mark.parametrize("command", ["render", "shapes"])
def test_infer_shapes_says_onnx_shapes_are_onnxs_own(command: str, tmp_path: Path) -> None:
    """``--infer-shapes`` asks TensorFlow, which cannot run ONNX ops: it inferred nothing
    and said nothing.  Now one line says where an ONNX file's shapes come from, and the
    command fails, writing nothing."""
    onnx = need_onnx()
    helper, floats = onnx.helper, onnx.TensorProto.FLOAT
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", floats, [2, 3])],
                              [helper.make_tensor_value_info("y", floats, None)])
    path = tmp_path / "relu.onnx"
    path.write_bytes(helper.make_model(graph).SerializeToString())
    out = tmp_path / "relu.svg"
    done = subprocess.run([sys.executable, "-m", "graphviz_tb", command, str(path),
                           "--infer-shapes", *(["-o", str(out)] if command == "render" else [])],
                          capture_output=True, text=True, cwd=REPO, check=False)
    assert done.returncode != 0 and not out.exists()
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert path.name in lines[0] and "onnx.shape_inference" in lines[0], lines[0]


# ------------------------------------------------------------------ the onnx wheel's CNNs


def _light_models() -> list[Path]:
    """The real CNNs the onnx wheel ships as backend test data ("light": each weight made by
    a ``ConstantOfShape``), found without importing onnx at collection."""
    import importlib.util

    spec = importlib.util.find_spec("onnx")
    if spec is None or not spec.submodule_search_locations:
        return []
    light = Path(next(iter(spec.submodule_search_locations))) / "backend/test/data/light"
    return sorted(light.glob("light_*.onnx"))


def _light_params() -> list[Any]:
    found = _light_models()
    if not found:
        return [pytest.param(None, id="none", marks=pytest.mark.skipif(
            not os.environ.get("CI"), reason="onnx is not installed"))]
    return [pytest.param(p, id=p.stem) for p in found]


@pytest.mark.parametrize("path", _light_params())
def test_the_onnx_wheels_cnns_read_as_their_layers(path: Path) -> None:
    """Flat names, weights made by ConstantOfShape: every node an op or folded into one, no
    weight maker drawn, and a default view of 8 to 80 boxes, none over half the ops, that
    the oracle finds true."""
    assert path is not None, "onnx's backend test data is missing"
    graph = graphviz_tb.load(path)
    model = graph.model
    stored = need_onnx().load(str(path)).graph.node
    own = {model.attrs(op).get("onnx node") for op in model.g}
    folded = {f for op in model.g for f in model.attrs(op).get("folded nodes", [])}
    names = [n.name or f"{n.op_type}_{i}" for i, n in enumerate(stored)]
    assert all(name in own or f"{n.op_type} {name}" in folded
               for name, n in zip(names, stored, strict=True))
    assert not {"ConstantOfShape", "Constant"} & {model.op(op) for op in model.g}
    h = graph.hierarchy()
    pic = read_svg(graph.render(), graph.render(format="dot"))
    report = check_picture(pic, h)
    assert report, report.summary()
    closed = [b for b in pic.boxes.values() if b.kind in ("op", "group") and not b.open]
    assert 8 <= len(closed) <= 80
    assert all(len(ops_under(h.lookup(b.name))) <= len(model.g) / 2 for b in closed)
    # A series of alike blocks is a stretch of the dataflow: none sits on a loop of its
    # parent's picture (Inception's blocks 2-10 in one series drew edges out to the pooling
    # between them and back in).
    for series in (g for g in h.all_groups() if g.kind == "series"):
        siblings = nx.DiGraph(list(series.parent.edges))
        assert not any(series in part and len(part) > 1
                       for part in nx.strongly_connected_components(siblings)), series.name


# ------------------------------------------------------------------ models nobody exported

_OPS = ("Relu", "Add", "MatMul", "Shape", "Gather", "Unsqueeze", "Concat", "Reshape",
        "Constant", "Identity", "Cast", "If", "Foo")
_NAMES = ("", "a", "a", "/m/n/Relu", "/m/m.0/x/Add", "x<&>\n", "node_Conv_1", "/", "b/c")


def _random_model(seed: int) -> bytes:
    """A graph as an exporter might write it, or a broken one: ops of the kinds folded and
    not, names empty, repeated, scoped or hostile, inputs naming tensors before, after or
    nowhere, weights, a custom domain, an If whose branch reads an outer tensor."""
    import random

    onnx = need_onnx()
    helper = onnx.helper
    rng = random.Random(seed)
    floats = onnx.TensorProto.FLOAT
    tensors = ["x", "w"]
    nodes = []
    for i in range(rng.randint(1, 30)):
        op = rng.choice(_OPS)
        inputs = [rng.choice([*tensors, "nowhere", f"t{i + 3}", ""])
                  for _ in range(0 if op == "Constant" else rng.randint(1, 3))]
        kwargs: dict[str, Any] = {"name": rng.choice(_NAMES)}
        if op == "Constant":
            kwargs["value"] = helper.make_tensor("v", onnx.TensorProto.INT64, [2], [1, -1])
        if op == "If":
            branch = helper.make_graph([helper.make_node("Relu", [rng.choice(tensors)], ["r"])],
                                       "branch", [], [helper.make_tensor_value_info(
                                           "r", floats, None)])
            kwargs.update(then_branch=branch, else_branch=branch)
        if rng.random() < 0.3:
            kwargs["metadata_props"] = None
        domain = "com.example" if op == "Foo" else ""
        node = helper.make_node(op, inputs, [f"t{i}"], domain=domain,
                                **{k: v for k, v in kwargs.items() if k != "metadata_props"})
        if kwargs.get("metadata_props", 1) is None:
            helper.set_metadata_props(node, {
                "pkg.torch.onnx.name_scopes": rng.choice(["['', 'm', 'm.0', 'op']", "[",
                                                          "['']", "3"]),
                "pkg.torch.onnx.class_hierarchy": "['M', 'torch.nn.Seq', 'A', 'op']"})
        nodes.append(node)
        tensors.append(f"t{i}")
    graph = helper.make_graph(
        nodes, "random", [helper.make_tensor_value_info("x", floats, [2, 3])],
        [helper.make_tensor_value_info(rng.choice(tensors), floats, None)],
        initializer=[helper.make_tensor("w", floats, [3], [1.0, 2.0, 3.0])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18),
                                                    helper.make_opsetid("com.example", 1)])
    return model.SerializeToString()


@pytest.mark.parametrize("seed", range(40))
def test_any_onnx_like_graph_reads_or_says_why(seed: int, tmp_path: Path) -> None:
    """Each is detected as ONNX, then drawn and summarised with no Constant, initializer or
    weight copy drawn and every node an op or folded into one, or refused in one line."""
    path = tmp_path / "model.onnx"
    path.write_bytes(_random_model(seed))
    assert detect(path).format == "onnx"
    try:
        graph = graphviz_tb.load(path)
        svg = graph.render()
        graph.info()
    except graphviz_tb.GraphvizTbError as exc:
        assert "\n" not in str(exc)
        return
    assert "x<&>" not in svg  # a hostile name is escaped
    model = graph.model
    stored = need_onnx().load(str(path)).graph
    # A node without a name is called by its type and place, as a reader of the file would.
    names = [node.name or f"{node.op_type}_{i}" for i, node in enumerate(stored.node)]
    constants = [op for op in model.g if model.op(op) == "Constant"]
    assert not [op for op in constants if list(model.g.successors(op))]  # each feeds nothing
    assert "onnx::Initializer" not in {model.op(op) for op in model.g}
    assert model.op("w") == "output" if "w" in model.g else True  # the weight as an output
    drawn = {model.attrs(op).get("onnx node") for op in model.g}
    folded = {f for op in model.g for f in model.attrs(op).get("folded nodes", [])}
    for name, node in zip(names, stored.node, strict=True):
        assert name in drawn or f"{node.op_type} {name}" in folded, name
