"""Graphs handed over as bytes: what TensorBoard's data provider serves (:mod:`graphviz_tb.logged`).

Each blob is the value an event file holds in one place (a GraphDef, a RunMetadata, a Keras
config), so it is read as :mod:`.events` reads that place (:mod:`.payloads`): the same
sources, names and origins, in the order TensorBoard logged them (by run, then time).  No path
is involved; ``load()`` asks the blob for its bytes again.
"""

from __future__ import annotations

from ..errors import NoGraphError
from ..logged import GRAPHS, KERAS_MODEL, RUN_GRAPH, TAGGED_RUN_METADATA, TRACES, Blob, Logged
from .base import CostSource, Discovery, GraphSource
from .events import unique_names
from .payloads import Payload, sources

__all__ = ["discover"]

#: The kind of value each plugin's blobs hold (see :mod:`.payloads`).
_KINDS = {GRAPHS: "graph_def", TAGGED_RUN_METADATA: "tagged_run_metadata",
          KERAS_MODEL: "keras", **dict.fromkeys(TRACES, "trace")}


def discover(logged: Logged) -> Discovery:
    """List the graphs and costs of ``logged``'s blobs.

    Blobs of other plugins, and of the ``graphs`` plugin under another tag than the run's
    graph, are left out.  A RunMetadata blob is read now, to count its graphs.

    Raises
    ------
    NoGraphError
        No blob holds a graph.
    InputError
        A RunMetadata blob is malformed.
    """
    graphs: list[GraphSource] = []
    costs: list[CostSource] = []
    for blob in sorted(logged.blobs, key=lambda b: (b.run, b.wall_time, b.step)):
        kind = _KINDS.get(blob.plugin)
        if kind is None or (blob.plugin == GRAPHS and blob.tag != RUN_GRAPH):
            continue
        payload = Payload(kind, blob.read, _where(blob), blob.run,
                          "" if blob.plugin == GRAPHS else blob.tag, blob.step, blob.wall_time)
        for found in sources(payload):
            if isinstance(found, GraphSource):
                graphs.append(found)
            else:
                costs.append(found)
    if not graphs:
        raise NoGraphError(f"{logged.name}: no graph among its {len(logged.blobs)} logged "
                           "value(s)")
    return Discovery(path=logged.name, source_kind="logged", graphs=unique_names(graphs),
                     costs=unique_names(costs))


def _where(blob: Blob) -> str:
    return f"run {blob.run!r}, {blob.plugin} {blob.tag!r} at step {blob.step}"
