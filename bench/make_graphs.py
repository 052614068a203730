"""Build the large benchmark GraphDefs in ``bench/graphs/`` with TensorFlow itself.

The graphs are big (up to ~66k nodes, tens of MB), so they are generated, not committed
(``bench/graphs/`` is gitignored).  Run from the repository root::

    .venv/bin/python bench/make_graphs.py                 # everything (~1 min on 2 cores)
    .venv/bin/python bench/make_graphs.py --only bert_train resnet50_infer
    .venv/bin/python bench/make_graphs.py --variants      # compare constructions (~4 min)

"Ops" below means top-level NodeDefs (``len(graph_def.node)``).  None of these graphs has a
function library: Keras 3 layers are plain Python, so tracing a model inlines every op.

Constructions and counts (TF 2.21, Keras 3.15):

====================  ======  ======================================================
name                  ops     construction
====================  ======  ======================================================
mnist_tf1             435     samples/make_samples.py's TF1 graph (with shapes)
resnet50_infer        1,831   tf.function(model(x, training=False)) concrete graph
nasnet_mobile         4,908   same, NASNetMobile
bert_train            11,699  tf.compat.v1 graph mode, hand-written 12-layer encoder
                              (BERT's tanh GELU, moments layer norm, per-layer mask),
                              v1 AdamOptimizer + global-norm clipping (issue: ~12,000)
resnet50_train        14,156  graph mode, Keras model in a tf.Graph, v1 Adam.minimize
                              (issue: ~14,500; tf.function + Keras Adam gives 15,199)
nasnet_large_step     69,453  tf.function train step (GradientTape, Keras Adam): the
                              TF2 graph users trace, 606+ top-level gradient sums
nasnet_large_train    65,783  graph mode, NASNetLarge, v1 RMSProp.minimize (the
                              optimizer the NASNet paper trained with); the issue's
                              65,634 is 0.23% away.  Other constructions: graph mode
                              SGD 53,656 / Momentum 59,719 / Adam 67,837 /
                              gradients only 45,134; tf.function train step with Keras
                              optimizers: SGD 33,823 / Adam 69,453.
synthetic_200k        ~200k   bench/graphs_synthetic.py: prefixed copies of the above
====================  ======  ======================================================

Graph-mode builds put everything in the top-level graph with Keras' layer name scopes, and
also hold each variable's initializer subgraph, which a tf.function trace does not.

Another TensorFlow version builds another NASNet-Large: in a venv with tensorflow-cpu 2.15
(Keras 2), ``python bench/make_graphs.py --only nasnet_large_train --suffix _tf2.15`` writes
``nasnet_large_train_tf2.15.pb`` (49,716 ops, 1,056 library functions of 6,864 ops, layer
scopes at the top level); bench/scale.py measures every ``nasnet_large_train*.pb``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
GRAPHS_DIR = BENCH_DIR / "graphs"
sys.path.insert(0, str(REPO_DIR / "samples"))
sys.path.insert(0, str(BENCH_DIR))

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from graphs_synthetic import compose_to_file  # noqa: E402
from make_samples import mnist_tf1_graph_def  # noqa: E402
from tensorflow.core.framework import graph_pb2  # noqa: E402

SEED = 20240611

# Where the issue put each graph; printed next to what this TF/Keras actually gives.
TARGETS: dict[str, int] = {
    "resnet50_infer": 1_831,
    "nasnet_mobile": 4_908,
    "bert_train": 12_000,
    "resnet50_train": 14_500,
    "nasnet_large_train": 65_634,
    "synthetic_200k": 200_000,
}


def _fresh_keras() -> None:
    """Reset Keras names and seeds; must run outside any tf.Graph nesting."""
    keras.backend.clear_session()
    keras.utils.set_random_seed(SEED)


# --------------------------------------------------------------------------------------
# Inference graphs: tf.function traces of Keras applications
# --------------------------------------------------------------------------------------


def _inference_graph(make_model: Callable[[], keras.Model], image_size: int) -> graph_pb2.GraphDef:
    """Trace model(x, training=False) for a batch-None image input."""
    _fresh_keras()
    model = make_model()

    @tf.function
    def infer(images: tf.Tensor) -> tf.Tensor:
        return model(images, training=False)

    spec = tf.TensorSpec([None, image_size, image_size, 3], tf.float32, name="images")
    return infer.get_concrete_function(spec).graph.as_graph_def()


def build_resnet50_infer() -> graph_pb2.GraphDef:
    """ResNet-50 (random weights) inference trace."""
    return _inference_graph(lambda: keras.applications.ResNet50(weights=None), 224)


def build_nasnet_mobile() -> graph_pb2.GraphDef:
    """NASNet-Mobile (random weights) inference trace."""
    return _inference_graph(lambda: keras.applications.NASNetMobile(weights=None), 224)


# --------------------------------------------------------------------------------------
# Training graphs: TF1-style graph mode around Keras 3 applications
# --------------------------------------------------------------------------------------

OPTIMIZERS: dict[str, Callable[[], tf.compat.v1.train.Optimizer]] = {
    "sgd": lambda: tf.compat.v1.train.GradientDescentOptimizer(0.01),
    "momentum": lambda: tf.compat.v1.train.MomentumOptimizer(0.01, momentum=0.9),
    "rmsprop": lambda: tf.compat.v1.train.RMSPropOptimizer(0.01, decay=0.9, epsilon=1.0),
    "adam": lambda: tf.compat.v1.train.AdamOptimizer(1e-3),
}


def keras_graph_mode_train(
    make_model: Callable[[], keras.Model], image_size: int, optimizer: str | None
) -> graph_pb2.GraphDef:
    """A Keras application built in a tf.Graph, with a v1 loss and optimizer step.

    Keras 3 accepts graph mode for building and calling a model; its variables wrap
    tf.ResourceVariables (``.value``), which the v1 optimizers update.  ``optimizer=None``
    stops after tf.gradients, the "gradients only" construction.
    """
    _fresh_keras()
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.set_random_seed(SEED)
        model = make_model()
        images = tf.compat.v1.placeholder(
            tf.float32, [None, image_size, image_size, 3], name="images"
        )
        labels = tf.compat.v1.placeholder(tf.int32, [None], name="labels")
        logits = model(images, training=True)
        with tf.name_scope("loss"):
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
            )
        # Keras 3 wraps each tf.Variable (``.value``); Keras 2 (TensorFlow <= 2.15) hands
        # out the tf.Variable itself.
        variables = [v if isinstance(v, tf.Variable) else v.value
                     for v in model.trainable_variables]
        with tf.name_scope("train"):
            if optimizer is None:
                tf.gradients(loss, variables)
            else:
                OPTIMIZERS[optimizer]().minimize(loss, var_list=variables, name="step")
    return graph.as_graph_def()


def tf_function_train(
    make_model: Callable[[], keras.Model], image_size: int, optimizer: str
) -> graph_pb2.GraphDef:
    """A tf.function train step (GradientTape + Keras optimizer), the TF2-native way."""
    _fresh_keras()
    model = make_model()
    opt = keras.optimizers.SGD(0.01) if optimizer == "sgd" else keras.optimizers.Adam()
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(images: tf.Tensor, labels: tf.Tensor) -> tf.Tensor:
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(images, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    concrete = train_step.get_concrete_function(
        tf.TensorSpec([None, image_size, image_size, 3], tf.float32, name="images"),
        tf.TensorSpec([None], tf.int32, name="labels"),
    )
    return concrete.graph.as_graph_def()


def _resnet50() -> keras.Model:
    """ResNet-50 producing logits, random weights."""
    return keras.applications.ResNet50(weights=None, classifier_activation=None)


def _nasnet_large() -> keras.Model:
    """NASNet-Large producing logits, random weights."""
    return keras.applications.NASNetLarge(weights=None, classifier_activation=None)


def build_resnet50_train() -> graph_pb2.GraphDef:
    """ResNet-50 training step; v1 Adam is the construction closest to the issue's 14,500."""
    return keras_graph_mode_train(_resnet50, 224, "adam")


def build_nasnet_large_step() -> graph_pb2.GraphDef:
    """NASNet-Large's TF2 training step as users trace it: a ``tf.function`` with a
    GradientTape and Keras' Adam (TF2 names its gradient sums ``AddN_k`` at the top level)."""
    return tf_function_train(_nasnet_large, 331, "adam")


def build_nasnet_large_train() -> graph_pb2.GraphDef:
    """NASNet-Large training step with RMSProp, 65,783 ops vs the issue's 65,634."""
    return keras_graph_mode_train(_nasnet_large, 331, "rmsprop")


# --------------------------------------------------------------------------------------
# BERT-like encoder training step, written by hand
# --------------------------------------------------------------------------------------

BERT_LAYERS = 12
BERT_HIDDEN = 128
BERT_HEADS = 4
BERT_INTERMEDIATE = 512
BERT_SEQ = 64
BERT_VOCAB = 1000
BERT_CLASSES = 2


def _variable(shape: list[int], name: str, zeros: bool = False) -> tf.Variable:
    """A resource variable with BERT's truncated-normal (or zero) initializer."""
    initial = tf.zeros(shape) if zeros else tf.random.truncated_normal(shape, stddev=0.02)
    return tf.compat.v1.Variable(initial, name=name)


def _bert_dense(x: tf.Tensor, units: int, name: str) -> tf.Tensor:
    """Dense layer on [batch*seq, in] rows, in its own scope like BERT's tf.layers.dense."""
    with tf.name_scope(name):
        kernel = _variable([x.shape[-1], units], "kernel")
        bias = _variable([units], "bias", zeros=True)
        return tf.nn.bias_add(tf.matmul(x, kernel), bias)


def _layer_norm(x: tf.Tensor) -> tf.Tensor:
    """Layer normalisation over the last axis: moments + batch_normalization, as BERT's was."""
    with tf.name_scope("LayerNorm"):
        gamma = tf.compat.v1.Variable(tf.ones([x.shape[-1]]), name="gamma")
        beta = _variable([x.shape[-1]], "beta", zeros=True)
        mean, variance = tf.nn.moments(x, axes=[-1], keepdims=True)
        return tf.nn.batch_normalization(x, mean, variance, beta, gamma, 1e-12)


def _gelu(x: tf.Tensor) -> tf.Tensor:
    """GELU with BERT's tanh approximation."""
    with tf.name_scope("gelu"):
        cdf = 0.5 * (1.0 + tf.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * tf.pow(x, 3))))
        return x * cdf


def _dropout(x: tf.Tensor, rate: float = 0.1) -> tf.Tensor:
    """Training-time dropout."""
    return tf.nn.dropout(x, rate=rate)


def _encoder_layer(x: tf.Tensor, mask: tf.Tensor, batch: tf.Tensor, index: int) -> tf.Tensor:
    """One transformer encoder layer on [batch*seq, hidden] rows, scope layer_<index>."""
    head_size = BERT_HIDDEN // BERT_HEADS

    def split_heads(t: tf.Tensor) -> tf.Tensor:
        t = tf.reshape(t, tf.stack([batch, BERT_SEQ, BERT_HEADS, head_size]))
        return tf.transpose(t, [0, 2, 1, 3])

    with tf.name_scope(f"layer_{index}"):
        with tf.name_scope("attention"):
            with tf.name_scope("self"):
                query = split_heads(_bert_dense(x, BERT_HIDDEN, "query"))
                key = split_heads(_bert_dense(x, BERT_HIDDEN, "key"))
                value = split_heads(_bert_dense(x, BERT_HIDDEN, "value"))
                scores = tf.matmul(query, key, transpose_b=True) / float(head_size) ** 0.5
                # Like BERT, each layer turns the [batch, seq, seq] mask into its own bias.
                mask_bias = (1.0 - tf.expand_dims(mask, axis=1)) * -10000.0
                probs = _dropout(tf.nn.softmax(scores + mask_bias))
                context = tf.transpose(tf.matmul(probs, value), [0, 2, 1, 3])
                context = tf.reshape(context, [-1, BERT_HIDDEN])
            with tf.name_scope("output"):
                attended = _dropout(_bert_dense(context, BERT_HIDDEN, "dense"))
                attended = _layer_norm(attended + x)
        with tf.name_scope("intermediate"):
            inner = _gelu(_bert_dense(attended, BERT_INTERMEDIATE, "dense"))
        with tf.name_scope("output"):
            out = _dropout(_bert_dense(inner, BERT_HIDDEN, "dense"))
            return _layer_norm(out + attended)


def build_bert_train() -> graph_pb2.GraphDef:
    """A 12-layer BERT-like classifier training step in TF1 graph mode.

    Embeddings, 12 encoder layers under ``bert/encoder/layer_<i>``, a pooler and a
    classifier; cross entropy; Adam with global-norm gradient clipping, as BERT's
    fine-tuning script did.  Sizes are tiny because the op count does not depend on them.
    """
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.set_random_seed(SEED)
        input_ids = tf.compat.v1.placeholder(tf.int32, [None, BERT_SEQ], name="input_ids")
        input_mask = tf.compat.v1.placeholder(tf.int32, [None, BERT_SEQ], name="input_mask")
        segment_ids = tf.compat.v1.placeholder(tf.int32, [None, BERT_SEQ], name="segment_ids")
        labels = tf.compat.v1.placeholder(tf.int32, [None], name="labels")
        batch = tf.shape(input_ids)[0]

        with tf.name_scope("bert"):
            with tf.name_scope("embeddings"):
                words = _variable([BERT_VOCAB, BERT_HIDDEN], "word_embeddings")
                types = _variable([2, BERT_HIDDEN], "token_type_embeddings")
                positions = _variable([BERT_SEQ, BERT_HIDDEN], "position_embeddings")
                embedded = (
                    tf.gather(words, input_ids)
                    + tf.gather(types, segment_ids)
                    + tf.expand_dims(positions, 0)
                )
                embedded = _dropout(_layer_norm(embedded))
            with tf.name_scope("encoder"):
                # [batch, seq, seq] attention mask, built once as BERT did.
                to_mask = tf.cast(tf.reshape(input_mask, [-1, 1, BERT_SEQ]), tf.float32)
                mask = tf.ones(tf.stack([batch, BERT_SEQ, 1])) * to_mask
                x = tf.reshape(embedded, [-1, BERT_HIDDEN])
                for index in range(BERT_LAYERS):
                    x = _encoder_layer(x, mask, batch, index)
            with tf.name_scope("pooler"):
                first = tf.reshape(x, tf.stack([batch, BERT_SEQ, BERT_HIDDEN]))[:, 0, :]
                pooled = tf.tanh(_bert_dense(first, BERT_HIDDEN, "dense"))

        with tf.name_scope("classifier"):
            logits = _bert_dense(_dropout(pooled), BERT_CLASSES, "output")
        with tf.name_scope("loss"):
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
            )
        with tf.name_scope("train"):
            variables = tf.compat.v1.trainable_variables()
            grads = tf.gradients(loss, variables)
            clipped, _ = tf.clip_by_global_norm(grads, clip_norm=1.0)
            optimizer = tf.compat.v1.train.AdamOptimizer(1e-4)
            optimizer.apply_gradients(zip(clipped, variables, strict=True), name="step")
    return graph.as_graph_def()


# --------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------


SYNTHETIC_SOURCES = ["mnist_tf1", "resnet50_infer", "nasnet_mobile", "bert_train", "resnet50_train"]


def build_synthetic_200k() -> graph_pb2.GraphDef:
    """~200k ops composed from the other graphs already written to bench/graphs/."""
    sources = [GRAPHS_DIR / f"{name}.pb" for name in SYNTHETIC_SOURCES]
    missing = [p.name for p in sources if not p.exists()]
    if missing:
        raise SystemExit(f"synthetic_200k needs {', '.join(missing)}: build those first")
    return compose_to_file(sources, GRAPHS_DIR / "synthetic_200k.pb", target=200_000)


BUILDERS: dict[str, Callable[[], graph_pb2.GraphDef]] = {
    "mnist_tf1": mnist_tf1_graph_def,
    "resnet50_infer": build_resnet50_infer,
    "nasnet_mobile": build_nasnet_mobile,
    "bert_train": build_bert_train,
    "resnet50_train": build_resnet50_train,
    "nasnet_large_train": build_nasnet_large_train,
    "nasnet_large_step": build_nasnet_large_step,
    "synthetic_200k": build_synthetic_200k,
}


def _describe(name: str, graph_def: graph_pb2.GraphDef, seconds: float) -> dict[str, object]:
    """Counts and timing for one graph, printed and kept in bench/graphs/counts.json."""
    return {
        "name": name,
        "ops": len(graph_def.node),
        "functions": len(graph_def.library.function),
        "function_ops": sum(len(f.node_def) for f in graph_def.library.function),
        "bytes": graph_def.ByteSize(),
        "target": TARGETS.get(name),
        "seconds": round(seconds, 1),
    }


def run_variants() -> None:
    """Print the op count of each NASNet-Large (and ResNet-50) training construction."""
    constructions: list[tuple[str, Callable[[], graph_pb2.GraphDef]]] = []
    models = (("resnet50", _resnet50, 224), ("nasnet_large", _nasnet_large, 331))
    for model_name, make, size in models:
        for opt in (None, "sgd", "momentum", "rmsprop", "adam"):
            label = f"{model_name} graph-mode {opt or 'gradients-only'}"
            constructions.append((label, partial(keras_graph_mode_train, make, size, opt)))
        for opt in ("sgd", "adam"):
            label = f"{model_name} tf.function keras-{opt}"
            constructions.append((label, partial(tf_function_train, make, size, opt)))
    for label, build in constructions:
        start = time.perf_counter()
        graph_def = build()
        print(
            f"{label:45s} ops={len(graph_def.node):7,d} "
            f"functions={len(graph_def.library.function)} "
            f"({time.perf_counter() - start:.1f}s)",
            flush=True,
        )


def main(argv: list[str] | None = None) -> int:
    """Build the requested graphs (all by default) and print their op counts."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--only",
        nargs="+",
        choices=sorted(BUILDERS),
        metavar="NAME",
        help=f"build only these: {', '.join(BUILDERS)}",
    )
    parser.add_argument(
        "--suffix",
        default="",
        help="append this to each file name (nasnet_large_train_tf2.15.pb: one copy per "
        "TensorFlow version that builds it; bench/scale.py measures every copy)",
    )
    parser.add_argument(
        "--variants",
        action="store_true",
        help="compare training-graph constructions instead of writing graphs",
    )
    args = parser.parse_args(argv)
    if args.variants:
        run_variants()
        return 0

    GRAPHS_DIR.mkdir(parents=True, exist_ok=True)
    counts_path = GRAPHS_DIR / "counts.json"
    counts = json.loads(counts_path.read_text()) if counts_path.exists() else {}
    total_start = time.perf_counter()
    for name in args.only or list(BUILDERS):
        start = time.perf_counter()
        graph_def = BUILDERS[name]()
        if name != "synthetic_200k":  # compose_to_file already wrote it
            (GRAPHS_DIR / f"{name}{args.suffix}.pb").write_bytes(
                graph_def.SerializeToString(deterministic=True))
        info = _describe(name, graph_def, time.perf_counter() - start)
        info["tensorflow"], info["keras"] = tf.__version__, keras.__version__
        counts[name + args.suffix] = info
        target = f" (issue: {info['target']:,})" if info["target"] else ""
        print(
            f"{name:20s} ops={info['ops']:7,d}{target} functions={info['functions']} "
            f"function_ops={info['function_ops']} size={info['bytes'] / 1e6:.1f} MB "
            f"time={info['seconds']}s",
            flush=True,
        )
    counts_path.write_text(json.dumps(counts, indent=2) + "\n")
    print(f"total {time.perf_counter() - total_start:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
