"""The optimizer of a TF2 training step, opened into the mirror of the model it updates.

Keras' optimizers trace one chain of ops per variable under flat numbered names (``adam/Mul_3``,
``adam/Cast_5``, ``adam/AssignSubVariableOp_1``): 40 ops a variable, 40,000 for NASNet-Large,
with nothing in their names to say which variable they update.  Opened, the optimizer was a
stack of sections of 200 such names.  The dataflow says it: each chain ends in an op that
writes a variable of the model (``AssignSubVariableOp``, ``AssignAddVariableOp``,
``ResourceApply*``), and that variable was read, and so named, by its layer
(``resnet50_1/conv1_conv_1/convolution/ReadVariableOp/resource``).

So every op below the optimizer that serves the updates of one layer only goes into a group
named after that layer, nested as the model's scopes are (``adam/resnet50_1/conv1_conv_1``),
the way ``gradient_tape`` mirrors the model.  What serves several layers (the step counter,
the learning rate) stays at the optimizer's top.  An op serves the layers whose writes it
reaches through data edges; one that reaches none (the write of a slot variable, ``m`` or
``v``) serves the layer of its inputs, and what feeds only such ops serves theirs (the
square of a gradient, on its way into ``v``).  The three passes are walks of the optimizer's
ops in dataflow order, so the cost is linear in its ops and edges.  The groups are of kind
``update``: invented, never passed off as a scope of the user's.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from ..model.graph import CONTROL
from .tree import Group, Hierarchy, Member, OpNode, op_members

if TYPE_CHECKING:
    from .tree import TrainingParts

__all__ = ["UPDATE_KIND", "mirror_updates"]

#: The kind of the groups made here.
UPDATE_KIND = "update"

#: Ops that write a variable through its handle (input 0) or reference.
_WRITES = frozenset({"AssignSubVariableOp", "AssignAddVariableOp", "AssignVariableOp",
                     "AssignSub", "AssignAdd", "Assign"})
_WRITE_PREFIXES = ("ResourceApply", "ResourceSparseApply", "Apply", "SparseApply")

#: Neither one layer nor none: serves several.
_MANY = "\0many"


def mirror_updates(h: Hierarchy) -> None:
    """Group each training step's optimizer by the layer each of its ops updates (see the
    module docstring); a no-op where the optimizer writes fewer than two layers."""
    for parts in list(h.training.values()):
        _mirror(h, parts)


def _layer(h: Hierarchy, op: OpNode) -> str:
    """The scope a variable belongs to: its handle's group, less the scopes named after ops
    (``…/convolution/ReadVariableOp``); the handle's own name when it has no scope."""
    group = op.parent
    while isinstance(group, Group) and group.name and group.name in h.ops:
        group = group.parent
    if isinstance(group, Group) and group.name:
        return group.name
    return op.label


def _writes(kind: str) -> bool:
    return kind in _WRITES or kind.startswith(_WRITE_PREFIXES)


def _labels(h: Hierarchy, optimizer: Group) -> dict[str, str | None]:
    """Each op below the optimizer -> the layer it serves, ``_MANY``, or None."""
    nodes, succ, pred = h.model.g._node, h.model.g._succ, h.model.g._pred
    inside = {op.name for op in op_members(optimizer)}
    outs: dict[str, list[str]] = {}
    ins: dict[str, list[str]] = {u: [] for u in inside}
    for u in inside:  # the data edges among them (not the ones closing a loop)
        out = outs[u] = []
        for v, keydict in succ[u].items():
            if v in inside and v != u:
                for d in keydict.values():
                    if d["kind"] != CONTROL and not d["back"]:
                        out.append(v)
                        ins[v].append(u)
                        break
    # Dataflow order (Kahn's, ties in model order); ops on a loop are left unlabelled.
    position = h.order()
    pending = {u: len(ins[u]) for u in inside}
    ready = deque(sorted((u for u in inside if not pending[u]), key=position.__getitem__))
    order: list[str] = []
    while ready:
        u = ready.popleft()
        order.append(u)
        for v in outs[u]:
            pending[v] -= 1
            if not pending[v]:
                ready.append(v)
    label: dict[str, str | None] = dict.fromkeys(inside)
    for u in reversed(order):  # consumers first: the layers whose writes an op reaches
        found = _join(label, outs[u])
        if found != _MANY and _writes(nodes[u]["op"]):
            handle = next((s for s, kd in pred[u].items()
                           if any(d["dst_input"] == 0 for d in kd.values())), None)
            if handle is not None and handle not in inside:
                layer = _layer(h, h.ops[handle])
                found = layer if found in (None, layer) else _MANY
        label[u] = found
    for u in order:  # producers first: an op that reaches no write serves its inputs' layer
        if label[u] is None:
            found = _join(label, ins[u], skip_many=True)
            if found != _MANY:
                label[u] = found
    for u in reversed(order):  # and what feeds only such ops serves theirs
        if label[u] is None:
            label[u] = _join(label, outs[u]) if outs[u] else None
            if label[u] == _MANY:
                label[u] = None
    return label


def _join(label: dict[str, str | None], names: list[str], *, skip_many: bool = False
          ) -> str | None:
    """The one layer the labelled ``names`` share, None if none is labelled, else
    ``_MANY`` (``skip_many``: labels of ``_MANY`` count as none)."""
    found: str | None = None
    for name in names:
        x = label[name]
        if x is None or x == found or (skip_many and x == _MANY):
            continue
        if found is not None or x == _MANY:
            return _MANY
        found = x
    return found


def _mirror(h: Hierarchy, parts: TrainingParts) -> None:
    optimizer = parts.optimizer
    label = _labels(h, optimizer)
    homes: dict[str, list[Member]] = {}
    kept: list[Member] = []
    broken: list[Group] = []
    for child in optimizer._children:
        ops = [child] if isinstance(child, OpNode) else op_members(child)  # type: ignore[arg-type]
        found = {label[op.name] for op in ops}
        if len(found) == 1:
            layer = found.pop()
            if layer is not None and layer != _MANY:
                homes.setdefault(layer, []).append(child)
                continue
        elif isinstance(child, Group) and _named_after_ops(h, child):
            # TensorFlow's scope of one op and its inputs, mixing one layer's ops with an op
            # all layers share (``adam/Add`` holding the step counter's handle, named after
            # its first reader): its ops go where each belongs, or it would tie the layers.
            for op in ops:
                layer = label[op.name]
                if layer is not None and layer != _MANY:
                    homes.setdefault(layer, []).append(op)
                else:
                    kept.append(op)
            broken.append(child)
            continue
        kept.append(child)
    if len(homes) < 2:
        return
    for child in broken:
        for below in _groups_below(child):
            del h.groups[below.name]
    made: list[Group] = []
    for layer in sorted(homes):
        home = _group(h, optimizer, layer, made)
        if home is None:
            kept.extend(homes[layer])
            continue
        for m in homes[layer]:
            m.parent = home
            home._children.append(m)
    for m in kept:
        m.parent = optimizer
    # The first levels made were appended to the optimizer's children.
    new = {id(g) for g in made}
    optimizer._children = kept + [c for c in optimizer._children if id(c) in new]
    for group in reversed(made):  # levels made for a layer whose name was taken after all
        if not group._children:
            parent = group.parent
            assert isinstance(parent, Group)
            parent._children.remove(group)
            del h.groups[group.name]


def _named_after_ops(h: Hierarchy, group: Group) -> bool:
    """Is this a scope TensorFlow made for one op (``adam/Add`` for ``adam/Add`` and its
    ``ReadVariableOp``), every group below it too?"""
    return all(g.kind == "scope" and g.name in h.ops for g in _groups_below(group))


def _groups_below(group: Group) -> list[Group]:
    """``group`` and every group below it."""
    found, stack = [], [group]
    while stack:
        g = stack.pop()
        found.append(g)
        stack.extend(c for c in g._children if isinstance(c, Group))
    return found


def _group(h: Hierarchy, optimizer: Group, layer: str, made: list[Group]) -> Group | None:
    """The update group for ``layer`` under the optimizer, made with the levels above it
    (``adam/resnet50_1`` for ``adam/resnet50_1/conv1``); None when a name is taken by a
    scope of the user's."""
    node = optimizer
    path = optimizer.name
    for part in layer.split("/"):
        path = f"{path}/{part}"
        found = h.groups.get(path)
        if found is None:
            if path in h.ops:
                return None
            found = h.groups[path] = Group(path, h, node, node.depth + 1, kind=UPDATE_KIND)
            node._children.append(found)
            made.append(found)
        elif found.kind != UPDATE_KIND:
            return None
        node = found
    return node

