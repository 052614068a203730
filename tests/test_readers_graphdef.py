"""GraphDef and MetaGraphDef files, recognised by content, and the clear errors for bad input."""

from __future__ import annotations

import gzip
import json
import os
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tensorboard.compat.proto.graph_pb2 import GraphDef

from graphviz_tb.errors import GraphvizTbError, InputError, NoGraphError
from graphviz_tb.model.build import build_model
from graphviz_tb.options import LoadOptions
from graphviz_tb.read import discover, select

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00"


def _only(path: str | os.PathLike[str]) -> GraphDef:
    discovery = discover(path)
    assert len(discovery.graphs) == 1
    return select(discovery, LoadOptions()).load()


def _write(tmp_path: Path, name: str, data: bytes | str) -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


@pytest.mark.tensorflow
@pytest.mark.parametrize("key", ["pb", "pbtxt"])
def test_graphdef_file_has_every_op_tensorflow_wrote(reader_tf1, key):
    made = reader_tf1[key]
    discovery = discover(made.path)
    assert discovery.source_kind == "graphdef"
    (source,) = discovery.graphs
    assert source.kind == "op"
    assert source.origin == ("graphdef-text" if key == "pbtxt" else "graphdef")
    graph = source.load()
    assert len(graph.node) == made.nodes
    assert {"hidden/weights", "softmax_linear/logits", "loss"} <= {n.name for n in graph.node}


@pytest.mark.tensorflow
@pytest.mark.parametrize("key", ["meta", "meta_text"])
def test_metagraph_file_gives_its_graph(reader_tf1, key):
    made = reader_tf1[key]
    discovery = discover(made.path)
    assert discovery.source_kind == "metagraph"
    assert discovery.graphs[0].origin == "metagraph"
    assert len(_only(made.path).node) == made.nodes


@pytest.mark.tensorflow
def test_content_beats_the_name(reader_tf1, tmp_path):
    """A MetaGraphDef saved as .pb and a text graph without suffix are still recognised."""
    meta_as_pb = _write(tmp_path, "frozen.pb", reader_tf1["meta"].path.read_bytes())
    assert discover(meta_as_pb).source_kind == "metagraph"
    text_no_suffix = _write(tmp_path, "graph", reader_tf1["pbtxt"].path.read_bytes())
    assert len(_only(text_no_suffix).node) == reader_tf1["pbtxt"].nodes
    binary_as_txt = _write(tmp_path, "graph.pbtxt", reader_tf1["pb"].path.read_bytes())
    assert len(_only(binary_as_txt).node) == reader_tf1["pb"].nodes


def test_text_graph_with_comments_and_crlf(tmp_path):
    text = (
        "# RUN: a lit test header\r\n"
        "node {\r\n  name: \"x\"\r\n  op: \"Placeholder\"\r\n}\r\n"
        "# a comment between nodes\r\n"
        "node { name: \"y\" op: \"Identity\" input: \"x\" }  # trailing comment\r\n"
    )
    graph = _only(_write(tmp_path, "g.pbtxt", text))
    assert [n.name for n in graph.node] == ["x", "y"]
    assert list(graph.node[1].input) == ["x"]


def test_text_parse_error_names_file_line_and_column(tmp_path):
    path = _write(tmp_path, "bad.pbtxt",
                  "# header\nnode {\n  name: \"x\"\n  op: \"Const\"\n  colour: 3\n}\n")
    with pytest.raises(InputError) as error:
        discover(path)
    message = str(error.value)
    assert message.startswith(f"{path}:5:3: ")
    assert "colour" in message and "\n" not in message


def test_empty_file(tmp_path):
    with pytest.raises(NoGraphError, match=r"empty\.pb is empty: it holds no ops"):
        discover(_write(tmp_path, "empty.pb", b""))


def test_graph_without_ops(tmp_path):
    with pytest.raises(NoGraphError, match="holds no ops"):
        discover(_write(tmp_path, "versions.pbtxt", "versions { producer: 1 }\n"))
    with pytest.raises(NoGraphError, match="holds no ops"):
        discover(_write(tmp_path, "versions.pb", GraphDef(versions={"producer": 1})
                        .SerializeToString()))


def test_png_renamed_pb(tmp_path):
    path = _write(tmp_path, "model.pb", PNG)
    with pytest.raises(InputError, match=r"model\.pb is a PNG image, not a TensorFlow graph"):
        discover(path)


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("photo.pb", b"\xff\xd8\xff\xe0\x00\x10JFIF", "is a JPEG image"),
        ("graph.pb.gz", gzip.compress(b"node {}"), "gzip-compressed; decompress it first"),
        ("notes.md", "just some notes\n", "is a text file but not a TensorFlow graph"),
        # Prose in a .txt file: no protobuf field to report, so no protobuf message either.
        ("notes.txt", "hello world\nthis is a note\n",
         r"notes\.txt is a text file but not a TensorFlow graph"),
        ("page.pb", "<html><body>hi</body></html>", "is XML or HTML"),
        ("data.json", json.dumps({"a": 1}), "is JSON but not a Keras model config"),
    ],
)
def test_common_non_graph_files(tmp_path, name, data, expected):
    with pytest.raises(InputError, match=expected):
        discover(_write(tmp_path, name, data))


def _load_error(path: Path) -> str:
    with pytest.raises(InputError) as raised:
        select(discover(path)).load()
    return str(raised.value)


def test_a_pbtxt_that_is_not_a_graph_says_so_in_our_words(tmp_path):
    """A ``.pbtxt`` of prose (TensorFlow's own ``graph-malformed.pbtxt`` is one) said
    ``Message type "GraphDef" has no field named "this"``, the protobuf parser's text; it
    says it is not a graph, where, and how a graph starts."""
    path = _write(tmp_path, "graph.pbtxt", "# a comment\n\nthis is not a valid graph def\n")
    message = _load_error(path)
    assert "Message type" not in message and "has no field named" not in message, message
    assert message.startswith(f"{path}:3:1: not a GraphDef in text format"), message
    assert "'this'" in message and "'node {'" in message, message


def test_a_misspelt_field_names_the_line_and_the_field_meant(tmp_path):
    """A typo deep in a text graph is reported at its line and column, with the field that
    was meant, not in the protobuf parser's words."""
    path = _write(tmp_path, "graph.pbtxt",
                  'node {\n  name: "a"\n  op: "Const"\n  attr { key: "x" valu {} }\n}\n')
    message = _load_error(path)
    assert "Message type" not in message, message
    assert message.startswith(f"{path}:4:19: "), message
    assert "'valu'" in message and "did you mean 'value'?" in message, message


def test_zip_that_is_not_keras(tmp_path):
    path = tmp_path / "bundle.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("readme.txt", "hello")
    with pytest.raises(InputError, match="zip archive but not a Keras model"):
        discover(path)


def test_random_bytes(tmp_path):
    data = bytes(range(256)) * 8 + os.urandom(512)
    with pytest.raises(InputError, match="not a TensorFlow GraphDef, MetaGraphDef or SavedModel"):
        discover(_write(tmp_path, "noise.pb", data))


@pytest.mark.tensorflow
def test_cut_short_protobuf(reader_tf1, tmp_path):
    data = reader_tf1["pb"].path.read_bytes()
    path = _write(tmp_path, "cut.pb", data[: len(data) // 2 + 7])
    with pytest.raises(InputError, match="cut short"):
        discover(path)


def test_missing_path(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        discover(tmp_path / "nope.pb")


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=2048), st.sampled_from(["x.pb", "x.pbtxt", "x.meta", "saved_model.pb",
                                                  "x.json", "x"]))
def test_any_bytes_give_a_graph_or_a_clear_error(tmp_path, data, name):
    """Whatever the bytes, discovery answers with graphs or one of our errors, never a crash;
    so does building a model from each graph's head (what a render reads)."""
    path = _write(tmp_path, name, data)
    try:
        discovery = discover(path)
    except GraphvizTbError as error:
        assert "\n" not in str(error)
        return
    for source in discovery.graphs:
        for read in (source.head, source.load):
            if read is None:
                continue
            try:
                build_model(read(), source=source, where=name)
            except GraphvizTbError as error:
                assert "\n" not in str(error)


def test_directory_without_events_points_at_the_saved_model(tmp_path):
    (tmp_path / "export" / "1").mkdir(parents=True)
    (tmp_path / "export" / "1" / "saved_model.pb").write_bytes(b"")
    with pytest.raises(NoGraphError, match=r"it holds a SavedModel: pass .*export/1$"):
        discover(tmp_path)


def test_text_graph_with_byte_order_mark(tmp_path):
    path = _write(tmp_path, "bom.pbtxt", b"\xef\xbb\xbf" + b'node { name: "a" op: "NoOp" }\n')
    assert [n.name for n in _only(path).node] == ["a"]


@pytest.mark.tensorflow
def test_checkpoint_files_point_at_the_meta_graph(tmp_path, tf):
    prefix = tf.train.Checkpoint(v=tf.Variable(1.0)).write(str(tmp_path / "ckpt"))
    with pytest.raises(InputError, match="is a TensorFlow checkpoint index"):
        discover(prefix + ".index")
    state = _write(tmp_path, "checkpoint", 'model_checkpoint_path: "ckpt"\n')
    with pytest.raises(InputError, match="is a TensorFlow checkpoint state file"):
        discover(state)


def _node_bytes(nodes: list[bytes]) -> bytes:
    """A binary GraphDef of serialized NodeDefs (each under 128 bytes), written field by field so
    that a node may hold bytes protobuf itself would never write."""
    return b"".join(b"\x0a" + bytes([len(raw)]) + raw for raw in nodes)


def test_an_op_whose_attributes_do_not_decode_is_named_in_one_line(tmp_path):
    """The nodes' attributes are read as the model keeps them, not by a whole parse first: a
    NodeDef whose attribute bytes are corrupt (here a map entry of an invalid wire type) is
    refused in one line naming the op, never by a traceback from a later stage."""
    from tensorboard.compat.proto.node_def_pb2 import NodeDef

    from graphviz_tb import api

    x = NodeDef(name="x", op="Placeholder").SerializeToString()
    y = NodeDef(name="y", op="Identity", input=["x"]).SerializeToString() + b"\x2a\x03\xff\xff\xff"
    path = _write(tmp_path, "corrupt_attr.pb", _node_bytes([x, y]))
    with pytest.raises(InputError) as caught:
        api.load(path)
    message = str(caught.value)
    assert "\n" not in message
    assert "corrupt_attr.pb" in message and "'y'" in message and "do not decode" in message


def test_a_binary_graph_is_parsed_once_to_detect_and_read_it(tmp_path):
    """Detection's trial parse of a binary GraphDef without a library is the graph's head, which
    the model is then built from: the file is not parsed whole and then again."""
    from graphviz_tb.read import graphdef
    from graphviz_tb.read.detect import detect

    graph = GraphDef()
    graph.node.add(name="x", op="Placeholder")
    graph.node.add(name="y", op="Identity", input=["x"])
    path = _write(tmp_path, "g.pb", graph.SerializeToString())
    found = detect(path)
    assert found.format == "graphdef"
    assert found.message is not None and found.message.DESCRIPTOR.full_name == graphdef.HEAD_MESSAGE
    source = graphdef.discover(path, text=False, graph=found.message).graphs[0]
    assert source.head is not None and source.head() is found.message
    assert [n.name for n in source.head().node] == ["x", "y"]  # later heads are parsed anew
