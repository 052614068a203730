"""Real TensorFlow graphs this project did not make (tests/conformance/, see its README).

Each file, unpacked and checked against the SHA-256 of the original, must:

* load, and report in ``info`` the counts a plain protobuf parse gives: top-level ops,
  library functions and the ops inside them (and, with no function library to open, one edge
  per input string);
* render to SVG (well-formed, with a drawn node) and to the HTML viewer, whose data holds
  every op of the model exactly once.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import text_format
from tensorboard.compat.proto import graph_pb2, meta_graph_pb2

import graphviz_tb
from graphviz_tb.write.page import page_data

pytestmark = pytest.mark.dot

HERE = Path(__file__).resolve().parent / "conformance"
MANIFEST = json.loads((HERE / "manifest.json").read_text(encoding="utf-8"))["files"]


def _unpack(entry: dict[str, Any], into: Path) -> Path:
    """The original file, under its own relative path (a SavedModel keeps its name)."""
    data = gzip.decompress((HERE / (entry["file"] + ".gz")).read_bytes())
    assert hashlib.sha256(data).hexdigest() == entry["sha256"]
    path = into / entry["file"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _length_delimited(data: bytes, field: int) -> list[bytes]:
    """The payloads of one length-delimited field of a serialized message (wire format read
    by hand: TensorBoard's protos have no SavedModel, and TensorFlow is not needed for this)."""
    out, i = [], 0

    def varint() -> int:
        nonlocal i
        shift = value = 0
        while True:
            byte = data[i]
            i += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return value

    while i < len(data):
        key = varint()
        number, wire = key >> 3, key & 7
        if wire == 0:
            varint()
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        elif wire == 2:
            length = varint()
            if number == field:
                out.append(data[i:i + length])
            i += length
        else:
            raise ValueError(f"wire type {wire}")
    return out


def _plain_graph(path: Path, kind: str, selected: int) -> graph_pb2.GraphDef:
    """The GraphDef protobuf itself gives, for the graph tbgraph selected."""
    data = path.read_bytes()
    if kind == "SavedModel":
        metas = _length_delimited(data, 2)  # SavedModel.meta_graphs
        return meta_graph_pb2.MetaGraphDef.FromString(metas[selected]).graph_def
    if kind == "MetaGraphDef":
        return meta_graph_pb2.MetaGraphDef.FromString(data).graph_def
    if path.suffix == ".pbtxt":
        return text_format.Parse(data.decode("utf-8"), graph_pb2.GraphDef())
    return graph_pb2.GraphDef.FromString(data)


@pytest.mark.parametrize("entry", MANIFEST, ids=[e["file"] for e in MANIFEST])
def test_real_graph_loads_counts_and_renders(entry: dict[str, Any], tmp_path: Path) -> None:
    path = _unpack(entry, tmp_path)
    graph = graphviz_tb.load(str(path))
    info = graph.info()
    plain = _plain_graph(path, entry["kind"], info["selected"])
    library = plain.library.function
    assert info["nodes"] == len(plain.node)
    assert info["functions"] == len(library)
    assert info["function_nodes"] == sum(len(f.node_def) for f in library)
    if not library:  # every input string is one edge (functions open into more)
        inputs = sum(1 for node in plain.node for text in node.input if text.lstrip("^"))
        assert sum(info["edges"].values()) == inputs

    svg = graph.render(format="svg")
    drawn = [g for g in ET.fromstring(svg.encode("utf-8")).iter("{http://www.w3.org/2000/svg}g")
             if "node" in g.get("class", "").split()]
    assert drawn, "nothing drawn"

    page = graph.render(format="html")
    kinds = page_data(page)["kind"]
    assert sum(1 for k in kinds if k <= 0) == len(graph.model.graph)  # ops: kind <= 0
