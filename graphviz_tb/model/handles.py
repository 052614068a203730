"""Variable reads given the shape of the variable they read.

A TF2 function body reads each variable through a resource handle (``ReadVariableOp``) and
records no shape for the read: the shape lives with the handle.  The file says where:

* a ``VarHandleOp``'s ``shape`` and ``dtype``;
* ``_handle_shapes`` and ``_handle_dtypes`` on a resource input (``Placeholder``, ``_Arg``),
  as TensorFlow's MLIR export writes them;
* the same two attributes in a function argument's ``arg_attr``, which the SavedModel reader
  also fills from the object graph (the variables a concrete function captures).

Handles cross call boundaries (a call feeds a body's argument) and ``Identity`` ops, so each
read follows its handle back to the first op that records one.  This fills only reads that
record nothing themselves; the cost is one walk per handle, shared by all its reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..read.dtypes import dtype_name, shape_from_proto
from .graph import node_def_of
from .shapes import TensorInfo

if TYPE_CHECKING:
    from .graph import GraphModel

__all__ = ["handle_of_attrs", "label_variable_reads"]

_READS = frozenset({"ReadVariableOp"})
#: Ops that hand a resource on unchanged (a body's ``_Arg`` is fed by its call).
_PASS_ON = frozenset({"Identity", "_Arg"})


def handle_of_attrs(attr: Any) -> TensorInfo | None:
    """What a handle points to, from ``_handle_shapes``/``_handle_dtypes`` attributes (a
    NodeDef's ``attr`` or an ``arg_attr``'s), or None when they record nothing."""
    if "_handle_shapes" not in attr or not attr["_handle_shapes"].list.shape:
        return None
    dtypes = attr["_handle_dtypes"].list.type if "_handle_dtypes" in attr else ()
    return TensorInfo(dtype=dtype_name(dtypes[0]) if dtypes else None,
                      shape=shape_from_proto(attr["_handle_shapes"].list.shape[0]),
                      known_shape=True)


def _recorded(data: dict[str, Any]) -> TensorInfo | None:
    """The handle an op records itself, if any."""
    node_def = node_def_of(data)
    if node_def is None:
        return None
    attr = node_def.attr
    if data["op"] == "VarHandleOp" and "shape" in attr:
        dtype = dtype_name(attr["dtype"].type) if "dtype" in attr else None
        return TensorInfo(dtype=dtype, shape=shape_from_proto(attr["shape"].shape),
                          known_shape=True)
    return handle_of_attrs(attr)


class _Handles:
    """Follows handles back to their record, remembering every tensor on the way."""

    def __init__(self, model: GraphModel) -> None:
        self.model = model
        self.found: dict[tuple[str, int], TensorInfo | None] = {}

    def of(self, tensor: tuple[str, int]) -> TensorInfo | None:
        """What ``tensor`` (a resource handle) points to, or None when nothing records it.
        A body's argument takes its caller's handle first and its own ``arg_attr`` record
        only when the caller passes none."""
        nodes = self.model.g.node_data
        path: list[tuple[str, int]] = []
        on_path: set[tuple[str, int]] = set()  # a loop of Identity ops ends the walk
        result: TensorInfo | None = None
        current: tuple[str, int] | None = tensor
        while current is not None and current not in on_path:
            if current in self.found:
                result = self.found[current]
                break
            path.append(current)
            on_path.add(current)
            data = nodes[current[0]]
            if data["role"] != "arg":
                result = _recorded(data)
                if result is not None or data["op"] not in _PASS_ON:
                    break
            current = self.model.input_tensor(current[0])
        for step in reversed(path):  # upstream first: an argument's own record fills in
            if result is None:
                result = nodes[step[0]].get("handle")
            self.found[step] = result
        return result


def label_variable_reads(model: GraphModel) -> None:
    """Give each variable read that records no shape the shape its handle records."""
    handles = _Handles(model)
    for name, data in model.g.node_data.items():
        if data["op"] not in _READS:
            continue
        source = model.input_tensor(name)
        handle = handles.of(source) if source is not None else None
        if handle is None:  # known before decoding the read's own outputs
            continue
        outs = model.op_outputs(name)
        if outs and outs[0].known_shape:
            continue
        dtype = (outs[0].dtype if outs else None) or handle.dtype
        model.set_outputs(name, [TensorInfo(dtype, handle.shape, True), *outs[1:]])
