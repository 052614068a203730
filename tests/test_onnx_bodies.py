"""ONNX bodies and local functions open as groups, as TensorFlow's function bodies do (issue 46).

Models are built with ``onnx.helper`` as a converter would write them: ``If`` branches,
``Loop`` and ``Scan`` bodies reading tensors of the graphs around them (ONNX names them
implicitly), bodies nested in bodies, a local function called twice, hostile names, and
random models of all of these.  Each is checked against the file itself: every node of every
graph an op under its call's group or folded into one, every tensor a body reads from
outside wired through its call to the op that reads it, and the picture true (the oracles
of ``onnx_oracle.py`` and ``picture.py``).  PyTorch's exports of the same (a scripted loop
and branch, a module exported as a function) are in ``test_onnx.py``.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from hostile_inputs import HOSTILE_NAMES, page_problems, svg_problems
from onnx_oracle import OPEN, check_bodies, need_onnx
from pages import open_viewer, page_names
from picture import DOM_SCRIPT, check_picture, ops_under, read_dom
from svgparse import fill_of, node_groups, parse

import graphviz_tb
from graphviz_tb.model.graph import tensor_of
from graphviz_tb.options import RenderOptions
from graphviz_tb.write.page import page_data

pytestmark = pytest.mark.dot


def _value(name: str) -> Any:
    onnx = need_onnx()
    return onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None)


def _graph(nodes: list[Any], name: str, inputs: list[str], outputs: list[str],
           initializer: list[Any] | None = None) -> Any:
    return need_onnx().helper.make_graph(nodes, name, [_value(i) for i in inputs],
                                     [_value(o) for o in outputs], initializer=initializer)


def _save(tmp_path: Path, graph: Any, functions: list[Any] | None = None,
          name: str = "model.onnx") -> Path:
    onnx = need_onnx()
    helper = onnx.helper
    model = helper.make_model(graph, functions=functions or [], opset_imports=[
        helper.make_opsetid("", 18), helper.make_opsetid("local", 1)])
    path = tmp_path / name
    path.write_bytes(model.SerializeToString())
    return path


def _node(op: str, inputs: list[str], outputs: list[str], name: str, **kwargs: Any) -> Any:
    return need_onnx().helper.make_node(op, inputs, outputs, name=name, **kwargs)


# ------------------------------------------------------------------ If, Loop, Scan


def test_if_branches_open_as_groups_fed_by_what_they_read(tmp_path: Path) -> None:
    """An ``If``'s branches are expandable groups under it; each branch's reads of outer
    tensors are its arguments, fed through the ``If`` by the ops making them (an outer
    weight folds into the op reading it, as in the model's graph); each branch's result
    feeds what reads the ``If``'s output."""
    onnx = need_onnx()
    then = _graph([_node("Add", ["a", "w"], ["t"], "then_add")], "then", [], ["t"])
    orelse = _graph([_node("Mul", ["b", "b"], ["e"], "else_mul")], "else", [], ["e"])
    weight = onnx.helper.make_tensor("w", onnx.TensorProto.FLOAT, [3], [1.0, 2.0, 3.0])
    graph = _graph([
        _node("Relu", ["x"], ["a"], "relu"), _node("Neg", ["x"], ["b"], "neg"),
        _node("ReduceSum", ["x"], ["s"], "sum"), _node("Greater", ["s", "s"], ["c"], "gt"),
        _node("If", ["c"], ["y"], "branch", then_branch=then, else_branch=orelse),
        _node("Abs", ["y"], ["z"], "abs")], "main", ["x"], ["z"], [weight])
    path = _save(tmp_path, graph)
    loaded = graphviz_tb.load(path)
    model, h = loaded.model, loaded.hierarchy()
    call = h.groups["If"]
    assert call.kind == "function" and h.ops["If"].parent is call
    for sub in ("then_branch", "else_branch"):
        body = h.groups[f"If/{sub}"]
        assert body.kind == "function" and body.parent is call
    assert model.function_groups == {"If/then_branch": "then", "If/else_branch": "else"}
    g = model.g
    assert {(u, tensor_of(u, d)) for u, _, d in g.in_edges("If/then_branch/a", data=True)} == {
        ("If", ("Relu", 0))}
    assert set(g.successors("If/then_branch/a")) == {"If/then_branch/Add"}
    assert {(u, tensor_of(u, d)) for u, _, d in g.in_edges("If/else_branch/b", data=True)} == {
        ("If", ("Neg", 0))}
    assert sorted(d["dst_input"] for _, _, d in g.in_edges("If/else_branch/Mul", data=True)) \
        == [0, 1]
    assert model.attrs("If/then_branch/Add")["B"] == "w (initializer, 3, float32)"
    assert "If/then_branch/w" not in g  # a weight is no argument
    assert set(g.predecessors("Abs")) == {"If/then_branch/t", "If/else_branch/e"}
    check_bodies(path, loaded)


def test_a_loop_body_takes_its_operands_in_order_and_gives_its_results(tmp_path: Path) -> None:
    """``Loop(M, cond, v)``: its body's iteration number, condition and carried value are fed
    by the trip count, the condition and the initial value; the body's first result (the
    condition) is no output of the loop, its second is the final value and its third the
    scan output.  The viewer's trace carries each result back to its argument."""
    body = _graph([
        _node("Add", ["v_in", "k"], ["v_out"], "step"),
        _node("Identity", ["cond_in"], ["cond_out"], "keep_going"),
        _node("Mul", ["v_out", "v_out"], ["scan"], "square")],
        "loop_body", ["i", "cond_in", "v_in"], ["cond_out", "v_out", "scan"])
    graph = _graph([
        _node("Relu", ["x"], ["k"], "outer"), _node("ReduceSum", ["x"], ["m"], "trips"),
        _node("Greater", ["m", "m"], ["go"], "go"),
        _node("Loop", ["m", "go", "x"], ["final", "scans"], "loop", body=body),
        _node("Neg", ["final"], ["n1"], "use_final"), _node("Abs", ["scans"], ["n2"], "use_scans")],
        "main", ["x"], ["n1", "n2"])
    path = _save(tmp_path, graph)
    loaded = graphviz_tb.load(path)
    g = loaded.model.g
    fed = {v: tensor_of(u, d) for u, v, d in g.out_edges("Loop", data=True)}
    assert fed == {"Loop/body/i": ("ReduceSum", 0), "Loop/body/cond_in": ("Greater", 0),
                   "Loop/body/v_in": ("x", 0), "Loop/body/k": ("Relu", 0)}
    assert list(g.predecessors("Neg")) == ["Loop/body/v_out"]
    assert list(g.predecessors("Abs")) == ["Loop/body/scan"]
    assert not list(g.successors("Loop/body/cond_out"))  # the condition: no loop output
    assert g.nodes["Loop/body/k"]["arg_index"] == 3  # after the formal inputs
    data = page_data(loaded.render(format="html", options=OPEN))  # what the page traces
    names = page_names(data)
    carried = {(names[a], names[b]) for a, b in zip(data["carry"][::2], data["carry"][1::2],
                                                      strict=True)}
    assert carried == {("Loop/body/cond_out", "Loop/body/cond_in"),
                       ("Loop/body/v_out", "Loop/body/v_in")}
    check_bodies(path, loaded)



def test_a_scan_body_takes_its_state_and_slices(tmp_path: Path) -> None:
    """``Scan``: the body takes the state and the scanned slices one for one from the op's
    inputs and gives the final state and the scan outputs; its state carries over."""
    body = _graph([_node("Add", ["s", "row"], ["s2"], "acc"),
                   _node("Relu", ["s2"], ["out"], "emit")],
                  "scan_body", ["s", "row"], ["s2", "out"])
    graph = _graph([_node("Neg", ["x"], ["init"], "init"),
                    _node("Scan", ["init", "x"], ["last", "rows"], "scan", body=body,
                          num_scan_inputs=1),
                    _node("Abs", ["rows"], ["y"], "use")], "main", ["x"], ["last", "y"])
    path = _save(tmp_path, graph)
    loaded = graphviz_tb.load(path)
    g = loaded.model.g
    assert {v: tensor_of(u, d) for u, v, d in g.out_edges("Scan", data=True)} == {
        "Scan/body/s": ("Neg", 0), "Scan/body/row": ("x", 0)}
    assert list(g.predecessors("Abs")) == ["Scan/body/out"]
    assert list(g.predecessors("last")) == ["Scan/body/s2"]
    data = page_data(loaded.render(format="html", options=OPEN))
    names = page_names(data)
    assert [(names[a], names[b]) for a, b in zip(data["carry"][::2], data["carry"][1::2],
                                                 strict=True)] == [("Scan/body/s2", "Scan/body/s")]
    check_bodies(path, loaded)


def _nested(tmp_path: Path) -> Path:
    """An ``If`` whose then-branch runs a ``Loop`` whose body reads the model's input and
    a tensor of the branch (two graphs and one graph out), and returns an outer tensor."""
    body = _graph([_node("Add", ["v", "x"], ["v2"], "inner_add"),
                   _node("Mul", ["v2", "h"], ["v3"], "inner_mul"),
                   _node("Identity", ["c"], ["c2"], "inner_cond")],
                  "inner", ["i", "c", "v"], ["c2", "v3"])
    then = _graph([_node("Relu", ["a"], ["h"], "then_relu"),
                   _node("Loop", ["", "", "h"], ["l"], "then_loop", body=body)],
                  "then", [], ["l"])
    orelse = _graph([], "else", [], ["a"])  # returns an outer tensor as it is
    return _save(tmp_path, _graph([
        _node("Neg", ["x"], ["a"], "neg"), _node("ReduceSum", ["x"], ["s"], "sum"),
        _node("Greater", ["s", "s"], ["c"], "gt"),
        _node("If", ["c"], ["y"], "branch", then_branch=then, else_branch=orelse)],
        "main", ["x"], ["y"]))


def test_a_loop_inside_a_branch_reads_through_both(tmp_path: Path) -> None:
    """Nested bodies: the loop's body reads the model's input through the branch (an
    argument of the branch, passed on to the loop) and the branch's own tensor through the
    loop; a branch returning an outer tensor returns its argument."""
    path = _nested(tmp_path)
    loaded = graphviz_tb.load(path)
    model, h = loaded.model, loaded.hierarchy()
    g = model.g
    loop = "If/then_branch/Loop"
    assert h.groups[f"{loop}/body"].parent is h.groups[loop]
    assert h.groups[loop].parent is h.groups["If/then_branch"]
    assert model.function_groups[f"{loop}/body"] == "inner"
    # the model's x: into the If, on to the branch's argument, into the loop, to its body
    assert {tensor_of(u, d) for u, _, d in g.in_edges("If/then_branch/x", data=True)} == {("x", 0)}
    assert {tensor_of(u, d) for u, _, d in g.in_edges(f"{loop}/body/x", data=True)} == {
        ("If/then_branch/x", 0)}
    assert {tensor_of(u, d) for u, _, d in g.in_edges(f"{loop}/body/h", data=True)} == {
        ("If/then_branch/Relu", 0)}
    assert set(g.successors(f"{loop}/body/x")) == {f"{loop}/body/Add"}
    # the else-branch's result (``a``, named apart from its argument) is the argument
    assert list(g.successors("If/else_branch/a")) == ["If/else_branch/a_1"]
    assert set(g.predecessors("y")) == {"If/then_branch/l", "If/else_branch/a_1"}
    check_bodies(path, loaded)


# ------------------------------------------------------------------ local functions


def _function(name: str = "Block", domain: str = "local") -> Any:
    """``Block(a, b) = Relu(a) + b``, with a constant folded into it."""
    helper = need_onnx().helper
    return helper.make_function(domain, name, ["a", "b"], ["out"], [
        _node("Relu", ["a"], ["r"], "f_relu"),
        _node("Constant", [], ["k"], "f_const", value_float=2.0),
        _node("Mul", ["r", "k"], ["m"], "f_scale"),
        _node("Add", ["m", "b"], ["out"], "f_add")],
        [helper.make_opsetid("", 18)])


def _picking() -> Any:
    """``Pick(a, b)``: a branch on ``a > b`` whose then-branch calls ``Block`` (a body in a
    function, a function called in a body), reading the function's operands."""
    helper = need_onnx().helper
    then = _graph([_node("Block", ["a", "b"], ["r"], "pick_block", domain="local")],
                  "pick_then", [], ["r"])
    orelse = _graph([_node("Neg", ["b"], ["q"], "pick_neg")], "pick_else", [], ["q"])
    return helper.make_function("local", "Pick", ["a", "b"], ["out"], [
        _node("Greater", ["a", "b"], ["c"], "pick_gt"),
        _node("If", ["c"], ["out"], "pick_if", then_branch=then, else_branch=orelse)],
        [helper.make_opsetid("", 18), helper.make_opsetid("local", 1)])


def _two_calls(path: Path, function: str) -> tuple[graphviz_tb.Graph, list[str]]:
    """The model at ``path``, and its two calls of ``function`` (an op type), in order."""
    loaded = graphviz_tb.load(path)
    calls = sorted(op for op in loaded.model.g if loaded.model.op(op) == function)
    assert len(calls) == 2
    return loaded, calls


def test_a_local_function_called_twice_opens_twice_alike(tmp_path: Path) -> None:
    """Each call of a model-local function opens into the function's body under the call,
    its operands fed argument by argument, its result feeding what reads the call; the two
    calls are drawn in one structure colour, not grey."""
    graph = _graph([
        _node("Block", ["x", "x"], ["y1"], "first", domain="local"),
        _node("Block", ["y1", "x"], ["y2"], "second", domain="local")], "main", ["x"], ["y2"])
    path = _save(tmp_path, graph, [_function()])
    loaded, calls = _two_calls(path, "local::Block")
    model, h = loaded.model, loaded.hierarchy(OPEN)
    g = model.g
    for call in calls:
        group = h.groups[call]
        assert group.kind == "function" and group.function == "local::Block"
        inside = {model.op(o) for o in ops_under(group)}
        assert {"Relu", "Mul", "Add"} <= inside and "Constant" not in inside
        assert model.attrs(f"{call}/Mul")["B"] == "2.0"  # the constant, folded
    second = calls[1]
    fed = {v: tensor_of(u, d) for u, v, d in g.out_edges(second, data=True)}
    assert fed == {f"{second}/a": (calls[0], 0), f"{second}/b": ("x", 0)}  # what it passes
    assert set(g.predecessors(second)) == {f"{calls[0]}/out", "x"}  # the first's result
    assert list(g.predecessors(f"{second}/Relu")) == [f"{second}/a"]
    svg = parse(loaded.render(options=OPEN))
    fills = {name: fill_of(group) for name, group in node_groups(svg, "group").items()
             if name in calls}
    assert len(fills) == 2 and len(set(fills.values())) == 1
    assert "#dcdcdc" not in fills.values()  # grey: a structure seen once
    check_bodies(path, loaded)


def test_a_functions_weights_fold_into_its_ops_at_every_call(tmp_path: Path) -> None:
    """PyTorch's ``export_modules_as_functions`` passes each call its module's weights as
    operands.  Those operands are initializers, never drawn, so the function's weight
    arguments stood unfed inside both calls, named after one call's weights
    (``second.fc.weight`` inside ``first``).  A formal input fed by a weight at every call is
    no argument: the op reading it lists each call's weight, as an op of the model lists its
    own; an input fed by an op at some call stays an argument, wired."""
    onnx = need_onnx()
    helper = onnx.helper
    linear = helper.make_function("local", "Linear", ["x", "w", "b"], ["y"], [
        _node("Gemm", ["x", "w", "b"], ["g"], "f_gemm", transB=1),
        _node("Relu", ["g"], ["y"], "f_relu")], [helper.make_opsetid("", 18)])
    weights = [helper.make_tensor(f"{layer}.{kind}", onnx.TensorProto.FLOAT, dims,
                                  [0.5] * (dims[0] * (dims[1] if len(dims) > 1 else 1)))
               for layer in ("first", "second") for kind, dims in (("w", [3, 3]), ("b", [3]))]
    graph = _graph([
        _node("Linear", ["x", "first.w", "first.b"], ["h"], "first", domain="local"),
        _node("ReduceMean", ["h"], ["h_bias"], "bias_from_h", keepdims=0),
        _node("Linear", ["h", "second.w", "h_bias"], ["y"], "second", domain="local")],
        "main", ["x"], ["y"], initializer=weights)
    path = _save(tmp_path, graph, [linear])
    loaded, calls = _two_calls(path, "local::Linear")
    model, h = loaded.model, loaded.hierarchy(OPEN)
    g = model.g
    for call in calls:
        inside = {o.rpartition("/")[2] for o in ops_under(h.groups[call])}
        assert "w" not in inside, inside  # a weight at every call: not an argument
        gemm = model.attrs(f"{call}/Gemm")
        assert "first.w" in gemm["B"] and "second.w" in gemm["B"], gemm["B"]
        assert set(g.predecessors(f"{call}/Gemm")) == {f"{call}/x", f"{call}/b"}
    fed = {v: tensor_of(u, d) for u, v, d in g.out_edges(calls[1], data=True)}
    assert fed == {f"{calls[1]}/x": (calls[0], 0), f"{calls[1]}/b": ("ReduceMean", 0)}
    check_bodies(path, loaded)


def test_a_functions_tensors_have_the_shapes_its_calls_give_them(tmp_path: Path) -> None:
    """``onnx.shape_inference`` types the model's graph but not a local function's body, so
    every edge inside a call was unlabelled.  A body's types follow from what its calls pass:
    when every call passes the same types, the body's tensors carry the shapes they make;
    when calls differ, none (one body is drawn for all, and a shape true of one call would
    be false of the other)."""
    onnx = need_onnx()
    helper = onnx.helper
    same = _graph([
        _node("Block", ["x", "x"], ["y1"], "first", domain="local"),
        _node("Block", ["y1", "x"], ["y2"], "second", domain="local")], "main", [], ["y2"])
    del same.input[:]
    same.input.append(helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 5]))
    loaded = graphviz_tb.load(_save(tmp_path, same, [_function()]))
    model = loaded.model
    calls = sorted(op for op in model.g if model.op(op) == "local::Block")
    for call in calls:
        for op in ("a", "Relu", "Mul", "Add"):
            info = model.tensor(f"{call}/{op}", 0)
            assert info is not None and info.shape == (2, 5), (call, op, info)
    mixed = _graph([
        _node("Block", ["x", "x"], ["y1"], "first", domain="local"),
        _node("ReduceSum", ["x"], ["s"], "total", keepdims=1),
        _node("Block", ["s", "s"], ["y2"], "second", domain="local")], "main", [], ["y2"])
    del mixed.input[:]
    mixed.input.append(helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 5]))
    loaded = graphviz_tb.load(_save(tmp_path, mixed, [_function()], name="mixed.onnx"))
    model = loaded.model
    for call in sorted(op for op in model.g if model.op(op) == "local::Block"):
        info = model.tensor(f"{call}/Relu", 0)
        assert info is None or info.shape is None, (call, info)


def test_the_memory_estimate_counts_what_bodies_add(tmp_path: Path) -> None:
    """A graph too large for the machine is refused before it is built, from an estimate of
    the ops the picture will hold: those opening a ``Loop``'s or a ``Scan``'s body adds
    count, as a TensorFlow ``While``'s do (they were left out: a model whose ops sit in one
    loop's body was estimated at its handful of top-level ops)."""
    chain = [_node("Relu", ["v_in" if i == 0 else f"t{i - 1}"], [f"t{i}"], f"r{i}")
             for i in range(300)]
    body = _graph([*chain, _node("Identity", ["cond_in"], ["cond_out"], "keep_going")],
                  "loop_body", ["i", "cond_in", "v_in"], ["cond_out", "t299"])
    scan_body = _graph([_node("Add", ["s", "e"], ["s2"], "acc"),
                        _node("Neg", ["s2"], ["o"], "neg")], "scan_body", ["s", "e"],
                       ["s2", "o"])
    graph = _graph([
        _node("ReduceSum", ["x"], ["m"], "trips"), _node("Greater", ["m", "m"], ["go"], "go"),
        _node("Loop", ["m", "go", "x"], ["final"], "loop", body=body),
        _node("Scan", ["final", "x"], ["state", "out"], "scan", body=scan_body,
              num_scan_inputs=1)], "main", ["x"], ["state", "out"])
    cost = graphviz_tb.load(_save(tmp_path, graph)).cost
    assert cost is not None
    assert cost.inlined >= 300 + 2  # each body's nodes, once per call


# ------------------------------------------------------------------ names and odd files

@pytest.mark.browser
def test_hostile_names_are_wired_and_escaped(tmp_path: Path, browser: Any) -> None:
    """Tensor, node, graph and function names from ``hostile_inputs`` (markup, ``:`` read as
    an output index, ``/`` as a scope, control characters) in bodies and a function: every
    edge still meets the op that reads it, with no warning; the SVG and the page show them
    as text and run nothing."""
    names = [n for n in HOSTILE_NAMES if n.strip()]
    tensors = [f"{n}{i}" for i, n in enumerate(names)]  # distinct, and hostile
    then = _graph([_node("Relu", [tensors[1]], [tensors[2]], names[0])], names[1], [],
                  [tensors[2]])
    loop_body = _graph([_node("Add", [tensors[5], tensors[0]], [tensors[6]], names[2])],
                       names[3], [tensors[7], tensors[8], tensors[5]], [tensors[8], tensors[6]])
    function = _function(names[4], names[5])
    graph = _graph([
        _node("Neg", [tensors[0]], [tensors[1]], names[6]),
        _node("Greater", [tensors[0], tensors[0]], [tensors[3]], names[7]),
        _node("If", [tensors[3]], [tensors[4]], names[8], then_branch=then, else_branch=then),
        _node("Loop", ["", "", tensors[4]], [tensors[9]], names[9], body=loop_body),
        _node(names[4], [tensors[9], tensors[0]], [tensors[10]], names[10], domain=names[5])],
        "main", [tensors[0]], [tensors[10]])
    path = _save(tmp_path, graph, [function])
    loaded = graphviz_tb.load(path)
    model = loaded.model
    assert [op for op in model.g if model.g.nodes[op]["role"] == "missing"] == []
    assert len(model.function_groups) == 4  # then, else, the loop's body, the call
    assert svg_problems(loaded.render(options=OPEN).encode("utf-8")) == []
    page = tmp_path / "page.html"
    loaded.render(page, options=OPEN)
    assert page_problems(browser, page) == []
    check_bodies(path, loaded)


def test_colons_in_names_never_read_as_output_indices(tmp_path: Path) -> None:
    """TorchScript names an unnamed input ``onnx::Gemm_0``; a scope may hold ``:``.  Each op
    is still fed by what feeds it in the file (a ``:`` read as an output index drew the
    input as a missing op, with warnings)."""
    graph = _graph([_node("Relu", ["onnx::Gemm_0"], ["a"], "a:0"),
                    _node("Neg", ["a"], ["b"], "q:1/Neg"), _node("Abs", ["b"], ["c"], "zz")],
                   "main", ["onnx::Gemm_0"], ["c"])
    path = _save(tmp_path, graph)
    loaded = graphviz_tb.load(path)
    assert sorted(loaded.model.graph.edges()) == [
        ("Abs", "c"), ("Relu", "q∶1/Neg"), ("onnx∶∶Gemm_0", "Relu"), ("q∶1/Neg", "Abs")]
    check_bodies(path, loaded)


def test_a_graph_attribute_of_any_op_opens_too(tmp_path: Path) -> None:
    """A custom op carrying a graph (ONNX Runtime's contrib ops do): its graph opens as a
    body under it, its outer reads wired as arguments; what the graph's inputs and outputs
    mean to the op is its own, so its outputs stay the op's."""
    body = _graph([_node("Mul", ["p", "k"], ["q"], "body_mul")], "decoder", ["p"], ["q"])
    graph = _graph([_node("Relu", ["x"], ["k"], "relu"),
                    _node("Search", ["x"], ["y"], "search", domain="com.example",
                          decoder=body)], "main", ["x"], ["y"])
    path = _save(tmp_path, graph)
    loaded = graphviz_tb.load(path)
    g = loaded.model.g
    call = "com.example∶∶Search" if "com.example∶∶Search" in g else "Search"
    assert loaded.hierarchy().groups[f"{call}/decoder"].kind == "function"
    assert {tensor_of(u, d) for u, _, d in g.in_edges(f"{call}/decoder/k", data=True)} == {
        ("Relu", 0)}
    assert list(g.predecessors("y")) == [call]
    check_bodies(path, loaded)


# ------------------------------------------------------------------ models nobody exported


class _RandomModel:
    """A model as converters write them, at random: element-wise ops, constants, ``If``s,
    ``Loop``s and ``Scan``s two deep whose bodies read any tensor in sight (their own, their
    formal inputs', any enclosing graph's) and may return one as it is, calls of local
    functions (one running a branch that calls the other); a fifth of the names hostile
    (those a picture's titles show as they are: the oracle finds boxes by their titles)."""

    SUFFIXES = tuple(n for n in HOSTILE_NAMES if n.isprintable())

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.count = 0

    def name(self, prefix: str) -> str:
        self.count += 1
        suffix = self.rng.choice(self.SUFFIXES) if self.rng.random() < 0.2 else ""
        return f"{prefix}{self.count}{suffix}"

    def graph(self, depth: int, visible: list[str], formal: list[str]) -> tuple[list[Any],
                                                                              list[str]]:
        rng, own, nodes = self.rng, list(formal), []
        kinds = ["Relu", "Add", "Constant", "Call"] + ["If", "Loop", "Scan"] * (depth < 2)
        for _ in range(rng.randint(1, 4) if depth else rng.randint(3, 7)):
            pool = visible + own
            kind, out = rng.choice(kinds), self.name("t")
            pick = [rng.choice(pool) for _ in range(2)]
            if kind == "Relu":
                nodes.append(_node("Relu", pick[:1], [out], self.name("n")))
            elif kind == "Add":
                nodes.append(_node("Add", pick, [out], self.name("n")))
            elif kind == "Constant":
                nodes.append(_node("Constant", [], [out], self.name("n"), value_float=1.0))
            elif kind == "Call":
                nodes.append(_node(rng.choice(["Block", "Pick"]), pick, [out], self.name("n"),
                                   domain="local"))
            elif kind == "If":
                branches = [self.body(depth, pool, []) for _ in "ab"]
                nodes.append(_node("If", pick[:1], [out], self.name("n"),
                                   then_branch=branches[0], else_branch=branches[1]))
            elif kind == "Loop":
                body = self.body(depth, pool, [self.name("i"), self.name("c"), self.name("v")])
                nodes.append(_node("Loop", [rng.choice(["", pick[1]]), "", pick[0]], [out],
                                   self.name("n"), body=body))
            else:
                body = self.body(depth, pool, [self.name("s"), self.name("x")])
                nodes.append(_node("Scan", pick, [out, self.name("t")], self.name("n"),
                                   body=body, num_scan_inputs=1))
            own.append(out)
        return nodes, own

    def body(self, depth: int, visible: list[str], formal: list[str]) -> Any:
        """A branch's body giving back one tensor, made inside or one in sight returned as
        it is; a loop's its condition and a carried value; a scan's its state and a scan
        output."""
        nodes, own = self.graph(depth + 1, visible, formal)
        if len(formal) == 2:  # a scan: its state, then its scan output
            results = [own[-1], self.rng.choice(own + visible)]
        elif formal:  # a loop: its condition, then its carried value
            results = [formal[1], self.rng.choice(own)]
        else:
            results = [self.rng.choice(own + visible)]
        return _graph(nodes, self.name("g"), formal, results)


@pytest.mark.parametrize("seed", range(20))
def test_any_model_with_bodies_reads_as_its_file_says(seed: int, tmp_path: Path) -> None:
    """Every random model: each node of each graph drawn or folded, each tensor a body reads
    from outside wired through every call between, no warning, and a true picture."""
    made = _RandomModel(seed)
    nodes, own = made.graph(0, ["x"], [])
    path = _save(tmp_path, _graph(nodes, "main", ["x"], [own[-1]]), [_function(), _picking()])
    check_bodies(path, graphviz_tb.load(path))


# ------------------------------------------------------------------ the viewer


@pytest.mark.browser
def test_the_viewer_opens_nested_bodies_true_and_traces_through_them(
        tmp_path: Path, browser: Any) -> None:
    """In the page, closed at first: opening the ``If``, its branch, the ``Loop`` in it and
    the loop's body draws a true picture at each step (the oracle on the DOM), and tracing
    the model's input reaches the loop body's ops through both calls."""
    loaded = graphviz_tb.load(_nested(tmp_path))
    options = RenderOptions(depth=1)
    page = open_viewer(browser, loaded, tmp_path / "page.html", options)
    h = loaded.hierarchy(options)
    try:
        for step in ("", "If", "If/then_branch", "If/then_branch/Loop",
                     "If/then_branch/Loop/body"):
            if step:
                assert page.evaluate("(n) => window.tbgraph.expand(n)", step) is not False
            report = check_picture(read_dom(page.evaluate(DOM_SCRIPT)), h)
            assert report, f"after opening {step or 'nothing'}: {report.summary()}"
        lit = set(page.evaluate("window.tbgraph.traceOutputs('x')"))
        body = "If/then_branch/Loop/body"
        assert {"If", "If/then_branch/x", f"{body}/x", f"{body}/Add", f"{body}/Mul"} <= lit
        assert page.errors == []
    finally:
        page.close()
