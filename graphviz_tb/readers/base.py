"""What every reader returns: the graphs found in one input, each loadable on demand.

A reader (one module per source format, as in Netron) recognises its input and lists the graphs
it holds as :class:`GraphSource` records.  Loading the GraphDef is deferred to ``load()`` so that
``tbgraph info`` on a logdir with many graphs parses only the one selected.

Conceptual graphs (Keras model configs) are converted to a GraphDef too, one NodeDef per layer, so
every later stage sees one data type.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tensorboard.compat.proto.graph_pb2 import GraphDef

__all__ = ["Discovery", "GraphSource", "TensorSpec"]


@dataclass(frozen=True)
class TensorSpec:
    """A named input or output of a signature (SavedModel TensorInfo, function signature).

    ``tensor`` is the graph tensor it binds to (``"x:0"``); ``shape`` uses ``None`` for an
    unknown dimension and is ``None`` itself for an unknown rank.
    """

    name: str
    tensor: str
    dtype: str | None = None
    shape: tuple[int | None, ...] | None = None


@dataclass(frozen=True)
class GraphSource:
    """One graph found in an input.

    Attributes
    ----------
    name:
        A human-readable label, unique within the discovery (``"run1 · step 0 · graph_def"``).
    kind:
        ``"op"`` for an op-level graph, ``"conceptual"`` for a Keras layer graph.
    origin:
        How it was stored: ``graphdef``, ``graphdef-text``, ``metagraph``, ``savedmodel``,
        ``event:graph_def``, ``event:meta_graph_def``, ``event:run_metadata``,
        ``event:function_graph``, ``event:trace``, ``event:keras``, ``keras``, ``live``.
    load:
        Returns the GraphDef (parsing it now if needed).  May raise ``InputError``.
    run, tag, step, wall_time:
        Where in a logdir it came from.
    inputs, outputs:
        Named signature tensors, when the format has them (SavedModel signatures).
    tags:
        The MetaGraphDef tag set (``("serve",)``) of a SavedModel / MetaGraph graph, which
        ``LoadOptions.tags`` selects by.
    """

    name: str
    kind: str
    origin: str
    load: Callable[[], GraphDef] = field(repr=False, compare=False)
    run: str = ""
    tag: str = ""
    step: int | None = None
    wall_time: float | None = None
    inputs: tuple[TensorSpec, ...] = ()
    outputs: tuple[TensorSpec, ...] = ()
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Discovery:
    """Everything one input holds: its kind, the graphs found, and any warnings."""

    path: str
    source_kind: str
    graphs: tuple[GraphSource, ...]
    warnings: tuple[str, ...] = ()
