"""Auxiliary nodes: high-degree children moved aside so the main structure shows.

Nodes wired to almost everything (``init``, ``save``, summaries, ``global_step``) draw dozens
of long edges across a picture.  As TensorBoard does, each open group's children are tested
with a quartile rule on their degree; outliers go to a side column, and each of their edges is
replaced by a short stub at the other end, labelled with the auxiliary node's name, so the
picture still says where the edge leads.  ``--no-aux`` keeps everything in place.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .aside import AUX_IQR_FACTOR, AUX_MIN_CHILDREN, AUX_MIN_DEGREE, BOOKKEEPING_OPS
from .training import is_bookkeeping
from .tree import Group, OpNode

if TYPE_CHECKING:
    from .tree import AggEdge, Member

__all__ = ["auxiliary_children", "is_bookkeeping"]

_BOOKKEEPING_OPS = frozenset(BOOKKEEPING_OPS)


def _bookkeeping(m: Member) -> bool:
    if isinstance(m, OpNode):
        return m.op in _BOOKKEEPING_OPS or (m.op != "Merge" and is_bookkeeping(m.label))
    return is_bookkeeping(m.label)


def _quartiles(values: list[int]) -> tuple[float, float]:
    ordered = sorted(values)
    n = len(ordered)
    return ordered[n // 4], ordered[(3 * n) // 4]


def auxiliary_children(group: Group, children: list[Member],
                       edges: list[AggEdge]) -> set[Member]:
    """The children of ``group`` to draw in its side column.

    An op is auxiliary when its number of neighbours is an outlier (above ``Q3 + 3 × IQR``
    of its siblings', and at least 4).  Any child, op or group, is auxiliary when its name is
    conventional for bookkeeping (``init``, ``save``, ``summaries`` ...) and it has at least
    two neighbours.  A group is never moved for its degree alone: a large block wired to
    everything is usually the model itself.  Function arguments and results stay in place,
    and so does the call op of an opened call: it is the body's entry, feeding each argument
    with one of its inputs, and a call with many inputs is an outlier by degree.  Never more
    than a quarter of the children move, so small groups keep their shape.
    """
    if len(children) < AUX_MIN_CHILDREN:
        return set()
    neighbours: dict[Member, set[Member]] = {c: set() for c in children}
    for agg in edges:
        if agg.src is not agg.dst:
            neighbours[agg.src].add(agg.dst)
            neighbours[agg.dst].add(agg.src)
    degree = {c: len(ns) for c, ns in neighbours.items()}
    q1, q3 = _quartiles(list(degree.values()))
    bound = max(q3 + AUX_IQR_FACTOR * max(q3 - q1, 1.0), AUX_MIN_DEGREE)
    entry = group.name if group.kind == "function" else None
    chosen = [c for c in children
              if getattr(c, "role", "op") == "op" and c.name != entry and (
                  (degree[c] > bound and not isinstance(c, Group))
                  or (_bookkeeping(c) and degree[c] >= 2))]
    chosen.sort(key=lambda c: (-degree[c], c.name))
    return set(chosen[: max(1, len(children) // 4)])
