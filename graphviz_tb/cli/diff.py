"""``tbgraph diff``: what changed between two versions of a model, as text, JSON or a picture.

Like ``diff``, the exit status says whether the graphs differ: 0 when they are equal, 1 when
they differ, 2 for trouble (a usage error, or input it cannot read, said in one line on
stderr), so a CI step that fails on a change can tell it from a broken file.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from ..api import diff, load
from ..errors import terminal_line
from ..options import FORMATS, format_for
from .common import INPUT_HELP, Progress, add_selection, load_options, warn
from .render import add_view_arguments, render_options

__all__ = ["add_commands", "cmd_diff"]


def cmd_diff(args: argparse.Namespace) -> int:
    """Compare, print the summary (or JSON), draw if asked; status 1 when they differ."""

    graphs = []
    for path in (args.old, args.new):
        graph = load(path, load_options(args))
        for line in graph.model.warnings.lines():
            warn(f"{path}: {line}")
        graphs.append(graph)
    result = diff(graphs[0], graphs[1])
    if args.json:
        print(json.dumps(result.to_json(), indent=2, sort_keys=True))
    else:
        print("\n".join(terminal_line(line) for line in result.summary()))
    if args.output:
        fmt = format_for(args.output, args.format)
        progress = Progress("laying out the diff")
        try:
            result.render(args.output, format=fmt, options=render_options(args),
                          progress=progress)
        finally:
            progress.close()
        print(f"wrote {args.output} ({os.path.getsize(args.output):,} bytes)", file=sys.stderr)
    return 0 if result.equal else 1


def add_commands(sub: Any) -> None:
    """Add ``diff`` to the ``tbgraph`` subcommands."""
    diff = sub.add_parser(
        "diff", help="what changed between two versions of a model",
        description="Compare two graphs: ops matched by name and, where names were renumbered "
                    "(a layer inserted shifts every later dense_N), by structure; each op, "
                    "edge and group classed added, removed, changed or unchanged.  Prints a "
                    "summary (or JSON), draws one merged picture with -o, and exits 1 when "
                    "the graphs differ, 0 when they are equal, 2 when it cannot compare "
                    "them, like diff(1).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
               "  tbgraph diff old.pb new.pb                 what changed, in words\n"
               "  tbgraph diff old.pb new.pb -o diff.html    the merged graph to explore\n"
               "  tbgraph diff old.pb new.pb --json          for CI: 1 if they differ, 2 on error\n"
               "  tbgraph diff logs/run1 logs/run2 --graph 1\n",
    )
    diff.add_argument("old", help=f"the old version: {INPUT_HELP}")
    diff.add_argument("new", help="the new version, of any kind render accepts")
    add_selection(diff)
    out = diff.add_argument_group("output")
    out.add_argument("--json", action="store_true",
                     help="print every change as JSON instead of the summary (format "
                          "'tbgraph-diff' version 2: ops, and edges by their ends)")
    out.add_argument("-o", "--output", metavar="FILE",
                     help="also draw the merged graph; the extension picks the format (.svg "
                          ".png .pdf .dot .html)")
    out.add_argument("--format", choices=FORMATS, help="force the output format")
    add_view_arguments(diff)
    diff.set_defaults(func=cmd_diff, color_by="diff", error_status=2)
