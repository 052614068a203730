"""Tensor shapes and dtypes: read from a node's attributes, and formatted for labels.

Shapes come from, in order of trust: ``_output_shapes`` (TF1 ``add_shapes=True``, PyTorch's
writer, TensorFlow's own inference), ``output_shapes`` (iterators, datasets, calls), ``shape``
(placeholders, variables) and a constant's value.  Without an op registry we cannot derive the
rest, so a missing shape stays ``unknown`` rather than guessed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..read.dtypes import Shape, dtype_name, dtype_size, shape_from_proto

__all__ = ["OUTPUT_ATTRS", "TensorInfo", "format_shape", "node_outputs", "outputs_of",
           "tensor_bytes", "unknown_why"]

_SHAPE_FROM_ATTR_OPS = frozenset(
    {"Placeholder", "PlaceholderV2", "PlaceholderWithDefault", "VariableV2", "Variable",
     "TemporaryVariable", "_Arg"}
)
_RESOURCE_OPS = frozenset({"VarHandleOp", "HashTableV2", "MutableHashTableV2", "IteratorV2"})


@dataclass(frozen=True)
class TensorInfo:
    """What is known of one op output.  ``known`` is False when neither dtype nor shape is."""

    dtype: str | None = None
    shape: Shape = None
    known_shape: bool = False

    @property
    def known(self) -> bool:
        return self.known_shape or self.dtype is not None


def _list_shapes(value: Any) -> list[Shape]:
    return [shape_from_proto(p) for p in value.list.shape]


#: Every attribute :func:`outputs_of` reads: ops of one type whose values of these are equal
#: have equal outputs, whatever their other attributes (a colocation class, a name).
OUTPUT_ATTRS = frozenset({"_output_shapes", "output_shapes", "shape", "value", "output_types",
                          "Tout", "out_types", "DstT", "out_type", "dtype", "T", "Tidx"})


def _dtypes(op: str, attr: Any) -> list[str]:
    """Output dtypes as far as common attribute conventions reveal them."""
    for key in ("output_types", "Tout", "out_types"):
        if key in attr and attr[key].list.type:
            return [dtype_name(t) for t in attr[key].list.type]
    if op in _RESOURCE_OPS:
        return ["resource"]
    for key in ("DstT", "out_type", "dtype", "T", "Tidx"):
        if key in attr and attr[key].WhichOneof("value") == "type":
            return [dtype_name(attr[key].type)]
    return []


def node_outputs(node_def: Any) -> list[TensorInfo]:
    """The known outputs of a NodeDef, one TensorInfo per output index that we can describe."""
    return outputs_of(node_def.op, node_def.attr)


def outputs_of(op: str, attr: Any) -> list[TensorInfo]:
    """The known outputs of an op of type ``op`` whose attributes are ``attr`` (a NodeDef's
    map, or any mapping of names to AttrValues holding at least :data:`OUTPUT_ATTRS`'s)."""
    shapes: list[Shape] = []
    known = False
    if "_output_shapes" in attr and attr["_output_shapes"].list.shape:
        shapes, known = _list_shapes(attr["_output_shapes"]), True
    elif "output_shapes" in attr and attr["output_shapes"].list.shape:
        shapes, known = _list_shapes(attr["output_shapes"]), True
    elif op in _SHAPE_FROM_ATTR_OPS and "shape" in attr and attr["shape"].HasField("shape"):
        shapes, known = [shape_from_proto(attr["shape"].shape)], True
    elif op == "Const" and "value" in attr:
        shapes, known = [shape_from_proto(attr["value"].tensor.tensor_shape)], True
    if op in _RESOURCE_OPS:
        shapes, known = [()], True
    dtypes = _dtypes(op, attr)
    count = max(len(shapes), len(dtypes))
    return [
        TensorInfo(
            dtype=dtypes[i] if i < len(dtypes) else (dtypes[0] if len(dtypes) == 1 else None),
            shape=shapes[i] if i < len(shapes) else None,
            known_shape=known and i < len(shapes),
        )
        for i in range(count)
    ]


def format_shape(info: TensorInfo | None, *, dtype: bool = False) -> str:
    """``?×784``, ``scalar``, or ``""`` when the shape is not known, not even its rank (a
    label of ``*`` told the reader nothing; :func:`unknown_why` says why in a tooltip)."""
    if info is None or not info.known:
        return ""
    if not info.known_shape or info.shape is None:
        text = ""
    elif len(info.shape) == 0:
        text = "scalar"
    else:
        text = "×".join("?" if d is None else str(d) for d in info.shape)
    if dtype and info.dtype:
        text = f"{info.dtype} {text}".strip()
    return text


def unknown_why(info: TensorInfo | None) -> str:
    """Why a tensor has no shape label: TensorFlow gave it no rank, or the file records none."""
    if info is not None and info.known_shape and info.shape is None:
        return "rank unknown: TensorFlow's inference could not tell it"
    return "shape unknown: the file records none"


def tensor_bytes(info: TensorInfo | None) -> int:
    """Byte size of a tensor for edge widths; unknown dims count as 1 so ``?×784`` still weighs."""
    if info is None or not info.known_shape or info.shape is None:
        return 0
    count = 1
    for dim in info.shape:
        count *= 1 if dim is None else max(dim, 0)
    return count * (dtype_size(info.dtype) or 4)
