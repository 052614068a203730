"""Recognise an input by its content, using its name only as a hint.

Users rename files (``model.pb`` that is really a MetaGraphDef, an event file without the
``tfevents`` in its name) and point the tool at the wrong thing (a PNG, a zip).  So we look at
the bytes: magic numbers, a TFRecord header with a valid CRC, protobuf text format's leading
field name, and for binary protobuf a trial parse with sanity checks, because nearly any bytes
decode as *some* protobuf.  Inputs that are clearly something else get a message saying what
they are.
"""

from __future__ import annotations

import json
import os
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf import unknown_fields
from google.protobuf.message import DecodeError, Message
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.meta_graph_pb2 import MetaGraphDef

from ..errors import InputError, NoGraphError
from ._proto import is_plausible_graph
from .graphdef import graph_head_class
from .onnx import is_onnx_model
from .savedmodel import SavedModel, find_saved_model_file
from .tfrecord import is_tfrecord_header

__all__ = ["Detected", "detect", "is_keras_config"]

_HEAD_SIZE = 64 * 1024

# Magic numbers of files people mistake for graphs, with what to call them.
_MAGIC: tuple[tuple[int, bytes, str], ...] = (
    (0, b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (0, b"\xff\xd8\xff", "a JPEG image"),
    (0, b"GIF8", "a GIF image"),
    (0, b"%PDF-", "a PDF document"),
    (0, b"\x1f\x8b", "gzip-compressed; decompress it first (gunzip)"),
    (0, b"BZh", "bzip2-compressed; decompress it first (bunzip2)"),
    (0, b"\xfd7zXZ\x00", "xz-compressed; decompress it first (unxz)"),
    (0, b"\x7fELF", "an executable (ELF)"),
    (4, b"TFL3", "a TensorFlow Lite model; convert it back or draw the model it came from"),
)
_HDF5 = b"\x89HDF\r\n\x1a\n"
_ZIP = (b"PK\x03\x04", b"PK\x05\x06")
_BOM = b"\xef\xbb\xbf"
_CHECKPOINT_INDEX_MAGIC = bytes.fromhex("57fb808b247547db")  # the last 8 bytes of a .index file
_TEXT_HINTS = (".pbtxt", ".pbtext", ".prototxt", ".txt", ".textproto", ".txtpb")

# A protobuf text message starts with a field name followed by ``{``, ``<`` or ``:``.
_COMMENT_LINES = re.compile(rb"\A(?:[ \t\r\n\f]*#[^\n]*\n)*[ \t\r\n\f]*")
_FIRST_FIELD = re.compile(rb"([A-Za-z_][A-Za-z0-9_]*)[ \t\r\n]*[{<:]")
_METAGRAPH_FIELDS = {b"meta_info_def", b"graph_def", b"saver_def", b"collection_def",
                     b"signature_def", b"asset_file_def", b"object_graph_def"}
_SAVEDMODEL_FIELDS = {b"saved_model_schema_version", b"meta_graphs"}


@dataclass(frozen=True)
class Detected:
    """What an input is, and what detection already parsed so the reader need not do it twice.

    Attributes
    ----------
    format:
        Which reader reads it: ``logdir`` (a directory of event files), ``savedmodel`` (a
        SavedModel directory or its saved_model.pb/.pbtxt), ``events`` (one event file),
        ``metagraph``, ``graphdef``, ``keras`` (a .keras archive), ``keras-h5`` or
        ``keras-json`` (``model.to_json()`` output), ``onnx`` (an ONNX ModelProto).
    text:
        The protobuf is in text format.
    message:
        The binary protobuf parsed during detection (GraphDef, MetaGraphDef or SavedModel); for
        a GraphDef without a function library, its head (``graphdef.parse_head``).
    config:
        The Keras config parsed during detection of a JSON file.
    """

    format: str
    text: bool = False
    message: Message | None = None
    config: dict[str, Any] | None = None


def detect(path: str | os.PathLike[str]) -> Detected:
    """Recognise ``path``, or raise InputError saying what it is instead.

    Raises
    ------
    InputError
        The path does not exist or is not a TensorFlow graph (with what it seems to be).
    NoGraphError
        The file is empty.
    """
    given = Path(path)
    name = os.fspath(path)
    try:
        if given.is_dir():
            return Detected("savedmodel" if find_saved_model_file(given) else "logdir")
        with open(given, "rb") as stream:
            head = stream.read(_HEAD_SIZE)
    except FileNotFoundError:
        raise InputError(f"{name} does not exist") from None
    except OSError as exc:
        raise InputError(f"{name}: cannot read it ({exc.strerror or exc})") from None
    if not head:
        raise NoGraphError(f"{name} is empty: it holds no ops")
    return _detect_content(given, name, head)


def _detect_content(path: Path, name: str, head: bytes) -> Detected:
    for offset, magic, what in _MAGIC:
        if head[offset:offset + len(magic)] == magic:
            raise InputError(f"{name} is {what}, not a TensorFlow graph")
    if head.startswith(_HDF5) or head[512:520] == _HDF5:
        return Detected("keras-h5")
    if head.startswith(_ZIP):
        return _detect_zip(path, name)
    if is_tfrecord_header(head) or "tfevents" in path.name:
        # By name too: an event file whose first record is damaged should get the reader's
        # "record at byte 0 is corrupt" rather than "not a GraphDef".
        return Detected("events")
    text = _as_text(head)
    if text is not None:
        return _detect_text(path, name, head, text)
    return _detect_binary(path, name)


def _detect_zip(path: Path, name: str) -> Detected:
    try:
        with zipfile.ZipFile(path) as archive:
            members = set(archive.namelist())
    except (zipfile.BadZipFile, OSError) as exc:
        raise InputError(f"{name}: a damaged zip archive ({exc})") from None
    if "config.json" in members:
        return Detected("keras")
    if any(member.endswith("saved_model.pb") for member in members):
        raise InputError(f"{name} is a zip archive holding a SavedModel; unzip it and pass the "
                         "directory that holds saved_model.pb")
    raise InputError(f"{name} is a zip archive but not a Keras model (a .keras file holds "
                     "config.json)")


def _as_text(head: bytes) -> str | None:
    """Return ``head`` decoded if it looks like text (UTF-8, no control bytes), else None."""
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4 or len(head) < _HEAD_SIZE:
            return None  # invalid UTF-8 before the last (possibly cut) character
        text = head[:exc.start].decode("utf-8")
    if any(ord(ch) < 32 and ch not in "\t\n\r\f" for ch in text):
        return None
    return text


def _detect_text(path: Path, name: str, head: bytes, text: str) -> Detected:
    head = head.removeprefix(_BOM)
    body = head[_COMMENT_LINES.match(head).end():]  # type: ignore[union-attr]
    first = _FIRST_FIELD.match(body)
    if first:
        field = first.group(1)
        if field == b"model_checkpoint_path":
            raise InputError(f"{name} is a TensorFlow checkpoint state file; the graph is in the "
                             ".meta file next to it (or export a SavedModel)")
        if field in _SAVEDMODEL_FIELDS:
            return Detected("savedmodel", text=True)
        if field in _METAGRAPH_FIELDS:
            return Detected("metagraph", text=True)
        return Detected("graphdef", text=True)  # errors then point at the line
    stripped = text.removeprefix("\ufeff").lstrip()
    if stripped.startswith(("{", "[")):
        return _detect_json(path, name)
    if path.suffix.lower() in _TEXT_HINTS and path.suffix.lower() != ".txt":
        return Detected("graphdef", text=True)  # a malformed text graph: report the line
    if stripped.startswith("<"):
        raise InputError(f"{name} is XML or HTML, not a TensorFlow graph")
    if not stripped:
        raise NoGraphError(f"{name} holds only whitespace and comments: it holds no ops")
    raise InputError(f"{name} is a text file but not a TensorFlow graph (protobuf text format "
                     "starts with a field such as 'node {')")


def is_keras_config(value: object) -> bool:
    """Tell whether a decoded JSON value is a Keras model config (``model.to_json()``)."""
    return isinstance(value, dict) and "class_name" in value and "config" in value


def _detect_json(path: Path, name: str) -> Detected:
    try:
        with open(path, "rb") as stream:
            value = json.load(stream)
    except (ValueError, OSError) as exc:
        raise InputError(f"{name}: looks like JSON but does not parse ({exc})") from None
    if is_keras_config(value):
        return Detected("keras-json", config=value)
    raise InputError(f"{name} is JSON but not a Keras model config (no 'class_name' and "
                     "'config' at the top)")


def _detect_binary(path: Path, name: str) -> Detected:
    """Trial-parse binary protobuf as the types the name suggests first, keeping a sane result."""
    try:
        with open(path, "rb") as stream:
            data = stream.read()
    except OSError as exc:
        raise InputError(f"{name}: cannot read the file ({exc.strerror or exc})") from None
    if data.endswith(_CHECKPOINT_INDEX_MAGIC):
        raise InputError(f"{name} is a TensorFlow checkpoint index (weights, no graph); the "
                         "graph is in the .meta file next to it (or export a SavedModel)")
    if is_onnx_model(data):  # before the trial parses: its bytes may decode as a GraphDef
        return Detected("onnx")
    candidates = ["graphdef", "metagraph", "savedmodel"]
    if path.name.startswith("saved_model") or data[:1] == b"\x08":
        candidates = ["savedmodel", "graphdef", "metagraph"]
    elif path.suffix == ".meta":
        candidates = ["metagraph", "graphdef", "savedmodel"]
    empty_graph = decoded = False
    for fmt in candidates:
        if fmt == "graphdef":
            # Read as the head the model is built from (graphdef.parse_head), so the file is
            # parsed once; the model checks the NodeDefs it keeps.  Bytes that do not decode
            # as a head do not as a GraphDef either: its fields are a GraphDef's.
            head = _trial_parse(graph_head_class(), data)
            if head is None:
                continue
            if not head.HasField("library") and is_plausible_graph(head):
                return Detected(fmt, message=head)
        message = _trial_parse(_MESSAGES[fmt], data)
        if message is None:
            continue
        decoded = True
        if _plausible(fmt, message):
            return Detected(fmt, message=message)
        empty_graph = empty_graph or (fmt == "graphdef" and _is_empty_graph(message))
    if empty_graph:
        raise NoGraphError(f"{name}: the GraphDef holds no ops")
    if decoded:  # protobuf accepts many byte strings; these bytes just do not look like a graph
        raise InputError(
            f"{name} is not a TensorFlow GraphDef, MetaGraphDef or SavedModel (it decodes as "
            "protobuf, but most of its op names or types are missing or unprintable; is it "
            "another kind of file?)"
        )
    raise InputError(
        f"{name} is not a TensorFlow GraphDef, MetaGraphDef or SavedModel (it does not decode as "
        "any of them; is it cut short, or another kind of file?)"
    )


def _is_empty_graph(graph: Any) -> bool:
    """A GraphDef that decoded cleanly (nothing unknown) but has neither ops nor functions."""
    return (not graph.node and not graph.library.function
            and not len(unknown_fields.UnknownFieldSet(graph)))


#: What each binary format is parsed as.
_MESSAGES: dict[str, type[Message]] = {
    "graphdef": GraphDef, "metagraph": MetaGraphDef, "savedmodel": SavedModel}


def _trial_parse(cls: type[Message], data: bytes) -> Message | None:
    """``data`` parsed as ``cls``, or None when it does not decode as one."""
    message = cls()
    try:
        message.ParseFromString(data)
    except DecodeError:
        return None
    return message


def _plausible(fmt: str, message: Any) -> bool:
    if fmt == "graphdef":
        return is_plausible_graph(message)
    if fmt == "metagraph":
        return _plausible_meta(message)
    return bool(message.meta_graphs) and all(_plausible_meta(m) for m in message.meta_graphs)


def _plausible_meta(meta: MetaGraphDef) -> bool:
    tags_ok = all(tag.isprintable() for tag in meta.meta_info_def.tags)
    return tags_ok and is_plausible_graph(meta.graph_def)
