"""What one picture shows, decided once by the view stage and read by the layout and both
writers: the groups drawn open, the members kept by ``--focus``, the colouring with what it
needs (each member's recorded cost, or what changed below it in a diff), and what the boxes'
second lines and open groups' titles add.

The layout and the writers take a :class:`Picture` and never import the view stage, so no
later stage decides again what is open, what is kept or which colouring applies.  The
colourings' own arithmetic (:class:`Totals`, :class:`DiffTally`) is here, beside the value
that carries it, so the writers read it without reaching back into the view.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .group.tree import Group, OpNode
from .model.costs import format_cost, format_share

if TYPE_CHECKING:
    from .group.tree import Hierarchy, Member
    from .model.costs import StepCosts

__all__ = ["DiffTally", "Picture", "Totals"]


@dataclass(frozen=True)
class Picture:
    """One picture of a hierarchy, as the view stage chose it (see
    :func:`graphviz_tb.view.opening.choose_picture`)."""

    #: The groups drawn open (the root among them).
    expanded: frozenset[Group]
    #: With ``--focus``, the only members drawn; None draws every child of an open group.
    keep: set[Member] | None
    #: The colouring: ``structure``, ``op``, ``device``, ``dtype``, ``compute-time``,
    #: ``memory``, ``diff`` or ``none``.
    color_by: str
    #: Each member's cost, when the picture is coloured by a recorded cost.
    totals: Totals | None = None
    #: What changed below each member, when the model is a diff's or the colouring asks.
    tally: DiffTally | None = None
    #: What a collapsed box's second line adds (its cost, or its change).
    notes: Callable[[Member], str | None] | None = None
    #: What an open group's title adds (its cost).
    titles: Callable[[Member], str | None] | None = None
    #: The open group the viewer's first view shows (the model): the top of a picture is its
    #: outputs' plumbing, as inputs sit at the bottom.  None: the first view shows the top.
    lead: Group | None = None

    @property
    def diff(self) -> DiffTally | None:
        """The tally the colouring uses: set only when colouring by what changed."""
        return self.tally if self.color_by == "diff" else None


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


class DiffTally:
    """What changed below each member of a merged diff model (:mod:`graphviz_tb.model.diff`): how
    many of its ops were added, removed, changed or left unchanged (counted once a member)."""

    def __init__(self, h: Hierarchy) -> None:
        self.h = h
        self._counts: dict[Member, Counter[str]] = {}

    def __call__(self, m: Member) -> Counter[str]:
        found = self._counts.get(m)
        if found is not None:
            return found
        # Children before parents, each group the sum of its children: the groups asked about
        # nest, and walking every one's subtree would cost ops × depth.
        nodes = self.h.model.g.node_data
        order, stack = [], [m]
        while stack:
            x = stack.pop()
            if x not in self._counts:
                order.append(x)
                if isinstance(x, Group):
                    stack.extend(x.children)
        for x in reversed(order):
            counts: Counter[str] = Counter()
            if isinstance(x, Group):
                for child in x.children:
                    counts.update(self._counts[child])
            elif isinstance(x, OpNode) and x.role == "op":
                counts[nodes[x.name].get("diff", "unchanged")] = 1
            self._counts[x] = counts
        return self._counts[m]

    def changes(self, m: Member) -> int:
        """How many of its ops were added, removed or changed."""
        counts = self(m)
        return counts["added"] + counts["removed"] + counts["changed"]

    def status(self, m: Member) -> str:
        """One word for a box: what all its ops share, else ``changed`` if any changed."""
        counts = self(m)
        moved = {s for s in ("added", "removed", "changed") if counts[s]}
        if not moved:
            return "unchanged"
        if len(counts) == 1:
            return next(iter(counts))
        return "changed"

    def opening(self, m: Group) -> int:
        """How much opening this group shows of what changed: its changes, unless all its ops
        were added or all removed (a layer inserted reads best as one box saying so)."""
        return 0 if self.status(m) in ("added", "removed") else self.changes(m)

    def note(self, m: Member) -> str | None:
        """What a box's second line says of its change, briefly, for a reader of the static
        picture: ``was Relu``, ``padding SAME→VALID``, ``input 0 rewired`` for a changed op
        (``+1 more`` when there is more, in its tooltip); ``+3 −1 ~2`` for a group holding
        changes."""
        if isinstance(m, OpNode):
            what = self.h.model.g.node_data[m.name].get("diff_what") or ()
            if not what:
                return None
            more = f" +{len(what) - 1} more" if len(what) > 1 else ""
            return _brief(what[0]) + more
        counts = self(m)
        parts = [f"{sign}{counts[s]}" for sign, s in (("+", "added"), ("−", "removed"),
                                                      ("~", "changed")) if counts[s]]
        return " ".join(parts) or None


#: The phrases of a diff (:func:`graphviz_tb.model.diff`) and their brief forms.
_BRIEF = [(re.compile(r"^op: (.*) -> .*$"), r"was \1"),
          (re.compile(r"^attr ([^:]*): (.*) -> (.*)$"), r"\1 \2→\3"),
          (re.compile(r"^input (\d+): .*$"), r"input \1 rewired"),
          (re.compile(r"^control input \^.* (added|removed)$"), r"control input \1"),
          (re.compile(r"^device: .*$"), "device changed"),
          (re.compile(r"^output: .*$"), "output changed")]
#: The longest brief note (values are cut in the middle past it).
_BRIEF_MOST = 36


def _brief(what: str) -> str:
    """``op: Relu -> Tanh`` -> ``was Relu``; ``attr padding: SAME -> VALID`` ->
    ``padding SAME→VALID``; cut to :data:`_BRIEF_MOST` characters."""
    for pattern, short in _BRIEF:
        if pattern.match(what):
            what = pattern.sub(short, what)
            break
    if len(what) > _BRIEF_MOST:
        half = (_BRIEF_MOST - 1) // 2
        what = f"{what[:half]}…{what[-half:]}"
    return what
