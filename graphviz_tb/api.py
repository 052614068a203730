"""The Python API: ``load()`` anything that holds a graph, then ``.info()``, ``.render()``.

This is the facade: it composes the pipeline's stages (readers, model, hierarchy and structure,
view, layout, scene, writers) and caches what they make.  The CLI and the documentation plugins
are thin layers over it.  Heavy modules (networkx, protobuf, the renderers) are imported inside
functions so ``import graphviz_tb`` and ``tbgraph --help`` stay fast, and TensorFlow is
imported only by the readers that need it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ._gc import paused_gc
from .errors import InputError
from .options import LoadOptions, RenderOptions

if TYPE_CHECKING:
    from .hierarchy import Hierarchy
    from .inference import ShapeReport
    from .model import GraphModel
    from .readers.base import Discovery, GraphSource
    from .resources import Cost

__all__ = ["Graph", "load"]


class Graph:
    """One loaded graph, with what was found around it.

    Attributes
    ----------
    model:
        The op graph (:class:`graphviz_tb.model.GraphModel`, a networkx MultiDiGraph inside).
    discovery:
        Every graph the input holds; ``index`` says which one this is.
    cost:
        What the graph holds that costs memory (see :mod:`graphviz_tb.resources`); each
        render is checked against it first.
    """

    def __init__(self, model: GraphModel, discovery: Discovery, index: int,
                 cost: Cost | None = None) -> None:
        self.model = model
        self.cost = cost
        self.discovery = discovery
        self.index = index
        self._hierarchies: dict[tuple, Hierarchy] = {}
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
        """The scope tree for these options (cached per grouping option).

        Numbered series are folded as each group's children are first read, so a default
        view of a large graph never pays for scopes it does not draw; ``settle()`` the
        result to fold every level at once.
        """
        # Stages are imported when first used: `import graphviz_tb` stays cheap.
        from .structure import structured_hierarchy

        options = options or RenderOptions()
        if options.infer_shapes or options.input_shapes:
            self.infer_shapes(options.input_shapes)
        key = (options.series, options.prefix_groups, options.series_min)
        if key not in self._hierarchies:
            self._hierarchies[key] = structured_hierarchy(self.model, options)
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
        from .inference import infer_shapes  # imported when used: it is large

        items = input_shapes.items() if isinstance(input_shapes, Mapping) else input_shapes
        pins = tuple((name, tuple(dims)) for name, dims in items)
        if self.shape_report is None or pins != self._shape_pins:
            self.shape_report = infer_shapes(self.model, self.source.load(), pins,
                                             where=self.name)
            self._shape_pins = pins
            self._hierarchies.clear()
        return self.shape_report

    def count_nodes(self, index: int) -> int:
        """Top-level NodeDefs of graph ``index`` in the discovery (parsed on first use)."""
        if index not in self._counts:
            self._counts[index] = len(self.discovery.graphs[index].load().node)
        return self._counts[index]

    def info(self) -> dict[str, Any]:
        """A JSON-ready summary: source kind, graphs found, exact op and edge counts, groups."""
        from .info import graph_info  # imported when used, as every stage here

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
        from .shape_report import row_json, shape_rows  # imported when used

        return [row_json(row) for row in shape_rows(self.model, patterns=patterns,
                                                    changes=changes)]

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
        from .render import format_for, render_bytes, write_output  # imported when used
        from .resources import check_render  # as above

        options = replace(options or RenderOptions(), **kwargs) if kwargs else (
            options or RenderOptions())
        fmt = format_for(path, format)
        if self.cost is not None:
            check_render(self.cost, self.name, fmt, options)
        data = render_bytes(self.hierarchy(options), fmt, options, title=self.name,
                            progress=progress)
        if path is not None:
            write_output(path, data)
            return None
        return data if fmt in ("png", "pdf") else data.decode("utf-8")

    def _repr_mimebundle_(self, include: Container[str] | None = None,
                          exclude: Container[str] | None = None) -> dict[str, str]:
        """Jupyter's display hook: SVG, or the interactive viewer after
        ``graphviz_tb.set_display("html")`` (see :mod:`graphviz_tb.jupyter`)."""
        from .jupyter import mimebundle  # imported when a notebook asks

        return mimebundle(self, include, exclude)

    def __repr__(self) -> str:
        return f"<graphviz_tb.Graph {self.name!r}: {self.model.top_level_nodes:,} nodes>"


@paused_gc
def load(source: Any, options: LoadOptions | None = None, **kwargs: Any) -> Graph:
    """Read a graph from a path or a live TensorFlow object.

    Parameters
    ----------
    source:
        A path (GraphDef ``.pb``/``.pbtxt``, ``.meta``, SavedModel directory, event file or
        logdir, ``.keras``/``.h5``) or a live ``tf.Graph``, ``GraphDef``, ``tf.function``,
        ConcreteFunction or ``keras.Model``.
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
    # The readers and the model (protobuf, networkx) are imported when a graph is loaded.
    from .functions import build_model
    from .readers import discover, discover_object, select
    from .resources import check_load, graph_cost

    if options is None:
        options = LoadOptions(**kwargs)
    elif kwargs:
        options = replace(options, **kwargs)
    try:
        if isinstance(source, (str, os.PathLike)):
            discovery = discover(source, options)
        else:
            discovery = discover_object(source, options)
        chosen = select(discovery, options)
        index = discovery.graphs.index(chosen)
        graph_def = chosen.load()
    except RecursionError:
        # JSON, protobuf text format and Keras configs are parsed recursively; only input
        # nested thousands deep (no real model is) gets here, from whichever reader read it.
        what = os.fspath(source) if isinstance(source, (str, os.PathLike)) else "the object"
        raise InputError(f"{what} is nested too deeply to read (thousands of levels of "
                         "brackets or messages); it is malformed or not a model") from None
    where = (f"{discovery.path} ({chosen.name})" if len(discovery.graphs) > 1
             else str(discovery.path))
    # Before the model is built: a graph too large for the machine gets one line, not a
    # kill by the kernel halfway through.
    names = [node.name for node in graph_def.node]  # read once, for both
    cost = graph_cost(graph_def, options, names)
    check_load(cost, where)
    model = build_model(graph_def, source=chosen, options=options, kind=chosen.kind,
                        where=where, names=names)
    return Graph(model, discovery, index, cost)
