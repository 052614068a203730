"""The replicas of a ``tf.distribute`` step, framed alike.

``MirroredStrategy.run`` traces the step once per device: the first replica under the
step's own names (``sequential_1``, ``sparse_categorical_crossentropy``), every other under
``replica_1/``, ``replica_2/`` ... (``replica_1/sequential_1``), in the forward pass and in the
gradients (``gradient_tape/replica_1``).  Drawn by name, replica 1 is a box and replica 0 is a
fan of loose parts beside it, where a reader expects siblings drawn alike.  So, in a group
holding ``replica_N`` scopes, the siblings named as a child of one of them are the first
replica, framed as ``replica_0``: a group of kind ``replica``, invented and said to be.
"""

from __future__ import annotations

import re

from .tree import Group, Hierarchy, free_name, ops_below, reparent

__all__ = ["REPLICA_KIND", "frame_first_replica"]

#: The kind of the groups made here.
REPLICA_KIND = "replica"

#: How ``tf.distribute`` names the scope of every replica but the first.
_REPLICA = re.compile(r"replica_[1-9]\d*")


def frame_first_replica(h: Hierarchy) -> None:
    """Frame the first replica in every group that holds the scopes of the others."""
    for container in [h.root, *list(h.groups.values())]:
        kids = container._children
        others = [c for c in kids if isinstance(c, Group) and _REPLICA.fullmatch(c.label)]
        if not others:
            continue
        size: dict[str, int] = {}
        for r in others:
            for m in r._children:
                size[m.label] = max(size.get(m.label, 0), ops_below(m))
        # A namesake far bigger than the replicas' is shared by them, not the first's own
        # (the optimizer, which applies every replica's gradients: ``adam``, 390 ops, beside
        # ``replica_1/adam``, 5).
        first = [c for c in kids if c.label in size and c not in others
                 and ops_below(c) <= 2 * size[c.label]]
        if len(first) < 2:
            continue
        base = f"{container.name}/replica_0" if container.name else "replica_0"
        group = Group(free_name(h, base), h, container, container.depth + 1, kind=REPLICA_KIND)
        h.groups[group.name] = group
        moved = {id(c) for c in first}
        reparent(first, group)
        container._children = [c for c in kids if id(c) not in moved] + [group]
