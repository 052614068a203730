"""What one logged value holds: the graphs and costs in the bytes TensorFlow, Keras and PyTorch
log, whichever way they reach us (a record of an event file, :mod:`.events`, or a blob
TensorBoard's data provider serves, :mod:`.blobs`).

A :class:`Payload` names the kind of value and reads its bytes; :func:`sources` lists what it
holds without parsing any graph (a RunMetadata's graphs are counted from its top-level fields),
and each source's ``load()`` reads the bytes again and parses only then.  The kinds:

* ``graph_def``, ``meta_graph_def``: one op graph;
* ``tagged_run_metadata`` (TF1's ``add_run_metadata``): one graph per function graph, else per
  partition graph (PyTorch's holds step stats only), and its step stats as costs;
* ``trace`` (``tf.summary.trace_export``): the traced calls' graphs merged into one, as
  TensorBoard shows them, and its step stats as costs when it has some;
* ``keras`` (Keras' TensorBoard callback): the conceptual graph, from the model config.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial

from google.protobuf.message import DecodeError
from tensorboard.compat.proto.config_pb2 import RunMetadata
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.meta_graph_pb2 import MetaGraphDef

from ..errors import InputError
from ._proto import check_has_ops, field_counts
from .base import CostSource, GraphSource, StepRecord
from .keras_config import ConfigError, to_graph_def
from .runmeta import has_step_stats, step_record

__all__ = ["KINDS", "Payload", "graph_scopes", "merge_graphs", "sources"]

#: The kinds of value that hold a graph or costs.
KINDS = ("graph_def", "meta_graph_def", "tagged_run_metadata", "trace", "keras")
# RunMetadata field numbers (config.proto): graphs are counted without parsing them.
_PARTITION_GRAPHS, _FUNCTION_GRAPHS = 3, 4


@dataclass(frozen=True)
class Payload:
    """One logged value: its kind (one of :data:`KINDS`), where it was logged, how to read its
    bytes again, and ``where``, the place messages name (``FILE: record at byte N``)."""

    kind: str
    read: Callable[[], bytes]
    where: str
    run: str
    tag: str = ""
    step: int = 0
    wall_time: float = 0.0


def sources(payload: Payload, data: bytes | None = None) -> Iterator[GraphSource | CostSource]:
    """The graphs and costs ``payload`` holds.  ``data`` is its bytes when already in hand (a
    RunMetadata is read now to count its graphs; other kinds are not read at all)."""
    p = payload
    base = f"{p.run} · step {p.step} · "
    if p.kind in ("graph_def", "meta_graph_def"):
        yield _source(p, base + p.kind, "op", f"event:{p.kind}", None)
    elif p.kind == "keras":
        yield _source(p, f"{base}{p.tag} (conceptual)", "conceptual", "event:keras", None)
    elif p.kind in ("tagged_run_metadata", "trace"):
        counts = _graph_counts(p.read() if data is None else data, p.where)
        functions, partitions = counts.get(_FUNCTION_GRAPHS, 0), counts.get(_PARTITION_GRAPHS, 0)
        if p.kind == "trace":
            origin = "event:trace"
            if functions or partitions:
                yield _source(p, f"{base}{p.tag} (trace)", "op", origin, None)
        else:
            origin = "event:run_metadata"
            label, graph_origin, count = (
                ("function graph", "event:function_graph", functions) if functions
                else ("partition graph", origin, partitions))
            for index in range(count):
                yield _source(p, f"{base}{p.tag} ({label} {index + 1}/{count})", "op",
                              graph_origin, index)
        if has_step_stats(counts):
            yield CostSource(name=base + p.tag, origin=origin, load=partial(_costs, p),
                             run=p.run, tag=p.tag, step=p.step, wall_time=p.wall_time)


def _source(p: Payload, name: str, kind: str, origin: str, index: int | None) -> GraphSource:
    """The graph of ``p`` (its function or partition graph ``index``, or all of them)."""
    return GraphSource(name=name, kind=kind, origin=origin, load=partial(_graph, p, index),
                       run=p.run, tag=p.tag, step=p.step, wall_time=p.wall_time)


def _graph_counts(run_metadata: bytes, where: str) -> dict[int, int]:
    try:
        return field_counts(run_metadata)
    except ValueError:
        raise InputError(f"{where} holds a malformed RunMetadata") from None


def _costs(payload: Payload) -> StepRecord:
    """The step stats of a run metadata or trace, read again."""
    return step_record(payload.read(), payload.where)


def _graph(payload: Payload, index: int | None) -> GraphDef:
    """The graph of ``payload`` (its function or partition graph ``index``, or all of them
    merged), read again and parsed."""
    data, kind, where = payload.read(), payload.kind, payload.where
    try:
        if kind == "graph_def":
            graph = GraphDef.FromString(data)
        elif kind == "meta_graph_def":
            graph = MetaGraphDef.FromString(data).graph_def
        elif kind == "keras":
            return _keras_graph(data, where)
        else:
            graphs = _run_metadata_graphs(RunMetadata.FromString(data))
            graph = merge_graphs(graphs, payload.tag) if index is None else graphs[index]
    except DecodeError:
        raise InputError(f"{where}: its {kind} does not decode as a graph") from None
    return check_has_ops(graph, where)


def _keras_graph(config: bytes, where: str) -> GraphDef:
    try:
        return to_graph_def(config)
    except ConfigError as exc:
        raise InputError(f"{where}: {exc}") from None


def _run_metadata_graphs(run_metadata: RunMetadata) -> list[GraphDef]:
    """The graphs a RunMetadata holds: one per function graph, else its partition graphs.

    A function graph's pre-optimization graph is the one the user wrote; the post-optimization
    graph stands in when a writer left the former empty.
    """
    if run_metadata.function_graphs:
        return [function.pre_optimization_graph if function.pre_optimization_graph.node
                else function.post_optimization_graph
                for function in run_metadata.function_graphs]
    return list(run_metadata.partition_graphs)


#: A traced graph with fewer ops than this share of the biggest one's is folded (see
#: :func:`merge_graphs`).
SMALL_GRAPH_SHARE = 1 / 10
#: What a name made from a tag may hold: a scope name's characters.
_NOT_SCOPE = re.compile(r"[^A-Za-z0-9_.\-]+")


def graph_scopes(sizes: list[int], tag: str = "") -> list[str]:
    """The scope each of a trace's graphs is merged under, given their sizes in ops.

    A trace records one graph per function the runtime ran while it was on: the traced call,
    and in a process that had made other things first, every eager op run for it (creating
    and checking variables: thousands of one-op graphs).  The biggest graph is the call the
    user traced, named after the trace's ``tag`` (``train_step``); others as big (a tenth
    of it or more) follow as ``tag_2`` ..., and the small ones fold into ``tag_other``, each
    numbered in trace order with zeros in front, so they sort in that order (``graph_0007``).

    >>> graph_scopes([3, 229, 28, 3], "train_step")
    ['train_step_other/graph_1', 'train_step', 'train_step_2', 'train_step_other/graph_4']
    """
    if not sizes:
        return []
    stem = _NOT_SCOPE.sub("_", tag).strip("_") or "graph"
    biggest = max(range(len(sizes)), key=lambda i: (sizes[i], -i))
    width = len(str(len(sizes)))
    names, big = [], 1
    for i, size in enumerate(sizes):
        if i == biggest:
            names.append(stem)
        elif size >= SMALL_GRAPH_SHARE * sizes[biggest]:
            big += 1
            names.append(f"{stem}_{big}")
        else:
            names.append(f"{stem}_other/graph_{i + 1:0{width}d}")
    return names


def merge_graphs(graphs: list[GraphDef], tag: str = "") -> GraphDef:
    """Merge a trace's graphs into one, each under its own scope (see :func:`graph_scopes`).

    Merged, they draw as one picture with a group per traced call, the small graphs of eager
    ops folded into one.  Functions are shared by name.
    """
    if len(graphs) == 1:
        return graphs[0]
    scopes = graph_scopes([len(graph.node) for graph in graphs], tag)
    merged = GraphDef()
    if graphs:
        merged.versions.CopyFrom(graphs[0].versions)
    functions: set[str] = set()
    gradients: set[str] = set()
    for scope, graph in zip(scopes, graphs, strict=True):
        prefix = f"{scope}/"
        for node in graph.node:
            copy = merged.node.add()
            copy.CopyFrom(node)
            copy.name = prefix + node.name
            copy.input[:] = [f"^{prefix}{name[1:]}" if name.startswith("^") else prefix + name
                             for name in node.input]
            if "_class" in copy.attr:  # colocation: "loc:@node"
                locations = copy.attr["_class"].list.s
                locations[:] = [b"loc:@" + prefix.encode() + loc[5:] if loc.startswith(b"loc:@")
                                else loc for loc in locations]
        for function in graph.library.function:
            if function.signature.name not in functions:
                functions.add(function.signature.name)
                merged.library.function.add().CopyFrom(function)
        for gradient in graph.library.gradient:
            if gradient.function_name not in gradients:
                gradients.add(gradient.function_name)
                merged.library.gradient.add().CopyFrom(gradient)
    return merged
