"""Choosing one graph among many: --run, --tag, --graph, and the defaults."""

from __future__ import annotations

from pathlib import Path

import pytest
from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.summary.writer.record_writer import RecordWriter

from graphviz_tb.errors import SelectionError
from graphviz_tb.options import LoadOptions
from graphviz_tb.read import discover, select


def _graph(op: str) -> bytes:
    return GraphDef(node=[{"name": "n", "op": op}]).SerializeToString()


def _keras_event(step: int, wall_time: float) -> Event:
    config = b'{"class_name": "Sequential", "config": {"name": "s", "layers": []}}'
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name="graph_keras_model", content=b"1"))
    value = Summary.Value(tag="keras", metadata=metadata,
                          tensor=TensorProto(dtype=7, string_val=[config]))
    return Event(step=step, wall_time=wall_time, summary=Summary(value=[value]))


def _write(path: Path, events: list[Event]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as stream:
        writer = RecordWriter(stream)
        for event in events:
            writer.write(event.SerializeToString())


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    _write(tmp_path / "events.out.tfevents.1.host", [
        Event(step=0, wall_time=100.0, graph_def=_graph("Root")),
    ])
    _write(tmp_path / "train" / "events.out.tfevents.2.host", [
        Event(step=0, wall_time=50.0, graph_def=_graph("Old")),
        Event(step=5, wall_time=300.0, graph_def=_graph("Newest")),
        _keras_event(6, 400.0),
    ])
    _write(tmp_path / "eval" / "events.out.tfevents.3.host", [_keras_event(0, 500.0)])
    return tmp_path


def _op(source) -> str:
    return source.load().node[0].op


def test_default_is_the_most_recent_op_graph(logdir):
    discovery = discover(logdir)
    assert [g.run for g in discovery.graphs] == [".", "eval", "train", "train", "train"]
    assert _op(select(discovery, LoadOptions())) == "Newest"


def test_conceptual_graph_when_a_run_has_no_op_graph(logdir):
    chosen = select(discover(logdir), LoadOptions(run="eval"))
    assert (chosen.kind, chosen.run) == ("conceptual", "eval")


def test_run_tag_and_index(logdir):
    discovery = discover(logdir)
    assert _op(select(discovery, LoadOptions(run="."))) == "Root"
    assert select(discovery, LoadOptions(run="train", tag="keras")).step == 6
    assert _op(select(discovery, LoadOptions(graph=2))) == "Old"


def test_selection_errors_list_what_there_is(logdir):
    discovery = discover(logdir)
    with pytest.raises(SelectionError, match=r"no graph with run 'test' .*; runs: \., eval, "
                                             "train$"):
        select(discovery, LoadOptions(run="test"))
    with pytest.raises(SelectionError, match=r"no graph with tag 'loss' .*; tags: keras$"):
        select(discovery, LoadOptions(tag="loss"))
    with pytest.raises(SelectionError, match=r"there is no graph 9 .*it holds 5 graph\(s\) "
                                             r"\(0: \. · step 0 · graph_def; 1: "):
        select(discovery, LoadOptions(graph=9))
    with pytest.raises(SelectionError, match=r"runs: \., eval, train"):
        discover(logdir, LoadOptions(run="nope"))
