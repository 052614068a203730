"""Run metadata: what each op cost when a step ran (``RunMetadata.step_stats``).

TF1's ``Session.run`` with ``RunOptions(trace_level=FULL_TRACE)`` fills a ``RunMetadata``;
``FileWriter.add_run_metadata`` logs it in an event (``Event.tagged_run_metadata``), and users
also save it, or its ``StepStats`` alone, as a file of its own.  Each ``NodeExecStats`` is one
execution of one op on one device: its times and the memory its allocators gave it.  This module
turns them into plain :class:`~.base.NodeRun` records; attaching them to the graph's ops is
:mod:`graphviz_tb.model.costs`' work.

Devices: on a GPU, TensorFlow records each op on its device and again on pseudo-devices for the
streams (``.../stream:all``, ``.../stream:3``) and copies (``.../memcpy``).  Counting them all
would count the same work twice, so as TensorBoard does by default only real devices
(``.../device:GPU:0``) are read, unless a step has nothing else.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from google.protobuf.message import DecodeError
from tensorboard.compat.proto.config_pb2 import RunMetadata
from tensorboard.compat.proto.step_stats_pb2 import StepStats

from ..errors import InputError
from ._proto import read_bytes
from .base import CostSource, NodeRun, OutputStat, StepRecord
from .dtypes import dtype_name

if TYPE_CHECKING:
    from tensorboard.compat.proto.step_stats_pb2 import NodeExecStats

__all__ = ["discover_file", "has_step_stats", "read_step_stats", "step_record"]

_REAL_DEVICE = re.compile(r"device:[^:/]+:\d+$")
_STEP_STATS = 1  # RunMetadata.step_stats, and StepStats.dev_stats: both field 1


def has_step_stats(counts: dict[int, int]) -> bool:
    """Whether a RunMetadata, from its top-level field counts, holds step stats."""
    return counts.get(_STEP_STATS, 0) > 0


def _nanos(micros: int, nanos: int) -> int:
    """A time in nanoseconds: the ``*_nanos`` field when recorded, else the microseconds."""
    return nanos if nanos else micros * 1000


def _node_run(stats: NodeExecStats, device: str) -> NodeRun:
    start = _nanos(stats.all_start_micros, stats.all_start_nanos)
    op_start = _nanos(stats.op_start_rel_micros, stats.op_start_rel_nanos)
    op_end = _nanos(stats.op_end_rel_micros, stats.op_end_rel_nanos)
    allocators = tuple((m.allocator_name, max(0, m.total_bytes), max(0, m.peak_bytes))
                       for m in stats.memory)
    outputs = tuple(
        OutputStat(
            slot=out.slot,
            dtype=dtype_name(out.tensor_description.dtype) if out.tensor_description.dtype
            else None,
            shape=tuple(d.size for d in out.tensor_description.shape.dim)
            if not out.tensor_description.shape.unknown_rank else None,
            bytes=out.tensor_description.allocation_description.requested_bytes,
        )
        for out in stats.output
    )
    memory = stats.memory_stats
    return NodeRun(
        name=stats.node_name, device=device, start=start,
        wall=max(0, _nanos(stats.all_end_rel_micros, stats.all_end_rel_nanos)),
        op=max(0, op_end - op_start),
        allocated=sum(total for _, total, _ in allocators),
        peak=max((peak for _, _, peak in allocators), default=0),
        persistent=max(0, memory.persistent_memory_size + memory.device_persistent_memory_size),
        temporary=max(0, memory.temp_memory_size + memory.device_temp_memory_size),
        allocators=allocators, outputs=outputs,
    )


def read_step_stats(step_stats: StepStats) -> StepRecord:
    """Every op execution of a step, from its real devices (see the module docstring)."""
    devices = list(step_stats.dev_stats)
    real = [d for d in devices if _REAL_DEVICE.search(d.device)]
    runs = tuple(_node_run(stats, dev.device) for dev in (real or devices)
                 for stats in dev.node_stats)
    return StepRecord(runs=runs)


def step_record(data: bytes, where: str) -> StepRecord:
    """The step stats of serialized RunMetadata ``data`` (from an event or a file)."""
    try:
        run_metadata = RunMetadata.FromString(data)
    except DecodeError:
        raise InputError(f"{where}: its RunMetadata does not decode") from None
    return read_step_stats(run_metadata.step_stats)


def _plausible(step_stats: StepStats) -> bool:
    """Real step stats: devices and op names are printable text, and some op ran."""
    names = [s.node_name for d in step_stats.dev_stats for s in d.node_stats]
    return bool(names) and all(d.device.isprintable() for d in step_stats.dev_stats) and all(
        n and n.isprintable() for n in names)


def _parse_file(data: bytes, name: str) -> tuple[str, StepStats]:
    """A file's step stats, whether it holds a RunMetadata or a StepStats.

    Both put their payload in field 1, so each is tried and the one that reads as real step
    stats wins (a RunMetadata read as StepStats has its whole payload as a "device name").
    """
    for origin, parse in (("runmetadata", lambda: RunMetadata.FromString(data).step_stats),
                          ("stepstats", lambda: StepStats.FromString(data))):
        try:
            step_stats = parse()
        except (DecodeError, RuntimeError, ValueError):
            continue
        if _plausible(step_stats):
            return origin, step_stats
    raise InputError(f"{name} is not a RunMetadata or StepStats with step stats (write one with "
                     "RunOptions(trace_level=RunOptions.FULL_TRACE))")


def discover_file(path: str | os.PathLike[str]) -> CostSource:
    """A standalone RunMetadata or StepStats file, as one set of costs.

    Raises
    ------
    InputError
        The file cannot be read, or holds no step stats.
    """
    name = os.fspath(path)
    origin, step_stats = _parse_file(read_bytes(path), name)
    record = read_step_stats(step_stats)
    label = os.path.basename(os.path.normpath(name)) or name
    return CostSource(name=label, origin=origin, load=lambda: record, tag=label)
