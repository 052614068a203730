"""The option types shared by the Python API and the CLI.

Options travel through the pipeline as frozen dataclasses, never as globals, so a render is a
pure function of (input, options) and its output is byte-identical for the same pair.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Generic, TypeVar, overload

from .errors import GraphvizTbError

_Stage = TypeVar("_Stage")

__all__ = ["COLOR_BY", "COST_MODES", "FORMATS", "RANKDIRS", "STAGES", "GroupOptions",
           "LayoutOptions", "LoadOptions", "RenderOptions", "ShapeOptions", "StyleOptions",
           "ViewOptions", "format_for", "parse_input_shape"]

RANKDIRS = ("BT", "TB", "LR", "RL")
#: Colourings by what ops cost when they ran (run metadata or a profiler capture).
COST_MODES = ("compute-time", "memory")
COLOR_BY = ("structure", "op", "device", "dtype", *COST_MODES, "diff", "none")
#: The steps Keras runs, which ``--step`` draws: ``fit``'s, ``evaluate``'s and ``predict``'s.
STEPS = ("train", "test", "predict")

#: The output formats, each named by a file's extension.
FORMATS = ("svg", "png", "pdf", "dot", "html")


def format_for(path: str | os.PathLike[str] | None, fmt: str | None) -> str:
    """The output format: ``fmt`` if given, else the extension of ``path``, else SVG."""
    if fmt:
        fmt = fmt.lower().lstrip(".")
    elif path is not None:
        fmt = Path(path).suffix.lower().lstrip(".") or "svg"
        if fmt == "htm":
            fmt = "html"
        elif fmt == "gv":
            fmt = "dot"
    else:
        fmt = "svg"
    if fmt not in FORMATS:
        raise GraphvizTbError(f"unknown output format {fmt!r}; use one of: {', '.join(FORMATS)}")
    return fmt


@dataclass(frozen=True)
class LoadOptions:
    """How to find and read one graph in an input.

    Attributes
    ----------
    run, tag:
        In a logdir, keep only graphs of this run (subdirectory) or summary tag.
    graph:
        Index into the list of graphs found (as printed by ``tbgraph info``).
    tags:
        SavedModel / MetaGraph tag set to choose, e.g. ``("serve",)``.
    functions:
        Open function calls (``StatefulPartitionedCall``, ``While``, ``If`` ...) into their bodies.
    max_function_ops:
        Stop inlining function bodies past this many ops in total (a warning says so);
        guards against a small function called a million times.
    max_call_depth:
        Open calls nested at most this deep; a call deeper down is drawn closed (a warning
        says so).  Each body's ops are named under every call above them, so opening calls
        nested ``d`` deep holds names of length ``d`` per op: quadratic in the nesting.
    run_metadata:
        The recorded costs to colour by (``--run-metadata``): the tag of a run metadata or
        the session name of a profiler capture in the graph's run, or the path of a
        RunMetadata/StepStats file.  Default: the run's latest.
    step:
        For a Keras model or ``.keras`` file: draw what Keras runs for one step of ``fit``
        (``"train"``), ``evaluate`` (``"test"``) or ``predict`` (``"predict"``), traced by
        TensorFlow, instead of the model's own graph.
    batch_size:
        With ``step``: the batch size the step is traced for (default: any, ``?``).
    """

    run: str | None = None
    tag: str | None = None
    graph: int | None = None
    tags: tuple[str, ...] = ()
    functions: bool = True
    max_function_ops: int = 500_000
    max_call_depth: int = 100
    run_metadata: str | None = None
    step: str | None = None
    batch_size: int | None = None


@dataclass(frozen=True)
class GroupOptions:
    """What the grouping stage reads, and all it reads: the tree is a function of the model
    and this value, so a graph's trees are cached by it (see :class:`RenderOptions` for what
    each field does; a user sets them there, flat)."""

    series: bool = True
    prefix_groups: bool = True
    series_min: int = 5
    blocks: bool = True

    def __post_init__(self) -> None:
        if self.series_min < 2:
            raise ValueError("series_min must be >= 2")


@dataclass(frozen=True)
class ViewOptions:
    """What the view stage reads to choose the picture (what is open, kept and how it is
    coloured): see :class:`RenderOptions` for each field."""

    depth: int | None = None
    budget: int = 40
    expand: tuple[str, ...] = ()
    collapse: tuple[str, ...] = ()
    expand_all: bool = False
    focus: str | None = None
    radius: int = 2
    color_by: str = "structure"

    def __post_init__(self) -> None:
        if self.color_by not in COLOR_BY:
            raise ValueError(
                f"color_by must be one of {', '.join(COLOR_BY)}, not {self.color_by!r}"
            )
        if (self.depth is not None and self.depth < 0) or self.radius < 0:
            raise ValueError("depth and radius must be >= 0")
        if self.budget < 1:
            raise ValueError("budget must be at least 1")


@dataclass(frozen=True)
class LayoutOptions:
    """What the layout stage reads: the direction, the side column and what edge labels say
    (their text is measured, so it is laid out).  A scene keeps the value it was laid out
    with, and the writers read it there: the viewer lays groups out again the same way."""

    aux: bool = True
    shapes: bool = True
    dtypes: bool = False
    rankdir: str = "BT"

    def __post_init__(self) -> None:
        if self.rankdir not in RANKDIRS:
            raise ValueError(f"rankdir must be one of {', '.join(RANKDIRS)}, not {self.rankdir!r}")


@dataclass(frozen=True)
class StyleOptions:
    """What only the writers read: the theme, the title drawn above the graph, the legend."""

    theme: str = "light"
    title: str | None = None
    legend: bool = True

    def __post_init__(self) -> None:
        if self.theme not in ("light", "dark"):
            raise ValueError(f"theme must be 'light' or 'dark', not {self.theme!r}")


@dataclass(frozen=True)
class ShapeOptions:
    """What changes the model before it is grouped: shapes pinned and inferred."""

    input_shapes: tuple[tuple[str, tuple[int | None, ...]], ...] = ()
    infer_shapes: bool = False


class _Part(Generic[_Stage]):
    """One stage's options, read from the flat fields of the same names: what
    ``RenderOptions.view`` and its siblings are (a property per stage, written once)."""

    def __init__(self, stage: type[_Stage], doc: str) -> None:
        self.stage, self.__doc__ = stage, doc

    @overload
    def __get__(self, options: None, owner: type | None = None) -> _Part[_Stage]: ...

    @overload
    def __get__(self, options: object, owner: type | None = None) -> _Stage: ...

    def __get__(self, options: object, owner: type | None = None) -> _Stage | _Part[_Stage]:
        if options is None:  # on the class: the descriptor itself (documentation tools)
            return self
        return self.stage(**{f.name: getattr(options, f.name)
                             for f in fields(self.stage)})  # type: ignore[arg-type]


@dataclass(frozen=True)
class RenderOptions(ShapeOptions, StyleOptions, LayoutOptions, GroupOptions, ViewOptions):
    """What the picture shows and how.  Shared by ``render()``, the CLI and the Sphinx directive.

    Users set every option here, flat, as the CLI's flags are; it is the stages' own option
    types put together (the fields of each, in the order view, grouping, layout, style,
    shapes), and each stage is handed only its own part: :attr:`grouping`, :attr:`view`,
    :attr:`layout`, :attr:`style`, :attr:`shaping`.

    Attributes
    ----------
    depth:
        Expand groups down to this depth (1 = only the top level is shown, collapsed).  None
        (the default) opens groups by themselves until the picture is an overview: see
        ``budget``.
    budget:
        With no ``depth``, ``expand`` or ``expand_all``: the most boxes the first picture may
        show.  The biggest groups are opened first while the picture stays within it.  In a
        TF2 training step the model opens first; its gradients and optimizer stay closed,
        unless the gradients hold more than half the ops (a plain SGD step): they open then,
        within twice the budget.
    expand, collapse:
        Glob patterns on full group names to expand or keep collapsed; collapse wins.
    expand_all:
        Expand every group (large graphs then take longer to lay out).
    focus, radius:
        Draw only the ``radius``-neighbourhood of the op or group ``focus``.
    color_by:
        ``structure`` (same colour = same internal structure), ``op``, ``device``, ``dtype``,
        ``compute-time`` or ``memory`` (what each op cost when it ran, from run metadata or a
        profiler capture; each box's second line says how much) or ``none``.
    series:
        Collapse runs of numbered siblings (``add_1 ... add_9``) into one series node.
    prefix_groups:
        Split a flat group with many children into virtual groups by shared name prefix
        (Keras 3 names every layer directly under the model).
    series_min:
        A run must be at least this long to become a series.
    blocks:
        Cut a group whose names leave it flat (Inception's ``conv2d_57``,
        ``batch_normalization_57`` ... all under the model) into the blocks its dataflow
        shows: the stretches between the points every path passes through.
    aux:
        Move high-degree nodes (init, save, summaries ...) to a side area.
    shapes:
        Label data edges with their tensor shapes.
    dtypes:
        Add the dtype to edge labels.
    rankdir:
        ``BT`` puts inputs at the bottom, as TensorBoard does.
    theme:
        ``light`` or ``dark``.
    title:
        A title drawn above the graph.
    legend:
        Draw the legend of structural templates and edge styles.
    input_shapes:
        Pin placeholder shapes before drawing, as ``(("images", (8, 224, 224, 3)),)`` with
        None for an unknown dimension; TensorFlow infers the rest and the op where inference
        fails is drawn red (needs the ``[tf]`` extra).  ``--input-shape`` on the CLI.
    infer_shapes:
        Fill in missing shapes with TensorFlow's inference without pinning anything.
    """

    grouping = _Part(GroupOptions, "The grouping stage's options (the hierarchy cache's key).")
    view = _Part(ViewOptions, "The view stage's options.")
    layout = _Part(LayoutOptions, "The layout stage's options.")
    style = _Part(StyleOptions, "The writers' own options.")
    shaping = _Part(ShapeOptions, "The options that change the model.")

    def __post_init__(self) -> None:
        # Each stage's type checks its own fields: all checked here, a bad option is refused
        # where it is given, not when its stage runs.
        for stage in (ViewOptions, GroupOptions, LayoutOptions, StyleOptions):
            stage.__post_init__(self)


#: The stages' option types, which together hold every field of :class:`RenderOptions`.
STAGES: tuple[type, ...] = (GroupOptions, ViewOptions, LayoutOptions, StyleOptions, ShapeOptions)


_UNKNOWN_DIMS = frozenset({"?", "-1", "none", "None"})


def parse_input_shape(text: str) -> tuple[str, tuple[int | None, ...]]:
    """Parse ``NAME=DIMS`` (``images=8,224,224,3``; ``?`` or ``-1`` for an unknown dimension;
    ``NAME=`` for a scalar) into a pin for :attr:`RenderOptions.input_shapes`.

    Raises ValueError naming what is wrong (the CLI and the documentation plugins share it).
    """
    name, sep, dims_text = text.rpartition("=")
    if not sep or not name:
        raise ValueError(
            f"{text!r}: expected NAME=DIMS, e.g. images=8,224,224,3 (? for unknown)")
    cleaned = dims_text.strip().strip("[]()").replace("×", ",").replace("x", ",")
    dims: list[int | None] = []
    for part in (p.strip() for p in cleaned.split(",")) if cleaned.strip() else ():
        if part in _UNKNOWN_DIMS:
            dims.append(None)
        elif part.isdigit():
            dims.append(int(part))
        else:
            raise ValueError(f"{text!r}: dimension {part!r} is not a size, '?' or -1")
    return name.strip(), tuple(dims)
