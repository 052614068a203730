"""A graph too large for the machine gets one clear line before memory runs out.

The limit is injected with ``TBGRAPH_MEMORY_LIMIT``, so these tests need no large machine and
no large graph; what they check is the estimate's shape (per op, and the nested scopes' names,
which grow with the square of the depth) and the message, never a time.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import hostile_inputs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphviz_tb
from graphviz_tb.limits import ENV, MB, parse_size
from graphviz_tb.model import budget as resources
from graphviz_tb.model.budget import TooLargeError, graph_cost
from graphviz_tb.options import LoadOptions

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import graphs_shapes


def _tbgraph(*args: str, env_limit: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, ENV: env_limit}
    return subprocess.run([sys.executable, "-m", "graphviz_tb", *args], capture_output=True,
                          text=True, env=env, timeout=300)


def test_sizes_parse_with_units() -> None:
    assert parse_size("512M") == 512 * 2**20
    assert parse_size("1.5g") == int(1.5 * 2**30)
    assert parse_size("2GiB") == 2 * 2**30
    assert parse_size("800000000") == 800_000_000
    with pytest.raises(ValueError, match="not a size"):
        parse_size("lots")


def test_cost_counts_ops_calls_and_nested_names() -> None:
    """Ops with the bodies that opening calls will add, and the characters every nested
    group's name holds, counted exactly once the scopes run deep: two ops under 4,000 scopes
    hold the names of 4,000 groups, 46 MB, in a 70 kB file; 3,000 scopes with an op at every
    level count each shared ancestor once."""
    functions = graphs_shapes.functions(10)
    cost = graph_cost(functions, LoadOptions())
    assert cost.inlined == 10 * 4 + 10 * 3  # each caller's body, and the leaf in each
    assert cost.ops == len(functions.node) + cost.inlined
    assert cost.nested_names < 10_000
    assert graph_cost(functions, LoadOptions(functions=False)).inlined == 0
    names = ["/".join(f"s{i}" for i in range(level)) for level in range(1, 4001)]
    deep = graph_cost(graphs_shapes.deep(4000), LoadOptions())
    assert deep.depth == 4000
    assert deep.nested_names == sum(map(len, names))
    every = graph_cost(hostile_inputs.deep_scopes_graph(3000), LoadOptions())
    assert every.nested_names == sum(map(len, names[:3000]))


def _groups_counted_by_hand(names: list[str]) -> tuple[int, int]:
    """Every scope of an op and each of its ancestors, as sets, and the deepest scope."""
    scopes = {name.rpartition("/")[0] for name in names} - {""}
    groups: set[str] = set()
    for scope in scopes:
        while scope:
            groups.add(scope)
            scope = scope.rpartition("/")[0]
    return sum(map(len, groups)), max((s.count("/") for s in scopes), default=-1) + 1


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="ab/", max_size=9), max_size=30))
def test_nested_names_are_every_group_name_counted_once(names: list[str]) -> None:
    """The nested names' count and depth are those of every op's scope and its ancestors,
    whatever the order of the ops and however odd their names (``a//b``, ``/a``, ``a/``)."""
    assert resources._group_names(names) == _groups_counted_by_hand(names)


def test_a_graph_too_large_is_refused_in_one_line(tmp_path: Path) -> None:
    """Before the model is built: exit 1, one line naming the file, the ops, the need, the
    limit and what to do; no output written."""
    path = tmp_path / "wide.pb"
    path.write_bytes(graphs_shapes.wide(2000).SerializeToString())
    out = tmp_path / "wide.svg"
    proc = _tbgraph("render", str(path), "-o", str(out), env_limit="20M")
    assert proc.returncode == 1
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    line = lines[0]
    assert line.startswith(f"tbgraph: error: {path}: 2,002 ops, scopes nested up to 1 deep: "
                           "drawing it needs about ")
    assert "more than the 20 MB TBGRAPH_MEMORY_LIMIT allows" in line
    assert "--depth" in line and "--focus" in line
    assert not out.exists()


def test_deep_scopes_are_refused_for_their_names(tmp_path: Path) -> None:
    """20,000 nested scopes over two ops: a 140 kB file whose groups would hold 1.4 GB of
    names; refused with the depth named, before any of it is built."""
    path = tmp_path / "deep.pb"
    path.write_bytes(graphs_shapes.deep(20_000).SerializeToString())
    proc = _tbgraph("info", str(path), env_limit="1G")
    assert proc.returncode == 1
    (line,) = proc.stderr.splitlines()
    assert "3 ops, scopes nested up to 20,000 deep" in line
    assert "most of it is the 20,000 levels of nested scopes" in line


def test_a_render_that_fits_only_as_svg_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """The viewer's data costs more than the default picture: with a limit between the two,
    HTML is refused, naming SVG as what fits, and SVG is drawn."""
    graph = graphviz_tb.load(graphs_shapes.wide(2000))
    cost = graph.cost
    assert cost is not None
    svg, html = cost.render_bytes("svg", False), cost.render_bytes("html", False)
    assert svg < html
    monkeypatch.setenv(ENV, str((svg + html) // 2))
    with pytest.raises(TooLargeError, match="it would fit as SVG instead of HTML"):
        graph.render(format="html")
    with pytest.raises(TooLargeError, match="it would fit without --expand-all"):
        graph.render(format="svg", expand_all=True)
    assert graph.render(format="svg").startswith("<?xml")


def test_a_logdir_page_that_would_not_fit_is_refused_before_its_graphs_are_built(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """One viewer page holds every graph of a logdir at once: with a limit the chosen graph
    fits under but not all of them together, the page is refused in one line naming how to
    choose one, before any other graph's model is built; the chosen graph alone still draws."""
    monkeypatch.setattr(resources, "resident", lambda: 100 * MB)  # steady figures
    logs = Path(__file__).resolve().parents[1] / "samples" / "logs"
    graph = graphviz_tb.load(logs)
    assert graph.cost is not None and len(graph.discovery.graphs) == 5
    alone = graph.cost.render_bytes("html", False)
    monkeypatch.setenv(ENV, str(alone + 1_000))

    def build(*_: object) -> None:
        raise AssertionError("a sibling graph was built")

    monkeypatch.setattr(graphviz_tb.Graph, "_sibling", build)
    with pytest.raises(TooLargeError) as refused:
        graph.render(format="html")
    line = str(refused.value)
    assert "\n" not in line and line.startswith(f"{graph.name}: ")
    assert "the page holds 4 graphs: choose one with --graph N, --run or --tag" in line
    monkeypatch.undo()
    monkeypatch.setattr(resources, "resident", lambda: 100 * MB)
    monkeypatch.setenv(ENV, str(alone + 1_000))
    chosen = graphviz_tb.load(logs, graph=graph.index)
    assert chosen.render(format="html").startswith("<!DOCTYPE html>")


def test_bad_limit_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "deep.pb"
    path.write_bytes(graphs_shapes.deep(3).SerializeToString())
    proc = _tbgraph("info", str(path), env_limit="plenty")
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        "tbgraph: error: TBGRAPH_MEMORY_LIMIT: 'plenty' is not a size (e.g. 8G, 512M, "
        "1000000000)"]


def test_running_out_of_memory_anyway_is_one_line(monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Should the estimate fall short, the cap the command line sets turns the kernel's kill
    into a MemoryError, and that too is one line."""
    from graphviz_tb import api
    from graphviz_tb.cli import main

    def exhausted(*_: object, **__: object) -> None:
        raise MemoryError

    path = tmp_path / "deep.pb"
    path.write_bytes(graphs_shapes.deep(3).SerializeToString())
    monkeypatch.setattr(api.Graph, "render", exhausted)
    assert main(["render", str(path), "-o", str(tmp_path / "x.svg")]) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("tbgraph: error: ran out of memory; ")


def test_the_command_line_caps_its_memory() -> None:
    """The cap is the limit, never below what starting up needs."""
    code = ("import resource\nfrom graphviz_tb.limits import limit_process\n"
            "print(limit_process(), resource.getrlimit(resource.RLIMIT_DATA)[0])")
    for limit, expected in (("2G", 2 * 2**30), ("1M", 256 * 2**20)):
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              env={**os.environ, ENV: limit}, check=True)
        assert proc.stdout.split() == [str(expected), str(expected)]
