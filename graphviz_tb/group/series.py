"""Series: runs of numbered siblings (``add_1 ... add_40``, ``layer_1 ... layer_12``) and of alike
blocks folded into one group, where that draws no loop."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from .dataflow import local_graph
from .partition import cyclic_parts
from .tree import (
    DIGITS,
    Group,
    Hierarchy,
    Member,
    OpNode,
    dissolve,
    fix_depths,
    free_name,
    ordered,
    reparent,
)

if TYPE_CHECKING:
    from .templates import Templates


NUMBERED = re.compile(r"^(.*?)(_?)(\d+)$")


def split_number(label: str) -> tuple[str, int]:
    """``add_3`` -> (add, 3), ``block12`` -> (block, 12), ``add`` -> (add, 0)."""
    if not label[-1:].isdecimal():  # most labels: no regex (``\d`` is exactly isdecimal)
        return label, 0
    m = NUMBERED.match(label)
    return (m.group(1), int(m.group(3))) if m and m.group(1) else (label, 0)


#: A module's label as a format writes it: its path, then its kind in brackets
#: (``layer3.1 (Bottleneck)``, PyTorch's and the dynamo ONNX exporter's).
_KIND = re.compile(r"(.*\S)( \([^()]*\))")


def split_kind(label: str) -> tuple[str, str]:
    """``layer3.1 (Bottleneck)`` -> (``layer3.1``, `` (Bottleneck)``); a label without a kind
    -> (label, "").  The number of a numbered module is its path's: ``layer3.1`` to
    ``layer3.5`` are a series with or without the class beside them."""
    if not label.endswith(")"):
        return label, ""
    m = _KIND.fullmatch(label)
    return (m.group(1), m.group(2)) if m else (label, "")


def _base(label: str) -> str:
    """What numbered siblings of one series share: the path without its number, and the
    kind (``layer3. (Bottleneck)``)."""
    path, kind = split_kind(label)
    return split_number(path)[0] + kind


def _separator(labels: list[str]) -> str:
    """``_`` when the numbered names use one (``add_1``), else nothing (``block2``)."""
    return "_" if any((m := NUMBERED.match(x)) and m.group(2) for x in labels) else ""


def _runs(numbers: list[tuple[int, Member]], minimum: int) -> list[list[tuple[int, Member]]]:
    """Split sorted (number, member) pairs into runs of consecutive numbers, long enough."""
    runs: list[list[tuple[int, Member]]] = []
    current: list[tuple[int, Member]] = []
    for n, m in numbers:
        if current and n != current[-1][0] + 1:
            runs.append(current)
            current = []
        current.append((n, m))
    runs.append(current)
    return [r for r in runs if len(r) >= minimum]


def make_series(h: Hierarchy, parent: Group, clusters: dict[Any, list], minimum: int) -> bool:
    made = False
    for _, members in sorted(clusters.items(), key=lambda kv: str(kv[0])):
        paths = [split_kind(m.label)[0] for m in members]
        numbered = sorted(((split_number(path)[1], m) for path, m in zip(paths, members,
                                                                         strict=True)),
                          key=lambda t: t[0])
        if len({n for n, _ in numbered}) != len(numbered):
            continue
        sep = _separator(paths)
        base, kind = split_number(paths[0])[0], split_kind(members[0].label)[1]
        for run in _runs(numbered, minimum):
            lo, hi = run[0][0], run[-1][0]
            label = f"{base}{sep}[{lo}-{hi}]"
            full = f"{parent.name}/{label}" if parent.name else label
            if full in h.groups:
                continue
            # Made while settling: settled, its members being what was compared.
            series = Group(full, h, parent, parent.depth + 1, kind="series",
                           settled=h.settler is not None)
            series.label = label + kind  # named by the path, labelled with the kind too
            ms = [m for _, m in run]
            gone = set(ms)
            parent._children = [c for c in parent._children if c not in gone]
            reparent(ms, series)
            parent._children.append(series)
            h.groups[full] = series
            h.series_made.append(parent)
            made = True
    return made


def drop_looping_series(h: Hierarchy, group: Group) -> None:
    """Dissolve the scope series just made in ``group`` that would sit on a loop of its
    picture (members that feed each other through siblings outside the series)."""
    kids = group._children
    part = [i if isinstance(c, Group) and c.kind == "series" else -1
            for i, c in enumerate(kids)]
    meet = h.meetings()
    bad = cyclic_parts(local_graph(h, group, meet)[0], part)
    if not bad:
        return
    kept: list[Member] = []
    for i, c in enumerate(kids):
        if i in bad:
            dissolve(h, c)  # type: ignore[arg-type]
            meet.move(c, group)  # type: ignore[arg-type]
            kept.extend(c._children)  # type: ignore[attr-defined]
        else:
            kept.append(c)
    group._children = kept


def series_label(labels: list[str]) -> str | None:
    """One label for a run of alike names that differ only in their numbers:
    ``… normal_concat_0_1`` ... ``… normal_concat_5_1`` -> ``… normal_concat_[0-5]_1``.
    None when the names differ otherwise."""
    split = [DIGITS.split(x) for x in labels]
    if len({len(p) for p in split}) != 1 or any(p[0::2] != split[0][0::2] for p in split):
        return None
    out = list(split[0])
    for k in range(1, len(out), 2):
        values = [int(p[k]) for p in split]
        if len(set(values)) > 1:
            out[k] = f"[{min(values)}-{max(values)}]"
    return "".join(out)


def op_series(h: Hierarchy, minimum: int) -> None:
    for group in list(h._raw_groups()):
        children = group._children
        # A series has at least ``minimum - 1`` numbered names (one may be unnumbered, as
        # number 0): most groups have fewer, and are passed over without grouping names.
        if len(children) < minimum or sum(
                m.label[-1:].isdecimal() for m in children) < minimum - 1:
            continue
        clusters: dict[tuple[str, str], list[Member]] = defaultdict(list)
        for m in group._children:
            if isinstance(m, OpNode) and m.role == "op":
                base, _ = split_number(m.label)
                clusters[(base, m.op)].append(m)
        candidates = {k: v for k, v in clusters.items() if len(v) >= minimum}
        if candidates:
            make_series(h, group, candidates, minimum)


def settle_level(h: Hierarchy, templates: Templates, group: Group) -> None:
    """Make one group's scope series: runs of at least ``series_min`` numbered sibling groups
    with one base name, one op count and one structure, and runs of as many alike blocks in a
    row; a series that would sit on a loop of the picture is not made.

    Only those candidates are compared (:meth:`~graphviz_tb.group.templates.Templates.classes`,
    which seldom needs templates); the rest of the children are left as they are.
    """
    minimum = h.series_min
    if minimum is None or len(group._children) < minimum:
        return
    made = _block_series(h, templates, group, minimum)
    named: dict[tuple[str, int], list[Group]] = defaultdict(list)
    for m in group._children:  # as the block series left them: a block joins one series
        if isinstance(m, Group) and m.kind != "series":
            named[(_base(m.label), m.op_count)].append(m)
    candidates: dict[tuple[str, tuple[int, int]], list[Member]] = {}
    for (base, count), members in named.items():
        if len(members) >= minimum:
            for i, same in enumerate(templates.classes(members)):
                if len(same) >= minimum:
                    candidates[(base, (count, i))] = list(same)
    scope_series = bool(candidates) and make_series(h, group, candidates, minimum)
    if not (made or scope_series):
        return
    h.meetings().settle(h, group, [c for c in group._children if isinstance(
        c, Group) and c.kind == "series"])
    # A block series too: alike blocks with another op between them (Inception's pooling)
    # would be drawn as a loop through the series.
    drop_looping_series(h, group)
    for series in group._children:
        if isinstance(series, Group) and series.kind == "series" and not series.op_count:
            inside = series._children
            series.op_count = sum(c.op_count for c in inside)  # type: ignore[attr-defined]
            series.op_hash = sum(c.op_hash for c in inside)  # type: ignore[attr-defined]
            fix_depths(series)  # its members moved one level down
    group._children = ordered(group._children)


def _block_series(h: Hierarchy, templates: Templates, group: Group, minimum: int) -> bool:
    """Fold runs of at least ``minimum`` alike blocks in a row (in dataflow order, so the
    series is convex) into series, such as NASNet's normal cells between reductions."""
    order = [b for b in h.block_order.get(group, ()) if b.parent is group]
    if len(order) < minimum:
        return False
    # Classes, not templates: alike blocks built by the same code are told apart by their
    # forms, which cost far less to decide than the templates of big cells.
    kind: dict[Group, int] = {}
    for i, same in enumerate(templates.classes(order)):
        kind.update(dict.fromkeys(same, i))
    runs: list[list[Group]] = []
    for b in order:
        if runs and kind[runs[-1][-1]] == kind[b]:
            runs[-1].append(b)
        else:
            runs.append([b])
    made = False
    for run in runs:
        if len(run) < minimum:
            continue
        first = order.index(run[0]) + 1
        label = series_label([b.label for b in run]) or \
            f"block[{first}-{first + len(run) - 1}]"
        full = free_name(h, f"{group.name}/{label}" if group.name else label)
        series = Group(full, h, group, group.depth + 1, kind="series", settled=True)
        gone = set(run)
        group._children = [c for c in group._children if c not in gone]
        reparent(list(run), series)
        group._children.append(series)
        h.groups[full] = series
        h.series_made.append(group)
        made = True
    return made
