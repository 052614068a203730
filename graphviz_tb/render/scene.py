"""From a loaded graph and render options to a laid-out scene (shared by every format).

This is where ``--focus``/``--radius`` become a set of members to keep, and where the group
layouts are counted for the progress bar.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import GraphvizTbError
from ..hierarchy import Group, Hierarchy, Member, OpNode
from ..layout import Scene, compute_layout, expanded_groups

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..api import Graph
    from ..options import RenderOptions

__all__ = ["build_scene", "focus_members"]


def _ops_in(member: Member) -> list[str]:
    if isinstance(member, OpNode):
        return [member.name]
    assert isinstance(member, Group)
    return [m.name for m in member.walk() if isinstance(m, OpNode)]


def focus_members(h: Hierarchy, name: str, radius: int) -> tuple[set[Member], set[str]]:
    """Members to draw for ``--focus name --radius K``: the ops within K hops (either
    direction) of the focus, and every group containing one."""
    h.settle()  # the focus may be a scope series, and its ancestors must be final
    member = h.lookup(name)
    if member is None:
        close = sorted(n for n in h.ops if name in n)[:5]
        hint = f"; did you mean: {', '.join(close)}" if close else ""
        raise GraphvizTbError(f"--focus {name!r}: no op or group of that name{hint}")
    g = h.model.graph
    frontier = set(_ops_in(member))
    seen = set(frontier)
    for _ in range(radius):
        nxt: set[str] = set()
        for n in frontier:
            nxt.update(g.predecessors(n))
            nxt.update(g.successors(n))
        frontier = nxt - seen
        seen |= frontier
    keep: set[Member] = set()
    for n in seen:
        op = h.ops[n]
        keep.add(op)
        keep.update(op.ancestors())
    return keep, seen


def _shape_error_groups(h: Hierarchy) -> frozenset[Group]:
    """Groups holding an op where shape inference failed: opened so the failure is in view."""
    failed = [name for name in h.model.shape_error_ops() if name in h.ops]
    if failed:
        h.settle()  # their ancestors must be final
    return frozenset(group for name in failed for group in h.ops[name].ancestors())


def build_scene(graph: Graph, options: RenderOptions,
                progress: Callable[[int, int], None] | None = None) -> tuple[Hierarchy, Scene]:
    """Hierarchy, open groups and composed layout for ``options``."""
    h = graph.hierarchy(options)
    keep = focus_ops = None
    if options.focus:
        keep, focus_ops = focus_members(h, options.focus, options.radius)
    expanded = expanded_groups(h, options, focus_ops) | _shape_error_groups(h)
    total = len(expanded)
    done = [0]

    def step(n: int) -> None:
        done[0] += n
        if progress:
            progress(done[0], total)

    scene = compute_layout(h, options, expanded=expanded, keep=keep, progress=step)
    return h, scene
