"""Which Graphviz runs: Graphviz's own programs when ``dot`` is on PATH, else graphviz-pure,
installed by pip with the package; what each can draw, and what the user is told.

The command-line tests run ``tbgraph`` as a user does, in a fresh process whose PATH holds no
``dot`` (an empty directory), so nothing from this machine's Graphviz can leak in.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from graphviz_tb.errors import ExecutableNotFound, GraphvizTbError
from graphviz_tb.layout import engine

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "mnist_tf1.pb"


def tbgraph(*args: str, path: str | None = None, **env: str
            ) -> subprocess.CompletedProcess[str]:
    """``tbgraph ARGS`` in a fresh process; ``path`` replaces PATH, ``env`` adds variables."""
    environ = {k: v for k, v in os.environ.items() if k != engine.ENGINE_VARIABLE} | env
    if path is not None:
        environ["PATH"] = path
    return subprocess.run([sys.executable, "-m", "graphviz_tb", *args], env=environ,
                          capture_output=True, text=True, check=False, timeout=120)


def assert_one_line_error(proc: subprocess.CompletedProcess[str], *words: str) -> None:
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tbgraph: error: "), proc.stderr
    for word in words:
        assert word in lines[0]


def test_without_dot_the_pip_engine_lays_out_and_draws(tmp_path: Path) -> None:
    """No ``dot`` on PATH: SVG and PNG still come, from graphviz-pure, which is found through
    its installed distribution (it is not on this PATH either), and its font-table warnings
    stay quiet."""
    version = tbgraph("--version", path=str(tmp_path))
    assert version.returncode == 0
    assert "Graphviz engine: graphviz-pure 0.2.2 (Graphviz 16.1.0)" in version.stdout
    assert "draws SVG, PNG\n" in version.stdout
    for fmt, magic in (("svg", b"<?xml"), ("png", b"\x89PNG")):
        out = tmp_path / f"mnist.{fmt}"
        proc = tbgraph("render", str(SAMPLE), "-o", str(out), path=str(tmp_path))
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr.startswith(f"wrote {out} ") and proc.stderr.count("\n") == 1
        assert out.read_bytes().startswith(magic)


def test_pdf_without_dot_is_one_clear_line_and_no_file(tmp_path: Path) -> None:
    """graphviz-pure draws no PDF: the user is told what to install, before any layout, and
    an existing file keeps its content."""
    out = tmp_path / "mnist.pdf"
    proc = tbgraph("render", str(SAMPLE), "-o", str(out), path=str(tmp_path))
    assert_one_line_error(proc, "PDF needs Graphviz's own programs", "apt-get install graphviz",
                          "graphviz-pure")
    assert not out.exists() and list(tmp_path.iterdir()) == []
    out.write_bytes(b"old")
    assert tbgraph("render", str(SAMPLE), "-o", str(out), path=str(tmp_path)).returncode == 1
    assert out.read_bytes() == b"old"


def test_forcing_native_without_dot_says_what_to_install(tmp_path: Path) -> None:
    proc = tbgraph("render", str(SAMPLE), "-o", str(tmp_path / "m.svg"), path=str(tmp_path),
                   TBGRAPH_ENGINE="native")
    assert_one_line_error(proc, "TBGRAPH_ENGINE=native", "apt-get install graphviz")
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_engine_name_is_refused(tmp_path: Path) -> None:
    proc = tbgraph("render", str(SAMPLE), "-o", str(tmp_path / "m.svg"), TBGRAPH_ENGINE="wasm")
    assert_one_line_error(proc, "TBGRAPH_ENGINE='wasm' names no engine", "'native'", "'pure'")


@pytest.mark.dot
def test_native_dot_is_the_first_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(engine.ENGINE_VARIABLE, raising=False)
    engine.current.cache_clear()
    try:
        chosen = engine.current()
        assert isinstance(chosen, engine.NativeEngine)
        assert chosen.describe()["formats"] == ["svg", "png", "pdf"]
    finally:
        engine.current.cache_clear()
    proc = tbgraph("--version")
    assert proc.stdout.splitlines()[1].startswith("Graphviz engine: dot 2.")


def test_with_no_graphviz_at_all_both_ways_are_named(monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv(engine.ENGINE_VARIABLE, raising=False)
    monkeypatch.setattr(engine, "pure_executable", lambda: None)
    engine.current.cache_clear()
    try:
        with pytest.raises(ExecutableNotFound, match=r"pip install graphviz-pure.*apt-get"):
            engine.current()
    finally:
        engine.current.cache_clear()


@pytest.mark.parametrize("forced", ["native", "pure"])
def test_info_json_names_the_engine_a_render_uses(forced: str) -> None:
    proc = tbgraph("info", "--json", str(SAMPLE), TBGRAPH_ENGINE=forced)
    assert proc.returncode == 0, proc.stderr
    described = json.loads(proc.stdout)["engine"]
    if forced == "native":
        assert described["name"] == "dot" and described["graphviz"].startswith("2.")
        assert described["formats"] == ["svg", "png", "pdf"]
    else:
        assert described == {**described, "name": "graphviz-pure", "version": "0.2.2",
                             "graphviz": "16.1.0", "formats": ["svg", "png"]}
    assert Path(described["path"]).is_file()


def test_info_needs_no_engine(tmp_path: Path) -> None:
    """``info`` reads the model only: with the engine unusable it still answers, and says so."""
    proc = tbgraph("info", "--json", str(SAMPLE), path=str(tmp_path), TBGRAPH_ENGINE="native")
    assert proc.returncode == 0, proc.stderr
    described = json.loads(proc.stdout)["engine"]
    assert described["name"] is None and "apt-get install graphviz" in described["error"]


def test_each_engine_lays_out_many_graphs_in_one_call(graphviz_engine: str) -> None:
    """Several graphs, one process, answers in order; a graph Graphviz refuses fails the call
    (the layout stage then retries the batch one graph at a time)."""
    chosen = engine.current()
    results = chosen.layout(["digraph { a -> b }", "digraph { x; y; z; x -> z [id=e0] }"])
    assert [sorted(o["name"] for o in r["objects"]) for r in results] == [["a", "b"],
                                                                          ["x", "y", "z"]]
    assert results[1]["edges"][0]["id"] == "e0" and results[1]["edges"][0]["pos"].startswith("e,")
    with pytest.raises(GraphvizTbError, match=f"Graphviz \\({graphviz_engine}\\) failed"):
        chosen.layout(["digraph { a -> b }", "digraph { a -> }"])
