"""What a layout is made of: wires (drawn edges), stubs, and each open group's own layout (the
margins every layout leaves are in :mod:`graphviz_tb.style`, which the viewer shares)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..group.tree import AggEdge, Group, Member

__all__ = ["GroupLayout", "GroupLayouts", "Stub", "Wire"]


class Stub(Member):
    """A short labelled stub standing for an edge to an auxiliary node (``target``)."""

    __slots__ = ("target",)

    def __init__(self, name: str, parent: Group | None = None, depth: int = 0,
                 target: Member | None = None) -> None:
        super().__init__(name, parent, depth)
        self.target = target


@dataclass
class Wire:
    """A drawn aggregated edge: a B-spline as DOT writes it (``e,x,y`` arrow tip then points)."""

    agg: AggEdge
    points: list[tuple[float, float]]
    arrow: tuple[float, float] | None
    label: str = ""
    label_pos: tuple[float, float] | None = None
    width: float = 1.0


@dataclass
class GroupLayout:
    """One group's own layout, relative to its content's lower-left corner.

    ``pos`` holds each visible child's centre; ``wires`` the edges between children.  The HTML
    viewer receives these per group and composes them as :func:`graphviz_tb.layout.scene.compose`
    does.
    """

    width: float
    height: float
    pos: dict[Member, tuple[float, float]]
    wires: list[Wire]
    #: Children moved to the side column (see :mod:`graphviz_tb.group.auxiliary`), in column order.
    aux: list[Member] = field(default_factory=list)


@dataclass
class GroupLayouts:
    """Every open group's own layout, and the size and label lines of every member drawn."""

    layouts: dict[Group, GroupLayout]
    sizes: dict[Member, tuple[float, float]]
    lines: dict[Member, tuple[str, ...]]
