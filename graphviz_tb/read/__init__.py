"""Find the graphs in an input (file, directory or live object) and pick the one to draw.

``discover`` recognises the input by content (:mod:`.detect`) and hands it to the reader for
that format, one module each as in Netron; every reader returns a :class:`Discovery` listing
:class:`GraphSource` records whose GraphDef is parsed only when loaded.  ``select`` applies the
user's ``--run/--tag/--graph/--tags`` choice, or the default: the most recent op graph, a
SavedModel's ``serve`` graph, a Keras file's conceptual graph.

Importing this package never imports TensorFlow; only live objects and tracing a ``.keras``
file's op graph need it.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, cast

from ..errors import InputError, SelectionError
from ..logged import Logged
from ..options import LoadOptions
from . import blobs, events, graphdef, keras, live, metagraph, onnx, profile, runmeta, savedmodel
from .base import CostSource, Discovery, GraphSource, StepRecord, TensorSpec
from .detect import detect
from .keras import LAYER_GRAPH_ONLY
from .keras_step import STEP_ORIGIN

if TYPE_CHECKING:
    from tensorboard.compat.proto.meta_graph_pb2 import MetaGraphDef

__all__ = [
    "LAYER_GRAPH_ONLY",
    "CostSource",
    "Discovery",
    "GraphSource",
    "StepRecord",
    "TensorSpec",
    "discover",
    "discover_object",
    "select",
    "select_costs",
]

_DEFAULT_OPTIONS = LoadOptions()
#: What each format is, for a message.
_A_FORMAT = {"logdir": "a logdir", "events": "an event file", "savedmodel": "a SavedModel",
             "metagraph": "a MetaGraphDef", "graphdef": "a GraphDef",
             "keras-h5": "a legacy .h5 file (not loaded: loading it can run code)",
             "keras-json": "a Keras config without weights", "onnx": "an ONNX model"}
_MAX_LISTED = 12


def discover(path: str | os.PathLike[str], options: LoadOptions = _DEFAULT_OPTIONS) -> Discovery:
    """List the graphs in a file or directory.

    ``options.run`` narrows a logdir to one run before its event files are read, which saves
    reading every record of every run of a large logdir.

    Raises
    ------
    InputError
        The path is missing, unreadable or not a graph (the message says what it is).
    NoGraphError
        The input holds no graph (empty file, logdir without graphs).
    CorruptRecordError
        An event file record fails its CRC check or is cut short.
    SelectionError
        ``options.run`` names no run of the logdir.
    """
    detected = detect(path)
    fmt = detected.format
    if options.step is not None and fmt != "keras":
        raise InputError(f"{os.fspath(path)}: --step draws what Keras runs for a compiled "
                         f"model, read from a .keras file; this is {_A_FORMAT.get(fmt, fmt)}")
    if fmt == "logdir":
        return events.discover_logdir(path, run=_normal_run(options.run))
    if fmt == "events":
        return events.discover_file(path)
    if fmt == "savedmodel":
        return savedmodel.discover(path, text=detected.text or None,
                                   saved_model=detected.message)
    if fmt == "metagraph":
        meta = cast("MetaGraphDef | None", detected.message)
        return metagraph.discover(path, text=detected.text, meta=meta)
    if fmt == "graphdef":
        return graphdef.discover(path, text=detected.text, graph=detected.message)
    if fmt == "onnx":
        return onnx.discover(path)
    if fmt == "keras":
        return keras.discover_archive(path, options.step, options.batch_size)
    if fmt == "keras-h5":
        return keras.discover_h5(path)
    return keras.discover_json(path, detected.config or {})


def discover_object(obj: object, options: LoadOptions = _DEFAULT_OPTIONS) -> Discovery:
    """List the graphs of a live object (``tf.Graph``, GraphDef, ``tf.function``,
    ConcreteFunction, Keras model) or of logged blobs (:class:`graphviz_tb.logged.Logged`,
    what TensorBoard's data provider serves); a path is passed on to :func:`discover`."""
    if isinstance(obj, (str, os.PathLike)):
        return discover(obj, options)
    if isinstance(obj, Logged):
        return blobs.discover(obj)
    return live.discover(obj, options.step, options.batch_size)


def select(discovery: Discovery, options: LoadOptions) -> GraphSource:
    """Pick the graph to draw: the user's ``run``/``tag``/``tags``/``graph`` choice, else a default.

    The default is, for a SavedModel, the meta graph tagged ``serve`` (else the first); for a
    Keras file, its conceptual graph (the op graph needs TensorFlow and loading the weights);
    otherwise the most recent op graph (by wall time, then step, then order found), or the most
    recent conceptual graph when there is no op graph.

    Raises
    ------
    SelectionError
        The choice matches nothing; the message lists what there is.
    """
    graphs = discovery.graphs
    if options.graph is not None:
        if not 0 <= options.graph < len(graphs):
            raise SelectionError(f"there is no graph {options.graph} in {discovery.path}; "
                                 f"it holds {_listing(graphs)}")
        candidates = [graphs[options.graph]]
    elif options.step is not None:
        candidates = [g for g in graphs if g.origin == STEP_ORIGIN]
    else:
        candidates = list(graphs)
    run = _normal_run(options.run)
    if run is not None:
        candidates = [g for g in candidates if g.run == run]
        _check(candidates, discovery, f"run {run!r}", "runs", [g.run for g in graphs])
    if options.tag is not None:
        candidates = [g for g in candidates if g.tag == options.tag]
        _check(candidates, discovery, f"tag {options.tag!r}", "tags", [g.tag for g in graphs])
    if options.tags:
        wanted = set(options.tags)
        exact = [g for g in candidates if set(g.tags) == wanted]
        candidates = exact or [g for g in candidates if wanted <= set(g.tags)]
        _check(candidates, discovery, f"tag set {','.join(options.tags)!r}", "tag sets",
               [",".join(g.tags) for g in graphs])
    return _default(candidates, discovery.source_kind)


def _normal_run(run: str | None) -> str | None:
    """``./train/`` and ``train`` name the same run; the logdir itself is ``"."``."""
    if run is None:
        return None
    parts = [part for part in Path(run).as_posix().split("/") if part not in ("", ".")]
    return "/".join(parts) or "."


def _check(candidates: list[GraphSource], discovery: Discovery, wanted: str, plural: str,
           available: list[str]) -> None:
    if candidates:
        return
    names = sorted({name for name in available if name})
    there = f"{plural}: {', '.join(names)}" if names else f"it has no {plural}"
    raise SelectionError(f"no graph with {wanted} in {discovery.path}; {there}")


def _listing(graphs: tuple[GraphSource, ...]) -> str:
    shown = "; ".join(f"{index}: {g.name}" for index, g in enumerate(graphs[:_MAX_LISTED]))
    more = f"; … {len(graphs) - _MAX_LISTED} more" if len(graphs) > _MAX_LISTED else ""
    return f"{len(graphs)} graph(s) ({shown}{more})"


def _default(candidates: list[GraphSource], source_kind: str) -> GraphSource:
    tagged = [g for g in candidates if g.tags]
    if tagged:
        return next((g for g in tagged if "serve" in g.tags), tagged[0])
    if source_kind == "keras":
        conceptual = [g for g in candidates if g.kind == "conceptual"]
        if conceptual:
            return conceptual[0]
    ops = [g for g in candidates if g.kind == "op"] or candidates
    order = {id(g): index for index, g in enumerate(ops)}
    return max(ops, key=lambda g: (
        g.wall_time if g.wall_time is not None else -math.inf,
        g.step if g.step is not None else -1,
        order[id(g)],
    ))


def select_costs(discovery: Discovery, graph: GraphSource, wanted: str | None
                 ) -> tuple[list[CostSource], int]:
    """The recorded costs that apply to ``graph``, and which one to draw.

    They are those of the graph's run (as TensorBoard's "Session runs" menu lists them), in
    the order found, or the file ``wanted`` names (a RunMetadata/StepStats file, or a profiler
    capture: an ``.xplane.pb`` file or its session directory).  Otherwise ``wanted`` picks one
    by tag (or by its full name); the default is the latest (by wall time, then step).

    Raises
    ------
    SelectionError
        ``wanted`` matches none; the message lists what there is.
    InputError
        ``wanted`` names a file that holds no step stats.
    """
    if wanted is not None and os.path.exists(wanted):
        capture = profile.capture_source(Path(wanted))
        if capture is not None:
            return [capture], 0
        if os.path.isfile(wanted):
            return [runmeta.discover_file(wanted)], 0
    sources = [c for c in discovery.costs if c.run == graph.run]
    if not sources:
        if wanted is not None:
            raise SelectionError(f"{discovery.path} holds no run metadata or profiler capture "
                                 f"for run {graph.run or '.'!r}, so none tagged {wanted!r}")
        return [], 0
    if wanted is not None:
        for index, source in enumerate(sources):
            if wanted in (source.tag, source.name):
                return sources, index
        raise SelectionError(f"no run metadata {wanted!r} for run {graph.run or '.'!r} in "
                             f"{discovery.path}; there is: "
                             f"{', '.join(sorted({s.tag for s in sources}))}")
    order = {id(s): i for i, s in enumerate(sources)}
    latest = max(sources, key=lambda s: (
        s.wall_time if s.wall_time is not None else -math.inf,
        s.step if s.step is not None else -1,
        order[id(s)],
    ))
    return sources, order[id(latest)]
