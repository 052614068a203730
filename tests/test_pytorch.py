"""PyTorch graphs read as the model (issue 43).

``SummaryWriter.add_graph`` logdirs are written by the installed PyTorch (``torch_models.py``,
in a subprocess: reading them must never need PyTorch) for torchvision's ResNet-50, ViT-B/16
and MobileNetV3, a ``TransformerEncoder`` text model, an LSTM encoder-decoder, a U-Net with
``ModuleList``\\ s and skip connections, and random models made of the parts users combine.
Each is read, drawn and read back from the SVG (``picture.py``): what a person sees must be
the model's modules, not the tracer's plumbing.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import write_with
from picture import DOM_SCRIPT, Picture, check_picture, read_dom, read_svg

import graphviz_tb
from graphviz_tb.group.tree import Group, Hierarchy
from graphviz_tb.model.aten_args import ARGUMENTS
from graphviz_tb.model.graph import tensor_of
from graphviz_tb.options import RenderOptions
from graphviz_tb.read import discover

pytestmark = [pytest.mark.torch, pytest.mark.dot]

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
MODELS = ("resnet50", "vit_b_16", "mobilenet_v3", "text_transformer", "lstm_seq2seq", "unet",
          "random_1", "random_2", "random_3")
VIEWS = {"default": RenderOptions(), "expand_all": RenderOptions(expand_all=True)}
#: A box named after a JIT value (``input.5``, ``676``, ``x.3``) rather than a module or op.
VALUE_NUMBER = re.compile(r"(^|[^A-Za-z_])\d+$|\.\d+$")


@pytest.fixture(scope="session")
def torch_logdirs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every model's logdir, written once by PyTorch in its own process."""
    if not os.environ.get("CI"):
        pytest.importorskip("torch")
    return write_with("torch_models.py", tmp_path_factory.mktemp("torch"), "the models")


@pytest.fixture(scope="session")
def described(torch_logdirs: Path) -> dict[str, Any]:
    """What PyTorch says of each model: its inputs' shapes, modules and parameters."""
    return json.loads((torch_logdirs / "models.json").read_text())


_GRAPHS: dict[str, graphviz_tb.Graph] = {}
_PICTURES: dict[tuple[str, str], Picture] = {}


def _graph(logdirs: Path, name: str) -> graphviz_tb.Graph:
    if name not in _GRAPHS:
        _GRAPHS[name] = graphviz_tb.load(logdirs / name)
    return _GRAPHS[name]


def _picture(logdirs: Path, name: str, view: str) -> Picture:
    """The model drawn in one view, read back from its SVG (each drawn once per session)."""
    if (name, view) not in _PICTURES:
        graph = _graph(logdirs, name)
        options = VIEWS[view]
        _PICTURES[name, view] = read_svg(graph.render(options=options),
                                         graph.render(format="dot", options=options))
    return _PICTURES[name, view]


def _label(h: Hierarchy, box: Any) -> str:
    """The label a box shows (its lines joined: a long one wraps), from the member drawn."""
    member = h.lookup(box.name)
    assert member is not None, box.name
    return member.label


def _drawn(pic: Picture) -> list[Any]:
    return [b for b in pic.boxes.values() if b.kind in ("op", "group")]


# ------------------------------------------------------------------ every model


@pytest.mark.parametrize("name", MODELS)
def test_reads_without_a_warning(torch_logdirs: Path, name: str) -> None:
    """Parameter reads are inputs of their ops, not missing nodes: nothing to warn of."""
    info = _graph(torch_logdirs, name).info()
    assert info["warnings"] == []
    assert info["missing_nodes"] == 0


@pytest.mark.parametrize("view", sorted(VIEWS))
@pytest.mark.parametrize("name", MODELS)
def test_the_picture_shows_modules_not_plumbing(torch_logdirs: Path, name: str,
                                                view: str) -> None:
    """No ``prim::`` op is drawn, even with every group open; no box is named by a JIT value
    number; one box per module; and the picture is true to the graph (the oracle)."""
    graph = _graph(torch_logdirs, name)
    h = graph.hierarchy(VIEWS[view])
    pic = _picture(torch_logdirs, name, view)
    drawn = _drawn(pic)
    plumbing = [b.name for b in drawn if any(t.startswith("prim::") for t in b.texts)]
    assert plumbing == []
    assert not [op for op, d in graph.model.g.nodes(data=True) if d["op"].startswith("prim::")]
    labels = [_label(h, b) for b in drawn]
    numbered = [x for x in labels if " (" not in x and VALUE_NUMBER.search(x)]
    assert numbered == []  # (a module's label is checked below and in the next test)
    modules = Counter(_label(h, b) for b in drawn if b.kind == "group" and b.name.endswith("]"))
    assert [m for m, n in modules.items() if n > 1] == []
    assert "ModuleList" not in " ".join(modules)  # iterated, never called: no box of its own
    report = check_picture(pic, h)
    assert report, report.summary()


@pytest.mark.parametrize("name", MODELS)
def test_modules_read_as_the_code_does(torch_logdirs: Path, described: dict[str, Any],
                                       name: str) -> None:
    """Every module scope is labelled ``dotted.path (Class)`` with a path and class PyTorch
    itself gives that module (``named_modules``), and keeps its trace path as its name."""
    modules = described[name]["modules"]
    h = _graph(torch_logdirs, name).hierarchy()
    scopes = [g for g in h.groups.values() if g.kind == "scope" and "[" in g.name]
    assert scopes
    for g in scopes:
        path, _, kind = g.label.rpartition(" (")
        assert modules.get(path) == kind.rstrip(")"), (g.name, g.label)
        assert g.name.endswith("]")  # the full trace path: ``Sequential[layer1]/...``


@pytest.mark.parametrize("name", MODELS)
def test_parameters_are_named_inputs_of_their_ops(torch_logdirs: Path,
                                                  described: dict[str, Any], name: str
                                                  ) -> None:
    """Each parameter read shows in its op's details, by its name in ``named_parameters``."""
    model = _graph(torch_logdirs, name).model
    shown = set()
    for op in model.g:
        for value in model.attrs(op).values():
            for text in value if isinstance(value, list) else [value]:
                if isinstance(text, str) and text.endswith(" (parameter)"):
                    shown.add(text.removesuffix(" (parameter)"))
    # What eval mode never reads: BatchNorm's update count.
    parameters = {p for p in described[name]["parameters"]
                  if not p.endswith("num_batches_tracked")}
    assert shown <= parameters
    assert len(shown) >= 0.9 * len(parameters)  # all but the few a model never reads


@pytest.mark.parametrize("name", MODELS)
def test_inputs_and_outputs_are_the_models(torch_logdirs: Path, described: dict[str, Any],
                                           name: str) -> None:
    """``info`` lists the forward's inputs with their shapes and the output; each is one box
    at the top of the picture, and tracing the output's inputs reaches every input."""
    graph = _graph(torch_logdirs, name)
    info = graph.info()
    shapes = [spec["shape"] for spec in info["inputs"]]
    assert [list(s) for s in shapes] == described[name]["inputs"]
    assert [spec["name"] for spec in info["outputs"]] == ["output"]
    pic = _picture(torch_logdirs, name, "default")
    top = {b.name: b for b in _drawn(pic) if "/" not in b.name}
    names = [spec["name"] for spec in info["inputs"]] + ["output"]
    assert sorted(n for n in top if n in names) == sorted(names)
    assert all(top[n].kind == "op" for n in names)
    traced = "\n".join(graph.trace("output", depth=10_000))
    for spec in info["inputs"]:
        assert re.search(rf"\b{re.escape(spec['name'])}\b", traced)


@pytest.mark.parametrize("name", MODELS)
def test_shapes_are_drawn_and_never_said_missing(torch_logdirs: Path, name: str) -> None:
    """Every op records its shapes: the edges out of the inputs and into the output are
    labelled with them, most drawn edges are, and nothing says shapes are missing."""
    graph = _graph(torch_logdirs, name)
    assert graph.info()["shapes"] is None
    svg = graph.render()
    assert "no shapes" not in svg and "shapes recorded" not in svg
    pic = _picture(torch_logdirs, name, "default")
    ends = {spec["name"] for spec in graph.info()["inputs"]} | {"output"}
    io_edges = [e for e in pic.edges if {pic.boxes[e.src].name, pic.boxes[e.dst].name} & ends]
    assert io_edges and all(re.fullmatch(r"\d+(×\d+)*", e.label) for e in io_edges)
    labelled = [e for e in pic.edges if e.label]
    assert len(labelled) >= 0.8 * len(pic.edges)


# ------------------------------------------------------------------ the models one by one


def _by_label(h: Hierarchy) -> dict[str, Group]:
    return {g.label: g for g in h.groups.values()}


def _fills(pic: Picture, h: Hierarchy, pattern: str) -> dict[str, str]:
    """The fill of each closed box whose label matches."""
    return {_label(h, b): b.fill for b in _drawn(pic)
            if not b.open and re.fullmatch(pattern, _label(h, b))}


def _members(group: Group) -> list[str]:
    """The labels of the group's child groups, a series' members in its place (``layer3.1``
    to ``layer3.5`` fold into ``layer3.[1-5]``, as they would in a TF graph)."""
    return [label for c in group.children if isinstance(c, Group)
            for label in (_members(c) if c.kind == "series" else [c.label])]


def _chain(group: Group) -> list[str]:
    """The group's children in dataflow order, when its edges join them in one chain (each
    child feeds the next and nothing else), a series' members in its place; [] otherwise."""
    children = [c for c in group.children if isinstance(c, Group)]
    nexts: dict[Any, set[Any]] = {c: set() for c in children}
    for (a, b), agg in group.edges.items():
        if agg.counts["data"] and a in nexts and b in nexts:
            nexts[a].add(b)
    firsts = set(children) - {b for bs in nexts.values() for b in bs}
    if len(firsts) != 1 or any(len(bs) > 1 for bs in nexts.values()):
        return []
    order = [next(iter(firsts))]
    while nexts[order[-1]]:
        order.append(next(iter(nexts[order[-1]])))
    if len(order) != len(children):
        return []
    return [label for c in order
            for label in (_chain(c) if c.kind == "series" else [c.label])]


def test_resnet50(torch_logdirs: Path) -> None:
    """Its four stages chain their bottlenecks (no pooled constant feeds a later block), the
    identity bottlenecks of every stage share one colour, and the first convolution's
    kernel size, stride and padding are in its details."""
    graph = _graph(torch_logdirs, "resnet50")
    h = graph.hierarchy()
    groups = _by_label(h)
    blocks = {1: 3, 2: 4, 3: 6, 4: 3}
    for stage, count in blocks.items():
        assert _chain(groups[f"layer{stage} (Sequential)"]) == [
            f"layer{stage}.{i} (Bottleneck)" for i in range(count)]
    fills = _fills(_picture(torch_logdirs, "resnet50", "default"), h, r"layer\d\.\d \(Bottleneck\)")
    identity = {fills[f"layer{s}.{i} (Bottleneck)"] for s, n in blocks.items()
                for i in range(1, n)}
    first = {fills[f"layer{s}.0 (Bottleneck)"] for s in blocks}
    assert len(identity) == 1 and len(first) == 1 and identity != first
    legend = _picture(torch_logdirs, "resnet50", "default").legend
    assert (identity.pop(), "layer1.1 (Bottleneck) × 12") in legend
    (conv,) = [op for op in graph.model.g if op.startswith("ResNet/Conv2d[conv1]/")]
    attrs = graph.model.attrs(conv)
    assert graph.model.op(conv) == "aten::_convolution"
    assert attrs["weight"] == "conv1.weight (parameter)"
    assert attrs["stride"] == [2, 2] and attrs["padding"] == [3, 3]


def test_vit_b_16(torch_logdirs: Path) -> None:
    """Twelve encoder blocks in a chain and in one colour; each block's attention is one op
    with two outputs, not one per output."""
    graph = _graph(torch_logdirs, "vit_b_16")
    h = graph.hierarchy()
    layers = _by_label(h)["encoder.layers (Sequential)"]
    names = [f"encoder.layers.encoder_layer_{i} (EncoderBlock)" for i in range(12)]
    assert _chain(layers) == names
    fills = _fills(_picture(torch_logdirs, "vit_b_16", "default"), h, r".*\(EncoderBlock\)")
    assert sorted(fills) == sorted(names)
    assert len(set(fills.values())) == 1 and "#dcdcdc" not in fills.values()
    legend = _picture(torch_logdirs, "vit_b_16", "default").legend
    assert (fills[names[0]], "encoder_layer_0 (EncoderBlock) × 12") in legend
    attention = [op for op in graph.model.g
                 if graph.model.op(op) == "aten::_native_multi_head_attention"]
    assert len(attention) == 12
    assert all(len(graph.model.op_outputs(op)) == 2 for op in attention)


def test_mobilenet_v3(torch_logdirs: Path) -> None:
    """Its features chain, and its five residual squeeze-excite blocks (5, 6, 8, 10, 11)
    share one colour that no other block has."""
    h = _graph(torch_logdirs, "mobilenet_v3").hierarchy()
    features = _by_label(h)["features (Sequential)"]
    assert len(_chain(features)) == 13
    fills = _fills(_picture(torch_logdirs, "mobilenet_v3", "default"), h,
                   r"features\.\d+ \(InvertedResidual\)")
    residual = {fills[f"features.{i} (InvertedResidual)"] for i in (5, 6, 8, 10, 11)}
    others = {fills[f"features.{i} (InvertedResidual)"] for i in (1, 2, 3, 4, 7, 9)}
    assert len(residual) == 1 and not residual & others


def test_text_transformer(torch_logdirs: Path) -> None:
    """The encoder's six layers (a ModuleList it iterates) are six boxes in a chain, in one
    colour, named by their attribute path; no ghost row of parameter reads beside them."""
    h = _graph(torch_logdirs, "text_transformer").hierarchy()
    encoder = _by_label(h)["encoder (TransformerEncoder)"]
    names = [f"encoder.layers.{i} (TransformerEncoderLayer)" for i in range(6)]
    assert _chain(encoder) == names
    assert all(isinstance(c, Group) for c in encoder.children)
    assert _members(encoder) == names
    fills = _fills(_picture(torch_logdirs, "text_transformer", "default"), h,
                   r"encoder\.layers\.\d \(TransformerEncoderLayer\)")
    assert len(fills) >= 4 and len(set(fills.values())) == 1  # the open ones are frames


def test_lstm_seq2seq(torch_logdirs: Path) -> None:
    """Two inputs, two boxes; each LSTM one op with three outputs, and the encoder's final
    state (two of them) feeds the decoder."""
    graph = _graph(torch_logdirs, "lstm_seq2seq")
    model = graph.model
    lstms = sorted(op for op in model.g if model.op(op) == "aten::lstm")
    assert lstms == ["Seq2Seq/LSTM[decoder]/lstm", "Seq2Seq/LSTM[encoder]/lstm"]
    assert [len(model.op_outputs(op)) for op in lstms] == [3, 3]
    state = sorted(d["src_output"] for u, _, d in model.g.in_edges(lstms[0], data=True)
                   if tensor_of(u, d)[0] == lstms[1])
    assert state == [1, 2]
    assert [s.name for s in model.inputs] == ["src", "tgt"]
    params = model.attrs(lstms[1])["params"]
    assert params[0] == "encoder.weight_ih_l0 (parameter)" and len(params) == 8


def test_unet(torch_logdirs: Path) -> None:
    """Each level down and up is one box (never two called ``up.0``), the four skip
    connections join the matching levels, and the up blocks share one colour."""
    h = _graph(torch_logdirs, "unet").hierarchy()
    unet = h.groups["UNet"]
    labels = [c.label for c in unet.children if isinstance(c, Group)]
    assert sorted(labels) == sorted(["stem (ConvBlock)", "pool (MaxPool2d)",
                                     "head (Conv2d)", *(f"down.{i} (ConvBlock)" for i in range(4)),
                                     *(f"up.{i} (Up)" for i in range(4))])
    joined = {(a.label, b.label) for (a, b), agg in unet.edges.items() if agg.counts["data"]}
    for level, source in enumerate(["down.2 (ConvBlock)", "down.1 (ConvBlock)",
                                    "down.0 (ConvBlock)", "stem (ConvBlock)"]):
        assert (source, f"up.{level} (Up)") in joined
    fills = _fills(_picture(torch_logdirs, "unet", "default"), h, r"up\.\d \(Up\)")
    assert len(fills) == 4 and len(set(fills.values())) == 1


# ------------------------------------------------------------------ reading needs no PyTorch


def test_reading_a_trace_never_imports_torch(torch_logdirs: Path) -> None:
    code = ("import sys, graphviz_tb\n"
            f"g = graphviz_tb.load({str(torch_logdirs / 'lstm_seq2seq')!r})\n"
            "g.render(format='dot'); g.info()\n"
            "print('torch' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, cwd=REPO)
    assert done.stdout.strip() == "False"


def test_a_trace_saved_as_a_graphdef_file_draws_as_its_logdir(torch_logdirs: Path,
                                                               tmp_path: Path) -> None:
    """A binary GraphDef file is built from a light parse of its nodes (names, types, inputs,
    devices); folding a trace reads attributes, so that parse must be made whole again."""
    logdir = torch_logdirs / "lstm_seq2seq"
    path = tmp_path / "trace.pb"
    path.write_bytes(discover(logdir).graphs[0].load().SerializeToString())
    assert graphviz_tb.load(path).render(format="dot") == \
        graphviz_tb.load(logdir).render(format="dot")


def test_argument_names_are_pytorchs(torch_logdirs: Path) -> None:
    """Each argument list in the generated table is one PyTorch registers for that op."""
    code = ("import torch, json\n"
            "print(json.dumps(sorted({(s.name, ' '.join(a.name for a in s.arguments))\n"
            "    for s in torch._C._jit_get_all_schemas()})))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    registered = {tuple(pair) for pair in json.loads(done.stdout)}
    table = {(op, names) for op, lists in ARGUMENTS.items() for names in lists}
    assert len(table) > 150
    assert table - registered == set()


# ------------------------------------------------------------------ the viewer


@pytest.mark.browser
@pytest.mark.parametrize("name", ["unet", "lstm_seq2seq"])
def test_the_viewer_draws_the_modules_true(torch_logdirs: Path, browser: Any, tmp_path: Path,
                                           name: str) -> None:
    """The page's first view and its views after opening every module of the model's scope
    are true pictures (the oracle on the DOM); a module's details keep its trace path, an
    op's list its parameters by name; tracing the output's inputs reaches every input."""
    import time

    graph = _graph(torch_logdirs, name)
    options = RenderOptions()
    h = graph.hierarchy(options)
    path = tmp_path / "page.html"
    graph.render(path, options=options)
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(path.resolve().as_uri())
        end = time.monotonic() + 30
        while not page.evaluate("window.tbgraph && window.tbgraph.ready === true"):
            assert time.monotonic() < end, f"the viewer did not get ready: {errors}"
            time.sleep(0.05)
        modules = [c.name for g in h.root.children if isinstance(g, Group)
                   for c in g.children if isinstance(c, Group)]
        steps = ["opening", *modules[:4]]
        for step in steps:
            if step != "opening":
                page.evaluate("(n) => window.tbgraph.expand(n)", step)
            report = check_picture(read_dom(page.evaluate(DOM_SCRIPT)), h)
            assert report, f"after {step}: {report.summary()}"
        module = next(g for g in h.groups.values() if g.name.endswith("]"))
        page.evaluate("(n) => window.tbgraph.select(n)", module.name)
        assert page.inner_text("aside.details .fullname") == module.name
        assert module.label in page.inner_text("aside.details h2")
        reader = next(op for op in graph.model.g
                      if any(isinstance(v, str) and v.endswith("(parameter)")
                             for v in graph.model.attrs(op).values()))
        page.evaluate("(n) => window.tbgraph.select(n)", reader)
        details = page.inner_text("aside.details")
        assert re.search(r"\w+\.(weight|bias) \(parameter\)", details)
        lit = page.evaluate("window.tbgraph.traceInputs('output')")
        assert {spec.name for spec in graph.model.inputs} <= set(lit)
        out = page.evaluate("(n) => window.tbgraph.traceOutputs(n)", graph.model.inputs[0].name)
        assert "output" in out
        assert errors == []
    finally:
        page.close()


# ------------------------------------------------------------------ traces nobody wrote

_OPS = ("prim::Constant", "prim::ListConstruct", "prim::TupleConstruct", "prim::ListUnpack",
        "prim::TupleUnpack", "prim::GetAttr", "prim::NumToTensor", "prim::TupleIndex",
        "aten::Int", "aten::add", "aten::lstm", "aten::_convolution", "prim::PythonOp")


@pytest.mark.parametrize("seed", range(40))
def test_any_trace_like_graph_reads_or_says_why(seed: int, tmp_path: Path) -> None:
    """Random graphs in the shape add_graph writes (scoped value names, inputs naming values
    before or after them or none at all, repeated calls, odd attribute texts): each is read,
    drawn and summarised, with no folded plumbing left, or refused in one line."""
    import random

    from tensorboard.compat.proto.graph_pb2 import GraphDef

    from graphviz_tb.errors import GraphvizTbError

    rng = random.Random(seed)
    graph = GraphDef()
    names = [f"M/A[{rng.randint(0, 2)}]/v.{i}" for i in range(rng.randint(1, 40))]
    first = graph.node.add(name="input/x.1", op="IO Node")
    first.attr["_output_shapes"].list.shape.add().dim.add(size=3)
    for i, name in enumerate(names):
        node = graph.node.add(name=name, op=rng.choice(_OPS))
        pool = ["input/x.1", *names, "M/missing"]
        node.input.extend(rng.choice(pool) for _ in range(rng.randint(0, 4)))
        node.attr["attr"].s = rng.choice([b"{}", b"{ value : 3}", b"{ value :  cpu }",
                                          b"{ value : [1, 2]}", b"{ name :  weight }",
                                          b"{ value : tensor([1.])}", b"\xff{", b""])
        if rng.random() < 0.5:
            node.attr["_output_shapes"].list.shape.add().dim.add(size=i)
        if rng.random() < 0.2:  # a call with several outputs: its NodeDef again
            graph.node.add().CopyFrom(node)
            graph.node[-1].name = f"{name}_again"
    graph.node.add(name="output/output.1", op="IO Node", input=[rng.choice(names)])
    path = tmp_path / "trace.pb"
    path.write_bytes(graph.SerializeToString())
    try:
        loaded = graphviz_tb.load(path)
        loaded.render(format="dot")
        loaded.info()
    except GraphvizTbError as exc:
        assert "\n" not in str(exc)
        return
    folded = {"prim::Constant", "prim::ListConstruct", "prim::TupleConstruct",
              "prim::ListUnpack", "prim::TupleUnpack", "prim::GetAttr", "prim::NumToTensor"}
    assert not [op for op, d in loaded.model.g.nodes(data=True) if d["op"] in folded]


def _chain_trace(path: Path, links: list[tuple[str, str]]) -> Path:
    """An add_graph-shaped GraphDef written to ``path``: an input IO Node, the ``links``
    (name, op) each reading the one before, and an output IO Node."""
    from tensorboard.compat.proto.graph_pb2 import GraphDef

    graph = GraphDef()
    graph.node.add(name="input/x.1", op="IO Node")
    previous = "input/x.1"
    for name, op in links:
        graph.node.add(name=name, op=op, input=[previous])
        previous = name
    graph.node.add(name="output/output.1", op="IO Node", input=[previous])
    path.write_bytes(graph.SerializeToString())
    return path


def test_lists_nested_thousands_deep_are_refused_in_one_line(tmp_path: Path) -> None:
    links = [(f"M/l{i}", "prim::ListConstruct") for i in range(20_000)]
    path = _chain_trace(tmp_path / "deep.pb", [*links, ("M/cat", "aten::cat")])
    with pytest.raises(graphviz_tb.InputError, match="nested too deeply"):
        graphviz_tb.load(path)


def test_a_trace_without_shapes_gets_pytorchs_advice(tmp_path: Path) -> None:
    """Where a trace records few shapes, the note says why in PyTorch's terms, never
    TensorFlow's remedies (--infer-shapes, add_shapes=True, a SavedModel)."""
    path = _chain_trace(tmp_path / "trace.pb",
                        [(f"M/Linear[fc{i}]/v.{i}", "aten::relu") for i in range(6)])
    note = graphviz_tb.load(path).info()["shapes"]
    assert "add_graph records the shapes of traced tensors only" in note
    assert "--infer-shapes" not in note and "add_shapes" not in note


def test_infer_shapes_on_a_trace_says_why_not(tmp_path: Path) -> None:
    """``--infer-shapes`` asks TensorFlow, which cannot run ``aten`` ops: one line says so
    (it used to infer nothing, silently)."""
    path = _chain_trace(tmp_path / "trace.pb", [("M/Linear[fc]/v", "aten::relu")])
    with pytest.raises(graphviz_tb.InputError, match=r"trace\.pb: .*cannot run PyTorch"):
        graphviz_tb.load(path).infer_shapes()


def test_a_graph_that_does_not_start_as_a_trace_is_read_node_for_node() -> None:
    """Only a graph that starts with add_graph's IO Nodes, all of whose ops have a namespace,
    is folded: a TensorFlow graph with an op called ``aten::`` (hypothesis found one) keeps
    every NodeDef as one op."""
    from tensorboard.compat.proto.graph_pb2 import GraphDef

    from graphviz_tb.model.build import build_model

    for first, other in (("Identity", "aten::"), ("IO Node", "Identity")):
        graph = GraphDef()
        graph.node.add(name="a", op=first)
        graph.node.add(name="b", op=other, input=["a"])
        graph.node.add(name="c", op="prim::Constant", input=["b"])
        model = build_model(graph)
        assert sorted(model.g) == ["a", "b", "c"]
