"""TF2 training steps built the way users build them, for the tests and the benchmarks.

A ``tf.function`` with a ``GradientTape`` and a Keras optimizer, traced to a concrete function:
the graph TensorBoard users bring every day, whether read from ``get_concrete_function`` or
written to a logdir by ``tf.summary.trace_export``.  TF2 names the gradient sums (``AddN_k``),
the captured variables (``*_readvariableop_resource``) and the optimizer's slot initialisers
(``zeros_N``) at the top level, which is what the grouping must cope with.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: Ops that write a variable: what an optimizer's update is made of.
_WRITES = frozenset({"AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp"})

#: Keras application, optimizer and image size of each training step the tests build: six
#: applications and four optimizers, as users pair them.
APPLICATIONS: dict[str, tuple[str, str, int]] = {
    "resnet50_adam": ("ResNet50", "adam", 224),
    "densenet121_momentum": ("DenseNet121", "momentum", 224),
    "inception_v3_adam": ("InceptionV3", "adam", 299),
    "mobilenet_v2_rmsprop": ("MobileNetV2", "rmsprop", 224),
    "efficientnet_b0_adamw": ("EfficientNetB0", "adamw", 224),
    "convnext_tiny_sgd": ("ConvNeXtTiny", "sgd", 224),
}


def optimizer(keras: Any, name: str) -> Any:
    """A Keras optimizer by the short name used above."""
    return {
        "adam": lambda: keras.optimizers.Adam(1e-3),
        "adamw": lambda: keras.optimizers.AdamW(1e-3),
        "momentum": lambda: keras.optimizers.SGD(0.01, momentum=0.9),
        "rmsprop": lambda: keras.optimizers.RMSprop(1e-3),
        "sgd": lambda: keras.optimizers.SGD(0.01),
    }[name]()


def train_step(tf: Any, keras: Any, model: Any, opt: Any) -> Callable[..., Any]:
    """The ``tf.function`` a user writes: forward under a tape, gradients, one update."""
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(inputs: Any, labels: Any) -> Any:
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(inputs, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    return step


def scopes(graph_def: Any, model_name: str) -> tuple[str, str]:
    """The top-level scopes TensorFlow put the model and the optimizer under, read from the
    GraphDef (or, for what Keras' ``fit`` runs, from the function body that takes the
    gradients): the model's is its Keras name with the suffix the trace adds
    (``resnet50_1``); the optimizer's is the scope, other than the model's and the
    gradients', that writes the most variables."""
    nodes = list(graph_def.node)
    if not any(node.name.startswith("gradient_tape/") for node in nodes):
        nodes = next((list(f.node_def) for f in graph_def.library.function
                      if any(n.name.startswith("gradient_tape/") for n in f.node_def)), nodes)
    tops = {node.name.split("/", 1)[0] for node in nodes if "/" in node.name}
    model = next(t for t in sorted(tops) if re.fullmatch(rf"{re.escape(model_name)}(_\d+)?", t))
    writes = Counter(node.name.split("/", 1)[0] for node in nodes
                     if node.op in _WRITES and "/" in node.name)
    optimizer = max((t for t in writes if t not in (model, "gradient_tape")),
                    key=lambda t: (writes[t], t))
    return model, optimizer


def application_step(tf: Any, keras: Any, app: str, opt: str, size: int
                     ) -> tuple[Any, str, str]:
    """One Keras application's training step (random weights, logits): its GraphDef, and
    the scopes of its model and optimizer (see :func:`scopes`)."""
    keras.backend.clear_session()
    keras.utils.set_random_seed(1)
    model = getattr(keras.applications, app)(weights=None, classifier_activation=None)
    step = train_step(tf, keras, model, optimizer(keras, opt))
    concrete = step.get_concrete_function(
        tf.TensorSpec([None, size, size, 3], tf.float32, name="images"),
        tf.TensorSpec([None], tf.int32, name="labels"))
    graph_def = concrete.graph.as_graph_def()
    return (graph_def, *scopes(graph_def, model.name))


def transformer_step(tf: Any, keras: Any, layers: int = 4, width: int = 32
                     ) -> tuple[Any, str, str]:
    """A Transformer encoder classifier trained by AdamW, its layers named flat as Keras 3
    names them (``multi_head_attention_3``, ``layer_normalization_7``, ``add_5``)."""
    keras.backend.clear_session()
    keras.utils.set_random_seed(1)
    tokens = keras.Input((16,), dtype="int32")
    x = keras.layers.Embedding(100, width)(tokens)
    for _ in range(layers):
        attended = keras.layers.MultiHeadAttention(2, width // 2)(x, x)
        x = keras.layers.LayerNormalization()(keras.layers.Add()([x, attended]))
        hidden = keras.layers.Dense(width * 2, activation="relu")(x)
        x = keras.layers.LayerNormalization()(keras.layers.Add()([x, keras.layers.Dense(width)(
            hidden)]))
    logits = keras.layers.Dense(3)(keras.layers.GlobalAveragePooling1D()(x))
    model = keras.Model(tokens, logits)
    step = train_step(tf, keras, model, optimizer(keras, "adamw"))
    concrete = step.get_concrete_function(tf.TensorSpec([None, 16], tf.int32, name="tokens"),
                                          tf.TensorSpec([None], tf.int32, name="labels"))
    graph_def = concrete.graph.as_graph_def()
    return (graph_def, *scopes(graph_def, model.name))


def traced_step_logdir(tf: Any, keras: Any, logdir: Path | str, busy: bool = False
                       ) -> tuple[str, str]:
    """A small CNN's training step run under ``tf.summary.trace_on`` and written to a logdir
    by ``trace_export``, as the TensorBoard tutorial shows; returns the scopes of its model and
    optimizer.  ``busy``: as in a process that ran another model first, with the optimizer's
    slots made during the trace, so the trace records their eager graphs too."""
    if busy:
        other = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
        other(tf.zeros([1, 4]))
    keras.backend.clear_session()
    keras.utils.set_random_seed(1)
    model = keras.Sequential([
        keras.Input((28, 28, 1)), keras.layers.Conv2D(8, 3, activation="relu"),
        keras.layers.Conv2D(8, 3, activation="relu"), keras.layers.MaxPooling2D(),
        keras.layers.Flatten(), keras.layers.Dense(32, activation="relu"),
        keras.layers.Dense(10)])
    opt = optimizer(keras, "adam")
    # The optimizer's slots are made before tracing, as a training loop has them after its
    # first step: made during the trace, in a process that did other Keras work, each of
    # their eager initialisations was exported as a graph of its own (4,779 of them).
    if not busy:
        opt.build(model.trainable_variables)
    step = train_step(tf, keras, model, opt)
    writer = tf.summary.create_file_writer(str(logdir))
    images, labels = tf.zeros([2, 28, 28, 1]), tf.constant([1, 2])
    tf.summary.trace_on(graph=True, profiler=False)
    step(images, labels)
    with writer.as_default():
        tf.summary.trace_export("train_step", step=0)
    writer.close()
    graph_def = step.get_concrete_function(images, labels).graph.as_graph_def()
    return scopes(graph_def, model.name)


def unsigned_saved_model(tf: Any, keras: Any, path: Path) -> None:
    """A SavedModel whose computation is a traced function of a ``tf.Module`` that was not
    exported as a serving signature: the model lives only in the object graph."""
    keras.backend.clear_session()

    class Classifier(tf.Module):
        def __init__(self) -> None:
            super().__init__()
            self.hidden = tf.Variable(tf.random.normal([8, 16], seed=1), name="hidden")
            self.out = tf.Variable(tf.random.normal([16, 3], seed=2), name="out")

        @tf.function(input_signature=[tf.TensorSpec([None, 8], tf.float32)])
        def classify(self, x: Any) -> Any:
            with tf.name_scope("dense"):
                h = tf.nn.relu(tf.matmul(x, self.hidden))
            with tf.name_scope("logits"):
                return tf.nn.softmax(tf.matmul(h, self.out))

    module = Classifier()
    module.classify(tf.zeros([1, 8]))
    tf.saved_model.save(module, str(path), signatures={})
