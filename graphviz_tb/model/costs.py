"""What each op cost when it ran, attached to the graph's ops.

The readers give plain records (:class:`~graphviz_tb.read.base.NodeRun`: one per execution
from run metadata, one per op from a profiler capture).  Here they meet the model:

* **By name.**  A record names the op it ran; most name an op of the graph exactly.
* **Function bodies.**  A function that ran on its own (not inlined by Grappler) records its body
  ops by their names inside the function (``inner/MatMul``), while the model draws them opened
  under the call (``PartitionedCall/inner/MatMul``, see :mod:`graphviz_tb.model.calls`).  A body op
  ran while its call did, so among the calls whose body has an op of that name, the one whose
  execution encloses the record's start takes it; a body run by a ``While`` many times gets
  every iteration.  A call op's own time is then what its body did not spend, so a group's sum
  does not count the body twice.  (Profiler records carry each op's self time already.)
* **By suffix.**  The profiler names ops from the outermost call it saw
  (``StatefulPartitionedCall/seq/dense/Relu``), while a traced graph merged from several calls
  puts each under ``graph_<i>/``: a record that names no op exactly goes to the one op whose name
  ends with ``/`` and its name, if there is exactly one.

Records that name no op of the graph (TensorFlow's own ``_SOURCE``, ``_arg_*`` and
``*_RetVal`` nodes, ops Grappler made) are counted, not guessed at.

A group's cost is the sum over the ops below it (:class:`~graphviz_tb.picture.Totals`), so a
collapsed scope shows its total and its share of the step's.  Pictures colour on a log scale
(:class:`Scale`), a step every factor of
√10 below the most expensive box, so a few hot ops do not wash every other box out, and ops
ten times apart are two steps apart.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..style import SCALE_STEPS

if TYPE_CHECKING:
    from ..read.base import CostSource, NodeRun, OutputStat, StepRecord
    from .graph import GraphModel

__all__ = [
    "CostSet",
    "OpCost",
    "Scale",
    "StepCosts",
    "attach",
    "format_bytes",
    "format_cost",
    "format_share",
    "format_time",
    "metric_of",
]



@dataclass
class OpCost:
    """One op's cost in one step, every execution of it summed (times in ns, sizes in bytes).

    ``time`` is what colours and sums: the op's whole time (``wall``) for most ops; for a
    call whose body ran, its time apart from its body's ops; for a profiler record, its self
    time.  ``start`` is its first start after the step's first op started (None for profiler
    records, which have no clock of their own).
    """

    name: str
    time: int = 0
    wall: int = 0
    op: int = 0
    start: int | None = None
    runs: int = 0
    allocated: int = 0
    peak: int = 0
    persistent: int = 0
    temporary: int = 0
    devices: list[str] = field(default_factory=list)
    allocators: dict[str, tuple[int, int]] = field(default_factory=dict)
    outputs: list[OutputStat] = field(default_factory=list)
    body: int = 0  # time of the ops of its opened function bodies, for a call

    def add(self, run: NodeRun, step_start: int | None) -> None:
        self.wall += run.wall
        self.op += run.op
        self.time += run.wall if run.own is None else run.own
        self.runs += run.runs
        self.allocated += run.allocated
        self.peak = max(self.peak, run.peak)
        self.persistent += run.persistent
        self.temporary += run.temporary
        if run.start is not None and step_start is not None:
            start = run.start - step_start
            self.start = start if self.start is None else min(self.start, start)
        if run.device and run.device not in self.devices:
            self.devices.append(run.device)
        for name, total, peak in run.allocators:
            old_total, old_peak = self.allocators.get(name, (0, 0))
            self.allocators[name] = (old_total + total, max(old_peak, peak))
        if not self.outputs:  # every execution of an op makes outputs of the same kinds
            self.outputs = list(run.outputs)


@dataclass
class StepCosts:
    """One step's costs attached to a graph's ops: what ``--color-by`` draws.

    ``memory`` says whether the records hold memory at all (profiler op statistics do not);
    ``unmatched`` counts the records naming no op of the graph, ``records`` all of them.
    """

    source: CostSource
    ops: dict[str, OpCost]
    memory: bool
    records: int
    unmatched: int

    @property
    def name(self) -> str:
        return self.source.name

    def value(self, metric: str, name: str) -> int | None:
        """An op's time (ns) or allocated bytes, or None when it has no record."""
        cost = self.ops.get(name)
        if cost is None or (metric == "memory" and not self.memory):
            return None
        return cost.time if metric == "time" else cost.allocated


@dataclass(frozen=True)
class CostSet:
    """The recorded steps that apply to one graph (its run's), and the one chosen to draw."""

    steps: tuple[StepCosts, ...]
    chosen: int = 0

    @property
    def current(self) -> StepCosts:
        return self.steps[self.chosen]


def metric_of(color_by: str) -> str | None:
    """``time`` for ``compute-time``, ``memory`` for ``memory``, None for the other modes."""
    return {"compute-time": "time", "memory": "memory"}.get(color_by)


# --------------------------------------------------------------------------- attaching


class _Matcher:
    """Finds the graph op a record names (see the module docstring), building its indexes only
    when a record first needs them."""

    def __init__(self, model: GraphModel) -> None:
        self.model = model
        self.windows: dict[str, list[tuple[int, int]]] = defaultdict(list)
        self._bodies: dict[str, list[tuple[str, str]]] | None = None
        self._suffixes: dict[str, list[str]] | None = None

    def bodies(self) -> dict[str, list[tuple[str, str]]]:
        """Name inside its function -> (op as drawn, the call that runs it), for every op of an
        opened function body."""
        if self._bodies is None:
            self._bodies = defaultdict(list)
            groups = self.model.function_groups
            graph = self.model.g
            for name, data in graph.nodes(data=True):
                if data.get("function") is None:
                    continue
                prefix = name.rpartition("/")[0]
                while prefix and prefix not in groups:
                    prefix = prefix.rpartition("/")[0]
                if prefix:
                    call = prefix if prefix in graph else prefix.rpartition("/")[0]
                    self._bodies[name[len(prefix) + 1:]].append((name, call))
        return self._bodies

    def suffixes(self) -> dict[str, list[str]]:
        """Every ``/``-ended tail of every op's name -> the ops with that tail."""
        if self._suffixes is None:
            self._suffixes = defaultdict(list)
            for name in self.model.g:
                cut = name.find("/")
                while cut >= 0:
                    self._suffixes[name[cut + 1:]].append(name)
                    cut = name.find("/", cut + 1)
        return self._suffixes

    def find(self, run: NodeRun) -> str | None:
        graph = self.model.g
        if run.name in graph and graph.nodes[run.name]["role"] != "missing":
            return run.name
        candidates = self.bodies().get(run.name, ())
        if candidates:
            if run.start is not None:
                for name, call in candidates:
                    if any(a <= run.start <= b for a, b in self.windows.get(call, ())):
                        return name
            if len(candidates) == 1:
                return candidates[0][0]
        tails = self.suffixes().get(run.name, ())
        return tails[0] if len(tails) == 1 else None


def attach(model: GraphModel, source: CostSource, record: StepRecord) -> StepCosts:
    """Attach one step's records to the ops of ``model`` (see the module docstring)."""
    matcher = _Matcher(model)
    starts = [run.start for run in record.runs if run.start is not None]
    step_start = min(starts) if starts else None
    ops: dict[str, OpCost] = {}
    unmatched = 0
    # In start order, a call is placed before the body ops it encloses.
    ordered = sorted(record.runs, key=lambda r: (r.start if r.start is not None else 0))
    for run in ordered:
        name = matcher.find(run)
        if name is None:
            unmatched += 1
            continue
        ops.setdefault(name, OpCost(name)).add(run, step_start)
        if run.start is not None:
            matcher.windows[name].append((run.start, run.start + run.wall))
    _split_calls(model, ops, matcher)
    return StepCosts(source=source, ops=ops, memory=record.memory, records=len(record.runs),
                     unmatched=unmatched)


def _split_calls(model: GraphModel, ops: dict[str, OpCost], matcher: _Matcher) -> None:
    """A call whose body ops were recorded keeps only the time its body did not spend.

    Only step stats need this: a profiler's record already holds the self time (``time`` is
    then set from it, and ``wall`` differs from it).
    """
    if not model.function_groups:
        return
    for name, call in (pair for pairs in matcher.bodies().values() for pair in pairs):
        cost, caller = ops.get(name), ops.get(call)
        if cost is not None and caller is not None:
            caller.body += cost.wall
    for cost in ops.values():
        if cost.body and cost.time == cost.wall:
            cost.time = max(0, cost.wall - cost.body)


# --------------------------------------------------------------------------- per group


class Scale:
    """A sequential colour scale over the costs of the boxes drawn, by value on a log scale.

    The most expensive box takes the hottest of :data:`~graphviz_tb.style.SCALE_STEPS` steps, and
    each step below covers a factor of √10: an op ten times cheaper than another
    is two steps cooler, whatever else is drawn, and a value over 10^3 below the top shares
    the coolest step: a colour says how costly a box is, which a rank would not (7.65 µs
    could look like 94.5 µs).  The viewer
    (``viewer/src/colors.js``) computes the same steps.
    """

    def __init__(self, values: list[int]) -> None:
        self.values = sorted(values)
        self.top = self.values[-1] if self.values else 0

    def step(self, value: int) -> int:
        if value >= self.top:
            return SCALE_STEPS - 1
        if value <= 0:
            return 0
        below = math.floor(2 * math.log10(self.top / value) + 1e-9)
        return max(0, SCALE_STEPS - 1 - below)

    def ranges(self) -> list[tuple[int, int, int]]:
        """Each step that holds a value: (step, smallest value, largest value), coolest first."""
        out: dict[int, list[int]] = {}
        for value in self.values:
            out.setdefault(self.step(value), []).append(value)
        return [(k, vs[0], vs[-1]) for k, vs in sorted(out.items())]


def format_share(part: int, whole: int) -> str:
    """``18 %``, ``2.5 %``, ``<0.1 %``: a box's share of the step's total."""
    if whole <= 0:
        return "–"
    share = 100.0 * part / whole
    if share >= 10 or share == 0:
        return f"{share:.0f} %"
    return f"{share:.1f} %" if share >= 0.1 else "<0.1 %"


# --------------------------------------------------------------------------- formatting


def _three_digits(value: float, units: tuple[str, ...], base: float) -> str:
    """``value`` in the largest unit that keeps it at least 1, to three significant digits."""
    unit = 0
    while unit + 1 < len(units) and float(f"{value:.3g}") >= base:
        value /= base
        unit += 1
    return f"{float(f'{value:.3g}'):g} {units[unit]}"


def format_time(ns: int) -> str:
    """``850 ns``, ``12.5 µs``, ``1.23 ms``, ``2.5 s``."""
    return _three_digits(float(ns), ("ns", "µs", "ms", "s"), 1000.0)


def format_bytes(size: int) -> str:
    """``512 B``, ``1.5 KiB``, ``98 MiB``."""
    return _three_digits(float(size), ("B", "KiB", "MiB", "GiB", "TiB"), 1024.0)


def format_cost(metric: str, value: int) -> str:
    return format_time(value) if metric == "time" else format_bytes(value)
