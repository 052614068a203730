"""``tbgraph diff``: what changed between two versions of a model, as text, JSON or a picture.

Like ``diff``, the exit status says whether the graphs differ: 0 when they are equal, 1 when
they differ, 2 for trouble (a usage error, or input it cannot read, said in one line on
stderr), so a CI step that fails on a change can tell it from a broken file.

``--markdown`` writes the changes as a pull-request comment (see
:mod:`graphviz_tb.write.diff_markdown`): on stdout in place of the summary, or to a file beside
it.  It is written last, once the picture ``-o`` asks for is written, so it never points at a
file that is not there.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from ..api import diff, load
from ..errors import SelectionError, terminal_line
from ..options import FORMATS, format_for
from .common import INPUT_HELP, Progress, add_selection, load_options, warn, wrote
from .render import add_view_arguments, render_options

__all__ = ["add_commands", "cmd_diff"]

#: ``--markdown`` alone, or ``--markdown -``: the Markdown goes to stdout.
_STDOUT = "-"


def cmd_diff(args: argparse.Namespace) -> int:
    """Compare, print the summary (or JSON, or Markdown), draw if asked, write the Markdown
    if asked; status 1 when they differ."""
    _two_paths(args)
    _check_outputs(args)
    graphs = []
    for path in (args.old, args.new):
        graph = load(path, load_options(args))
        for line in graph.model.warnings.lines():
            warn(f"{path}: {line}")
        graphs.append(graph)
    result = diff(graphs[0], graphs[1])
    if args.json:
        print(json.dumps(result.to_json(), indent=2, sort_keys=True))
    elif args.markdown != _STDOUT:
        print("\n".join(terminal_line(line) for line in result.summary()))
    if args.output:
        fmt = format_for(args.output, args.format)
        progress = Progress("laying out the diff")
        try:
            result.render(args.output, format=fmt, options=render_options(args),
                          progress=progress)
        finally:
            progress.close()
        wrote(args.output)
    if args.markdown is not None:
        to = None if args.markdown == _STDOUT else args.markdown
        text = result.markdown(to, picture=args.output, command=_picture_command(args))
        if to is None:
            sys.stdout.write(text)
        else:
            wrote(to)
    return 0 if result.equal else 1


class _Markdown(argparse.Action):
    """``--markdown [FILE]``, noting whether it came before the first path: argparse gives it
    the next word, so ``--markdown old new`` and ``old --markdown new`` took a path as FILE."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        namespace.markdown = values
        namespace.markdown_first = getattr(namespace, "old", None) is None


def _two_paths(args: argparse.Namespace) -> None:
    """Give back to the paths the one ``--markdown`` took (the comment then goes to stdout,
    as with ``--markdown`` last: never over an input), or say the second path is missing."""
    if args.new is not None:
        return
    if args.markdown in (None, _STDOUT):
        raise SelectionError("diff needs two inputs, old and new: "
                             "tbgraph diff old.pb new.pb")
    taken, args.markdown = args.markdown, _STDOUT
    args.old, args.new = (taken, args.old) if args.markdown_first else (args.old, taken)


def _check_outputs(args: argparse.Namespace) -> None:
    """Refuse, before any reading, outputs that would overwrite each other."""
    if args.json and args.markdown == _STDOUT:
        raise SelectionError("--json and --markdown both print on stdout: give --markdown a "
                             "file name to have both")
    if args.markdown not in (None, _STDOUT) and args.output is not None and \
            os.path.abspath(args.markdown) == os.path.abspath(args.output):
        raise SelectionError(f"--markdown and -o both name {args.output}: give two files")


def _picture_command(args: argparse.Namespace) -> list[str]:
    """The command line that draws this diff's full picture: the inputs, and the options
    that chose their graphs."""
    command = ["tbgraph", "diff", args.old, args.new]
    for flag, value in (("--run", args.run), ("--tag", args.tag), ("--graph", args.graph),
                        ("--tags", args.tags), ("--step", args.step),
                        ("--batch-size", args.batch_size)):
        if value is not None:
            command += [flag, str(value)]
    if args.no_functions:
        command.append("--no-functions")
    return [*command, "-o", "diff.html"]


def add_commands(sub: Any) -> None:
    """Add ``diff`` to the ``tbgraph`` subcommands."""
    diff = sub.add_parser(
        "diff", help="what changed between two versions of a model",
        usage="%(prog)s [options] old new",
        description="Compare two graphs: ops matched by name and, where names were renumbered "
                    "(a layer inserted shifts every later dense_N), by structure; each op, "
                    "edge and group classed added, removed, changed or unchanged.  Prints a "
                    "summary (or JSON, or Markdown for a pull-request comment), draws one "
                    "merged picture with -o, and exits 1 when "
                    "the graphs differ, 0 when they are equal, 2 when it cannot compare "
                    "them, like diff(1).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
               "  tbgraph diff old.pb new.pb                 what changed, in words\n"
               "  tbgraph diff old.pb new.pb -o diff.html    the merged graph to explore\n"
               "  tbgraph diff old.pb new.pb --json          for CI: 1 if they differ, 2 on error\n"
               "  tbgraph diff old.onnx new.onnx --markdown  a pull-request comment (< 60 KB)\n"
               "  tbgraph diff old.pb new.pb -o diff.html --markdown comment.md\n"
               "                                             the picture, and a comment naming it\n"
               "  tbgraph diff logs/run1 logs/run2 --graph 1\n",
    )
    diff.add_argument("old", help=f"the old version: {INPUT_HELP}")
    # Optional to argparse only: ``--markdown`` may have taken it (see _two_paths).
    diff.add_argument("new", nargs="?", help="the new version, of any kind render accepts")
    add_selection(diff)
    out = diff.add_argument_group("output")
    out.add_argument("--json", action="store_true",
                     help="print every change as JSON instead of the summary (format "
                          "'tbgraph-diff' version 2: ops, and edges by their ends)")
    out.add_argument("--markdown", nargs="?", const=_STDOUT, metavar="FILE", action=_Markdown,
                     help="the changes as Markdown for a pull-request comment, under 60 KB: "
                          "counts, the changed modules, the changed ops, and where the full "
                          "picture is (the -o file, else the command that draws it); printed "
                          "instead of the summary, or written to FILE")
    out.add_argument("-o", "--output", metavar="FILE",
                     help="also draw the merged graph; the extension picks the format (.svg "
                          ".png .pdf .dot .html)")
    out.add_argument("--format", choices=FORMATS, help="force the output format")
    add_view_arguments(diff)
    diff.set_defaults(func=cmd_diff, color_by="diff", error_status=2)
