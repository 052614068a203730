"""Shapes for the terminal: the op table of ``tbgraph shapes`` and the trees of ``tbgraph trace``.

A user chasing a mismatch reads shapes along a path: what went into an op and what came out,
then where each input came from.  The table lists ops in dataflow order with their input and
output shapes; the trace walks a node's inputs (or outputs) as an indented tree, one line per
edge with the tensor it carries, the terminal twin of the viewer's trace-input highlighting.
Both read the :class:`~graphviz_tb.model.graph.GraphModel` only, so they work without TensorFlow on
whatever shapes the file (or an earlier :func:`graphviz_tb.model.inference.infer_shapes`) supplied.
"""

from __future__ import annotations

import fnmatch
import heapq
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import GraphvizTbError, terminal_line
from ..model.graph import CONTROL
from ..model.inference import InputEdge, input_edges
from ..model.shapes import TensorInfo, format_shape

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..model.graph import GraphModel
    from ..model.inference import ShapeFailure, ShapeReport

__all__ = [
    "ShapeRow",
    "failure_json",
    "failure_lines",
    "resolve_node",
    "row_json",
    "shape_rows",
    "shape_text",
    "table_lines",
    "trace_lines",
]

_ERROR_MARK = "✗ shape error"


def shape_text(info: TensorInfo | None) -> str:
    """``float32 ?×784``; an undescribed shape reads as ``*`` (rank unknown), like TensorFlow's
    own unknown-rank shapes, since the user learns the same from both."""
    if info is None or not info.known_shape:
        return f"{info.dtype} *" if info is not None and info.dtype else "*"
    return format_shape(info, dtype=True)


def _dims_json(info: TensorInfo | None) -> list[int | None] | None:
    if info is None or not info.known_shape or info.shape is None:
        return None
    return list(info.shape)


@dataclass(frozen=True)
class ShapeRow:
    """One op of the table: its inputs (data and reference, in slot order) and outputs."""

    name: str
    op: str
    function: str | None
    inputs: tuple[InputEdge, ...]
    outputs: tuple[TensorInfo, ...]
    error: str | None

    @property
    def changes(self) -> bool:
        """Rank changes between the first input and an output, or some dimension is unknown."""
        if self.error:
            return True
        if any(not o.known_shape or o.shape is None or None in o.shape for o in self.outputs):
            return True
        first = next((e.tensor for e in self.inputs), None)
        if first is None or not first.known_shape or first.shape is None:
            return False
        return any(len(o.shape or ()) != len(first.shape) for o in self.outputs)


def _dataflow_order(model: GraphModel) -> list[str]:
    """Ops so that producers come before consumers (ignoring loop back edges), ties in file
    order, so a table reads from the inputs down."""
    g = model.g
    index = {name: i for i, name in enumerate(g)}
    pending = {name: 0 for name in g}
    for _, v, _, d in model.iter_edges():
        if not d["back"]:
            pending[v] += 1
    ready = [(index[n], n) for n, count in pending.items() if count == 0]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        _, name = heapq.heappop(ready)
        order.append(name)
        for _, v, d in g.out_edges(name, data=True):
            if not d["back"]:
                pending[v] -= 1
                if pending[v] == 0:
                    heapq.heappush(ready, (index[v], v))
    placed = set(order)
    order.extend(n for n in g if n not in placed)
    return order


def _matches(name: str, patterns: Iterable[str]) -> bool:
    """A glob on the full name; a pattern without wildcards also takes the scope it names."""
    for pattern in patterns:
        if fnmatch.fnmatchcase(name, pattern):
            return True
        if not any(c in pattern for c in "*?[") and name.startswith(pattern.rstrip("/") + "/"):
            return True
    return False


def shape_rows(model: GraphModel, *, patterns: Iterable[str] = (),
               changes: bool = False) -> list[ShapeRow]:
    """The table's rows in dataflow order, filtered by name globs and ``--changes``."""
    patterns = tuple(patterns)
    rows = []
    g = model.g
    for name in _dataflow_order(model):
        data = g.nodes[name]
        if data["role"] == "missing" or (patterns and not _matches(name, patterns)):
            continue
        row = ShapeRow(
            name, data["op"], data.get("function"),
            tuple(e for e in input_edges(model, name) if e.kind != CONTROL),
            tuple(model.op_outputs(name)), data.get("shape_error"),
        )
        if not changes or row.changes:
            rows.append(row)
    return rows


def table_lines(rows: list[ShapeRow]) -> list[str]:
    """Aligned columns: op name, op type, input shapes, output shapes (names and types as the
    terminal may show them: see :func:`~graphviz_tb.errors.terminal_line`)."""
    header = ("OP", "TYPE", "INPUTS", "OUTPUTS")
    cells = [
        (terminal_line(r.name), terminal_line(r.op),
         ", ".join(shape_text(e.tensor) for e in r.inputs) or "-",
         _ERROR_MARK if r.error else ", ".join(shape_text(o) for o in r.outputs) or "-")
        for r in rows
    ]
    widths = [min(max([len(header[i])] + [len(c[i]) for c in cells]), cap)
              for i, cap in enumerate((60, 24, 40))]
    lines = []
    for cell in (header, *cells):
        padded = [text.ljust(width) for text, width in zip(cell, widths, strict=False)]
        lines.append("  ".join([*padded, cell[3]]).rstrip())
    return lines


def row_json(row: ShapeRow) -> dict[str, Any]:
    """A row as JSON: shapes as lists (None for unknown dims, None for unknown rank)."""
    return {
        "name": row.name,
        "op": row.op,
        "function": row.function,
        "inputs": [{"slot": e.slot, "node": e.src, "output": e.src_output,
                    "dtype": e.tensor.dtype if e.tensor else None,
                    "shape": _dims_json(e.tensor), "text": shape_text(e.tensor)}
                   for e in row.inputs],
        "outputs": [{"dtype": o.dtype, "shape": _dims_json(o), "text": shape_text(o)}
                    for o in row.outputs],
        "shape_error": row.error,
    }


def resolve_node(model: GraphModel, name: str) -> str:
    """The op a user named: exactly, or as a tensor ``op:N``; otherwise a helpful error."""
    if name in model.g:
        return name
    base, _, index = name.rpartition(":")
    if index.isdigit() and base in model.g:
        return base
    inside = sorted(n for n in model.g if n.startswith(name.rstrip("/") + "/"))
    if inside:
        hint = f"{name!r} is a group; its ops include: {', '.join(inside[:5])}"
    else:
        close = sorted(n for n in model.g if name.lower() in n.lower())[:5]
        hint = f"no op named {name!r}" + (f"; did you mean: {', '.join(close)}" if close else "")
    raise GraphvizTbError(hint)


def _node_text(model: GraphModel, name: str) -> str:
    data = model.g.nodes[name]
    text = f"{name} ({data['op']})"
    if data.get("shape_error"):
        text += f"  {_ERROR_MARK}"
    return text


def _input_steps(model: GraphModel, name: str) -> list[tuple[str, str]]:
    steps = []
    for e in input_edges(model, name):
        if e.kind == CONTROL:
            steps.append((f"^control ← {_node_text(model, e.src)}", e.src))
            continue
        out = f":{e.src_output}" if e.src_output else ""
        steps.append((f"[{e.slot}] {shape_text(e.tensor)} ← {_node_text(model, e.src)}{out}",
                      e.src))
    return steps


def _output_steps(model: GraphModel, name: str) -> list[tuple[str, str]]:
    edges = sorted(model.g.out_edges(name, keys=True, data=True),
                   key=lambda t: (t[3]["kind"] == CONTROL, t[3]["src_output"], t[1], t[2]))
    steps = []
    for _, v, k, d in edges:
        if d["kind"] == CONTROL:
            steps.append((f"^control → {_node_text(model, v)}", v))
            continue
        tensor = model.edge_tensor(name, v, k)
        steps.append((f"out {d['src_output']} {shape_text(tensor)} → {_node_text(model, v)} "
                      f"[input {d['dst_input']}]", v))
    return steps


def trace_lines(model: GraphModel, name: str, *, depth: int = 5,
                outputs: bool = False) -> list[str]:
    """The chain of a node's inputs (or outputs) as an indented tree.

    Each line is one edge with the tensor it carries; control edges are marked ``^control``.
    An op already expanded is not expanded again, which keeps the tree no longer than the
    graph; ``depth`` limits the levels (0 = no limit) and ``…`` marks where it cut.  Lines are
    made safe for the terminal (see :func:`~graphviz_tb.errors.terminal_line`).
    """
    outs = ", ".join(shape_text(o) for o in model.op_outputs(name)) or "no outputs"
    lines = [f"{_node_text(model, name)} → {outs}"]
    steps = _output_steps if outputs else _input_steps
    seen = {name}
    # An explicit stack (text, node, prefix, last, level): graphs are deeper than Python's
    # recursion limit allows.
    stack = [(text, node, "", i == 0, 1)
             for i, (text, node) in enumerate(reversed(steps(model, name)))]
    while stack:
        text, node, prefix, last, level = stack.pop()
        children = steps(model, node)
        suffix = ""
        if children and node in seen:
            suffix = "  (expanded above)"
        elif children and depth and level >= depth:
            suffix = "  …"
        lines.append(f"{prefix}{'└─ ' if last else '├─ '}{text}{suffix}")
        if suffix or not children:
            continue
        seen.add(node)
        child_prefix = prefix + ("   " if last else "│  ")
        stack.extend((t, n, child_prefix, i == 0, level + 1)
                     for i, (t, n) in enumerate(reversed(children)))
    return [terminal_line(line) for line in lines]


def failure_lines(model: GraphModel, report: ShapeReport, *, depth: int = 4) -> list[str]:
    """Where inference broke: the op, its input shapes, TensorFlow's message, the input chain
    (lines safe for the terminal)."""
    if report.ok:
        return []
    first: ShapeFailure = report.failures[0]
    where = f" in function {first.function}" if first.function else ""
    lines = [f"shape inference failed at {first.node} ({first.op}){where}"]
    for pin in report.pins:
        before = shape_text(TensorInfo(shape=pin.before, known_shape=True))
        after = shape_text(TensorInfo(shape=pin.after, known_shape=True))
        lines.append(f"  pinned input: {pin.node}  {before} → {after}")
    lines.append("  input shapes:")
    for e in first.inputs:
        if e.kind != CONTROL:
            lines.append(f"    [{e.slot}] {shape_text(e.tensor)}  from {e.src}"
                         + (f":{e.src_output}" if e.src_output else ""))
    lines.append(f"  TensorFlow: {first.message}")
    lines = [terminal_line(line) for line in lines]
    lines.append("  how the inputs get there:")
    lines.extend("    " + line for line in trace_lines(model, first.node, depth=depth))
    others = report.failures[1:]
    if others:
        lines.append(terminal_line(
            f"  {len(others)} more op(s) failed independently: "
            + ", ".join(f.node for f in others[:5]) + (" …" if len(others) > 5 else "")))
    return lines


def failure_json(report: ShapeReport) -> list[dict[str, Any]]:
    """Each op where shape inference failed, its message and the shapes it was given: the
    JSON of ``tbgraph shapes --json``'s failures."""
    return [{"node": f.node, "op": f.op, "function": f.function, "message": f.message,
             "inputs": [{"slot": e.slot, "node": e.src, "output": e.src_output,
                         "kind": e.kind, "text": shape_text(e.tensor)} for e in f.inputs]}
            for f in report.failures]
