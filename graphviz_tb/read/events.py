"""TensorBoard event files and logdirs: every graph that TensorFlow, Keras or PyTorch logged.

A logdir is searched recursively for files whose name contains ``tfevents``; a run is a file's
directory relative to the logdir (``"."`` for the logdir itself), as in TensorBoard.  Graphs hide
in several places of an ``Event``; each origin says which:

* ``Event.graph_def``, from TF1's ``FileWriter.add_graph`` and PyTorch's ``add_graph``:
  ``event:graph_def``;
* ``Event.meta_graph_def``, from TF1's ``add_meta_graph`` (and ``FileWriter(graph=...)``):
  ``event:meta_graph_def``;
* ``Event.tagged_run_metadata``, from TF1's ``add_run_metadata``: one ``event:function_graph``
  per function graph, else one ``event:run_metadata`` per partition graph (PyTorch's holds step
  stats only and is skipped);
* summaries of the ``graph_run_metadata_graph`` / ``graph_run_metadata`` plugins, from TF2's
  ``tf.summary.trace_export``: ``event:trace``;
* summaries of the ``graph_keras_model`` plugin (tag ``keras``), from Keras' TensorBoard
  callback: ``event:keras``, a conceptual graph.

Costs are found beside the graphs: a ``tagged_run_metadata`` or ``graph_run_metadata`` summary
that holds step stats is also one set of costs (``event:run_metadata``, ``event:trace``; see
:mod:`.runmeta`), and each TF2 profiler session under a run's ``plugins/profile/`` is another
(``profile``; see :mod:`.profile`).

Every record is read and CRC-checked during discovery, but graph bytes are not parsed: a source
remembers its file, record offset and place in the event, and ``load()`` re-reads that record.
A trace holds one function graph per traced call, including one per eager op run while tracing
(``_EagerConst``...); like TensorBoard we merge them into one graph, each under ``graph_<i>/``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TypeVar

from google.protobuf.message import DecodeError
from tensorboard.compat.proto.config_pb2 import RunMetadata
from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.meta_graph_pb2 import MetaGraphDef

from ..errors import InputError, NoGraphError, SelectionError
from ._proto import check_has_ops, field_counts
from .base import CostSource, Discovery, GraphSource, StepRecord
from .keras_config import ConfigError, to_graph_def
from .profile import discover_captures
from .runmeta import has_step_stats, step_record
from .savedmodel import SAVED_MODEL_FILES
from .tfrecord import iter_records, read_record_at

__all__ = ["discover_file", "discover_logdir", "event_files", "merge_graphs"]

_TRACE_PLUGINS = ("graph_run_metadata_graph", "graph_run_metadata")
_KERAS_PLUGIN = "graph_keras_model"
# Cheap filters that skip the bulk of a log (scalars, histograms) before building anything.
_GRAPH_FIELDS = frozenset({"graph_def", "meta_graph_def", "tagged_run_metadata"})
_GRAPH_PLUGIN_PREFIX = b"graph_"  # every plugin above starts with it
# RunMetadata field numbers (config.proto): graphs are counted without parsing them.
_PARTITION_GRAPHS, _FUNCTION_GRAPHS = 3, 4


@dataclass(frozen=True)
class _Place:
    """Where one graph sits in an event file, so ``load()`` can fetch it again."""

    path: str
    offset: int
    what: str  # "graph_def", "meta_graph_def", "tagged_run_metadata" or "summary"
    value: int = 0  # index of the summary value
    graph: int | None = None  # index of the function/partition graph; None = merge them all


def event_files(logdir: Path) -> tuple[list[Path], list[str]]:
    """All event files under ``logdir``, sorted by run then name (names start with a time),
    and a warning for each directory that could not be listed."""
    found: list[Path] = []
    problems: list[str] = []

    def skipped(error: OSError) -> None:
        problems.append(f"skipped {error.filename}: {error.strerror or error}")

    for root, dirs, files in os.walk(logdir, onerror=skipped):
        dirs.sort()
        found.extend(Path(root) / name for name in sorted(files) if "tfevents" in name)
    return found, problems


def discover_logdir(logdir: str | os.PathLike[str], run: str | None = None) -> Discovery:
    """List every graph in every event file under ``logdir``, or only in run ``run``.

    Raises
    ------
    NoGraphError
        No event file, or event files without any graph.
    CorruptRecordError
        A record fails its CRC check or a file is cut short.
    SelectionError
        ``run`` is not a run of the logdir.
    """
    root = Path(logdir)
    name = os.fspath(logdir)
    files, problems = event_files(root)
    if not files:
        raise NoGraphError(f"{name} holds no TensorBoard event files (no file named "
                           f"*tfevents*){_elsewhere_hint(root)}")
    runs = {file: file.parent.relative_to(root).as_posix() for file in files}
    if run is not None:
        files = [file for file in files if runs[file] == run]
        if not files:
            raise SelectionError(f"no run {run!r} in {name}; runs: "
                                 f"{', '.join(sorted(set(runs.values())))}")
    sources: list[GraphSource] = []
    costs: list[CostSource] = []
    for file in files:
        for found in _scan(file, runs[file]):
            if isinstance(found, GraphSource):
                sources.append(found)
            else:
                costs.append(found)
    if not sources:
        raise NoGraphError(
            f"{name}: its {len(files)} event file(s) hold no graph, only other summaries; log one "
            "with tf.summary.trace_export, Keras' TensorBoard(write_graph=True) callback or "
            "FileWriter.add_graph"
        )
    costs.extend(discover_captures(root, {file.parent: runs[file] for file in files}))
    return Discovery(path=name, source_kind="logdir", graphs=_unique(sources),
                     warnings=tuple(problems), costs=_unique(costs))


def discover_file(path: str | os.PathLike[str]) -> Discovery:
    """List the graphs and run metadata of one event file (its run is ``"."``)."""
    name = os.fspath(path)
    found = list(_scan(Path(path), "."))
    sources = [s for s in found if isinstance(s, GraphSource)]
    if not sources:
        raise NoGraphError(f"{name}: the event file holds no graph, only other summaries")
    return Discovery(path=name, source_kind="events", graphs=_unique(sources),
                     costs=_unique([s for s in found if isinstance(s, CostSource)]))


def _elsewhere_hint(root: Path) -> str:
    """Point at a SavedModel or graph file inside a directory that has no event file."""
    for file_name in SAVED_MODEL_FILES:
        for found in sorted(root.rglob(file_name))[:1]:
            return f"; it holds a SavedModel: pass {found.parent}"
    for pattern in ("*.pb", "*.pbtxt", "*.meta", "*.keras", "*.h5"):
        for found in sorted(root.rglob(pattern))[:1]:
            return f"; did you mean {found}?"
    return ""


def _scan(path: Path, run: str) -> Iterator[GraphSource | CostSource]:
    name = os.fspath(path)
    for offset, data in iter_records(path):
        try:
            event = Event.FromString(data)
        except DecodeError:
            raise InputError(f"{name}: record at byte {offset} is not a TensorBoard event "
                             "(is this a TFRecord file of another kind?)") from None
        what = event.WhichOneof("what")
        if what in _GRAPH_FIELDS or (what == "summary" and _GRAPH_PLUGIN_PREFIX in data):
            yield from _sources_in(event, _Place(name, offset, what), run)


def _sources_in(event: Event, place: _Place, run: str) -> Iterator[GraphSource | CostSource]:
    """The graphs and costs of one event that holds some (checked by the caller, for speed)."""
    step, wall_time = event.step, event.wall_time
    base = f"{run} · step {step} · "
    if place.what in ("graph_def", "meta_graph_def"):
        yield GraphSource(name=base + place.what, kind="op", origin=f"event:{place.what}",
                          load=_loader(place), run=run, step=step, wall_time=wall_time)
    elif place.what == "tagged_run_metadata":
        tag = event.tagged_run_metadata.tag
        counts = _graph_counts(event.tagged_run_metadata.run_metadata, place)
        functions, partitions = counts.get(_FUNCTION_GRAPHS, 0), counts.get(_PARTITION_GRAPHS, 0)
        label, origin, count = ("function graph", "event:function_graph", functions) if functions \
            else ("partition graph", "event:run_metadata", partitions)
        for index in range(count):
            yield GraphSource(
                name=f"{base}{tag} ({label} {index + 1}/{count})", kind="op", origin=origin,
                load=_loader(replace(place, graph=index)),
                run=run, tag=tag, step=step, wall_time=wall_time,
            )
        if has_step_stats(counts):
            yield CostSource(name=base + tag, origin="event:run_metadata",
                             load=_cost_loader(place), run=run, tag=tag, step=step,
                             wall_time=wall_time)
    else:
        for index, value in enumerate(event.summary.value):
            plugin = value.metadata.plugin_data.plugin_name
            here = replace(place, value=index)
            if plugin == _KERAS_PLUGIN:
                yield GraphSource(name=f"{base}{value.tag} (conceptual)", kind="conceptual",
                                  origin="event:keras", load=_loader(here),
                                  run=run, tag=value.tag, step=step, wall_time=wall_time)
            elif plugin in _TRACE_PLUGINS and value.tensor.string_val:
                counts = _graph_counts(value.tensor.string_val[0], place)
                if counts.get(_FUNCTION_GRAPHS) or counts.get(_PARTITION_GRAPHS):
                    yield GraphSource(name=f"{base}{value.tag} (trace)", kind="op",
                                      origin="event:trace", load=_loader(here),
                                      run=run, tag=value.tag, step=step, wall_time=wall_time)
                if has_step_stats(counts):
                    yield CostSource(name=base + value.tag, origin="event:trace",
                                     load=_cost_loader(here), run=run, tag=value.tag,
                                     step=step, wall_time=wall_time)


def _graph_counts(run_metadata: bytes, place: _Place) -> dict[int, int]:
    try:
        return field_counts(run_metadata)
    except ValueError:
        raise InputError(f"{place.path}: record at byte {place.offset} holds a malformed "
                         "RunMetadata") from None


S = TypeVar("S", GraphSource, CostSource)


def _unique(sources: list[S]) -> tuple[S, ...]:
    """Make names unique: add the wall time, then a counter, to the names that repeat."""
    for attempt in ("time", "counter"):
        counts: dict[str, int] = {}
        for source in sources:
            counts[source.name] = counts.get(source.name, 0) + 1
        seen: dict[str, int] = {}
        for index, source in enumerate(sources):
            if counts[source.name] < 2:
                continue
            seen[source.name] = seen.get(source.name, 0) + 1
            suffix = (_format_time(source.wall_time) if attempt == "time"
                      else f"#{seen[source.name]}")
            sources[index] = replace(source, name=f"{source.name} · {suffix}")
    return tuple(sources)


def _format_time(wall_time: float | None) -> str:
    if wall_time is None:
        return "no time"
    moment = datetime.fromtimestamp(wall_time, tz=timezone.utc)
    return moment.isoformat(sep=" ", timespec="milliseconds")


def _loader(place: _Place) -> Callable[[], GraphDef]:
    return lambda: _load(place)


def _cost_loader(place: _Place) -> Callable[[], StepRecord]:
    return lambda: _load_costs(place)


def _load_costs(place: _Place) -> StepRecord:
    """The step stats of a run metadata event or summary, read again from its record."""
    event = Event.FromString(read_record_at(place.path, place.offset))
    where = f"{place.path}: record at byte {place.offset}"
    if place.what == "tagged_run_metadata":
        return step_record(event.tagged_run_metadata.run_metadata, where)
    return step_record(event.summary.value[place.value].tensor.string_val[0], where)


def _load(place: _Place) -> GraphDef:
    data = read_record_at(place.path, place.offset)
    where = f"{place.path}: record at byte {place.offset}"
    try:
        event = Event.FromString(data)
        if place.what == "graph_def":
            graph = GraphDef.FromString(event.graph_def)
        elif place.what == "meta_graph_def":
            graph = MetaGraphDef.FromString(event.meta_graph_def).graph_def
        elif place.what == "tagged_run_metadata":
            run_metadata = RunMetadata.FromString(event.tagged_run_metadata.run_metadata)
            graph = _run_metadata_graphs(run_metadata)[place.graph or 0]
        else:
            value = event.summary.value[place.value]
            if value.metadata.plugin_data.plugin_name == _KERAS_PLUGIN:
                return _keras_graph(value.tensor.string_val[0], where)
            graph = merge_graphs(_run_metadata_graphs(
                RunMetadata.FromString(value.tensor.string_val[0])))
    except DecodeError:
        raise InputError(f"{where}: its {place.what} does not decode as a graph") from None
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


def merge_graphs(graphs: list[GraphDef]) -> GraphDef:
    """Merge several graphs into one, each under its own ``graph_<i>/`` scope.

    A trace records one graph per traced call; merged, they draw as one picture with a group
    per call, as TensorBoard shows them.  Functions are shared by name.
    """
    if len(graphs) == 1:
        return graphs[0]
    merged = GraphDef()
    if graphs:
        merged.versions.CopyFrom(graphs[0].versions)
    functions: set[str] = set()
    gradients: set[str] = set()
    for number, graph in enumerate(graphs, start=1):
        prefix = f"graph_{number}/"
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
