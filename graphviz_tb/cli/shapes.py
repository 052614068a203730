"""``tbgraph shapes`` and ``tbgraph trace``, and the shape-inference flags ``render`` shares.

These are the commands for debugging shape mismatches: a table of every op's input and
output shapes, a tree of the shapes along a node's inputs, and ``--input-shape`` to pin the
inputs and see where TensorFlow's inference breaks.  Like every command module, this one
imports nothing heavy until a command runs, so ``tbgraph --help`` stays instant.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from ..errors import terminal_line
from .common import add_input, add_shape_arguments, load_graph, warn

if TYPE_CHECKING:
    from ..api import Graph
    from ..model.inference import ShapeReport

__all__ = ["add_commands", "cmd_shapes", "cmd_trace", "print_shape_failure"]

def _depth(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a depth (0 or more)")
    return int(text)


def _infer(graph: Graph, args: argparse.Namespace) -> ShapeReport | None:
    if not (args.infer_shapes or args.input_shape):
        return None
    report = graph.infer_shapes(args.input_shape or ())
    for note in report.notes:
        warn(note)
    return report


def print_shape_failure(graph: Graph, stream: Any = None) -> None:
    """Print where shape inference failed, if it ran and failed (stderr by default)."""
    for line in graph.shape_failures()[0]:
        print(line, file=stream or sys.stderr)


def cmd_shapes(args: argparse.Namespace) -> int:
    """The table of op shapes; status 1 when TensorFlow's inference fails."""
    graph = load_graph(args)
    report = _infer(graph, args)
    if args.json:
        print(json.dumps({
            "graph": graph.name,
            "inferred": report is not None,
            "pins": [{"node": p.node, "before": None if p.before is None else list(p.before),
                      "after": list(p.after)} for p in (report.pins if report else ())],
            "failures": graph.shape_failures()[1],
            "ops": graph.shapes(args.node or (), changes=args.changes),
        }, indent=2))
    else:
        lines, recorded = graph.shape_table(args.node or (), changes=args.changes)
        if lines:
            print("\n".join(lines))
        else:
            print("tbgraph: no ops match", file=sys.stderr)
        if report is None and not recorded:
            print("tbgraph: note: the file records few shapes; --infer-shapes asks TensorFlow",
                  file=sys.stderr)
        if report is not None and not report.ok:
            print()
            print_shape_failure(graph, sys.stdout)
    return 1 if report is not None and not report.ok else 0


def cmd_trace(args: argparse.Namespace) -> int:
    """The tree of a node's inputs (or outputs) with shapes; status 1 when inference fails."""
    graph = load_graph(args)
    report = _infer(graph, args)
    print("\n".join(graph.trace(args.node, depth=args.depth, outputs=args.outputs)))
    if report is not None and not report.ok:
        first = report.failures[0]
        print(terminal_line(f"tbgraph: shape inference failed at {first.node} ({first.op}); "
                            "'tbgraph shapes' with the same flags explains"), file=sys.stderr)
        return 1
    return 0


def add_commands(sub: Any) -> None:
    """Add ``shapes`` and ``trace`` to the ``tbgraph`` subcommands."""
    shapes = sub.add_parser(
        "shapes", help="table of ops with input and output shapes; where pinned shapes break",
        description="Print every op with the shapes and dtypes of its inputs and outputs, in\n"
                    "dataflow order (? = unknown dimension, * = unknown rank).  With\n"
                    "--input-shape, TensorFlow infers the shapes again from the pinned inputs\n"
                    "and the command names the first op where they break (exit status 1).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
               "  tbgraph shapes model.pb --changes          where ranks change or dims are "
               "unknown\n"
               "  tbgraph shapes model.pb --node 'dense*'    only matching ops\n"
               "  tbgraph shapes frozen.pb --input-shape pixels=1,28,29\n"
               "                                             where a 28x29 input breaks\n",
    )
    add_input(shapes)
    shapes.add_argument("--node", action="append", metavar="PATTERN",
                        help="only ops whose full name matches this glob, or lie in the scope "
                             "it names (repeatable)")
    shapes.add_argument("--changes", action="store_true",
                        help="only ops where the rank changes or a dimension is unknown")
    shapes.add_argument("--json", action="store_true", help="print the table as JSON")
    add_shape_arguments(shapes)
    shapes.set_defaults(func=cmd_shapes)

    trace = sub.add_parser(
        "trace", help="the chain of a node's inputs (or outputs) with shapes",
        description="Print the tree of a node's inputs, one line per edge with the tensor it "
                    "carries; --outputs follows consumers instead.  Control inputs are marked "
                    "^control; an op expanded once is not expanded again.",
    )
    add_input(trace)
    trace.add_argument("node", metavar="NODE", help="the op's full name (or a tensor, op:N)")
    trace.add_argument("--depth", type=_depth, default=5, metavar="K",
                       help="levels to follow (default 5; 0 = all)")
    trace.add_argument("--outputs", action="store_true",
                       help="follow the node's consumers instead of its inputs")
    add_shape_arguments(trace)
    trace.set_defaults(func=cmd_trace)
