"""TF2 training steps: the loose ops TF2 names at the top level (gradient sums, captured
variables, slot initialisers) join the group they serve, and the step's parts (model,
gradients, optimizer) are named for the first picture."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import cast

from ..model.graph import CONTROL
from .aside import BOOKKEEPING_NAMES
from .dataflow import DATA_SOURCE_OPS, child_index, is_parameter
from .partition import ChildGraph, strong_components, topological_order
from .tree import (
    Group,
    Hierarchy,
    Member,
    OpNode,
    TrainingParts,
    fix_depths,
    op_members,
    reparent,
)

#: The scope TF2 puts a ``GradientTape``'s gradients under (``gradient_tape/<model>/...``).
GRADIENT_SCOPE = "gradient_tape"

#: What TensorFlow replaces in a scope's name when it names a captured argument after it.
_NOT_NAME = re.compile(r"[^a-z0-9_]")

#: The kind, and the name, of the group a step's metric updates fold into.
METRICS_KIND = "metrics"

#: Ops that write a variable through its handle: a metric's update among a step's loose ops.
_VARIABLE_WRITES = frozenset({"AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp"})


#: Ops that read only their input's shape, never its values.
_SHAPE_READERS = frozenset({"OnesLike", "ZerosLike", "Shape", "ShapeN", "Size", "Rank"})

#: Ops whose output leaves the graph (the step's results): they stay where the user sees them.
_OUTPUT_OPS = frozenset({"Identity", "IdentityN", "_Retval", "NoOp"})


#: An op-named scope this small (``sub_7`` holding ``sub_7/x``: an op and its constants) is as
#: loose as an op of its own.
_LOOSE_SCOPE_OPS = 4


#: Names that are bookkeeping by convention (``init``, ``save``, summaries ...), whatever
#: their degree: drawn aside (:mod:`graphviz_tb.group.auxiliary`), never opened by themselves, never
#: given loose ops.
_CONVENTIONAL = re.compile(BOOKKEEPING_NAMES)


def is_bookkeeping(label: str) -> bool:
    """Is this a name conventional for bookkeeping (``init``, ``save``, ``summaries`` ...)?"""
    return _CONVENTIONAL.match(label) is not None


def _loose(h: Hierarchy, m: Member) -> bool:
    """Is this child an op with no scope of its own, a tiny scope named after its op, or a
    function call (TF2 calls the gradient of a function through one at the top level)?"""
    if isinstance(m, OpNode):
        return True
    if not isinstance(m, Group) or m.name not in h.ops:
        return False
    return m.kind == "function" or (m.kind == "scope" and len(
        m._children) <= _LOOSE_SCOPE_OPS and not any(isinstance(c, Group) for c in m._children))


def _unit_ops(m: Member) -> list[OpNode]:
    return [m] if isinstance(m, OpNode) else op_members(m)  # type: ignore[arg-type, list-item]


def _anchored(h: Hierarchy, m: Member) -> bool:
    """Does this loose child hold a graph input or a result (which stay in sight)?"""
    succ = h.model.g.succ
    # A call's body has arguments and results of its own; the call itself is what counts.
    for op in [h.ops[m.name]] if isinstance(m, Group) and m.kind == "function" \
            else _unit_ops(m):
        kind = op.op
        if kind in DATA_SOURCE_OPS and not is_parameter(h, op.name, 0):
            return True
        if kind in _OUTPUT_OPS and not succ[op.name]:
            return True
    return False


def _captured(h: Hierarchy, m: Member) -> bool:
    """Is this a captured variable as TF2 names it among a function's arguments
    (``*_readvariableop_resource``)?  (A graph's own capture, ``…/ReadVariableOp/resource``,
    sits inside its reader's scope already.)"""
    return isinstance(m, OpNode) and m.label.endswith("_resource") \
        and m.op in DATA_SOURCE_OPS and is_parameter(h, m.name, 0)


def _common(a: Group, b: Group) -> Group:
    """The lowest group holding both."""
    while a.depth > b.depth:
        a = a.parent  # type: ignore[assignment]
    while b.depth > a.depth:
        b = b.parent  # type: ignore[assignment]
    while a is not b:
        a, b = a.parent, b.parent  # type: ignore[assignment]
    return a


def adopt_loose_ops(h: Hierarchy) -> None:
    """Ops with no scope of their own that serve a group are drawn with it.

    TF2 names some ops of a traced training step at the top level: the gradient sums
    (``AddN_k``, one per tensor with several consumers: hundreds in a ResNet), ops of custom
    gradients (EfficientNet's swish), captured variables (``*_readvariableop_resource``) and
    the optimizer's slot initialisers (``zeros_N``).  Left there they are a fan of hundreds of
    loose boxes wired across the picture.  In a group (the root, a function body, one graph
    of a logdir) holding a ``gradient_tape`` scope, every loose op that is not an input or a
    result joins a neighbouring group; elsewhere only captured variables do (see
    :func:`_adopt_in`).
    """
    for container in [h.root, *list(h.groups.values())]:
        kids = container._children
        grads = next((c for c in kids if isinstance(c, Group) and c.label == GRADIENT_SCOPE
                      and not _loose(h, c)), None)
        if grads is None and not any(_captured(h, c) for c in kids):
            continue
        _adopt_in(h, container, grads)


def _adopt_in(h: Hierarchy, container: Group, grads: Group | None) -> None:
    """Move the loose children of ``container`` into the groups they serve.

    The container's children are ranked in dataflow order (the condensation of their DAG).
    In that order, a loose child whose inputs all come from groups joins the latest of them;
    then, in reverse order, one with no inputs joins the earliest group it feeds, and one
    wired to nothing joins the optimizer.  Every edge between children then still runs from
    an earlier rank to a later one, so no loop appears that was not there (the user's own
    scopes may hold loops already).  Inside its group, a child goes to the lowest subgroup
    holding the ops it is wired to.
    """
    kids = container._children
    where = child_index(kids)
    succ = h.model.g.succ
    edges: set[tuple[int, int]] = set()
    from_grads: dict[int, int] = defaultdict(int)
    g_index = kids.index(grads) if grads is not None else -1
    for u, i in where.items():
        for v, keydict in succ[u].items():
            j = where.get(v)
            if j is None or j == i or all(d["back"] for d in keydict.values()):
                continue
            edges.add((i, j))
            if i == g_index:
                from_grads[j] += len(keydict)
    graph = ChildGraph(len(kids), sorted(edges))
    component = strong_components(graph)
    rank = [-c for c in component]  # Tarjan numbers sinks first: a -> b means rank a < rank b
    target = [isinstance(c, Group) and not _loose(h, c) and not is_bookkeeping(c.label)
              for c in kids]
    models, optimizers = _parts(h, kids, where, grads, target,
                                _fed(h, kids, graph, g_index)) if grads is not None else ([], [])
    for j in optimizers:  # a loss-scaling optimizer updates inside a call (``cond``)
        target[j] = True
    named = _named_captures(h, kids)
    loose = [i for i, c in enumerate(kids) if i not in optimizers
             and _loose(h, c) and (i in named or not _anchored(h, kids[i]))]
    if grads is None:
        loose = [i for i in loose if _captured(h, kids[i]) or i in named]
    optimizer = optimizers[0] if optimizers else max(
        (j for j in from_grads if target[j] and j != g_index),
        key=lambda j: (from_grads[j], kids[j].name), default=None)
    size = [0] * len(kids)
    for i in where.values():
        size[i] += 1
    home = list(range(len(kids)))
    key = lambda j: (rank[j], kids[j].name)  # noqa: E731
    # Loose ops in dataflow order among themselves too: a chain of them (a custom gradient)
    # may sit on a loop through the gradient scope, where ranks do not order it.
    ranked = sorted(loose, key=key)
    among = {i: n for n, i in enumerate(ranked)}
    chain = ChildGraph(len(among), [(among[a], among[b]) for a in among
                                    for b in graph.succ[a] if b in among])
    order = [ranked[n] for n in topological_order(chain)]
    # Inputs from loose sources (constants) do not count: those follow their consumers; nor
    # does a body's own call op, which passes its arguments in; nor the input of an op that
    # reads only its shape and feeds something (a loss's ``ones_like`` labels, made from a
    # model's output, belong to the loss).
    fed = {i: set() if _reads_shape(kids[i]) and graph.succ[i] else
           {p for p in graph.pred[i] if not (p in among and not graph.pred[p])
            and kids[p].name != container.name}
           for i in order}
    for i in order:  # inputs before their consumers
        ins = {home[p] for p in fed[i]}
        if ins and all(target[j] for j in ins):
            home[i] = _bigger(max(ins, key=key), i, size)
    for i in reversed(order):  # consumers before their inputs
        outs = {home[s] for s in graph.succ[i]}
        if g_index >= 0 and outs == {g_index} and home[i] != g_index and all(
                rank[home[p]] <= rank[g_index] for p in graph.pred[i]):
            # What feeds only the gradients is part of them (a custom gradient recomputing
            # the model's activations), though it reads the model: still forwards.
            home[i] = g_index
            continue
        if fed[i] or home[i] != i:
            continue
        if outs and all(target[j] for j in outs):
            home[i] = _bigger(min(outs, key=key), i, size)
        elif not outs and optimizer is not None:
            home[i] = optimizer
    for i, j in named.items():  # the name says whose: it beats the dataflow's guess
        home[i] = j
    if optimizer is not None and grads is not None:
        # The main model is the largest of the models (see :func:`_parts`); else the largest
        # part the gradients mirror, else the largest part.
        model = max(models or (j for j in range(len(kids)) if target[j]
                               and j not in (g_index, optimizer)),
                    key=lambda j: (f"{grads.name}/{kids[j].label}" in h.groups, size[j],
                                   kids[j].name), default=None)
        groups = cast("list[Group]", kids)  # the parts are groups (``target``)
        h.training[container] = TrainingParts(
            grads, groups[optimizer], None if model is None else groups[model],
            tuple(groups[j] for j in sorted(models, key=lambda j: (j != model, kids[j].name))),
            tuple(groups[j] for j in optimizers))
    moved = [i for i in order if home[i] != i]
    if not moved:
        return
    _place(h, kids, moved, home, where)
    gone = {id(kids[i]) for i in moved}
    container._children = [c for c in kids if id(c) not in gone]


def _reads_shape(m: Member) -> bool:
    """Is this an op that reads nothing of its input but its shape?"""
    return isinstance(m, OpNode) and m.op in _SHAPE_READERS


def _fed(h: Hierarchy, kids: list[Member], graph: ChildGraph, start: int) -> set[int]:
    """The children that ``start`` feeds, directly or through loose ops (a GAN's gradient
    sums ``AddN`` add the gradients of a model's two calls at the top level)."""
    found: set[int] = set()
    stack = [start]
    while stack:
        for j in graph.succ[stack.pop()]:
            if j not in found:
                found.add(j)
                if _loose(h, kids[j]):
                    stack.append(j)
    return found


def _parts(h: Hierarchy, kids: list[Member], where: dict[str, int], grads: Group,
           target: list[bool], fed: set[int]) -> tuple[list[int], list[int]]:
    """The models and the optimizers among a training step's children (indices).

    A model is what the gradients mirror (``gradient_tape/<model>``) and what reads
    variables (the loss is mirrored too, and may outweigh a small model): every one of them,
    a GAN's generator and both calls of its discriminator, an encoder and its decoder.  An
    optimizer is what else writes variables and takes the gradients (``fed``), most writes
    first: a scope (``adam``, a GAN's ``adam_1``), or the call a loss-scaling optimizer
    updates in (``cond``).  How many edges the gradients send does not say which: they send
    a recurrent model's loops more than the optimizer."""
    nodes = h.model.g.node_data
    reads, writes = [0] * len(kids), [0] * len(kids)
    for u, i in where.items():  # each op -> the child holding it
        kind = nodes[u]["op"]
        reads[i] += kind == "ReadVariableOp"
        writes[i] += kind in _VARIABLE_WRITES or kind.startswith("ResourceApply")
    models = [j for j, c in enumerate(kids) if target[j] and c is not grads and reads[j]
              and f"{grads.name}/{c.label}" in h.groups]
    calls = [isinstance(c, Group) and c.kind == "function" and not is_bookkeeping(c.label)
             for c in kids]
    optimizers = [j for j, c in enumerate(kids) if (target[j] or calls[j]) and writes[j]
                  and c is not grads and j not in models and j in fed]
    return models, sorted(optimizers, key=lambda j: (-writes[j], kids[j].name))


def _named_captures(h: Hierarchy, kids: list[Member]) -> dict[int, int]:
    """The arguments of a function body that TensorFlow named after the op that first reads
    them inside a sibling scope (``adam_w_add_readvariableop_resource`` for
    ``adam_w/Add/ReadVariableOp``, ``efficientnetb0_1_normalization_1_sqrt_x`` for a
    captured constant of ``efficientnetb0_1``): index -> the index of that scope.  A function
    captures every variable and outer constant it reads this way; what ``fit`` runs reads
    some of them in several parts, where the dataflow alone leaves them loose."""
    scopes = {_flat(c.label): j for j, c in enumerate(kids)
              if isinstance(c, Group) and c.kind == "scope" and not _loose(h, c)}
    found: dict[int, int] = {}
    for i, c in enumerate(kids):
        if not (isinstance(c, OpNode) and c.op == "_Arg"):
            continue
        label = c.label.lower()
        cut = label.rfind("_")
        while cut > 0:
            j = scopes.get(label[:cut])
            if j is not None:
                found[i] = j
                break
            cut = label.rfind("_", 0, cut)
    return found


def _flat(label: str) -> str:
    """A scope's name as TensorFlow writes it into a captured argument's: lower case, each
    character other than a letter, digit or ``_`` made ``_``."""
    return _NOT_NAME.sub("_", label.lower())


def _bigger(j: int, i: int, size: list[int]) -> int:
    """``j`` if that group is bigger than the loose child ``i`` (a call holding the model
    itself is not a loose op of a smaller group), else ``i``: it stays."""
    return j if size[j] > size[i] else i


def _place(h: Hierarchy, kids: list[Member], moved: list[int], home: list[int],
           where: dict[str, int]) -> None:
    """Put each moved child into the lowest group of its new home holding what it is wired to.

    Its neighbours in the home count where they are; a neighbour in the model, seen from the
    gradient scope, counts as its mirror (``gradient_tape/<its scope>``) where that exists;
    a neighbour adopted too counts where it went (a second pass, for chains of them).
    """
    succ, pred, ops = h.model.g.succ, h.model.g.pred, h.ops
    gradients = {parts.gradients for parts in h.training.values()}
    spots: dict[int, Group | None] = {}
    later: dict[int, list[int]] = {}
    for i in moved:
        top = kids[home[i]]
        assert isinstance(top, Group)
        spot: Group | None = None
        for op in _unit_ops(kids[i]):
            for v in (*pred[op.name], *succ[op.name]):
                j = where.get(v)
                if j is None or j == i:
                    continue
                if j == home[i]:
                    at: Group | None = ops[v].parent  # type: ignore[assignment]
                elif home[j] != j:  # adopted too: counted where it goes, below
                    later.setdefault(i, []).append(j)
                    continue
                elif top in gradients:
                    at = _mirror(h, top, ops[v].parent)  # type: ignore[arg-type]
                else:
                    continue
                if at is not None:
                    spot = at if spot is None else _common(spot, at)
        spots[i] = spot
    for i in moved:
        for j in later.get(i, ()):
            at = spots.get(j)
            if at is not None and home[j] == home[i]:
                spot = spots[i]
                spots[i] = at if spot is None else _common(spot, at)
    for i in moved:
        m, into = kids[i], spots[i] or kids[home[i]]
        assert isinstance(into, Group)
        m.parent = into
        m.depth = into.depth + 1
        into._children.append(m)
        if isinstance(m, Group):
            fix_depths(m)


def _mirror(h: Hierarchy, gradients: Group, scope: Group) -> Group | None:
    """The deepest group of ``gradients`` named after ``scope`` or one of its ancestors
    (``gradient_tape/resnet50_1/conv2_block1_add`` for ``resnet50_1/conv2_block1_add``)."""
    while scope is not None and scope.name:
        found = h.groups.get(f"{gradients.name}/{scope.name}")
        if found is not None:
            return found
        scope = scope.parent  # type: ignore[assignment]
    return None


def fold_metrics(h: Hierarchy) -> None:
    """A training step's loose ops that update metrics go into one group, ``metrics``; those
    that count the optimizer's steps go into the optimizer.

    What Keras 3's ``fit`` runs tracks the loss and the compiled metrics with ops named at the
    step's top level (``Sum``, ``Cast_2``, ``AssignVariableOp_1``, ``div_no_nan``): a few dozen
    loose boxes around the model, and enough of them that the model could not open within the
    first picture's budget.  Whatever :func:`adopt_loose_ops` left loose in a step, other than
    its inputs and results, is that bookkeeping when one of its ops writes a variable; it is
    folded into one invented group (kind ``metrics``), which the convexity repair dissolves
    again should it lie on a loop.  An optimizer's step counter is incremented there too
    (``Const`` → ``Cast`` → ``Add`` → ``AssignVariableOp``, once per optimizer: a GAN's two
    made eight loose boxes); it is no metric, and joins the optimizer that reads it.
    """
    nodes = h.model.g.node_data
    for container, parts in list(h.training.items()):
        kids = container._children
        optimizers = parts.optimizers or (parts.optimizer,)
        state = _counters(h, kids, parts, optimizers)
        downstream = [c for c in _downstream_loose(h, kids, parts) if c not in state]
        state.update(_optimizer_state(h, downstream, optimizers))
        for member, optimizer in state.items():
            member.parent = optimizer
            optimizer._children.append(member)
        loose = [c for c in downstream if c not in state]
        kids = container._children = [c for c in kids if c not in state]
        if len(loose) < 2 or not any(nodes[op.name]["op"] in _VARIABLE_WRITES
                                     for c in loose for op in _unit_ops(c)):
            continue
        name = f"{container.name}/{METRICS_KIND}" if container.name else METRICS_KIND
        if name in h.groups or name in h.ops:
            continue
        group = Group(name, h, container, container.depth + 1, kind=METRICS_KIND)
        gone = {id(c) for c in loose}
        reparent(loose, group)
        h.groups[name] = group
        container._children = [c for c in kids if id(c) not in gone] + [group]


#: The most ops a step counter has (``Const``, ``Cast``, the handle, its read, ``Add``, the
#: write).
_COUNTER_OPS = 8


def _counters(h: Hierarchy, kids: list[Member], parts: TrainingParts,
              optimizers: tuple[Group, ...]) -> dict[Member, Group]:
    """The children of a step that count an optimizer's steps though the optimizer never
    reads the count (SGD at a constant rate): a few ops that read nothing but one another
    (the counter's handle and constants are among them), write a variable, and feed only
    that optimizer (the control edge that orders its updates after the count) -> that
    optimizer.  Keras' step counter (``Add``, 6 ops with its ``Const``, ``Cast`` and
    ``AssignVariableOp``) stood loose at the top of a U-Net's step, beside the model."""
    named = {parts.gradients, parts.optimizer, parts.model, *parts.models, *optimizers}
    owner = {m.name: optimizer for optimizer in optimizers for m in op_members(optimizer)}
    pred, succ, nodes = h.model.g.pred, h.model.g.succ, h.model.g.node_data
    found: dict[Member, Group] = {}
    for c in kids:
        if c in named or (isinstance(c, Group) and c.kind != "scope"):
            continue
        ops = _unit_ops(c)
        names = {op.name for op in ops}
        if len(ops) > _COUNTER_OPS or not any(nodes[n]["op"] in _VARIABLE_WRITES
                                                 for n in names) \
                or any(u not in names for n in names for u in pred[n]):
            continue
        targets = {owner.get(v) for n in names for v in succ[n] if v not in names}
        if len(targets) == 1 and None not in targets:
            found[c] = targets.pop()  # type: ignore[assignment]
    return found


def _optimizer_state(h: Hierarchy, loose: list[Member], optimizers: tuple[Group, ...]
                     ) -> dict[Member, Group]:
    """The members of ``loose`` that write a variable an optimizer reads (its step counter),
    and what feeds only them -> that optimizer.  What is left of ``loose`` still feeds nothing
    outside it but results: the writes taken feed only those."""
    model, nodes, succ = h.model, h.model.g.node_data, h.model.g.succ
    owner = {m.name: optimizer for optimizer in optimizers for m in op_members(optimizer)}
    ops = {op.name: c for c in loose for op in _unit_ops(c)}
    state: dict[Member, Group] = {}
    for name, c in ops.items():
        handle = model.input_tensor(name) if nodes[name]["op"] in _VARIABLE_WRITES else None
        reader = min((owner[v] for v in succ[handle[0]] if v in owner),
                     key=lambda g: g.name, default=None) if handle is not None else None
        if reader is not None:
            state.setdefault(c, reader)
    changed = bool(state)
    while changed:  # what feeds data only to what is taken goes with it
        changed = False
        for c in loose:
            if c in state:
                continue
            fed = {ops[v] for op in _unit_ops(c) for v, keys in succ[op.name].items()
                   if v in ops and any(d["kind"] != CONTROL for d in keys.values())} - {c}
            if fed and fed <= state.keys():
                state[c] = min((state[f] for f in fed), key=lambda g: g.name)
                changed = True
    return state


def _downstream_loose(h: Hierarchy, kids: list[Member], parts: TrainingParts
                      ) -> list[Member]:
    """The loose children (not inputs, results, calls or the step's ``parts``) whose outputs
    feed only each other or the step's results: what serves the loss and the gradients (the
    batch size, the seed of the gradients) is left out, so the group they make is convex (no
    path leaves it and comes back).  A part is never loose, however small: an optimizer of
    two updates was put into itself, a cycle no walk of the tree came out of."""
    named = {parts.gradients, parts.optimizer, parts.model, *parts.models, *parts.optimizers}
    where = child_index(kids)
    succ = h.model.g.succ
    nodes = h.model.g.node_data
    feeds = {i: {where.get(v) for op in _unit_ops(c) for v in succ[op.name]} - {i, None}
             for i, c in enumerate(kids)}
    # A result leaves the step: an output op feeding nothing in it (a body's results feed
    # the call's consumers, outside).
    # Loose children, and scopes as small whatever their names (``Cast_2`` holding only
    # ``Cast_2/ReadVariableOp``: TensorFlow made no cast for a variable of the same dtype).
    loose = {i for i, c in enumerate(kids) if c not in named
             and not (isinstance(c, Group) and c.kind == "function")
             and (_loose(h, c) or (isinstance(c, Group) and c.kind == "scope"
                                   and len(c._children) <= _LOOSE_SCOPE_OPS
                                   and not any(isinstance(m, Group) for m in c._children)))}
    results = {i for i in loose if _anchored(h, kids[i]) or (
        isinstance(kids[i], OpNode) and nodes[kids[i].name]["op"] in _OUTPUT_OPS
        and not feeds[i])}
    chosen = loose - results
    changed = True
    while changed:  # drop what feeds anything but the chosen and the results, until none does
        changed = False
        for i in sorted(chosen):
            if not feeds[i] <= chosen | results:
                chosen.discard(i)
                changed = True
    return [kids[i] for i in sorted(chosen)]
