"""The model stage's driver: a PyTorch trace's or an ONNX model's plumbing folded
(:mod:`.pytorch`, :mod:`.onnx`), a GraphDef's
ops (:mod:`.builder`), then its function calls opened into their bodies (:mod:`.calls`), then
variable reads given their variables' shapes (:mod:`.handles`), then the edges that close
cycles marked."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import NoGraphError
from ..options import LoadOptions
from ..read.graphdef import as_graph_def
from .builder import finish_model, start_model
from .calls import inline_calls, inline_library
from .handles import label_variable_reads
from .onnx import fold_onnx, is_onnx_graph
from .pytorch import fold_trace, is_jit_trace

if TYPE_CHECKING:
    from ..read.base import GraphSource
    from .graph import GraphModel

__all__ = ["build_model"]


def build_model(
    graph_def: Any,
    *,
    source: GraphSource | None = None,
    options: LoadOptions | None = None,
    kind: str = "op",
    where: str = "graph",
    names: list[str] | None = None,
) -> GraphModel:
    """The model stage whole: a GraphDef's ops (:func:`~graphviz_tb.model.builder.start_model`),
    then its function calls opened into their bodies, then cycles marked.

    Parameters
    ----------
    graph_def:
        A ``GraphDef`` message (tensorboard's or TensorFlow's class).
    source:
        Where it came from, kept for ``info`` and titles.
    options:
        ``functions`` opens calls into their bodies; ``max_function_ops`` caps that.
    kind:
        ``op`` or ``conceptual`` (Keras layer graphs).
    where:
        Names the input in error messages.
    names:
        The NodeDefs' names, when the caller read them already.

    Raises
    ------
    NoGraphError
        When the GraphDef has no ops and no function library to show.
    """
    options = options or LoadOptions()
    traced = None
    stored = len(graph_def.node)
    if is_jit_trace(graph_def):
        traced = fold_trace(as_graph_def(graph_def, where), where)
    elif is_onnx_graph(graph_def):
        traced = fold_onnx(as_graph_def(graph_def, where))
    if traced is not None:
        graph_def, names = traced.graph_def, None
    model, builder, names = start_model(graph_def, source=source, kind=kind, where=where,
                                        names=names)
    if traced is not None:
        traced.annotate(model)
        # Nodes as stored, as TensorBoard (a trace's NodeDefs) or onnx (its nodes) counts them
        model.top_level_nodes = traced.stored_nodes if traced.stored_nodes is not None \
            else stored
    order = None
    inlined = options.functions and bool(model.functions)
    if inlined:
        if names:
            order = inline_calls(model, builder, names, options)
        else:
            inline_library(model, builder, options)
    elif not names:
        raise NoGraphError(f"{where}: the graph holds no ops (only a function library)")
    label_variable_reads(model)
    # Opened calls add ops and edges in their own ways: the wiring's note holds without them.
    return finish_model(model, order, backward=None if inlined else builder.backward)
