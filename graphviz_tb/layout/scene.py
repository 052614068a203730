"""Composition: every open group's own layout placed inside its parent's, as one scene.

Each open group was laid out on its own (:mod:`graphviz_tb.layout.groups`), its open children as
boxes
of the size of their own layouts.  Composing is translation only: a child's content sits inside
the box its parent's layout gave it.  The scene holds everything a writer draws, in absolute
coordinates: boxes (parents before children) and wires (edges with their splines, arrows and
labels).  The viewer composes the same per-group layouts in the page the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..group.tree import Group, Hierarchy, Member
from ..options import LayoutOptions
from ..style import PAD
from .groups import layout_groups
from .parts import GroupLayout, GroupLayouts, Wire

if TYPE_CHECKING:
    from ..picture import Picture

__all__ = ["Box", "Scene", "build_scene", "compose"]


@dataclass
class Box:
    """A drawn member: position of its centre and size, in points (y grows upwards, as in DOT)."""

    member: Member
    x: float
    y: float
    w: float
    h: float
    expanded: bool = False
    lines: tuple[str, ...] = ()
    #: Drawn in its group's side column, its edges replaced by stubs.
    aux: bool = False



@dataclass
class Scene:
    """Everything to draw, in absolute coordinates; ``boxes`` parents before children."""

    boxes: list[Box] = field(default_factory=list)
    wires: list[Wire] = field(default_factory=list)
    width: float = 0.0
    height: float = 0.0
    expanded: frozenset[Group] = frozenset()
    #: Each open group's own layout, and the size every visible member was drawn at.
    layouts: dict[Group, GroupLayout] = field(default_factory=dict)
    sizes: dict[Member, tuple[float, float]] = field(default_factory=dict)
    #: What it was laid out with: the writers label edges and the viewer lays out the same.
    options: LayoutOptions = field(default_factory=LayoutOptions)



def compose(h: Hierarchy, laid: GroupLayouts, expanded: frozenset[Group],
            options: LayoutOptions) -> Scene:
    """Place every open group's own layout inside its box in its parent's, root first, by
    translation: the content of an open group sits centred, ``PAD`` above its bottom border."""
    layouts, sizes, lines = laid.layouts, laid.sizes, laid.lines
    root = layouts[h.root]
    scene = Scene(width=root.width, height=root.height, expanded=expanded, layouts=layouts,
                  sizes=sizes, options=options)
    stack: list[tuple[Group, float, float]] = [(h.root, 0.0, 0.0)]
    while stack:
        group, ox, oy = stack.pop()
        loc = layouts[group]
        for wire in loc.wires:
            scene.wires.append(Wire(
                wire.agg, [(x + ox, y + oy) for x, y in wire.points],
                (wire.arrow[0] + ox, wire.arrow[1] + oy) if wire.arrow else None,
                wire.label,
                (wire.label_pos[0] + ox, wire.label_pos[1] + oy) if wire.label_pos else None,
                wire.width,
            ))
        aside = set(loc.aux)
        for child, (x, y) in sorted(loc.pos.items(), key=lambda kv: kv[0].name):
            w, hh = sizes[child]
            ax, ay = x + ox, y + oy
            is_open = child in expanded
            scene.boxes.append(Box(child, ax, ay, w, hh, is_open, lines[child],
                                   child in aside))
            if is_open:
                inner = layouts[child]  # type: ignore[index]
                # Content sits centred horizontally, PAD above the bottom border.
                cx = ax - inner.width / 2
                cy = ay - hh / 2 + PAD
                stack.append((child, cx, cy))  # type: ignore[arg-type]
    return scene



def build_scene(h: Hierarchy, options: LayoutOptions, picture: Picture,
                progress: Callable[[int, int], None] | None = None) -> Scene:
    """The ``picture`` (see :func:`~graphviz_tb.view.opening.choose_picture`): its open groups
    laid out, then composed.  Its notes add to each collapsed member's second line, its
    titles to an open group's frame title.

    ``progress`` is called with (group layouts done, group layouts in all).
    """
    total = len(picture.expanded)
    done = [0]

    def step(n: int) -> None:
        done[0] += n
        if progress:
            progress(done[0], total)

    laid = layout_groups(h, options, picture.expanded, keep=picture.keep, progress=step,
                         notes=picture.notes, titles=picture.titles)
    return compose(h, laid, picture.expanded, options)
