"""Each drawn member's recorded cost: an op's own, a group's the sum over the ops below it
(the costs themselves are attached to the ops by :mod:`graphviz_tb.model.costs`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..group.tree import Group, OpNode
from ..model.costs import format_cost, format_share

if TYPE_CHECKING:
    from ..group.tree import Hierarchy, Member
    from ..model.costs import StepCosts

__all__ = ["Totals"]


class Totals:
    """Each member's cost in one metric: an op's own, a group's the sum over the ops below it.

    None means no op below has a record.  Computed on first ask and remembered, so a picture
    pays only for the boxes it draws.
    """

    def __init__(self, h: Hierarchy, step: StepCosts, metric: str) -> None:
        self.h, self.step, self.metric = h, step, metric
        self._memo: dict[Member, int | None] = {}

    def __call__(self, m: Member) -> int | None:
        if m in self._memo:
            return self._memo[m]
        if isinstance(m, OpNode):
            value = self.step.value(self.metric, m.name)
        elif isinstance(m, Group):
            parts = [v for v in map(self, m.children) if v is not None]
            value = sum(parts) if parts else None
        else:
            value = None  # a stub stands for an edge, not for ops
        self._memo[m] = value
        return value

    def label(self, m: Member) -> str | None:
        """What the box's second line adds: the member's time or bytes, and its share of the
        step's (``12.3 ms · 18 %``)."""
        value = self(m)
        if value is None:
            return None
        return f"{format_cost(self.metric, value)} · {format_share(value, self.total)}"

    @property
    def total(self) -> int:
        """The whole step's cost (of every op with a record)."""
        return self(self.h.root) or 0
