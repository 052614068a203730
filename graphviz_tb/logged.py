"""Graphs and run metadata that TensorBoard holds, handed over as bytes rather than as files.

A TensorBoard plugin never sees the event files: TensorBoard's data provider serves what they
logged as *blob sequences*, one per run, plugin name and tag, one blob per step.  The graphs
live under five plugin names (the ones TensorBoard's own Graphs dashboard reads), each holding
the same bytes an event file holds in one place:

* ``graphs``, tag ``__run_graph__``: ``Event.graph_def`` (TF1's ``FileWriter``, PyTorch's
  ``add_graph``, ``tf.summary.graph``), a serialized GraphDef;
* ``graph_run_metadata_graph`` and ``graph_run_metadata``: ``tf.summary.trace_export``, a
  RunMetadata whose function graphs are the traced calls (the second with step stats too);
* ``graph_tagged_run_metadata``: ``Event.tagged_run_metadata`` (TF1's ``add_run_metadata``), a
  RunMetadata with partition or function graphs, and step stats;
* ``graph_keras_model``: Keras' TensorBoard callback, the model config as JSON.

:class:`Logged` wraps such blobs so that ``graphviz_tb.load`` reads them as it reads a logdir
(:mod:`graphviz_tb.read.blobs`).  This module is plain data, imported by the TensorBoard plugin
when TensorBoard starts, so it imports nothing but the standard library.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["GRAPHS", "GRAPH_PLUGINS", "KERAS_MODEL", "RUN_GRAPH", "TAGGED_RUN_METADATA",
           "TRACES", "Blob", "Logged"]

GRAPHS = "graphs"
#: The one tag of the ``graphs`` plugin: the run's GraphDef.
RUN_GRAPH = "__run_graph__"
#: ``trace_export``'s summaries: without step stats, then with them.
TRACES = ("graph_run_metadata_graph", "graph_run_metadata")
TAGGED_RUN_METADATA = "graph_tagged_run_metadata"
KERAS_MODEL = "graph_keras_model"
#: Every plugin name under which a graph or run metadata is logged.
GRAPH_PLUGINS = (GRAPHS, *TRACES, TAGGED_RUN_METADATA, KERAS_MODEL)


@dataclass(frozen=True)
class Blob:
    """One logged value: where it was logged, and how to read its bytes.

    ``read`` is called only when the value is needed (a graph's bytes can be tens of MB), and
    may be called again: each call reads the bytes afresh.
    """

    run: str
    plugin: str
    tag: str
    step: int
    wall_time: float
    read: Callable[[], bytes] = field(repr=False, compare=False)


@dataclass(frozen=True)
class Logged:
    """Blobs to read as one input, as a logdir is read: ``name`` is what messages and titles
    call it (a run's name, say)."""

    name: str
    blobs: tuple[Blob, ...]
