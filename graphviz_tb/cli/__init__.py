"""``tbgraph``: the command line, a thin layer over :mod:`graphviz_tb.api`.

Only argument parsing and messages live here, one module per command family (``render``:
``info`` and ``render``; ``shapes``: ``shapes`` and ``trace``), with what they share in
``common``.  Errors caused by the input print one line on
stderr and exit 1; usage errors exit 2 (argparse's convention).  Nothing heavy is imported
before a subcommand runs, so ``tbgraph --help`` answers at once.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import gc
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import NoReturn

from ..errors import GraphvizTbError, terminal_line
from ..limits import limit_process
from ..version import __version__
from . import diff, render, shapes
from .common import engine_description, engine_line

__all__ = ["DEBUG_VARIABLE", "build_parser", "main", "run"]

#: Set, a fault of tbgraph's own ends in its traceback rather than in one line.
DEBUG_VARIABLE = "TBGRAPH_DEBUG"

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
  tbgraph diff old.pb new.pb -o d.html  what changed between two versions (exit 1 if any)

environment:
  TBGRAPH_MEMORY_LIMIT=8G               refuse, in one line, a graph whose estimated memory is
                                        over this (default: the memory available); the process
                                        is also capped there
  TBGRAPH_DEBUG=1                       a fault of tbgraph's own prints its traceback

Run 'tbgraph COMMAND --help' for the options of each command.
"""


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser (also used to generate the CLI reference in docs/)."""
    parser = _Parser(
        prog="tbgraph", description=_DESCRIPTION, epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_Version,
                        help="show the version and the Graphviz engine in use, then exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    render.add_commands(sub)
    diff.add_commands(sub)
    shapes.add_commands(sub)
    return parser


class _Parser(argparse.ArgumentParser):
    """argparse, with a hint for an option it does not know: the option meant (``--colour``
    and ``--colr-by`` are ``--color-by``), rather than the usage alone."""

    def error(self, message: str) -> NoReturn:
        if message.startswith("unrecognized arguments: "):
            known = _option_strings(self)
            for word in message.removeprefix("unrecognized arguments: ").split():
                if not word.startswith("--"):
                    continue
                typed = word.split("=", 1)[0].replace("colour", "color")
                near = [typed] if typed in known else difflib.get_close_matches(
                    typed, known, n=1, cutoff=0.6)
                near = near or [k for k in known if k.startswith(typed + "-")][:1]
                if near:
                    message += f" (did you mean {near[0]}?)"
                    break
        super().error(message)


def _option_strings(parser: argparse.ArgumentParser) -> list[str]:
    """Every long option of the parser and of its commands."""
    found: set[str] = set()
    stack = [parser]
    while stack:
        p = stack.pop()
        for action in p._actions:
            found.update(o for o in action.option_strings if o.startswith("--"))
            if isinstance(action, argparse._SubParsersAction):
                stack.extend(action.choices.values())
    return sorted(found)


class _Version(argparse.Action):
    """``--version``: the package's version and the Graphviz engine a render would use (which
    runs that engine's ``-V``, so only when asked, never for ``--help``)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        print(f"tbgraph {__version__}\n{engine_line(engine_description())}")
        parser.exit()


def _print_warnings(caught: list[warnings.WarningMessage]) -> None:
    for w in caught:
        print(f"tbgraph: warning: {terminal_line(' '.join(str(w.message).split()))}",
              file=sys.stderr)


def run() -> None:
    """The ``tbgraph`` console script: :func:`main`, then a quick exit.

    A render keeps a few hundred thousand objects alive (the model and its scope tree) until
    the end.  The cyclic collector would rescan them all whenever it ran after the build, and
    freeing them one by one at shutdown would add a large share of a big render's time.  So
    one command, one short process: the collector
    stays off (reference counting still frees everything acyclic), and once the output is
    written and the streams flushed, the process exits at once.
    """
    gc.disable()
    try:
        limit_process()
    except GraphvizTbError as exc:  # a malformed TBGRAPH_MEMORY_LIMIT
        print(f"tbgraph: error: {terminal_line(str(exc))}", file=sys.stderr)
        os._exit(1)
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
    # The status that says "could not do it": 1, or what a command declares (``diff`` says 2,
    # as diff(1) does, its 1 meaning "they differ").
    failed: int = getattr(args, "error_status", 1)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            status = func(args)
        _print_warnings(caught)
        return status
    except GraphvizTbError as exc:
        # Always one line, and model strings quoted in it cannot drive the terminal.
        message = terminal_line(" ".join(str(exc).split()))
        print(f"tbgraph: error: {message}", file=sys.stderr)
        return failed
    except MemoryError:
        # Past the cap limit_process() set (or the machine's own end): still one line.
        print("tbgraph: error: ran out of memory; the graph is too large for this machine "
              "(draw less with --depth 1 or --focus NAME, as SVG rather than HTML, or set "
              "TBGRAPH_MEMORY_LIMIT to change the cap)", file=sys.stderr)
        return failed
    except KeyboardInterrupt:
        print("tbgraph: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a fault of ours, or a library failing as nothing foresaw
        if os.environ.get(DEBUG_VARIABLE):
            raise
        message = terminal_line(" ".join(f"{type(exc).__name__}: {exc}".split()))
        print(f"tbgraph: error: internal error ({message}); this is a bug in tbgraph, please "
              f"report it with the input ({DEBUG_VARIABLE}=1 shows the traceback)",
              file=sys.stderr)
        return failed

