"""``tbgraph info --json`` reports exact counts for every kind of sample.

The expected numbers come from samples/MANIFEST.json, written by samples/make_samples.py from
what TensorFlow (or PyTorch, Keras) itself produced, not from our own parsing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from graphviz_tb.cli import main

REPO = Path(__file__).resolve().parents[1]
MANIFEST = json.loads((REPO / "samples" / "MANIFEST.json").read_text())["samples"]


def info_json(path: str, capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, Any]:
    assert main(["info", "--json", str(REPO / path), *extra]) == 0
    return json.loads(capsys.readouterr().out)


def _expected(sample: dict[str, Any]) -> dict[str, Any]:
    """The counts of the graph that tbgraph selects by default."""
    if sample["format"] == "saved_model":
        return sample["meta_graphs"][0]
    if sample["format"] == "logdir":
        return next(g for g in sample["graphs"] if g["kind"] in ("op", "conceptual"))
    return sample


@pytest.mark.parametrize("sample", MANIFEST, ids=[s["name"] for s in MANIFEST])
def test_info_counts_match_what_the_producer_wrote(sample: dict[str, Any],
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    info = info_json(sample["path"], capsys)
    expected = _expected(sample)
    assert info["nodes"] == expected["nodes"]
    assert info["kind"] == expected.get("kind", "op")
    if "functions" in expected:
        assert info["functions"] == expected["functions"]
        assert info["function_nodes"] == expected["function_nodes"]
    if "control_edges" in expected and info["functions"] == 0:
        assert info["edges"]["control"] == expected["control_edges"]
    assert info["graphs"], "every discovery lists what it found"
    for graph in info["graphs"]:
        assert set(graph) >= {"name", "kind", "nodes"}
    assert info["graphs"][info["selected"]]["nodes"] == info["nodes"]


def test_source_kinds_are_named(capsys: pytest.CaptureFixture[str]) -> None:
    kinds = {s["name"]: info_json(s["path"], capsys)["source_kind"] for s in MANIFEST}
    assert kinds["mnist_tf1"] == "graphdef"
    assert kinds["mnist_tf1_meta"] == "metagraph"
    assert kinds["saved_model"] == "savedmodel"
    assert kinds["logs_trace"] == "logdir"


def test_saved_model_signatures_become_inputs_and_outputs(
        capsys: pytest.CaptureFixture[str]) -> None:
    info = info_json("samples/saved_model", capsys)
    assert {s["name"] for s in info["inputs"]} == {"features", "temperature"}
    assert {s["name"] for s in info["outputs"]} == {"logits", "probabilities"}


def test_text_summary_names_counts_and_groups(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["info", str(REPO / "samples" / "mnist_tf1.pb")]) == 0
    out = capsys.readouterr().out
    assert f"ops: {MANIFEST[0]['nodes']:,}" in out
    assert "top-level groups" in out and "conv1" in out
    assert "reference" in out


@pytest.mark.parametrize("args", [["info"], ["render", "--depth", "x", "a.pb"], ["nope"]])
def test_usage_errors_exit_2(args: list[str]) -> None:
    proc = subprocess.run([sys.executable, "-m", "graphviz_tb", *args], capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr


def test_help_is_fast_and_never_loads_tensorflow() -> None:
    code = ("import sys, graphviz_tb, graphviz_tb.cli\n"
            "from graphviz_tb.cli import build_parser\n"
            "build_parser().format_help()\n"
            "heavy = ('tensorflow', 'keras', 'torch')\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in heavy]\n"
            "print(','.join(bad))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert proc.stdout.strip() == ""
    helped = subprocess.run([sys.executable, "-m", "graphviz_tb", "render", "--help"],
                            capture_output=True, text=True, check=True)
    assert "--expand" in helped.stdout and "examples:" in helped.stdout


def test_public_surface_is_exactly_all() -> None:
    import graphviz_tb

    public = {n for n in dir(graphviz_tb) if not n.startswith("_")}
    modules = {n for n in public if type(getattr(graphviz_tb, n)).__name__ == "module"}
    assert public - modules == set(graphviz_tb.__all__) - {"__version__"}
