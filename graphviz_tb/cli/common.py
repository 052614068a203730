"""What every ``tbgraph`` command shares: the input and its graph choice, argument types,
the shape-inference flags, loading with warnings printed, and the progress bar.

Nothing heavy is imported here: ``tbgraph --help`` builds every parser from this module.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import TYPE_CHECKING

from ..api import describe_engine, load
from ..errors import SelectionError, terminal_line
from ..options import STEPS, LoadOptions, parse_input_shape

if TYPE_CHECKING:
    from ..api import Graph

__all__ = [
    "INPUT_HELP",
    "Progress",
    "add_input",
    "add_selection",
    "add_shape_arguments",
    "count",
    "engine_description",
    "engine_line",
    "input_shape",
    "load_graph",
    "load_options",
    "warn",
    "wrote",
]


def warn(line: str) -> None:
    """A warning on stderr, one line, safe for the terminal and long names cut (see
    :func:`~graphviz_tb.errors.terminal_line`)."""
    print(f"tbgraph: warning: {terminal_line(line)}", file=sys.stderr)


def wrote(path: str) -> None:
    """The line saying where the output went, with its size when it is a file (a device or
    pipe such as ``/dev/null`` has none worth giving)."""
    size = f" ({os.path.getsize(path):,} bytes)" if os.path.isfile(path) else ""
    print(f"wrote {path}{size}", file=sys.stderr)


#: What an input may be, for the help of every command.
INPUT_HELP = ("a .pb/.pbtxt/.meta file, a SavedModel directory, an event file or a logdir, or a "
              ".keras/.h5 model")


def add_input(p: argparse.ArgumentParser) -> None:
    """The positional input and the options choosing one graph among several."""
    p.add_argument("input", help=INPUT_HELP)
    add_selection(p)


def add_selection(p: argparse.ArgumentParser) -> None:
    """The options choosing one graph among several in an input."""
    sel = p.add_argument_group("choosing a graph (logdirs and SavedModels hold several)")
    sel.add_argument("--run", help="only graphs of this run (subdirectory of the logdir)")
    sel.add_argument("--tag", help="only graphs with this summary tag")
    sel.add_argument("--graph", type=int, metavar="N",
                     help="the N-th graph listed by 'tbgraph info' (from 0)")
    sel.add_argument("--tags", metavar="T1,T2",
                     help="SavedModel/MetaGraph tag set, e.g. 'serve' (default: serve, else "
                          "the first)")
    sel.add_argument("--run-metadata", metavar="TAG|FILE",
                     help="the recorded step to colour by with --color-by compute-time/memory: "
                          "a run metadata tag or profiler session of the graph's run (listed by "
                          "'tbgraph info'), or a RunMetadata/StepStats or .xplane.pb file "
                          "(default: the run's latest)")
    sel.add_argument("--no-functions", action="store_true",
                     help="keep function calls (StatefulPartitionedCall, While, If ...) closed "
                          "instead of opening their bodies")
    keras = p.add_argument_group("Keras (a compiled model saved as .keras; needs TensorFlow)")
    keras.add_argument("--step", choices=STEPS,
                       help="draw what Keras runs for one step of fit (train), evaluate "
                            "(test) or predict, with the optimizer and loss the file was "
                            "compiled with")
    keras.add_argument("--batch-size", type=positive, metavar="N",
                       help="with --step: the batch size to trace the step for (default: "
                            "any, drawn as ?)")


def load_options(args: argparse.Namespace) -> LoadOptions:
    """The :class:`LoadOptions` of the arguments :func:`add_input` added."""
    tags = tuple(t for t in (args.tags or "").split(",") if t)
    if args.batch_size is not None and args.step is None:
        raise SelectionError("--batch-size sets the batch of a traced step: it needs --step")
    return LoadOptions(run=args.run, tag=args.tag, graph=args.graph, tags=tags,
                       functions=not args.no_functions, run_metadata=args.run_metadata,
                       step=args.step, batch_size=args.batch_size)


def load_graph(args: argparse.Namespace) -> Graph:
    """Load the input the arguments name, printing the model's warnings."""

    graph = load(args.input, load_options(args))
    for line in graph.model.warnings.lines():
        warn(line)
    return graph


def engine_description() -> dict[str, object]:
    """The Graphviz engine a render would use (see :func:`graphviz_tb.api.describe_engine`), or
    ``name: None`` and the reason there is none; ``info`` and ``--version`` need no engine."""
    return describe_engine()


def engine_line(described: dict[str, object]) -> str:
    """:func:`engine_description` as one line for the terminal."""
    if described["name"] is None:
        return f"Graphviz engine: none ({described['error']})"
    release = "" if described["graphviz"] == described["version"] else \
        f" (Graphviz {described['graphviz']})"
    formats = ", ".join(str(f).upper() for f in described["formats"])  # type: ignore[attr-defined]
    return (f"Graphviz engine: {described['name']} {described['version']}{release}, "
            f"{described['path']}; draws {formats}")


def count(text: str) -> int:
    """An argparse type for ``--depth``/``--radius``: a whole number, 0 or more (a usage
    error otherwise, rather than a traceback from the options' own check)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative; use 0 or more")
    return value


def positive(text: str) -> int:
    """An argparse type for ``--batch-size``: a whole number, 1 or more."""
    value = count(text)
    if value < 1:
        raise argparse.ArgumentTypeError("use 1 or more")
    return value


def input_shape(text: str) -> tuple[str, tuple[int | None, ...]]:
    """An argparse type for ``--input-shape NAME=DIMS`` (see
    :func:`~graphviz_tb.options.parse_input_shape`): a bad one is a usage error."""
    try:
        return parse_input_shape(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_shape_arguments(parser: argparse.ArgumentParser) -> None:
    """``--input-shape`` and ``--infer-shapes`` (on ``render``, ``shapes`` and ``trace``)."""
    group = parser.add_argument_group("shape inference (needs TensorFlow: "
                                      "pip install 'graphviz_tb[tf]')")
    group.add_argument("--input-shape", action="append", type=input_shape,
                       metavar="NAME=DIMS",
                       help="pin a placeholder's shape (repeatable; ? or -1 for an unknown "
                            "dimension), drop the file's recorded shapes and infer again; "
                            "shows where the shapes break")
    group.add_argument("--infer-shapes", action="store_true",
                       help="fill in shapes with TensorFlow's own shape inference")


class Progress:
    """A one-line progress bar on stderr, only on a terminal and only after a second."""

    def __init__(self, label: str) -> None:
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
