"""``tbgraph``: the command line, a thin layer over :mod:`graphviz_tb.api`.

Only argument parsing and messages live here.  Errors caused by the input print one line on
stderr and exit 1; usage errors exit 2 (argparse's convention).  Nothing heavy is imported
before a subcommand runs, so ``tbgraph --help`` answers at once.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import sys
import warnings
from collections.abc import Callable, Sequence

from . import __version__
from .cli_shapes import add_commands, add_shape_arguments, print_shape_failure
from .errors import GraphvizTbError, printable
from .options import COLOR_BY, RANKDIRS, LoadOptions, RenderOptions
from .render import FORMATS

__all__ = ["build_parser", "main"]

_DESCRIPTION = """\
Turn TensorFlow graphs into pictures you can read, commit and share.

tbgraph reads anything that holds a graph -- GraphDef (.pb, .pbtxt), MetaGraphDef (.meta),
SavedModel directories, TensorBoard event files and logdirs, Keras model files -- collapses
name scopes into expandable groups, opens TF2 function calls into their bodies, and colours
structurally identical blocks alike.
"""

_EPILOG = """\
examples:
  tbgraph info model.pb                 what the file holds: op counts, groups, warnings
  tbgraph info logs/ --json             every graph in a logdir, as JSON
  tbgraph info logs/ --run train --graph 1
                                        pick one graph among several
  tbgraph render model.pb               model.svg: scopes collapsed, same structure = same colour
  tbgraph render model.pb -o model.html one offline file: expand, search, trace inputs
  tbgraph shapes model.pb --input-shape images=1,28,29
                                        where pinned input shapes break (needs TensorFlow)
  tbgraph trace model.pb loss/Mean      the chain of an op's inputs, with shapes

Run 'tbgraph COMMAND --help' for the options of each command.
"""


def _add_input(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", help="a .pb/.pbtxt/.meta file, a SavedModel directory, an event "
                                 "file or a logdir, or a .keras/.h5 model")
    sel = p.add_argument_group("choosing a graph (logdirs and SavedModels hold several)")
    sel.add_argument("--run", help="only graphs of this run (subdirectory of the logdir)")
    sel.add_argument("--tag", help="only graphs with this summary tag")
    sel.add_argument("--graph", type=int, metavar="N",
                     help="the N-th graph listed by 'tbgraph info' (from 0)")
    sel.add_argument("--tags", metavar="T1,T2",
                     help="SavedModel/MetaGraph tag set, e.g. 'serve' (default: serve, else "
                          "the first)")
    sel.add_argument("--no-functions", action="store_true",
                     help="keep function calls (StatefulPartitionedCall, While, If ...) closed "
                          "instead of opening their bodies")


def _load_options(args: argparse.Namespace) -> LoadOptions:
    tags = tuple(t for t in (args.tags or "").split(",") if t)
    return LoadOptions(run=args.run, tag=args.tag, graph=args.graph, tags=tags,
                       functions=not args.no_functions)


def _cmd_info(args: argparse.Namespace) -> int:
    from .api import load
    from .info import format_info

    graph = load(args.input, _load_options(args))
    info = graph.info()
    if args.json:
        print(json.dumps(info, indent=2, sort_keys=True))
    else:
        print(format_info(info))
    return 0


def _count(text: str) -> int:
    """An argparse type for ``--depth``/``--radius``: a whole number, 0 or more (a usage
    error otherwise, rather than a traceback from the options' own check)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative; use 0 or more")
    return value


def _glob_list(values: list[str] | None) -> tuple[str, ...]:
    return tuple(values or ())


def _render_options(args: argparse.Namespace) -> RenderOptions:
    return RenderOptions(
        depth=args.depth, expand=_glob_list(args.expand), collapse=_glob_list(args.collapse),
        expand_all=args.expand_all, focus=args.focus, radius=args.radius,
        color_by=args.color_by, series=not args.no_series, prefix_groups=not args.no_prefix_groups,
        aux=not args.no_aux, shapes=not args.no_shapes, dtypes=args.dtypes,
        rankdir=args.rankdir, theme=args.theme, title=args.title, legend=not args.no_legend,
        input_shapes=tuple(args.input_shape or ()), infer_shapes=args.infer_shapes,
    )


class _Progress:
    """A one-line progress bar on stderr, only on a terminal and only after a second."""

    def __init__(self, label: str) -> None:
        import time

        self.label, self._time = label, time.monotonic
        self.start = self._time()
        self.enabled = sys.stderr.isatty()
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or self._time() - self.start < 1.0 or total <= 0:
            return
        width = 30
        filled = int(width * min(done, total) / total)
        sys.stderr.write(f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] "
                         f"{done}/{total} groups")
        sys.stderr.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def _default_output(source: str, fmt: str) -> str:
    """``model.pb`` -> ``model.svg`` beside it; a directory named only by ``.``, ``..`` or ``/``
    (which has no name to put a suffix on) -> its real name, in the current directory."""
    from pathlib import Path

    path = Path(source.rstrip("/") or "/")
    if path.name in ("", ".", ".."):
        return f"{path.resolve().name or 'graph'}.{fmt}"
    return str(path.with_suffix(f".{fmt}"))


def _cmd_render(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .api import load
    from .render import format_for, render_bytes, write_output

    fmt = format_for(args.output, args.format)
    output = args.output or _default_output(args.input, fmt)
    options = _render_options(args)
    graph = load(args.input, _load_options(args))
    for line in graph.model.warnings.lines():
        print(f"tbgraph: warning: {printable(line)}", file=sys.stderr)
    progress = _Progress(f"laying out {Path(args.input).name}")
    try:
        data = render_bytes(graph, fmt, options, progress=progress)
    finally:
        progress.close()
    print_shape_failure(graph)
    if output == "-":
        sys.stdout.buffer.write(data)
    else:
        write_output(output, data)
        print(f"wrote {output} ({len(data):,} bytes)", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser (also used to generate the CLI reference in docs/)."""
    parser = argparse.ArgumentParser(
        prog="tbgraph", description=_DESCRIPTION, epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    info = sub.add_parser(
        "info", help="summarise what an input holds",
        description="Print what an input holds: its kind, every graph found, exact op and edge "
                    "counts, functions, top op types, top-level groups and warnings.",
    )
    _add_input(info)
    info.add_argument("--json", action="store_true", help="print the summary as JSON")
    info.set_defaults(func=_cmd_info)

    render = sub.add_parser(
        "render", help="draw a graph as SVG, PNG, PDF, DOT or interactive HTML",
        description="Draw a graph.  Name scopes, function bodies and series are collapsed "
                    "below the top level; groups with the same internal structure share a "
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
    _add_input(render)
    out = render.add_argument_group("output")
    out.add_argument("-o", "--output", metavar="FILE",
                     help="output file; its extension picks the format (.svg .png .pdf .dot "
                          ".html); '-' writes to stdout; default: INPUT with .svg")
    out.add_argument("--format", choices=FORMATS, help="force the output format")
    view = render.add_argument_group("what is shown")
    view.add_argument("--depth", type=_count, default=1, metavar="N",
                      help="open groups down to depth N (default 1: top level, all collapsed)")
    view.add_argument("--expand", action="append", metavar="PATTERN",
                      help="open groups whose full name matches this glob (repeatable)")
    view.add_argument("--collapse", action="append", metavar="PATTERN",
                      help="keep groups matching this glob closed (repeatable; wins over "
                           "--expand)")
    view.add_argument("--expand-all", action="store_true", help="open every group")
    view.add_argument("--focus", metavar="NODE",
                      help="draw only the neighbourhood of this op or group")
    view.add_argument("--radius", type=_count, default=2, metavar="K",
                      help="with --focus: how many edges away to reach (default 2)")
    view.add_argument("--no-series", action="store_true",
                      help="do not fold numbered siblings (add_1 ... add_9) into series")
    view.add_argument("--no-prefix-groups", action="store_true",
                      help="do not split flat groups by shared name prefix (Keras 3 names)")
    view.add_argument("--no-aux", action="store_true",
                      help="keep high-degree nodes (init, save, summaries) in place")
    style = render.add_argument_group("style")
    style.add_argument("--color-by", choices=COLOR_BY, default="structure",
                       help="fill colour: same structure (default), op type, device, dtype")
    style.add_argument("--no-shapes", action="store_true", help="no tensor shapes on edges")
    style.add_argument("--dtypes", action="store_true", help="add dtypes to edge labels")
    style.add_argument("--rankdir", choices=RANKDIRS, default="BT",
                       help="direction: BT puts inputs at the bottom (default), TB, LR, RL")
    style.add_argument("--theme", choices=("light", "dark"), default="light")
    style.add_argument("--title", help="a title above the graph")
    style.add_argument("--no-legend", action="store_true", help="leave out the legend")
    add_shape_arguments(render)
    render.set_defaults(func=_cmd_render)
    add_commands(sub)
    return parser


def _print_warnings(caught: list[warnings.WarningMessage]) -> None:
    for w in caught:
        print(f"tbgraph: warning: {printable(' '.join(str(w.message).split()))}",
              file=sys.stderr)


def run() -> None:
    """The ``tbgraph`` console script: :func:`main`, then a quick exit.

    A render keeps a few hundred thousand objects alive (the model and its scope tree) until
    the end.  The cyclic collector would rescan them all whenever it ran after the build (0.3 s
    a pass on NASNet-Large), and freeing them one by one at shutdown took 0.8 s more, a
    quarter of the whole default render.  So one command, one short process: the collector
    stays off (reference counting still frees everything acyclic), and once the output is
    written and the streams flushed, the process exits at once.
    """
    gc.disable()
    status = main()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(status)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``tbgraph``; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            status = func(args)
        _print_warnings(caught)
        return status
    except GraphvizTbError as exc:
        # Always one line, and model strings quoted in it cannot drive the terminal.
        message = printable(" ".join(str(exc).split()))
        print(f"tbgraph: error: {message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("tbgraph: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0

