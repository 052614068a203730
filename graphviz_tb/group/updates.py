"""The optimizer of a TF2 training step, opened into the mirror of the model it updates.

Keras' optimizers trace one chain of ops per variable under flat numbered names (``adam/Mul_3``,
``adam/Cast_5``, ``adam/AssignSubVariableOp_1``): 40 ops a variable, 40,000 for NASNet-Large,
with nothing in their names to say which variable they update: opened as they are named, the
optimizer would be a stack of sections of 200 such names.  The dataflow says it: each chain
ends in an op that writes a variable of the model (``AssignSubVariableOp``,
``AssignAddVariableOp``, ``ResourceApply*``), and that variable is read, and so named, by its
layer (``resnet50_1/conv1_conv_1/convolution/ReadVariableOp/resource``).

So every op below the optimizer that serves the updates of one layer only goes into a group
named after that layer, nested as the model's scopes are (``adam/resnet50_1/conv1_conv_1``),
the way ``gradient_tape`` mirrors the model; a layer with several variables has one group
per variable below it, named after the op that first read the variable (``convolution`` for a
kernel, ``Reshape`` for a bias: TF2 keeps no variable names in a traced step).  What serves
several layers (the step counter, the learning rate) stays at the optimizer's top.  An op
serves the variables whose writes it reaches through data edges; one that reaches none (the
write of a slot variable, ``m`` or ``v``) serves the variable of its inputs, and what feeds
only such ops serves theirs (the square of a gradient, on its way into ``v``).  The three
passes are walks of the optimizer's ops in dataflow order, so the cost is linear in its ops
and edges (and a sort of them by model order).  The groups are of kind ``update``:
invented, never passed off as a scope of the user's.  So are the two more made here, as
Keras names neither: ``clip_by_global_norm`` (kind ``clipping``) and each variable's
``weight_decay`` (kind ``decay``), both found by their dataflow.
"""

from __future__ import annotations

from functools import reduce

from ..model.graph import CONTROL
from .dataflow import child_index
from .partition import ChildGraph, topological_order
from .tree import Group, Hierarchy, Member, OpNode, free_name, op_members

__all__ = ["CLIPPING_KIND", "DECAY_KIND", "UPDATE_KIND", "mirror_updates"]

#: The kinds of the groups made here: one layer's updates, a variable's weight decay within
#: them, and the clipping of every gradient by their global norm.
UPDATE_KIND = "update"
DECAY_KIND = "decay"
CLIPPING_KIND = "clipping"

#: Ops squaring a gradient on its way into a global norm.
_SQUARES = frozenset({"Square", "L2Loss"})

#: Ops that write a variable through its handle (input 0) or reference.
_WRITES = frozenset({"AssignSubVariableOp", "AssignAddVariableOp", "AssignVariableOp",
                     "AssignSub", "AssignAdd", "Assign"})
_WRITE_PREFIXES = ("ResourceApply", "ResourceSparseApply", "Apply", "SparseApply")

#: Serves several layers.
_MANY = "\0many"


def mirror_updates(h: Hierarchy) -> None:
    """Group each training step's optimizer by the layer and variable each of its ops
    updates (see the module docstring; a no-op where it writes fewer than two layers), then
    frame what Keras leaves unnamed: the clipping by the global norm, and each variable's
    weight decay within its update."""
    for parts in list(h.training.values()):
        for optimizer in parts.optimizers or (parts.optimizer,):
            applying = _applying(h, optimizer)
            if applying is not optimizer and optimizer.kind == "function":
                # TensorFlow names a loss-scaling optimizer's call ``cond`` (apply the
                # updates only when every gradient is finite): the box says what it is.
                optimizer.label = f"{optimizer.label}: loss scaling, {applying.label}"
            _mirror(h, applying)
            _frame_clipping(h, applying)
            computed = _Computed(h, {op.name for op in op_members(applying)})
            for group in [g for g in applying.walk() if isinstance(g, Group)
                          and g.kind == UPDATE_KIND]:
                _frame_decay(h, group, computed)


def _data_graph(h: Hierarchy, kids: list[Member]) -> tuple[ChildGraph, list[list[str]]]:
    """The data edges among ``kids``, and for each the ops outside them it reads."""
    where = child_index(kids)
    edges: set[tuple[int, int]] = set()
    outside: list[list[str]] = [[] for _ in kids]
    for op, i in where.items():
        for u, keydict in h.model.g.pred[op].items():
            if all(d["kind"] == CONTROL for d in keydict.values()):
                continue
            j = where.get(u)
            if j is None:
                outside[i].append(u)
            elif j != i:
                edges.add((j, i))
    return ChildGraph(len(kids), sorted(edges)), outside


def _frame_decay(h: Hierarchy, update: Group, computed: _Computed) -> None:
    """Frame a variable's weight decay within its update as a group ``weight_decay``.

    Keras (``weight_decay=``, AdamW) decays a variable apart from its step: a write whose
    value is made of the variable itself, constants and the learning rate, never of a
    gradient (``variable.assign_sub(variable * wd * lr)``).  Its ops stood loose beside the
    step's, under flat numbered names.  The decay is that write and what feeds only it: it
    reads the value of the variable it writes, and nothing it reads comes from what the
    optimizer is given (the gradients).  Adam's step reads no gradient either, through the
    dataflow (the gradient went into ``m`` and ``v``, which it reads back), but it reads
    those, not the variable."""
    kids = update._children
    nodes = h.model.g.node_data
    # A write given a gradient is the step, not a decay; most updates hold no other write,
    # and their dataflow is never needed (the memoised test is linear in the optimizer).
    writes: list[tuple[int, OpNode]] = []
    for w, c in enumerate(kids):
        if isinstance(c, OpNode) and _writes(nodes[c.name]["op"]) and not computed.given(c.name):
            writes.append((w, c))
    if not writes:
        return
    # A decay reads the variable it writes: an update none of whose ops read it (Adam's
    # step reads m and v back, not the variable) holds none, found without its dataflow.
    read = _variables_read(h, kids)
    writes = [(w, c) for w, c in writes if _written(h, c) in read]
    if not writes:
        return
    graph, _ = _data_graph(h, kids)
    for w, c in writes:
        found, stack = {w}, [w]
        while stack:
            for j in graph.pred[stack.pop()]:
                if j not in found:
                    found.add(j)
                    stack.append(j)
        if len(found) < 2 or len(found) == len(kids) \
                or _written(h, c) not in _variables_read(h, [kids[j] for j in found]):
            continue
        changed = True
        while changed:  # what also feeds the step is shared, not the decay's
            shared = {j for j in found if j != w and not set(graph.succ[j]) <= found}
            changed = bool(shared)
            found -= shared
        if len(found) < 2:
            continue
        _frame(h, update, found, "weight_decay", DECAY_KIND)
        return


def _written(h: Hierarchy, write: OpNode) -> tuple[str, int] | None:
    """The variable ``write`` writes (its handle, followed back), if its input says."""
    handle = h.model.input_tensor(write.name)
    return None if handle is None else _variable(h, handle)


def _variables_read(h: Hierarchy, members: list[Member]) -> set[tuple[str, int]]:
    """The variables whose values ``members`` read (their handles, followed back)."""
    read = set()
    for m in members:
        for op in [m] if isinstance(m, OpNode) else op_members(m):  # type: ignore[arg-type]
            if h.model.g.node_data[op.name]["op"] == "ReadVariableOp":
                handle = h.model.input_tensor(op.name)
                if handle is not None:
                    read.add(_variable(h, handle))
    return read


class _Computed:
    """Which ops an optimizer's ops are made from: is an op, or anything it reads, computed
    outside the optimizer (a gradient), rather than a source (a constant, a variable's
    handle)?  A function's argument stands for what its caller passes.  Memoised: linear in
    the optimizer's ops and edges."""

    def __init__(self, h: Hierarchy, inside: set[str]) -> None:
        self.h, self.inside = h, inside
        self.memo: dict[str, bool] = {}

    def _preds(self, op: str) -> list[str]:
        h = self.h
        if h.model.g.node_data[op]["role"] == "arg":
            resolved = _variable(h, (op, 0))[0]
            if resolved != op:
                return [resolved]
        return [u for u, keydict in h.model.g.pred[op].items()
                if any(d["kind"] != CONTROL for d in keydict.values())]

    def given(self, op: str) -> bool:
        """Is ``op`` a value the optimizer is given, or made from one?"""
        memo, stack = self.memo, [op]
        opened: dict[str, list[str]] = {}  # op -> its preds, read once when it is opened
        nodes = self.h.model.g.node_data
        while stack:
            top = stack[-1]
            if top in memo:
                stack.pop()
                continue
            preds = opened.get(top)
            if preds is None:
                preds = self._preds(top)
            if top not in self.inside and nodes[top]["role"] != "arg":
                # Computed outside: a gradient, unless a variable's value.
                memo[top] = bool(preds) and nodes[top]["op"] != "ReadVariableOp"
                stack.pop()
                continue
            todo = [u for u in preds if u not in memo and u not in opened]
            if todo and top not in opened:
                opened[top] = preds
                stack.extend(todo)
                continue
            memo[top] = any(memo.get(u, False) for u in preds)  # a loop: decided by the rest
            stack.pop()
        return memo[op]


def _frame_clipping(h: Hierarchy, optimizer: Group) -> None:
    """Frame the clipping of the gradients by their global norm (Keras' ``global_clipnorm``)
    as a group of its own.  Keras traces it under the optimizer's flat numbered names
    (``sgd/Square_12``, ``sgd/Sum_174``, ``sgd/Sqrt``, ``sgd/mul_40``), serving every
    variable, so it stayed at the optimizer's top, a block labelled ``… mul_[0-174]``.  The
    dataflow says what it is: a ``Sqrt`` of a sum of two or more squared gradients.  Its
    ancestors among the optimizer's children (the squares, the sums, their axes), and what
    follows it down to the ops that scale each gradient (those read a gradient from
    outside), are the clipping.  Clipping by each gradient's own norm (``clipnorm``) serves
    one variable at a time: it is in that variable's update already."""
    kids = optimizer._children
    g = h.model.g
    graph, outside = _data_graph(h, kids)
    reads_outside = [any(g.node_data[u]["op"] != "Const" for u in us) for us in outside]
    movable = [isinstance(c, OpNode) or (isinstance(c, Group) and _named_after_ops(h, c))
               for c in kids]
    for root, c in enumerate(kids):
        if not (isinstance(c, OpNode) and g.node_data[c.name]["op"] == "Sqrt"):
            continue
        found, stack = {root}, [root]
        while stack:  # what the norm is made of
            for j in graph.pred[stack.pop()]:
                if j not in found and movable[j]:
                    found.add(j)
                    stack.append(j)
        squares = sum(1 for j in found if isinstance(kids[j], OpNode)
                      and g.node_data[kids[j].name]["op"] in _SQUARES)
        if squares < 2:
            continue
        stack = [root]
        while stack:  # down to the scaled gradients
            for j in graph.succ[stack.pop()]:
                if j not in found and movable[j]:
                    found.add(j)
                    if not reads_outside[j]:
                        stack.append(j)
        # A source (an axis, a constant) is the clipping's when it feeds nothing else.
        sources = {j for j in range(len(kids)) if not graph.pred[j] and j != root
                   and movable[j] and graph.succ[j]}
        found = (found - sources) | {j for j in sources if set(graph.succ[j]) <= found}
        _frame(h, optimizer, found, "clip_by_global_norm", CLIPPING_KIND)
        return


def _frame(h: Hierarchy, parent: Group, found: set[int], label: str, kind: str) -> None:
    """Move the children of ``parent`` at the indices ``found`` into a new group of it,
    ``label`` (made free) of ``kind``, placed after the children that stay."""
    kids = parent._children
    group = Group(free_name(h, f"{parent.name}/{label}"), h, parent, parent.depth + 1,
                  kind=kind)
    h.groups[group.name] = group
    members = [kids[j] for j in sorted(found)]
    for m in members:
        m.parent = group
    group._children = members
    parent._children = [c for j, c in enumerate(kids) if j not in found] + [group]


def _applying(h: Hierarchy, optimizer: Group) -> Group:
    """The group that applies the optimizer's updates: the optimizer itself, or, for a
    loss-scaling optimizer, the optimizer it calls inside the branch that applies them
    (``cond/then/cond/adam_w``).  Found by going down while one child group holds half the
    variable writes below or more, and more than any other child: a discriminator of four
    variables updates them in ``sgd_1`` beside the loss scale's own three writes and its
    step counter's, exactly half."""
    nodes = h.model.g.node_data

    def writes(m: Member) -> int:
        ops = op_members(m) if isinstance(m, Group) else [m]
        return sum(_writes(nodes[op.name]["op"]) for op in ops)

    group = optimizer
    while True:
        counts = sorted(((writes(c), c.name, c) for c in group._children),
                        key=lambda w: w[:2], reverse=True)
        if not counts or not isinstance(counts[0][2], Group) \
                or 2 * counts[0][0] < sum(n for n, _, _ in counts) \
                or (len(counts) > 1 and counts[1][0] == counts[0][0]):
            return group
        group = counts[0][2]


def _variable(h: Hierarchy, tensor: tuple[str, int]) -> tuple[str, int]:
    """The handle a write's input points to, followed out of function bodies (a body's
    argument is its caller's input) and through ``Identity`` copies."""
    nodes, seen = h.model.g.node_data, set()
    while tensor not in seen and (nodes[tensor[0]]["role"] == "arg"
                                  or nodes[tensor[0]]["op"] == "Identity"):
        seen.add(tensor)
        upstream = h.model.input_tensor(tensor[0])
        if upstream is None:
            break
        tensor = upstream
    return tensor


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
    """Does an op of this type write the variable its input 0 points to?"""
    return kind in _WRITES or kind.startswith(_WRITE_PREFIXES)


#: What an op serves: one variable ``(layer, handle)``, several variables of one layer
#: ``(layer, None)``, several layers (``_MANY``), or nothing found (None).
Serves = tuple[str, str | None] | str | None


def _meet(a: Serves, b: Serves) -> Serves:
    """What an op serves that serves both ``a`` and ``b``."""
    if a is None or a == b:
        return b
    if b is None:
        return a
    if a == _MANY or b == _MANY or a[0] != b[0]:
        return _MANY
    return (a[0], None)


def _labels(h: Hierarchy, optimizer: Group) -> dict[str, Serves]:
    """Each op below the optimizer -> what it serves (see :data:`Serves`)."""
    nodes, succ = h.model.g.node_data, h.model.g.succ
    position = h.order()
    ops = sorted((op.name for op in op_members(optimizer)), key=position.__getitem__)
    index = {name: i for i, name in enumerate(ops)}
    # The data edges among them (not those closing a loop), one per pair of ops.
    outs: list[list[int]] = [[] for _ in ops]
    ins: list[list[int]] = [[] for _ in ops]
    for i, u in enumerate(ops):
        for v, keydict in succ[u].items():
            j = index.get(v)
            if j is None or j == i:
                continue
            for d in keydict.values():
                if d["kind"] != CONTROL and not d["back"]:
                    outs[i].append(j)
                    ins[j].append(i)
                    break
    graph = ChildGraph.of_lists(outs, ins)
    order = topological_order(graph)  # ties in model order
    label: list[Serves] = [None] * len(ops)
    for i in reversed(order):  # consumers first: the variables whose writes an op reaches
        found: Serves = None
        for j in graph.succ[i]:
            found = _meet(found, label[j])
        if found != _MANY and _writes(nodes[ops[i]]["op"]):
            handle = h.model.input_tensor(ops[i])
            if handle is not None:
                handle = _variable(h, handle)
            if handle is not None and handle[0] not in index:
                found = _meet(found, (_layer(h, h.ops[handle[0]]), handle[0]))
        label[i] = found
    for i in order:  # producers first: an op that reaches no write serves its inputs'
        if label[i] is None:
            found = None
            for j in graph.pred[i]:
                if label[j] != _MANY:
                    found = _meet(found, label[j])
            if found != _MANY:
                label[i] = found
    for i in reversed(order):  # and what feeds only such ops serves theirs
        if label[i] is None:
            found = None
            for j in graph.succ[i]:
                found = _meet(found, label[j])
            label[i] = None if found == _MANY else found
    return dict(zip(ops, label, strict=True))


def _mirror(h: Hierarchy, optimizer: Group) -> None:
    """Move the optimizer's children that serve one variable (or one layer) into its update
    group, splitting TensorFlow's one-op scopes that mix them with shared ops."""
    label = _labels(h, optimizer)
    homes: dict[tuple[str, str | None], list[Member]] = {}
    kept: list[Member] = []
    broken: list[Group] = []
    for child in optimizer._children:
        ops = [child] if isinstance(child, OpNode) else op_members(child)  # type: ignore[arg-type]
        labels = [label[op.name] for op in ops]
        found = None if None in labels else reduce(_meet, labels)
        if isinstance(found, tuple):
            homes.setdefault(found, []).append(child)
            continue
        if isinstance(child, Group) and len(ops) > 1 and _named_after_ops(h, child):
            # TensorFlow's scope of one op and its inputs, mixing one layer's ops with an op
            # all layers share (``adam/Add`` holding the step counter's handle, named after
            # its first reader): its ops go where each belongs, or it would tie the layers.
            for op, x in zip(ops, labels, strict=True):
                if isinstance(x, tuple):
                    homes.setdefault(x, []).append(op)
                else:
                    kept.append(op)
            broken.append(child)
            continue
        kept.append(child)
    if len({layer for layer, _ in homes}) < 2:
        return
    for child in broken:
        for below in _groups_below(child):
            del h.groups[below.name]
    made: list[Group] = []
    for path, members in sorted(_paths(h, homes).items()):
        home = _group(h, optimizer, path, made)
        if home is None:
            kept.extend(members)
            continue
        for m in members:
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


def _paths(h: Hierarchy, homes: dict[tuple[str, str | None], list[Member]]
           ) -> dict[str, list[Member]]:
    """Where each home's members go: the layer's path, and below it one group per variable
    when the layer has several (named after the op that first read it: ``convolution`` for
    a kernel, ``Reshape`` for a bias)."""
    variables: dict[str, list[str]] = {}
    for layer, handle in homes:
        if handle is not None:
            variables.setdefault(layer, []).append(handle)
    names: dict[str, str] = {}
    for layer, handles in variables.items():
        if len(handles) < 2:
            continue
        taken: set[str] = set()
        for handle in sorted(handles):
            base = handle[len(layer) + 1:].split("/", 1)[0] \
                if handle.startswith(f"{layer}/") else h.ops[handle].label
            name, n = base, 2
            while name in taken:
                name, n = f"{base}_{n}", n + 1
            taken.add(name)
            names[handle] = f"{layer}/{name}"
    paths: dict[str, list[Member]] = {}
    for (layer, handle), members in homes.items():
        path = names.get(handle, layer) if handle is not None else layer
        paths.setdefault(path, []).extend(members)
    return paths


def _named_after_ops(h: Hierarchy, group: Group) -> bool:
    """Is this a scope TensorFlow made for one op (``adam/Add`` for ``adam/Add`` and its
    ``ReadVariableOp``), every group below it too?"""
    return all(g.kind == "scope" and g.name in h.ops for g in _groups_below(group))


def _groups_below(group: Group) -> list[Group]:
    """``group`` and every group below it."""
    return [group, *(m for m in group.walk() if isinstance(m, Group))]


def _group(h: Hierarchy, optimizer: Group, where: str, made: list[Group]) -> Group | None:
    """The update group at ``where`` (a layer's path, or a variable's below it) under the
    optimizer, made with the levels above it (``adam/resnet50_1`` for
    ``adam/resnet50_1/conv1``); None when a name is taken by a scope of the user's."""
    node = optimizer
    path = optimizer.name
    for part in where.split("/"):
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

