"""TensorFlow's own shape inference over a loaded graph, and where pinned input shapes break.

Shapes recorded in a file (``_output_shapes``, ``shape`` attributes) cover only what the writer
chose to record: a frozen Keras model has none, and a TF1 graph's are stale the moment a user
asks "what if the batch were 4?".  With the ``[tf]`` extra this module asks TensorFlow itself:

* the GraphDef is imported into a fresh ``tf.Graph`` with its function library; TensorFlow's
  shape refiner runs on every op as it is added, and each op's output dtypes and shapes are
  copied into the :class:`~graphviz_tb.model.graph.GraphModel`;
* every function body the model opened (``call/<node>``) is instantiated on its own with
  TensorFlow's FunctionDef-to-GraphDef conversion, its arguments given the shapes that reach
  the call, and inferred the same way (bodies are cached per function and argument shapes);
  a resource argument gets the handle its call passes or, when no call passes one (a
  SavedModel's uncalled method), the variable its ``arg_attr`` records;
* pinned inputs (``pixels=1,28,29``) replace the placeholders' ``shape`` attributes and drop
  every recorded ``_output_shapes``, which no longer hold.

When TensorFlow rejects an op, the import names it in its message; the culprit is confirmed
by importing just its ancestors (or, when the name is ambiguous, by bisecting a topological
order), then it and everything downstream are set aside and the rest is imported again, so
shapes still reach every op that does not depend on the failure.  A failure at a call op is
traced into the function body that caused it.  Failing ops are marked for the renderers
(node data ``shape_error``; their input edges get ``shape_error=True``).

TensorFlow is imported only when :func:`infer_shapes` runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..read.dtypes import Shape, shape_from_proto
from ..read.tf_loader import import_tensorflow
from .calls import call_targets
from .graph import CONTROL, insert_edge, node_def_of, tensor_of
from .onnx import is_onnx_graph
from .pytorch import is_jit_trace
from .shapes import TensorInfo, node_outputs
from .tf_import import Importer, ScopeResult, info_of

if TYPE_CHECKING:
    from .graph import GraphModel

__all__ = ["InputEdge", "Pin", "ShapeFailure", "ShapeReport", "infer_shapes", "input_edges"]

_PLACEHOLDERS = frozenset({"Placeholder", "PlaceholderV2", "PlaceholderWithDefault"})


@dataclass(frozen=True)
class Pin:
    """An input shape the user fixed: the placeholder, its shape in the file, and the new one."""

    node: str
    before: Shape
    after: tuple[int | None, ...]


@dataclass(frozen=True)
class InputEdge:
    """One input of an op as the trace shows it: slot, producer, output index, kind, tensor."""

    slot: int
    src: str
    src_output: int
    kind: str
    tensor: TensorInfo | None


@dataclass(frozen=True)
class ShapeFailure:
    """An op TensorFlow's shape inference rejected.

    ``node`` is the model's name (``call/<node>`` inside a function body, whose name is in
    ``function``); ``message`` is TensorFlow's own text, which names the op by its name inside
    the graph or body TensorFlow was given; ``inputs`` are the shapes that reached the op.
    """

    node: str
    op: str
    message: str
    function: str | None
    inputs: tuple[InputEdge, ...]


@dataclass
class ShapeReport:
    """What one run of :func:`infer_shapes` did: pins, ops described, bodies inferred, failures.

    ``failures`` come in the order TensorFlow meets them: the first is where the shapes break.
    """

    pins: tuple[Pin, ...] = ()
    failures: list[ShapeFailure] = field(default_factory=list)
    ops_inferred: int = 0
    bodies_inferred: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures


def _tensorflow() -> Any:
    return import_tensorflow("shape inference (--infer-shapes, --input-shape)")


def input_edges(model: GraphModel, name: str) -> tuple[InputEdge, ...]:
    """The inputs of an op in slot order (data and reference first, then control)."""
    edges = [
        InputEdge(d["dst_input"], u, d["src_output"], d["kind"],
                  model.edge_tensor(u, name, k))
        for u, _, k, d in model.g.in_edges(name, keys=True, data=True)
    ]
    return tuple(sorted(edges, key=lambda e: (e.kind == CONTROL, e.slot, e.src)))


# --------------------------------------------------------------------------- shapes from TF


def _merge(old: TensorInfo | None, new: TensorInfo) -> TensorInfo:
    """TensorFlow's answer, with dimensions it leaves open filled from a compatible record.

    TensorFlow ignores ``_output_shapes`` when it imports, so for ops whose shape function is
    vague the file can know more; where the two disagree TensorFlow wins.
    """
    if old is None or not old.known_shape or old.shape is None:
        return new
    if new.shape is None:
        return TensorInfo(new.dtype or old.dtype, old.shape, True)
    if len(old.shape) != len(new.shape):
        return new
    dims = tuple(o if n is None else n for o, n in zip(old.shape, new.shape, strict=True))
    return TensorInfo(new.dtype or old.dtype, dims, True)


def _handle_data(attr: Any) -> Any:
    """TensorFlow's HandleData for a resource argument that records what it points to
    (``_handle_shapes``/``_handle_dtypes``; the SavedModel reader writes them from the object
    graph), for a body no call passes a handle into."""
    from tensorflow.python.framework import cpp_shape_inference_pb2  # only when inferring

    handle = cpp_shape_inference_pb2.CppShapeInferenceResult.HandleData(is_set=True)
    dtypes = attr["_handle_dtypes"].list.type if "_handle_dtypes" in attr else ()
    for i, shape in enumerate(attr["_handle_shapes"].list.shape):
        entry = handle.shape_and_type.add(dtype=dtypes[i] if i < len(dtypes) else 0)
        entry.shape.CopyFrom(shape)
    return handle


def _tf_shape(tf: Any, info: TensorInfo | None) -> Any:
    if info is None or not info.known_shape or info.shape is None:
        return None
    return tf.TensorShape(list(info.shape))


# --------------------------------------------------------------------------- one graph scope


# --------------------------------------------------------------------------- the whole model


def _strip_recorded_shapes(graph_def: Any) -> None:
    """Drop ``_output_shapes`` everywhere (stale once inputs are pinned)."""
    for node in graph_def.node:
        node.attr.pop("_output_shapes", None)
    for fdef in graph_def.library.function:
        for node in fdef.node_def:
            node.attr.pop("_output_shapes", None)
        for arg_attr in fdef.arg_attr.values():
            arg_attr.attr.pop("_output_shapes", None)
        fdef.attr.pop("_input_shapes", None)


def _pin_inputs(tf: Any, graph_def: Any, model: GraphModel,
                input_shapes: Sequence[tuple[str, Sequence[int | None]]], where: str
                ) -> tuple[Pin, ...]:
    """Write the pinned shapes into the placeholders' ``shape`` attributes."""
    nodes = {n.name: n for n in graph_def.node}
    signature = {spec.name: spec.tensor for spec in model.inputs}
    pins = []
    for name, dims in input_shapes:
        target = signature.get(name, name)
        base = target.rsplit(":", 1)[0] if target not in nodes and ":" in target else target
        node = nodes.get(base)
        if node is None or node.op not in _PLACEHOLDERS:
            found = [n.name for n in graph_def.node if n.op in _PLACEHOLDERS]
            hint = ", ".join(found[:10]) + (" ..." if len(found) > 10 else "") or "none"
            what = "is not a placeholder" if node is not None else "names no op"
            raise InputError(f"{where}: --input-shape {name!r} {what}; the graph's "
                             f"placeholders: {hint}")
        before = shape_from_proto(node.attr["shape"].shape) if "shape" in node.attr else None
        node.attr["shape"].shape.CopyFrom(tf.TensorShape(list(dims)).as_proto())
        pins.append(Pin(base, before, tuple(dims)))
    return tuple(pins)


def _recorded(model: GraphModel, name: str) -> list[TensorInfo]:
    """What the file itself says of an op's outputs (as the model first read it)."""
    data = model.g.nodes[name]
    if "outputs" in data:
        return data["outputs"]
    node_def = node_def_of(data)
    return node_outputs(node_def) if node_def is not None else []


def _reset_model(model: GraphModel, *, stale: bool) -> None:
    """Undo an earlier run (marks, inferred shapes); with ``stale``, forget recorded shapes."""
    g = model.g
    rerun = g.graph.get("shapes_inferred", False)
    g.graph["shapes_inferred"] = True
    for name, data in g.nodes(data=True):
        data.pop("shape_error", None)
        if rerun:
            model.set_outputs(name, _recorded(model, name))
        if stale:
            outs = model.op_outputs(name)
            if any(o.known_shape for o in outs):
                model.set_outputs(name, [TensorInfo(dtype=o.dtype) for o in outs])
    for _, _, data in g.edges(data=True):
        if "shape_error" in data:  # a dict of the edge's own (edge dicts are shared)
            del data["shape_error"]


class _Run:
    """One inference over a model: the top level, then every opened function body."""

    def __init__(self, tf: Any, model: GraphModel, graph_def: Any) -> None:
        self.tf, self.model = tf, model
        self.importer = Importer(tf, graph_def)
        self.graph_def = graph_def
        #: TensorFlow's FunctionDefs (the model holds TensorBoard's classes), pins applied.
        self.functions = {f.signature.name: f for f in graph_def.library.function}
        self.report = ShapeReport()
        self.scope_culprits: dict[str, list[str]] = {}  # group ("" = top level) -> model names
        self.messages: dict[str, str] = {}
        self.groups_of_call: dict[str, list[str]] = {}
        #: Model tensor -> HandleData of the resource or variant handle it carries.
        self.handles: dict[tuple[str, int], Any] = {}
        self._bodies: dict[tuple[Any, ...], ScopeResult | None] = {}
        self._library_graph: Any = None
        self._to_graph_def: Callable[..., Any] | None = None

    # -- top level

    def top_level(self) -> None:
        result = self.importer.run()
        for name, infos in result.infos.items():
            if name in self.model.g and "function" not in self.model.g.nodes[name]:
                self._set(name, infos)
        self.handles.update(result.handles)
        self._culprits("", result.culprits, "")

    def _set(self, name: str, infos: list[TensorInfo]) -> None:
        old = self.model.op_outputs(name)
        merged = [_merge(old[i] if i < len(old) else None, info) for i, info in enumerate(infos)]
        self.model.set_outputs(name, merged)
        self.report.ops_inferred += 1

    def _culprits(self, group: str, culprits: list[tuple[str, str]], prefix: str) -> None:
        names = []
        for local, message in culprits:
            name = prefix + local
            if name in self.model.g:
                names.append(name)
                self.messages[name] = message
        self.scope_culprits[group] = names

    # -- function bodies

    def bodies(self) -> None:
        model = self.model
        if not model.function_groups:
            return
        try:  # TensorFlow, imported only when inferring
            from tensorflow.python.framework.function_def_to_graph import (
                function_def_to_graph_def,
            )
        except ImportError:  # an internal module; a future TensorFlow may move it
            self.report.notes.append("function bodies were not inferred: this TensorFlow has "
                                     "no function_def_to_graph module")
            return
        self._to_graph_def = function_def_to_graph_def
        self._library_graph = self.importer.graph([])
        for group, fname in model.function_groups.items():
            call, offset = self._call_of(group)
            if call is not None:
                self.groups_of_call.setdefault(call, []).append(group)
            self._body(group, fname, call, offset)

    def _call_of(self, group: str) -> tuple[str | None, int]:
        """The call op that opened ``group`` (``call`` or ``call/body``), and how many of its
        inputs precede the function arguments; None for a library-only function."""
        g = self.model.g
        for call in (group, group.rpartition("/")[0]):
            if call in g and g.nodes[call].get("calls"):
                return call, call_targets(node_def_of(g.nodes[call]), self.model.functions)[1]
        return None, 0

    def _arg_nodes(self, prefix: str, role: str, attr: str,
                   args: Sequence[Any]) -> list[str | None]:
        """Model names of a body's ``_Arg``/``_Retval`` nodes (renamed with ``_`` on clashes)."""
        g = self.model.g
        found: list[str | None] = []
        for i, arg in enumerate(args):
            name = prefix + arg.name
            while name in g and not (g.nodes[name]["role"] == role
                                     and g.nodes[name].get(attr) == i):
                name += "_"
            found.append(name if name in g else None)
        return found

    def _body(self, group: str, fname: str, call: str | None, offset: int) -> None:
        model = self.model
        fdef = self.functions[fname]
        prefix = group + "/"
        args = self._arg_nodes(prefix, "arg", "arg_index", fdef.signature.input_arg)
        call_inputs = self._call_inputs(call) if call is not None else []
        shapes, feeds = [], {}
        for i, (arg, spec) in enumerate(zip(args, fdef.signature.input_arg, strict=True)):
            recorded = model.op_outputs(arg)[0] if arg and model.op_outputs(arg) else None
            tensor = call_inputs[offset + i] if offset + i < len(call_inputs) else None
            incoming = model.tensor(*tensor) if tensor is not None else None
            info = _merge(recorded, incoming) if incoming is not None else recorded
            shapes.append(_tf_shape(self.tf, info))
            if tensor in self.handles:
                feeds[spec.name] = self.handles[tensor]
            elif i in fdef.arg_attr and "_handle_shapes" in fdef.arg_attr[i].attr:
                feeds[spec.name] = _handle_data(fdef.arg_attr[i].attr)
        key = (fname, tuple(str(s) for s in shapes),
               tuple((name, h.SerializeToString()) for name, h in feeds.items()))
        if key not in self._bodies:
            self._bodies[key] = self._infer_body(fdef, shapes, feeds)
        result = self._bodies[key]
        if result is None:
            return
        self.report.bodies_inferred += 1
        g = model.g
        for local, infos in result.infos.items():
            name = prefix + local
            if name in g and g.nodes[name].get("function") == fname:
                self._set(name, infos)
        for (local, index), handle in result.handles.items():
            self.handles[prefix + local, index] = handle
        for arg, spec in zip(args, fdef.signature.input_arg, strict=True):
            if arg is not None and spec.name in result.infos:
                self._set(arg, result.infos[spec.name])
        self._returns(prefix, fdef, result)
        self._culprits(group, [(local, message) for local, message in result.culprits
                               if g.nodes.get(prefix + local, {}).get("function") == fname],
                       prefix)

    def _call_inputs(self, call: str) -> list[tuple[str, int]]:
        """The tensors a call passes, in input order (the model keeps its in-edges)."""
        ins = sorted((d["dst_input"], tensor_of(u, d))
                     for u, _, d in self.model.g.in_edges(call, data=True)
                     if d["kind"] != CONTROL)
        return [tensor for _, tensor in ins]

    def _returns(self, prefix: str, fdef: Any, result: ScopeResult) -> None:
        rets = self._arg_nodes(prefix, "retval", "ret_index", fdef.signature.output_arg)
        flat = result.flat_names
        for ret, spec in zip(rets, fdef.signature.output_arg, strict=True):
            tensor = flat.get(fdef.ret.get(spec.name, ""))
            if ret is None or tensor is None or result.graph is None:
                continue
            try:
                info = info_of(result.graph.get_tensor_by_name(tensor))
            except (KeyError, ValueError):
                continue
            self._set(ret, [info])

    def _infer_body(self, fdef: Any, shapes: list[Any], feeds: dict[str, Any]
                    ) -> ScopeResult | None:
        """Instantiate a FunctionDef with argument shapes and infer it; None if TensorFlow
        cannot turn it into a graph (an unregistered op, a malformed body)."""
        tf = self.tf
        assert self._to_graph_def is not None
        try:
            with self._library_graph.as_default():
                body_def, flat = self._to_graph_def(fdef, input_shapes=shapes,
                                                    include_library_functions=True)
            importer = Importer(tf, body_def, feeds)
            result = importer.run()
        except (ValueError, KeyError, TypeError, InputError, tf.errors.OpError) as exc:
            self.report.notes.append(
                f"function {fdef.signature.name}: TensorFlow could not instantiate it "
                f"({' '.join(str(exc).split())[:200]})")
            return None
        for nested, tensor in flat.items():
            node, _, index = tensor.rpartition(":")
            if node:  # "op:0", not a control name "^op"
                result.flat_names[nested] = f"{importer.safe_names.get(node, node)}:{index}"
        return result

    # -- failures

    def failures(self) -> list[ShapeFailure]:
        """Failures in the order met, a failing call replaced by the failures in its body."""
        emitted: dict[str, None] = {}

        def expand(name: str) -> None:
            inner = [c for grp in self.groups_of_call.get(name, ())
                     for c in self.scope_culprits.get(grp, ())]
            if not inner:
                emitted.setdefault(name, None)
            for c in inner:
                if c not in emitted:
                    expand(c)

        for group in ("", *self.model.function_groups):
            for name in self.scope_culprits.get(group, ()):
                if name not in emitted:
                    expand(name)
        out = []
        g = self.model.g
        for name in emitted:
            data = g.nodes[name]
            data["shape_error"] = self.messages[name]
            for u, keydict in g.pred[name].items():
                for k, edge in keydict.items():
                    if edge["kind"] != CONTROL:  # new dicts: they are shared (see OpGraph)
                        insert_edge(g, u, name, k, {**edge, "shape_error": True})
            out.append(ShapeFailure(name, data["op"], self.messages[name], data.get("function"),
                                    input_edges(self.model, name)))
        return out


def infer_shapes(model: GraphModel, graph_def: Any,
                 input_shapes: Sequence[tuple[str, Sequence[int | None]]] = (), *,
                 where: str = "graph") -> ShapeReport:
    """Fill ``model`` with TensorFlow's inferred shapes, with ``input_shapes`` pinned.

    Parameters
    ----------
    model:
        The model built from ``graph_def`` (updated in place: op outputs, ``shape_error``
        marks on failing ops and their input edges).
    graph_def:
        The GraphDef the model was built from (TensorBoard's or TensorFlow's class).
    input_shapes:
        ``(placeholder, dims)`` pairs, ``None`` for an unknown dimension; the name may be a
        placeholder op, ``op:0``, or a signature input's name.  Pinning drops every recorded
        ``_output_shapes``.
    where:
        Names the input in error messages.

    Raises
    ------
    TensorFlowRequired
        TensorFlow is not installed.
    InputError
        A pinned name is not a placeholder, the graph is a Keras layer graph, or TensorFlow
        cannot import the graph at all.
    """
    if model.kind != "op":
        raise InputError(f"{where}: shape inference needs an op graph; this is a Keras layer "
                         "graph (load the .keras/.h5 model itself to trace its ops)")
    # TensorFlow would import none of these ops and infer nothing, silently.
    if is_onnx_graph(graph_def):
        raise InputError(f"{where}: --infer-shapes and --input-shape ask TensorFlow, which "
                         "cannot run ONNX ops; an ONNX file's shapes are onnx.shape_inference's,"
                         " run when it is read (drop the option)")
    if is_jit_trace(graph_def):
        raise InputError(f"{where}: --infer-shapes and --input-shape ask TensorFlow, which "
                         "cannot run PyTorch's ops; a trace's shapes are those PyTorch recorded "
                         "(drop the option)")
    tf = _tensorflow()
    work = tf.compat.v1.GraphDef.FromString(graph_def.SerializeToString())
    pins = _pin_inputs(tf, work, model, input_shapes, where) if input_shapes else ()
    if pins:
        _strip_recorded_shapes(work)
    _reset_model(model, stale=bool(pins))
    run = _Run(tf, model, work)
    try:
        run.top_level()
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None
    run.bodies()
    run.report.pins = pins
    run.report.failures = run.failures()
    return run.report
