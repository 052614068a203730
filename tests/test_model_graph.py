"""The op graph without networkx: drawing does not import it, and what the stages read is what
networkx itself would give.

:class:`graphviz_tb.model.graph.OpGraph` keeps networkx's own adjacency layout in public dicts and
answers the few networkx calls the stages make; ``GraphModel.graph`` is a real
``networkx.MultiDiGraph`` built from it.  These tests hold the two to each other on graphs
TensorFlow made, and the strongly connected components the hierarchy now finds itself to
networkx's.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import networkx as nx
import pytest
from conftest import SAMPLES
from google.protobuf.message import Message
from hostile_inputs import graph_def, node, write_pb
from hypothesis import given, settings
from hypothesis import strategies as st
from tensorboard.compat.proto.graph_pb2 import GraphDef

import graphviz_tb
from graphviz_tb.group.partition import ChildGraph, convex_chunks, cyclic_parts, strong_components
from graphviz_tb.model.build import build_model
from graphviz_tb.model.graph import BARE, OpGraph, node_def_of, tensor_of
from graphviz_tb.read import graphdef
from graphviz_tb.read.graphdef import as_graph_def

#: Graphs TensorFlow wrote: a TF1 training graph (while loops: back edges) and TF2 function
#: graphs (bodies opened, call outputs rewired through remove_edges_from).
TF_MADE = ["mnist_tf1.pb", "control_flow_v1.pbtxt", "control_flow_v2.pb", "keras_cnn.pb",
           "saved_model"]


def test_drawing_a_graph_does_not_import_networkx(tmp_path: Any) -> None:
    """Importing networkx costs more than the rest of a small graph's render; loading,
    ``info``, SVG and HTML of TensorFlow graphs need none of it."""
    code = (
        "import sys, graphviz_tb\n"
        f"for name in ('keras_cnn.pb', 'control_flow_v1.pbtxt', 'saved_model'):\n"
        f"    g = graphviz_tb.load({str(SAMPLES)!r} + '/' + name)\n"
        "    g.info()\n"
        f"    g.render({str(tmp_path / 'x.svg')!r})\n"
        f"    g.render({str(tmp_path / 'x.html')!r})\n"
        "print('networkx' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "False"
    assert (tmp_path / "x.svg").stat().st_size > 0 and (tmp_path / "x.html").stat().st_size > 0


@pytest.mark.parametrize("name", TF_MADE)
def test_the_ops_graph_answers_as_networkx_does(name: str) -> None:
    model = graphviz_tb.load(SAMPLES / name).model
    og, nxg = model.g, model.graph
    assert isinstance(nxg, nx.MultiDiGraph)
    assert nxg.number_of_nodes() == len(og) == len(list(og)) > 0
    assert list(og.nodes) == list(nxg.nodes)
    for attr in ("role", "op", "calls"):
        assert list(og.nodes(data=attr)) == list(nxg.nodes(data=attr))
    assert _read(og) == list(nxg.nodes(data=True))
    edges = list(nxg.edges(keys=True, data=True))
    assert [(u, v, k, _named(u, d)) for u, v, k, d in og.edges(keys=True, data=True)] == edges
    assert [(u, v, _named(u, d)) for u, v, d in og.edges(data=True)] == list(
        nxg.edges(data=True))
    assert len(edges) == sum(1 for _ in model.iter_edges()) > 0
    for u, v, k, d in edges:
        assert _named(u, og.edges[u, v, k]) == d == nxg.edges[u, v, k]
        assert og.has_edge(u, v, k) and not og.has_edge(u, v, k + 1000)
    for n in nxg:
        assert _by_source((u, v, k, _named(u, d)) for u, v, k, d in og.in_edges(
            n, keys=True, data=True)) == _by_source(nxg.in_edges(n, keys=True, data=True))
        assert [(u, v, _named(u, d)) for u, v, d in og.out_edges(n, data=True)] == list(
            nxg.out_edges(n, data=True))
        assert list(og.successors(n)) == list(nxg.successors(n))
        assert set(og.predecessors(n)) == set(nxg.predecessors(n))
    # Back edges aside, what TensorFlow made is a DAG: networkx's algorithms run on it.
    forward = nx.DiGraph((u, v) for u, v, back in nxg.edges(data="back") if not back)
    assert nx.is_directed_acyclic_graph(forward)


def test_nodedefs_with_empty_fields_read_back_whole() -> None:
    """An op's NodeDef is kept without its name and inputs, cut out by their lengths; an empty
    name or op type is not written at all, so it must cut nothing (it once cut two bytes,
    and the NodeDef no longer parsed)."""
    gd = GraphDef()
    gd.node.add(name="", op="", device="/cpu:0").attr["T"].type = 1
    gd.node.add(name="b", op="", device="/gpu:0", input=["c", "^c"])
    gd.node.add(name="c", op="Const", device="/cpu:0")
    gd.node.add(name="d", op="", input=["c"])
    g = build_model(gd).g
    assert all(g.node_data[n]["node_def"][:1] == BARE for n in ("", "b", "c", "d"))  # cut
    assert [g.node_def(n) for n in ("", "b", "c", "d")] == list(gd.node)


def test_ops_of_one_type_and_attributes_share_one_kept_nodedef() -> None:
    """Ops whose bare NodeDefs are equal (one type, device and attributes) keep one bytes
    object between them, not a copy each: a traced training step's 69,000 ops have 168
    distinct ones.  An op that differs in any of them keeps its own, and each still reads
    back as the file has it."""
    gd = GraphDef()
    gd.node.add(name="x", op="Placeholder").attr["dtype"].type = 1
    for name in ("a", "b", "c"):
        gd.node.add(name=name, op="Relu", input=["x"]).attr["T"].type = 1
    gd.node.add(name="d", op="Relu", input=["a", "^b"]).attr["T"].type = 2
    g = build_model(gd).g
    kept = {n: g.node_data[n]["node_def"] for n in "xabcd"}
    assert kept["a"] is kept["b"] is kept["c"]
    assert len({id(raw) for raw in kept.values()}) == 3
    assert [g.node_def(n) for n in "xabcd"] == list(gd.node)


def test_marking_an_edge_marks_no_other(tmp_path: Any) -> None:
    """Edges with equal data share one dict, and pairs joined by one such edge one key dict
    (a dict each was two fifths of a big model's memory).  So a stage marking an edge must
    put a new dict in its place: marked in place, every edge sharing it would be marked too.
    Here a TF1 loop (NextIteration into Merge's input 1) and a malformed three-op cycle (the
    search breaks it at one edge) share their edges' data with a chain and with adds."""
    chain = [node("x", "Placeholder")] + [
        node(f"chain/{i}", inputs=[f"chain/{i - 1}" if i else "x"]) for i in range(20)]
    adds = [node(f"add/{i}", "AddV2", ["x", f"chain/{i}"]) for i in range(20)]
    loop = [node("loop/merge", "Merge", ["x", "loop/next"]),
            node("loop/next", "NextIteration", ["loop/merge"])]
    cycle = [node(f"cycle/{i}", inputs=[f"cycle/{(i - 1) % 3}"]) for i in range(3)]
    path = write_pb(tmp_path / "g.pb", graph_def(chain + adds + loop + cycle))
    g = graphviz_tb.load(path).model.g
    edges = list(g.edges(keys=True, data=True))
    users: dict[int, int] = {}
    for *_, d in edges:
        users[id(d)] = users.get(id(d), 0) + 1
    assert max(users.values()) >= 20  # shared: the chain's edges, the adds' second inputs
    back = sorted((u, v) for u, v, _, d in edges if d["back"])
    assert back == [("cycle/2", "cycle/0"), ("loop/next", "loop/merge")]
    assert all(users[id(d)] == 1 for *_, d in edges if d["back"])


def _read(og: OpGraph) -> list[tuple[str, dict[str, Any]]]:
    """The op graph's nodes with each NodeDef as a whole message (its name and inputs put back
    where it is kept bare), as networkx's copy gives them."""
    return [(n, {**d, "node_def": og.node_def(n)} if "node_def" in d else d)
            for n, d in og.nodes(data=True)]


def _named(src: str, data: dict[str, Any]) -> dict[str, Any]:
    """An edge's data as networkx's copy gives it: naming the tensor it carries, which the op
    graph keeps only where it is not the source's output (its edge dicts are shared)."""
    return {**data, "tensor": tensor_of(src, data)}


def _by_source(in_edges: Any) -> dict[tuple[str, int], dict[str, Any]]:
    """In-edges ``(src, dst, key, data)`` by source and key: networkx orders a node's in-edges
    by when each source was first wired to it, a copy by the sources' order."""
    return {(u, k): d for u, _v, k, d in in_edges}


def test_edits_are_as_networkx_makes_them() -> None:
    og = OpGraph()
    for n in "abc":
        og.add_node(n, op="Add")
    og.add_edge("a", "b", key=0, kind="data")
    og.add_edge("a", "b", key=1, kind="control")
    og.add_edge("b", "c", key=0, kind="data")
    ref = nx.MultiDiGraph()
    ref.add_nodes_from("abc", op="Add")
    ref.add_edge("a", "b", key=0, kind="data")
    ref.add_edge("a", "b", key=1, kind="control")
    ref.add_edge("b", "c", key=0, kind="data")
    assert nx.utils.graphs_equal(og.networkx(), ref)

    og.add_node("a", device="cpu")  # an existing node: its attributes updated, as networkx does
    og.add_edge("a", "b", key=0, back=True)
    og.remove_edges_from([("a", "b", 0), ("a", "b", 7), ("x", "y", 0)])  # absent ones ignored
    ref.nodes["a"]["device"] = "cpu"
    ref.remove_edges_from([("a", "b", 0), ("a", "b", 7), ("x", "y", 0)])
    nxg = og.networkx()
    assert dict(nxg.nodes(data=True)) == dict(ref.nodes(data=True))
    assert list(nxg.edges(keys=True, data=True)) == list(ref.edges(keys=True, data=True))
    og.remove_edges_from([("a", "b", 1)])  # the last edge of a pair: no longer adjacent
    assert "b" not in og.succ["a"] and "a" not in og.pred["b"]
    assert not og.networkx().has_edge("a", "b")


@pytest.mark.parametrize("name", ["mnist_tf1.pb", "control_flow_v2.pb"])
def test_the_networkx_graph_is_a_copy_equal_to_the_model(name: str) -> None:
    """What ``model.graph`` gives equals the op graph in every node, edge, key and attribute,
    and is the user's to change: running networkx's algorithms on it, which may remove or mark
    things, leaves the model and its pictures as they were."""
    graph = graphviz_tb.load(SAMPLES / name)
    og = graph.model.g
    og.graph["note"] = "kept"
    nxg = graph.model.graph
    assert nxg.graph == og.graph
    assert list(nxg.nodes(data=True)) == _read(og)
    assert list(nxg.edges(keys=True, data=True)) == [
        (u, v, k, _named(u, d)) for u, v, k, d in og.edges(keys=True, data=True)]
    assert {n: {u: dict(keys) for u, keys in nxg.pred[n].items()} for n in nxg} == {
        n: {u: {k: _named(u, d) for k, d in keys.items()} for u, keys in into.items()}
        for n, into in og.pred.items()}
    assert nx.utils.graphs_equal(nxg, graph.model.graph) and nxg is not graph.model.graph

    before = graph.render(format="dot")
    first = next(n for n in og if og.succ[n])
    nxg.remove_node(next(iter(og.succ[first])))
    nxg.nodes[first]["op"] = "Changed"
    nxg.add_edge(first, first, key=0, kind="data")
    nxg.graph.clear()
    assert og.graph == {"note": "kept"} and og.nodes[first]["op"] != "Changed"
    assert not og.has_edge(first, first, 0) and len(og) == len(nxg) + 1
    assert graph.render(format="dot") == before


def test_a_loaded_graph_keeps_nothing_of_its_parsed_graphdef(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A parsed GraphDef is about three times its file's size, and is freed only when no part
    of it is held.  The file is parsed once, lightly: telling its format reads its nodes'
    names, types, inputs and devices (the rest kept as bytes), and the model is built from
    that head.  Once the model is built nothing holds it: not the source the model keeps, not an op
    (a graph's own ops keep their NodeDef serialized).  Every NodeDef still reads as the file
    has it, a renamed duplicate's too."""
    gd = GraphDef()
    for name, op, inputs in (("x", "Placeholder", []), ("y", "Relu", ["x"]),
                             ("y", "Relu", ["x", "^x"])):
        gd.node.add(name=name, op=op, input=inputs, device="/cpu:0").attr["T"].type = 1
    path = tmp_path / "g.pb"
    path.write_bytes(gd.SerializeToString())
    parsed: list[Any] = []
    real = graphdef.check_has_ops

    def spy(graph: Any, name: str) -> Any:
        parsed.append(real(graph, name))
        return parsed[-1]

    monkeypatch.setattr(graphdef, "check_has_ops", spy)
    graph = graphviz_tb.load(path)
    assert [type(p).__name__ for p in parsed] == ["GraphHead"]
    # Less the list's reference, the loop's and the call's own.
    held = [sys.getrefcount(message) - 3 for message in parsed]
    assert held == [0]
    og = graph.model.g
    assert not any(isinstance(d["node_def"], Message) for _, d in og.nodes(data=True))
    assert [og.node_def(n) for n in ("x", "y", "y (duplicate 2)")] == list(gd.node)
    # Kept bare (no name, no inputs: the graph holds both) but for the renamed copy, whose
    # name the graph does not hold; the bare ones still read as their attributes and device.
    assert [og.nodes[n]["node_def"][:1] == BARE for n in ("x", "y", "y (duplicate 2)")] == [
        True, True, False]
    bare = node_def_of(og.nodes["y"])
    assert (bare.name, list(bare.input), bare.op, bare.device, bare.attr["T"].type) == (
        "", [], "Relu", "/cpu:0", 1)
    assert graph.model.source is not None
    assert graph.model.source.load() == gd  # read anew from the file, whole
    # The head was the model's to change (its bare nodes lost their names and inputs); a
    # head read anew is the file's graph.
    assert as_graph_def(graphdef.parse_head(path.read_bytes(), "g.pb"), "g.pb") == gd


def _random_digraph() -> st.SearchStrategy[tuple[int, list[tuple[int, int]]]]:
    return st.integers(min_value=0, max_value=14).flatmap(
        lambda n: st.tuples(st.just(n), st.lists(
            st.tuples(st.integers(0, max(n - 1, 0)), st.integers(0, max(n - 1, 0))),
            max_size=40) if n else st.just([])))


@settings(max_examples=300, deadline=None)
@given(_random_digraph())
def test_strong_components_match_networkx(graph: tuple[int, list[tuple[int, int]]]) -> None:
    n, edges = graph
    component = strong_components(ChildGraph(n, edges))
    ours = {frozenset(i for i in range(n) if component[i] == c) for c in set(component)}
    ref = nx.DiGraph()
    ref.add_nodes_from(range(n))
    ref.add_edges_from((a, b) for a, b in edges if a != b)  # ChildGraph drops self-loops
    assert ours == {frozenset(c) for c in nx.strongly_connected_components(ref)}


@settings(max_examples=300, deadline=None)
@given(_random_digraph(), st.data())
def test_cyclic_parts_are_the_parts_on_a_cycle_of_the_contracted_graph(
        graph: tuple[int, list[tuple[int, int]]], data: Any) -> None:
    n, edges = graph
    part = data.draw(st.lists(st.integers(-1, 3), min_size=n, max_size=n))
    node = [("p", p) if p >= 0 else ("n", i) for i, p in enumerate(part)]
    quotient = nx.DiGraph()
    quotient.add_nodes_from(node)
    quotient.add_edges_from((node[a], node[b]) for a, b in edges if node[a] != node[b])
    expected = {p for c in nx.strongly_connected_components(quotient) if len(c) > 1
                for kind, p in c if kind == "p"}
    assert cyclic_parts(ChildGraph(n, edges), part) == expected


@settings(max_examples=300, deadline=None)
@given(_random_digraph(), st.integers(1, 12))
def test_convex_chunks_keep_cycles_whole_and_form_no_loop(
        graph: tuple[int, list[tuple[int, int]]], size: int) -> None:
    n, edges = graph
    g = ChildGraph(n, edges)
    chunks = convex_chunks(g, [f"k{i:02d}" for i in range(n)], size)
    assert sorted(i for c in chunks for i in c) == list(range(n))
    assert len(chunks) == 1 or all(4 * len(c) >= size for c in chunks)  # no slivers
    chunk_of = {i: x for x, c in enumerate(chunks) for i in c}
    ref = nx.DiGraph()
    ref.add_nodes_from(range(n))
    ref.add_edges_from((a, b) for a, b in edges if a != b)
    for c in nx.strongly_connected_components(ref):
        assert len({chunk_of[i] for i in c}) == 1  # a cycle is never split
    between = nx.DiGraph((chunk_of[a], chunk_of[b]) for a, b in edges
                         if chunk_of[a] != chunk_of[b])
    assert nx.is_directed_acyclic_graph(between)
