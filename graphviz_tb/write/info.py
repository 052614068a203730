"""``tbgraph info``: what an input holds, counted exactly, as text or JSON.

Counts are of NodeDefs as stored (top level apart from function bodies), so they match what
TensorFlow reports with ``len(graph_def.node)``; nothing here needs layout or structure.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from ..errors import InputError, printable
from ..group.tree import scope_path

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..model.graph import GraphModel
    from ..read.base import Discovery

__all__ = ["format_info", "graph_info", "listing_info"]

_TOP = 10
#: Names longer than this are cut in the text summary (the JSON keeps them whole).
_NAME_CHARS = 200


def _name(text: str) -> str:
    """A model string for the terminal: escaped controls (see :func:`printable`), cut."""
    return printable(text, _NAME_CHARS)


def graph_info(model: GraphModel, discovery: Discovery, selected: int,
               count_nodes: Callable[[int], int]) -> dict[str, Any]:
    """A JSON-ready summary of the discovery and of the selected graph (``model``, which is
    graph ``selected`` of the discovery).  ``count_nodes(i)`` counts graph ``i``'s top-level
    ops (parsing it when not yet parsed)."""
    nodes = model.g.nodes
    ops = Counter(d["op"] for _, d in nodes(data=True)
                  if d["role"] == "op" and d.get("function") is None)
    groups = _top_level_groups(model)
    return {
        **listing_info(discovery, count_nodes),
        "selected": selected,
        "run_metadata": [
            {"name": c.name, "origin": c.origin, "run": c.run, "tag": c.tag, "step": c.step,
             "applies": c.run == discovery.graphs[selected].run}
            for c in discovery.costs
        ],
        "kind": model.kind,
        "nodes": model.top_level_nodes,
        "functions": len(model.functions),
        "function_nodes": model.function_nodes,
        "edges": model.edge_counts(),
        "missing_nodes": sum(1 for _, r in model.g.nodes(data="role") if r == "missing"),
        "op_types": [{"op": op, "count": n} for op, n in
                     sorted(ops.items(), key=lambda kv: (-kv[1], kv[0]))[:_TOP]],
        "groups": groups[:_TOP],
        "top_level_groups": len(groups),
        "inputs": [s.__dict__ for s in model.inputs],
        "outputs": [s.__dict__ for s in model.outputs],
        "warnings": [*discovery.warnings, *model.warnings.lines()],
        "shapes": model.shapes_note(),
        "notes": list(model.notes),
    }


def listing_info(discovery: Discovery, count_nodes: Callable[[int], int]) -> dict[str, Any]:
    """What :func:`graph_info` says of the input as a whole: its path, kind and every graph in
    it, each with its node count or what refuses it.  Alone, it is the summary of an input
    none of whose graphs can be drawn."""
    return {
        "path": discovery.path,
        "source_kind": discovery.source_kind,
        "graphs": [
            {"index": i, "name": s.name, "kind": s.kind, "origin": s.origin, "run": s.run,
             "tag": s.tag, "step": s.step, **_counted(count_nodes, i)}
            for i, s in enumerate(discovery.graphs)
        ],
    }


def _counted(count_nodes: Callable[[int], int], index: int) -> dict[str, Any]:
    """``nodes`` of a listed graph, or ``nodes: None`` and the ``error`` that refuses it: a
    file's other graphs are listed whatever one of them holds."""
    try:
        return {"nodes": count_nodes(index)}
    except InputError as exc:
        return {"nodes": None, "error": str(exc)}


def _top_level_groups(model: GraphModel) -> list[dict[str, Any]]:
    """Top-level scopes with their op counts (function bodies included), largest first.

    Counted from names alone: building the hierarchy would cost seconds on big graphs.
    """
    sizes: Counter[str] = Counter()
    singles: list[str] = []
    for name, role in model.g.nodes(data="role"):
        if role != "op":
            continue
        parts = scope_path(name)
        if len(parts) > 1:
            sizes[parts[0]] += 1
        else:
            singles.append(parts[0])
    for name in singles:  # an op whose name is also a scope is drawn inside it
        if name in sizes:
            sizes[name] += 1
    calls = {n for n, c in model.g.nodes(data="calls") if c}
    return [
        {"name": name, "kind": "function" if name in calls else "scope", "ops": n}
        for name, n in sorted(sizes.items(), key=lambda kv: (-kv[1], kv[0]))
    ]


def format_info(info: dict[str, Any]) -> str:
    """The summary as the terminal text of ``tbgraph info``.

    Every string from the input goes through :func:`_name`, so the summary has exactly one
    line per item whatever the names hold.
    """
    lines = [f"{printable(info['path'])}: {info['source_kind']}"]
    if len(info["graphs"]) > 1 or "selected" not in info:
        lines.append(f"graphs found: {len(info['graphs'])} (choose with --graph N, --run, --tag)")
        for g in info["graphs"]:
            mark = "*" if g["index"] == info.get("selected") else " "
            size = f"{g['nodes']:,} nodes" if g["nodes"] is not None else \
                f"cannot be drawn: {printable(g['error'])}"
            lines.append(f" {mark} [{g['index']}] {_name(g['name'])}  ({g['kind']}, {size})")
    if "selected" not in info:  # none of the graphs can be drawn: the listing says why
        return "\n".join(lines)
    if info["run_metadata"]:
        lines.append(f"recorded costs: {len(info['run_metadata'])} (colour by them with "
                     "--color-by compute-time or memory; choose with --run-metadata TAG)")
        for c in info["run_metadata"]:
            mark = "*" if c["applies"] else " "
            kind = "profiler capture" if c["origin"] == "profile" else "run metadata"
            lines.append(f" {mark} {_name(c['name'])}  ({kind}, tag {_name(c['tag'])})")
    kind = "layers" if info["kind"] == "conceptual" else "ops"
    lines.append(f"{kind}: {info['nodes']:,}")
    if info["functions"]:
        lines.append(f"functions: {info['functions']:,} ({info['function_nodes']:,} ops inside)")
    e = info["edges"]
    lines.append(f"edges: {e['data']:,} data, {e['control']:,} control, {e['ref']:,} reference")
    if info["missing_nodes"]:
        lines.append(f"missing nodes: {info['missing_nodes']:,}")
    for label, key in (("inputs", "inputs"), ("outputs", "outputs")):
        if info[key]:
            lines.append(f"{label}: " + ", ".join(f"{_name(s['name'])}={_name(s['tensor'])}"
                                                  for s in info[key]))
    if info["op_types"]:
        lines.append("top op types: " + ", ".join(f"{_name(t['op'])} ({t['count']:,})"
                                                  for t in info["op_types"]))
    if info["groups"]:
        lines.append(f"top-level groups ({info['top_level_groups']:,}): " + ", ".join(
            f"{_name(g['name'])} ({g['ops']:,})" for g in info["groups"]))
    if info.get("shapes"):
        lines.append(f"shapes: {info['shapes']}")
    for note in info.get("notes", ()):
        lines.append(f"note: {note}")
    for w in info["warnings"]:
        lines.append(f"warning: {printable(w)}")
    return "\n".join(lines)
