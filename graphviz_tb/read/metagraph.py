"""MetaGraphDef files (``.meta``, binary or text), as TF1's ``tf.train.Saver`` writes them.

A MetaGraphDef wraps a GraphDef with its tags and signatures; the signatures tell which graph
tensors are the model's inputs and outputs, which the picture marks.  The SavedModel reader
reuses :func:`signature_specs` and :func:`source_for`, since a SavedModel is a list of these.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from tensorboard.compat.proto.meta_graph_pb2 import MetaGraphDef, SignatureDef, TensorInfo

from ._proto import check_has_ops, parse_binary, parse_text, read_bytes
from .base import Discovery, GraphSource, TensorSpec
from .dtypes import dtype_name, shape_from_proto

__all__ = ["DEFAULT_SIGNATURE", "discover", "signature_specs", "source_for", "tensor_spec"]

#: The signature serving uses unless told otherwise, so the one the picture shows first.
DEFAULT_SIGNATURE = "serving_default"


def tensor_spec(name: str, info: TensorInfo) -> TensorSpec:
    """Turn a signature's TensorInfo into a TensorSpec bound to its graph tensor.

    Sparse and composite tensors have no single tensor name; they bind to their values tensor
    (or first component), which is the edge a user would follow.
    """
    encoding = info.WhichOneof("encoding")
    if encoding == "coo_sparse":
        tensor = info.coo_sparse.values_tensor_name
    elif encoding == "composite_tensor" and info.composite_tensor.components:
        tensor = info.composite_tensor.components[0].name
    else:
        tensor = info.name
    has_shape = info.HasField("tensor_shape")
    return TensorSpec(
        name=name,
        tensor=tensor,
        dtype=dtype_name(info.dtype) if info.dtype else None,
        shape=shape_from_proto(info.tensor_shape) if has_shape else None,
    )


def signature_specs(
    signatures: Mapping[str, SignatureDef],
) -> tuple[tuple[TensorSpec, ...], tuple[TensorSpec, ...]]:
    """Return the (inputs, outputs) of a meta graph's signatures.

    ``serving_default`` alone when present, as it is the model's main entry point; otherwise all
    signatures, each tensor named ``signature/key`` when there are several so names stay unique.
    """
    mapping = dict(signatures)
    if DEFAULT_SIGNATURE in mapping:
        mapping = {DEFAULT_SIGNATURE: mapping[DEFAULT_SIGNATURE]}
    prefix = len(mapping) > 1
    inputs: list[TensorSpec] = []
    outputs: list[TensorSpec] = []
    for key in sorted(mapping):
        signature = mapping[key]
        for specs, infos in ((inputs, signature.inputs), (outputs, signature.outputs)):
            for arg in sorted(infos):
                specs.append(tensor_spec(f"{key}/{arg}" if prefix else arg, infos[arg]))
    return tuple(inputs), tuple(outputs)


def source_for(meta: MetaGraphDef, name: str, label: str, origin: str) -> GraphSource:
    """Describe one meta graph as a GraphSource labelled ``label · tags``.

    ``name`` is the file, for errors raised when the graph is loaded.
    """
    tags = tuple(meta.meta_info_def.tags)
    inputs, outputs = signature_specs(meta.signature_def)
    return GraphSource(
        name=f"{label} · {','.join(tags)}" if tags else label,
        kind="op",
        origin=origin,
        load=lambda: check_has_ops(meta.graph_def, name),
        inputs=inputs,
        outputs=outputs,
        tags=tags,
    )


def discover(
    path: str | os.PathLike[str], *, text: bool, meta: MetaGraphDef | None = None
) -> Discovery:
    """List the graph of a MetaGraphDef file (parsed here unless detection already did)."""
    name = os.fspath(path)
    if meta is None:
        data = read_bytes(path)
        meta = (parse_text(MetaGraphDef, data, name) if text
                else parse_binary(MetaGraphDef, data, name, "MetaGraphDef"))
    check_has_ops(meta.graph_def, name)
    source = source_for(meta, name, Path(name).name, "metagraph")
    return Discovery(path=name, source_kind="metagraph", graphs=(source,))
