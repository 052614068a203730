"""Decode NodeDef attributes into plain, JSON-ready Python values.

Attribute values come from untrusted files and can be huge (a 60 MB constant); big values are
summarised here, once, so no later stage (details panel, tooltip, HTML) copies them.
"""

from __future__ import annotations

from typing import Any

from .dtypes import dtype_name, dtype_size, shape_from_proto

__all__ = ["MAX_ATTR_CHARS", "decode_attr", "decode_attrs", "serialized_attrs", "tensor_summary"]

#: Attribute strings longer than this are cut, with their full size noted (DESIGN: ~1 KB).
MAX_ATTR_CHARS = 1024
#: Tensor constants with at most this many elements show their values.
_MAX_TENSOR_VALUES = 16
#: List attributes show at most this many items, then how many more there are.
MAX_LIST_ITEMS = 64


def _text(raw: bytes) -> str:
    text = raw.decode("utf-8", errors="replace")
    if len(text) > MAX_ATTR_CHARS:
        return f"{text[:MAX_ATTR_CHARS]}… ({len(raw):,} bytes)"
    return text


def tensor_summary(tensor: Any) -> dict[str, Any]:
    """Summarise a TensorProto: dtype, shape, byte size and, when small, its values."""
    dtype = dtype_name(tensor.dtype)
    shape = shape_from_proto(tensor.tensor_shape)
    count = 1
    for dim in shape or ():
        count *= dim or 0
    item = dtype_size(dtype)
    nbytes = len(tensor.tensor_content) or (count * item if item else 0)
    summary: dict[str, Any] = {"dtype": dtype, "shape": list(shape or ()), "bytes": nbytes}
    if count <= _MAX_TENSOR_VALUES:
        values = _small_values(tensor, count)
        if values is not None:
            summary["values"] = values
    return summary


def _small_values(tensor: Any, count: int) -> list[Any] | None:
    """At most ``count`` values (the shape's element count): a file can claim a scalar and
    carry a million values, and those must not be copied into every output."""
    count = max(count, 1)
    for field in ("float_val", "double_val", "int_val", "int64_val", "bool_val", "half_val"):
        values = getattr(tensor, field)
        if values:
            return [v if not isinstance(v, float) else round(v, 6) for v in values[:count]]
    if tensor.string_val:
        return [_text(v[:4 * 64])[:64] for v in tensor.string_val[:count]]
    return None


def decode_attr(value: Any) -> Any:
    """One AttrValue -> str / int / float / bool / list / dict, whichever field is set."""
    kind = value.WhichOneof("value")
    if kind == "s":
        return _text(value.s)
    if kind in ("i", "f", "b"):
        return getattr(value, kind)
    if kind == "type":
        return dtype_name(value.type)
    if kind == "shape":
        shape = shape_from_proto(value.shape)
        return None if shape is None else list(shape)
    if kind == "tensor":
        return tensor_summary(value.tensor)
    if kind == "func":
        return {"function": value.func.name}
    if kind == "placeholder":
        return f"${value.placeholder}"
    if kind == "list":
        return _decode_list(value.list)
    return None


def _decode_list(lst: Any) -> list[Any]:
    """The list's items, at most :data:`MAX_LIST_ITEMS` of them then ``"… N more"``: list
    attributes are as unbounded as strings, and are copied into tooltips and the HTML."""
    for field in ("s", "type", "shape", "tensor", "func", "i", "f", "b"):
        values = getattr(lst, field)
        if values:
            shown = [_decode_item(field, v) for v in values[:MAX_LIST_ITEMS]]
            if len(values) > MAX_LIST_ITEMS:
                shown.append(f"… {len(values) - MAX_LIST_ITEMS:,} more")
            return shown
    return []


def _decode_item(field: str, value: Any) -> Any:
    if field == "s":
        return _text(value)
    if field == "type":
        return dtype_name(value)
    if field == "shape":
        shape = shape_from_proto(value)
        return None if shape is None else list(shape)
    if field == "tensor":
        return tensor_summary(value)
    if field == "func":
        return {"function": value.name}
    return value


def decode_attrs(attr_map: Any) -> dict[str, Any]:
    """A NodeDef's ``attr`` map decoded, in sorted key order (for deterministic output)."""
    return {key: decode_attr(attr_map[key]) for key in sorted(attr_map)}


def serialized_attrs(raw: bytes, start: int = 0) -> tuple[str, list[tuple[str, bytes]]] | None:
    """A serialized NodeDef's op type and its attributes, each as its name and its AttrValue's
    bytes, sorted by name; read from the wire format without parsing the message.

    Why: most ops of a TF1 graph carry a colocation attribute naming their own variable, so
    a third of a big graph's NodeDefs are each unlike any other.  Parsing each one whole (every
    attribute, then each serialized again to be compared) was most of the page's per-op cost;
    cutting the bytes apart costs a fraction, and only attribute values never seen before are
    parsed.  A repeated map key keeps its last value, as protobuf's parser does.  None when the
    bytes are not laid out as this reader expects (a field repeated inside a map entry, which
    protobuf would merge, or a cut one): the caller parses the message instead.
    """
    op = ""
    found: dict[str, bytes] = {}
    i, end = start, len(raw)
    try:
        while i < end:
            field, at, i = _field(raw, i, end)
            if field == 2:
                op = raw[at:i].decode("utf-8")
            elif field == 5:
                key, value = _map_entry(raw, at, i)
                found[key] = value
    except (IndexError, ValueError):  # a cut varint, a field past the end, bad UTF-8
        return None
    return op, sorted(found.items())


def _map_entry(raw: bytes, i: int, end: int) -> tuple[str, bytes]:
    """One ``attr`` map entry: its key (field 1) and its value's bytes (field 2); the
    defaults, an empty key and an empty value, when either is left out."""
    key: str | None = None
    value: bytes | None = None
    while i < end:
        field, at, i = _field(raw, i, end)
        if field == 1 or field == 2:
            if (key if field == 1 else value) is not None:
                raise ValueError("a repeated field, which protobuf would merge")
            if field == 1:
                key = raw[at:i].decode("utf-8")
            else:
                value = raw[at:i]
    return ("" if key is None else key), (b"" if value is None else value)


def _field(raw: bytes, i: int, end: int) -> tuple[int, int, int]:
    """The field starting at ``i``: its number when it is length-delimited (0 for any other,
    skipped), where its bytes start and where they stop.  Raises ValueError for a field
    running past ``end`` or of a wire type NodeDef has none of (groups)."""
    tag, i = _varint(raw, i)
    wire = tag & 7
    if wire == 2:
        size, i = _varint(raw, i)
        stop = i + size
    elif wire == 0:
        stop = _varint(raw, i)[1]
    elif wire == 1 or wire == 5:
        stop = i + (8 if wire == 1 else 4)
    else:
        stop = end + 1
    if stop > end or tag < 8:
        raise ValueError("not a field of a NodeDef")
    return (tag >> 3 if wire == 2 else 0), i, stop


def _varint(raw: bytes, i: int) -> tuple[int, int]:
    """The varint at ``i`` and the position after it."""
    value = 0
    shift = 0
    while True:
        byte = raw[i]
        i += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, i
        shift += 7
