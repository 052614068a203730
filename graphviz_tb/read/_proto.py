"""Protobuf plumbing shared by the readers: reading, parsing, and turning failures into one line.

Protobuf's own errors (``DecodeError``, ``ParseError`` with its ``"3:1 : ..."`` prefix) and
``OSError`` never reach the user raw: these helpers re-raise them as
:class:`~graphviz_tb.errors.InputError` naming the file, and for text format its line and column
(``graph.pbtxt:3:1: ...``) as compilers do, so editors can jump to the spot.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterator
from typing import TypeVar

from google.protobuf import text_format
from google.protobuf.message import DecodeError, Message
from tensorboard.compat.proto.graph_pb2 import GraphDef

from ..errors import InputError, NoGraphError

__all__ = [
    "check_has_ops",
    "field_counts",
    "is_plausible_graph",
    "parse_binary",
    "parse_text",
    "read_bytes",
    "wire_fields",
]

M = TypeVar("M", bound=Message)

_POSITION_PREFIX = re.compile(r"^\d+:\d+ : ")
_OUR_PACKAGES = re.compile(r'"(?:tensorboard|graphviz_tb)\.')  # users know "GraphDef"
_NO_FIELD = re.compile(r'^Message type "([\w.]+)" has no field named "([^"]*)"\.?$')
_VARINT, _FIXED64, _LEN, _FIXED32 = 0, 1, 2, 5


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """Read a whole file, turning OSError into an InputError that names it."""
    try:
        with open(path, "rb") as stream:
            return stream.read()
    except IsADirectoryError:
        raise InputError(f"{os.fspath(path)} is a directory, not a file") from None
    except OSError as exc:
        reason = exc.strerror or exc
        raise InputError(f"{os.fspath(path)}: cannot read the file ({reason})") from None


def parse_binary(cls: type[M], data: bytes, name: str, what: str) -> M:
    """Parse binary protobuf ``data`` as ``cls``, or raise InputError naming the file."""
    message = cls()
    try:
        message.ParseFromString(data)
    except DecodeError as exc:
        raise InputError(
            f"{name}: cannot decode it as a binary {what} ({exc}); the file is corrupt, cut short "
            "or not a TensorFlow graph"
        ) from None
    return message


def parse_text(cls: type[M], data: bytes, name: str) -> M:
    """Parse protobuf text format, reporting errors as ``FILE:LINE:COL: message``.

    ``#`` comments may appear anywhere (text format treats them as whitespace) and CRLF line
    endings are accepted, both of which real TensorFlow test files contain.
    """
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{name}: not UTF-8 text (byte {exc.start} is 0x{data[exc.start]:02x}), so not "
            "protobuf text format"
        ) from None
    message = cls()
    try:
        text_format.Parse(text, message)
    except text_format.ParseError as exc:
        line, column = exc.GetLine(), exc.GetColumn()
        where = f"{name}:{line}:{column}" if line is not None else name
        raise InputError(f"{where}: {_parse_error(message, _POSITION_PREFIX.sub('', str(exc)))}"
                         ) from None
    return message


def _parse_error(message: Message, detail: str) -> str:
    """A text-format error in our words.  An unknown field is the common one: as the first
    thing of the file it means the file is not this kind of message at all (prose, another
    format); deeper, a misspelt field, with the one meant when a field's name is close."""
    found = _NO_FIELD.match(detail)
    if found is None:
        return f"not valid protobuf text format: {_OUR_PACKAGES.sub(chr(34), detail)}"
    full, field = found.groups()
    descriptor = message.DESCRIPTOR
    kind = _OUR_PACKAGES.sub("", f'"{full}').lstrip('"')
    if full == descriptor.full_name and not message.ListFields():
        starts = " or ".join([f"'{f.name} {{'" for f in descriptor.fields
                              if f.message_type is not None][:3]) or "a field name"
        return (f"not a {descriptor.name} in text format: it starts with {field!r}, which "
                f"names no field of a {descriptor.name} (one starts with {starts})")
    try:
        fields = [f.name for f in descriptor.file.pool.FindMessageTypeByName(full).fields]
    except KeyError:
        fields = []
    near = difflib.get_close_matches(field, fields, n=1)
    hint = f"; did you mean {near[0]!r}?" if near else ""
    return f"{field!r} is not a field of a {kind}{hint}"


_PLAUSIBLE_SAMPLE = 1000


def is_plausible_graph(graph: GraphDef) -> bool:
    """Tell whether a parsed GraphDef looks real rather than bytes that happened to decode.

    Protobuf decodes many byte strings without complaint, so a PNG or a MetaGraphDef can "parse"
    as a GraphDef.  A real graph has ops or functions, and most of its nodes have a printable
    name and an op type.  "Most", not "all": a real graph may hold a hostile or odd name (a
    newline, a control character), and we want to draw it rather than reject the file.
    """
    if not graph.node and not graph.library.function:
        return False
    nodes = graph.node
    # An evenly spaced sample of at most ~1,000 nodes tells as well as all 65,000 of a big
    # graph, at a fiftieth of the cost.
    sample = nodes[::max(1, len(nodes) // _PLAUSIBLE_SAMPLE)] if nodes else []
    good = sum(1 for node in sample if node.name and node.op and node.name.isprintable())
    return good * 2 >= len(sample) and (good > 0 or not nodes)


def check_has_ops(graph: GraphDef, name: str) -> GraphDef:
    """Return ``graph`` if it holds ops or functions, else raise NoGraphError naming ``name``."""
    if not graph.node and not graph.library.function:
        raise NoGraphError(f"{name}: the GraphDef holds no ops")
    return graph


def field_counts(data: bytes) -> dict[int, int]:
    """Count the top-level fields of serialized protobuf ``data`` by field number, not parsing them.

    Tells, e.g., whether a RunMetadata holds graphs without decoding megabytes of them.  Raises
    ValueError when ``data`` is not well-formed protobuf wire format.
    """
    counts: dict[int, int] = {}
    for field, _, _ in wire_fields(data):
        counts[field] = counts.get(field, 0) + 1
    return counts


def wire_fields(data: bytes | memoryview) -> Iterator[tuple[int, int, int | bytes | memoryview]]:
    """The top-level fields of serialized protobuf ``data``, unparsed: ``(field number, wire
    type, value)``, the value an int for numbers and the raw bytes of a length-delimited one
    (a view into ``data`` when it is a memoryview: no copy of a model's embedded weights).

    What a message is can then be told from the wire types of its fields (a field number is
    a varint in one format and a nested message in another) without the protobuf class.
    Raises ValueError when ``data`` is not well-formed protobuf wire format.
    """
    position, end = 0, len(data)
    while position < end:
        key, position = _varint(data, position)
        field, wire_type = key >> 3, key & 7
        value: int | bytes | memoryview
        if wire_type == _VARINT:
            value, position = _varint(data, position)
        elif wire_type == _FIXED64:
            value, position = 0, position + 8
        elif wire_type == _LEN:
            length, position = _varint(data, position)
            value, position = data[position:position + length], position + length
        elif wire_type == _FIXED32:
            value, position = 0, position + 4
        else:
            raise ValueError(f"unsupported wire type {wire_type}")
        if field == 0 or position > end:
            raise ValueError("malformed protobuf")
        yield field, wire_type, value


def _varint(data: bytes | memoryview, position: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if position >= len(data) or shift > 63:
            raise ValueError("truncated varint")
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, position
