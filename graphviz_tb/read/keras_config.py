"""Keras model configs (``model.to_json()``) turned into a conceptual GraphDef, one node per layer.

Keras' TensorBoard callback, ``.keras`` archives and ``.h5`` files all store the model as this
JSON config rather than as ops.  Giving every layer a NodeDef (op = the layer class, inputs = the
layers it was called on) lets the rest of the pipeline draw it like any graph: a nested model
becomes a scope (``encoder/dense``), so it collapses into a group.

Both serialisations are understood:

* Keras 2: ``inbound_nodes: [[[layer, node_index, tensor_index, kwargs], ...], ...]``;
* Keras 3: ``inbound_nodes: [{"args": [...], "kwargs": {...}}]`` holding ``__keras_tensor__``
  records whose ``keras_history`` is ``[layer, node_index, tensor_index]``.

Nothing in the config is executed or deserialised: a ``Lambda`` layer is a node with op
``Lambda``, and its function's bytecode is left out.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.node_def_pb2 import NodeDef
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto

from .dtypes import dtype_enum

__all__ = ["ConfigError", "custom_classes", "layers_of", "to_graph_def"]

# Config entries that are not worth showing: the name is the node's, the rest is code or bulky.
_SKIPPED_KEYS = frozenset({"name", "function", "function_type", "module", "output_shape_module",
                           "layers", "input_layers", "output_layers", "registered_name"})
_MAX_ATTR_CHARS = 256
_KERAS_TENSOR = "__keras_tensor__"
_CONSTANT = "_CONSTANT_VALUE"  # Keras 2's stand-in for a constant first call argument


#: ``(layer name, node index, tensor index, shape or None)``: one tensor a layer consumed.
_History = tuple[str, int, int, Any]


class ConfigError(ValueError):
    """The JSON is not a Keras model config we understand (raised with what is wrong)."""


@dataclass
class _Model:
    """A (possibly nested) model once built: where outer tensors enter and where outputs leave."""

    entries: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)


def to_graph_def(config: Mapping[str, Any] | str | bytes) -> GraphDef:
    """Convert a Keras model config (dict or JSON text) into a conceptual GraphDef.

    Raises
    ------
    ConfigError
        The config is not a model (e.g. a bare layer) or is malformed.
    """
    if isinstance(config, (str, bytes)):
        try:
            config = json.loads(config)
        except ValueError as exc:
            raise ConfigError(f"the Keras model config is not valid JSON ({exc})") from None
    if not isinstance(config, Mapping):
        raise ConfigError("the JSON is not a Keras model config (not an object)")
    if layers_of(config) is None:
        raise ConfigError(
            f"the Keras config of a {config.get('class_name', 'model')} lists no layers, so there "
            "is no conceptual graph (subclassed models and bare layers keep their structure in "
            "code)"
        )
    builder = _Builder()
    builder.add_model(config, scope="")
    return builder.finish()


def custom_classes(config: Any) -> list[str]:
    """The classes a config names from the user's own code rather than from Keras
    (``zoo>Scale``, as ``register_keras_serializable`` registers it), in order, once each:
    what a safe load cannot build in a process that does not import that code."""
    found: dict[str, None] = {}
    stack = [config]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            module = item.get("module")
            if isinstance(item.get("class_name"), str) and isinstance(module, str) \
                    and module.split(".")[0] not in ("keras", "tf_keras", "tensorflow"):
                found.setdefault(str(item.get("registered_name") or item["class_name"]), None)
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))
    return list(found)


def _config_of(spec: Mapping[str, Any]) -> Any:
    return spec.get("config", {})


def layers_of(spec: Mapping[str, Any]) -> list[Any] | None:
    """The layer list of a model spec, or None if the spec is a plain layer."""
    config = _config_of(spec)
    if isinstance(config, list):  # Keras 1 / early Keras 2 Sequential: the config is the list
        return config
    if isinstance(config, Mapping) and isinstance(config.get("layers"), list):
        return config["layers"]
    return None


def _layer_name(spec: Mapping[str, Any]) -> str:
    config = _config_of(spec)
    name = spec.get("name") or (config.get("name") if isinstance(config, Mapping) else None)
    if not isinstance(name, str) or not name:
        raise ConfigError(f"a {spec.get('class_name', 'layer')} in the Keras config has no name")
    return name


def _is_sequential(spec: Mapping[str, Any]) -> bool:
    """Sequential configs list layers in call order; functional ones name their inputs."""
    config = _config_of(spec)
    return not isinstance(config, Mapping) or "input_layers" not in config


class _Builder:
    """Accumulates NodeDefs and output shapes while walking (nested) model configs."""

    def __init__(self) -> None:
        self.nodes: dict[str, NodeDef] = {}
        self.shapes: dict[str, dict[int, list[int | None] | None]] = {}

    # -- models ---------------------------------------------------------------------------------

    def add_model(self, spec: Mapping[str, Any], scope: str) -> _Model:
        layers = [layer for layer in layers_of(spec) or () if isinstance(layer, Mapping)]
        if _is_sequential(spec):
            return self._add_sequential(layers, scope)
        return self._add_functional(spec, layers, scope)

    def _add_sequential(self, layers: list[Mapping[str, Any]], scope: str) -> _Model:
        model = _Model()
        previous: list[str] = []
        for index, layer in enumerate(layers):
            if index == 0 and layer.get("class_name") != "InputLayer":
                implied = self._implied_input(layer, scope)
                if implied:
                    previous = [implied]
                    model.entries = [implied]
            built = self._add_layer(layer, scope)
            self._note_input_shape(previous, layer)
            if isinstance(built, _Model):
                self._feed(built.entries, previous)
                if not model.entries:
                    model.entries = list(built.entries)
                previous = built.outputs[:1]
            else:
                self.nodes[built].input.extend(previous)
                if not model.entries:
                    model.entries = [built]
                previous = [built]
        model.outputs = previous
        return model

    def _add_functional(
        self, spec: Mapping[str, Any], layers: list[Mapping[str, Any]], scope: str
    ) -> _Model:
        built: dict[str, str | _Model] = {}
        for layer in layers:
            built[_layer_name(layer)] = self._add_layer(layer, scope)
        for layer in layers:
            target = built[_layer_name(layer)]
            for call in _calls(layer.get("inbound_nodes")):
                refs = [self._resolve(history, built, scope)
                        for history in _histories(call, built.keys())]
                if isinstance(target, _Model):
                    self._feed(target.entries, refs)
                else:
                    self.nodes[target].input.extend(refs)
        config = _config_of(spec)
        model = _Model()
        for key, sink in (("input_layers", model.entries), ("output_layers", model.outputs)):
            sink.extend(self._resolve(history, built, scope)
                        for history in _io_histories(config.get(key)))
        return model

    def _note_input_shape(self, previous: list[str], layer: Mapping[str, Any]) -> None:
        """Record a Sequential layer's ``build_config.input_shape`` as its producer's output."""
        build = layer.get("build_config")
        shape = build.get("input_shape") if isinstance(build, Mapping) else None
        if len(previous) == 1:
            self._record_shape(previous[0], shape)

    def _record_shape(self, ref: str, shape: Any) -> None:
        """Note the shape of the tensor ``ref`` (``node`` or ``node:index``); first one wins."""
        if isinstance(shape, list) and all(
            dim is None or (isinstance(dim, int) and not isinstance(dim, bool)) for dim in shape
        ):
            node_name, separator, index = ref.rpartition(":")
            if not (separator and index.isdigit()):
                node_name, index = ref, "0"
            self.shapes.setdefault(node_name, {}).setdefault(int(index), shape)

    def _feed(self, entries: list[str], refs: list[str]) -> None:
        """Wire the tensors a nested model is called on to its input layers, in order."""
        if len(entries) == 1:
            self.nodes[entries[0]].input.extend(refs)
            return
        for entry, ref in zip(entries, refs, strict=False):
            self.nodes[entry].input.append(ref)

    def _resolve(self, history: _History, built: Mapping[str, str | _Model],
                 scope: str) -> str:
        """Turn ``(layer, node_index, tensor_index, shape)`` into a GraphDef input string."""
        name, _, tensor_index, shape = history
        target = built.get(name)
        if isinstance(target, _Model):
            if tensor_index < len(target.outputs):
                ref = target.outputs[tensor_index]
            else:
                ref = f"{scope}{name}/output_{tensor_index}"  # dangling: the model lost it
        else:
            node = target or f"{scope}{name}"
            ref = node if tensor_index == 0 else f"{node}:{tensor_index}"
        self._record_shape(ref, shape)
        return ref

    # -- layers ---------------------------------------------------------------------------------

    def _add_layer(self, spec: Mapping[str, Any], scope: str) -> str | _Model:
        """Add one layer; a nested model becomes its own scope and returns its _Model."""
        name = _layer_name(spec)
        if layers_of(spec) is not None:
            return self.add_model(spec, scope=f"{scope}{name}/")
        config = _config_of(spec)
        node = NodeDef(name=f"{scope}{name}", op=str(spec.get("class_name") or "Layer"))
        if isinstance(config, Mapping):
            for key, value in _attrs(config):
                node.attr[key].CopyFrom(value)
            if spec.get("class_name") == "InputLayer":
                self._input_shape(node.name, config)
        self.nodes[node.name] = node
        return node.name

    def _implied_input(self, first: Mapping[str, Any], scope: str) -> str | None:
        """The InputLayer a Sequential model gets from its first layer's ``batch_input_shape``."""
        config = _config_of(first)
        if not isinstance(config, Mapping):
            return None
        if config.get("batch_input_shape") is None and config.get("batch_shape") is None:
            return None
        name = f"{scope}{_layer_name(first)}_input"
        node = NodeDef(name=name, op="InputLayer")
        for key, value in _attrs({"dtype": config.get("dtype")}):
            node.attr[key].CopyFrom(value)
        self.nodes[name] = node
        self._input_shape(name, config)
        return name

    def _input_shape(self, node_name: str, config: Mapping[str, Any]) -> None:
        self._record_shape(node_name, config.get("batch_shape", config.get("batch_input_shape")))

    def finish(self) -> GraphDef:
        graph = GraphDef()
        for name, node in self.nodes.items():
            shapes = self.shapes.get(name)
            if shapes:
                protos = node.attr["_output_shapes"].list.shape
                for index in range(max(shapes) + 1):
                    protos.add().CopyFrom(_shape_proto(shapes.get(index)))
            graph.node.append(node)
        return graph


def _calls(inbound_nodes: Any) -> Iterator[Any]:
    """The inbound nodes (one per call of the layer), whichever format."""
    if isinstance(inbound_nodes, list):
        yield from inbound_nodes


def _histories(call: Any, layers: Collection[str]) -> Iterator[_History]:
    """``(layer, node_index, tensor_index, shape)`` of each tensor one call consumed, in order.

    ``layers`` are the model's layer names: Keras 2 writes a tensor passed as a keyword argument
    as a bare ``[layer, node_index, tensor_index]`` list, told from other lists by the name.
    """
    if isinstance(call, Mapping):  # Keras 3: {"args": [...], "kwargs": {...}}
        yield from _keras_tensors(call.get("args", ()))
        yield from _keras_tensors(call.get("kwargs", {}))
    elif isinstance(call, list):
        # Keras 2: the first call argument's structure, each tensor as
        # [layer, node_index, tensor_index, kwargs]; a lone tensor may come unwrapped.
        history = _history(call)
        if history is None:
            for item in call:
                yield from _histories(item, layers)
            return
        if history[0] != _CONSTANT:
            yield history
        if len(call) > 3:
            yield from _keras2_kwarg_tensors(call[3], layers)


def _keras2_kwarg_tensors(value: Any, layers: Collection[str]) -> Iterator[_History]:
    history = _history(value)
    if history and history[0] in layers:
        yield history
    elif isinstance(value, list):
        for item in value:
            yield from _keras2_kwarg_tensors(item, layers)
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _keras2_kwarg_tensors(item, layers)


def _history(entry: Any) -> _History | None:
    if (isinstance(entry, list) and len(entry) >= 3 and isinstance(entry[0], str)
            and isinstance(entry[1], int) and isinstance(entry[2], int)):
        return entry[0], entry[1], entry[2], None
    return None


def _keras_tensors(value: Any) -> Iterator[_History]:
    """Find Keras 3 ``__keras_tensor__`` records anywhere in call arguments."""
    if isinstance(value, Mapping):
        if value.get("class_name") == _KERAS_TENSOR:
            config = value.get("config", {})
            history = _history(config.get("keras_history"))
            if history:
                shape = config.get("shape")
                yield (*history[:3], shape)
            return
        for item in value.values():
            yield from _keras_tensors(item)
    elif isinstance(value, list):
        for item in value:
            yield from _keras_tensors(item)


def _io_histories(value: Any) -> Iterator[_History]:
    """``input_layers`` / ``output_layers``: one ``[name, node, tensor]`` or a (nested) list."""
    history = _history(value)
    if history:
        yield history
    elif isinstance(value, list):
        for item in value:
            yield from _io_histories(item)
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _io_histories(item)


def _attrs(config: Mapping[str, Any]) -> Iterator[tuple[str, AttrValue]]:
    """The layer settings worth showing, as string attributes (``dtype`` as a type if known)."""
    for key, value in config.items():
        if key in _SKIPPED_KEYS or key.startswith("_") or value is None:
            continue
        if key == "dtype":
            text = _dtype_text(value)
            enum = dtype_enum(text) if text else None
            if enum is not None:
                yield key, AttrValue(type=enum)  # type: ignore[arg-type]
                continue
        else:
            text = _text(value)
        if text is not None and len(text) <= _MAX_ATTR_CHARS:
            yield key, AttrValue(s=text.encode())


def _dtype_text(value: Any) -> str | None:
    if isinstance(value, Mapping):  # Keras 3 DTypePolicy {"class_name": ..., "config": {name}}
        config = value.get("config", {})
        return config.get("name") if isinstance(config, Mapping) else None
    return value if isinstance(value, str) else None


def _text(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    if isinstance(value, list) and all(isinstance(v, (int, float, str)) or v is None
                                       for v in value):
        return json.dumps(value)
    if isinstance(value, Mapping) and isinstance(value.get("class_name"), str):
        return value["class_name"]  # an initializer, regulariser or wrapped layer: its class
    return None


def _shape_proto(shape: list[int | None] | None) -> TensorShapeProto:
    if shape is None:
        return TensorShapeProto(unknown_rank=True)
    return TensorShapeProto(
        dim=[TensorShapeProto.Dim(size=-1 if size is None else size) for size in shape]
    )
