"""ONNX models read as the model (issue 46).

The files are written by the installed PyTorch with both exporters (``onnx_models.py``, in a
subprocess: reading them needs ``onnx``, never PyTorch): ResNet-18, a ``TransformerEncoder``
text model, a scripted model with ``Loop`` and ``If``, ``torch.cond``, a scripted model with a
loop inside a branch, and a module exported as a local function.  Each is checked
against what ``onnx`` itself reads from the file (its nodes and initializers) and against
what PyTorch says of the model (its modules), then drawn and read back from the SVG.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
from conftest import write_with
from onnx_oracle import OPEN, check_bodies
from picture import Picture, check_picture, ops_under, read_svg
from svgparse import op_name

import graphviz_tb
from graphviz_tb.group.tree import Group, Hierarchy
from graphviz_tb.read.detect import detect

pytestmark = [pytest.mark.torch, pytest.mark.dot]

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
FILES = ("resnet18_ts", "resnet18_dynamo", "text_ts", "text_dynamo", "branchy_ts",
         "cond_dynamo")
INSTALL = "pip install 'graphviz_tb[onnx]'"


def _onnx() -> Any:
    """onnx, or a skip on a developer machine without it; in CI (``make test`` installs it)
    a missing onnx is a failure."""
    if os.environ.get("CI"):
        import onnx

        return onnx
    return pytest.importorskip("onnx")


@pytest.fixture(scope="session")
def onnx_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every model exported once, by PyTorch in its own process."""
    if not os.environ.get("CI"):
        pytest.importorskip("torch")
        pytest.importorskip("onnxscript")
    _onnx()
    return write_with("onnx_models.py", tmp_path_factory.mktemp("onnx"), "the ONNX files")


@pytest.fixture(scope="session")
def described(onnx_dir: Path) -> dict[str, Any]:
    return json.loads((onnx_dir / "models.json").read_text())


_GRAPHS: dict[str, graphviz_tb.Graph] = {}
_PICTURES: dict[str, Picture] = {}


def _graph(onnx_dir: Path, name: str) -> graphviz_tb.Graph:
    if name not in _GRAPHS:
        _GRAPHS[name] = graphviz_tb.load(onnx_dir / f"{name}.onnx")
    return _GRAPHS[name]


def _picture(onnx_dir: Path, name: str) -> Picture:
    """The default view, read back from its SVG (drawn once per session)."""
    if name not in _PICTURES:
        graph = _graph(onnx_dir, name)
        _PICTURES[name] = read_svg(graph.render(), graph.render(format="dot"))
    return _PICTURES[name]


def _stored(onnx_dir: Path, name: str) -> Any:
    return _onnx().load(str(onnx_dir / f"{name}.onnx"), load_external_data=False)


# ------------------------------------------------------------------ every file


@pytest.mark.parametrize("name", FILES)
def test_is_read_as_onnx_without_a_warning(onnx_dir: Path, name: str) -> None:
    path = onnx_dir / f"{name}.onnx"
    assert detect(path).format == "onnx"
    info = _graph(onnx_dir, name).info()
    assert info["warnings"] == [] and info["missing_nodes"] == 0
    assert info["nodes"] == len(_stored(onnx_dir, name).graph.node)


@pytest.mark.parametrize("name", FILES)
def test_every_node_is_an_op_or_folded_into_one(onnx_dir: Path, name: str) -> None:
    """Each node onnx reads from the file is one op (its ``onnx node``) or is listed in the
    ``folded nodes`` details of the ops it serves; no op is a Constant or an initializer, and no
    Identity copies a weight.  (A body's arguments and results are not nodes of the file.)"""
    model = _graph(onnx_dir, name).model
    stored = _stored(onnx_dir, name).graph
    own, folded = set(), set()
    for op in model.g:
        attrs = model.attrs(op)
        if "onnx node" in attrs:
            own.add(attrs["onnx node"])
        folded.update(attrs.get("folded nodes", []))
    assert len(own) == len([op for op in model.g if model.op(op) not in ("input", "output")
                            and model.g.nodes[op]["role"] == "op"])
    for node in stored.node:
        assert node.name in own or f"{node.op_type} {node.name}" in folded, node.name
    weights = {t.name for t in stored.initializer}
    ops = {model.op(op) for op in model.g}
    assert "Constant" not in ops and not weights & set(model.g)
    shown = " ".join(str(v) for op in model.g for v in model.attrs(op).values())
    used = {i for node in stored.node for i in node.input} & weights
    assert all(f"{w} (initializer, " in shown for w in used)
    copies = [op for op in model.g if model.op(op) == "Identity"
              and not list(model.g.predecessors(op))
              and any("(initializer, " in str(v) for v in model.attrs(op).values())]
    assert copies == []


@pytest.mark.parametrize("name", FILES)
def test_edges_carry_shapes(onnx_dir: Path, name: str) -> None:
    """Shapes come from value_info or onnx's inference: the edges out of the inputs are
    labelled, and most drawn edges are; nothing says shapes are missing."""
    graph = _graph(onnx_dir, name)
    assert graph.info()["shapes"] is None
    pic = _picture(onnx_dir, name)
    inputs = {spec.name for spec in graph.model.inputs}
    from_inputs = [e for e in pic.edges if pic.boxes[e.src].name in inputs]
    assert from_inputs and all(re.fullmatch(r"\d+(×\d+)*", e.label) for e in from_inputs)
    if name != "branchy_ts":  # what a Loop computes, onnx's inference cannot tell
        assert sum(bool(e.label) for e in pic.edges) >= 0.8 * len(pic.edges)


@pytest.mark.parametrize("name", FILES)
def test_the_first_view_shows_the_model(onnx_dir: Path, name: str) -> None:
    """The default view is a true picture (the oracle) of at most 80 boxes, at least 8 when
    the model has that many ops, and no closed box holds more than half the ops."""
    graph = _graph(onnx_dir, name)
    h = graph.hierarchy()
    pic = _picture(onnx_dir, name)
    report = check_picture(pic, h)
    assert report, report.summary()
    closed = [b for b in pic.boxes.values() if b.kind in ("op", "group") and not b.open]
    assert min(8, len(graph.model.g)) <= len(closed) <= 80
    total = len(graph.model.g)
    for box in closed:
        # A call op is drawn in its group, titled If/(If).
        member = h.groups.get(box.name) if box.kind == "group" else h.ops.get(op_name(box.name))
        assert member is not None, box.name
        assert len(ops_under(member)) <= total / 2, box.name


# ------------------------------------------------------------------ the modules


def _groups(h: Hierarchy) -> dict[str, Group]:
    return {g.name: g for g in h.groups.values()}


@pytest.mark.parametrize("exporter", ["ts", "dynamo"])
def test_resnet_reads_as_its_modules(onnx_dir: Path, described: dict[str, Any],
                                     exporter: str) -> None:
    """ResNet-18's four stages and their blocks are groups labelled by their dotted path
    (with PyTorch's class where the file says it); the blocks without a downsample share one
    colour, those with one another."""
    name = f"resnet18_{exporter}"
    graph = _graph(onnx_dir, name)
    h = graph.hierarchy()
    groups = _groups(h)
    modules = described[name]["modules"]
    for stage in range(1, 5):
        for block in range(2):
            group = groups[f"layer{stage}/{block}"]
            path = f"layer{stage}.{block}"
            assert group.label in (path, f"{path} ({modules[path]})")
    for scope, label in graph.model.scope_labels.items():
        path, _, kind = label.partition(" (")
        assert path in modules, scope
        assert not kind or re.sub(r"(, )?call \d+\)$", "", kind).rstrip(")") in ("",
                                                                                 modules[path])
    fills = {b.name: b.fill for b in _picture(onnx_dir, name).boxes.values() if not b.open}
    plain = {fills[f"layer{s}/1"] for s in range(1, 5)} | {fills["layer1/0"]}
    downsampling = {fills[f"layer{s}/0"] for s in range(2, 5)}
    assert len(plain) == 1 and len(downsampling) == 1 and plain != downsampling


def test_both_exporters_draw_the_same_blocks(onnx_dir: Path) -> None:
    """The stages and blocks of ResNet-18 and the encoder layers of the text model are the
    same groups whichever exporter wrote the file."""
    for model in ("resnet18", "text"):
        names = []
        for exporter in ("ts", "dynamo"):
            h = _graph(onnx_dir, f"{model}_{exporter}").hierarchy()
            names.append({g.name for g in h.groups.values()
                          if g.kind == "scope" and g.name.count("/") <= 1
                          and re.search(r"(^|/)(layer\d|layers\.\d)(/|$)", g.name)})
        assert names[0] and names[0] == names[1], model


def test_text_model_layers_share_a_colour(onnx_dir: Path) -> None:
    """The six encoder layers are one structure, in both files."""
    for exporter in ("ts", "dynamo"):
        name = f"text_{exporter}"
        h = _graph(onnx_dir, name).hierarchy()
        layers = [g for g in h.groups.values()
                  if re.fullmatch(r"encoder/layers\.\d", g.name)]
        assert len(layers) == 6
        fills = {b.fill for b in _picture(onnx_dir, name).boxes.values()
                 if re.fullmatch(r"encoder/layers\.\d", b.name) and not b.open}
        assert len(fills) == 1 and "#dcdcdc" not in fills, name


def test_control_flow_reads_its_captured_inputs(onnx_dir: Path) -> None:
    """``If`` and ``Loop`` open into their bodies, whose reads of outer tensors are inputs of
    the call: the loop's result reaches the branch, and the branch reaches the output."""
    for name in ("branchy_ts", "cond_dynamo"):
        graph = _graph(onnx_dir, name)
        model = graph.model
        (branch,) = [op for op in model.g if model.op(op) == "If"]
        assert model.attrs(branch)["then_branch"] == {
            "function": model.function_groups[f"{branch}/then_branch"]}
        traced = "\n".join(graph.trace(model.outputs[0].name, depth=10_000))
        assert all(re.search(rf"\b{op}\b", traced) for op in ("Relu", "If", "fc"))
    model = _graph(onnx_dir, "branchy_ts").model
    (loop,) = [op for op in model.g if model.op(op) == "Loop"]
    (branch,) = [op for op in model.g if model.op(op) == "If"]
    assert len(list(model.g.in_edges(branch))) >= 2  # the condition, and what its branches read
    assert nx.has_path(model.g.networkx(), loop, branch)


def test_a_scripted_loop_and_branch_open_into_their_bodies(onnx_dir: Path) -> None:
    """TorchScript's export of a loop calling a module and a branch holding a loop: each
    body is a group under its op, the module inside the loop's body is labelled by its path
    and reads its weights (outer initializers) in its details; the inner loop's body reads
    the outer loop's result, through the branch.  The file's every node and outer read,
    checked by the oracle, and the picture true."""
    graph = _graph(onnx_dir, "nested_ts")
    model, h = graph.model, graph.hierarchy()
    for body in ("Loop/body", "If/then_branch", "If/else_branch", "If/then_branch/Loop/body"):
        assert h.groups[body].kind == "function", body
    gemm = "Loop/body/step/fc/Gemm"
    assert model.attrs(gemm)["B"].startswith("step.fc.weight (initializer, 8×8")
    assert h.groups["Loop/body/step/fc"].label == "step.fc"
    inner = [op for op in ops_under(h.groups["If/then_branch/Loop/body"])
             if model.op(op) == "Mul"]
    assert len(inner) == 1
    assert nx.has_path(model.g.networkx(), "Loop/body/step/Relu", inner[0])
    check_bodies(onnx_dir / "nested_ts.onnx", graph)


def test_a_module_exported_as_a_function_opens_at_each_call(onnx_dir: Path) -> None:
    """``export_modules_as_functions``: one local function, called by two modules, opens
    under each call with its Gemm and ReLU; the two are one structure, one colour."""
    graph = _graph(onnx_dir, "functions_ts")
    model, h = graph.model, graph.hierarchy(OPEN)
    calls = sorted(op for op in model.g if model.op(op) == "__main__::Step")
    assert len(calls) == 2
    groups = [h.ops[call].parent for call in calls]
    for group in groups:
        assert group.kind == "function" and group.function == "__main__::Step"
        assert {"Gemm", "Relu"} <= {model.op(op) for op in ops_under(group)}
    pic = read_svg(graph.render(options=OPEN), graph.render(format="dot", options=OPEN))
    fills = {b.fill for b in pic.boxes.values() if b.kind == "group"
             and b.name in {g.name for g in groups}}
    assert len(fills) == 1 and "#dcdcdc" not in fills
    check_bodies(onnx_dir / "functions_ts.onnx", graph)


# ------------------------------------------------------------------ the files themselves


def test_the_tool_reads_and_draws_it(onnx_dir: Path, tmp_path: Path) -> None:
    """``tbgraph info`` and ``render`` to SVG and HTML, as a user runs them."""
    path = onnx_dir / "resnet18_dynamo.onnx"
    tool = [sys.executable, "-m", "graphviz_tb"]
    info = subprocess.run([*tool, "info", str(path)], capture_output=True, text=True,
                          check=True, cwd=REPO)
    assert "layer1 (Sequential)" in info.stdout or "layer1" in info.stdout
    for suffix in ("svg", "html"):
        out = tmp_path / f"resnet.{suffix}"
        subprocess.run([*tool, "render", str(path), "-o", str(out)], capture_output=True,
                       text=True, check=True, cwd=REPO)
        text = out.read_text(encoding="utf-8")
        assert "layer4.1 (BasicBlock)" in text


def test_a_wider_block_diffs_as_changes_inside_that_block_only(onnx_dir: Path) -> None:
    """Two ONNX files diff as two TensorFlow graphs do: exit status 1 and, in the JSON, the
    changed ops all in the block made wider (its convolutions' weights, the tensor between
    them), none elsewhere."""
    files = [str(onnx_dir / f"{name}_ts.onnx") for name in ("small", "wider")]
    done = subprocess.run([sys.executable, "-m", "graphviz_tb", "diff", *files, "--json"],
                          capture_output=True, text=True, cwd=REPO, check=False)
    assert done.returncode == 1, done.stderr
    ops = json.loads(done.stdout)["ops"]
    assert ops["added"] == [] and ops["removed"] == []
    what = {c["new"]: " ".join(c["what"]) for c in ops["changed"]}
    assert what and all(name.startswith("blocks/1/") for name in what)
    for conv in ("blocks/1/expand/Conv", "blocks/1/project/Conv"):  # the weights' shapes
        assert re.search(r"weight \(initializer, \S*32\S*, float32\)", what[conv])


def test_missing_external_data_reads_the_same(onnx_dir: Path, tmp_path: Path) -> None:
    """The dynamo exporter's weights are in a ``.data`` file: without it, the same model."""
    source = onnx_dir / "resnet18_dynamo.onnx"
    assert Path(f"{source}.data").exists()
    alone = tmp_path / source.name
    shutil.copy(source, alone)
    with_data, without = _graph(onnx_dir, "resnet18_dynamo"), graphviz_tb.load(alone)
    assert with_data.render(format="dot") == without.render(format="dot")
    model = without.model
    assert {op: model.attrs(op) for op in model.g} == {
        op: with_data.model.attrs(op) for op in with_data.model.g}


def test_without_onnx_one_line_says_what_to_install(onnx_dir: Path) -> None:
    code = ("import sys\nsys.modules['onnx'] = None  # as if not installed\n"
            "from graphviz_tb.cli import run\n"
            f"sys.argv = ['tbgraph', 'info', {str(onnx_dir / 'cond_dynamo.onnx')!r}]\n"
            "run()\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=REPO, check=False)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and INSTALL in lines[0] and "Traceback" not in done.stderr


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
    onnx = _onnx()
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
    stored = _onnx().load(str(path)).graph.node
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

    onnx = _onnx()
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
    stored = _onnx().load(str(path)).graph
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
