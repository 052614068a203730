"""Frozen or exported GraphDefs: binary ``.pb`` and protobuf text ``.pbtxt`` files.

This is the simplest source: one file, one op graph, no signature.  Text files may carry ``#``
comments anywhere and CRLF line endings (TensorFlow's own test graphs do); a parse error is
reported as ``FILE:LINE:COL: message``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import Message
from tensorboard.compat.proto import function_pb2, versions_pb2
from tensorboard.compat.proto.graph_pb2 import GraphDef

from ._proto import check_has_ops, parse_binary, parse_text, read_bytes
from .base import Discovery, GraphSource

__all__ = ["HEAD_MESSAGE", "as_graph_def", "discover", "graph_head_class", "parse", "parse_head"]

#: The full name of a graph head's message (see :func:`parse_head`).
HEAD_MESSAGE = "graphviz_tb.GraphHead"


def parse(path: str | os.PathLike[str], *, text: bool) -> GraphDef:
    """Read and parse a GraphDef file, raising InputError / NoGraphError naming it."""
    name = os.fspath(path)
    data = read_bytes(path)
    graph = parse_text(GraphDef, data, name) if text else parse_binary(GraphDef, data, name,
                                                                       "GraphDef")
    return check_has_ops(graph, name)


def graph_head_class() -> type[Message]:
    """A message read from a GraphDef's bytes whose nodes have only ``name``, ``op``,
    ``input`` and ``device`` (see :func:`parse_head`), made once in protobuf's default pool:
    its library and versions are TensorBoard's own classes."""
    pool = descriptor_pool.Default()
    try:
        found = pool.FindMessageTypeByName(HEAD_MESSAGE)
    except KeyError:
        field = descriptor_pb2.FieldDescriptorProto
        proto = descriptor_pb2.FileDescriptorProto(
            name="graphviz_tb/graph_head.proto", package="graphviz_tb", syntax="proto3",
            dependency=[function_pb2.DESCRIPTOR.name, versions_pb2.DESCRIPTOR.name])
        node = proto.message_type.add(name="NodeHead")
        for number, field_name in enumerate(("name", "op", "input", "device"), start=1):
            node.field.add(name=field_name, number=number, type=field.TYPE_STRING,
                           label=field.LABEL_REPEATED if field_name == "input"
                           else field.LABEL_OPTIONAL)
        head = proto.message_type.add(name="GraphHead")
        for number, field_name, type_name in ((1, "node", ".graphviz_tb.NodeHead"),
                                              (2, "library", ".tensorboard.FunctionDefLibrary"),
                                              (4, "versions", ".tensorboard.VersionDef")):
            head.field.add(name=field_name, number=number, type=field.TYPE_MESSAGE,
                           type_name=type_name, label=field.LABEL_REPEATED if number == 1
                           else field.LABEL_OPTIONAL)
        pool.AddSerializedFile(proto.SerializeToString())
        found = pool.FindMessageTypeByName(HEAD_MESSAGE)
    return message_factory.GetMessageClass(found)


def parse_head(data: bytes, name: str) -> Any:
    """A binary GraphDef without a function library, read as what building its model needs:
    each node's name, op type, inputs and device; every other field is kept as the bytes it
    was (protobuf keeps unknown fields), so a node's ``SerializeToString()`` is its NodeDef.
    Those other fields are not decoded here: the model checks the NodeDefs it keeps.

    Parsed whole, a GraphDef's attributes make most of its memory, about three times the
    file's size, and the model keeps each op's NodeDef serialized anyway
    (:func:`graphviz_tb.model.graph.node_def_of`): this takes about half as much memory and
    time.  A graph with a library is read whole, as its functions' bodies are opened.

    A head is read for one model, whose build changes it: the nodes it keeps bare lose their
    names and inputs (see :func:`graphviz_tb.model.builder.start_model`).
    """
    head = parse_binary(graph_head_class(), data, name, "GraphDef")
    return parse_binary(GraphDef, data, name, "GraphDef") if head.HasField("library") \
        else head


def as_graph_def(graph: Any, where: str) -> GraphDef:
    """A GraphDef message of ``graph``: itself, or a whole parse of a :func:`parse_head`, whose
    other fields are decoded only now (an InputError naming ``where`` if they do not)."""
    return graph if isinstance(graph, GraphDef) else parse_binary(
        GraphDef, graph.SerializeToString(), where, "GraphDef")


def discover(path: str | os.PathLike[str], *, text: bool, graph: Any = None) -> Discovery:
    """List the one graph of a GraphDef file.

    ``graph`` is what content detection parsed to recognise the file: a GraphDef, or for a
    binary one without a library its head (:func:`parse_head`), which the model is built from
    (the file is not parsed again).  Without it the file is parsed here, so errors surface at
    discovery rather than later at render time.
    """
    name = os.fspath(path)
    parsed = check_has_ops(graph, name) if graph is not None else parse(path, text=text)
    # A parsed GraphDef is several times the file's size, and the model keeps its source:
    # a text graph is handed over once and parsed again on a later load; a binary one is not
    # kept at all, as a model is built from its head (parse_head), detection's if it read one.
    held = [parsed] if text else []
    heads = [parsed] if not isinstance(parsed, GraphDef) else []
    del parsed

    def load() -> GraphDef:
        return held.pop() if held else parse(path, text=text)

    def head() -> Any:
        if heads:
            return heads.pop()
        return check_has_ops(parse_head(read_bytes(path), name), name)

    source = GraphSource(
        name=Path(name).name,
        kind="op",
        origin="graphdef-text" if text else "graphdef",
        load=load,
        head=None if text else head,
    )
    return Discovery(path=name, source_kind="graphdef", graphs=(source,))
