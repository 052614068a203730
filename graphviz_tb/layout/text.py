"""What each box and edge says, and so how big it is: a collapsed member's label lines and size,
an edge's shape label and width.  Both writers draw these words, and the layout sizes them."""

from __future__ import annotations

import math
from functools import cache
from itertools import islice
from typing import TYPE_CHECKING

from ..group.tree import AggEdge, Group, Member, OpNode
from ..model.graph import CONTROL, tensor_of
from ..model.shapes import format_shape, tensor_bytes, unknown_why
from ..style import CHAR_WIDTH, LABEL_BREAKS, MAX_LINE, WRAP, WRAP_MOST

if TYPE_CHECKING:
    from ..group.tree import Hierarchy
    from ..model.shapes import TensorInfo

__all__ = ["MAX_EDGE_LABEL", "WEIGHED", "Carried", "carried_tensors", "counted", "edge_look",
           "group_box", "group_lines", "label_lines", "leaf_size", "look_of", "outline",
           "tensor_lines", "text_width"]


#: Longest edge label drawn (a shape such as ``?×224×224×3`` is far shorter).
MAX_EDGE_LABEL = 40


#: An edge's width weighs at most this many of the tensors it carries.
WEIGHED = 64


def text_width(text: str, size: float) -> float:
    return len(text) * size * CHAR_WIDTH


def _is_const(m: OpNode) -> bool:
    return m.op in ("Const", "HostConst")


#: A line may end after one of these: the separators of TensorFlow's generated names.
_BREAKS = frozenset(LABEL_BREAKS)


def label_lines(label: str) -> list[str]:
    """The lines a box shows its name on: one, or two for a name longer than
    :data:`~graphviz_tb.style.WRAP`,
    broken after the separator (or between the words of ``CamelCase``) nearest the middle, at
    the middle when none is within a quarter of the length; a block's name (``first … last``)
    breaks after its ``…`` when that is within a quarter.

    TF2 names the arguments a function captures after the op that reads them
    (``keras_cnn_1_conv_a_1_convolution_readvariableop_resource``): a row of them on one line
    each made keras_cnn's first picture 3,569 px wide.  The viewer wraps rule for rule
    (``labelLines`` in draw.js); the box sizes it draws come from here.
    """
    if len(label) <= WRAP:
        return [label]
    if len(label) > WRAP_MOST:
        label = label[:WRAP_MOST - 1] + "…"
    mid = len(label) // 2
    best = -1
    for i in range(1, len(label)):
        if (label[i - 1] in _BREAKS or (label[i - 1].islower() and label[i].isupper())) \
                and abs(i - mid) < abs(best - mid):
            best = i
    block = label.find(" … ") + 3  # a block named by its first and last members: between them
    if block > 2 and abs(block - mid) <= len(label) // 4:
        best = block
    cut = best if abs(best - mid) <= len(label) // 4 else mid
    return [label[:cut], label[cut:]]


def leaf_size(m: Member, note: str | None = None) -> tuple[float, float, tuple[str, ...]]:
    """Size in points and label lines of a collapsed member.

    ``note`` joins the second line (an op's type, a group's op count): what the member cost
    when colouring by cost.  A constant has one small line, and the note below it.
    """
    if isinstance(m, OpNode):
        if _is_const(m):
            lines: tuple[str, ...] = (m.label, note) if note else (m.label,)
            width = max(text_width(t, 8) for t in lines) + 14
            return max(36.0, width), 30.0 if note else 20.0, lines
        second = _with_note(m.op, note) if note else m.op
        lines = (m.label, second) if second != m.label else (m.label,)
        name = label_lines(m.label)
        w = max(*(text_width(t, 10) for t in name), text_width(second, 8)) * 1.15 + 24
        return (max(54.0, w), (36.0 if len(lines) == 2 else 28.0) + 12.0 * (len(name) - 1),
                lines)
    assert isinstance(m, Group)
    lines = group_lines(m, note)
    return (*group_box(lines), lines)


def group_lines(g: Group, note: str | None = None) -> tuple[str, str]:
    """A collapsed group's two lines: its label, and its caption or ``note``."""
    return g.label, _with_note(_op_count(g), note) if note else _group_caption(g)


def group_box(lines: tuple[str, str]) -> tuple[float, float]:
    """The size in points of a collapsed group showing ``lines`` (:func:`group_lines`): the
    lines alone decide it, so a big graph's repeated groups can be sized once."""
    name = label_lines(lines[0])
    w = max(*(text_width(t, 10) for t in name), text_width(lines[1], 8)) + 24
    return max(64.0, w), 40.0 + 12.0 * (len(name) - 1)


def _with_note(head: str, note: str) -> str:
    """``head · note`` within :data:`MAX_LINE`, the head cut rather than the note: a long op
    type (``SparseSoftmaxCrossEntropyWithLogits``) cut its time's share off."""
    line = f"{head} · {note}"
    if len(line) <= MAX_LINE:
        return line
    return f"{head[:max(1, MAX_LINE - len(note) - 4)]}… · {note}"


#: Ops that stand for a variable (see :mod:`graphviz_tb.group.variables`).
_HANDLES = frozenset({"VarHandleOp", "Placeholder", "_Arg"})


def _op_count(g: Group) -> str:
    """``12 ops``, or ``9 layers`` in a Keras layer graph."""
    return counted(g.op_count, g.owner.model.unit)


@cache
def counted(n: int, unit: str) -> str:
    """``1 op``, ``2 ops``, ``1,200 layers`` (remembered: a big graph's groups repeat a few
    thousand counts)."""
    return f"{n:,} {unit}" + ("s" if n != 1 else "")


def _group_caption(g: Group) -> str:
    """The second line of a collapsed group: its op count first (a long function name may be
    cut, the count never is), then what kind of group it is."""
    ops = _op_count(g)
    if g.kind == "series":
        kinds = {c.op for c in g.children if isinstance(c, OpNode)}
        if len(kinds) == 1 and all(isinstance(c, OpNode) for c in g.children):
            return f"{ops} · {len(g.children)} × {next(iter(kinds))}"
        return f"{ops} · {len(g.children)} blocks"
    if g.kind == "function" and g.function:
        return f"{ops} · ƒ {g.function}"
    if g.kind == "variables":  # resource handles: arguments count no ops
        handles = sum(1 for m in g.walk() if isinstance(m, OpNode) and m.op in _HANDLES)
        return f"{handles:,} handles" if not g.op_count else f"{ops} · {handles:,} handles"
    return ops


#: The distinct tensors an edge carries (see :func:`carried_tensors`).
Carried = dict[tuple[str, int], tuple[str, str, int]]


def carried_tensors(h: Hierarchy, agg: AggEdge) -> Carried:
    """The distinct tensors an aggregated edge carries, each ``(producer, output index)``
    with one model edge that carries it.

    One tensor read by several consumers inside a group is one tensor, not several: labels
    and widths count what travels, not how many ops read it.
    """
    flat = agg.flat  # the edges' dicts beside their ends: no lookup, no tuple per edge
    out: dict[tuple[str, int], tuple[str, str, int]] = {}
    for j in range(0, len(flat), 4):
        data = flat[j + 3]
        if data["kind"] != CONTROL:
            u = flat[j].name
            out.setdefault(tensor_of(u, data), (u, flat[j + 1].name, flat[j + 2]))
    return out


def edge_look(h: Hierarchy, agg: AggEdge, *, shapes: bool = True, dtypes: bool = False
              ) -> tuple[str, float]:
    """An edge's label and line width, each carried tensor described once for both.

    The label is ``?×784`` for one tensor, ``3 tensors`` for several, nothing for
    control-only edges or without ``shapes``; cut to :data:`MAX_EDGE_LABEL` characters here,
    where the layout sizes it, so a shape with thousands of dimensions neither widens the
    layout nor differs from what is drawn.  The width comes from the bytes carried (see
    :func:`_width`).
    """
    tensors = carried_tensors(h, agg)
    edge_tensor = h.model.edge_tensor
    infos = [edge_tensor(u, v, k) for u, v, k in islice(tensors.values(), WEIGHED)]
    return look_of(agg, len(tensors), infos, shapes=shapes, dtypes=dtypes, memo=None)


def look_of(agg: AggEdge, count: int, infos: list[TensorInfo | None], *, shapes: bool,
            dtypes: bool, memo: dict[tuple[int, ...], tuple[str, float]] | None
            ) -> tuple[str, float]:
    """:func:`edge_look` of an edge carrying ``count`` distinct tensors, the first
    :data:`WEIGHED` of them ``infos``: for a caller that found them as it read the edges (the
    viewer's page, reading every edge once).  ``memo`` remembers looks by the infos, for a
    caller that looks at every edge with the same options (ops of one type and attributes
    share their infos: NASNet-Large's step has 72,000 aggregated edges and 5,300 distinct
    keys); keyed by the infos' ids, it holds only while the caller keeps the infos alive
    (the page's ops table does)."""
    if memo is not None:
        # Every tensor is a data or ref edge's, so the count also says whether there is one.
        key = (count, *map(id, infos))
        found = memo.get(key)
        if found is not None:
            return found
    label = ""
    if shapes and agg.data + agg.ref:
        label = (f"{count} tensors" if count > 1
                 else format_shape(infos[0], dtype=dtypes))
        if len(label) > MAX_EDGE_LABEL:
            label = label[:MAX_EDGE_LABEL - 1] + "…"
    look = label, _width(infos)
    if memo is not None:
        memo[key] = look
    return look


def tensor_lines(h: Hierarchy, agg: AggEdge, limit: int = 12) -> list[str]:
    """The tensors an edge carries, one ``producer:index (shape)`` line each, for tooltips."""
    tensors = carried_tensors(h, agg)
    lines = []
    for (producer, index), (u, v, k) in list(tensors.items())[:limit]:
        info = h.model.edge_tensor(u, v, k)
        shape = format_shape(info, dtype=True)
        if info is None or not info.known_shape or info.shape is None:
            shape = f"{shape}; {unknown_why(info)}" if shape else unknown_why(info)
        lines.append(f"{producer}:{index} ({shape})")
    if len(tensors) > limit:
        lines.append(f"… and {len(tensors) - limit} more")
    return lines


def _width(infos: list[TensorInfo | None]) -> float:
    """Line width from the bytes of the tensors described (log scale, 1 at a byte to 3.5 at
    100 MB).  Not wider: Graphviz 7 and later pull a thick line's arrowhead back by its stroke
    (see :meth:`~graphviz_tb.layout.engine.Engine.arrow_pullback`), and at 5 points the line then
    stopped 13 points short of its target, too far for the eye to join them."""
    total = sum(tensor_bytes(info) for info in infos)
    if total <= 0:
        return 1.0
    return round(min(3.5, 1.0 + math.log10(max(total, 1)) / 3.2), 2)


def outline(m: Member) -> str:
    """The Graphviz shape a member is drawn with, so edges are clipped at its real outline:
    ops are ellipses; groups, constants, summaries and stubs are boxes."""
    if isinstance(m, OpNode) and not _is_const(m) and "Summary" not in m.op:
        return "ellipse"
    return "box"
