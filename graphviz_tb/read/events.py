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
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import TypeVar

from google.protobuf.message import DecodeError
from tensorboard.compat.proto.event_pb2 import Event

from ..errors import InputError, NoGraphError, SelectionError
from ..logged import KERAS_MODEL, TRACES
from .base import CostSource, Discovery, GraphSource
from .payloads import Payload, sources
from .profile import discover_captures
from .savedmodel import SAVED_MODEL_FILES
from .tfrecord import iter_records, read_record_at

__all__ = ["discover_file", "discover_logdir", "event_files", "unique_names"]

#: The summaries that hold a graph or costs, by plugin name, and the kind of value each holds.
_KINDS = {**dict.fromkeys(TRACES, "trace"), KERAS_MODEL: "keras"}
# Cheap filters that skip the bulk of a log (scalars, histograms) before building anything.
_GRAPH_FIELDS = frozenset({"graph_def", "meta_graph_def", "tagged_run_metadata"})
_GRAPH_PLUGIN_PREFIX = b"graph_"  # every plugin above starts with it


@dataclass(frozen=True)
class _Place:
    """Where one logged value sits in an event file, so ``load()`` can fetch it again."""

    path: str
    offset: int
    what: str  # "graph_def", "meta_graph_def", "tagged_run_metadata" or "summary"
    value: int = 0  # index of the summary value


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
    graphs: list[GraphSource] = []
    costs: list[CostSource] = []
    for file in files:
        for found in _scan(file, runs[file]):
            if isinstance(found, GraphSource):
                graphs.append(found)
            else:
                costs.append(found)
    if not graphs:
        raise NoGraphError(
            f"{name}: its {len(files)} event file(s) hold no graph, only other summaries; log one "
            "with tf.summary.trace_export, Keras' TensorBoard(write_graph=True) callback or "
            "FileWriter.add_graph"
        )
    costs.extend(discover_captures(root, {file.parent: runs[file] for file in files}))
    return Discovery(path=name, source_kind="logdir", graphs=unique_names(graphs),
                     warnings=tuple(problems), costs=unique_names(costs))


def discover_file(path: str | os.PathLike[str]) -> Discovery:
    """List the graphs and run metadata of one event file (its run is ``"."``)."""
    name = os.fspath(path)
    found = list(_scan(Path(path), "."))
    graphs = [s for s in found if isinstance(s, GraphSource)]
    if not graphs:
        raise NoGraphError(f"{name}: the event file holds no graph, only other summaries")
    return Discovery(path=name, source_kind="events", graphs=unique_names(graphs),
                     costs=unique_names([s for s in found if isinstance(s, CostSource)]))


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
    def payload(kind: str, here: _Place, tag: str = "") -> Payload:
        return Payload(kind, partial(_payload_bytes, here), f"{here.path}: record at byte "
                       f"{here.offset}", run, tag, event.step, event.wall_time)

    if place.what in ("graph_def", "meta_graph_def"):
        yield from sources(payload(place.what, place))
    elif place.what == "tagged_run_metadata":
        tagged = event.tagged_run_metadata
        yield from sources(payload("tagged_run_metadata", place, tagged.tag),
                           tagged.run_metadata)
    else:
        for index, value in enumerate(event.summary.value):
            kind = _KINDS.get(value.metadata.plugin_data.plugin_name)
            if kind is not None and value.tensor.string_val:
                yield from sources(payload(kind, replace(place, value=index), value.tag),
                                   value.tensor.string_val[0])


S = TypeVar("S", GraphSource, CostSource)


def unique_names(sources: list[S]) -> tuple[S, ...]:
    """Make names unique: add the wall time, then a counter, to the names that repeat (in
    place, and as a tuple)."""
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


def _payload_bytes(place: _Place) -> bytes:
    """The bytes of the value at ``place``, read again from its record."""
    event = Event.FromString(read_record_at(place.path, place.offset))
    if place.what == "graph_def":
        return event.graph_def
    if place.what == "meta_graph_def":
        return event.meta_graph_def
    if place.what == "tagged_run_metadata":
        return event.tagged_run_metadata.run_metadata
    return event.summary.value[place.value].tensor.string_val[0]
