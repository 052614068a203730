"""SavedModels from tf.saved_model.save and TF1's builder, by directory or file, with tag sets."""

from __future__ import annotations

import pytest

from graphviz_tb.errors import SelectionError
from graphviz_tb.options import LoadOptions
from graphviz_tb.read import TensorSpec, discover, select


@pytest.mark.tensorflow
def test_tf2_saved_model_directory(reader_savedmodel):
    made = reader_savedmodel["tf2"]
    discovery = discover(made.path)
    assert discovery.source_kind == "savedmodel"
    source = select(discovery, LoadOptions())
    assert (source.origin, source.tags) == ("savedmodel", ("serve",))
    assert source.name == "tf2 · serve"
    graph = source.load()
    assert len(graph.node) == made.nodes
    assert graph.library.function  # TF2 keeps the computation in functions
    assert source.inputs == (TensorSpec("x", "serving_default_x:0", "float32", (None, 3)),)
    (output,) = source.outputs
    assert (output.name, output.dtype, output.shape) == ("y", "float32", (None, 2))
    assert output.tensor.startswith("StatefulPartitionedCall")


@pytest.mark.tensorflow
def test_saved_model_file_directly(reader_savedmodel):
    made = reader_savedmodel["tf2"]
    discovery = discover(made.path / "saved_model.pb")
    assert discovery.source_kind == "savedmodel"
    assert len(discovery.graphs[0].load().node) == made.nodes


@pytest.mark.tensorflow
def test_tf1_saved_model_with_two_tag_sets(reader_savedmodel):
    made = reader_savedmodel["tf1"]
    discovery = discover(made.path)
    assert [g.tags for g in discovery.graphs] == [("serve",), ("train", "gpu")]
    assert [len(g.load().node) for g in discovery.graphs] == made.extra["nodes"]
    assert select(discovery, LoadOptions()).tags == ("serve",)
    assert select(discovery, LoadOptions(tags=("gpu", "train"))).tags == ("train", "gpu")
    assert select(discovery, LoadOptions(tags=("train",))).tags == ("train", "gpu")
    with pytest.raises(SelectionError, match="tag sets: serve, train,gpu"):
        select(discovery, LoadOptions(tags=("tpu",)))
    serve = select(discovery, LoadOptions())
    assert serve.inputs == (TensorSpec("x", "x:0", "float32", (None, 2)),)
    assert serve.outputs == (TensorSpec("y", "y:0", "float32", (None, 1)),)
