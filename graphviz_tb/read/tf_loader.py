"""TensorFlow, imported only when a feature needs it, and quietly.

The core never needs TensorFlow: it reads protobufs with TensorBoard's copies of the protos.
Tracing live objects and Keras files, and TensorFlow's own shape inference, do; they import it
through :func:`import_tensorflow`, the one place that does.  TensorFlow's C++ runtime logs
start-up lines to stderr (``oneDNN custom operations are on``, ``cpu_feature_guard``, ``All log
messages before absl::InitializeLog()``) that mean nothing to a reader of a picture and look
like errors, and its Python side logs through ``absl``.  The C++ side reads its log level from
the environment once, at import, so it is set before: to errors only, unless the user chose a
level.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sys
import threading
from collections.abc import Iterator
from typing import Any

from ..errors import TensorFlowRequired

__all__ = ["import_keras", "import_tensorflow"]

#: TensorFlow's C++ log level: 3 keeps even its errors off stderr (ours say what failed).
_QUIET = {"TF_CPP_MIN_LOG_LEVEL": "3"}
#: Start-up lines TensorFlow writes to stderr whatever that level says: TensorFlow 2.21 with
#: protobuf 7 logs them through absl before absl reads any setting.
_START_UP = re.compile(r"All log messages before absl::InitializeLog|oneDNN custom operations "
                       r"are on|cpu_feature_guard|This TensorFlow binary is optimized")


@contextlib.contextmanager
def _start_up_lines_dropped() -> Iterator[None]:
    """Pass on what the process writes to stderr while TensorFlow starts (the file descriptor:
    the C++ runtime writes there, not to ``sys.stderr``) but its start-up lines, line by line
    as it comes, so a real error is seen even if the start-up then kills the process."""
    sys.stderr.flush()
    read_end, write_end = os.pipe()
    saved = os.dup(2)
    os.dup2(write_end, 2)
    os.close(write_end)
    forward = threading.Thread(target=_forward_lines, args=(read_end, saved), daemon=True)
    forward.start()
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)  # the pipe's last writer gone: the thread reads its end and stops
        forward.join(timeout=5)
        # A process TensorFlow started with the pipe as its stderr keeps it open: the thread
        # then keeps both ends, and is not waited on.
        if not forward.is_alive():
            os.close(read_end)
            os.close(saved)


def _forward_lines(read_end: int, out: int) -> None:
    """Copy the pipe to ``out`` line by line, leaving out TensorFlow's start-up lines."""
    pending = b""
    while chunk := os.read(read_end, 65536):
        *lines, pending = (pending + chunk).split(b"\n")
        kept = b"".join(line + b"\n" for line in lines
                        if not _START_UP.search(line.decode("utf-8", "replace")))
        _write_all(out, kept)
    if not _START_UP.search(pending.decode("utf-8", "replace")):
        _write_all(out, pending)


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data):]


def import_tensorflow(feature: str) -> Any:
    """The ``tensorflow`` module, its start-up logs silenced.

    Raises
    ------
    TensorFlowRequired
        TensorFlow is not installed; the message names ``feature``.
    """
    chosen = any(key in os.environ for key in _QUIET)
    for key, value in _QUIET.items():
        os.environ.setdefault(key, value)
    try:
        with contextlib.nullcontext() if chosen else _start_up_lines_dropped():
            import tensorflow as tf  # imported here only: the core never needs it
    except ImportError:
        raise TensorFlowRequired(feature) from None
    for name in ("tensorflow", "absl", "keras"):
        logging.getLogger(name).setLevel(logging.ERROR)
    return tf


def import_keras(feature: str) -> Any:
    """The ``keras`` module that runs on the TensorFlow :func:`import_tensorflow` gives."""
    import_tensorflow(feature)
    import keras  # imported here: it pulls in TensorFlow

    return keras
