"""SavedModels: a directory holding ``saved_model.pb`` (or ``.pbtxt``), or that file itself.

A SavedModel is a list of MetaGraphDefs, one per tag set (``serve``, ``train``...), each with
its signatures.  We list every meta graph as its own GraphSource; ``select`` then picks by
``LoadOptions.tags`` or, by default, the one tagged ``serve``.

A TF2 SavedModel saved without a serving signature keeps its computation only in the object
graph: the traced methods of the saved object are functions of the library that no op calls.
Its graph then holds variables and the checkpoint's save and restore calls, and none of the
model.  For each such method we add a call op named after its path in the object graph
(``classify``, ``encoder/__call__``), so the picture opens it as it opens any call.

Nothing calls such a method, so no variable handle flows into its body, and a body need not
record its variable reads' shapes.  The object graph knows them: it binds each concrete
function's captured arguments to the variables it reads.  We write each bound variable's
shape and dtype into its argument's ``arg_attr`` as ``_handle_shapes``/``_handle_dtypes``, the
attributes TensorFlow's own exporter uses, which the model and shape inference then read.

TensorBoard's protos stop short of ``saved_model.proto``, and we must not import TensorFlow for
it, so the two-field ``SavedModel`` message is declared here from a descriptor built at import.
"""

from __future__ import annotations

import dataclasses
import os
from collections import deque
from functools import partial
from pathlib import Path

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import Message
from tensorboard.compat.proto import meta_graph_pb2, types_pb2
from tensorboard.compat.proto.graph_pb2 import GraphDef

from ..errors import NoGraphError
from ._proto import check_has_ops, parse_binary, parse_text, read_bytes
from .base import Discovery
from .metagraph import source_for

__all__ = ["OBJECT_PATH", "SAVED_MODEL_FILES", "SavedModel", "bind_variables", "discover",
           "find_saved_model_file", "load_meta", "with_object_methods"]

#: The file names that make a directory a SavedModel, binary first as TensorFlow prefers it.
SAVED_MODEL_FILES = ("saved_model.pb", "saved_model.pbtxt")

_PROTO_FILE = "graphviz_tb/read/saved_model.proto"


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


#: Signatures TensorFlow adds for itself, which serve nothing of the model.
_OWN_SIGNATURES = ("__saved_model_init_op",)


def _called(graph: GraphDef) -> set[str]:
    """The library functions the graph's ops call, directly or through other functions."""
    library = {f.signature.name: f for f in graph.library.function}
    called: set[str] = set()
    work = [graph.node]
    while work:
        for node in work.pop():
            for value in node.attr.values():
                names = [value.func.name] if value.HasField("func") else [
                    f.name for f in value.list.func]
                for name in names:
                    if name and name not in called:
                        called.add(name)
                        if name in library:
                            work.append(library[name].node_def)
    return called


def _object_methods(meta: Message) -> list[tuple[str, str]]:
    """(path in the object graph, concrete function) of every traced method, in the object
    graph's order (breadth first from the root object)."""
    nodes = meta.object_graph_def.nodes  # type: ignore[attr-defined]
    found: list[tuple[str, str]] = []
    seen = {0}
    queue = deque([(0, "")] if nodes else [])  # a TF1 SavedModel has no object graph
    while queue:
        index, path = queue.popleft()
        node = nodes[index]
        kind = node.WhichOneof("kind")
        if kind == "function":
            found += [(path, name) for name in node.function.concrete_functions]
        elif kind == "bare_concrete_function":
            found.append((path, node.bare_concrete_function.concrete_function_name))
        for child in node.children:
            if child.node_id not in seen and child.node_id < len(nodes):
                seen.add(child.node_id)
                queue.append((child.node_id, f"{path}/{child.local_name}" if path
                              else child.local_name))
    return found


#: The attribute that marks a call op we added for a method (its value: the method's path in
#: the object graph).  It is not TensorFlow's op: shape inference leaves it out of the import.
OBJECT_PATH = "_tbgraph_object_path"


def bind_variables(meta: Message) -> None:
    """Record on each concrete function's captured resource arguments the shape and dtype of
    the variable the object graph binds them to (see the module docstring).  In place, and
    idempotent: an argument that records a handle already keeps it."""
    objects = meta.object_graph_def  # type: ignore[attr-defined]
    library = {f.signature.name: f
               for f in meta.graph_def.library.function}  # type: ignore[attr-defined]
    for function, concrete in objects.concrete_functions.items():
        fdef = library.get(function)
        bound = list(concrete.bound_inputs)
        if fdef is None or not bound or len(bound) > len(fdef.signature.input_arg):
            continue
        first = len(fdef.signature.input_arg) - len(bound)  # captures follow the arguments
        for offset, node_id in enumerate(bound):
            index = first + offset
            if (node_id >= len(objects.nodes)
                    or objects.nodes[node_id].WhichOneof("kind") != "variable"
                    or fdef.signature.input_arg[index].type != types_pb2.DT_RESOURCE):
                continue
            attr = fdef.arg_attr[index].attr
            if "_handle_shapes" in attr:
                continue
            variable = objects.nodes[node_id].variable
            attr["_handle_shapes"].list.shape.add().CopyFrom(variable.shape)
            attr["_handle_dtypes"].list.type.append(variable.dtype)


def load_meta(meta: Message, name: str) -> GraphDef:
    """The GraphDef to draw of one meta graph: its variables bound
    (:func:`bind_variables`), its uncalled methods added (:func:`with_object_methods`)."""
    bind_variables(meta)
    return with_object_methods(meta, name)


def with_object_methods(meta: Message, name: str) -> GraphDef:
    """The meta graph's GraphDef; when it has no signature of its own, a copy with a call op
    for each traced method that no op calls (see the module docstring)."""
    graph = check_has_ops(meta.graph_def, name)  # type: ignore[attr-defined]
    if any(key not in _OWN_SIGNATURES for key in meta.signature_def):  # type: ignore[attr-defined]
        return graph
    called = _called(graph)
    library = {f.signature.name for f in graph.library.function}
    methods: dict[str, str] = {}  # function -> its first path (a method's trace repeats it)
    for path, function in _object_methods(meta):
        if function in library and function not in called:
            methods.setdefault(function, path)
    if not methods:
        return graph
    out = GraphDef()
    out.CopyFrom(graph)
    taken = {node.name for node in graph.node}
    for function, path in methods.items():
        label, n = path or "method", 1
        while label in taken:
            n += 1
            label = f"{path}_{n}"
        taken.add(label)
        node = out.node.add(name=label, op="StatefulPartitionedCall")
        node.attr["f"].func.name = function
        node.attr[OBJECT_PATH].s = (path or "(root)").encode()
    return out


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
    sources = [dataclasses.replace(source_for(meta, name, label, "savedmodel"),
                                   load=partial(load_meta, meta, name))
               for meta in metas]
    seen: set[str] = set()
    for index, source in enumerate(sources):
        if source.name in seen:
            sources[index] = dataclasses.replace(source, name=f"{source.name} #{index}")
        seen.add(sources[index].name)
    return Discovery(path=os.fspath(given), source_kind="savedmodel", graphs=tuple(sources))
