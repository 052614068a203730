"""Live Python objects: ``tf.Graph``, GraphDef protos, ``tf.function``, ConcreteFunction and Keras
models, as a notebook user holds them.

This is the only reader that uses TensorFlow, and it imports it inside functions, so
``import graphviz_tb`` stays light.  GraphDef, MetaGraphDef and SavedModel protos (TensorFlow's
classes or TensorBoard's) need no TensorFlow at all: they are re-read through their bytes.
A ``tf.function`` or Keras model is traced into a graph with its input signature, which then
becomes the graph's named inputs and outputs.
"""

from __future__ import annotations

import warnings
from typing import Any

from google.protobuf.message import Message
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.meta_graph_pb2 import MetaGraphDef

from ..errors import InputError, NoGraphError
from ._proto import check_has_ops
from .base import Discovery, GraphSource, TensorSpec
from .keras_config import ConfigError, to_graph_def
from .keras_step import STEP_ORIGIN, keras_input_specs, one_line, trace_step
from .metagraph import source_for
from .savedmodel import SavedModel
from .tf_loader import import_keras, import_tensorflow

__all__ = ["discover", "trace_keras_file", "trace_keras_model"]

_TF_PACKAGES = frozenset({"tensorflow", "keras", "tf_keras"})
_LIVE = "<live object>"
_Traced = tuple[GraphDef, tuple[TensorSpec, ...], tuple[TensorSpec, ...]]


def discover(obj: object, step: str | None = None, batch_size: int | None = None
             ) -> Discovery:
    """List the graph(s) of a live object; with ``step``, a Keras model's graphs begin with
    what Keras runs for that step (see :mod:`.keras_step`).

    Raises
    ------
    InputError
        The object is of a kind we cannot draw, or cannot be traced (unbuilt Keras model,
        ``tf.function`` never traced and without ``input_signature``).
    TensorFlowRequired
        A TensorFlow object was given but TensorFlow cannot be imported.
    """
    if step is not None and not (callable(obj) and hasattr(obj, "layers")):
        raise InputError(f"step={step!r} draws what Keras runs for a model; pass a compiled "
                         f"keras.Model, not a {type(obj).__qualname__}")
    if isinstance(obj, Message):
        return _discover_proto(obj)
    if not any(cls.__module__.split(".")[0] in _TF_PACKAGES for cls in type(obj).__mro__):
        raise InputError(
            f"cannot draw an object of type {type(obj).__qualname__}; pass a path, a tf.Graph, "
            "a GraphDef, a tf.function, a ConcreteFunction or a Keras model"
        )
    tf = _tensorflow()
    if isinstance(obj, tf.Graph):
        graph = _to_tensorboard(obj.as_graph_def(add_shapes=True))
        return _live((GraphSource(name="tf.Graph", kind="op", origin="live",
                                  load=lambda: check_has_ops(graph, "the tf.Graph")),))
    if isinstance(obj, tf.types.experimental.ConcreteFunction):
        return _live((_traced_source(f"ConcreteFunction {_name(obj)}", _trace_concrete(obj)),))
    if isinstance(obj, tf.types.experimental.PolymorphicFunction):
        return _live((_traced_source(f"tf.function {_name(obj)}",
                                     _trace_concrete(_latest_concrete(obj))),))
    if callable(obj) and hasattr(obj, "layers"):
        return _discover_keras(obj, step, batch_size)
    raise InputError(f"cannot draw a {type(obj).__qualname__}; pass a tf.Graph, a GraphDef, a "
                     "tf.function, a ConcreteFunction or a Keras model")


def trace_keras_model(model: Any, step: str | None = None, batch_size: int | None = None
                      ) -> _Traced:
    """Trace a built Keras model into an op graph: its call (``training=False``), or with
    ``step`` what Keras runs for one step of ``fit``, ``evaluate`` or ``predict``.

    Raises InputError if the model is not built, has no known input shape, is not compiled
    for the step, or Keras does not run on TensorFlow.
    """
    tf = _tensorflow()
    name = getattr(model, "name", type(model).__name__)
    backend = _keras_backend(model)
    if backend not in (None, "tensorflow"):
        raise InputError(f"the Keras model {name!r} runs on the {backend} backend; an op graph "
                         "needs KERAS_BACKEND=tensorflow")
    if step is not None:
        graph_def, concrete = trace_step(model, step, batch_size)
        return graph_def, *_signature(concrete)
    specs = keras_input_specs(model, tf, name)
    function = tf.function(lambda inputs: model(inputs, training=False))
    try:
        concrete = function.get_concrete_function(specs)
    except (TypeError, ValueError) as exc:
        raise InputError(f"tracing the Keras model {name!r} failed: {one_line(exc)}") from exc
    return _trace_concrete(concrete)


def trace_keras_file(path: str, step: str | None = None, batch_size: int | None = None
                     ) -> GraphDef:
    """Load a ``.keras`` file with Keras (``safe_mode=True``: no code from the file runs) and
    trace it; a step needs the optimizer and loss the file was compiled with."""
    keras = import_keras("tracing a Keras file's op graph")
    # Keras' own warnings on loading (an optimizer whose state was saved before its first
    # step, say) concern training it further, not drawing it.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model = keras.saving.load_model(path, safe_mode=True,
                                            compile=step in ("train", "test"))
        except Exception as exc:  # Keras raises anything from a custom layer's from_config
            raise InputError(
                f"{path}: Keras could not load the model to trace its op graph "
                f"({one_line(exc)}); the conceptual graph needs no loading"
            ) from exc
        return trace_keras_model(model, step, batch_size)[0]


def _tensorflow() -> Any:
    return import_tensorflow("drawing live TensorFlow objects")


def _live(sources: tuple[GraphSource, ...], warnings: tuple[str, ...] = ()) -> Discovery:
    return Discovery(path=_LIVE, source_kind="live", graphs=sources, warnings=warnings)


def _to_tensorboard(graph: Message) -> GraphDef:
    """Re-read TensorFlow's GraphDef class as TensorBoard's, which the pipeline uses."""
    return GraphDef.FromString(graph.SerializeToString())


def _discover_proto(message: Message) -> Discovery:
    kind = message.DESCRIPTOR.full_name.rsplit(".", 1)[-1]
    data = message.SerializeToString()
    if kind == "GraphDef":
        graph = GraphDef.FromString(data)
        return _live((GraphSource(name="GraphDef", kind="op", origin="live",
                                  load=lambda: check_has_ops(graph, "the GraphDef")),))
    if kind == "MetaGraphDef":
        return _live((source_for(MetaGraphDef.FromString(data), "the MetaGraphDef",
                                 "MetaGraphDef", "live"),))
    if kind == "SavedModel":
        saved_model = SavedModel.FromString(data)
        if not saved_model.meta_graphs:
            raise NoGraphError("the SavedModel holds no meta graphs")
        return _live(tuple(source_for(meta, "the SavedModel", f"SavedModel #{index}", "live")
                           for index, meta in enumerate(saved_model.meta_graphs)))
    raise InputError(f"cannot draw a {message.DESCRIPTOR.full_name} protobuf; pass a GraphDef, "
                     "MetaGraphDef or SavedModel")


def _name(function: Any) -> str:
    return str(getattr(function, "name", None) or getattr(function, "__name__", "function"))


def _latest_concrete(function: Any) -> Any:
    """The concrete function to draw for a ``tf.function``: by its input_signature, else the
    most recently traced one."""
    if function.input_signature is not None:
        return function.get_concrete_function()
    traced: list[Any] = getattr(function, "_list_all_concrete_functions", list)()
    if not traced:
        raise InputError(
            f"the tf.function {_name(function)!r} has not been traced and has no input_signature; "
            "pass tf.function(..., input_signature=[...]) or f.get_concrete_function(spec)"
        )
    return traced[-1]


def _trace_concrete(concrete: Any) -> _Traced:
    graph_def = _to_tensorboard(concrete.graph.as_graph_def(add_shapes=True))
    return graph_def, *_signature(concrete)


def _signature(concrete: Any) -> tuple[tuple[TensorSpec, ...], tuple[TensorSpec, ...]]:
    """A concrete function's own inputs (not its captures) and its outputs."""
    graph = concrete.graph
    own_inputs = len(graph.inputs) - len(concrete.captured_inputs)
    inputs = tuple(_spec(tensor.op.name, tensor) for tensor in graph.inputs[:own_inputs])
    outputs = tuple(_spec(name, tensor)
                    for name, tensor in zip(_output_names(concrete), graph.outputs, strict=False))
    return inputs, outputs


def _output_names(concrete: Any) -> list[str]:
    """Output names: a dict output's keys (TensorFlow flattens dicts in sorted key order)."""
    structured = concrete.structured_outputs
    count = len(concrete.graph.outputs)
    if isinstance(structured, dict) and len(structured) == count:
        return sorted(str(key) for key in structured)
    return ["output"] if count == 1 else [f"output_{index}" for index in range(count)]


def _spec(name: str, tensor: Any) -> TensorSpec:
    shape = tensor.shape
    return TensorSpec(
        name=name,
        tensor=tensor.name,
        dtype=tensor.dtype.name,
        shape=tuple(shape.as_list()) if shape.rank is not None else None,
    )


def _traced_source(name: str, traced: _Traced, origin: str = "live") -> GraphSource:
    graph, inputs, outputs = traced
    return GraphSource(name=name, kind="op", origin=origin,
                       load=lambda: check_has_ops(graph, name), inputs=inputs, outputs=outputs)


def _discover_keras(model: Any, step: str | None, batch_size: int | None) -> Discovery:
    """A Keras model: what Keras runs for ``step`` if asked, its traced op graph and, when it
    has a config, its conceptual graph."""
    name = getattr(model, "name", "model")
    sources = [_traced_source(f"keras model {name} · op graph", trace_keras_model(model))]
    if step is not None:
        sources.insert(0, _traced_source(f"keras model {name} · {step} step",
                                         trace_keras_model(model, step, batch_size),
                                         origin=STEP_ORIGIN))
    warnings: tuple[str, ...] = ()
    try:
        conceptual = to_graph_def(model.to_json())
    except (NotImplementedError, TypeError, ValueError, ConfigError) as exc:
        warnings = (f"no conceptual graph for the Keras model {name!r}: {one_line(exc)}",)
    else:
        sources.append(GraphSource(name=f"keras model {name} · conceptual", kind="conceptual",
                                   origin="live", load=lambda: conceptual))
    return _live(tuple(sources), warnings)


def _keras_backend(model: Any) -> str | None:
    """Keras 3's backend name, or None for Keras 2 (tf_keras), which always runs on TF."""
    if not any(cls.__module__.split(".")[0] == "keras" for cls in type(model).__mro__):
        return None
    import keras  # a Keras 3 model: keras is importable

    return str(keras.backend.backend())


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:300]
