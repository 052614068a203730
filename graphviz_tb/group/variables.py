"""The variables that function calls read, folded into one group beside the calls.

A TF2 SavedModel's graph (``tf.saved_model.save``, Keras 3's ``model.export()``) holds at its
top level a resource handle for every variable, often three (``conv1/kernel``,
``conv1/kernel_1``, ``Variable_261``), each with the ops that read, initialise and check it,
and the function calls (the signatures, save and restore) that take the handles as inputs.
What Keras 3's ``fit`` runs has the same shape: one call of the step function fed by a
captured-variable placeholder per variable.  Grouped by their names, those handles stood at
the top level as a copy of the model's layers (``block_1 … block_16``), or as a fan of
hundreds of numbered placeholders, while the call that holds the computation stayed closed
beside them.

So the members of a group that are nothing but variable handles and their bookkeeping, and
that feed function calls, go into one group of kind ``variables`` beside those calls: one
closed box, which the first picture never opens by itself.  A member qualifies when every op
in it is a handle (``VarHandleOp``, a resource placeholder or argument), reads it
(``ReadVariableOp``), writes it or asks whether it was initialised, and no handle of it feeds
anything else (a dataset's ``iterator`` placeholder feeds ``IteratorGetNext``, which stays).
Handles that feed ops directly (a traced step's ``*_readvariableop_resource`` arguments) have
joined their readers before this runs (:mod:`.training`), so only those read by calls remain.
A placeholder or constant named by a number alone is how TensorFlow captures an outer tensor
into a function (a layer's constant, beside the variables ``fit`` captures): it counts too.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .dataflow import DATA_SOURCE_OPS, child_index, is_parameter
from .tree import Group, Hierarchy, Member, OpNode, free_name, op_members, reparent, scope_path

__all__ = ["VARIABLES_KIND", "fold_shared_handles", "fold_variables"]

#: The kind, and the name, of the groups made here.
VARIABLES_KIND = "variables"

#: Ops that only hold, read, write or check a variable through its handle.
_VARIABLE_OPS = frozenset({"VarHandleOp", "ReadVariableOp", "AssignVariableOp",
                           "AssignAddVariableOp", "AssignSubVariableOp", "VarIsInitializedOp",
                           "DestroyResourceOp", "VariableShape"})

#: How TensorFlow brings an outer tensor into a function it traces: a placeholder, or a
#: constant, named by a number alone.
_CAPTURED = frozenset({"Placeholder", "Const"})

#: Fewer qualifying members than this stay as they are: one handle beside a call is no fan.
_FOLD_MIN = 2


def fold_variables(h: Hierarchy) -> None:
    """Fold, in every group that holds a function call, the members that are only variables
    the calls read (see the module docstring)."""
    for container in [h.root, *list(h.groups.values())]:
        kids = container._children
        if len(kids) > _FOLD_MIN and any(
                isinstance(c, Group) and c.kind == "function" for c in kids):
            _fold_in(h, container)


def _fold_in(h: Hierarchy, container: Group) -> None:
    kids = container._children
    where = child_index(kids)
    succ = h.model.g.succ
    calls = {i for i, c in enumerate(kids) if isinstance(c, Group) and c.kind == "function"}
    ops = [_ops(c) for c in kids]
    only = [i not in calls and all(_is_variable_op(h, op) for op in ops[i])
            for i in range(len(kids))]
    chosen: list[int] = []
    fed_call = False
    for i in range(len(kids)):
        if not only[i]:
            continue
        consumers = {where.get(v) for op in ops[i] for v in succ[op.name]} - {i, None}
        if all(j in calls or only[j] for j in consumers):  # type: ignore[index]
            chosen.append(i)
            fed_call |= bool(consumers & calls)
    if len(chosen) < _FOLD_MIN or not fed_call:
        return
    name = f"{container.name}/{VARIABLES_KIND}" if container.name else VARIABLES_KIND
    if name in h.groups or name in h.ops:
        return
    group = Group(name, h, container, container.depth + 1, kind=VARIABLES_KIND)
    reparent([kids[i] for i in chosen], group)
    h.groups[name] = group
    gone = set(chosen)
    container._children = [c for i, c in enumerate(kids) if i not in gone] + [group]


def _ops(member: Member) -> list[OpNode]:
    return [member] if isinstance(member, OpNode) else op_members(member)  # type: ignore[arg-type, list-item]


def _is_variable_op(h: Hierarchy, op: OpNode) -> bool:
    """Does this op only hold, read, write or check a variable (or is it a resource handle
    coming in as a placeholder or argument)?"""
    kind = op.op
    return kind in _VARIABLE_OPS or (kind in DATA_SOURCE_OPS and is_parameter(
        h, op.name, 0)) or (kind in _CAPTURED and op.label.isdigit())


#: A call's number, as Keras and TensorFlow append it to a scope (``discriminator_3``).
_CALL_NUMBER = re.compile(r"_\d+$")


def fold_shared_handles(h: Hierarchy) -> None:
    """Take the variables that several calls of one model read out of the first call.

    A traced step captures each variable once, under the scope of the first op that read it
    (``discriminator_1/d_conv1_1/convolution/ReadVariableOp/resource``), so when a model is
    called twice (a GAN's discriminator, on real and on fake images; a siamese encoder) the
    first call holds every handle and the second reads them across from it: drawn as data
    flowing from one call into the other, with the two calls told apart in colour by the
    handles alone.  A handle read from two calls, scopes that differ only in the call's number
    at one level (``discriminator_1``, ``discriminator_3``), goes into a group of kind
    ``variables`` beside the calls, one per model (``discriminator_variables``).  Other
    readers (an optimizer's weight decay) do not count.  Runs after the optimizer's mirror,
    which names each update after the layer holding its variable's handle.
    """
    nodes, succ = h.model.g.node_data, h.model.g.succ
    shared: dict[tuple[str, str], list[OpNode]] = {}
    known: dict[str, bool] = {}

    def computes(scope: str) -> bool:
        """Is ``scope`` a call: a scope of its own (not one TensorFlow made for an op) that
        computes something (not only reads a variable: ``adam/Cast_6`` reading the learning
        rate is no call)?"""
        if scope not in known:
            group = h.groups.get(scope)
            known[scope] = scope not in h.ops and group is not None and any(
                not _is_variable_op(h, op) for op in op_members(group))
        return known[scope]

    for name, op in h.ops.items():  # the op's type from the op: not a lookup of every op
        if op.op in DATA_SOURCE_OPS and is_parameter(h, name, 0):
            readers = sorted(v for v in succ[name] if nodes[v]["op"] == "ReadVariableOp")
            calls = _calls_reading(name, readers, computes)
            if calls is not None:
                shared.setdefault(calls, []).append(op)
    for (prefix, model), handles in sorted(shared.items()):
        container = h.groups.get(prefix) or h.root
        group = Group(free_name(h, f"{prefix}/{model}_variables".lstrip("/")), h, container,
                      container.depth + 1, kind=VARIABLES_KIND)
        for op in handles:
            _leave(h, op)
        reparent(handles, group)  # type: ignore[arg-type]
        h.groups[group.name] = group
        container._children.append(group)


def _leave(h: Hierarchy, op: OpNode) -> None:
    """Take ``op`` out of its group; a scope left holding only the op it is named after
    (``…/ReadVariableOp``, a scope only for its ``resource`` handle) is that op again."""
    old = op.parent
    assert isinstance(old, Group)
    old._children.remove(op)
    kids = old._children
    if old.kind == "scope" and len(kids) == 1 and kids[0].name == old.name \
            and old.parent is not None:
        kids[0].parent = old.parent
        siblings = old.parent._children
        siblings[siblings.index(old)] = kids[0]
        del h.groups[old.name]


def _calls_reading(handle: str, readers: list[str], is_call: Callable[[str], bool]
                   ) -> tuple[str, str] | None:
    """Where the calls that read ``handle`` sit and the model's name (``('', 'discriminator')``)
    when two of its readers are one op of two calls (scopes that ``is_call``), the handle
    inside the first; else None.  Readers are bucketed by their path with one level's call
    number dropped, so a handle read a thousand times (a learning rate) costs a thousand
    look-ups, not a million comparisons."""
    home = scope_path(handle)
    seen: dict[tuple[int, tuple[str, ...], str, tuple[str, ...]], str] = {}
    for reader in readers:
        path = scope_path(reader)
        for k in range(min(len(path), len(home) - 1)):
            if path[:k] != home[:k]:
                break
            key = (k, tuple(path[:k]), _CALL_NUMBER.sub("", path[k]), tuple(path[k + 1:]))
            other = seen.setdefault(key, path[k])
            if other != path[k] and home[k] in (other, path[k]) and all(
                    is_call("/".join([*path[:k], call])) for call in (other, path[k])):
                return "/".join(path[:k]), key[2]
    return None
