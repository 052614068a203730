"""Event files and logdirs written by TensorFlow 1 and 2, Keras 3 and PyTorch."""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.compat.proto.summary_pb2 import Summary
from tensorboard.summary.writer.record_writer import RecordWriter

from graphviz_tb.errors import CorruptRecordError, InputError, NoGraphError
from graphviz_tb.options import LoadOptions
from graphviz_tb.read import discover, select
from graphviz_tb.read.payloads import graph_scopes, merge_graphs
from graphviz_tb.read.tfrecord import iter_records


def _event_file(logdir: Path) -> Path:
    (file,) = sorted(logdir.rglob("*tfevents*"))
    return file


def _write_events(path: Path, events: list[Event]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as stream:
        writer = RecordWriter(stream)
        for event in events:
            writer.write(event.SerializeToString())
    return path


def _scalar(step: int) -> Event:
    return Event(step=step, wall_time=1.0 + step,
                 summary=Summary(value=[Summary.Value(tag="loss", simple_value=0.5)]))


@pytest.mark.tensorflow
def test_tf1_filewriter_logdir(reader_tf1):
    made = reader_tf1["logdir"]
    discovery = discover(made.path)
    assert discovery.source_kind == "logdir"
    by_origin: dict[str, list] = {}
    for source in discovery.graphs:
        by_origin.setdefault(source.origin, []).append(source)
        assert source.run == "train"
    (graph_def,) = by_origin["event:graph_def"]
    assert len(graph_def.load().node) == made.nodes
    # FileWriter(graph=...) adds a meta graph at step 0; add_meta_graph another at step 2.
    assert [m.step for m in by_origin["event:meta_graph_def"]] == [0, 2]
    meta = by_origin["event:meta_graph_def"][-1]
    assert len(meta.load().node) == made.extra["meta_nodes"]
    partitions = by_origin["event:run_metadata"]
    assert [len(p.load().node) for p in partitions] == made.extra["partitions"]
    assert {p.tag for p in partitions} == {"step_1"}
    assert len({s.name for s in discovery.graphs}) == len(discovery.graphs)
    # The most recent op graph is the default: here the meta graph, written last.
    assert select(discovery, LoadOptions()) == meta


@pytest.mark.tensorflow
def test_tf2_trace_export(reader_trace):
    discovery = discover(reader_trace.path)
    (source,) = discovery.graphs
    assert (source.origin, source.kind, source.tag, source.step, source.run) == (
        "event:trace", "op", "step_trace", 3, ".")
    graph = source.load()
    assert len(graph.node) == sum(reader_trace.nodes)
    # One function graph per traced call (and per eager op run while tracing), each merged
    # under its own scope: the biggest under the trace's tag, the others as big numbered
    # after it, the small ones folded into one scope (see graph_scopes).
    count = len(reader_trace.nodes)
    assert count >= 2
    scopes = graph_scopes(reader_trace.nodes, "step_trace")
    assert len(set(scopes)) == count and "step_trace" in scopes
    assert sum(n.name.startswith("step_trace/") for n in graph.node) == max(reader_trace.nodes)
    assert all(n.name.startswith(tuple(f"{s}/" for s in scopes)) for n in graph.node)
    assert any(n.name.endswith("layer/MatMul") for n in graph.node)
    names = {n.name for n in graph.node}
    for node in graph.node:
        for name in node.input:
            assert name.lstrip("^").split(":")[0] in names


@pytest.mark.tensorflow
def test_keras3_tensorboard_callback_writes_the_conceptual_graph(reader_keras):
    made = reader_keras["logdir"]
    discovery = discover(made.path)
    (source,) = discovery.graphs  # Keras 3 writes no op graph, only the model config
    assert (source.origin, source.kind, source.tag, source.run) == (
        "event:keras", "conceptual", "keras", "train")
    graph = source.load()
    assert len(graph.node) == made.nodes
    assert [n.op for n in graph.node] == ["InputLayer", "Dense", "Dense"]
    assert select(discovery, LoadOptions()) == source


def test_pytorch_add_graph(reader_pytorch):
    discovery = discover(reader_pytorch.path)
    (source,) = discovery.graphs  # its tagged_run_metadata holds step stats only
    assert source.origin == "event:graph_def"
    graph = source.load()
    assert len(graph.node) == reader_pytorch.nodes
    assert any("/Linear[fc1]/" in n.name for n in graph.node)
    assert any(n.op == "aten::linear" for n in graph.node)
    assert any("_output_shapes" in n.attr for n in graph.node)


@pytest.mark.tensorflow
def test_single_event_file(reader_trace):
    discovery = discover(_event_file(reader_trace.path))
    assert discovery.source_kind == "events"
    assert discovery.graphs[0].run == "."


@pytest.mark.tensorflow
def test_event_file_recognised_without_tfevents_in_its_name(reader_trace, tmp_path):
    renamed = tmp_path / "trace.bin"
    shutil.copy(_event_file(reader_trace.path), renamed)
    assert discover(renamed).graphs[0].origin == "event:trace"


@pytest.mark.tensorflow
def test_runs_are_subdirectories(reader_trace, reader_pytorch, tmp_path):
    shutil.copytree(reader_trace.path, tmp_path / "a" / "trace")
    shutil.copytree(reader_pytorch.path, tmp_path / "b")
    discovery = discover(tmp_path)
    assert sorted(g.run for g in discovery.graphs) == ["a/trace", "b"]
    only = discover(tmp_path, LoadOptions(run="./b/"))
    assert [g.run for g in only.graphs] == ["b"]


def _flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x20
    path.write_bytes(bytes(data))


@pytest.mark.tensorflow
def test_flipped_byte_names_the_record(reader_trace, tmp_path):
    file = tmp_path / "events.out.tfevents.1.host"
    shutil.copy(_event_file(reader_trace.path), file)
    offsets = [offset for offset, _ in iter_records(file)]
    bad = offsets[1]
    _flip(file, bad + 12 + 5)  # inside the data of the second record
    with pytest.raises(CorruptRecordError) as error:
        discover(tmp_path)
    assert str(error.value) == (
        f"{file}: record at byte {bad} is corrupt (data CRC mismatch)")


def test_flipped_length_byte(tmp_path):
    file = _write_events(tmp_path / "events.out.tfevents.2.host", [_scalar(0), _scalar(1)])
    second = [offset for offset, _ in iter_records(file)][1]
    _flip(file, second + 1)
    with pytest.raises(CorruptRecordError, match=f"record at byte {second} is corrupt "
                                                 r"\(length CRC mismatch\)"):
        discover(tmp_path)


@pytest.mark.tensorflow
def test_event_file_cut_short(reader_trace, tmp_path):
    data = _event_file(reader_trace.path).read_bytes()
    file = tmp_path / "events.out.tfevents.3.host"
    file.write_bytes(data[:-10])
    last = [offset for offset, _ in iter_records(_event_file(reader_trace.path))][-1]
    with pytest.raises(CorruptRecordError, match=f"record at byte {last} is cut short at byte "
                                                 f"{len(data) - 10}"):
        discover(file)


def test_empty_logdir(tmp_path):
    with pytest.raises(NoGraphError, match="holds no TensorBoard event files"):
        discover(tmp_path)


def test_logdir_with_only_scalars(tmp_path):
    _write_events(tmp_path / "run" / "events.out.tfevents.4.host", [_scalar(0), _scalar(1)])
    with pytest.raises(NoGraphError, match="hold no graph"):
        discover(tmp_path)


def test_duplicate_names_are_made_unique(tmp_path):
    from tensorboard.compat.proto.graph_pb2 import GraphDef

    graph = GraphDef(node=[{"name": "a", "op": "Const"}]).SerializeToString()
    events = [Event(step=0, wall_time=10.0, graph_def=graph),
              Event(step=0, wall_time=20.5, graph_def=graph),
              Event(step=0, wall_time=20.5, graph_def=graph)]
    _write_events(tmp_path / "events.out.tfevents.5.host", events)
    discovery = discover(tmp_path)
    names = [g.name for g in discovery.graphs]
    assert len(set(names)) == 3
    assert names[0] == ". · step 0 · graph_def · 1970-01-01 00:00:10.000+00:00"
    assert names[2].endswith("#2")
    assert select(discovery, LoadOptions()) == discovery.graphs[2]


def test_record_that_is_not_an_event(tmp_path):
    file = tmp_path / "events.out.tfevents.6.host"
    with open(file, "wb") as stream:
        RecordWriter(stream).write(b"\x0b\x0c not an event")
    with pytest.raises(InputError, match="record at byte 0 is not a TensorBoard event"):
        discover(file)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(max_size=300), min_size=1, max_size=6), st.data())
def test_records_round_trip_and_any_flipped_byte_is_caught(tmp_path_factory, records, data):
    file = tmp_path_factory.mktemp("records") / "r.tfrecord"
    with open(file, "wb") as stream:
        writer = RecordWriter(stream)
        for record in records:
            writer.write(record)
    assert [payload for _, payload in iter_records(file)] == records
    raw = bytearray(file.read_bytes())
    position = data.draw(st.integers(0, len(raw) - 1))
    raw[position] ^= data.draw(st.integers(1, 255))
    file.write_bytes(bytes(raw))
    with pytest.raises(CorruptRecordError):
        list(iter_records(file))


def test_record_header_layout():
    """The masked CRC matches TensorFlow's published test vector layout (length 0 record)."""
    from graphviz_tb.read.tfrecord import is_tfrecord_header, masked_crc32c

    header = struct.pack("<Q", 0)
    assert is_tfrecord_header(header + struct.pack("<I", masked_crc32c(header)))
    assert not is_tfrecord_header(header + b"\x00\x00\x00\x00")


def _run_metadata(graph_counts: list[int]):
    from tensorboard.compat.proto.config_pb2 import RunMetadata
    from tensorboard.compat.proto.graph_pb2 import GraphDef

    run_metadata = RunMetadata()
    for count in graph_counts:
        graph = GraphDef(node=[{"name": f"n{i}", "op": "NoOp"} for i in range(count)])
        run_metadata.function_graphs.add().pre_optimization_graph.CopyFrom(graph)
    return run_metadata


def test_tagged_run_metadata_gives_one_source_per_function_graph(tmp_path):
    from tensorboard.compat.proto.event_pb2 import TaggedRunMetadata

    tagged = TaggedRunMetadata(tag="step_7",
                               run_metadata=_run_metadata([2, 3]).SerializeToString())
    _write_events(tmp_path / "events.out.tfevents.7.host",
                  [Event(step=7, wall_time=1.0, tagged_run_metadata=tagged)])
    discovery = discover(tmp_path)
    assert [(g.origin, g.tag, len(g.load().node)) for g in discovery.graphs] == [
        ("event:function_graph", "step_7", 2), ("event:function_graph", "step_7", 3)]


def test_trace_with_one_function_graph_keeps_its_names(tmp_path):
    from tensorboard.compat.proto.summary_pb2 import SummaryMetadata
    from tensorboard.compat.proto.tensor_pb2 import TensorProto

    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name="graph_run_metadata_graph", content=b"1"))
    tensor = TensorProto(dtype=7, string_val=[_run_metadata([4]).SerializeToString()])
    value = Summary.Value(tag="t", metadata=metadata, tensor=tensor)
    _write_events(tmp_path / "events.out.tfevents.8.host",
                  [Event(step=1, wall_time=1.0, summary=Summary(value=[value]))])
    (source,) = discover(tmp_path).graphs
    assert [n.name for n in source.load().node] == ["n0", "n1", "n2", "n3"]


def test_a_traces_graphs_are_named_after_the_trace() -> None:
    """The biggest graph takes the tag's name, graphs a tenth as big or more follow it
    numbered, the small ones fold into one scope numbered in trace order so they sort in it;
    a trace without graphs merges into an empty graph (refused later as holding no ops)."""
    assert graph_scopes([3, 229, 28, 3], "train_step") == [
        "train_step_other/graph_1", "train_step", "train_step_2", "train_step_other/graph_4"]
    named = graph_scopes([1] * 11 + [50], "my step!")
    assert named[-1] == "my_step" and named[:2] == ["my_step_other/graph_01",
                                                   "my_step_other/graph_02"]
    assert named[:-1] == sorted(named[:-1])
    assert graph_scopes([5, 5], "") == ["graph", "graph_2"]
    assert graph_scopes([], "t") == []
    assert len(merge_graphs([]).node) == 0
