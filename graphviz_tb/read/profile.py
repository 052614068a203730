"""TF2 profiler captures: op timings from ``plugins/profile/<session>/*.xplane.pb``.

TF2 records costs with its profiler, not in run metadata: Keras' TensorBoard callback with
``profile_batch``, ``tf.profiler.experimental.start``/``stop`` and ``tf.summary.trace_on(
profiler=True)`` all write an ``XSpace`` per host into a session directory under the run's
``plugins/profile/``.  Turning its raw trace events into per-op time is the profiler's own
analysis (which events are TensorFlow ops, host against device, self against total time); we
ask the package that does it for TensorBoard, ``xprof`` (the ``[profile]`` extra), for its
framework op statistics, and keep each op's self time (what it spent apart from the ops it
called, so a function call does not count its body twice), total time and count.  Captures are
listed without ``xprof``; only loading one needs it.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import GraphvizTbError, InputError
from .base import CostSource, NodeRun, StepRecord

__all__ = ["ProfilerRequired", "capture_source", "discover_captures", "read_capture"]

_XPLANE = ".xplane.pb"
#: Rows of the op statistics that are no op of the graph: idle time and tf.data iterators.
_NOT_OPS = frozenset({"IDLE", "Dataset"})
_US = 1000  # the statistics are in microseconds; NodeRun holds nanoseconds


class ProfilerRequired(GraphvizTbError):
    """Reading a TF2 profiler capture needs the ``xprof`` package."""

    def __init__(self, where: str) -> None:
        super().__init__(f"{where}: reading a TF2 profiler capture needs the xprof package: "
                         "pip install 'graphviz_tb[profile]'")


def discover_captures(root: Path, runs_of: dict[Path, str]) -> Iterator[CostSource]:
    """The profiler sessions under each run directory of a logdir (``runs_of``: run directory
    -> run name), oldest first (session directories are named by their start time)."""
    for run_dir, run in sorted(runs_of.items(), key=lambda kv: kv[1]):
        profile = run_dir / "plugins" / "profile"
        if not profile.is_dir():
            continue
        for session in sorted(p for p in profile.iterdir() if p.is_dir()):
            files = sorted(session.glob("*" + _XPLANE))
            if files:
                yield CostSource(
                    name=f"{run} · profile {session.name}", origin="profile",
                    load=functools.partial(read_capture, files), run=run, tag=session.name)


def capture_source(path: Path) -> CostSource | None:
    """A profiler capture named directly: an ``.xplane.pb`` file, or a session directory
    holding some; None when ``path`` is neither."""
    if path.is_dir():
        files = sorted(path.glob("*" + _XPLANE))
    else:
        files = [path] if path.name.endswith(_XPLANE) else []
    if not files:
        return None
    session = files[0].parent.name
    return CostSource(name=f"profile {session}", origin="profile",
                      load=lambda: read_capture(files), tag=session)


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Silence the profiler's C++ logging (it writes to file descriptor 2 directly) while it
    converts, so the terminal keeps tbgraph's own one-line messages."""
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def read_capture(files: list[Path]) -> StepRecord:
    """Per-op timings of one profiler session (every host's XSpace of it).

    Raises
    ------
    ProfilerRequired
        ``xprof`` is not installed.
    InputError
        The capture cannot be read.
    """
    where = os.fspath(files[0].parent)
    try:
        # Imported when a capture is loaded: a large optional package with a native library.
        from xprof.convert import raw_to_tool_data
    except ImportError:
        raise ProfilerRequired(where) from None
    try:
        with _quiet_stderr():
            data, _ = raw_to_tool_data.xspace_to_tool_data(
                [os.fspath(f) for f in files], "framework_op_stats", {"use_saved_result": False})
        tables = json.loads(data) if data else None
    except (OSError, ValueError, RuntimeError) as exc:
        raise InputError(f"{where}: the profiler capture cannot be read ({exc})") from None
    if not tables:
        raise InputError(f"{where}: the profiler found no op statistics in the capture")
    return StepRecord(runs=tuple(_rows(tables[0])), memory=False)


def _rows(table: dict[str, Any]) -> Iterator[NodeRun]:
    """The op rows of the framework op statistics (a Google Charts DataTable as JSON)."""
    columns = [col["id"] for col in table.get("cols", [])]
    for row in table.get("rows", []):
        cell = dict(zip(columns, (c.get("v") if c else None for c in row["c"]), strict=False))
        if cell.get("type") in _NOT_OPS or not cell.get("operation"):
            continue
        yield NodeRun(
            name=str(cell["operation"]), device=str(cell.get("host_or_device") or ""),
            wall=round(float(cell.get("total_time") or 0) * _US),
            own=round(float(cell.get("total_self_time") or 0) * _US),
            runs=int(cell.get("occurrences") or 0),
        )
