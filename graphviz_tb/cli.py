"""``tbgraph``: the command line, a thin layer over :mod:`graphviz_tb.api`.

Only argument parsing and messages live here.  Errors caused by the input print one line on
stderr and exit 1; usage errors exit 2 (argparse's convention).  Nothing heavy is imported
before a subcommand runs, so ``tbgraph --help`` answers at once.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Callable, Sequence

from . import __version__
from .errors import GraphvizTbError
from .options import LoadOptions

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
    return parser


def _print_warnings(caught: list[warnings.WarningMessage]) -> None:
    for w in caught:
        print(f"tbgraph: warning: {w.message}", file=sys.stderr)


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
        message = " ".join(str(exc).split())  # always one line
        print(f"tbgraph: error: {message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("tbgraph: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0

