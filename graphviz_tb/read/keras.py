"""Keras model files: ``.keras`` archives, legacy ``.h5`` files and ``model.to_json()`` output.

All three store the model's config, which we turn into a conceptual graph (one node per layer)
with no TensorFlow at all.  A ``.keras`` archive also offers the op graph when TensorFlow is
installed: Keras loads the model (``safe_mode=True``, so no code from the file runs) and we trace
its call.  That takes seconds and the weights, so it is the second choice, never the default.
``.h5`` files get no op graph because legacy loading would deserialise ``Lambda`` code.
"""

from __future__ import annotations

import importlib.util
import json
import os
import zipfile
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError, TensorFlowRequired
from .base import Discovery, GraphSource
from .detect import is_keras_config
from .keras_config import ConfigError, custom_classes, layers_of, to_graph_def
from .keras_step import STEP_ORIGIN
from .live import trace_keras_file

if TYPE_CHECKING:
    from tensorboard.compat.proto.graph_pb2 import GraphDef

__all__ = ["LAYER_GRAPH_ONLY", "discover_archive", "discover_h5", "discover_json"]

#: What a logdir holding only Keras' layer graph lacks, and the two ways to the op graph.
LAYER_GRAPH_ONLY = (
    "only Keras' layer graph was logged here (Keras 3's TensorBoard callback writes no op "
    "graph); for the op graph of the training step, draw the saved model with "
    "'tbgraph render MODEL.keras --step train', or pass "
    "graphviz_tb.keras.OpGraphCallback(log_dir) to fit's callbacks")


def discover_archive(path: str | os.PathLike[str], step: str | None = None,
                     batch_size: int | None = None) -> Discovery:
    """List the conceptual graph of a ``.keras`` archive, and its op graph if TF is installed;
    with ``step``, what Keras runs for one step of the compiled model comes last (see
    :mod:`.keras_step`)."""
    name = os.fspath(path)
    try:
        with zipfile.ZipFile(path) as archive:
            raw = archive.read("config.json")
    except KeyError:
        raise InputError(f"{name}: the archive has no config.json, so it is not a Keras model") \
            from None
    except (zipfile.BadZipFile, OSError) as exc:
        raise InputError(f"{name}: cannot read the Keras archive ({exc})") from None
    config = _decode(raw, name)
    sources = [_conceptual(config, name)]
    if importlib.util.find_spec("tensorflow") is not None:
        custom = custom_classes(config)
        layered = layers_of(config) is not None
        sources.append(GraphSource(
            name=f"{Path(name).name} · op graph (traced by TensorFlow)", kind="op",
            origin="keras", load=lambda: _traced(name, custom, layered),
        ))
        if step is not None:
            sources.append(GraphSource(
                name=f"{Path(name).name} · {step} step (traced by TensorFlow)", kind="op",
                origin=STEP_ORIGIN, load=lambda: _traced(name, custom, layered, step, batch_size),
            ))
    elif step is not None:
        raise TensorFlowRequired(f"--step {step} (what Keras runs, traced by TensorFlow)")
    return Discovery(path=name, source_kind="keras", graphs=tuple(sources))


def _traced(name: str, custom: list[str], layered: bool, step: str | None = None,
            batch_size: int | None = None) -> GraphDef:
    """The op graph TensorFlow traces; when Keras cannot build the model and the config names
    classes of the user's own code, the refusal names them (Keras' own message does not)."""
    try:
        return trace_keras_file(name, step, batch_size)
    except InputError as exc:
        if not custom:
            raise
        shown = ", ".join(custom[:3]) + (f" and {len(custom) - 3} more" if len(custom) > 3 else "")
        other = "; the layer graph (--graph 0) needs only the config" if layered else ""
        raise InputError(f"{name}: the op graph needs Keras to build {shown}, from your own "
                         f"code, which a safe load does not import{other}") from exc


def discover_h5(path: str | os.PathLike[str]) -> Discovery:
    """List the conceptual graph of a legacy Keras ``.h5`` file (needs h5py)."""
    name = os.fspath(path)
    try:
        import h5py  # optional: only .h5 files need it
    except ImportError:
        raise InputError(f"{name}: reading Keras .h5 files needs h5py; install it with: "
                         "pip install h5py") from None
    try:
        with h5py.File(path, "r") as file:
            raw = file.attrs.get("model_config")
    except OSError as exc:
        raise InputError(f"{name}: cannot read the HDF5 file ({exc})") from None
    if raw is None:
        raise InputError(f"{name} is an HDF5 file without a Keras model config (only weights?); "
                         "save the whole model with model.save()")
    if isinstance(raw, str):
        raw = raw.encode()
    return Discovery(path=name, source_kind="keras",
                     graphs=(_conceptual(_decode(bytes(raw), name), name),))


def discover_json(path: str | os.PathLike[str], config: Mapping[str, Any]) -> Discovery:
    """List the conceptual graph of a Keras config saved as JSON (already parsed by detection)."""
    name = os.fspath(path)
    return Discovery(path=name, source_kind="keras", graphs=(_conceptual(config, name),))


def _decode(raw: bytes, name: str) -> Mapping[str, Any]:
    try:
        config = json.loads(raw)
    except ValueError as exc:
        raise InputError(f"{name}: the Keras model config is not valid JSON ({exc})") from None
    if not is_keras_config(config):
        raise InputError(f"{name}: the Keras model config has no 'class_name' and 'config'")
    return config


def _conceptual(config: Mapping[str, Any], name: str) -> GraphSource:
    """Convert now, so a bad config is known at discovery.  A config with no layer graph (a
    subclassed model keeps its structure in code) is still listed beside the file's other
    graphs, and refused in one line when it is the one chosen."""
    source = GraphSource(name=f"{Path(name).name} · conceptual", kind="conceptual",
                         origin="keras", load=lambda: graph)
    try:
        graph = to_graph_def(config)
    except ConfigError as exc:
        message = f"{name}: {exc}"

        def refuse() -> GraphDef:
            raise InputError(message)

        return replace(source, load=refuse)
    return source
