"""The driver: the one place the stages run in order.

read (:mod:`.read`) -> model (:mod:`.model`) -> group (:mod:`.group`) -> view (:mod:`.view`)
-> layout (:mod:`.layout`) -> draw (:mod:`.draw`) -> write (:mod:`.write`).

The API (:mod:`graphviz_tb.api`), and through it the CLI, Jupyter, the documentation plugins
and the diff, call this module and keep no stage order of their own: :func:`read_graph` and
:func:`model_of` (read, model), :func:`group` (group), :func:`render_bytes`,
:func:`render_html` and :func:`render_pages` (view, layout, draw, write).  It also hands the
API the stages' own tools (shape reports, costs, the memory budget) under one roof.  It
imports every stage, so the API imports it only when a graph is loaded: ``import graphviz_tb``
and ``tbgraph --help`` stay fast.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from ._gc import paused_gc
from .draw.dot import scene_to_dot
from .draw.svg import run_neato
from .draw.viewer_data import DATA_VERSION, build_data
from .errors import GraphvizTbError, GraphvizTbWarning, InputError
from .group.build import build_hierarchy, complete
from .group.tree import Group
from .layout import engine
from .layout.scene import build_scene
from .model.budget import Cost, check_load, check_page, check_render, graph_cost
from .model.build import build_model
from .model.costs import CostSet, attach, metric_of
from .model.diff import GraphDiff, diff_models
from .model.inference import ShapeReport, infer_shapes
from .options import LoadOptions
from .picture import DiffTally
from .read import LAYER_GRAPH_ONLY, discover, discover_object, select, select_costs
from .view.opening import choose_picture
from .write.files import write_output
from .write.info import format_info, graph_info, listing_info
from .write.page import PageEntry, write_page
from .write.shape_table import (
    failure_lines,
    resolve_node,
    row_json,
    shape_rows,
    shape_text,
    table_lines,
    trace_lines,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from .group.tree import Hierarchy
    from .model.costs import StepCosts
    from .model.graph import GraphModel
    from .options import GroupOptions, RenderOptions
    from .read.base import Discovery, GraphSource

__all__ = [
    "CostSet", "EmbeddedGraph", "GraphDiff", "Loaded", "PageEntry", "ShapeReport",
    "check_page", "check_render", "describe_engine", "diff_groups", "diff_models",
    "discover_input", "failure_lines", "format_info", "graph_cost", "graph_info", "group",
    "infer_shapes", "input_listing", "metric_of", "model_of", "read_graph", "recorded_costs",
    "render_bytes", "render_html", "render_pages", "resolve_node", "row_json", "shape_rows",
    "shape_text", "table_lines", "trace_lines", "write_output",
]


# --------------------------------------------------------------------------- read, model


class Loaded(NamedTuple):
    """What :func:`read_graph` found: the chosen graph's model, every graph of the input,
    which one was chosen, and what the graph costs in memory."""

    model: GraphModel
    discovery: Discovery
    chosen: int
    cost: Cost


def discover_input(source: Any, options: LoadOptions) -> Discovery:
    """Every graph and recorded cost of an input (a path, a live object, logged blobs), none of
    them loaded."""
    if isinstance(source, (str, os.PathLike)):
        return discover(source, options)
    return discover_object(source, options)


@paused_gc
def read_graph(source: Any, options: LoadOptions) -> Loaded:
    """Read the input, choose its graph, check it fits in memory, and build its model."""
    with _nested_too_deeply(source):
        discovery = discover_input(source, options)
        chosen = select(discovery, options)
        graph_def, chosen, refused = _load_default(discovery, chosen, options)
        index = discovery.graphs.index(chosen)
    where = (f"{discovery.path} ({chosen.name})" if len(discovery.graphs) > 1
             else str(discovery.path))
    # Before the model is built: a graph too large for the machine gets one line, not a
    # kill by the kernel halfway through.
    names = [node.name for node in graph_def.node]  # read once, for both
    cost = graph_cost(graph_def, options, names)
    check_load(cost, where)
    model = build_model(graph_def, source=chosen, options=options, kind=chosen.kind,
                        where=where, names=names)
    if refused is not None:
        model.warnings.add("graph refused", refused)
    if chosen.kind == "conceptual" \
            and discovery.source_kind in ("logdir", "events", "logged") \
            and not any(g.kind == "op" for g in discovery.graphs):
        model.notes.append(LAYER_GRAPH_ONLY)
    return Loaded(model, discovery, index, cost)


def input_listing(source: Any, options: LoadOptions) -> dict[str, Any]:
    """Every graph of the input, each with its node count or what refuses it (see
    :func:`~graphviz_tb.write.info.listing_info`)."""
    with _nested_too_deeply(source):
        discovery = discover_input(source, options)
        return listing_info(discovery, lambda i: len(discovery.graphs[i].load().node))


@contextlib.contextmanager
def _nested_too_deeply(source: Any) -> Iterator[None]:
    """Turn a RecursionError into one line naming the input.  JSON, protobuf text format and
    Keras configs are parsed recursively; only input nested thousands deep (no real model
    is) gets here, from whichever reader read it."""
    try:
        yield
    except RecursionError:
        what = os.fspath(source) if isinstance(source, (str, os.PathLike)) else "the object"
        raise InputError(f"{what} is nested too deeply to read (thousands of levels of "
                         "brackets or messages); it is malformed or not a model") from None


def _load_default(discovery: Discovery, chosen: GraphSource, options: LoadOptions
                  ) -> tuple[Any, GraphSource, str | None]:
    """Load the chosen graph.  When it was chosen by default and cannot be read (a subclassed
    Keras model has no layer graph), the input's next graph that can is drawn instead, with
    a warning saying why: one graph refused never refuses the whole file.  A graph the user
    chose is refused in one line."""
    try:
        return chosen.load(), chosen, None
    except InputError as exc:
        if options.graph is not None or options.step is not None \
                or len(discovery.graphs) == 1:
            raise
        first = exc
    for other in discovery.graphs:
        if other is chosen:
            continue
        try:
            return other.load(), other, (f"{first}; drawing {other.name} instead")
        except InputError:
            continue
    raise first


def model_of(discovery: Discovery, index: int, graph_def: Any,
             options: LoadOptions) -> GraphModel:
    """The model of graph ``index`` of an input already read, from its parsed GraphDef."""
    source = discovery.graphs[index]
    return build_model(graph_def, source=source, options=options, kind=source.kind,
                       where=f"{discovery.path} ({source.name})")


def recorded_costs(discovery: Discovery, source: GraphSource, model: GraphModel,
                   run_metadata: str | None, *, every_step: bool) -> CostSet | None:
    """What the graph's ops cost in its recorded steps (the chosen one, or every one), or
    None when nothing was recorded.  A step other than the chosen one that cannot be read is
    left out with a warning."""
    sources, chosen = select_costs(discovery, source, run_metadata)
    steps: list[StepCosts] = []
    for index, step_source in enumerate(sources):
        if index != chosen and not every_step:
            continue
        try:
            record = step_source.load()
        except GraphvizTbError as exc:
            if index == chosen:
                raise
            warnings.warn(str(exc), GraphvizTbWarning, stacklevel=3)
            continue
        if index == chosen:
            chosen = len(steps)
        steps.append(attach(model, step_source, record))
    return CostSet(tuple(steps), chosen) if steps else None


# --------------------------------------------------------------------------- group


def group(model: GraphModel, options: GroupOptions) -> Hierarchy:
    """The model's ops grouped, everything settled (:mod:`graphviz_tb.group`)."""
    return build_hierarchy(model, options)


def diff_groups(h: Hierarchy) -> list[dict[str, Any]]:
    """Every scope and function body of a diff's tree holding a change, with its counts."""
    tally = DiffTally(h)
    out = []
    for g in h.all_groups():
        if isinstance(g, Group) and g.kind in ("scope", "function"):
            counts = tally(g)
            if counts["added"] + counts["removed"] + counts["changed"]:
                out.append({"name": g.name, "added": counts["added"],
                            "removed": counts["removed"], "changed": counts["changed"]})
    return sorted(out, key=lambda row: row["name"])


# --------------------------------------------------------------------------- view .. write


def describe_engine() -> dict[str, object]:
    """The Graphviz engine a render would use, or ``name: None`` and why there is none."""
    try:
        return engine.current().describe()
    except GraphvizTbError as exc:
        return {"name": None, "error": str(exc)}


@paused_gc
def render_bytes(h: Hierarchy, fmt: str, options: RenderOptions, *, title: str = "graph",
                 progress: Callable[[int, int], None] | None = None,
                 costs: CostSet | None = None) -> bytes:
    """Draw hierarchy ``h`` in ``fmt`` with ``options``; deterministic for the same inputs.

    ``title`` names the page of the HTML viewer (the static formats draw ``options.title``).
    ``costs`` are the recorded steps of the graph's run: the static formats colour by the
    chosen one when ``options.color_by`` is a cost mode; the viewer embeds them all.
    """
    if fmt in engine.DRAW_FORMATS:
        engine.current().require(fmt)  # before the layout: a PDF without `dot` fails at once
    if fmt == "html":
        return render_html(h, options, title=title, progress=progress,
                           costs=costs).encode("utf-8")
    picture = choose_picture(h, options, costs, name=title)
    scene = build_scene(h, options, picture, progress=progress)
    doc = scene_to_dot(h, scene, picture, options)
    if fmt == "dot":
        return doc.text.encode("utf-8")
    return run_neato(doc, fmt)


def _viewer_data(h: Hierarchy, options: RenderOptions, *, title: str,
                 progress: Callable[[int, int], None] | None,
                 costs: CostSet | None, alone: bool = True) -> dict[str, Any]:
    """One graph's viewer data: the picture first drawn and its layouts, then every group's
    edges and template (the page ships them all), then the data.  A graph ``alone`` on its
    page is refused when its colouring needs costs it lacks."""
    picture = choose_picture(h, options, costs, page=True, name=title if alone else None)
    scene = build_scene(h, options, picture, progress=progress)
    complete(h)
    return build_data(h, scene, picture, options, title=title, costs=costs)


def render_html(h: Hierarchy, options: RenderOptions, *, title: str = "graph",
                progress: Callable[[int, int], None] | None = None,
                costs: CostSet | None = None) -> str:
    """The viewer page for hierarchy ``h``: one self-contained HTML document."""
    data = _viewer_data(h, options, title=title, progress=progress, costs=costs)
    return write_page(data, options, options.title or title)


@dataclass(frozen=True)
class EmbeddedGraph:
    """One distinct graph of a logdir page: its tree, title and recorded costs."""

    hierarchy: Hierarchy
    title: str
    costs: CostSet | None = None


def render_pages(graphs: list[EmbeddedGraph], entries: list[PageEntry], options: RenderOptions,
                 *, first: int = 0, title: str = "logdir",
                 progress: Callable[[int, int], None] | None = None) -> str:
    """One viewer page holding several graphs (every graph of a logdir) with a picker.

    ``entries`` lists what the picker shows, in order; ``first`` is the entry shown at first.
    The page switches between the graphs without reloading and keeps each one's view.
    """
    data = {
        "version": DATA_VERSION,
        "pages": [{"run": e.run, "name": e.name, "graph": e.graph} for e in entries],
        "first": first,
        "graphs": [_viewer_data(g.hierarchy, options, title=g.title, progress=progress,
                                costs=g.costs, alone=False) for g in graphs],
    }
    return write_page(data, options, options.title or title)
