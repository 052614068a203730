"""Build the small, real TensorFlow graphs that live in ``samples/``.

Every sample is produced by TensorFlow (or Keras / PyTorch) itself, so the tool is tested
against what those libraries really write rather than against hand-made protos.  The script
is deterministic as far as TensorFlow allows (fixed seeds, fixed build order, fixed event
file names) and re-runnable: each run deletes and rewrites its outputs, then reads every
output back and records TensorFlow's own counts in ``samples/MANIFEST.json``.

Run from the repository root::

    .venv/bin/python samples/make_samples.py

The PyTorch logdir (``samples/logs/pytorch/``) is only rebuilt when ``torch`` is importable;
otherwise the committed copy is kept and only re-described in the manifest.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras
import numpy as np
import tensorflow as tf
from google.protobuf import text_format
from google.protobuf.message import Message
from tensorboard.backend.event_processing import event_file_loader
from tensorflow.core.framework import graph_pb2
from tensorflow.core.protobuf import config_pb2, meta_graph_pb2, saved_model_pb2
from tensorflow.python.framework.convert_to_constants import (
    convert_variables_to_constants_v2,
)

SAMPLES_DIR = Path(__file__).resolve().parent
REPO_DIR = SAMPLES_DIR.parent
SEED = 20240611
MAX_BYTES = 1024 * 1024

# Event files are renamed to these fixed names so that regenerating a logdir replaces the
# committed file instead of adding one named after the time, host and pid of the run.
EVENT_FILE_NAME = "events.out.tfevents.0000000000.samples.v2"
TORCH_EVENT_FILE_NAME = "events.out.tfevents.0000000000.samples.0"


def _rel(path: Path) -> str:
    """Path relative to the repository root, the form tests and the manifest use."""
    return path.resolve().relative_to(REPO_DIR).as_posix()


def _reset_keras() -> None:
    """Clear Keras' name counters and reseed, so layer names and weights repeat run to run."""
    keras.backend.clear_session()
    keras.utils.set_random_seed(SEED)


def _write_proto(path: Path, message: Message) -> None:
    """Serialize deterministically (sorted map entries) so reruns give identical bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(message.SerializeToString(deterministic=True))


def _fresh_dir(path: Path) -> Path:
    """Delete and recreate a generated folder so no stale files from older runs survive."""
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def _rename_event_files(logdir: Path, new_name: str) -> None:
    """Give each event file a fixed name (one file per folder is expected)."""
    for folder in sorted({p.parent for p in logdir.rglob("*tfevents*")}):
        files = sorted(folder.glob("*tfevents*"))
        if len(files) != 1:
            raise RuntimeError(f"expected one event file in {folder}, found {len(files)}")
        files[0].rename(folder / new_name)


# --------------------------------------------------------------------------------------
# 1. TF1-style MNIST training graph
# --------------------------------------------------------------------------------------


@contextlib.contextmanager
def control_flow_v1() -> Iterator[None]:
    """Build with TF1's control flow (Switch/Merge/Enter/...), restoring v2 afterwards."""
    tf.compat.v1.disable_control_flow_v2()
    try:
        yield
    finally:
        tf.compat.v1.enable_control_flow_v2()


def _weight_variable(shape: list[int], name: str) -> tf.Variable:
    """A classic (ref) VariableV2, as TF1 tutorials created them."""
    initial = tf.random.truncated_normal(shape, stddev=0.1)
    return tf.compat.v1.Variable(initial, name=name, use_resource=False)


def _bias_variable(shape: list[int], name: str) -> tf.Variable:
    """A small positive bias so ReLUs start active; also a ref variable."""
    return tf.compat.v1.Variable(tf.constant(0.1, shape=shape), name=name, use_resource=False)


def _conv_block(x: tf.Tensor, in_channels: int, out_channels: int, scope: str) -> tf.Tensor:
    """conv + bias + relu + max-pool; called twice so conv1 and conv2 share one template."""
    with tf.name_scope(scope):
        weights = _weight_variable([5, 5, in_channels, out_channels], "weights")
        biases = _bias_variable([out_channels], "biases")
        conv = tf.nn.conv2d(x, weights, strides=[1, 1, 1, 1], padding="SAME")
        activations = tf.nn.relu(tf.nn.bias_add(conv, biases))
        pooled = tf.nn.max_pool2d(activations, ksize=2, strides=2, padding="SAME")
        tf.compat.v1.summary.histogram("weights", weights)
        tf.compat.v1.summary.histogram("activations", activations)
    return pooled


def _dense(x: tf.Tensor, in_size: int, out_size: int, scope: str, relu: bool) -> tf.Tensor:
    """A fully connected layer, activation included, all inside its own name scope."""
    with tf.name_scope(scope):
        weights = _weight_variable([in_size, out_size], "weights")
        biases = _bias_variable([out_size], "biases")
        tf.compat.v1.summary.histogram("weights", weights)
        outputs = tf.matmul(x, weights) + biases
        return tf.nn.relu(outputs) if relu else outputs


def build_mnist_tf1_graph() -> tuple[tf.Graph, tf.compat.v1.train.Saver]:
    """Build the classic TF1 MNIST training graph (graph mode, ref variables, Adam).

    Control flow v1 is used as TF1 did, so the assert's guard is Switch/Merge in the
    top-level graph rather than an If op with functions in the library.
    """
    graph = tf.Graph()
    with control_flow_v1(), graph.as_default():
        tf.compat.v1.set_random_seed(SEED)
        with tf.name_scope("input"):
            x = tf.compat.v1.placeholder(tf.float32, [None, 784], name="x")
            y = tf.compat.v1.placeholder(tf.float32, [None, 10], name="y")
            # Explicit control dependency: the pixels pass on only after the range check.
            check = tf.debugging.assert_greater_equal(x, 0.0, name="pixels_non_negative")
            with tf.control_dependencies([check]):
                checked = tf.identity(x, name="checked_x")
            images = tf.reshape(checked, [-1, 28, 28, 1], name="images")
            tf.compat.v1.summary.image("images", images, max_outputs=3)

        # 64 filters in both (not the tutorial's 32 then 64): TF makes a zero slot of under
        # 1000 elements a Const but a larger one a Fill, which would make Adam's slots under
        # conv1/ and conv2/ differ; with 1600+ elements each, the two scopes match exactly.
        h_pool1 = _conv_block(images, 1, 64, "conv1")
        h_pool2 = _conv_block(h_pool1, 64, 64, "conv2")

        flat = tf.reshape(h_pool2, [-1, 7 * 7 * 64], name="flatten")
        h_fc1 = _dense(flat, 7 * 7 * 64, 1024, "fc1", relu=True)

        with tf.name_scope("dropout"):
            keep_prob = tf.compat.v1.placeholder_with_default(1.0, [], name="keep_prob")
            dropped = tf.nn.dropout(h_fc1, rate=1.0 - keep_prob)

        logits = _dense(dropped, 1024, 10, "fc2", relu=False)

        with tf.name_scope("loss"):
            per_example = tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits)
            cross_entropy = tf.reduce_mean(per_example, name="cross_entropy")
            tf.compat.v1.summary.scalar("cross_entropy", cross_entropy)

        global_step = tf.compat.v1.Variable(
            0,
            name="global_step",
            trainable=False,
            dtype=tf.int64,
            use_resource=False,
            collections=[
                tf.compat.v1.GraphKeys.GLOBAL_VARIABLES,
                tf.compat.v1.GraphKeys.GLOBAL_STEP,
            ],
        )
        with tf.name_scope("train"):
            optimizer = tf.compat.v1.train.AdamOptimizer(1e-4)
            optimizer.minimize(cross_entropy, global_step=global_step, name="minimize")

        with tf.name_scope("accuracy"):
            correct = tf.equal(tf.argmax(logits, 1), tf.argmax(y, 1), name="correct")
            accuracy = tf.reduce_mean(tf.cast(correct, tf.float32), name="accuracy")
            tf.compat.v1.summary.scalar("accuracy", accuracy)

        tf.compat.v1.summary.merge_all(name="merged_summaries")
        tf.compat.v1.global_variables_initializer()  # named "init"
        saver = tf.compat.v1.train.Saver()
    return graph, saver


def _smoke_run_mnist(graph: tf.Graph, session: tf.compat.v1.Session) -> None:
    """Run init and one training step on random pixels, proving the graph is executable."""
    rng = np.random.default_rng(SEED)
    feed = {
        graph.get_tensor_by_name("input/x:0"): rng.random((4, 784), dtype=np.float32),
        graph.get_tensor_by_name("input/y:0"): np.eye(10, dtype=np.float32)[[0, 1, 2, 3]],
        graph.get_tensor_by_name("dropout/keep_prob:0"): 0.5,
    }
    session.run(graph.get_operation_by_name("init"))
    session.run(["train/minimize", "merged_summaries/merged_summaries:0"], feed_dict=feed)


def mnist_tf1_graph_def() -> graph_pb2.GraphDef:
    """The MNIST GraphDef, `_output_shapes` on every node with outputs (bench uses it too)."""
    graph, _ = build_mnist_tf1_graph()
    with tf.compat.v1.Session(graph=graph) as session:
        return session.graph.as_graph_def(add_shapes=True)


def make_mnist_tf1() -> None:
    """samples/mnist_tf1.pb (GraphDef with shapes) and samples/mnist_tf1.meta."""
    graph, saver = build_mnist_tf1_graph()
    with tf.compat.v1.Session(graph=graph) as session:
        _smoke_run_mnist(graph, session)
        graph_def = session.graph.as_graph_def(add_shapes=True)
    _write_proto(SAMPLES_DIR / "mnist_tf1.pb", graph_def)
    with graph.as_default():
        meta = tf.compat.v1.train.export_meta_graph(graph=graph, saver_def=saver.as_saver_def())
    _write_proto(SAMPLES_DIR / "mnist_tf1.meta", meta)


# --------------------------------------------------------------------------------------
# 2. Keras CNN traced through nested tf.functions
# --------------------------------------------------------------------------------------


def make_keras_cnn() -> None:
    """samples/keras_cnn.pb: a serving tf.function that calls the model's own tf.function.

    Keras 3 layers are not tf.functions, so tracing the model directly gives a flat graph
    without a library.  Wrapping the model in an inner tf.function (as SavedModel signatures
    do) yields a StatefulPartitionedCall whose body lives in the function library.
    """
    _reset_keras()
    model = keras.Sequential(
        [
            keras.Input((28, 28, 1), name="image"),
            keras.layers.Conv2D(8, 3, activation="relu", name="conv_a"),
            keras.layers.MaxPooling2D(name="pool_a"),
            keras.layers.Conv2D(16, 3, activation="relu", name="conv_b"),
            keras.layers.MaxPooling2D(name="pool_b"),
            keras.layers.Flatten(name="flatten"),
            keras.layers.Dense(10, name="logits"),
        ],
        name="keras_cnn",
    )

    @tf.function
    def predict(images: tf.Tensor) -> tf.Tensor:
        return model(images, training=False)

    @tf.function
    def serve(images: tf.Tensor) -> tf.Tensor:
        return predict(images)

    spec = tf.TensorSpec([None, 28, 28, 1], tf.float32, name="images")
    graph_def = serve.get_concrete_function(spec).graph.as_graph_def()
    _write_proto(SAMPLES_DIR / "keras_cnn.pb", graph_def)


def _diff_cnn(version: int) -> graph_pb2.GraphDef:
    """One version of a small Keras CNN, traced flat (Dense layers named by Keras' counter)."""
    _reset_keras()
    layers = [
        keras.Input((28, 28, 1), name="image"),
        keras.layers.Conv2D(8, 3, padding="same" if version == 1 else "valid",
                            activation="relu", name="conv_a"),
        keras.layers.MaxPooling2D(name="pool_a"),
        keras.layers.Conv2D(16, 3, activation="relu", name="conv_b"),
        keras.layers.GlobalAveragePooling2D(name="gap"),
        keras.layers.Dense(32, activation="relu"),
    ]
    if version == 2:
        layers.append(keras.layers.Dense(32, activation="relu"))
    layers.append(keras.layers.Dense(10))
    model = keras.Sequential(layers, name="cnn")

    @tf.function
    def serve(images: tf.Tensor) -> tf.Tensor:
        return model(images, training=False)

    spec = tf.TensorSpec([None, 28, 28, 1], tf.float32, name="images")
    return serve.get_concrete_function(spec).graph.as_graph_def()


def make_diff_pair() -> None:
    """samples/diff/cnn_v1.pb and cnn_v2.pb: one model before and after a change, for
    ``tbgraph diff``: v2 pads conv_a ``valid`` instead of ``same`` and inserts a Dense layer
    (Keras renumbers the Dense layers after it: dense_1 becomes dense_2)."""
    folder = SAMPLES_DIR / "diff"
    folder.mkdir(exist_ok=True)
    for version in (1, 2):
        _write_proto(folder / f"cnn_v{version}.pb", _diff_cnn(version))


# --------------------------------------------------------------------------------------
# 3. Control flow, v1 (Enter/Merge/Switch/...) and v2 (While/If)
# --------------------------------------------------------------------------------------


def _loop_then_branch(x: tf.Tensor) -> tf.Tensor:
    """The shared computation: a while loop feeding a cond, so both samples match."""
    step0 = tf.constant(0, name="step0")

    def keep_going(step: tf.Tensor, acc: tf.Tensor) -> tf.Tensor:
        return step < 5

    def grow(step: tf.Tensor, acc: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        return step + 1, acc * 2.0 + 1.0

    _, grown = tf.while_loop(keep_going, grow, [step0, x], name="loop")
    total = tf.reduce_sum(grown, name="total")
    return tf.cond(
        total > 100.0,
        lambda: grown / total,
        lambda: grown * 2.0,
        name="branch",
    )


def make_control_flow() -> None:
    """samples/control_flow_v1.pbtxt (cyclic v1 ops) and control_flow_v2.pb (functional)."""
    graph = tf.Graph()
    with control_flow_v1(), graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [3], name="x")
        tf.identity(_loop_then_branch(x), name="result")
    graph_def = graph.as_graph_def()
    path = SAMPLES_DIR / "control_flow_v1.pbtxt"
    path.write_text(text_format.MessageToString(graph_def), encoding="utf-8")

    function = tf.function(_loop_then_branch)
    concrete = function.get_concrete_function(tf.TensorSpec([3], tf.float32, name="x"))
    _write_proto(SAMPLES_DIR / "control_flow_v2.pb", concrete.graph.as_graph_def())


# --------------------------------------------------------------------------------------
# 4. SavedModel
# --------------------------------------------------------------------------------------


class TinyClassifier(tf.Module):
    """A two-layer classifier with a `serving_default` signature and named inputs."""

    def __init__(self) -> None:
        super().__init__(name="tiny_classifier")
        self.hidden_kernel = tf.Variable(
            tf.random.stateless_normal([8, 16], seed=[SEED, 1]), name="hidden/kernel"
        )
        self.hidden_bias = tf.Variable(tf.zeros([16]), name="hidden/bias")
        self.output_kernel = tf.Variable(
            tf.random.stateless_normal([16, 3], seed=[SEED, 2]), name="output/kernel"
        )
        self.output_bias = tf.Variable(tf.zeros([3]), name="output/bias")

    @tf.function(
        input_signature=[
            tf.TensorSpec([None, 8], tf.float32, name="features"),
            tf.TensorSpec([], tf.float32, name="temperature"),
        ]
    )
    def serve(self, features: tf.Tensor, temperature: tf.Tensor) -> dict[str, tf.Tensor]:
        """Logits and temperature-scaled probabilities, keyed by output name."""
        with tf.name_scope("hidden"):
            hidden = tf.nn.relu(tf.matmul(features, self.hidden_kernel) + self.hidden_bias)
        with tf.name_scope("output"):
            logits = tf.matmul(hidden, self.output_kernel) + self.output_bias
        return {"logits": logits, "probabilities": tf.nn.softmax(logits / temperature)}


def make_saved_model() -> None:
    """samples/saved_model/: tf.saved_model.save of TinyClassifier."""
    target = SAMPLES_DIR / "saved_model"
    shutil.rmtree(target, ignore_errors=True)
    module = TinyClassifier()
    tf.saved_model.save(module, str(target), signatures={"serving_default": module.serve})


# --------------------------------------------------------------------------------------
# 5. Logdirs
# --------------------------------------------------------------------------------------


def make_trace_logdir() -> None:
    """samples/logs/trace/: tf.summary.trace_on/trace_export of a 2-layer MLP tf.function.

    Inputs and the step are created before trace_on, so the trace holds only the MLP's
    function graph and no stray eager ops.
    """
    logdir = _fresh_dir(SAMPLES_DIR / "logs" / "trace")
    w1 = tf.Variable(tf.random.stateless_normal([4, 8], seed=[SEED, 3]), name="w1")
    b1 = tf.Variable(tf.zeros([8]), name="b1")
    w2 = tf.Variable(tf.random.stateless_normal([8, 2], seed=[SEED, 4]), name="w2")
    b2 = tf.Variable(tf.zeros([2]), name="b2")

    @tf.function
    def mlp(x: tf.Tensor) -> tf.Tensor:
        with tf.name_scope("layer1"):
            hidden = tf.nn.relu(tf.matmul(x, w1) + b1)
        with tf.name_scope("layer2"):
            return tf.matmul(hidden, w2) + b2

    inputs = tf.ones([2, 4])
    step = tf.constant(0, tf.int64)
    writer = tf.summary.create_file_writer(str(logdir))
    tf.summary.trace_on(graph=True, profiler=False)
    mlp(inputs)
    with writer.as_default():
        tf.summary.trace_export(name="mlp", step=step)
    writer.close()
    _rename_event_files(logdir, EVENT_FILE_NAME)


def _nested_keras_model() -> keras.Model:
    """Functional model with a Sequential used as a layer, for a nested conceptual graph."""
    block = keras.Sequential(
        [
            keras.layers.Dense(8, activation="relu", name="block_dense_1"),
            keras.layers.Dense(4, activation="relu", name="block_dense_2"),
        ],
        name="block",
    )
    inputs = keras.Input((6,), name="features")
    x = keras.layers.Dense(16, activation="relu", name="stem")(inputs)
    x = block(x)
    x = keras.layers.Dropout(0.1, name="dropout")(x)
    outputs = keras.layers.Dense(3, activation="softmax", name="head")(x)
    return keras.Model(inputs, outputs, name="nested_classifier")


def make_keras_logdir() -> None:
    """samples/logs/keras/: Keras' TensorBoard callback with write_graph=True.

    Keras 3.15 does write the conceptual graph (tag `keras`, plugin `graph_keras_model`, in
    Keras 3 JSON), so tf-keras is not needed.  It writes no op graph: its callback only
    exports the train function when that has a `function_spec`, which Keras 3's doesn't.
    """
    logdir = _fresh_dir(SAMPLES_DIR / "logs" / "keras")
    _reset_keras()
    model = _nested_keras_model()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    rng = np.random.default_rng(SEED)
    features = rng.random((8, 6), dtype=np.float32)
    labels = rng.integers(0, 3, size=8)
    callback = keras.callbacks.TensorBoard(
        log_dir=str(logdir),
        write_graph=True,
        histogram_freq=0,
        write_images=False,
        profile_batch=0,
        update_freq="epoch",
    )
    model.fit(features, labels, epochs=1, batch_size=4, callbacks=[callback], verbose=0)
    _rename_event_files(logdir, EVENT_FILE_NAME)


def make_costs_logdir() -> None:
    """samples/logs/costs/: the MNIST training graph and two steps traced with FULL_TRACE.

    ``FileWriter.add_run_metadata`` logs each step's RunMetadata (step stats: every op's time
    and memory): ``forward`` fetches only the loss, ``train`` runs a training step.  The times
    are what this machine measured when the sample was made.
    """
    logdir = _fresh_dir(SAMPLES_DIR / "logs" / "costs")
    graph, _ = build_mnist_tf1_graph()
    v1 = tf.compat.v1
    rng = np.random.default_rng(SEED)
    feed = {
        graph.get_tensor_by_name("input/x:0"): rng.random((32, 784), dtype=np.float32),
        graph.get_tensor_by_name("input/y:0"): np.eye(10, dtype=np.float32)[rng.integers(0, 10,
                                                                                       32)],
    }
    full = v1.RunOptions(trace_level=v1.RunOptions.FULL_TRACE)
    with v1.Session(graph=graph) as session:
        session.run(graph.get_operation_by_name("init"))
        writer = v1.summary.FileWriter(str(logdir), graph=graph)
        for step, (tag, fetch) in enumerate((("forward", "loss/cross_entropy:0"),
                                             ("train", "train/minimize")), 1):
            metadata = v1.RunMetadata()
            session.run(fetch, feed_dict=feed, options=full, run_metadata=metadata)
            writer.add_run_metadata(metadata, tag, global_step=step)
        writer.close()
    _rename_event_files(logdir, EVENT_FILE_NAME)


def make_pytorch_logdir() -> bool:
    """samples/logs/pytorch/: SummaryWriter.add_graph of Linear/ReLU/Linear, if torch exists."""
    try:
        import torch
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        print("torch is not importable: keeping the committed samples/logs/pytorch/")
        return False

    class TinyMLP(torch.nn.Module):
        """Linear -> ReLU -> Linear, the smallest graph with named submodules."""

        def __init__(self) -> None:
            super().__init__()
            self.fc1 = torch.nn.Linear(4, 8)
            self.act = torch.nn.ReLU()
            self.fc2 = torch.nn.Linear(8, 2)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.fc2(self.act(self.fc1(x)))

    logdir = _fresh_dir(SAMPLES_DIR / "logs" / "pytorch")
    torch.manual_seed(SEED)
    writer = SummaryWriter(log_dir=str(logdir))
    writer.add_graph(TinyMLP(), torch.zeros(1, 4))
    writer.close()
    _rename_event_files(logdir, TORCH_EVENT_FILE_NAME)
    return True


# --------------------------------------------------------------------------------------
# 6. Frozen Keras classifier
# --------------------------------------------------------------------------------------


def make_dense_frozen() -> None:
    """samples/dense_frozen.pb: Flatten/Dense/Dense frozen to constants, no _output_shapes."""
    _reset_keras()
    inputs = keras.Input((28, 28), name="pixels")
    x = keras.layers.Flatten(name="flatten")(inputs)
    x = keras.layers.Dense(128, activation="relu", name="hidden")(x)
    outputs = keras.layers.Dense(10, activation="softmax", name="probabilities")(x)
    model = keras.Model(inputs, outputs, name="classifier")

    function = tf.function(lambda pixels: model(pixels, training=False))
    concrete = function.get_concrete_function(tf.TensorSpec([None, 28, 28], tf.float32))
    frozen = convert_variables_to_constants_v2(concrete)
    graph_def = frozen.graph.as_graph_def()
    for node in graph_def.node:
        if "_output_shapes" in node.attr:
            del node.attr["_output_shapes"]
    _write_proto(SAMPLES_DIR / "dense_frozen.pb", graph_def)


# --------------------------------------------------------------------------------------
# 7. Read everything back and describe it
# --------------------------------------------------------------------------------------


def graph_def_counts(graph_def: graph_pb2.GraphDef) -> dict[str, Any]:
    """TensorFlow's own counts for one GraphDef, the numbers the tool must agree with."""
    names = {node.name for node in graph_def.node}
    dangling = sorted(
        {
            raw.lstrip("^").split(":")[0]
            for node in graph_def.node
            for raw in node.input
            if raw.lstrip("^").split(":")[0] not in names
        }
    )
    return {
        "nodes": len(graph_def.node),
        "functions": len(graph_def.library.function),
        "function_nodes": sum(len(f.node_def) for f in graph_def.library.function),
        "function_names": sorted(f.signature.name for f in graph_def.library.function),
        "nodes_with_output_shapes": sum("_output_shapes" in n.attr for n in graph_def.node),
        "control_edges": sum(i.startswith("^") for n in graph_def.node for i in n.input),
        "dangling_input_nodes": dangling,
        "op_types": dict(sorted(Counter(n.op for n in graph_def.node).items())),
    }


def keras_layer_count(config: dict[str, Any]) -> tuple[int, list[str]]:
    """Count leaf layers of a Keras model config, descending into nested models.

    A nested model (any config with `layers`) is a group, not a layer; its own layers are
    counted, including the InputLayer Keras records inside it.  This is exactly the node
    set TensorBoard's keras_util.keras_model_to_graph_def builds.
    """
    groups: list[str] = []

    def walk(layer: dict[str, Any], scope: str) -> int:
        layers = layer["config"].get("layers")
        if layers is None:
            return 1
        name = layer["config"]["name"]
        path = f"{scope}/{name}" if scope else name
        groups.append(path)
        return sum(walk(child, path) for child in layers)

    return walk(config, ""), groups


def _iter_events(logdir: Path) -> Iterator[tuple[Path, Any]]:
    """Raw Event protos of every event file, without TensorBoard's data-compat rewriting."""
    for path in sorted(logdir.rglob("*tfevents*")):
        for event in event_file_loader.LegacyEventFileLoader(str(path)).Load():
            yield path, event


def describe_logdir(logdir: Path) -> list[dict[str, Any]]:
    """List every graph record in a logdir with its kind and TensorFlow's node count."""
    graphs: list[dict[str, Any]] = []
    for path, event in _iter_events(logdir):
        run = path.parent.relative_to(logdir).as_posix()
        base = {"run": run, "event_file": _rel(path), "step": event.step}
        what = event.WhichOneof("what")
        if what == "graph_def":
            graph_def = graph_pb2.GraphDef.FromString(event.graph_def)
            graphs.append(
                {**base, "record": "Event.graph_def", "kind": "op"} | graph_def_counts(graph_def)
            )
        elif what == "tagged_run_metadata":
            meta = config_pb2.RunMetadata.FromString(event.tagged_run_metadata.run_metadata)
            graphs.append(
                {
                    **base,
                    "record": "Event.tagged_run_metadata",
                    "kind": "run_metadata",
                    "tag": event.tagged_run_metadata.tag,
                    "has_step_stats": meta.HasField("step_stats"),
                    "function_graphs": len(meta.function_graphs),
                    "partition_graphs": len(meta.partition_graphs),
                }
            )
        elif what == "summary":
            for value in event.summary.value:
                plugin = value.metadata.plugin_data.plugin_name
                if plugin == "graph_keras_model":
                    config = json.loads(value.tensor.string_val[0])
                    layers, groups = keras_layer_count(config)
                    graphs.append(
                        {
                            **base,
                            "record": "Summary.value (tensor string_val[0] = model JSON)",
                            "kind": "conceptual",
                            "tag": value.tag,
                            "plugin": plugin,
                            "model_name": config["config"]["name"],
                            "model_class": config["class_name"],
                            "nodes": layers,
                            "node_definition": (
                                "leaf layers, walking nested models (a config with `layers`) "
                                "recursively; nested models are groups, not nodes; the "
                                "InputLayer each model records is a node (Keras 3 also "
                                "records one inside a nested Sequential). Equals "
                                "len(tensorboard keras_util.keras_model_to_graph_def(json).node)."
                            ),
                            "groups": groups,
                        }
                    )
                elif plugin == "graph_run_metadata_graph":
                    meta = config_pb2.RunMetadata.FromString(value.tensor.string_val[0])
                    per_function = [
                        len(fg.pre_optimization_graph.node) for fg in meta.function_graphs
                    ]
                    graphs.append(
                        {
                            **base,
                            "record": (
                                "Summary.value (tensor string_val[0] = RunMetadata; graphs in "
                                "function_graphs[i].pre_optimization_graph)"
                            ),
                            "kind": "op",
                            "tag": value.tag,
                            "plugin": plugin,
                            "function_graphs": len(per_function),
                            "pre_optimization_nodes": per_function,
                            "post_optimization_nodes": [
                                len(fg.post_optimization_graph.node) for fg in meta.function_graphs
                            ],
                            "nodes": sum(per_function),
                        }
                    )
    return graphs


def _read_graph_def(path: Path) -> graph_pb2.GraphDef:
    """Load a binary or text GraphDef the way TensorFlow would."""
    if path.suffix == ".pbtxt":
        return text_format.Parse(path.read_text(encoding="utf-8"), graph_pb2.GraphDef())
    return graph_pb2.GraphDef.FromString(path.read_bytes())


def _file_sample(name: str, path: Path, fmt: str, source: str) -> dict[str, Any]:
    """Manifest entry for a single GraphDef file."""
    return {
        "name": name,
        "path": _rel(path),
        "format": fmt,
        "source": source,
        "bytes": path.stat().st_size,
    } | graph_def_counts(_read_graph_def(path))


def _meta_sample(path: Path) -> dict[str, Any]:
    """Manifest entry for the MetaGraphDef."""
    meta = meta_graph_pb2.MetaGraphDef.FromString(path.read_bytes())
    return {
        "name": "mnist_tf1_meta",
        "path": _rel(path),
        "format": "metagraphdef-binary",
        "source": "tf.compat.v1.train.export_meta_graph of the mnist_tf1 graph",
        "bytes": path.stat().st_size,
        "collections": sorted(meta.collection_def),
        "has_saver_def": meta.HasField("saver_def"),
    } | graph_def_counts(meta.graph_def)


def _saved_model_sample(folder: Path) -> dict[str, Any]:
    """Manifest entry for the SavedModel: its one MetaGraph and the serving signature."""
    saved = saved_model_pb2.SavedModel.FromString((folder / "saved_model.pb").read_bytes())
    meta_graphs = []
    for meta in saved.meta_graphs:
        signatures = {
            key: {
                "method": sig.method_name,
                "inputs": {k: v.name for k, v in sorted(sig.inputs.items())},
                "outputs": {k: v.name for k, v in sorted(sig.outputs.items())},
            }
            for key, sig in sorted(meta.signature_def.items())
        }
        meta_graphs.append(
            {"tags": list(meta.meta_info_def.tags), "signatures": signatures}
            | graph_def_counts(meta.graph_def)
        )
    # No byte count: fingerprint.pb changes size by a byte or so from run to run.
    return {
        "name": "saved_model",
        "path": _rel(folder),
        "format": "saved_model",
        "source": "tf.saved_model.save of a tf.Module (TinyClassifier), serving_default",
        "files": sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()),
        "meta_graphs": meta_graphs,
    }


def _logdir_sample(name: str, folder: Path, source: str) -> dict[str, Any]:
    """Manifest entry for a logdir: every graph-bearing record inside it."""
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    return {
        "name": name,
        "path": _rel(folder),
        "format": "logdir",
        "source": source,
        "bytes": size,
        "graphs": describe_logdir(folder),
    }


def build_manifest() -> dict[str, Any]:
    """Describe every sample on disk, reading each one back with TensorFlow's parsers."""
    d = SAMPLES_DIR
    samples: list[dict[str, Any]] = [
        _file_sample(
            "mnist_tf1",
            d / "mnist_tf1.pb",
            "graphdef-binary",
            "tf.compat.v1 graph mode, ref variables, Adam; as_graph_def(add_shapes=True)",
        ),
        _meta_sample(d / "mnist_tf1.meta"),
        _file_sample(
            "keras_cnn",
            d / "keras_cnn.pb",
            "graphdef-binary",
            "Keras 3 Sequential CNN via nested tf.function; concrete function graph_def",
        ),
        _file_sample(
            "control_flow_v1",
            d / "control_flow_v1.pbtxt",
            "graphdef-text",
            "tf.while_loop + tf.cond, control flow v1 (graph mode), text format",
        ),
        _file_sample(
            "control_flow_v2",
            d / "control_flow_v2.pb",
            "graphdef-binary",
            "same computation, control flow v2 (tf.function concrete function)",
        ),
        _saved_model_sample(d / "saved_model"),
        _logdir_sample(
            "logs_trace",
            d / "logs" / "trace",
            "tf.summary.trace_on(graph=True) + trace_export of a 2-layer MLP tf.function",
        ),
        _logdir_sample(
            "logs_keras",
            d / "logs" / "keras",
            "Keras 3 TensorBoard callback (write_graph=True), functional model with a "
            "nested Sequential; Keras 3 writes only the conceptual graph",
        ),
        _logdir_sample(
            "logs_costs",
            d / "logs" / "costs",
            "tf.compat.v1 FileWriter: the mnist_tf1 graph and two steps traced with "
            "RunOptions(trace_level=FULL_TRACE), add_run_metadata tags forward and train",
        ),
        _file_sample(
            "dense_frozen",
            d / "dense_frozen.pb",
            "graphdef-binary",
            "Keras 'classifier' frozen with convert_variables_to_constants_v2, no shapes",
        ),
    ]
    pytorch = d / "logs" / "pytorch"
    if pytorch.is_dir():
        samples.insert(
            -1,
            _logdir_sample(
                "logs_pytorch",
                pytorch,
                "torch.utils.tensorboard.SummaryWriter.add_graph of Linear/ReLU/Linear",
            ),
        )
    samples.extend(
        _file_sample(
            f"diff_cnn_v{version}",
            d / "diff" / f"cnn_v{version}.pb",
            "graphdef-binary",
            f"version {version} of a Keras 3 CNN traced flat (tf.function concrete "
            "function); v2 pads conv_a 'valid' and inserts a Dense layer",
        )
        for version in (1, 2)
    )
    return {
        "generated_by": "samples/make_samples.py",
        "versions": {"tensorflow": tf.__version__, "keras": keras.__version__},
        "definitions": {
            "nodes": "len(graph_def.node): top-level NodeDefs (for logdirs: see each graph)",
            "functions": "len(graph_def.library.function)",
            "function_nodes": "sum(len(f.node_def) for f in graph_def.library.function)",
            "dangling_input_nodes": "input names (minus ^ and :port) naming no top-level node",
            "control_edges": "inputs starting with ^ across top-level nodes",
        },
        "samples": samples,
    }


def _check_sizes() -> None:
    """Fail loudly if any committed sample file grew past the 1 MB budget."""
    too_big = [
        f"{_rel(p)} ({p.stat().st_size} bytes)"
        for p in SAMPLES_DIR.rglob("*")
        if p.is_file() and p.stat().st_size > MAX_BYTES
    ]
    if too_big:
        raise RuntimeError("samples over 1 MB: " + ", ".join(too_big))


BUILDERS: dict[str, Callable[[], object]] = {
    "mnist_tf1": make_mnist_tf1,
    "keras_cnn": make_keras_cnn,
    "control_flow": make_control_flow,
    "saved_model": make_saved_model,
    "logs_trace": make_trace_logdir,
    "logs_keras": make_keras_logdir,
    "logs_pytorch": make_pytorch_logdir,
    "logs_costs": make_costs_logdir,
    "dense_frozen": make_dense_frozen,
    "diff_pair": make_diff_pair,
}


def main() -> int:
    """Build every sample in a fixed order, then write and print the manifest."""
    for name, builder in BUILDERS.items():
        print(f"building {name}", flush=True)
        builder()
    manifest = build_manifest()
    (SAMPLES_DIR / "MANIFEST.json").write_text(
        json.dumps(manifest, indent=2) + "\n", encoding="utf-8"
    )
    _check_sizes()
    for sample in manifest["samples"]:
        if sample["format"] == "logdir":
            for graph in sample["graphs"]:
                if "nodes" in graph:
                    print(f"{sample['path']} [{graph['kind']}] nodes={graph['nodes']}")
        elif sample["format"] == "saved_model":
            for meta in sample["meta_graphs"]:
                print(
                    f"{sample['path']} nodes={meta['nodes']} functions={meta['functions']} "
                    f"function_nodes={meta['function_nodes']}"
                )
        else:
            print(
                f"{sample['path']} nodes={sample['nodes']} functions={sample['functions']} "
                f"function_nodes={sample['function_nodes']}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
