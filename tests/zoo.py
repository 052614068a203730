"""A random zoo of TF2 training steps, composed from a seed out of the parts users combine.

Each seed draws an architecture (a convolution stack, residual, dense or Inception-like
blocks, a U-Net with skips, an LSTM/GRU (maybe bidirectional), attention layers, an
encoder-decoder pair, a model with two inputs and two outputs, a GAN's generator and
discriminator), the naming (Keras' defaults or the user's own), an optimizer (SGD with or
without momentum, Adam, AdamW, RMSprop, Adagrad) and what goes around it (a learning-rate
schedule, clipping by norm or global norm, weight decay, mixed precision's loss scaling).
The step is a ``tf.function`` with a ``GradientTape`` (two for a GAN), traced with
``get_concrete_function`` as :mod:`training_steps` does.  Models are a few layers on small
inputs, so a step traces in a few seconds.

Besides the GraphDef, each :class:`ZooStep` says what a reader should find in it, read from
the GraphDef itself, not from the hierarchy under test: the top-level scope of every call of
every model, of every loss call, and the ops of the optimizers.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

#: Ops that write a variable: what an optimizer's update is made of.
WRITES = frozenset({"AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp"})
#: Ops that call a function by attribute: a loss-scaling optimizer updates inside one.
_CALLS = frozenset({"If", "StatelessIf", "PartitionedCall", "StatefulPartitionedCall"})

ARCHITECTURES = ("conv", "residual", "dense", "inception", "unet", "rnn", "attention",
                 "autoencoder", "multi_io", "gan")
OPTIMIZERS = ("sgd", "momentum", "adam", "adamw", "rmsprop", "adagrad")
SCHEDULES = (None, "cosine", "exponential", "piecewise")
CLIPPING = (None, "clipnorm", "global_clipnorm")


@dataclass(frozen=True)
class Recipe:
    """What one seed draws."""

    seed: int
    arch: str
    naming: str  # "keras" (Keras' default layer names) or "user"
    optimizer: str
    schedule: str | None
    clipping: str | None
    weight_decay: bool
    mixed: bool

    def __str__(self) -> str:
        extras = [x for x in (self.schedule, self.clipping,
                              "weight_decay" if self.weight_decay else None,
                              "mixed_float16" if self.mixed else None) if x]
        return f"seed {self.seed}: {self.arch} ({self.naming} names), {self.optimizer}" + (
            f" + {' + '.join(extras)}" if extras else "")


@dataclass
class ZooStep:
    """A traced step and what it holds, by its GraphDef's names."""

    recipe: Recipe
    graph_def: Any
    #: Each model's name -> the top-level scopes of its calls, in order.
    models: dict[str, list[str]] = field(default_factory=dict)
    #: The top-level scope of each loss call.
    losses: list[str] = field(default_factory=list)
    #: Each optimizer's ops (names of the GraphDef's nodes: scopes, or a call holding them).
    optimizers: list[list[str]] = field(default_factory=list)


def recipe(seed: int) -> Recipe:
    """The parts seed ``seed`` combines."""
    rng = random.Random(seed)
    return Recipe(seed, rng.choice(ARCHITECTURES), rng.choice(("keras", "user")),
                  rng.choice(OPTIMIZERS), rng.choice(SCHEDULES), rng.choice(CLIPPING),
                  rng.random() < 0.3, rng.random() < 0.25)


def build(tf: Any, keras: Any, r: Recipe) -> ZooStep:
    """Trace the step ``r`` describes (Keras' session cleared first, its dtype policy
    restored after)."""
    keras.backend.clear_session()
    keras.utils.set_random_seed(r.seed)
    if r.mixed:
        keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        parts = _ARCHS[r.arch](keras, _Names(r.naming, r.seed))
        opts = [_optimizer(keras, r) for _ in parts.models_trained]
        step = _gan_step(tf, parts, opts) if r.arch == "gan" else \
            _one_tape_step(tf, parts, opts[0])
        graph_def = step.get_concrete_function(*[
            tf.TensorSpec(shape, dtype, name=name) for name, shape, dtype in parts.specs
        ]).graph.as_graph_def()
    finally:
        keras.mixed_precision.set_global_policy("float32")
    return _read(r, graph_def, parts)


class _Names:
    """Layer names: Keras' defaults (None), or the user's own (``enc1_conv``); and the
    seed's own draws for the details of an architecture (``rng``)."""

    def __init__(self, naming: str, seed: int) -> None:
        self.user = naming == "user"
        self.counts: Counter[str] = Counter()
        self.rng = random.Random(seed * 7919 + 1)

    def __call__(self, stem: str) -> str | None:
        if not self.user:
            return None
        self.counts[stem] += 1
        return f"{stem}{self.counts[stem]}"


@dataclass
class _Parts:
    """An architecture: its models, the inputs of the step, and its loss computation."""

    models: list[Any]
    specs: list[tuple[str, list[int | None], str]]
    #: (inputs) -> the losses summed into the one a tape differentiates (or, for a GAN,
    #: the generator's and the discriminator's).
    forward: Callable[..., Any]
    #: The models whose variables each optimizer trains (one list per optimizer).
    models_trained: list[list[Any]]
    loss_names: list[str]


def _image_classifier(keras: Any, body: Callable[[Any], Any], model_name: str | None
                      ) -> _Parts:
    """A classifier of 16x16 images whose middle is ``body``."""
    images = keras.Input((16, 16, 3))
    x = body(images)
    x = keras.layers.GlobalAveragePooling2D()(x)
    logits = keras.layers.Dense(5, dtype="float32")(x)
    model = keras.Model(images, logits, name=model_name)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    return _Parts([model], [("images", [None, 16, 16, 3], "float32"),
                            ("labels", [None], "int32")],
                  lambda x, y: loss(y, model(x, training=True)), [[model]], [loss.name])


def _conv(keras: Any, n: _Names) -> _Parts:
    layers = keras.layers

    def body(x: Any) -> Any:
        for width in (8, 16):
            x = layers.Conv2D(width, 3, padding="same", activation="relu", name=n("conv"))(x)
            x = layers.MaxPooling2D(name=n("pool"))(x)
        return layers.Conv2D(16, 3, padding="same", name=n("conv"))(x)

    return _image_classifier(keras, body, "convnet" if n.user else None)


def _residual(keras: Any, n: _Names) -> _Parts:
    layers = keras.layers

    def body(x: Any) -> Any:
        x = layers.Conv2D(8, 3, padding="same", name=n("stem"))(x)
        for _ in range(3):
            y = layers.Conv2D(8, 3, padding="same", name=n("res_conv"))(x)
            y = layers.BatchNormalization(name=n("res_bn"))(y)
            y = layers.ReLU(name=n("res_relu"))(y)
            y = layers.Conv2D(8, 3, padding="same", name=n("res_conv"))(y)
            x = layers.ReLU(name=n("res_out"))(layers.Add(name=n("res_add"))([x, y]))
        return x

    return _image_classifier(keras, body, "resnet" if n.user else None)


def _dense(keras: Any, n: _Names) -> _Parts:
    layers = keras.layers

    def body(x: Any) -> Any:
        x = layers.Conv2D(8, 3, padding="same", name=n("stem"))(x)
        for _ in range(3):
            y = layers.BatchNormalization(name=n("dense_bn"))(x)
            y = layers.Conv2D(4, 3, padding="same", activation="relu", name=n("dense_conv"))(y)
            x = layers.Concatenate(name=n("dense_concat"))([x, y])
        return x

    return _image_classifier(keras, body, "densenet" if n.user else None)


def _inception(keras: Any, n: _Names) -> _Parts:
    layers = keras.layers

    def body(x: Any) -> Any:
        for _ in range(2):
            a = layers.Conv2D(4, 1, padding="same", name=n("branch1x1"))(x)
            b = layers.Conv2D(4, 1, padding="same", name=n("branch3x3_reduce"))(x)
            b = layers.Conv2D(4, 3, padding="same", name=n("branch3x3"))(b)
            c = layers.MaxPooling2D(3, 1, padding="same", name=n("branch_pool"))(x)
            c = layers.Conv2D(4, 1, padding="same", name=n("branch_pool_proj"))(c)
            x = layers.Concatenate(name=n("mixed"))([a, b, c])
        return x

    return _image_classifier(keras, body, "inception" if n.user else None)


def _unet(keras: Any, n: _Names) -> _Parts:
    """Two stages down, a bottleneck, two up, each up stage concatenating its skip."""
    layers = keras.layers
    images = keras.Input((16, 16, 3))
    x, skips = images, []
    for width in (8, 16):
        x = layers.Conv2D(width, 3, padding="same", activation="relu", name=n("down_conv"))(x)
        x = layers.Conv2D(width, 3, padding="same", activation="relu", name=n("down_conv"))(x)
        skips.append(x)
        x = layers.MaxPooling2D(name=n("down_pool"))(x)
    x = layers.Conv2D(32, 3, padding="same", activation="relu", name=n("bottleneck"))(x)
    for width, skip in zip((16, 8), reversed(skips), strict=True):
        x = layers.Conv2DTranspose(width, 2, strides=2, padding="same", name=n("up"))(x)
        x = layers.Concatenate(name=n("skip"))([x, skip])
        x = layers.Conv2D(width, 3, padding="same", activation="relu", name=n("up_conv"))(x)
    logits = layers.Conv2D(3, 1, dtype="float32", name=n("pixels"))(x)
    model = keras.Model(images, logits, name="unet" if n.user else None)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    return _Parts([model], [("images", [None, 16, 16, 3], "float32"),
                            ("masks", [None, 16, 16], "int32")],
                  lambda x, y: loss(y, model(x, training=True)), [[model]], [loss.name])


def _sequence_classifier(keras: Any, n: _Names, body: Callable[[Any], Any], name: str
                         ) -> _Parts:
    tokens = keras.Input((12,), dtype="int32")
    x = keras.layers.Embedding(50, 8, name=n("embedding"))(tokens)
    logits = keras.layers.Dense(3, dtype="float32", name=n("logits"))(body(x))
    model = keras.Model(tokens, logits, name=name if n.user else None)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    return _Parts([model], [("tokens", [None, 12], "int32"), ("labels", [None], "int32")],
                  lambda x, y: loss(y, model(x, training=True)), [[model]], [loss.name])


def _rnn(keras: Any, n: _Names) -> _Parts:
    layers = keras.layers
    cell = n.rng.choice((layers.LSTM, layers.GRU))

    def body(x: Any) -> Any:
        x = layers.Bidirectional(cell(8, return_sequences=True), name=n("bidirectional"))(x)
        return cell(8, name=n("recurrent"))(x)

    return _sequence_classifier(keras, n, body, "text_classifier")


def _attention(keras: Any, n: _Names) -> _Parts:
    layers = keras.layers

    def body(x: Any) -> Any:
        for _ in range(2):
            attended = layers.MultiHeadAttention(2, 4, name=n("attention"))(x, x)
            x = layers.LayerNormalization(name=n("norm"))(layers.Add(name=n("residual"))(
                [x, attended]))
            hidden = layers.Dense(16, activation="relu", name=n("ffn_in"))(x)
            x = layers.LayerNormalization(name=n("norm"))(layers.Add(name=n("residual"))(
                [x, layers.Dense(8, name=n("ffn_out"))(hidden)]))
        return layers.GlobalAveragePooling1D(name=n("pool"))(x)

    return _sequence_classifier(keras, n, body, "transformer")


def _autoencoder(keras: Any, n: _Names) -> _Parts:
    """An encoder and a decoder, two models called one after the other."""
    layers = keras.layers
    encoder = keras.Sequential([
        keras.Input((16, 16, 1)),
        layers.Conv2D(8, 3, strides=2, padding="same", activation="relu", name=n("enc_conv")),
        layers.Conv2D(8, 3, strides=2, padding="same", activation="relu", name=n("enc_conv")),
        layers.Flatten(name=n("flatten")), layers.Dense(8, name=n("code"))], name="encoder")
    decoder = keras.Sequential([
        keras.Input((8,)), layers.Dense(4 * 4 * 8, name=n("dec_dense")),
        layers.Reshape((4, 4, 8), name=n("reshape")),
        layers.Conv2DTranspose(8, 3, strides=2, padding="same", activation="relu",
                               name=n("dec_up")),
        layers.Conv2DTranspose(1, 3, strides=2, padding="same", dtype="float32",
                               name=n("dec_up"))], name="decoder")
    loss = keras.losses.MeanSquaredError()
    return _Parts([encoder, decoder], [("images", [None, 16, 16, 1], "float32")],
                  lambda x: loss(x, decoder(encoder(x, training=True), training=True)),
                  [[encoder, decoder]], [loss.name])


def _multi_io(keras: Any, n: _Names) -> _Parts:
    """Two inputs (an image and a vector), two heads (a class and a value), two losses."""
    layers = keras.layers
    images, extra = keras.Input((16, 16, 3)), keras.Input((4,))
    x = layers.Conv2D(8, 3, strides=2, activation="relu", name=n("conv"))(images)
    x = layers.GlobalAveragePooling2D(name=n("pool"))(x)
    x = layers.Concatenate(name=n("merge"))([x, layers.Dense(8, name=n("side"))(extra)])
    x = layers.Dense(16, activation="relu", name=n("shared"))(x)
    label = layers.Dense(5, dtype="float32", name=n("class_head"))(x)
    value = layers.Dense(1, dtype="float32", name=n("value_head"))(x)
    model = keras.Model([images, extra], [label, value], name="two_heads" if n.user else None)
    xent = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    mse = keras.losses.MeanSquaredError()

    def forward(x: Any, e: Any, y: Any, v: Any) -> Any:
        logits, guess = model([x, e], training=True)
        return xent(y, logits) + mse(v, guess)

    return _Parts([model], [("images", [None, 16, 16, 3], "float32"),
                            ("extra", [None, 4], "float32"), ("labels", [None], "int32"),
                            ("values", [None, 1], "float32")],
                  forward, [[model]], [xent.name, mse.name])


def _gan(keras: Any, n: _Names) -> _Parts:
    """A small DCGAN: the discriminator judges real and fake images (two calls), the losses
    are three binary cross-entropies."""
    layers = keras.layers
    generator = keras.Sequential([
        keras.Input((8,)), layers.Dense(4 * 4 * 8, name=n("g_dense")),
        layers.Reshape((4, 4, 8), name=n("g_reshape")),
        layers.Conv2DTranspose(8, 3, strides=2, padding="same", activation="relu",
                               name=n("g_up")),
        layers.Conv2DTranspose(1, 3, strides=2, padding="same", activation="tanh",
                               dtype="float32", name=n("g_up"))], name="generator")
    discriminator = keras.Sequential([
        keras.Input((16, 16, 1)),
        layers.Conv2D(8, 3, strides=2, padding="same", name=n("d_conv")),
        layers.LeakyReLU(name=n("d_act")), layers.Flatten(name=n("d_flatten")),
        layers.Dense(1, dtype="float32", name=n("d_logit"))], name="discriminator")
    bce = keras.losses.BinaryCrossentropy(from_logits=True)

    def forward(images: Any, noise: Any) -> tuple[Any, Any]:
        import tensorflow as tf

        fake = generator(noise, training=True)
        real_out = discriminator(images, training=True)
        fake_out = discriminator(fake, training=True)
        g_loss = bce(tf.ones_like(fake_out), fake_out)
        d_loss = bce(tf.ones_like(real_out), real_out) + bce(tf.zeros_like(fake_out), fake_out)
        return g_loss, d_loss

    return _Parts([generator, discriminator], [("images", [None, 16, 16, 1], "float32"),
                                               ("noise", [None, 8], "float32")],
                  forward, [[generator], [discriminator]], [bce.name] * 3)


_ARCHS: dict[str, Callable[[Any, _Names], _Parts]] = {
    "conv": _conv, "residual": _residual, "dense": _dense, "inception": _inception,
    "unet": _unet, "rnn": _rnn, "attention": _attention, "autoencoder": _autoencoder,
    "multi_io": _multi_io, "gan": _gan}


def _optimizer(keras: Any, r: Recipe) -> Any:
    """The optimizer ``r`` names, with its schedule, clipping, weight decay and scaling."""
    schedules = keras.optimizers.schedules
    rate: Any = {None: 1e-3,
                 "cosine": lambda: schedules.CosineDecay(1e-3, 1000),
                 "exponential": lambda: schedules.ExponentialDecay(1e-3, 100, 0.9),
                 "piecewise": lambda: schedules.PiecewiseConstantDecay([100], [1e-3, 1e-4]),
                 }[r.schedule]
    kwargs: dict[str, Any] = {"learning_rate": rate() if callable(rate) else rate}
    if r.clipping:
        kwargs[r.clipping] = 1.0
    if r.weight_decay:
        kwargs["weight_decay"] = 1e-4
    o = keras.optimizers
    made = {"sgd": lambda: o.SGD(**kwargs), "momentum": lambda: o.SGD(momentum=0.9, **kwargs),
            "adam": lambda: o.Adam(**kwargs), "adamw": lambda: o.AdamW(**kwargs),
            "rmsprop": lambda: o.RMSprop(**kwargs), "adagrad": lambda: o.Adagrad(**kwargs),
            }[r.optimizer]()
    return o.LossScaleOptimizer(made) if r.mixed else made


def _variables(models: list[Any]) -> list[Any]:
    return [v for m in models for v in m.trainable_variables]


def _one_tape_step(tf: Any, parts: _Parts, opt: Any) -> Any:
    variables = _variables(parts.models_trained[0])
    scaled = isinstance(opt, _loss_scale_type())

    @tf.function
    def step(*inputs: Any) -> Any:
        with tf.GradientTape() as tape:
            loss = parts.forward(*inputs)
            target = opt.scale_loss(loss) if scaled else loss
        grads = tape.gradient(target, variables)
        opt.apply_gradients(zip(grads, variables, strict=True))
        return loss

    return step


def _gan_step(tf: Any, parts: _Parts, opts: list[Any]) -> Any:
    g_vars, d_vars = (_variables(m) for m in parts.models_trained)
    g_opt, d_opt = opts
    scaled = isinstance(g_opt, _loss_scale_type())

    @tf.function
    def step(images: Any, noise: Any) -> Any:
        with tf.GradientTape() as g_tape, tf.GradientTape() as d_tape:
            g_loss, d_loss = parts.forward(images, noise)
            g_target = g_opt.scale_loss(g_loss) if scaled else g_loss
            d_target = d_opt.scale_loss(d_loss) if scaled else d_loss
        g_opt.apply_gradients(zip(g_tape.gradient(g_target, g_vars), g_vars, strict=True))
        d_opt.apply_gradients(zip(d_tape.gradient(d_target, d_vars), d_vars, strict=True))
        return g_loss, d_loss

    return step


def _loss_scale_type() -> type:
    import keras

    return keras.optimizers.LossScaleOptimizer  # type: ignore[no-any-return]


def _read(r: Recipe, graph_def: Any, parts: _Parts) -> ZooStep:
    """Where the GraphDef put each model call, loss call and optimizer (see the module
    docstring): model calls and losses by their Keras names with the suffix a trace adds;
    the optimizers as the other top-level scopes that write variables, and the calls whose
    functions do (a loss-scaling optimizer updates inside a ``cond``)."""
    tops = Counter(node.name.split("/", 1)[0] for node in graph_def.node if "/" in node.name)
    step = ZooStep(r, graph_def)

    def calls(name: str) -> list[str]:
        return sorted((t for t in tops if re.fullmatch(rf"{re.escape(name)}(_\d+)?", t)),
                      key=_natural)

    for model in parts.models:
        step.models[model.name] = calls(model.name)
    for name in sorted(set(parts.loss_names)):
        step.losses += calls(name)
    assert len(step.losses) == len(parts.loss_names), (r, step.losses, parts.loss_names)
    assert [len(c) for c in step.models.values()] == [
        2 if r.arch == "gan" and m.name == "discriminator" else 1 for m in parts.models], (
        r, step.models)
    taken = {"gradient_tape", *step.losses, *(s for c in step.models.values() for s in c)}
    writers = _writing_functions(graph_def)
    scopes = sorted({node.name.split("/", 1)[0] for node in graph_def.node
                     if "/" in node.name and node.op in WRITES} - taken)
    step.optimizers = [[node.name for node in graph_def.node
                        if node.name.split("/", 1)[0] == scope] for scope in scopes]
    step.optimizers += [[node.name] for node in graph_def.node if "/" not in node.name
                        and node.op in _CALLS and _called(node) & writers]
    assert len(step.optimizers) == len(parts.models_trained), (r, scopes)
    return step


def _writing_functions(graph_def: Any) -> set[str]:
    """The library's functions that write a variable, or call one that does."""
    library = {f.signature.name: f for f in graph_def.library.function}
    calls = {name: {c for node in f.node_def for c in _called(node)}
             for name, f in library.items()}
    found = {name for name, f in library.items() if any(n.op in WRITES for n in f.node_def)}
    grown = True
    while grown:
        more = {name for name, called in calls.items() if called & found} - found
        found |= more
        grown = bool(more)
    return found


def _called(node: Any) -> set[str]:
    return {a.func.name for key, a in node.attr.items()
            if key in ("f", "then_branch", "else_branch", "body", "cond") and a.func.name}


def _natural(name: str) -> list[Any]:
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]
