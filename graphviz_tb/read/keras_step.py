"""What Keras 3's ``fit``, ``evaluate`` and ``predict`` run, traced into an op graph.

Keras 3 (``tf.keras`` since TensorFlow 2.16) no longer writes the op graph of a training step:
its ``TensorBoard`` callback writes only the layer graph.  What ``fit`` runs on the TensorFlow
backend is a ``tf.function`` (``multi_step_on_iterator``) that takes a batch from a dataset
iterator and calls another (``one_step_on_data``): the forward pass, the loss, the gradients,
the optimizer's updates and the metrics.  Here that very function is traced for a batch of the
shapes the model's inputs and loss expect, without data and without running a step, the way
``fit`` builds its state first (``_symbolic_build``).

The function captures every variable as a placeholder that TensorFlow names by a number
(``15436``).  The variables' own paths (``conv1/kernel``, ``adam/iteration``) are known here,
so each such placeholder is renamed after the variable it captures, and its
``_user_specified_name`` says the same.

Keras' private structure is read in two places, each with a fallback that still traces the
step: the trainer's ``multi_step_on_iterator`` (else the model's ``train_step`` is traced
alone) and ``_symbolic_build``.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

from tensorboard.compat.proto.graph_pb2 import GraphDef

from ..errors import InputError
from ..options import STEPS
from .tf_loader import import_tensorflow

__all__ = ["STEP_ORIGIN", "fit_function", "keras_input_specs", "one_line", "step_graph",
           "trace_step"]

#: The origin of a graph that is what Keras runs for one step (``--step``).
STEP_ORIGIN = "keras-step"

_UNSAFE_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.\-/]")


def trace_step(model: Any, step: str, batch_size: int | None = None) -> tuple[GraphDef, Any]:
    """Trace the function Keras runs for one ``step`` of ``model``: its GraphDef (TensorBoard's
    class) and the concrete function.

    Raises
    ------
    InputError
        ``step`` is unknown, the model is not compiled for it (train and test need a loss,
        train an optimizer), its inputs are unknown, or Keras cannot build or trace it.
    """
    tf = import_tensorflow(f"tracing a Keras model's {step} step")
    name = getattr(model, "name", type(model).__name__)
    if step not in STEPS:
        raise InputError(f"unknown step {step!r}; use one of: {', '.join(STEPS)}")
    if step != "predict" and not getattr(model, "compiled", False):
        raise InputError(f"the Keras model {name!r} is not compiled, so it has no {step} step: "
                         "call model.compile(optimizer=..., loss=...) first (a .keras file "
                         "saved after compile() keeps both)")
    if step == "train" and getattr(model, "optimizer", None) is None:
        raise InputError(f"the Keras model {name!r} was compiled without an optimizer, so it "
                         "has no train step")
    inputs = _with_batch(tf, keras_input_specs(model, tf, name), batch_size)
    targets = _target_specs(tf, model, inputs) if step != "predict" else None
    data = (inputs, targets) if targets is not None else (inputs,)
    try:
        if step != "predict":  # fit and evaluate build the loss, metrics and optimizer first
            model._symbolic_build(data_batch=data)
        concrete = _concrete(tf, model, step, data)
    except (TypeError, ValueError, RuntimeError, AttributeError, NotImplementedError) as exc:
        raise InputError(f"tracing the {step} step of the Keras model {name!r} failed: "
                         f"{one_line(exc)}") from exc
    return step_graph(model, concrete), concrete


def step_graph(model: Any, concrete: Any) -> GraphDef:
    """The GraphDef (TensorBoard's class) of a concrete function Keras traced for ``model``,
    its captured variables named after the variables' paths."""
    graph_def = GraphDef.FromString(concrete.graph.as_graph_def(add_shapes=True)
                                    .SerializeToString())
    _name_captures(graph_def, concrete, _variables(model))
    return graph_def


def fit_function(model: Any) -> Any:
    """The concrete function ``fit`` traced and runs for ``model``, or None before it ran (or
    where Keras keeps it elsewhere)."""
    inner = _closure(getattr(model, "train_function", None)).get("multi_step_on_iterator")
    traced: list[Any] = getattr(inner, "_list_all_concrete_functions", list)()
    return traced[-1] if traced else None


def keras_input_specs(model: Any, tf: Any, name: str) -> Any:
    """TensorSpecs in the structure the model's call expects, named after its Input layers."""
    if not getattr(model, "built", False):
        raise InputError(f"the Keras model {name!r} is not built: call it on a batch of data or "
                         "call model.build(input_shape) first")
    structure = getattr(model, "_inputs_struct", None)
    if structure is None:
        try:
            structure = model.inputs
        except (AttributeError, ValueError):
            structure = None
        if isinstance(structure, list) and len(structure) == 1:
            structure = structure[0]
    # Keras 3 keeps one input as a bare KerasTensor, which refuses to be a truth value.
    if structure is not None and tf.nest.flatten(structure):
        return tf.nest.map_structure(
            lambda t: tf.TensorSpec(t.shape, t.dtype, name=_safe_name(getattr(t, "name", None))),
            structure,
        )
    shapes = getattr(model, "_build_shapes_dict", None) or {}
    shape = next(iter(shapes.values())) if len(shapes) == 1 else None
    if isinstance(shape, (list, tuple)) and shape:
        # A subclassed model is built by its first call, on that batch: any batch will do.
        dtype = getattr(model, "input_dtype", None) or "float32"
        return tf.TensorSpec((None, *shape[1:]), dtype, name="inputs")
    raise InputError(f"the Keras model {name!r} has no recorded input shape; pass a tf.function "
                     "with an input_signature, or a ConcreteFunction, instead")


def _safe_name(name: str | None) -> str | None:
    """A Keras tensor name made valid as a TensorFlow op name (or None to let TF pick)."""
    if not name:
        return None
    cleaned = _UNSAFE_NAME_CHARS.sub("_", name.split(":")[0])
    return cleaned if re.match(r"[A-Za-z0-9.]", cleaned) else f"input_{cleaned}"


def _with_batch(tf: Any, specs: Any, batch_size: int | None) -> Any:
    """The input specs with their first dimension pinned to ``batch_size`` (when given)."""
    if batch_size is None:
        return specs
    return tf.nest.map_structure(
        lambda s: tf.TensorSpec([batch_size, *s.shape[1:]], s.dtype, name=s.name), specs)


def _target_specs(tf: Any, model: Any, inputs: Any) -> Any:
    """Specs of the labels the compiled loss expects: class indices for a sparse loss
    (``sparse_categorical_crossentropy``), else the shape and dtype of the output."""
    import keras  # TensorFlow is imported already (by the caller)

    symbolic = tf.nest.map_structure(lambda s: keras.KerasTensor(s.shape, s.dtype.name), inputs)
    outputs = model.compute_output_spec(symbolic, training=False)
    flat = tf.nest.flatten(outputs)
    losses = _losses(model.loss, outputs, len(flat))
    specs = [tf.TensorSpec(out.shape[:-1], tf.int32, name="labels") if _sparse(loss)
             else tf.TensorSpec(out.shape, out.dtype, name="labels")
             for out, loss in zip(flat, losses, strict=True)]
    return tf.nest.pack_sequence_as(outputs, specs)


def _losses(loss: Any, outputs: Any, count: int) -> list[Any]:
    """The compiled loss of each flat output, in order (one loss may serve them all)."""
    if isinstance(loss, dict) and isinstance(outputs, dict):
        return [loss.get(key) for key in sorted(outputs)]
    if isinstance(loss, (list, tuple)) and len(loss) == count:
        return list(loss)
    return [loss] * count


def _sparse(loss: Any) -> bool:
    """Does this loss take class indices rather than a tensor shaped as the output?  Its
    name says (``"sparse_categorical_crossentropy"``, ``SparseCategoricalCrossentropy``)."""
    if isinstance(loss, str):
        return "sparse" in loss.lower()
    names = (type(loss).__name__, getattr(loss, "__name__", ""),
             getattr(getattr(loss, "fn", None), "__name__", ""))
    return any("sparse" in str(name).lower() for name in names)


def _concrete(tf: Any, model: Any, step: str, data: Any) -> Any:
    """The concrete function Keras runs: the trainer's iterator function traced for a batch of
    ``data``'s specs, or the model's step method alone where the trainer differs."""
    attribute = f"{step}_function"
    kept = getattr(model, attribute, None)  # the model's own, put back after
    try:
        getattr(model, f"make_{step}_function")(force=True)
        function = getattr(model, attribute)
        if step == "predict" and hasattr(function, "get_concrete_function"):
            return function.get_concrete_function([data])
        inner = _closure(function).get("multi_step_on_iterator")
        if inner is not None and hasattr(inner, "get_concrete_function"):
            return inner.get_concrete_function(tf.data.IteratorSpec(data))
    finally:
        setattr(model, attribute, kept)
    method = {"train": model.train_step, "test": model.test_step,
              "predict": model.predict_step}[step]
    return tf.function(method).get_concrete_function(data)


def _closure(function: Any) -> dict[str, Any]:
    """The variables a Python function closes over (none for anything else)."""
    if not inspect.isfunction(function):
        return {}
    return dict(inspect.getclosurevars(function).nonlocals)


def _variables(model: Any) -> list[Any]:
    """Every variable a step may capture: the model's, the optimizer's and the metrics'."""
    found = list(getattr(model, "variables", ()))
    optimizer = getattr(model, "optimizer", None)
    if optimizer is not None:
        found += list(getattr(optimizer, "variables", ()))
    for metric in getattr(model, "metrics", ()):
        found += list(getattr(metric, "variables", ()))
    return found


def _name_captures(graph_def: GraphDef, concrete: Any, variables: list[Any]) -> None:
    """Rename each placeholder capturing a variable after the variable's path."""
    by_handle: dict[int, str] = {}
    for variable in variables:
        handle = getattr(variable, "handle", None)  # a tensor: never tested for truth
        if handle is None:
            handle = getattr(getattr(variable, "value", None), "handle", None)
        path = getattr(variable, "path", None) or getattr(variable, "name", None)
        if handle is not None and path:
            by_handle.setdefault(id(handle), str(path))
    taken = {node.name for node in graph_def.node}
    renames: dict[str, str] = {}
    for external, internal in zip(concrete.captured_inputs, concrete.graph.internal_captures,
                                  strict=False):
        path = by_handle.get(id(external))
        if path is None:
            continue
        old = internal.op.name
        new = _unique(_UNSAFE_NAME_CHARS.sub("_", path.split(":")[0]).strip("/"), taken)
        renames[old] = new
    if not renames:
        return
    for node in graph_def.node:
        if node.name in renames:
            node.name = renames[node.name]
            node.attr["_user_specified_name"].s = node.name.encode()
        for index, text in enumerate(node.input):
            control = text.startswith("^")
            base, sep, port = text.lstrip("^").partition(":")
            if base in renames:
                node.input[index] = ("^" if control else "") + renames[base] + sep + port


def _unique(name: str, taken: set[str]) -> str:
    """``name``, or ``name_1``, ``name_2`` … if a node already has it."""
    name = name or "variable"
    candidate, count = name, 0
    while candidate in taken:
        count += 1
        candidate = f"{name}_{count}"
    taken.add(candidate)
    return candidate


def one_line(exc: BaseException) -> str:
    """The first line of an exception's message, cut to 300 characters (Keras and TensorFlow
    messages run to pages)."""
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:300]
