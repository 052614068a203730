"""Graphs handed over as bytes (``graphviz_tb.logged``): what TensorBoard's data provider
serves the plugin.  The real provider's blobs are checked end to end in test_tbplugin.py;
here, blobs made by hand: the same graphs as an event file gives, and clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from tensorboard.compat.proto.config_pb2 import RunMetadata
from tensorboard.compat.proto.graph_pb2 import GraphDef

import graphviz_tb
from graphviz_tb.api import discover
from graphviz_tb.errors import InputError, NoGraphError
from graphviz_tb.logged import GRAPHS, KERAS_MODEL, RUN_GRAPH, TAGGED_RUN_METADATA, Blob, Logged
from graphviz_tb.options import LoadOptions
from graphviz_tb.read import select

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "mnist_tf1.pb"


def _blob(plugin: str, data: bytes, tag: str = RUN_GRAPH, step: int = 0,
          wall_time: float = 1.0, run: str = "train") -> Blob:
    return Blob(run, plugin, tag, step, wall_time, lambda: data)


def test_a_run_graph_blob_is_the_graph() -> None:
    data = SAMPLE.read_bytes()
    graph = graphviz_tb.load(Logged("train", (_blob(GRAPHS, data),)))
    assert graph.source.name == "train · step 0 · graph_def"
    assert graph.source.origin == "event:graph_def"
    assert graph.model.top_level_nodes == len(GraphDef.FromString(data).node)


def test_run_metadata_blobs_give_graphs_and_costs_in_time_order() -> None:
    graph = GraphDef.FromString(SAMPLE.read_bytes())
    metadata = RunMetadata()
    metadata.partition_graphs.add().CopyFrom(graph)
    metadata.step_stats.dev_stats.add(device="/job:localhost/replica:0/task:0/device:CPU:0")
    blobs = (_blob(TAGGED_RUN_METADATA, metadata.SerializeToString(), "step_1", 1, 3.0),
             _blob(GRAPHS, graph.SerializeToString(), wall_time=2.0))
    found = discover(Logged("train", blobs))
    assert [g.name for g in found.graphs] == [
        "train · step 0 · graph_def", "train · step 1 · step_1 (partition graph 1/1)"]
    assert [c.name for c in found.costs] == ["train · step 1 · step_1"]
    assert select(found, LoadOptions()).step == 1  # the latest op graph


def test_other_plugins_and_tags_are_left_out() -> None:
    data = SAMPLE.read_bytes()
    blobs = (_blob("scalars", b"x"), _blob(GRAPHS, data, tag="not_the_run_graph"))
    with pytest.raises(NoGraphError, match="no graph among its 2 logged value"):
        discover(Logged("train", blobs))


@pytest.mark.parametrize("plugin, data, message", [
    (TAGGED_RUN_METADATA, b"\xff\xff", "malformed RunMetadata"),
    (KERAS_MODEL, b"{not json", "run 'train', graph_keras_model 'keras' at step 0"),
    (GRAPHS, b"\x0a\x05\x0a\x03abc\xff", "does not decode as a graph"),
])
def test_a_broken_blob_is_named_in_one_line(plugin: str, data: bytes, message: str) -> None:
    tag = {GRAPHS: RUN_GRAPH, KERAS_MODEL: "keras"}.get(plugin, "step_1")
    with pytest.raises(InputError, match=message):
        graphviz_tb.load(Logged("train", (_blob(plugin, data, tag),)))
