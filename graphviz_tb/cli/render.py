"""``tbgraph info`` and ``tbgraph render``: what an input holds, and its picture."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..api import format_info, list_graphs
from ..errors import InputError
from ..options import COLOR_BY, FORMATS, RANKDIRS, RenderOptions, format_for
from .common import (
    Progress,
    add_input,
    add_shape_arguments,
    count,
    engine_description,
    load_graph,
    load_options,
    wrote,
)
from .shapes import print_shape_failure

__all__ = ["add_commands", "add_view_arguments", "cmd_info", "cmd_render", "render_options"]


def cmd_info(args: argparse.Namespace) -> int:
    """Print what the input holds, as text or JSON."""

    try:
        info = load_graph(args).info()
    except InputError:
        if args.graph is not None:
            raise
        # No graph of the input can be drawn: list them all, each with what refuses it,
        # then the one-line error.
        _print_info(list_graphs(args.input, load_options(args)), args.json)
        raise
    _print_info(info, args.json)
    return 0


def _print_info(info: dict[str, Any], as_json: bool) -> None:
    if as_json:
        info["engine"] = engine_description()  # what `render` would draw it with
        print(json.dumps(info, indent=2, sort_keys=True))
    else:
        print(format_info(info))


def render_options(args: argparse.Namespace, **overrides: Any) -> RenderOptions:
    """The :class:`RenderOptions` of the arguments :func:`add_view_arguments` added."""
    fields = dict(
        depth=args.depth, budget=max(1, args.budget), expand=tuple(args.expand or ()),
        collapse=tuple(args.collapse or ()), expand_all=args.expand_all, focus=args.focus,
        radius=args.radius, color_by=args.color_by, series=not args.no_series,
        prefix_groups=not args.no_prefix_groups, aux=not args.no_aux,
        shapes=not args.no_shapes, dtypes=args.dtypes, rankdir=args.rankdir, theme=args.theme,
        title=args.title, legend=not args.no_legend,
        input_shapes=tuple(getattr(args, "input_shape", None) or ()),
        infer_shapes=getattr(args, "infer_shapes", False),
    )
    fields.update(overrides)
    return RenderOptions(**fields)


def default_output(source: str, fmt: str) -> str:
    """``model.pb`` -> ``model.svg`` beside it; a directory named only by ``.``, ``..`` or ``/``
    (which has no name to put a suffix on) -> its real name, in the current directory."""
    path = Path(source.rstrip("/") or "/")
    if path.name in ("", ".", ".."):
        return f"{path.resolve().name or 'graph'}.{fmt}"
    return str(path.with_suffix(f".{fmt}"))


def cmd_render(args: argparse.Namespace) -> int:
    """Draw the input; ``-o -`` writes to stdout."""
    fmt = format_for(args.output, args.format)
    output = args.output or default_output(args.input, fmt)
    options = render_options(args)
    graph = load_graph(args)
    progress = Progress(f"laying out {Path(args.input).name}")
    try:
        if output == "-":
            data = graph.render(format=fmt, options=options, progress=progress)
        else:
            graph.render(output, format=fmt, options=options, progress=progress)
    finally:
        progress.close()
    print_shape_failure(graph)
    if output == "-":
        sys.stdout.buffer.write(data if isinstance(data, bytes) else (data or "").encode("utf-8"))
    else:
        wrote(output)
    return 0


def add_view_arguments(p: argparse.ArgumentParser) -> None:
    """What is shown and its style: shared by ``render`` and ``diff``."""
    view = p.add_argument_group("what is shown")
    view.add_argument("--depth", type=count, metavar="N",
                      help="open groups down to depth N (1: the top level, all collapsed); "
                           "default: open the biggest groups until the picture is an "
                           "overview of at most --budget boxes")
    view.add_argument("--budget", type=count, default=40, metavar="N",
                      help="the most boxes the default view opens up to (default 40); in "
                           "a training step the model opens first, its gradients and "
                           "optimizer stay closed")
    view.add_argument("--expand", action="append", metavar="PATTERN",
                      help="open groups whose full name matches this glob (repeatable)")
    view.add_argument("--collapse", action="append", metavar="PATTERN",
                      help="keep groups matching this glob closed (repeatable; wins over "
                           "--expand)")
    view.add_argument("--expand-all", action="store_true", help="open every group")
    view.add_argument("--focus", metavar="NODE",
                      help="draw only the neighbourhood of this op or group")
    view.add_argument("--radius", type=count, default=2, metavar="K",
                      help="with --focus: how many edges away to reach (default 2)")
    view.add_argument("--no-series", action="store_true",
                      help="do not fold numbered siblings (add_1 ... add_9) into series")
    view.add_argument("--no-prefix-groups", action="store_true",
                      help="do not split flat groups by shared name prefix (Keras 3 names)")
    view.add_argument("--no-aux", action="store_true",
                      help="keep high-degree nodes (init, save, summaries) in place")
    style = p.add_argument_group("style")
    style.add_argument("--color-by", choices=COLOR_BY, default="structure",
                       help="fill colour: same structure (default), op type, device, dtype, "
                            "or what each op cost when it ran (compute-time, memory: from run "
                            "metadata or a profiler capture, see --run-metadata)")
    style.add_argument("--no-shapes", action="store_true", help="no tensor shapes on edges")
    style.add_argument("--dtypes", action="store_true", help="add dtypes to edge labels")
    style.add_argument("--rankdir", choices=RANKDIRS, default="BT",
                       help="direction: BT puts inputs at the bottom (default), TB, LR, RL")
    style.add_argument("--theme", choices=("light", "dark"), default="light")
    style.add_argument("--title", help="a title above the graph")
    style.add_argument("--no-legend", action="store_true", help="leave out the legend")


def add_commands(sub: Any) -> None:
    """Add ``info`` and ``render`` to the ``tbgraph`` subcommands."""
    info = sub.add_parser(
        "info", help="summarise what an input holds",
        description="Print what an input holds: its kind, every graph found, exact op and edge "
                    "counts, functions, top op types, top-level groups and warnings.",
    )
    add_input(info)
    info.add_argument("--json", action="store_true", help="print the summary as JSON")
    info.set_defaults(func=cmd_info)

    render = sub.add_parser(
        "render", help="draw a graph as SVG, PNG, PDF, DOT or interactive HTML",
        description="Draw a graph.  Name scopes, function bodies and series are drawn as "
                    "boxes, the biggest opened until the picture is an overview (see "
                    "--depth and --budget); groups with the same internal structure share a "
                    "colour; data edges are solid and labelled with tensor shapes, control "
                    "edges dashed, reference edges bold; inputs sit at the bottom.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
               "  tbgraph render model.pb                    model.svg beside the input\n"
               "  tbgraph render model.pb -o model.html      one offline interactive file\n"
               "  tbgraph render logs/ -o g.png --depth 2    two levels open\n"
               "  tbgraph render model.pb --expand 'conv*' --color-by op\n"
               "  tbgraph render model.pb --focus loss/Mean --radius 3\n",
    )
    add_input(render)
    out = render.add_argument_group("output")
    out.add_argument("-o", "--output", metavar="FILE",
                     help="output file; its extension picks the format (.svg .png .pdf .dot "
                          ".html); '-' writes to stdout; default: INPUT with .svg")
    out.add_argument("--format", choices=FORMATS, help="force the output format")
    add_view_arguments(render)
    add_shape_arguments(render)
    render.set_defaults(func=cmd_render)
