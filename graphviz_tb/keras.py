"""A Keras callback that gives Keras 3 users their training graph in TensorBoard back.

Keras 3's ``TensorBoard(write_graph=True)`` writes only the layer graph: TensorBoard's Graphs
dashboard, and tbgraph, had no op graph of what ``fit`` runs.  :class:`OpGraphCallback` writes
it: once the first training batch has run, it takes the function ``fit`` traced for it
(Keras' ``multi_step_on_iterator``, which calls ``one_step_on_data``), names each captured
variable after the variable's path, and writes the graph into ``log_dir`` as TensorBoard's
graph event, as ``tf.summary.graph`` does.  Both TensorBoard's Graphs dashboard and
``tbgraph render LOG_DIR`` then draw it.

>>> from graphviz_tb.keras import OpGraphCallback               # doctest: +SKIP
>>> model.fit(x, y, callbacks=[OpGraphCallback("logs/run1")])    # doctest: +SKIP

Importing this module imports Keras (and so TensorFlow); ``import graphviz_tb`` does not.
"""

from __future__ import annotations

import os
from typing import Any

from .read.keras_step import fit_function, step_graph, trace_step
from .read.tf_loader import import_keras, import_tensorflow

__all__ = ["OpGraphCallback"]

_keras = import_keras("graphviz_tb.keras.OpGraphCallback")


class OpGraphCallback(_keras.callbacks.Callback):  # type: ignore[misc, name-defined]
    """Write the op graph of the training step ``fit`` runs into ``log_dir``, once.

    Parameters
    ----------
    log_dir:
        The directory of TensorBoard event files to write into (created if missing); use the
        log directory of the run, as for Keras' own ``TensorBoard`` callback.
    """

    def __init__(self, log_dir: str | os.PathLike[str]) -> None:
        super().__init__()
        self.log_dir = os.fspath(log_dir)
        self.written = False

    def on_train_batch_end(self, batch: int, logs: dict[str, Any] | None = None) -> None:
        if self.written:
            return
        self.written = True
        model = self.model
        concrete = fit_function(model)
        graph_def = step_graph(model, concrete) if concrete is not None \
            else trace_step(model, "train")[0]  # Keras ran the step eagerly (run_eagerly)
        tf = import_tensorflow("graphviz_tb.keras.OpGraphCallback")
        writer = tf.summary.create_file_writer(self.log_dir)
        with writer.as_default():
            tf.summary.graph(tf.compat.v1.GraphDef.FromString(graph_def.SerializeToString()))
        writer.close()
