"""The Python API: ``load()`` anything that holds a graph, then ``.info()``, ``.render()``.

This is the facade: it holds the user's objects and what they cache (a graph's trees and
recorded costs), and delegates the work to the driver (:mod:`graphviz_tb.pipeline`), which
runs the stages in order, and to the text reports of :mod:`graphviz_tb.write`.  The CLI,
Jupyter and the documentation plugins are thin layers over it.  The driver, and with it every
stage (protobuf, the layout, the writers), is imported inside functions, here only, as are
the reports: that is the one lazy import boundary that keeps
``import graphviz_tb`` and ``tbgraph --help`` fast.  TensorFlow is imported only by the readers
and the shape inference that need it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .jupyter import mimebundle
from .options import GroupOptions, LoadOptions, RenderOptions, format_for

if TYPE_CHECKING:
    from .group.tree import Hierarchy
    from .model.budget import Cost
    from .model.costs import CostSet
    from .model.graph import GraphModel
    from .model.inference import ShapeReport
    from .read.base import Discovery, GraphSource

__all__ = ["Diff", "Graph", "describe_engine", "diff", "discover", "format_info", "list_graphs",
           "load"]


class Graph:
    """One loaded graph, with what was found around it.

    Attributes
    ----------
    model:
        The op graph (:class:`graphviz_tb.model.graph.GraphModel`; its ``graph`` is a networkx
        MultiDiGraph).
    discovery:
        Every graph the input holds; ``index`` says which one this is.
    cost:
        What the graph holds that costs memory (see :mod:`graphviz_tb.model.budget`); each
        render is checked against it first.
    """

    def __init__(self, model: GraphModel, discovery: Discovery, index: int,
                 load_options: LoadOptions | None = None, cost: Cost | None = None) -> None:
        self.model = model
        self.cost = cost
        self.discovery = discovery
        self.index = index
        self.load_options = load_options or LoadOptions()
        self._costs: dict[bool, CostSet | None] = {}
        self._hierarchies: dict[GroupOptions, Hierarchy] = {}
        self._counts: dict[int, int] = {index: model.top_level_nodes}
        self._shape_pins: tuple[tuple[str, tuple[int | None, ...]], ...] | None = None
        #: The last :meth:`infer_shapes` result (None until shapes were inferred).
        self.shape_report: ShapeReport | None = None

    @property
    def source(self) -> GraphSource:
        return self.discovery.graphs[self.index]

    @property
    def name(self) -> str:
        """A short title: the input's file name, and the graph's label when there are several."""
        base = os.path.basename(os.path.normpath(self.discovery.path)) or self.discovery.path
        return base if len(self.discovery.graphs) == 1 else f"{base} · {self.source.name}"

    def hierarchy(self, options: RenderOptions | None = None) -> Hierarchy:
        """The scope tree for these options (cached by their grouping options); its scope
        series are made as pictures read it (:meth:`~graphviz_tb.group.tree.Hierarchy.settle`)."""
        from .pipeline import group  # the driver: imported when a graph is drawn

        options = options or RenderOptions()
        if options.infer_shapes or options.input_shapes:
            self.infer_shapes(options.input_shapes)
        key = options.grouping
        if key not in self._hierarchies:
            self._hierarchies[key] = group(self.model, key)
        return self._hierarchies[key]

    def infer_shapes(
        self,
        input_shapes: Mapping[str, Sequence[int | None]]
        | Sequence[tuple[str, Sequence[int | None]]] = (),
    ) -> ShapeReport:
        """Fill in shapes with TensorFlow's own inference (needs the ``[tf]`` extra).

        ``input_shapes`` pins placeholders (``{"images": (8, 224, 224, 3)}``, None for an
        unknown dimension) and drops the file's stale ``_output_shapes``.  The model keeps the
        result, ops where inference fails are marked for the renderers, and cached hierarchies
        are dropped so the next render shows the new shapes.  Repeating a call with the same
        pins reuses the result.

        Raises
        ------
        graphviz_tb.TensorFlowRequired
            TensorFlow is not installed.
        graphviz_tb.InputError
            A pinned name is not a placeholder, or TensorFlow cannot import the graph.
        """
        from .pipeline import infer_shapes  # the driver, as above

        items = input_shapes.items() if isinstance(input_shapes, Mapping) else input_shapes
        pins = tuple((name, tuple(dims)) for name, dims in items)
        if self.shape_report is None or pins != self._shape_pins:
            self.shape_report = infer_shapes(self.model, self.source.load(), pins,
                                             where=self.name)
            self._shape_pins = pins
            self._hierarchies.clear()
        return self.shape_report

    def costs(self, *, every_step: bool = False) -> CostSet | None:
        """What the ops cost when they ran: the run metadata and profiler captures of this
        graph's run (or the file ``LoadOptions.run_metadata`` names), attached to its ops.

        The chosen step is ``LoadOptions.run_metadata``'s, else the latest.  Only it is loaded
        unless ``every_step`` (the viewer's step picker shows them all; a step that cannot be
        loaded then is left out with a warning).  None when nothing was recorded.

        Raises
        ------
        graphviz_tb.SelectionError
            ``run_metadata`` names no recorded step.
        graphviz_tb.InputError
            The chosen step cannot be read (or needs the ``[profile]`` extra).
        """
        from .pipeline import recorded_costs  # the driver, as above

        if every_step not in self._costs:
            self._costs[every_step] = recorded_costs(
                self.discovery, self.source, self.model, self.load_options.run_metadata,
                every_step=every_step)
        return self._costs[every_step]

    def count_nodes(self, index: int) -> int:
        """Top-level NodeDefs of graph ``index`` in the discovery (parsed on first use)."""
        if index not in self._counts:
            self._counts[index] = len(self.discovery.graphs[index].load().node)
        return self._counts[index]

    def info(self) -> dict[str, Any]:
        """A JSON-ready summary: source kind, graphs found, exact op and edge counts, groups."""
        from .write.info import graph_info  # a report: imported when asked for

        return graph_info(self.model, self.discovery, self.index, self.count_nodes)

    def shapes(self, patterns: Sequence[str] = (), *,
               changes: bool = False) -> list[dict[str, Any]]:
        """Every op's input and output shapes, in dataflow order: the rows of ``tbgraph shapes``.

        Shapes are whatever the file recorded, or what :meth:`infer_shapes` found when it ran
        first, so pin the inputs there to see where a mismatch starts.

        Parameters
        ----------
        patterns:
            Keep only ops whose full name matches one of these globs (a plain name also takes
            the scope it names).
        changes:
            Keep only ops where the rank changes, a dimension is unknown, or inference failed.

        Returns
        -------
        list of dict
            One dict per op: ``name``, ``op``, ``function`` (the function body it sits in, or
            None), ``inputs`` (``slot``, ``node``, ``output``, ``dtype``, ``shape``, ``text``),
            ``outputs`` (``dtype``, ``shape``, ``text``) and ``shape_error`` (TensorFlow's
            message, or None).  A shape is a list with None for an unknown dimension, or None
            when even the rank is unknown.

        Examples
        --------
        >>> import graphviz_tb
        >>> graph = graphviz_tb.load("samples/mnist_tf1.pb")  # doctest: +SKIP
        >>> row = graph.shapes(["fc1/MatMul"])[0]  # doctest: +SKIP
        >>> [i["text"] for i in row["inputs"]], row["outputs"][0]["text"]  # doctest: +SKIP
        (['float32 ?×3136', 'float32 3136×1024'], 'float32 ?×1024')
        """
        from .write.shape_table import row_json, shape_rows  # a report, as above

        return [row_json(row) for row in shape_rows(self.model, patterns=patterns,
                                                    changes=changes)]

    def shape_table(self, patterns: Sequence[str] = (), *,
                    changes: bool = False) -> tuple[list[str], bool]:
        """:meth:`shapes` as the lines of ``tbgraph shapes``'s table, and whether any op
        but a constant or a placeholder has a fully known output shape (when none has, the
        file records few shapes: ``--infer-shapes`` asks TensorFlow)."""
        from .write.shape_table import shape_rows, table_lines  # a report, as above

        rows = shape_rows(self.model, patterns=patterns, changes=changes)
        recorded = any(o.known_shape for r in rows for o in r.outputs
                       if r.op not in ("Const", "Placeholder"))
        return (table_lines(rows) if rows else []), recorded

    def trace(self, node: str, *, depth: int, outputs: bool = False) -> list[str]:
        """The tree of ``node``'s inputs (or ``outputs``), ``depth`` levels deep, with shapes:
        the lines of ``tbgraph trace``."""
        from .write.shape_table import resolve_node, trace_lines  # a report, as above

        return trace_lines(self.model, resolve_node(self.model, node), depth=depth,
                           outputs=outputs)

    def shape_failures(self) -> tuple[list[str], list[dict[str, Any]]]:
        """Where the last :meth:`infer_shapes` failed, as lines for a terminal and as JSON
        (each failed op, its message and the shapes it was given); empty when it did not."""
        from .write.shape_table import failure_json, failure_lines  # a report, as above

        report = self.shape_report
        if report is None or report.ok:
            return [], []
        return failure_lines(self.model, report), failure_json(report)

    def render(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        format: str | None = None,
        options: RenderOptions | None = None,
        progress: Callable[[int, int], None] | None = None,
        **kwargs: Any,
    ) -> str | bytes | None:
        """Draw the graph.

        With ``path``, writes the file (atomically; the format comes from the extension unless
        ``format`` is given) and returns None.  Without it, returns SVG, HTML or DOT text, or
        PNG/PDF bytes.  ``options`` is a :class:`RenderOptions`; its fields may also be passed
        as keywords (``depth=2``, ``color_by="op"`` ...).

        Parameters
        ----------
        path:
            Where to write; its extension picks the format (``.svg .png .pdf .dot .html``).
        format:
            ``svg``, ``png``, ``pdf``, ``dot`` or ``html`` (the interactive viewer: one
            offline file).  Default: from ``path``, else SVG.
        options, **kwargs:
            What to show and how: a :class:`RenderOptions`, or its fields as keywords
            (keywords win over ``options``).
        progress:
            Called with (group layouts done, group layouts in all) while laying out.

        Examples
        --------
        >>> import graphviz_tb
        >>> graph = graphviz_tb.load("samples/mnist_tf1.pb")  # doctest: +SKIP
        >>> graph.render("mnist.png", depth=2)  # doctest: +SKIP
        >>> svg = graph.render(expand=("conv*",), color_by="op")  # doctest: +SKIP
        >>> page = graph.render(format="html")  # doctest: +SKIP
        >>> svg.startswith("<?xml"), page.startswith("<!DOCTYPE html>")  # doctest: +SKIP
        (True, True)
        """
        from .pipeline import draw  # the driver

        options = replace(options or RenderOptions(), **kwargs) if kwargs else (
            options or RenderOptions())
        fmt = format_for(path, format)
        data = draw(self, fmt, options, path=path, sibling=self._sibling, progress=progress)
        if data is None:
            return None
        return data if fmt in ("png", "pdf") else data.decode("utf-8")

    def _sibling(self, index: int, graph_def: Any, model: GraphModel | None) -> Graph:
        """Graph ``index`` of the same discovery (for a logdir's page), built from its parsed
        GraphDef, or sharing ``model`` when the same graph was logged again."""
        from .pipeline import model_of  # the driver, as above

        if model is None:
            model = model_of(self.discovery, index, graph_def, self.load_options)
        return Graph(model, self.discovery, index, self.load_options)

    def _repr_mimebundle_(self, include: Container[str] | None = None,
                          exclude: Container[str] | None = None) -> dict[str, str]:
        """Jupyter's display hook: SVG, or the interactive viewer after
        ``graphviz_tb.set_display("html")`` (see :mod:`graphviz_tb.jupyter`)."""
        return mimebundle(self, include, exclude)

    def __repr__(self) -> str:
        return f"<graphviz_tb.Graph {self.name!r}: {self.model.top_level_nodes:,} nodes>"


def load(source: Any, options: LoadOptions | None = None, **kwargs: Any) -> Graph:
    """Read a graph from a path or a live TensorFlow object.

    Parameters
    ----------
    source:
        A path (GraphDef ``.pb``/``.pbtxt``, ``.meta``, SavedModel directory, event file or
        logdir, ``.keras``/``.h5``) or a live ``tf.Graph``, ``GraphDef``, ``tf.function``,
        ConcreteFunction or ``keras.Model``, or what TensorBoard logged, as bytes
        (:class:`graphviz_tb.logged.Logged`: how the TensorBoard plugin reads its data
        provider's blobs).
    options, **kwargs:
        A :class:`LoadOptions`, or its fields as keywords (``run=``, ``tag=``, ``graph=``,
        ``tags=``, ``functions=``).

    Raises
    ------
    graphviz_tb.InputError
        The input is not a graph we can read; the message names the file and the problem.

    Examples
    --------
    >>> import graphviz_tb
    >>> g = graphviz_tb.load("samples/mnist_tf1.pb")  # doctest: +SKIP
    >>> g.info()["nodes"]  # doctest: +SKIP
    """
    from .pipeline import read_graph  # the driver, as above

    if options is None:
        options = LoadOptions(**kwargs)
    elif kwargs:
        options = replace(options, **kwargs)
    model, discovery, index, cost = read_graph(source, options)
    return Graph(model, discovery, index, options, cost)


def discover(source: Any, options: LoadOptions | None = None, **kwargs: Any) -> Discovery:
    """What an input holds, without loading any of it: every graph (``graphs``, each a
    :class:`graphviz_tb.read.base.GraphSource` with its name, kind, run, tag and step) and
    every set of recorded costs (``costs``), in the order :func:`load`'s ``graph=`` counts.

    ``source`` and the options are as for :func:`load` (only ``run`` narrows a logdir here).

    Raises
    ------
    graphviz_tb.InputError
        The input is not a graph we can read, or holds none.
    """
    from .pipeline import discover_input  # the driver, as above

    if options is None:
        options = LoadOptions(**kwargs)
    elif kwargs:
        options = replace(options, **kwargs)
    return discover_input(source, options)


class Diff:
    """What changed between two loaded graphs (see :mod:`graphviz_tb.model.diff`).

    Attributes
    ----------
    result:
        The match and the classes: ``added``, ``removed``, ``changed``, ``renamed`` ops and
        ``edges_added``/``edges_removed`` (a :class:`graphviz_tb.model.diff.GraphDiff`).
    graph:
        One :class:`Graph` holding both versions, each op and edge marked with what happened
        to it: what :meth:`render` draws.
    """

    def __init__(self, old: Graph, new: Graph) -> None:
        from .pipeline import diff_models  # the driver, as above

        self.old, self.new = old, new
        self.result = diff_models(old.model, new.model)
        self.graph = Graph(self.result.merged(), new.discovery, new.index)

    @property
    def equal(self) -> bool:
        """No op or edge added, removed or changed (renames alone leave graphs equal)."""
        return self.result.equal

    def summary(self) -> list[str]:
        """The changes in a few sentences, for a terminal or a pull request."""
        return self.result.summary_lines()

    def groups(self, options: RenderOptions | None = None) -> list[dict[str, Any]]:
        """Every scope and function body holding a change, with its counts, by name."""
        from .pipeline import diff_groups  # the driver, as above

        return diff_groups(self.graph.hierarchy(options or RenderOptions(color_by="diff")))

    def to_json(self) -> dict[str, Any]:
        """Every change, with both names: the JSON of ``tbgraph diff --json``."""
        return self.result.to_json(self.groups())

    def markdown(self, path: str | os.PathLike[str] | None = None, *,
                 picture: str | os.PathLike[str] | None = None,
                 command: Sequence[str] | None = None) -> str:
        """The changes as a pull-request comment, under 60 KB however large the diff: the
        counts, the changed modules with theirs, the changed ops, and where the full picture
        is: ``picture`` (a file :meth:`render` wrote), else ``command`` draws it (by default
        ``tbgraph diff OLD NEW -o diff.html``).  What ``tbgraph diff --markdown`` prints;
        with ``path``, also written there (whole, or not at all)."""
        from .write.diff_markdown import diff_markdown  # a report, as above

        if command is None:
            command = ["tbgraph", "diff", self.old.discovery.path, self.new.discovery.path,
                       "-o", "diff.html"]
        return diff_markdown(self.result,
                             self.graph.hierarchy(RenderOptions(color_by="diff")),
                             titles=(self.old.name, self.new.name),
                             picture=None if picture is None else os.fspath(picture),
                             command=command, path=path)

    def render(self, path: str | os.PathLike[str] | None = None, *, format: str | None = None,
               options: RenderOptions | None = None,
               progress: Callable[[int, int], None] | None = None,
               **kwargs: Any) -> str | bytes | None:
        """Draw both versions as one graph (as :meth:`Graph.render`), coloured by what
        happened: added green, removed red (dashed), changed amber, unchanged grey.  The
        default view opens the groups that hold changes."""
        options = replace(options or RenderOptions(color_by="diff"), **kwargs) if kwargs \
            else (options or RenderOptions(color_by="diff"))
        return self.graph.render(path, format=format, options=options, progress=progress)


def diff(old: Any, new: Any, options: LoadOptions | None = None, **kwargs: Any) -> Diff:
    """Compare two graphs: paths or live objects, as :func:`load` takes, or loaded
    :class:`Graph` objects.

    Examples
    --------
    >>> import graphviz_tb
    >>> d = graphviz_tb.diff("old.pb", "new.pb")  # doctest: +SKIP
    >>> d.equal, d.summary()[0]  # doctest: +SKIP
    (False, 'ops: 7 added, 0 removed, 0 changed, 6 renamed; edges: 0 added, 0 removed')
    >>> d.render("diff.svg")  # doctest: +SKIP
    """
    graphs = [g if isinstance(g, Graph) else load(g, options, **kwargs) for g in (old, new)]
    return Diff(*graphs)


def list_graphs(source: Any, options: LoadOptions | None = None, **kwargs: Any
                ) -> dict[str, Any]:
    """Every graph an input holds, each with its node count, or the ``error`` that refuses
    it: what ``tbgraph info`` lists of an input none of whose graphs can be drawn."""
    from .pipeline import input_listing  # the driver, as above

    options = replace(options or LoadOptions(), **kwargs) if kwargs else (
        options or LoadOptions())
    return input_listing(source, options)


def format_info(info: dict[str, Any]) -> str:
    """:meth:`Graph.info` as the text ``tbgraph info`` prints."""
    from .write.info import format_info as text  # a report, as above

    return text(info)


def describe_engine() -> dict[str, object]:
    """The Graphviz engine a render would use (its name, version and where it runs), or
    ``name: None`` and why there is none."""
    from .pipeline import describe_engine as described  # the driver, as above

    return described()
