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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tensorboard.compat.proto.graph_pb2 import GraphDef

__all__ = ["CostSource", "Discovery", "GraphSource", "NodeRun", "OutputStat", "StepRecord",
           "TensorSpec"]


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
    head:
        When set, returns what building the graph's model needs, in less memory than
        ``load``: a GraphDef, or a message of the same bytes whose top-level nodes carry only
        their name, op, inputs and device (``read.graphdef.parse_head``; ``as_graph_def`` makes
        it whole).
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
    head: Callable[[], Any] | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class OutputStat:
    """One output of an op as it ran: slot, dtype, shape and the bytes requested for it."""

    slot: int
    dtype: str | None
    shape: tuple[int, ...] | None
    bytes: int


@dataclass(frozen=True)
class NodeRun:
    """What one op cost when it ran, as recorded: a ``NodeExecStats`` of a RunMetadata's step
    stats (one per execution), or one row of a profiler capture's op statistics (all of an
    op's executions summed).

    Times are in nanoseconds.  ``start`` is absolute (the step stats' clock), None when the
    record has no time of its own (a profiler row).  ``wall`` is the op's whole time, from its
    scheduling to its outputs' release (``all_end_rel``), the time TensorBoard colours by;
    ``op`` is the kernel's own part of it (``op_end_rel - op_start_rel``).  ``own`` is the time
    spent in the op itself apart from what it called, when the recorder knows it (the
    profiler's self time); step stats leave it None.  Bytes: ``allocated`` sums every
    allocator's ``total_bytes`` (TensorBoard's memory), ``peak`` is the largest peak.
    """

    name: str
    device: str = ""
    start: int | None = None
    wall: int = 0
    op: int = 0
    own: int | None = None
    runs: int = 1
    allocated: int = 0
    peak: int = 0
    persistent: int = 0
    temporary: int = 0
    allocators: tuple[tuple[str, int, int], ...] = ()  # (name, total bytes, peak bytes)
    outputs: tuple[OutputStat, ...] = ()


@dataclass(frozen=True)
class StepRecord:
    """The cost records of one step (one ``Session.run`` traced, or one profiler capture).

    ``memory`` says whether the records carry memory (step stats do; profiler op statistics
    have timings only).
    """

    runs: tuple[NodeRun, ...]
    memory: bool = True


@dataclass(frozen=True)
class CostSource:
    """One set of recorded costs found in an input, loadable on demand.

    Attributes
    ----------
    name:
        A label unique within the discovery (``"train · step 1 · step_1"``).
    origin:
        ``event:run_metadata`` (``FileWriter.add_run_metadata``), ``event:trace``
        (``tf.summary.trace_export`` with step stats), ``runmetadata`` / ``stepstats`` (a
        standalone file) or ``profile`` (a TF2 profiler capture, ``plugins/profile/*``).
    run, tag, step, wall_time:
        Where in a logdir it came from; ``tag`` is what ``--run-metadata`` picks by.
    """

    name: str
    origin: str
    load: Callable[[], StepRecord] = field(repr=False, compare=False)
    run: str = ""
    tag: str = ""
    step: int | None = None
    wall_time: float | None = None


@dataclass(frozen=True)
class Discovery:
    """Everything one input holds: its kind, the graphs found, the recorded costs (run
    metadata, profiler captures) and any warnings."""

    path: str
    source_kind: str
    graphs: tuple[GraphSource, ...]
    warnings: tuple[str, ...] = ()
    costs: tuple[CostSource, ...] = ()
