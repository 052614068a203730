"""ONNX models read as the model (issue 46).

The files are written by the installed PyTorch with both exporters (``onnx_models.py``, in a
subprocess: reading them needs ``onnx``, never PyTorch): torchvision's ResNet-18, ResNet-50,
ViT-B/16 and MobileNetV3, a ``TransformerEncoder`` text model, an LSTM encoder-decoder, a
U-Net with ``ModuleList``\\ s, a scripted model with ``Loop`` and ``If``, ``torch.cond``, a
scripted model with a loop inside a branch, and a module exported as a local function.  The
files no PyTorch exported here are in ``test_onnx_unexported.py``.  Each is checked
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
from collections import defaultdict
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
from conftest import write_with
from onnx_oracle import OPEN, check_bodies, need_onnx
from picture import Picture, check_picture, ops_under, read_svg
from svgparse import op_name

import graphviz_tb
from graphviz_tb.group.tree import Group, Hierarchy
from graphviz_tb.read.detect import detect
from graphviz_tb.write.page import page_json

pytestmark = [pytest.mark.torch, pytest.mark.dot]

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
#: The models both exporters wrote, and those only one could.
BOTH = ("resnet18", "resnet50", "vit_b_16", "mobilenet_v3", "text", "seq2seq", "unet")
FILES = (*(f"{model}_{exporter}" for model in BOTH for exporter in ("ts", "dynamo")),
         "branchy_ts", "cond_dynamo")
INSTALL = "pip install 'graphviz_tb[onnx]'"


@pytest.fixture(scope="session")
def onnx_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every model exported once, by PyTorch in its own process."""
    if not os.environ.get("CI"):
        pytest.importorskip("torch")
        pytest.importorskip("onnxscript")
    need_onnx()
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
    return need_onnx().load(str(onnx_dir / f"{name}.onnx"), load_external_data=False)


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


#: What ``picture`` calls a unique structure's fill.
GREY = "#dcdcdc"


@pytest.mark.parametrize("model", BOTH)
def test_both_exporters_draw_the_same_modules_in_the_same_colours(onnx_dir: Path,
                                                                   model: str) -> None:
    """One model's first view is the same whichever exporter wrote the file: the same module
    boxes (scopes, and series of alike ones, by name), each open or closed alike and in the
    same colour, and a legend naming the same structures (the class aside: only the dynamo
    exporter writes it).  The ops between modules may differ: each exporter writes its own."""
    pictures = [_picture(onnx_dir, f"{model}_{exporter}") for exporter in ("ts", "dynamo")]
    boxes = [{b.name: (b.open, b.fill) for b in pic.boxes.values() if b.kind == "group"}
             for pic in pictures]
    assert boxes[0] and boxes[0] == boxes[1]
    legends = [[(fill, re.sub(r" \([^)]*\)", "", text)) for fill, text in pic.legend]
               for pic in pictures]
    assert legends[0] == legends[1]


#: Each model's classes of equal blocks (torchvision's, and ``torch_models``' U-Net's).
ALIKE = {"resnet50": ("Bottleneck",), "vit_b_16": ("EncoderBlock",),
         "unet": ("ConvBlock", "Up")}


def _kinds(modules: dict[str, str]) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Each module's kind, as PyTorch says: its class and its children's classes (a
    bottleneck with a downsample is another kind than one without)."""
    children: dict[str, list[str]] = defaultdict(list)
    for path, cls in modules.items():
        children[path.rpartition(".")[0]].append(cls)
    return {path: (cls, tuple(sorted(children[path]))) for path, cls in modules.items()}


@pytest.mark.parametrize("name", [f"{model}_{exporter}" for model in ALIKE
                                  for exporter in ("ts", "dynamo")])
def test_equal_blocks_are_drawn_in_one_colour(onnx_dir: Path, described: dict[str, Any],
                                              name: str) -> None:
    """ResNet-50's sixteen bottlenecks, ViT-B/16's twelve encoder layers, the U-Net's
    convolution blocks and up-steps: each block not inside another is a closed box of the
    first view, one colour for each kind, none grey and no two kinds alike, whichever
    exporter wrote the file."""
    wanted = ALIKE[name.rpartition("_")[0]]
    kinds = _kinds(described[name]["modules"])
    h = _graph(onnx_dir, name).hierarchy()
    group_of = {g.label.partition(" (")[0]: g.name for g in h.groups.values()
                if g.kind == "scope"}
    boxes = {b.name: b for b in _picture(onnx_dir, name).boxes.values() if b.kind == "group"}
    fills: dict[tuple[str, tuple[str, ...]], set[str]] = defaultdict(set)
    for path, kind in kinds.items():
        outer = [path[:i] for i, c in enumerate(path) if c == "."]
        if kind[0] in wanted and not any(kinds[p][0] in wanted for p in outer if p in kinds):
            box = boxes[group_of[path]]
            assert not box.open, box.name
            fills[kind].add(box.fill)
    assert {kind[0] for kind in fills} == set(wanted)
    assert all(len(f) == 1 for f in fills.values()), fills
    drawn = [f for found in fills.values() for f in found]
    assert GREY not in drawn and len(set(drawn)) == len(drawn)


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
        assert len(fills) == 1 and GREY not in fills, name


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
        assert "layer4.1 (BasicBlock)" in (page_json(text) if suffix == "html" else text)


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
