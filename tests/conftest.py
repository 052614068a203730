"""Shared fixtures.  The ``reader_*`` ones build real inputs with TensorFlow, Keras and PyTorch.

Each is built once per session in a temporary directory, and records what TensorFlow itself
reports about it (node counts from TensorFlow's own protos and readers), so reader tests compare
against the producer rather than against our own parsing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import tensorboard_server
from hostile_inputs import browser_session
from picture import ORACLE_TALLY

from graphviz_tb.errors import GraphvizTbError
from graphviz_tb.layout import dot_layout, engine

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
#: The Graphviz engines (``TBGRAPH_ENGINE``) and the name each reports: Graphviz's own
#: programs (Debian's 2.43 here) and graphviz-pure, a port of a current release (16.1) that pip
#: installs with the package.
ENGINES = {"native": "dot", "pure": "graphviz-pure"}
#: Group layouts are cached per process by their DOT text: each engine keeps its own.
_LAYOUT_CACHES: dict[str, dot_layout.LayoutCache] = {}


@dataclass
class ReaderInput:
    """A TensorFlow-made input and what TensorFlow says about it."""

    path: Path
    nodes: int  # len(graph_def.node) as TensorFlow reports it
    extra: dict[str, Any] = field(default_factory=dict)


def _tf() -> Any:
    """TensorFlow, or a skip on a developer machine without it; in CI a missing TensorFlow is a
    failure, never a silent skip (``make test`` installs it)."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    if os.environ.get("CI"):
        import tensorflow

        return tensorflow
    return pytest.importorskip("tensorflow")


def write_with(script: str, out: Path, what: str) -> Path:
    """Run ``tests/<script> OUT`` in its own process (the framework that writes the inputs is
    never imported by the process that reads them, or must start afresh to be configured),
    failing the test with its error."""
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run([sys.executable, str(Path(__file__).parent / script), str(out)],
                          env=env, capture_output=True, text=True, timeout=900, check=False)
    if done.returncode:
        pytest.fail(f"{script} could not write {what}:\n{done.stderr[-3000:]}")
    return out


@pytest.fixture(params=sorted(ENGINES))
def graphviz_engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
                    ) -> Iterator[str]:
    """Each Graphviz engine in turn, forced as a user forces it (``TBGRAPH_ENGINE``).  A
    missing one skips on a developer machine and fails in CI, where both are installed."""
    monkeypatch.setenv(engine.ENGINE_VARIABLE, request.param)
    engine.current.cache_clear()
    try:
        name = engine.current().name
    except GraphvizTbError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"the {request.param} engine is missing in CI: {exc}")
        pytest.skip(f"the {request.param} engine is not installed: {exc}")
    assert name == ENGINES[request.param]
    monkeypatch.setattr(dot_layout, "_cache",
                        _LAYOUT_CACHES.setdefault(request.param, dot_layout.LayoutCache()))
    yield name
    engine.current.cache_clear()  # the next test chooses afresh, from the restored variable


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """How much the picture oracle checked, per engine (``picture.ORACLE_TALLY``)."""
    for name, (pictures, edges) in sorted(ORACLE_TALLY.items()):
        terminalreporter.write_line(f"picture oracle, {name}: {pictures:,} pictures, "
                                    f"{edges:,} edges checked")


#: Debian's headless Chromium, one for the whole session (see ``browser_session``).
browser = pytest.fixture(scope="session")(browser_session)


@pytest.fixture(scope="session")
def tf() -> Any:
    """The tensorflow module (see :func:`_tf` for what happens when it is missing)."""
    return _tf()


def _v1_graph(tf: Any) -> Any:
    """A small TF1 training-style graph with name scopes, variables and a loss."""
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        images = v1.placeholder(tf.float32, [None, 784], name="images")
        labels = v1.placeholder(tf.int64, [None], name="labels")
        with v1.name_scope("hidden"):
            w = tf.Variable(v1.truncated_normal([784, 32], stddev=0.1), name="weights")
            b = tf.Variable(tf.zeros([32]), name="biases")
            hidden = tf.nn.relu(tf.matmul(images, w) + b)
        with v1.name_scope("softmax_linear"):
            w2 = tf.Variable(v1.truncated_normal([32, 10], stddev=0.1), name="weights")
            logits = tf.matmul(hidden, w2, name="logits")
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits),
            name="loss",
        )
        v1.train.GradientDescentOptimizer(0.1).minimize(loss, name="train")
        v1.global_variables_initializer()
    return graph


@pytest.fixture(scope="session")
def reader_tf1(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ReaderInput]:
    """A TF1 graph as .pb, .pbtxt, .meta (binary and text) and a FileWriter logdir."""
    tf = _tf()
    v1 = tf.compat.v1
    root = tmp_path_factory.mktemp("tf1")
    graph = _v1_graph(tf)
    graph_def = graph.as_graph_def(add_shapes=True)
    nodes = len(graph_def.node)
    tf.io.write_graph(graph_def, str(root), "graph.pb", as_text=False)
    tf.io.write_graph(graph_def, str(root), "graph.pbtxt", as_text=True)
    with graph.as_default():
        v1.train.export_meta_graph(str(root / "model.meta"))
        v1.train.export_meta_graph(str(root / "model_text.meta"), as_text=True)
        meta = v1.train.export_meta_graph()

    logdir = root / "logs"
    with v1.Session(graph=graph) as session:
        session.run(graph.get_operation_by_name("init"))
        writer = v1.summary.FileWriter(str(logdir / "train"), graph=graph)
        options = v1.RunOptions(trace_level=v1.RunOptions.FULL_TRACE, output_partition_graphs=True)
        run_metadata = v1.RunMetadata()
        session.run(
            graph.get_tensor_by_name("loss:0"),
            feed_dict={"images:0": [[0.0] * 784], "labels:0": [1]},
            options=options,
            run_metadata=run_metadata,
        )
        writer.add_run_metadata(run_metadata, "step_1", global_step=1)
        writer.add_meta_graph(meta, global_step=2)
        writer.close()
    return {
        "pb": ReaderInput(root / "graph.pb", nodes),
        "pbtxt": ReaderInput(root / "graph.pbtxt", nodes),
        "meta": ReaderInput(root / "model.meta", len(meta.graph_def.node)),
        "meta_text": ReaderInput(root / "model_text.meta", len(meta.graph_def.node)),
        "logdir": ReaderInput(logdir, len(graph.as_graph_def().node), {
            "partitions": [len(g.node) for g in run_metadata.partition_graphs],
            "meta_nodes": len(meta.graph_def.node),
        }),
    }


@pytest.fixture(scope="session")
def reader_trace(tmp_path_factory: pytest.TempPathFactory) -> ReaderInput:
    """A TF2 logdir from tf.summary.trace_export over two tf.function calls."""
    tf = _tf()
    logdir = tmp_path_factory.mktemp("trace")

    @tf.function
    def dense(x: Any) -> Any:
        with tf.name_scope("layer"):
            return tf.nn.relu(tf.matmul(x, tf.ones([3, 2])) + 1.0)

    @tf.function
    def double(x: Any) -> Any:
        return x * 2.0

    x = tf.ones([1, 3])
    writer = tf.summary.create_file_writer(str(logdir))
    tf.summary.trace_on(graph=True, profiler=False)
    double(dense(x))
    with writer.as_default():
        tf.summary.trace_export("step_trace", step=3)
    writer.close()
    return ReaderInput(logdir, _trace_nodes(tf, logdir))


def _trace_nodes(tf: Any, logdir: Path) -> list[int]:
    """Node counts of each function graph, read back with TensorFlow's own event reader."""
    from tensorflow.core.protobuf import config_pb2

    counts: list[int] = []
    for file in logdir.glob("*tfevents*"):
        for event in tf.compat.v1.train.summary_iterator(str(file)):
            for value in event.summary.value:
                if value.metadata.plugin_data.plugin_name == "graph_run_metadata_graph":
                    run_metadata = config_pb2.RunMetadata.FromString(value.tensor.string_val[0])
                    counts += [len(f.pre_optimization_graph.node)
                               for f in run_metadata.function_graphs]
    return counts


def _keras_model(keras: Any) -> Any:
    """A functional model with a nested Sequential and a nested functional model."""
    inner = keras.Sequential(
        [keras.Input((8,)), keras.layers.Dense(5, name="d1"), keras.layers.Dense(6, name="d2")],
        name="inner",
    )
    sub_in = keras.Input((6,), name="sub_in")
    sub = keras.Model(sub_in, [keras.layers.Dense(2, name="a")(sub_in),
                               keras.layers.Dense(3, name="b")(sub_in)], name="sub")
    x = keras.Input((4,), name="x")
    y = keras.Input((6,), name="y")
    h = inner(keras.layers.Dense(8, activation="relu", name="fc")(x))
    first, second = sub(h)
    merged = keras.layers.Concatenate(name="cat")([first, second, y])
    shared = keras.layers.Dense(2, name="shared")
    pre = keras.layers.Dense(11, name="pre")(merged)
    out = keras.layers.Add(name="add")([shared(merged), shared(pre)])
    return keras.Model([x, y], out, name="outer")


def _config_layers(config: dict[str, Any]) -> int:
    """Layers in a Keras config, nested models counted by their own layers."""
    total = 0
    for layer in config["config"]["layers"]:
        total += _config_layers(layer) if "layers" in layer.get("config", {}) else 1
    return total


@pytest.fixture(scope="session")
def reader_keras(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ReaderInput]:
    """Keras 3 files (.keras, .h5, .json) and a logdir from the TensorBoard callback."""
    _tf()
    import keras
    import numpy as np

    root = tmp_path_factory.mktemp("keras")
    keras.backend.clear_session()  # layer names count from zero whatever ran before
    model = _keras_model(keras)
    config = json.loads(model.to_json())
    layers = _config_layers(config)
    model.save(root / "model.keras")
    model.save(root / "model.h5")
    (root / "model.json").write_text(model.to_json())

    sequential = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, activation="relu"),
                                   keras.layers.Dense(1)], name="seq")
    sequential.compile("sgd", "mse")
    logdir = root / "logs"
    sequential.fit(np.zeros((8, 4)), np.zeros((8, 1)), epochs=1, verbose=0,
                   callbacks=[keras.callbacks.TensorBoard(str(logdir), write_graph=True)])
    seq_layers = _config_layers(json.loads(sequential.to_json()))
    return {
        "keras": ReaderInput(root / "model.keras", layers, {"model": model}),
        "h5": ReaderInput(root / "model.h5", layers),
        "json": ReaderInput(root / "model.json", layers),
        "logdir": ReaderInput(logdir, seq_layers),
    }


@pytest.fixture(scope="session")
def reader_savedmodel(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ReaderInput]:
    """A TF2 SavedModel (tf.saved_model.save) and a TF1 one with two tag sets."""
    tf = _tf()
    from tensorflow.core.protobuf import saved_model_pb2

    root = tmp_path_factory.mktemp("savedmodel")

    class Scale(tf.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = tf.Variable(tf.ones([3, 2]), name="w")

        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x")])
        def __call__(self, x: Any) -> Any:
            return {"y": tf.matmul(x, self.w)}

    tf2_dir = root / "tf2"
    tf.saved_model.save(Scale(), str(tf2_dir))
    tf2 = saved_model_pb2.SavedModel.FromString((tf2_dir / "saved_model.pb").read_bytes())

    v1 = tf.compat.v1
    tf1_dir = root / "tf1"
    graph = tf.Graph()
    with graph.as_default(), v1.Session(graph=graph) as session:
        x = v1.placeholder(tf.float32, [None, 2], name="x")
        w = tf.Variable([[1.0], [2.0]], name="w")
        y = tf.matmul(x, w, name="y")
        session.run(v1.global_variables_initializer())
        builder = v1.saved_model.Builder(str(tf1_dir))
        signature = v1.saved_model.predict_signature_def({"x": x}, {"y": y})
        builder.add_meta_graph_and_variables(session, ["serve"],
                                             signature_def_map={"serving_default": signature})
        builder.add_meta_graph(["train", "gpu"])
        builder.save()
    tf1 = saved_model_pb2.SavedModel.FromString((tf1_dir / "saved_model.pb").read_bytes())
    return {
        "tf2": ReaderInput(tf2_dir, len(tf2.meta_graphs[0].graph_def.node)),
        "tf1": ReaderInput(tf1_dir, len(tf1.meta_graphs[0].graph_def.node),
                           {"nodes": [len(m.graph_def.node) for m in tf1.meta_graphs]}),
    }


@pytest.fixture(scope="session")
def reader_pytorch(tmp_path_factory: pytest.TempPathFactory) -> ReaderInput:
    """A logdir from PyTorch's SummaryWriter.add_graph: written now when torch is installed,
    else the committed sample that PyTorch wrote (``make test`` installs torch)."""
    logdir = tmp_path_factory.mktemp("pytorch")
    try:
        import torch
    except ImportError:
        import shutil

        shutil.copytree(SAMPLES / "logs" / "pytorch", logdir, dirs_exist_ok=True)
        return ReaderInput(logdir, _event_graph_nodes(logdir))
    from torch.utils.tensorboard import SummaryWriter

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1 = torch.nn.Linear(4, 3)
            self.fc2 = torch.nn.Linear(3, 1)

        def forward(self, x: Any) -> Any:
            return self.fc2(torch.relu(self.fc1(x)))

    writer = SummaryWriter(str(logdir))
    writer.add_graph(Net(), torch.zeros(2, 4))
    writer.close()
    return ReaderInput(logdir, _event_graph_nodes(logdir))


def _event_graph_nodes(logdir: Path) -> int:
    """Nodes of the graph_def event, read with TensorBoard's own event loader."""
    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.compat.proto.graph_pb2 import GraphDef

    nodes = 0
    for file in logdir.glob("*tfevents*"):
        for record in RawEventFileLoader(str(file)).Load():
            event = Event.FromString(record)
            if event.HasField("graph_def"):
                nodes = len(GraphDef.FromString(event.graph_def).node)
    return nodes


def _inference_graph(tf: Any, model: Any, shape: tuple[int, ...], name: str = "images") -> Any:
    """``model`` called for inference in a tf.function, traced for a batch of ``shape``: the
    GraphDef a serving signature holds."""

    @tf.function
    def infer(x: Any) -> Any:
        return model(x, training=False)

    spec = tf.TensorSpec([None, *shape], tf.float32, name=name)
    return infer.get_concrete_function(spec).graph.as_graph_def()


def _attention_stack(tf: Any, keras: Any, layers: int = 4, width: int = 32) -> Any:
    """A four-layer Transformer encoder whose layers have flat names (``mha_0``, ``ln_0``,
    ``ffn_0_in`` ... all directly under the model), traced: a GraphDef."""
    keras.backend.clear_session()
    x = inputs = keras.Input((16, width), name="tokens")
    for i in range(layers):
        attended = keras.layers.MultiHeadAttention(4, width // 4, name=f"mha_{i}")(x, x)
        x = keras.layers.LayerNormalization(name=f"ln_{i}")(
            keras.layers.Add(name=f"add_{2 * i}")([x, attended]))
        hidden = keras.layers.Dense(4 * width, activation="gelu", name=f"ffn_{i}_in")(x)
        hidden = keras.layers.Dense(width, name=f"ffn_{i}_out")(hidden)
        x = keras.layers.LayerNormalization(name=f"ln2_{i}")(
            keras.layers.Add(name=f"add_{2 * i + 1}")([x, hidden]))
    return _inference_graph(tf, keras.Model(inputs, x, name="encoder"), (16, width), "tokens")


def _recurrent_seq2seq(tf: Any, keras: Any) -> Any:
    """A GRU encoder, an LSTM decoder started from its state, and attention between them,
    traced: Keras runs each recurrent layer as a ``While`` op whose condition and body are
    functions, over ``TensorList`` ops."""
    keras.backend.clear_session()
    source = keras.Input((None, 16), name="source")
    target = keras.Input((None, 16), name="target")
    encoded, state = keras.layers.GRU(32, return_sequences=True, return_state=True,
                                      name="encoder")(source)
    decoded = keras.layers.LSTM(32, return_sequences=True, name="decoder")(
        target, initial_state=[state, state])
    attended = keras.layers.Attention(name="attention")([decoded, encoded])
    logits = keras.layers.Dense(8, name="proj")(
        keras.layers.Concatenate(name="join")([decoded, attended]))
    model = keras.Model([source, target], logits, name="seq2seq")

    @tf.function
    def translate(a: Any, b: Any) -> Any:
        return model([a, b], training=False)

    return translate.get_concrete_function(
        tf.TensorSpec([None, 7, 16], tf.float32, name="source"),
        tf.TensorSpec([None, 5, 16], tf.float32, name="target")).graph.as_graph_def()


def _v1_rnn_training(tf: Any) -> Any:
    """An LSTM unrolled by a TF1 ``while_loop`` (Enter, Merge, Switch, NextIteration, Exit,
    TensorArrays) and trained by Adam: its gradient is a second loop, run backwards over
    stacks the first one fills."""
    v1 = tf.compat.v1
    graph = tf.Graph()
    v1.disable_control_flow_v2()  # process-wide: restored below
    try:
        with graph.as_default():
            x = v1.placeholder(tf.float32, [None, 10, 8], name="x")
            steps = tf.TensorArray(tf.float32, size=10).unstack(tf.transpose(x, [1, 0, 2]))
            with v1.variable_scope("rnn"):
                w = v1.get_variable("kernel", [24, 64])
                b = v1.get_variable("bias", [64])

            def body(t: Any, h: Any, c: Any, acc: Any) -> Any:
                z = tf.matmul(tf.concat([steps.read(t), h], 1), w) + b
                i, f, o, g = tf.split(z, 4, axis=1)
                c = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(g)
                h = tf.sigmoid(o) * tf.tanh(c)
                return t + 1, h, c, acc.write(t, h)

            batch = tf.shape(x)[0]
            *_, outputs = v1.while_loop(
                lambda t, *_: t < 10, body,
                [0, tf.zeros([batch, 16]), tf.zeros([batch, 16]),
                 tf.TensorArray(tf.float32, size=10)], name="lstm_loop")
            loss = tf.reduce_mean(tf.square(outputs.stack()), name="loss")
            v1.train.AdamOptimizer().minimize(loss, name="train")
    finally:
        v1.enable_control_flow_v2()
    return graph.as_graph_def()


def _map_fn_cond(tf: Any) -> Any:
    """``tf.map_fn`` over rows with a ``tf.cond`` per row, traced: a ``While`` whose body
    calls a ``StatelessIf`` with two branch functions."""

    @tf.function
    def per_row(x: Any) -> Any:
        y = tf.map_fn(lambda r: tf.cond(tf.reduce_sum(r) > 0, lambda: r * 2.0, lambda: -r), x)
        return tf.nn.softmax(y)

    return per_row.get_concrete_function(
        tf.TensorSpec([None, 6], tf.float32, name="rows")).graph.as_graph_def()


@pytest.fixture(scope="session")
def tf_made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """GraphDefs TensorFlow makes now, as users' graphs come: Keras applications' inference
    traces (ResNet-50, Inception-v3, random weights), a Transformer encoder with flat layer
    names, a TF1 training graph with name scopes, a TF2 ``tf.function`` training step
    (GradientTape and a Keras optimizer), and three with loops: Keras recurrent layers, a TF1
    ``while_loop`` RNN with its training, and ``map_fn`` with a ``cond`` inside."""
    tf = _tf()
    import keras

    root = tmp_path_factory.mktemp("tf_made")
    out: dict[str, Path] = {}

    keras.backend.clear_session()
    keras.utils.set_random_seed(1)
    resnet = keras.applications.ResNet50(weights=None)
    out["resnet50"] = root / "resnet50.pb"
    out["resnet50"].write_bytes(
        _inference_graph(tf, resnet, (224, 224, 3)).SerializeToString())

    out["tf1_training"] = root / "tf1_training.pb"
    out["tf1_training"].write_bytes(
        _v1_graph(tf).as_graph_def(add_shapes=True).SerializeToString())

    keras.backend.clear_session()
    inception = keras.applications.InceptionV3(weights=None)
    out["inception_v3"] = root / "inception_v3.pb"
    out["inception_v3"].write_bytes(
        _inference_graph(tf, inception, (299, 299, 3)).SerializeToString())

    out["transformer"] = root / "transformer.pb"
    out["transformer"].write_bytes(_attention_stack(tf, keras).SerializeToString())

    keras.backend.clear_session()
    model = keras.Sequential([keras.Input((28, 28, 1)), keras.layers.Conv2D(8, 3),
                              keras.layers.ReLU(), keras.layers.Flatten(),
                              keras.layers.Dense(10)])
    import training_steps

    train_step = training_steps.train_step(tf, keras, model, keras.optimizers.Adam())
    concrete = train_step.get_concrete_function(
        tf.TensorSpec([None, 28, 28, 1], tf.float32, name="images"),
        tf.TensorSpec([None], tf.int32, name="labels"))
    out["tf2_train_step"] = root / "tf2_train_step.pb"
    out["tf2_train_step"].write_bytes(concrete.graph.as_graph_def().SerializeToString())

    for name, graph_def in [("keras_rnn", _recurrent_seq2seq(tf, keras)),
                            ("tf1_rnn_training", _v1_rnn_training(tf)),
                            ("map_fn_cond", _map_fn_cond(tf))]:
        out[name] = root / f"{name}.pb"
        out[name].write_bytes(graph_def.SerializeToString())
    keras.backend.clear_session()  # later fixtures' layer names count from zero again
    return out


@dataclass
class TrainingStep:
    """A TF2 training step TensorFlow made, and the scope its model is named under."""

    path: Path
    model: str
    optimizer: str


@pytest.fixture(scope="session")
def training_steps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, TrainingStep]:
    """TF2 training steps as users trace them (see ``training_steps.py``): six Keras
    applications under four optimizers, a Transformer with flat layer names under AdamW
    (GraphDefs of ``get_concrete_function``), and a small CNN's step written to a logdir by
    ``trace_export``.  About four minutes on two cores."""
    import training_steps as steps

    tf = _tf()
    import keras

    root = tmp_path_factory.mktemp("training_steps")
    out: dict[str, TrainingStep] = {}
    for name, (app, opt, size) in steps.APPLICATIONS.items():
        graph_def, model, optimizer = steps.application_step(tf, keras, app, opt, size)
        out[name] = TrainingStep(root / f"{name}.pb", model, optimizer)
        out[name].path.write_bytes(graph_def.SerializeToString())
    graph_def, model, optimizer = steps.transformer_step(tf, keras)
    out["transformer_adamw"] = TrainingStep(root / "transformer.pb", model, optimizer)
    out["transformer_adamw"].path.write_bytes(graph_def.SerializeToString())
    # In a process of its own: a trace exports every graph the runtime made while it ran,
    # and after the builds above those were thousands (4,770 ``graph_N``), not one step.
    script = ("import json, sys, tensorflow, keras, training_steps; print(json.dumps("
              f"training_steps.traced_step_logdir(tensorflow, keras, {str(root / 'logs')!r})))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True, cwd=Path(__file__).parent,
                          env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    model, optimizer = json.loads(done.stdout.strip().splitlines()[-1])
    out["trace_export"] = TrainingStep(root / "logs", model, optimizer)
    keras.backend.clear_session()  # later fixtures' layer names count from zero again
    return out


@pytest.fixture(scope="session")
def costs_tf1(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Run metadata TensorFlow recorded with ``RunOptions(trace_level=FULL_TRACE)``.

    * ``logdir``: a TF1 training graph (``FileWriter`` graph) and two steps traced, tagged
      ``forward`` (only the loss fetched) and ``train`` (a training step);
    * ``graph`` / ``run_metadata`` / ``step_stats``: a graph calling one ``tf.function``
      twice (two ``PartitionedCall``\\ s run without Grappler, so not inlined: their body ops
      are recorded under the function's own names), its GraphDef, and its traced step as a
      standalone RunMetadata file and as a StepStats file.

    ``metadata`` holds TensorFlow's own RunMetadata protos, by tag, for the tests' truth.
    """
    tf = _tf()
    v1 = tf.compat.v1
    root = tmp_path_factory.mktemp("costs")
    full = v1.RunOptions(trace_level=v1.RunOptions.FULL_TRACE)
    metadata: dict[str, Any] = {}
    graph = _v1_graph(tf)
    feed = {"images:0": [[0.5] * 784] * 16, "labels:0": [1] * 16}
    with v1.Session(graph=graph) as session:
        session.run(graph.get_operation_by_name("init"))
        writer = v1.summary.FileWriter(str(root / "logs" / "train"), graph=graph)
        for step, (tag, fetch) in enumerate((("forward", "loss:0"), ("train", "train")), 1):
            metadata[tag] = v1.RunMetadata()
            session.run(fetch, feed_dict=feed, options=full, run_metadata=metadata[tag])
            writer.add_run_metadata(metadata[tag], tag, global_step=step)
        writer.close()

    calls = tf.Graph()
    with calls.as_default():
        x = v1.placeholder(tf.float32, [None, 64], name="x")

        @tf.function
        def layer(t: Any) -> Any:
            with tf.name_scope("inner"):
                return tf.nn.relu(tf.matmul(t, tf.ones([64, 64])) + 1.0)

        tf.identity(layer(layer(x)), name="out")
    (root / "calls.pb").write_bytes(calls.as_graph_def().SerializeToString())
    # Without Grappler, which would inline the calls (then their ops are recorded by the
    # names the model gives them anyway).
    config = v1.ConfigProto()
    config.graph_options.rewrite_options.disable_meta_optimizer = True
    with v1.Session(graph=calls, config=config) as session:
        metadata["calls"] = v1.RunMetadata()
        session.run("out:0", {"x:0": [[1.0] * 64] * 32}, options=full,
                    run_metadata=metadata["calls"])
    (root / "run_metadata.pb").write_bytes(metadata["calls"].SerializeToString())
    (root / "step_stats.pb").write_bytes(metadata["calls"].step_stats.SerializeToString())
    return {"logdir": root / "logs", "graph": root / "calls.pb",
            "run_metadata": root / "run_metadata.pb", "step_stats": root / "step_stats.pb",
            "metadata": metadata}


@pytest.fixture(scope="session")
def keras_profile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A logdir from Keras' TensorBoard callback with ``profile_batch``: the traced training
    step's graph and a TF2 profiler capture (``train/plugins/profile/*/*.xplane.pb``)."""
    _tf()
    import keras
    import numpy as np

    logdir = tmp_path_factory.mktemp("keras_profile")
    keras.backend.clear_session()
    model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(64, activation="relu"),
                              keras.layers.Dense(1)], name="seq")
    model.compile("sgd", "mse")
    model.fit(np.zeros((64, 32)), np.zeros((64, 1)), batch_size=16, epochs=1, verbose=0,
              callbacks=[keras.callbacks.TensorBoard(str(logdir), write_graph=True,
                                                     profile_batch=1)])
    keras.backend.clear_session()
    return logdir


@pytest.fixture(scope="session")
def diff_pairs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    """Pairs of graphs TensorFlow made, (old, new), each differing in one way: a Dense layer
    inserted (Keras renumbers the layers after it), a Conv2D's padding, a control dependency
    dropped, a placeholder's shape, an activation swapped; and one model traced twice."""
    tf = _tf()
    import keras

    root = tmp_path_factory.mktemp("diff_pairs")

    def mlp(extra: bool = False, activation: str = "relu") -> Any:
        keras.backend.clear_session()
        layers = [keras.Input((8,)), keras.layers.Dense(16, activation=activation),
                  keras.layers.Dense(16, activation="relu")]
        if extra:
            layers.append(keras.layers.Dense(16, activation="relu"))
        layers.append(keras.layers.Dense(4))
        return _inference_graph(tf, keras.Sequential(layers, name="mlp"), (8,), "x")

    def cnn(padding: str) -> Any:
        keras.backend.clear_session()
        model = keras.Sequential([keras.Input((28, 28, 1)),
                                  keras.layers.Conv2D(8, 3, padding=padding, name="conv"),
                                  keras.layers.GlobalAveragePooling2D(name="gap"),
                                  keras.layers.Dense(10, name="out")], name="cnn")
        return _inference_graph(tf, model, (28, 28, 1), "x")

    def tf1(control: bool, size: int = 28) -> Any:
        graph = tf.Graph()
        with graph.as_default():
            x = tf.compat.v1.placeholder(tf.float32, [None, size, size, 1], name="images")
            check = tf.debugging.assert_non_negative(x, name="check")
            with tf.control_dependencies([check] if control else []):
                y = tf.identity(x, name="checked")
            tf.reduce_mean(tf.nn.relu(y), name="mean")
        return graph.as_graph_def(add_shapes=True)

    made = {
        "inserted_dense": (mlp(), mlp(extra=True)),
        "padding": (cnn("same"), cnn("valid")),
        "control": (tf1(True), tf1(False)),
        "input_shape": (tf1(True), tf1(True, size=32)),
        "activation": (mlp(activation="relu"), mlp(activation="tanh")),
        "identical": (mlp(), mlp()),
    }
    keras.backend.clear_session()
    out = {}
    for name, (old, new) in made.items():
        paths = (root / f"{name}_old.pb", root / f"{name}_new.pb")
        paths[0].write_bytes(old.SerializeToString())
        paths[1].write_bytes(new.SerializeToString())
        out[name] = paths
    return out


@pytest.fixture(scope="session")
def nasnet_step(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """NASNet-Large's TF2 training step, 69,453 ops, as a GraphDef file (see
    ``tensorboard_server.build_nasnet_step``: a few minutes to build)."""
    _tf()
    return tensorboard_server.build_nasnet_step(tmp_path_factory.mktemp("nasnet_step"))


@pytest.fixture(scope="session")
def plugin_logdir(tmp_path_factory: pytest.TempPathFactory, reader_tf1: dict[str, ReaderInput],
                  reader_trace: ReaderInput, nasnet_step: Path) -> Path:
    """The logdir of the TensorBoard plugin's tests: a run of each kind users log (see
    ``tensorboard_server.plugin_logdir``)."""
    return tensorboard_server.plugin_logdir(tmp_path_factory.mktemp("plugin"),
                                            reader_tf1["logdir"].path / "train",
                                            reader_trace.path, nasnet_step)


@pytest.fixture(scope="session")
def tensorboard(plugin_logdir: Path, tmp_path_factory: pytest.TempPathFactory
                ) -> Iterator[tensorboard_server.TensorBoard]:
    """``tensorboard --logdir`` on :func:`plugin_logdir`, with the plugin installed (as pip
    installs it: the package's entry point), every file it opens recorded.  The in-process data
    provider (``--load_fast=false``), so the file audit sees what is read; reloading every
    second, so runs written by a test appear soon."""
    board = tensorboard_server.start(
        ["--logdir", str(plugin_logdir), "--load_fast=false", "--reload_interval", "1"],
        tmp_path_factory.mktemp("tensorboard"), audit=True)
    yield board
    board.stop()
