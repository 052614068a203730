"""The oracle for ONNX bodies and local functions: what the file says of them, the model and
its picture must say (used by ``test_onnx_bodies.py`` and ``test_onnx.py``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from picture import check_picture, ops_under, read_svg

import graphviz_tb
from graphviz_tb.model.graph import GraphModel, tensor_of
from graphviz_tb.options import RenderOptions


def need_onnx() -> Any:
    """onnx, or a skip on a developer machine without it; in CI (``make test`` installs it)
    a missing onnx is a failure."""
    if os.environ.get("CI"):
        import onnx

        return onnx
    return pytest.importorskip("onnx")


#: Every group open: each body drawn.
OPEN = RenderOptions(expand_all=True)


def _origin(model: GraphModel, op: str, tensor: tuple[str, int]) -> str | None:
    """The op that makes what an edge into ``op`` carries: through a body's argument to what
    its call passes (and on out of enclosing bodies), through a result to the call returning
    it; None for an argument nothing passes (a folded value at the call)."""
    g = model.g
    src = tensor[0]
    while g.nodes[src]["role"] == "arg":
        fed = [tensor_of(u, d) for u, _, d in g.in_edges(src, data=True)
               if d["kind"] != "control"]
        if not fed:
            return None
        src = fed[0][0]
    if g.nodes[src]["role"] == "retval":
        prefix = src.rpartition("/")[0]
        return prefix if prefix in g and g.nodes[prefix]["role"] == "op" \
            else prefix.rpartition("/")[0]
    return src


def _file_nodes(graph: Any, outer: dict[str, str], depth: int,
                top: bool = False) -> list[tuple[Any, dict[str, str], int]]:
    """Every node of ``graph`` (a GraphProto, or a local function's FunctionProto) and of
    the bodies in it, each with what its names resolve to (tensor -> the name of the node
    making it, ``input:<name>`` for an input of the model, ``""`` for a body's or function's
    formal input or a weight) and how many bodies and calls enclose it."""
    inputs = [getattr(v, "name", v) for v in graph.input]
    scope = {**outer, **{i: f"input:{i}" if top else "" for i in inputs}}
    scope.update({t.name: "" for t in getattr(graph, "initializer", ())})
    found = []
    for node in graph.node:
        found.append((node, dict(scope), depth))
        for attribute in node.attribute:
            for body in [attribute.g] if attribute.HasField("g") else attribute.graphs:
                found.extend(_file_nodes(body, scope, depth + 1))
        scope.update({t: node.name for t in node.output if t})
    return found


def check_bodies(path: Path, graph: graphviz_tb.Graph) -> None:
    """What the file says of its bodies, the model says: each ONNX node of every graph (a
    local function's once per call) is an op, under as many bodies and calls as in the
    file, or folded into an op; each op is fed by every drawn node its ONNX node reads,
    whichever graph it sits in, by a wire through each call between; each call of a local
    function holds all its nodes; the picture of it all open is true."""
    model, h = graph.model, graph.hierarchy(OPEN)
    import onnx  # the caller skipped without it

    stored = onnx.load(str(path))
    own: dict[str, list[str]] = {}
    for op in model.g:
        if "onnx node" in model.attrs(op):
            own.setdefault(model.attrs(op)["onnx node"], []).append(op)
    folded = {f for op in model.g for f in model.attrs(op).get("folded nodes", [])}
    functions = {(f.domain, f.name): _file_nodes(f, {}, 1) for f in stored.functions}
    nodes = _file_nodes(stored.graph, {}, 0, top=True)
    called, more = set(), nodes
    while more:  # the functions the model calls, and those they call
        new = {(n.domain, n.op_type) for n, _, _ in more} & set(functions) - called
        called |= new
        more = [n for key in new for n in functions[key]]
    for node, names, depth in [*nodes, *(n for key in called for n in functions[key])]:
        ops = own.get(node.name, [])
        assert ops or f"{node.op_type} {node.name}" in folded, node.name
        for op in ops:
            feeders = {_origin(model, op, tensor_of(u, d)) for u, _, d in model.g.in_edges(
                op, data=True) if d["kind"] != "control"} - {None}
            wanted = {names[t] for t in node.input if t and names.get(t)}
            # Nodes by their ONNX name; the model's inputs (renamed: no "/" or ":") counted.
            drawn = {model.attrs(f)["onnx node"] for f in feeders if model.op(f) != "input"}
            assert {w for w in wanted if w in own} <= drawn, (op, wanted, drawn)
            assert len({w for w in wanted if w.startswith("input:")}) <= len(
                [f for f in feeders if model.op(f) == "input"]), (op, wanted, feeders)
            calls = [g for g in h.ops[op].ancestors() if g.kind == "function"]
            assert len(calls) >= depth, op
        for op in ops if (node.domain, node.op_type) in functions else ():
            group = h.ops[op].parent  # a call: in its group, with every node of its function
            assert group is not None and group.kind == "function", op
            inside = {model.attrs(o).get("onnx node") for o in ops_under(group)}
            assert {n.name for n, _, _ in functions[node.domain, node.op_type]
                    if f"{n.op_type} {n.name}" not in folded} <= inside, op
    assert graph.info()["warnings"] == []
    pic = read_svg(graph.render(options=OPEN), graph.render(format="dot", options=OPEN))
    report = check_picture(pic, h)
    assert report, report.summary()
