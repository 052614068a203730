"""TensorFlow dtypes and shapes as people read them, without importing TensorFlow.

GraphDefs store a dtype as a ``DataType`` enum (``DT_FLOAT``) and a shape as a
``TensorShapeProto``.  Users know them as ``float32`` and ``(None, 784)``, the spelling of
``tf.float32`` and ``TensorSpec.shape``, so every stage that shows a dtype or a shape goes through
these helpers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tensorboard.compat.proto import types_pb2

if TYPE_CHECKING:
    from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto

__all__ = ["Shape", "dtype_enum", "dtype_name", "dtype_size", "shape_from_proto"]

#: A tensor shape: a tuple with None for unknown dimensions, or None for an unknown rank.
Shape = tuple[int | None, ...] | None

# Enum names whose TensorFlow spelling is not simply the lower-cased name without ``DT_``.
_RENAMED = {"DT_FLOAT": "float32", "DT_DOUBLE": "float64", "DT_HALF": "float16"}
_REF_OFFSET = 100  # DT_FLOAT_REF == DT_FLOAT + 100: a reference (TF1 variable) to that dtype.


def _base_name(enum_name: str) -> str:
    return _RENAMED.get(enum_name, enum_name.removeprefix("DT_").lower())


_NAMES: dict[int, str] = {}
for _enum_name, _value in types_pb2.DataType.items():
    if _value > _REF_OFFSET:
        _NAMES[_value] = _base_name(_enum_name.removesuffix("_REF")) + "_ref"
    elif _value != types_pb2.DT_INVALID:
        _NAMES[_value] = _base_name(_enum_name)
_ENUMS: dict[str, int] = {name: value for value, name in _NAMES.items()}
_SIZES: dict[str, int] = {
    "float32": 4, "float64": 8, "float16": 2, "bfloat16": 2, "complex64": 8, "complex128": 16,
    "int8": 1, "int16": 2, "int32": 4, "int64": 8, "uint8": 1, "uint16": 2, "uint32": 4,
    "uint64": 8, "bool": 1, "qint8": 1, "quint8": 1, "qint16": 2, "quint16": 2, "qint32": 4,
    "int4": 1, "uint4": 1, "int2": 1, "uint2": 1, "float4_e2m1fn": 1,
}
_SIZES.update({name: 1 for name in _NAMES.values() if name.startswith("float8_")})
_ENUMS.update({"half": types_pb2.DT_HALF, "float": types_pb2.DT_FLOAT,
               "double": types_pb2.DT_DOUBLE})


def dtype_name(enum: int) -> str:
    """Return TensorFlow's name for a ``DataType`` enum value.

    A graph can carry enum values newer than our protos; those come back as ``"dtype<N>"`` rather
    than failing, so an old reader still draws a new graph.

    >>> dtype_name(1), dtype_name(9), dtype_name(101), dtype_name(0)
    ('float32', 'int64', 'float32_ref', 'invalid')
    """
    if enum == types_pb2.DT_INVALID:
        return "invalid"
    return _NAMES.get(enum, f"dtype{enum}")


def dtype_enum(name: str) -> int | None:
    """Return the ``DataType`` enum for a dtype name (``"float32"``), or None if unknown.

    Keras configs name dtypes as strings; this turns them back into the enum TensorFlow puts in
    a NodeDef's ``dtype`` attribute.

    >>> dtype_enum("float32"), dtype_enum("int8"), dtype_enum("mixed_float16")
    (1, 6, None)
    """
    return _ENUMS.get(name)


def dtype_size(name: str | None) -> int | None:
    """Return the bytes per element of a dtype name, or None when it has no fixed size.

    Edge widths and constant sizes use it; strings, resources and variants have no fixed size.
    Sub-byte types (``int4``) count as one byte, as TensorFlow stores them unpacked.

    >>> [dtype_size(name) for name in ("float32", "complex128", "int64_ref", "string")]
    [4, 16, 8, None]
    """
    if name is None:
        return None
    return _SIZES.get(name.removesuffix("_ref"))


def shape_from_proto(shape: TensorShapeProto) -> Shape:
    """Return a shape as a tuple with None for unknown dimensions, or None for an unknown rank.

    >>> from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
    >>> shape_from_proto(TensorShapeProto(dim=[{"size": -1}, {"size": 784}]))
    (None, 784)
    >>> shape_from_proto(TensorShapeProto(unknown_rank=True)) is None
    True
    """
    if shape.unknown_rank:
        return None
    return tuple(dim.size if dim.size >= 0 else None for dim in shape.dim)
