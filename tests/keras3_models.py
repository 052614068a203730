"""Keras 3 artifacts made the way users make them, for the tests: ``.keras`` files of
applications and of hand-built models (``Sequential``, two inputs, nested, subclassed, a custom
layer), a legacy ``.h5``, ``model.export()`` and ``tf.saved_model.save`` SavedModels, and the
logdirs of Keras' own ``TensorBoard`` callback and of :class:`graphviz_tb.keras.OpGraphCallback`.

Every model is compiled as its user would compile it; some are fitted a step first (the file
then holds the optimizer's state too).  Images are small (32 × 32): what is drawn is the
graph, which does not depend on the image size.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Keras application, optimizer (see :func:`training_steps.optimizer`) and whether it is
#: fitted a step before it is saved.
APPLICATIONS: dict[str, tuple[str, str, bool]] = {
    "mobilenet_v2": ("MobileNetV2", "adam", True),
    "resnet50": ("ResNet50", "momentum", False),
    "densenet121": ("DenseNet121", "rmsprop", False),
    "efficientnet_b0": ("EfficientNetB0", "adamw", False),
}
SIZE = 32
CLASSES = 5


@dataclass
class Artifact:
    """A file or directory Keras wrote, the live model behind it and the model's Keras name
    (its scope in a traced step, with the suffix the trace adds)."""

    path: Path
    model: Any = None
    model_name: str = ""


def _images(np: Any, n: int = 4) -> Any:
    return np.random.default_rng(1).random((n, SIZE, SIZE, 3), dtype="float32")


def _labels(np: Any, n: int = 4) -> Any:
    return np.arange(n) % CLASSES


def applications(keras: Any, np: Any, root: Path) -> dict[str, Artifact]:
    """A ``.keras`` file of each application in :data:`APPLICATIONS`."""
    import training_steps

    made = {}
    for name, (app, opt, fit) in APPLICATIONS.items():
        keras.backend.clear_session()
        keras.utils.set_random_seed(1)
        model = getattr(keras.applications, app)(weights=None, input_shape=(SIZE, SIZE, 3),
                                                 classes=CLASSES)
        model.compile(optimizer=training_steps.optimizer(keras, opt),
                      loss="sparse_categorical_crossentropy", metrics=["accuracy"])
        if fit:
            model.fit(_images(np), _labels(np), batch_size=2, epochs=1, verbose=0)
        path = root / f"{name}.keras"
        model.save(path)
        made[name] = Artifact(path, model, model.name)
    return made


def hand_built(keras: Any, np: Any, root: Path) -> dict[str, Artifact]:
    """``.keras`` files of the models users write by hand, and one legacy ``.h5``."""
    made = {}
    keras.backend.clear_session()
    keras.utils.set_random_seed(1)
    seq = keras.Sequential([
        keras.Input((SIZE, SIZE, 3)), keras.layers.Conv2D(8, 3, activation="relu"),
        keras.layers.MaxPooling2D(), keras.layers.Conv2D(8, 3, activation="relu"),
        keras.layers.Flatten(), keras.layers.Dense(16, activation="relu"),
        keras.layers.Dense(CLASSES)], name="cnn")
    seq.compile(optimizer="sgd",
                loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    seq.fit(_images(np), _labels(np), batch_size=2, epochs=1, verbose=0)
    seq.save(root / "sequential.keras")
    seq.save(root / "sequential.h5")
    made["sequential"] = Artifact(root / "sequential.keras", seq, seq.name)
    made["h5"] = Artifact(root / "sequential.h5", seq)

    image = keras.Input((SIZE, SIZE, 3), name="image")
    meta = keras.Input((4,), name="meta")
    x = keras.layers.GlobalAveragePooling2D()(keras.layers.Conv2D(8, 3)(image))
    x = keras.layers.Concatenate()([x, keras.layers.Dense(8, activation="relu")(meta)])
    two = keras.Model([image, meta], keras.layers.Dense(1, name="score")(x), name="two_inputs")
    two.compile(optimizer="adam", loss="mse")
    two.save(root / "two_inputs.keras")
    made["two_inputs"] = Artifact(root / "two_inputs.keras", two, two.name)

    encoder = keras.Sequential([keras.Input((16,)), keras.layers.Dense(8, activation="relu"),
                                keras.layers.Dense(4)], name="encoder")
    head_in = keras.Input((4,))
    head = keras.Model(head_in, keras.layers.Dense(CLASSES, activation="softmax")(
        keras.layers.Dense(8, activation="relu")(head_in)), name="head")
    features = keras.Input((16,), name="features")
    nested = keras.Model(features, head(encoder(features)), name="nested")
    nested.compile(optimizer="rmsprop", loss="categorical_crossentropy")
    nested.save(root / "nested.keras")
    made["nested"] = Artifact(root / "nested.keras", nested, nested.name)
    return made


def custom(keras: Any, root: Path) -> dict[str, Artifact]:
    """A subclassed model and a functional model with a custom layer, both registered while
    saving, as their users register them; the custom layer's registration is then dropped,
    as it is in a process that does not import the user's code."""
    keras.backend.clear_session()

    @keras.saving.register_keras_serializable(package="zoo")
    class Scale(keras.layers.Layer):
        def __init__(self, factor: float = 2.0, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.factor = factor

        def call(self, x: Any) -> Any:
            return x * self.factor

        def get_config(self) -> dict[str, Any]:
            return {**super().get_config(), "factor": self.factor}

    @keras.saving.register_keras_serializable(package="zoo")
    class TwoLayer(keras.Model):
        def __init__(self, units: int = 8, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.units = units
            self.hidden = keras.layers.Dense(units, activation="relu")
            self.out = keras.layers.Dense(CLASSES)

        def call(self, x: Any) -> Any:
            return self.out(self.hidden(x))

        def get_config(self) -> dict[str, Any]:
            return {**super().get_config(), "units": self.units}

    sub = TwoLayer(name="two_layer")
    sub(keras.ops.zeros((2, 6)))
    sub.compile(optimizer="adam",
                loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    sub.save(root / "subclassed.keras")
    inputs = keras.Input((6,))
    layered = keras.Model(inputs, keras.layers.Dense(CLASSES)(Scale(name="scale")(inputs)),
                          name="with_custom")
    layered.compile(optimizer="sgd", loss="mse")
    layered.save(root / "custom_layer.keras")
    keras.saving.get_custom_objects().pop("zoo>Scale")
    return {"subclassed": Artifact(root / "subclassed.keras", sub, sub.name),
            "custom_layer": Artifact(root / "custom_layer.keras", layered)}


def exported(tf: Any, made: dict[str, Artifact], root: Path) -> dict[str, Artifact]:
    """``model.export()`` of two models, and ``tf.saved_model.save`` of one."""
    out = {}
    for name in ("mobilenet_v2", "sequential"):
        path = root / f"{name}_export"
        made[name].model.export(str(path), verbose=False)
        out[f"{name}_export"] = Artifact(path, made[name].model, made[name].model_name)
    path = root / "two_inputs_saved_model"
    tf.saved_model.save(made["two_inputs"].model, str(path))
    out["two_inputs_saved_model"] = Artifact(path, made["two_inputs"].model)
    return out


def logdirs(tf: Any, keras: Any, np: Any, root: Path) -> dict[str, Artifact]:
    """What ``fit`` logs: with Keras' ``TensorBoard`` callback (its layer graph only), with
    :class:`~graphviz_tb.keras.OpGraphCallback` (the op graph of the step), and with
    ``tf.summary.trace_on`` around ``fit`` and ``trace_export`` after it (the function ``fit``
    ran, its variables captured as numbered placeholders)."""
    from graphviz_tb.keras import OpGraphCallback

    def traced(logdir: str) -> Any:
        class TraceExport(keras.callbacks.Callback):
            def on_train_begin(self, logs: Any = None) -> None:
                tf.summary.trace_on(graph=True)

            def on_train_end(self, logs: Any = None) -> None:
                with tf.summary.create_file_writer(logdir).as_default():
                    tf.summary.trace_export("fit", step=0)
        return TraceExport()

    out = {}
    for name, callback in (("callback_logdir", keras.callbacks.TensorBoard),
                           ("opgraph_logdir", OpGraphCallback),
                           ("trace_export_logdir", traced)):
        keras.backend.clear_session()
        keras.utils.set_random_seed(1)
        model = keras.Sequential([
            keras.Input((SIZE, SIZE, 3)), keras.layers.Conv2D(8, 3, activation="relu"),
            keras.layers.Conv2D(8, 3, activation="relu"), keras.layers.GlobalAveragePooling2D(),
            keras.layers.Dense(16, activation="relu"), keras.layers.Dense(CLASSES)],
            name="logged")
        model.compile(optimizer=keras.optimizers.Adam(1e-3),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"])
        logdir = root / name
        model.fit(_images(np, 8), _labels(np, 8), batch_size=4, epochs=1, verbose=0,
                  callbacks=[callback(str(logdir))])
        out[name] = Artifact(logdir, model, model.name)
    return out
