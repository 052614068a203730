"""Which part of the hierarchy a picture shows: the groups drawn open, and ``--focus``.

A picture never lays out the whole tree.  This stage decides what is visible: the groups open
at ``--depth``, those ``--expand`` names (and their ancestors), all with ``--expand-all``,
minus ``--collapse``; with ``--focus``, only the neighbourhood of one op or group; and always
the groups holding an op where shape inference failed, so the failure is in view.

Given none of those, the first picture opens groups by itself until it is an overview
(:func:`auto_open`): a Keras model is one scope under the root, and showing that one box
teaches nothing.
"""

from __future__ import annotations

import difflib
import fnmatch
import heapq
import re
import warnings
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from ..errors import GraphvizTbError, GraphvizTbWarning, InputError
from ..group.replicas import REPLICA_KIND
from ..group.training import is_bookkeeping
from ..group.tree import Group, Hierarchy, Member, OpNode, is_section
from ..group.variables import VARIABLES_KIND
from ..model.costs import metric_of
from ..picture import DiffTally, Picture, Totals

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..model.costs import CostSet
    from ..options import ViewOptions

__all__ = ["auto_open", "choose_picture", "expanded_groups", "focus_members"]

#: Fewer visible boxes than this is not yet an overview: the biggest group that fits opens.
OVERVIEW_MIN = 12
#: Nor is a picture in which one closed box holds more than this share of the ops.
OVERVIEW_SHARE = 1 / 8
#: The first picture opens groups no deeper than this (scopes nested thousands deep exist).
AUTO_DEPTH = 8


def _matches(name: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def expanded_groups(h: Hierarchy, options: ViewOptions, focus_ops: set[str] | None = None,
                    weigh: Callable[[Group], int] | None = None) -> frozenset[Group]:
    """The groups drawn open: the root, those within ``depth``, those matching ``expand`` (and
    their ancestors), all with ``expand_all``, minus those matching ``collapse``.

    Depth alone is answered top-down, reading only the children of open groups; a pattern can
    name any group and a focus any op, so those read every group.  ``weigh`` aims the
    default view (see :func:`auto_open`): a diff's pictures pass :meth:`DiffTally.changes`.
    """
    opened: set[Group] = {h.root}
    depth = options.depth if options.depth is not None else 1
    if options.depth is None and not (options.expand_all or options.expand):
        opened = auto_open(h, options.budget, weigh)
    elif options.expand_all or options.expand or focus_ops:
        unmatched = set(options.expand)
        for group in h.all_groups():
            if group is h.root:
                continue
            if options.expand_all or group.depth < depth:
                opened.add(group)
            if options.expand and _matches(group.name, options.expand):
                opened.add(group)
                opened.update(group.ancestors())
                unmatched -= {p for p in unmatched if fnmatch.fnmatchcase(group.name, p)}
        for pattern in sorted(unmatched):
            _warn_unmatched(h, pattern, "--expand")
    else:
        stack = [h.root]
        while stack:
            for c in stack.pop().children:
                if isinstance(c, Group) and c.depth < depth:
                    opened.add(c)
                    stack.append(c)
    if focus_ops:
        for name in focus_ops:
            opened.update(h.ops[name].ancestors())
    if options.collapse:
        unmatched = set(options.collapse)
        for group in h.all_groups():
            if not unmatched:
                break
            if group is not h.root:
                unmatched -= {p for p in unmatched if fnmatch.fnmatchcase(group.name, p)}
        for pattern in sorted(unmatched):
            _warn_unmatched(h, pattern, "--collapse")
        opened = {g for g in opened if g is h.root or not _matches(g.name, options.collapse)}
    # A group is visible only if all its ancestors are open.
    return frozenset(g for g in opened if all(a in opened for a in g.ancestors()))



def _warn_unmatched(h: Hierarchy, pattern: str, option: str) -> None:
    """Say that an ``--expand`` or ``--collapse`` pattern matched nothing, and name groups it
    may have meant (a pattern is matched against full names: ``resnet50_1/conv2*``, not
    ``conv2*``)."""
    stem = pattern.strip("*?[]/")
    near = difflib.get_close_matches(stem, [g.label for g in h.groups.values()], n=3, cutoff=0.5)
    names = sorted({g.name for g in h.groups.values() if g.label in near})[:3]
    hint = f"; groups with a name like it: {', '.join(names)}" if names else ""
    warnings.warn(f"{option} {pattern!r} matches no group (patterns match full names, "
                  f"scope/name){hint}", GraphvizTbWarning, stacklevel=3)


def auto_open(h: Hierarchy, budget: int, weight: Callable[[Group], int] | None = None
              ) -> set[Group]:
    """The groups a first picture opens by itself, biggest first (by op count).

    A group opens when the picture stays within ``budget`` boxes with it open, and either it
    holds more than :data:`OVERVIEW_SHARE` of all ops (a box that big hides the structure an
    overview is for: NASNet-Large's cells, ResNet-50's blocks) or the picture is not yet an
    overview (fewer than :data:`OVERVIEW_MIN` boxes).  Bookkeeping groups (``save``,
    ``init``, summaries) never open by themselves, nor groups deeper than
    :data:`AUTO_DEPTH`, nor a group cut into sections unless it holds more than half the
    ops: its boxes would be numbered slices (``[1–200 of 611]``), which show no structure
    and spend the budget (NASNet-Large's ``train/gradients`` would take it from the model's
    cells).  In a TF2 training step (:attr:`Hierarchy.training`) the model opens first,
    whatever its share, and so does a part of it holding more than half of it; the
    optimizer never opens by itself, and the gradients only when they hold more than half
    the ops, after the rest.  Only the children of groups met on the way are read.

    With ``weight`` (a diff: how many changed ops a group holds, nothing for one wholly added
    or removed, which reads best closed), groups open by that weight
    instead, every one that holds any and fits, so nothing must be opened to find a change.
    """
    opened = {h.root}
    total = max(1, h.root.op_count)
    visible = len(h.root.children)
    # Queued as (rank, -size, name, group).  A training step's model comes first (rank -1,
    # opened whatever its share: the optimizer often outweighs it); its gradients and
    # optimizer mirror it, and wait for a click (rank 2), but gradients holding more than half
    # the ops (a box that big is no overview) open after the rest (rank 1), and the optimizer
    # never opens by itself (the step's bookkeeping).
    queue: list[tuple[int, int, str, Group]] = []
    measure = weight or (lambda g: g.op_count)
    parts = h.training.values() if weight is None else ()
    gradients = {p.gradients for p in parts}
    optimizers = {o for p in parts for o in p.optimizers or (p.optimizer,)}
    models = {m for p in parts for m in p.models or (p.model,)}

    def offer(group: Group, late: bool) -> None:
        if group.depth >= AUTO_DEPTH:
            return
        for c in group.children:
            if isinstance(c, Group) and c.op_count > 1 and c not in optimizers and (
                    weight is not None or (not is_bookkeeping(c.label)
                                           and not _saves_checkpoints(c)
                                           and c.kind != VARIABLES_KIND)):
                size = measure(c)
                if size > 0:
                    # A part holding most of a model opens with it: closed, it would hide
                    # the model's architecture however small the model is.
                    rank = -1 if c in models or _wrapped(group, c) or (
                        group in models and 2 * c.op_count > group.op_count) else \
                        0 if not (late or c in gradients) else \
                        1 if 2 * c.op_count > total else 2
                    heapq.heappush(queue, (rank, -size, c.name, c))

    offer(h.root, False)
    while queue:
        rank, _, _, g = heapq.heappop(queue)
        if rank == 2:
            continue
        children = g.children
        small = g.op_count <= OVERVIEW_SHARE * total and visible >= OVERVIEW_MIN
        if rank == 0 and weight is None and small \
                and not (g.parent in h.training and _one_group(h, children)):
            continue  # what is left is small, and the picture is an overview already
        grown = visible - 1 + len(children)
        # Gradients holding more than half the ops (plain SGD's step) open after the model,
        # and may take twice the budget: one box of most of the graph is no overview.
        limit = 2 * budget if rank == 1 else budget
        if grown > limit or (weight is None and is_section(children[0])
                              and 2 * g.op_count <= total):
            continue
        opened.add(g)
        visible = grown
        offer(g, rank > 0)
    return opened


def _wrapped(group: Group, child: Group) -> bool:
    """Is ``child`` what a function mostly wraps (a SavedModel's signature function calls the
    model's function, whose body is the model's scope)?  It opens with the function, as a
    training step's model does."""
    return group.kind == "function" and 2 * child.op_count > group.op_count


def _one_group(h: Hierarchy, children: list[Member]) -> bool:
    """Is a group's only child a scope of its own (``compile_loss`` holding only
    ``sparse_categorical_crossentropy``, in what Keras 3's ``fit`` runs)?  Opening a part of
    a training step that wraps its loss costs no box and names the loss.
    A scope named after its op (``conv1/convolution``, the op and its inputs), or as the group
    is (``dropout/dropout``), names nothing new."""
    if len(children) != 1 or not isinstance(children[0], Group):
        return False
    child = children[0]
    return child.name not in h.ops and child.label != child.parent.label  # type: ignore[union-attr]


#: The functions a SavedModel traces to save and restore its variables.
_CHECKPOINT_FUNCTIONS = re.compile(r"(^|_)traced_(save|restore)(_\d+)?$")


def _saves_checkpoints(g: Group) -> bool:
    """Is this the body of a SavedModel's save or restore function (bookkeeping too)?"""
    return g.kind == "function" and any(
        _CHECKPOINT_FUNCTIONS.search(f.strip()) for f in (g.function or "").split(","))


def _ops_in(member: Member) -> list[str]:
    if isinstance(member, OpNode):
        return [member.name]
    assert isinstance(member, Group)
    return [m.name for m in member.walk() if isinstance(m, OpNode)]


def focus_members(h: Hierarchy, name: str, radius: int) -> tuple[set[Member], set[str]]:
    """Members to draw for ``--focus name --radius K``: the ops within K hops (either
    direction) of the focus, and every group containing one."""
    member = h.lookup(name)
    if member is None:
        close = sorted(n for n in h.ops if name in n)[:5] or difflib.get_close_matches(
            name, [*h.groups, *h.ops], n=3)
        hint = f"; did you mean: {', '.join(close)}" if close else ""
        raise GraphvizTbError(f"--focus {name!r}: no op or group of that name{hint}")
    g = h.model.g
    frontier = set(_ops_in(member))
    seen = set(frontier)
    for _ in range(radius):
        nxt: set[str] = set()
        for n in frontier:
            nxt.update(g.predecessors(n))
            nxt.update(g.successors(n))
        frontier = nxt - seen
        seen |= frontier
    keep: set[Member] = set()
    for n in seen:
        op = h.ops[n]
        keep.add(op)
        keep.update(op.ancestors())
    return keep, seen


def _shape_error_groups(h: Hierarchy) -> frozenset[Group]:
    """Groups holding an op where shape inference failed: opened so the failure is in view."""
    failed = [name for name in h.model.shape_error_ops() if name in h.ops]
    return frozenset(group for name in failed for group in h.ops[name].ancestors())


def choose_picture(h: Hierarchy, options: ViewOptions, costs: CostSet | None = None, *,
                   page: bool = False, name: str = "the graph", alone: bool = True) -> Picture:
    """The picture ``options`` ask for (see the module docstring): what is open and kept, the
    colouring and what it needs, decided here once for the layout and both writers.

    A picture coloured by a recorded cost needs ``costs`` (the run's steps; memory needs a
    step that recorded it), or the graph ``name`` is refused in one line saying how to record
    them; a graph not ``alone`` (one of a logdir's page, beside others that have costs) is
    shown in the colourings it has.  A static picture adds each box's cost to its
    second line; the viewer's ``page`` colours by cost itself, from the costs it embeds.  A
    diff's boxes say what changed when the colouring is by change.
    """
    metric = metric_of(options.color_by)
    totals = None
    if metric is not None and alone:
        if costs is None:
            raise InputError(
                f"{name}: --color-by {options.color_by} needs recorded costs, and there are "
                "none for this graph; record them with RunOptions(trace_level=FULL_TRACE) and "
                "FileWriter.add_run_metadata, or Keras' TensorBoard(profile_batch=...) "
                "callback, or pass --run-metadata FILE")
        if metric == "memory" and not costs.current.memory:
            raise InputError(f"{costs.current.name} holds timings only (a profiler capture "
                             "has no memory per op); colour by compute-time")
        if not page:
            totals = Totals(h, costs.current, metric)
    tally = DiffTally(h) if options.color_by == "diff" or h.model.is_diff else None
    keep = focus_ops = None
    if options.focus:
        keep, focus_ops = focus_members(h, options.focus, options.radius)
    colouring = Picture(frozenset(), keep, options.color_by, totals, tally)
    changes = colouring.diff
    weigh = changes.opening if changes is not None else None
    notes = totals.label if totals is not None else changes.note if changes is not None \
        else None
    expanded = expanded_groups(h, options, focus_ops, weigh) | _shape_error_groups(h)
    return replace(colouring, expanded=expanded, notes=notes,
                   titles=totals.label if totals is not None else None,
                   lead=_lead(h, expanded, keep))


def _lead(h: Hierarchy, expanded: frozenset[Group], keep: set[Member] | None) -> Group | None:
    """The open group a first view should show: a training step's model (the biggest, when
    a step trains several; a distributed step's first replica, though TensorFlow gives the
    others a few more ops), else an open group holding more than half the ops (an inference
    graph's model, or the function that wraps it).  A step's top is its plumbing (outputs,
    ``NoOp``, the optimizer): shown first, the model started below the fold."""
    shown = [g for g in expanded if g is not h.root and (keep is None or g in keep)]
    models = {m for p in h.training.values() for m in p.models or (p.model,)}
    for candidates in ([g for g in shown if g in models],
                       [g for g in shown if 2 * g.op_count > h.root.op_count]):
        if candidates:
            return max(candidates, key=lambda g: (g.kind == REPLICA_KIND, g.op_count,
                                                  -g.depth, g.name))
    return None
