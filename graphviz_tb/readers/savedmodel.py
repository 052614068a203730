"""SavedModels: a directory holding ``saved_model.pb`` (or ``.pbtxt``), or that file itself.

A SavedModel is a list of MetaGraphDefs, one per tag set (``serve``, ``train``...), each with
its signatures.  We list every meta graph as its own GraphSource; ``select`` then picks by
``LoadOptions.tags`` or, by default, the one tagged ``serve``.

TensorBoard's protos stop short of ``saved_model.proto``, and we must not import TensorFlow for
it, so the two-field ``SavedModel`` message is declared here from a descriptor built at import.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import Message
from tensorboard.compat.proto import meta_graph_pb2

from ..errors import NoGraphError
from ._proto import parse_binary, parse_text, read_bytes
from .base import Discovery
from .metagraph import source_for

__all__ = ["SAVED_MODEL_FILES", "SavedModel", "discover", "find_saved_model_file"]

#: The file names that make a directory a SavedModel, binary first as TensorFlow prefers it.
SAVED_MODEL_FILES = ("saved_model.pb", "saved_model.pbtxt")

_PROTO_FILE = "graphviz_tb/readers/saved_model.proto"


def _saved_model_class() -> type[Message]:
    """Declare ``SavedModel { int64 saved_model_schema_version = 1; repeated MetaGraphDef
    meta_graphs = 2; }``, matching TensorFlow's wire and text format."""
    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName(_PROTO_FILE)
    except KeyError:
        file_proto = descriptor_pb2.FileDescriptorProto(
            name=_PROTO_FILE,
            package="graphviz_tb",
            syntax="proto3",
            dependency=[meta_graph_pb2.DESCRIPTOR.name],
        )
        message = file_proto.message_type.add(name="SavedModel")
        field = descriptor_pb2.FieldDescriptorProto
        message.field.add(name="saved_model_schema_version", number=1,
                          type=field.TYPE_INT64, label=field.LABEL_OPTIONAL)
        message.field.add(name="meta_graphs", number=2, type=field.TYPE_MESSAGE,
                          label=field.LABEL_REPEATED,
                          type_name="." + meta_graph_pb2.MetaGraphDef.DESCRIPTOR.full_name)
        pool.AddSerializedFile(file_proto.SerializeToString())
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("graphviz_tb.SavedModel"))


#: The SavedModel container message (``saved_model_schema_version``, ``meta_graphs``).
SavedModel = _saved_model_class()


def find_saved_model_file(directory: Path) -> Path | None:
    """Return the ``saved_model.pb``/``.pbtxt`` file of a SavedModel directory, if it has one."""
    for file_name in SAVED_MODEL_FILES:
        candidate = directory / file_name
        if candidate.is_file():
            return candidate
    return None


def discover(
    path: str | os.PathLike[str], *, text: bool | None = None, saved_model: Message | None = None
) -> Discovery:
    """List the meta graphs of a SavedModel directory or file, one GraphSource per tag set.

    ``text`` says whether the file is in text format (default: by its ``.pbtxt`` suffix);
    ``saved_model`` is the already parsed message when content detection had to parse the file.
    """
    given = Path(path)
    file = (find_saved_model_file(given) if given.is_dir() else given) or given
    name = os.fspath(file)
    if saved_model is None:
        data = read_bytes(file)
        if text is None:
            text = file.suffix == ".pbtxt"
        saved_model = (parse_text(SavedModel, data, name) if text
                       else parse_binary(SavedModel, data, name, "SavedModel"))
    metas = list(saved_model.meta_graphs)  # type: ignore[attr-defined]
    if not metas:
        raise NoGraphError(f"{name}: the SavedModel holds no meta graphs")
    label = (given if given.is_dir() else file.parent).resolve().name or name
    sources = [source_for(meta, name, label, "savedmodel") for meta in metas]
    seen: set[str] = set()
    for index, source in enumerate(sources):
        if source.name in seen:
            sources[index] = dataclasses.replace(source, name=f"{source.name} #{index}")
        seen.add(sources[index].name)
    return Discovery(path=os.fspath(given), source_kind="savedmodel", graphs=tuple(sources))
