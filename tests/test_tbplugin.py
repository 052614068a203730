"""The tbgraph tab in a real TensorBoard: its listing, routes, caching and what it refuses.

A session's ``tensorboard`` (conftest.py) serves a logdir with a run of each kind users log
(``tensorboard_server.plugin_logdir``): TF1's ``FileWriter``, TF2's ``trace_export``,
PyTorch's ``add_graph``, run metadata, Keras' conceptual graph and NASNet-Large's 69,453-op
training step.  The plugin reads them through TensorBoard's data provider; what it serves is
checked against what ``tbgraph`` makes of the same runs read from their event files.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard_server import (
    MARKUP_RUN,
    SAMPLES,
    TensorBoard,
    query,
    wait_for,
    write_graph_event,
)

import graphviz_tb
from graphviz_tb.api import discover
from graphviz_tb.options import RenderOptions
from graphviz_tb.write.page import page_data

pytestmark = [pytest.mark.slow, pytest.mark.tensorflow]

PLUGIN = "/data/plugin/tbgraph"
#: Every run of the logdir, as TensorBoard names them.
RUNS = {"tf1", "trace", "pytorch", "costs", "keras", "nasnet_step", "cnn_v1", "cnn_v2",
        MARKUP_RUN, "broken"}


def _runs(board: TensorBoard) -> dict[str, dict[str, Any]]:
    return {r["run"]: r for r in board.json(f"{PLUGIN}/runs")["runs"]}


def _page(board: TensorBoard, route: str, **params: str | int) -> bytes:
    answer = board.get(f"{PLUGIN}/{route}?{query(**params)}")
    assert answer.status == 200, (route, params, answer.status, answer.text[:300])
    assert answer.headers["Content-Type"] == "text/html; charset=utf-8"
    return answer.body


def _cli_page(logdir: Path, run: str, name: str) -> bytes:
    """The viewer page ``tbgraph`` writes for the graph named ``name`` of a run, read from the
    logdir's event files, with the title the tab gives it (the graph's name)."""
    listed = discover(logdir, run=run)
    index = next(i for i, g in enumerate(listed.graphs) if g.name == name)
    page = graphviz_tb.load(logdir, run=run, graph=index).render(
        format="html", options=RenderOptions(title=name))
    assert isinstance(page, str)
    return page.encode("utf-8")


def test_the_tab_is_listed_and_active(tensorboard: TensorBoard) -> None:
    """Installing the package adds the tab: TensorBoard lists it, active, as an iframed ES
    module it serves."""
    listing = tensorboard.json("/data/plugins_listing")["tbgraph"]
    assert listing["enabled"] is True
    assert listing["tab_name"] == "tbgraph"
    assert listing["loading_mechanism"] == {"type": "IFRAME",
                                            "module_path": f"{PLUGIN}/index.js"}
    script = tensorboard.get(f"{PLUGIN}/index.js")
    assert script.status == 200
    assert script.headers["Content-Type"].startswith("text/javascript")
    assert b"export" in script.body and b"render" in script.body


def test_runs_lists_each_run_as_tbgraph_reads_its_files(tensorboard: TensorBoard,
                                                        plugin_logdir: Path) -> None:
    """``/runs`` lists every run with a graph, with its graphs, tags, steps and costs: the same
    ones, by the same names, as ``tbgraph info`` finds in the run's event files (but the meta
    graphs, which TensorBoard's data provider does not serve)."""
    runs = _runs(tensorboard)
    assert set(runs) >= RUNS  # and the runs other tests write meanwhile
    for run, listed in runs.items():
        found = discover(plugin_logdir, run=run)
        expected = [{"index": i, "name": g.name, "kind": g.kind, "origin": g.origin,
                     "tag": g.tag, "step": g.step}
                    for i, g in enumerate(g for g in found.graphs
                                          if g.origin != "event:meta_graph_def")]
        assert [{k: v for k, v in g.items() if k != "wall_time"} for g in listed["graphs"]] \
            == expected, run
        assert [(c["name"], c["tag"], c["step"]) for c in listed["costs"]] == [
            (c.name, c.tag, c.step) for c in found.costs], run
    kinds = {run: {g["origin"] for g in runs[run]["graphs"]} for run in runs}
    assert kinds["tf1"] == {"event:graph_def", "event:run_metadata"}
    assert kinds["trace"] == {"event:trace"}
    assert kinds["keras"] == {"event:keras"}
    assert [c["tag"] for c in runs["costs"]["costs"]] == ["forward", "train"]
    assert [c["tag"] for c in runs["tf1"]["costs"]] == ["step_1"]


@pytest.mark.parametrize("run", ["tf1", "trace", "pytorch", "costs", "keras", MARKUP_RUN])
def test_view_is_the_page_tbgraph_writes(tensorboard: TensorBoard, plugin_logdir: Path,
                                         run: str) -> None:
    """``/view?run=R&graph=N`` is byte for byte the viewer page ``tbgraph render -o x.html``
    writes for that graph from the event files, costs included, under a content security
    policy sent as a header too (and TensorBoard alone may frame it)."""
    for graph in _runs(tensorboard)[run]["graphs"]:
        answer = tensorboard.get(f"{PLUGIN}/view?{query(run=run, graph=graph['index'])}")
        assert answer.status == 200, answer.text[:300]
        assert answer.body == _cli_page(plugin_logdir, run, graph["name"])
        meta = re.search(rb'http-equiv="Content-Security-Policy" content="([^"]*)"', answer.body)
        assert meta is not None
        policy = answer.headers["Content-Security-Policy"]
        assert policy == meta.group(1).decode() + "; frame-ancestors 'self'"
        assert "default-src 'none'" in policy and "connect-src 'none'" in policy
        assert answer.headers["X-Content-Type-Options"] == "nosniff"
    data = page_data(_page(tensorboard, "view", run=run).decode())
    assert len(data["ns"]) > 1


def test_costs_travel_with_the_page(tensorboard: TensorBoard) -> None:
    """A run with run metadata: its page carries every recorded step, to colour by compute time
    or memory."""
    data = page_data(_page(tensorboard, "view", run="costs", graph=0).decode())
    assert [step["name"] for step in data["costs"]["steps"]] == [
        "costs · step 1 · forward", "costs · step 2 · train"]
    plain = page_data(_page(tensorboard, "view", run="keras", graph=0).decode())
    assert plain.get("costs") is None


def test_diff_compares_two_runs(tensorboard: TensorBoard) -> None:
    """``/diff?run=A&against=B`` draws what changed from B's graph to A's, as ``tbgraph diff``
    does for the two graph files."""
    page = _page(tensorboard, "diff", run="cnn_v2", against="cnn_v1")
    expected = graphviz_tb.diff(SAMPLES / "diff" / "cnn_v1.pb", SAMPLES / "diff" / "cnn_v2.pb")
    assert not expected.equal
    data = page_data(page.decode())
    assert data["options"]["colorBy"] == "diff"
    assert data["options"]["title"] == "cnn_v2 against cnn_v1"
    expected_data = page_data(expected.render(format="html"))
    assert data["diff"]["total"] == expected_data["diff"]["total"]
    assert sorted(data["ns"][i] for i in data["diff"]["changes"]) == sorted(
        expected_data["ns"][i] for i in expected_data["diff"]["changes"])
    assert tensorboard.get(f"{PLUGIN}/diff?{query(run='cnn_v2')}").status == 400
    same = page_data(_page(tensorboard, "diff", run="cnn_v1", against=MARKUP_RUN).decode())
    assert same["diff"]["changes"] == []


def test_a_page_is_drawn_once_per_content(tensorboard: TensorBoard,
                                          plugin_logdir: Path) -> None:
    """A page is drawn on first request and kept by content: asked again, it is the same job
    (its render time unchanged) and the same bytes.  A run written while TensorBoard is up
    appears in ``/runs`` on reload; when a run's content changes, its page is drawn afresh."""
    first = _page(tensorboard, "view", run="cnn_v1", graph=0)
    status = tensorboard.json(f"{PLUGIN}/progress?{query(run='cnn_v1', graph=0)}")
    assert status["state"] == "done" and status["seconds"] > 0
    again = _page(tensorboard, "view", run="cnn_v1", graph=0)
    assert again == first
    assert tensorboard.json(f"{PLUGIN}/progress?{query(run='cnn_v1', graph=0)}") == status

    late = plugin_logdir / "late"
    shutil.copytree(plugin_logdir / "cnn_v1", late)
    wait_for(lambda: "late" in _runs(tensorboard), timeout=120)
    copy = _page(tensorboard, "view", run="late", graph=0)
    assert page_data(copy.decode())["ns"] == page_data(first.decode())["ns"]

    # The run logs the changed model at a later step: its latest graph is drawn anew.
    time.sleep(1.1)  # a later wall time than the first event's, whatever the clock's grain
    write_graph_event(SAMPLES / "diff" / "cnn_v2.pb", late, step=1)
    wait_for(lambda: len(_runs(tensorboard)["late"]["graphs"]) == 2, timeout=120)
    listed = _runs(tensorboard)["late"]["graphs"]
    assert [g["step"] for g in listed] == [0, 1]
    newer = _page(tensorboard, "view", run="late")
    assert page_data(newer.decode())["ns"] == page_data(
        _page(tensorboard, "view", run="cnn_v2", graph=0).decode())["ns"]


HOSTILE_RUNS = ["../../etc/passwd", "/etc/passwd", "http://evil.example/graph",
                "cnn_v1\x00", "cnn_v1/../../../../etc/passwd", "..", ".", "cnn_v1/",
                "file:///etc/passwd", "\\\\evil.example\\share", "%2e%2e%2fetc%2fpasswd"]


@pytest.mark.parametrize("route", ["view", "diff", "progress"])
def test_a_run_that_is_not_a_run_gets_a_4xx_and_reads_nothing(tensorboard: TensorBoard,
                                                              route: str) -> None:
    """Runs are looked up among the runs TensorBoard knows: a path, a URL or a NUL byte in
    ``run`` or ``against`` gets a 4xx, and the process opens and lists no file for it.

    The process's audit log records every file Python code opens or lists in it (TensorFlow's
    own file system, which TensorBoard's data provider reads event files with, is C++ and not
    recorded; the plugin and graphviz_tb's readers are Python, and would be)."""
    before = len(tensorboard.opened())
    for name in HOSTILE_RUNS:
        for params in ({"run": name, "graph": 0}, {"run": name},
                       {"run": "cnn_v1", "against": name}):
            if route == "view" and "against" in params:
                continue
            answer = tensorboard.get(f"{PLUGIN}/{route}?{query(**params)}")
            assert 400 <= answer.status < 500, (route, params, answer.status)
            assert "no run" in answer.text or "required" in answer.text
    opened = tensorboard.opened()[before:]
    suspicious = [line for line in opened
                  if any(word in line for word in ("passwd", "evil", "share", "%2e"))]
    assert suspicious == []
    # The audit does see what the plugin reads: the tab's script, asked for now.
    assert tensorboard.get(f"{PLUGIN}/index.js").status == 200
    assert any(line.startswith("open\t") and line.endswith("tbplugin/tab.js'")
               for line in tensorboard.opened()[before:])


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.text(min_size=0, max_size=40))
def test_any_run_name_but_a_run_is_refused(tensorboard: TensorBoard, name: str) -> None:
    """Whatever text a request gives as a run, it is a run of TensorBoard's or a 4xx."""
    answer = tensorboard.get(f"{PLUGIN}/progress?{query(run=name, graph=0)}")
    if name in _runs(tensorboard):
        assert answer.status == 200
    else:
        assert 400 <= answer.status < 500
        assert answer.body.startswith(b"no run ")


def test_a_graph_that_cannot_be_drawn_says_why(tensorboard: TensorBoard) -> None:
    """A logged graph whose bytes are no GraphDef: listed (nothing is parsed to list it), then
    its page is a 422 with one line naming the run, what was logged and the step, and its
    progress says the same; asking again answers the same at once."""
    assert [g["origin"] for g in _runs(tensorboard)["broken"]["graphs"]] == ["event:graph_def"]
    answer = tensorboard.get(f"{PLUGIN}/view?{query(run='broken', graph=0)}")
    assert answer.status == 422
    line = ("run 'broken', graphs '__run_graph__' at step 0: its graph_def does not decode "
            "as a graph")
    assert answer.text == line + "\n"
    status = tensorboard.json(f"{PLUGIN}/progress?{query(run='broken', graph=0)}")
    assert (status["state"], status["error"]) == ("failed", line)
    assert tensorboard.get(f"{PLUGIN}/view?{query(run='broken', graph=0)}").text == line + "\n"


def test_bad_graph_indices_are_refused(tensorboard: TensorBoard) -> None:
    for graph, status in (("x", 400), ("-1", 400), ("1e3", 400), ("9" * 12, 400),
                          ("99", 404)):
        answer = tensorboard.get(f"{PLUGIN}/view?{query(run='cnn_v1', graph=graph)}")
        assert answer.status == status, (graph, answer.status, answer.text)
    assert tensorboard.get(f"{PLUGIN}/view").status == 400


def test_a_big_graph_renders_off_the_request_threads(tensorboard: TensorBoard,
                                                     nasnet_step: Path) -> None:
    """NASNet-Large's 69,453-op training step: asking for its progress starts the render, which
    reports its stages and layout progress; meanwhile TensorBoard keeps answering (its run list,
    its plugin listing) before the render is done.  The page then holds every op, and asking
    again answers from the cache."""
    params = query(run="nasnet_step", graph=0)
    status = tensorboard.json(f"{PLUGIN}/progress?{params}")
    assert status["state"] == "rendering"
    answered_while_rendering = 0
    stages = set()
    while status["state"] == "rendering":
        stages.add(status["stage"])
        for path in ("/data/runs", "/data/plugins_listing", f"{PLUGIN}/runs"):
            assert tensorboard.get(path, timeout=60).status == 200
        status = tensorboard.json(f"{PLUGIN}/progress?{params}")
        answered_while_rendering += status["state"] == "rendering"
        if status["stage"] == "laying out":
            assert 0 <= status["done"] <= status["total"]
        time.sleep(0.2)
    assert status["state"] == "done", status
    assert answered_while_rendering >= 3, stages
    assert "laying out" in stages or "writing the page" in stages, stages
    page = _page(tensorboard, "view", run="nasnet_step", graph=0)
    ops = len(GraphDef.FromString(nasnet_step.read_bytes()).node)
    assert ops > 65_000
    assert page_data(page.decode())["nops"][0] == ops  # the root holds every op
    assert tensorboard.json(f"{PLUGIN}/progress?{params}") == status
    assert _page(tensorboard, "view", run="nasnet_step", graph=0) == page


def test_the_standalone_html_download(tensorboard: TensorBoard) -> None:
    """``&download=1`` sends the same page as a file named after the graph (characters a file
    name cannot hold replaced)."""
    answer = tensorboard.get(f"{PLUGIN}/view?{query(run=MARKUP_RUN, graph=0, download=1)}")
    assert answer.status == 200
    disposition = answer.headers["Content-Disposition"]
    assert disposition.startswith('attachment; filename="') and disposition.endswith('.html"')
    assert re.fullmatch(r'attachment; filename="[A-Za-z0-9._-]+\.html"', disposition)
    assert answer.body == _page(tensorboard, "view", run=MARKUP_RUN, graph=0)
    assert json.dumps(MARKUP_RUN)[1:-1] not in answer.text  # only ever escaped
