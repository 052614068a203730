"""Frozen or exported GraphDefs: binary ``.pb`` and protobuf text ``.pbtxt`` files.

This is the simplest source: one file, one op graph, no signature.  Text files may carry ``#``
comments anywhere and CRLF line endings (TensorFlow's own test graphs do); a parse error is
reported as ``FILE:LINE:COL: message``.
"""

from __future__ import annotations

import os
from pathlib import Path

from tensorboard.compat.proto.graph_pb2 import GraphDef

from ._proto import check_has_ops, parse_binary, parse_text, read_bytes
from .base import Discovery, GraphSource

__all__ = ["discover", "parse"]


def parse(path: str | os.PathLike[str], *, text: bool) -> GraphDef:
    """Read and parse a GraphDef file, raising InputError / NoGraphError naming it."""
    name = os.fspath(path)
    data = read_bytes(path)
    graph = parse_text(GraphDef, data, name) if text else parse_binary(GraphDef, data, name,
                                                                       "GraphDef")
    return check_has_ops(graph, name)


def discover(
    path: str | os.PathLike[str], *, text: bool, graph: GraphDef | None = None
) -> Discovery:
    """List the one graph of a GraphDef file.

    ``graph`` is the already parsed GraphDef when content detection had to parse the file to
    recognise it; otherwise the file is parsed here, so errors surface at discovery rather than
    later at render time.
    """
    name = os.fspath(path)
    held = [check_has_ops(graph, name) if graph is not None else parse(path, text=text)]

    def load() -> GraphDef:
        # The parsed graph is handed over once, and a later load parses the file again: the
        # model keeps its source, and a parsed GraphDef is several times the file's size.
        return held.pop() if held else parse(path, text=text)

    source = GraphSource(
        name=Path(name).name,
        kind="op",
        origin="graphdef-text" if text else "graphdef",
        load=load,
    )
    return Discovery(path=name, source_kind="graphdef", graphs=(source,))
