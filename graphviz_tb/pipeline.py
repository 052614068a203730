"""The driver: the one place the stages run in order.

read (:mod:`.read`) -> model (:mod:`.model`) -> group (:mod:`.group`) -> view (:mod:`.view`)
-> layout (:mod:`.layout`) -> draw (:mod:`.draw`) -> write (:mod:`.write`).

The API (:mod:`graphviz_tb.api`), and through it the CLI, Jupyter, the documentation plugins
and the diff, call this module and keep no stage order of their own: :func:`read_graph` and
:func:`model_of` (read, model), :func:`group` (group), :func:`render_bytes`,
:func:`render_html` and :func:`render_pages` (view, layout, draw, write), and :func:`draw`
above them: the memory check, the costs a picture reads and a logdir's page of several
graphs.  The reports (``tbgraph info``, ``shapes``, ``trace``) live with the writers, in
:mod:`graphviz_tb.write`, and the API reads them there.  This module imports every stage,
so the API imports it only when a graph is loaded: ``import graphviz_tb`` and ``tbgraph
--help`` stay fast.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from ._gc import paused_gc, return_freed_memory
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
from .model.diff import diff_models
from .model.inference import infer_shapes
from .options import LoadOptions
from .picture import DiffTally
from .read import LAYER_GRAPH_ONLY, discover, discover_object, select, select_costs
from .view.opening import choose_picture
from .write.files import write_output
from .write.info import listing_info
from .write.page import PageEntry, page_pieces, write_page

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    from .group.tree import Hierarchy
    from .model.costs import StepCosts
    from .model.graph import GraphModel
    from .options import GroupOptions, RenderOptions
    from .read.base import Discovery, GraphSource

__all__ = [
    "Drawable", "EmbeddedGraph", "Loaded", "describe_engine", "diff_groups", "diff_models",
    "discover_input", "draw", "group", "infer_shapes", "input_listing", "model_of", "page_graphs",
    "read_graph", "recorded_costs", "render_bytes", "render_html", "render_pages",
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
        return_freed_memory()  # what telling the input's format parsed
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
    del graph_def, names  # the model keeps nothing of the parsed GraphDef (node_def_of)
    return_freed_memory()
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
        return _loaded(chosen), chosen, None
    except InputError as exc:
        if options.graph is not None or options.step is not None \
                or len(discovery.graphs) == 1:
            raise
        first = exc
    for other in discovery.graphs:
        if other is chosen:
            continue
        try:
            return _loaded(other), other, (f"{first}; drawing {other.name} instead")
        except InputError:
            continue
    raise first


def _loaded(source: GraphSource) -> Any:
    """What a model is built from: the source's head when it has one (less memory)."""
    return source.head() if source.head is not None else source.load()


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
    """The model's ops grouped (:mod:`graphviz_tb.group`); scope series are made as views
    read it."""
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


class Drawable(Protocol):
    """What the driver reads of a loaded graph (:class:`graphviz_tb.api.Graph` is one): the
    graph keeps its trees and recorded costs, so each is built once however often it is
    drawn."""

    model: GraphModel
    discovery: Discovery
    index: int
    load_options: LoadOptions
    cost: Cost | None

    @property
    def name(self) -> str: ...

    def hierarchy(self, options: RenderOptions | None = None) -> Hierarchy: ...

    def costs(self, *, every_step: bool = False) -> CostSet | None: ...


def draw(graph: Drawable, fmt: str, options: RenderOptions, *,
         sibling: Callable[[int, Any, GraphModel | None], Drawable],
         path: str | os.PathLike[str] | None = None,
         progress: Callable[[int, int], None] | None = None) -> bytes | None:
    """``graph`` drawn in ``fmt``: refused in one line first when it would not fit in memory;
    a viewer page of a logdir holds all its graphs (see :func:`page_graphs`), each made by
    ``sibling(index, graph_def, None)`` (or ``sibling(index, None, model)`` for a graph whose
    model is built already); otherwise the one graph with the costs it reads.  With ``path``,
    the file is written whole (or not at all) and None returned; else the bytes."""
    pieces = _drawn(graph, fmt, options, sibling, progress)
    if path is None:
        return b"".join(pieces)
    write_output(path, pieces)
    return None


def _drawn(graph: Drawable, fmt: str, options: RenderOptions,
           sibling: Callable[[int, Any, GraphModel | None], Drawable],
           progress: Callable[[int, int], None] | None) -> Iterable[bytes]:
    """What :func:`draw` draws, in pieces that join to it: a viewer page's are made as they
    are written (see :func:`~graphviz_tb.write.page.page_pieces`)."""
    if graph.cost is not None:
        check_render(graph.cost, graph.name, fmt, options.expand_all)
    indices = page_graphs(graph) if fmt == "html" else [graph.index]
    if len(indices) > 1:
        return (_logdir_page(graph, indices, options, sibling, progress),)
    costs = None
    if fmt == "html" or metric_of(options.color_by) is not None:
        # every step for the viewer's step picker, the chosen one for a static picture
        # coloured by cost; the view refuses a cost colouring that finds none
        costs = graph.costs(every_step=fmt == "html")
    return _rendered(graph.hierarchy(options), fmt, options, title=graph.name,
                     progress=progress, costs=costs)


def render_bytes(h: Hierarchy, fmt: str, options: RenderOptions, *, title: str = "graph",
                 progress: Callable[[int, int], None] | None = None,
                 costs: CostSet | None = None) -> bytes:
    """Draw hierarchy ``h`` in ``fmt`` with ``options``; deterministic for the same inputs.

    ``title`` names the page of the HTML viewer (the static formats draw ``options.title``).
    ``costs`` are the recorded steps of the graph's run: the static formats colour by the
    chosen one when ``options.color_by`` is a cost mode; the viewer embeds them all.
    """
    return b"".join(_rendered(h, fmt, options, title=title, progress=progress, costs=costs))


@paused_gc
def _rendered(h: Hierarchy, fmt: str, options: RenderOptions, *, title: str,
              progress: Callable[[int, int], None] | None,
              costs: CostSet | None) -> Iterable[bytes]:
    """:func:`render_bytes` in pieces that join to it: drawn here and now, but for a viewer
    page's data, written to its pieces as they are asked for (see :func:`_html_pieces`)."""
    if fmt in engine.DRAW_FORMATS:
        engine.current().require(fmt)  # before the layout: a PDF without `dot` fails at once
    if fmt == "html":
        return (piece.encode("utf-8") for piece in _html_pieces(
            h, options, title=title, progress=progress, costs=costs))
    picture = choose_picture(h, options.view, costs, name=title)
    scene = build_scene(h, options.layout, picture, progress=progress)
    doc = scene_to_dot(h, scene, picture, options.style)
    if fmt == "dot":
        return (doc.text.encode("utf-8"),)
    return (run_neato(doc, fmt),)


def _viewer_data(h: Hierarchy, options: RenderOptions, *, title: str,
                 progress: Callable[[int, int], None] | None,
                 costs: CostSet | None, alone: bool = True) -> dict[str, Any]:
    """One graph's viewer data: the picture first drawn and its layouts, then every group's
    edges and template (the page ships them all), then the data.  A graph ``alone`` on its
    page is refused when its colouring needs costs it lacks."""
    picture = choose_picture(h, options.view, costs, page=True, name=title, alone=alone)
    scene = build_scene(h, options.layout, picture, progress=progress)
    complete(h)
    return build_data(h, scene, picture, options.style, title=title, costs=costs)


def render_html(h: Hierarchy, options: RenderOptions, *, title: str = "graph",
                progress: Callable[[int, int], None] | None = None,
                costs: CostSet | None = None) -> str:
    """The viewer page for hierarchy ``h``: one self-contained HTML document."""
    return "".join(_html_pieces(h, options, title=title, progress=progress, costs=costs))


@paused_gc
def _html_pieces(h: Hierarchy, options: RenderOptions, *, title: str,
                 progress: Callable[[int, int], None] | None,
                 costs: CostSet | None) -> Iterator[str]:
    """:func:`render_html`'s page in pieces: its data is built here and now (the collector
    paused), and written to the pieces as they are asked for."""
    data = _viewer_data(h, options, title=title, progress=progress, costs=costs)
    return page_pieces(data, options.style, options.title or title)


# --------------------------------------------------------------------------- logdir pages


def page_graphs(graph: Drawable) -> list[int]:
    """The graphs one viewer page of ``graph``'s input holds: every graph of a logdir or event
    file (narrowed by ``run`` and ``tag``), unless one was chosen with ``graph``."""
    d, wanted = graph.discovery, graph.load_options
    if d.source_kind not in ("logdir", "events") or wanted.graph is not None:
        return [graph.index]
    return [i for i, g in enumerate(d.graphs) if wanted.tag in (None, g.tag)]


@dataclass(frozen=True)
class EmbeddedGraph:
    """One distinct graph of a logdir page: its tree, title and recorded costs."""

    hierarchy: Hierarchy
    title: str
    costs: CostSet | None = None


def _logdir_page(graph: Drawable, indices: list[int], options: RenderOptions,
                 sibling: Callable[[int, Any, GraphModel | None], Drawable],
                 progress: Callable[[int, int], None] | None) -> bytes:
    """Every graph of ``indices`` in one viewer page; a graph logged by several runs (or
    several times) is embedded once, with the recorded costs of each of its runs."""
    discovery = graph.discovery
    read = []
    for index in indices:
        graph_def = discovery.graphs[index].load()
        key = hashlib.sha256(graph_def.SerializeToString(deterministic=True)).hexdigest()
        read.append((index, graph_def, key))
    # The page holds every distinct graph's model, tree and viewer data at once: refused
    # in one line before any is built when they would not fit together.
    costs: dict[str, Cost] = {}
    for index, graph_def, key in read:
        if key not in costs:
            costs[key] = graph.cost if index == graph.index and graph.cost is not None \
                else graph_cost(graph_def, graph.load_options)
    check_page(list(costs.values()), graph.name, options.expand_all)
    distinct: dict[str, int] = {}  # each distinct graph's place on the page
    built: dict[str, Drawable] = {}  # its model, built once
    members: list[list[Drawable]] = []  # the graphs sharing it, each with its own run
    entries: list[PageEntry] = []
    first = 0
    for index, graph_def, key in read:
        source = discovery.graphs[index]
        if key not in distinct:
            distinct[key] = len(members)
            members.append([])
        if index == graph.index:
            first = len(entries)
            built.setdefault(key, graph)
            members[distinct[key]].append(graph)
        elif key not in built:
            built[key] = sibling(index, graph_def, None)
            members[distinct[key]].append(built[key])
        else:  # the same graph in another run: its model, with that run's costs
            members[distinct[key]].append(sibling(index, None, built[key].model))
        entries.append(PageEntry(source.run, source.name, distinct[key]))
    embedded = []
    for shared in members:
        lead = graph if graph in shared else shared[0]
        embedded.append(EmbeddedGraph(lead.hierarchy(options), lead.name,
                                      _shared_costs(shared, lead)))
    title = os.path.basename(os.path.normpath(discovery.path)) or discovery.path
    return render_pages(embedded, entries, options, first=first, title=title,
                        progress=progress).encode("utf-8")


def _shared_costs(shared: list[Drawable], lead: Drawable) -> CostSet | None:
    """The recorded steps of every run that logged one graph, each step once by name; the
    one shown first is ``lead``'s chosen step."""
    steps: dict[str, StepCosts] = {}
    wanted = None
    for graph in shared:
        recorded = graph.costs(every_step=True)
        if recorded is not None:
            for step in recorded.steps:
                steps.setdefault(step.name, step)
            if graph is lead:
                wanted = recorded.current.name
    names = list(steps)
    return CostSet(tuple(steps.values()), names.index(wanted) if wanted in steps else 0) \
        if steps else None


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
    return write_page(data, options.style, options.title or title)
