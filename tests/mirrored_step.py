"""Write ``mirrored.pb``: a training step run by ``tf.distribute.MirroredStrategy`` on two
replicas, traced as users trace it, into the folder given as the only argument.

Its own process: the CPU is split into two logical devices before TensorFlow starts, which a
process that has already used TensorFlow cannot do.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras
import tensorflow as tf


def main(out: Path) -> None:
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    keras.utils.set_random_seed(0)
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with strategy.scope():
        model = keras.Sequential([keras.Input((8, 8, 3)),
                                  keras.layers.Conv2D(4, 3, activation="relu"),
                                  keras.layers.Flatten(), keras.layers.Dense(10)])
        optimizer = keras.optimizers.Adam()
        optimizer.build(model.trainable_variables)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

    @tf.function
    def train_step(x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
        def step(x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
            with tf.GradientTape() as tape:
                value = tf.nn.compute_average_loss(loss(y, model(x, training=True)),
                                                   global_batch_size=8)
            grads = tape.gradient(value, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
            return value

        per_replica = strategy.run(step, args=(x, y))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)

    graph = train_step.get_concrete_function(tf.TensorSpec([8, 8, 8, 3]),
                                             tf.TensorSpec([8], tf.int32)).graph
    out.mkdir(parents=True, exist_ok=True)
    (out / "mirrored.pb").write_bytes(graph.as_graph_def().SerializeToString())


if __name__ == "__main__":
    main(Path(sys.argv[1]))
