"""graphviz_tb: readable pictures of TensorFlow graphs, without a running TensorBoard.

>>> import graphviz_tb
>>> graph = graphviz_tb.load("samples/mnist_tf1.pb")      # doctest: +SKIP
>>> graph.render("mnist.svg", depth=2)                     # doctest: +SKIP

The public surface is exactly ``__all__``; everything else is internal.  The Keras callback,
``graphviz_tb.keras.OpGraphCallback``, is imported on first use: it imports Keras.
"""

import importlib as _importlib
from types import ModuleType as _ModuleType

from .api import Diff, Graph, diff, load
from .errors import (
    CorruptRecordError,
    ExecutableNotFound,
    GraphvizTbError,
    GraphvizTbWarning,
    InputError,
    NoGraphError,
    SelectionError,
    TensorFlowRequired,
)
from .jupyter import set_display
from .options import LoadOptions, RenderOptions
from .version import __version__

__all__ = [
    "CorruptRecordError",
    "Diff",
    "ExecutableNotFound",
    "Graph",
    "GraphvizTbError",
    "GraphvizTbWarning",
    "InputError",
    "LoadOptions",
    "NoGraphError",
    "RenderOptions",
    "SelectionError",
    "TensorFlowRequired",
    "__version__",
    "diff",
    "load",
    "set_display",
]


def __getattr__(name: str) -> _ModuleType:
    """``graphviz_tb.keras`` without an import of its own (it imports Keras, so only then)."""
    if name == "keras":
        return _importlib.import_module(".keras", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
