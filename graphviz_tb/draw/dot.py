"""The composed scene as one positioned DOT graph, for ``neato -n2`` and for ``.dot`` output.

Every coordinate is already decided by :mod:`graphviz_tb.layout.scene`; this module only styles:
fills by structure template (or op, device, dtype), solid/dashed/bold edges, shape labels,
tooltips and the legend.  Node IDs are safe generated names (``n12``); the full names, which
come from the model file and may hold anything, only ever appear escaped, in labels and
tooltips here and as SVG titles patched in by :mod:`graphviz_tb.draw.svg`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..escaping import clean_text, dot_html, dot_lines, dot_string
from ..group.legend import legend_labels
from ..group.templates import PictureColors
from ..group.tree import AggEdge, Group, Member, OpNode
from ..layout.parts import Stub, Wire
from ..layout.scene import Box, Scene
from ..layout.text import counted, label_lines, tensor_lines
from ..model.costs import Scale, format_cost
from ..model.graph import CONTROL, REF
from ..model.shapes import format_shape
from ..style import (
    ARROW_SIZE,
    COST_COLORS,
    DIFF_COLORS,
    DIFF_LINES,
    MAX_LINE,
    NO_RECORD,
    OTHER_REPEATED,
    PT,
    THEMES,
    UNIQUE_COLOR,
    palette,
)

if TYPE_CHECKING:
    from ..group.tree import Hierarchy
    from ..options import StyleOptions
    from ..picture import DiffTally, Picture, Totals

__all__ = ["DotDocument", "scene_to_dot"]

_MAX_LABEL = MAX_LINE


@dataclass
class DotDocument:
    """The DOT text plus what the SVG post-processing needs: the full name behind each ID."""

    text: str
    titles: dict[str, str]
    width: float
    height: float


class _Styler:
    """Colours by the picture's colouring, each key given a stable distinct colour."""

    def __init__(self, h: Hierarchy, options: StyleOptions, picture: Picture,
                 structure: PictureColors | None = None, scale: Scale | None = None) -> None:
        self.h, self.options, self.theme = h, options, THEMES[options.theme]
        self.mode = picture.color_by
        self.structure = structure
        self.totals, self.scale = picture.totals, scale
        self.diff = picture.diff
        self._keys: dict[str, str] = {}

    def key_color(self, key: str) -> str:
        if key not in self._keys:
            self._keys[key] = palette(len(self._keys), self.options.theme)
        return self._keys[key]

    def prime(self, keys: list[str]) -> None:
        """Assign colours in order of frequency so the commonest keys get the first colours."""
        for key, _ in Counter(keys).most_common():
            self.key_color(key)

    def member_key(self, m: Member) -> str | None:
        mode = self.mode
        model = self.h.model
        if isinstance(m, OpNode):
            if mode == "op":
                return m.op
            if mode == "device":
                return model.g.nodes[m.name]["device"] or "(no device)"
            if mode == "dtype":
                outs = model.op_outputs(m.name)
                return (outs[0].dtype if outs else None) or "(unknown)"
            return None
        if mode == "device" and isinstance(m, Group):  # not a Stub: it has no colour key
            devices = Counter(model.g.nodes[o.name]["device"] or "(no device)"
                              for o in _sample_ops(m))
            return devices.most_common(1)[0][0] if devices else None
        return None

    def cost_fill(self, m: Member, expanded: bool) -> str:
        """A box's colour on the cost scale, or the no-record colour; an open group's is
        neutral (its boxes inside carry the colours, its title its total)."""
        assert self.totals is not None and self.scale is not None
        if expanded:
            return UNIQUE_COLOR[self.options.theme]
        value = self.totals(m)
        if value is None:
            return NO_RECORD[self.options.theme]
        return COST_COLORS[self.options.theme][self.scale.step(value)]

    def fill(self, m: Member, expanded: bool = False) -> str:
        mode = self.mode
        if self.totals is not None:
            return self.cost_fill(m, expanded)
        if self.diff is not None:
            status = "unchanged" if expanded else self.diff.status(m)
            return DIFF_COLORS[self.options.theme][status]
        if isinstance(m, Group):
            if self.structure is not None:
                return self.structure.color(m, self.options.theme)
            key = self.member_key(m)
            return self.key_color(key) if key else UNIQUE_COLOR[self.options.theme]
        key = self.member_key(m) if mode not in ("structure", "none") else None
        return self.key_color(key) if key else self.theme["op"]




def _diff_lines(h: Hierarchy, m: Member, diff: DiffTally) -> list[str]:
    """What a diff's tooltip says of a box: its counts, or an op's old name and changes."""
    if not isinstance(m, OpNode):
        counts = diff(m)
        return ["diff: " + ", ".join(f"{counts[s]} {s}" for s in
                                     ("added", "removed", "changed", "unchanged") if counts[s])]
    data = h.model.g.nodes[m.name]
    status = data.get("diff", "unchanged")
    lines = [f"diff: {status}"]
    old = data.get("diff_old")
    if old and old != m.name and status != "removed":
        lines.append(f"was: {clean_text(old, 200)}")
    lines.extend(clean_text(w, 300) for w in data.get("diff_what", ())[:12])
    return lines


def _sample_ops(g: Group, limit: int = 200) -> list[OpNode]:
    out: list[OpNode] = []
    for m in g.walk():
        if isinstance(m, OpNode):
            out.append(m)
            if len(out) >= limit:
                break
    return out


def _tooltip(h: Hierarchy, m: Member, totals: Totals | None = None) -> list[str]:
    model = h.model
    lines = [clean_text(m.name, 300)]
    if totals is not None:
        value = totals(m)
        what = "compute time" if totals.metric == "time" else "memory"
        lines.append(f"{what}: " + ("no record" if value is None
                                    else format_cost(totals.metric, value)))
    if isinstance(m, OpNode):
        data = model.g.nodes[m.name]
        lines.append(f"op: {clean_text(m.op, 100)}")
        outs = model.op_outputs(m.name)
        shapes = [format_shape(o, dtype=True) for o in outs]
        if any(shapes):
            lines.append(clean_text("shape: " + ", ".join(s or "?" for s in shapes[:64]), 400))
        if data["device"]:
            lines.append(f"device: {clean_text(data['device'], 200)}")
        if data.get("calls"):
            lines.append("calls: " + ", ".join(clean_text(c, 100) for c in data["calls"]))
        if data["role"] == "missing":
            lines.append("missing: named as an input, but no such op exists")
        if data.get("recursion_cut"):
            lines.append("recursion cut here")
        if data.get("depth_cut"):
            lines.append("left closed: nested too deep to open")
        if data.get("shape_error"):
            lines.append(f"shape error: {clean_text(data['shape_error'], 400)}")
    else:
        assert isinstance(m, Group)
        lines.append(f"{m.kind}: {counted(m.op_count, h.model.unit)}")
        if m.function:
            lines.append(f"function: {clean_text(m.function, 200)}")
    return lines


def _classes(m: Member, expanded: bool, h: Hierarchy) -> str:
    if isinstance(m, OpNode):
        data = h.model.g.nodes[m.name]
        extra = ["op"]
        if m.op in ("Const", "HostConst"):
            extra.append("const")
        if "Summary" in m.op:
            extra.append("summary")
        if m.role != "op":
            extra.append(m.role)
        if data.get("shape_error"):
            extra.append("shape-error")
        if data.get("recursion_cut"):
            extra.append("recursion-cut")
        if data.get("depth_cut"):
            extra.append("depth-cut")
        return " ".join(extra)
    assert isinstance(m, Group)
    base = "series" if m.kind == "series" else "group"
    extra = [base, m.kind] if m.kind != "series" else [base]
    if expanded:
        extra.append("expanded")
    return " ".join(extra)


def _node_label(m: Member, lines: tuple[str, ...], expanded: bool, fg: str) -> str:
    """An HTML-like label: name in 10 pt (on two lines when long, see
    :func:`~graphviz_tb.layout.text.label_lines`), op type or caption smaller and muted."""
    parts = [clean_text(t, _MAX_LABEL) for t in lines]
    if expanded:
        return f"<<B>{dot_html(parts[0])}</B>>"
    if isinstance(m, OpNode) and m.op in ("Const", "HostConst"):
        small = f"<FONT POINT-SIZE=\"8\">{dot_html(parts[0])}</FONT>"
        if len(parts) > 1:  # what it cost, when colouring by cost
            return (f"<{small}<BR/><FONT POINT-SIZE=\"7\" COLOR=\"{fg}\">"
                    f"{dot_html(parts[1])}</FONT>>")
        return f"<{small}>"
    head = "<BR/>".join(f"<FONT POINT-SIZE=\"10\">{dot_html(clean_text(t))}</FONT>"
                        for t in label_lines(lines[0]))  # one or two lines, as sized
    if len(parts) > 1:
        return f"<{head}<BR/><FONT POINT-SIZE=\"8\" COLOR=\"{fg}\">{dot_html(parts[1])}</FONT>>"
    return f"<{head}>"


def _legend(options: StyleOptions, styler: _Styler, shapes: bool
            ) -> tuple[str, float, float] | None:
    """The legend as an HTML table: structure templates (or colour keys) and edge styles."""
    rows: list[str] = []
    texts: list[str] = []  # what the rows say, to size the box

    def add(color: str, text: str) -> None:
        rows.append(_legend_row(color, text))
        texts.append(text)

    if styler.scale is not None and styler.totals is not None:
        colors, metric = COST_COLORS[options.theme], styler.totals.metric
        total = f"step total: {format_cost(metric, styler.totals.total)}"
        rows.append(f"<TR><TD COLSPAN=\"2\" ALIGN=\"LEFT\">{dot_html(total)}</TD></TR>")
        texts.append(total)
        for step, low, high in reversed(styler.scale.ranges()):
            text = format_cost(metric, low) if low == high else \
                f"{format_cost(metric, low)} – {format_cost(metric, high)}"
            add(colors[step], text)
        add(NO_RECORD[options.theme], "no record")
    elif styler.structure is not None:
        structure = styler.structure
        shown = structure.repeated
        labels = legend_labels([structure.instances(t)[0] for t in shown])
        other = OTHER_REPEATED[options.theme]
        colored = [(color, t, label) for t, label in zip(shown, labels, strict=True)
                   if (color := structure.template_color(t, options.theme)) != other]
        for color, t, label in colored[:12]:
            add(color, f"{clean_text(label, 36)} × {len(structure.alike[t])}")
        if len(colored) > 12:
            rows.append(f"<TR><TD COLSPAN=\"2\">… {len(colored) - 12} more "
                        "structures</TD></TR>")
        more = len(shown) - len(colored)
        if more:  # "other" only below structures named above it
            add(other, f"{more}{' other' if colored else ''} repeated "
                f"structure{'s' if more > 1 else ''}")
        add(UNIQUE_COLOR[options.theme], "unique structure")
    elif styler.mode in ("op", "device", "dtype"):
        for key, color in list(styler._keys.items())[:14]:
            add(color, clean_text(key, 32))
    elif styler.diff is not None:
        counts = styler.diff(styler.h.root)
        for status in ("added", "removed", "changed", "unchanged"):
            add(DIFF_COLORS[options.theme][status],
                f"{status}: {counts[status]:,} op{'' if counts[status] == 1 else 's'}")
        for status in ("added", "removed"):  # the edges' colours too
            rows.append(f"<TR><TD><FONT COLOR=\"{DIFF_LINES[options.theme][status]}\">──►"
                        f"</FONT></TD><TD ALIGN=\"LEFT\">edge {status}</TD></TR>")
    # Glyphs both engines' fonts have: graphviz-pure draws ▶ and ╌ as empty boxes.
    rows.append("<TR><TD>──►</TD><TD ALIGN=\"LEFT\">data (label: shape)</TD></TR>")
    rows.append("<TR><TD>– – ►</TD><TD ALIGN=\"LEFT\">control dependency</TD></TR>")
    rows.append("<TR><TD>══►</TD><TD ALIGN=\"LEFT\">reference (mutated)</TD></TR>")
    notes = styler.h.model.notes + ([note] if shapes and (
        note := styler.h.model.shapes_note()) else [])
    for note in notes:  # why the data edges have no labels, and what adds them; what is not
        for line in _note_lines(note):  # in the picture, and how to get it
            rows.append(f"<TR><TD COLSPAN=\"2\" ALIGN=\"LEFT\">"
                        f"<FONT COLOR=\"{THEMES[options.theme]['muted']}\">{dot_html(line)}"
                        "</FONT></TD></TR>")
            texts.append(line)
    title = {"structure": "same colour = same structure", "op": "colour = op type",
             "device": "colour = device", "dtype": "colour = dtype",
             "compute-time": "colour = compute time, log scale (×3.2 a step)",
             "memory": "colour = memory, log scale (×3.2 a step)", "diff": "what changed",
             "none": "edges"}[styler.mode]
    table = (f"<<TABLE BORDER=\"0\" CELLBORDER=\"0\" CELLSPACING=\"2\" CELLPADDING=\"1\">"
             f"<TR><TD COLSPAN=\"2\" ALIGN=\"LEFT\"><B>{dot_html(title)}</B></TD></TR>"
             f"{''.join(rows)}</TABLE>>")
    height = 16 * (len(rows) + 1) + 12
    # As wide as its widest row (a swatch, then the text in 9 pt), at least 190 pt: a fixed
    # width let a long structure name spill out of the box on both sides.
    widest = max(len(t) for t in [title, *texts])
    return table, max(190.0, 44.0 + widest * 9 * 0.55), float(height)


def _note_lines(note: str, width: int = 40) -> list[str]:
    """A legend note broken at spaces into lines of about ``width`` characters."""
    lines: list[str] = []
    for word in note.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def _legend_row(color: str, text: str) -> str:
    return (f"<TR><TD BGCOLOR=\"{color}\" WIDTH=\"14\" HEIGHT=\"10\"> </TD>"
            f"<TD ALIGN=\"LEFT\">{dot_html(text)}</TD></TR>")


def _stub_node(node_id: str, box: Box, theme: dict[str, str]) -> str:
    """A stub: the auxiliary node's short name in small muted text where its edge would be."""
    label = clean_text(box.lines[0], _MAX_LABEL)
    tip = "edge to or from the auxiliary node " + clean_text(box.member.name, 200)
    # A box outlined in no colour, where plaintext would draw none: a reader of the SVG finds
    # the stub's extent, and so where its edges end, from its shape.
    return (f"{node_id} [shape=box, color=transparent, pos=\"{box.x:.2f},{box.y:.2f}!\", "
            f"width={box.w / PT:.3f}, height={box.h / PT:.3f}, fontsize=7, "
            f"fontcolor=\"{theme['muted']}\", label={dot_string(label)}, class=\"stub\", "
            f"tooltip={dot_string(tip)}, id=\"{node_id}\"];")


def _edge_diff(h: Hierarchy, agg: AggEdge) -> str | None:
    """``added`` or ``removed`` when every model edge an aggregated edge stands for is."""
    edges = h.model.g.edges
    seen = {edges[e].get("diff", "unchanged") for e in agg.edges}
    return next(iter(seen)) if len(seen) == 1 and seen <= {"added", "removed"} else None


def _into_shape_error(h: Hierarchy, agg: AggEdge, failed: set[str]) -> bool:
    """Does the edge carry an input of an op where shape inference failed (drawn red)?"""
    edges = h.model.g.edges
    return any(e[1] in failed and edges[e].get("shape_error") for e in agg.edges)


def scene_to_dot(h: Hierarchy, scene: Scene, picture: Picture, options: StyleOptions
                 ) -> DotDocument:
    """Write the scene of ``picture`` as a positioned DOT document (render with
    ``neato -n2``), coloured as the picture says: by structure, by a key, by each member's
    recorded cost (``picture.totals``) or by what changed below it (``picture.diff``).
    """
    theme = THEMES[options.theme]
    totals = picture.totals
    structure = scale = None
    if totals is not None:
        scale = Scale([v for b in scene.boxes if not b.expanded and not isinstance(b.member, Stub)
                       and (v := totals(b.member)) is not None])
    elif picture.color_by == "structure":
        structure = h.templates.picture(b.member for b in scene.boxes
                                        if isinstance(b.member, Group))
    styler = _Styler(h, options, picture, structure, scale)
    if styler.mode in ("op", "device", "dtype"):
        styler.prime([k for b in scene.boxes if (k := styler.member_key(b.member))])
    legend = _legend(options, styler, scene.options.shapes) if options.legend else None
    width = scene.width + (legend[1] + 3 * _MARGIN if legend else 0)
    title_h = _TITLE_H if options.title else 0.0
    height = max(scene.height, legend[2] if legend else 0) + title_h
    ids: dict[Member, str] = {}
    titles: dict[str, str] = {}
    out = [
        "digraph tbgraph {",
        f"graph [outputorder=nodesfirst, bgcolor=\"{theme['bg']}\", pad=0.2, "
        f"bb=\"0,0,{width:.1f},{height:.1f}\", fontname=Helvetica];",
        f"node [fontname=Helvetica, fontsize=10, fontcolor=\"{theme['fg']}\", "
        f"color=\"{theme['line']}\", fixedsize=true, penwidth=1];",
        f"edge [fontname=Helvetica, fontsize=8, fontcolor=\"{theme['muted']}\", "
        f"color=\"{theme['line']}\", arrowsize={ARROW_SIZE}];",
    ]
    for i, box in enumerate(scene.boxes):
        node_id = f"n{i}"
        ids[box.member] = node_id
        # A stub is titled as the auxiliary node it stands for.
        m = box.member
        titles[node_id] = h.title(m.target if isinstance(m, Stub) and m.target is not None
                                  else m)
        out.append(_stub_node(node_id, box, theme) if isinstance(m, Stub)
                   else _box_node(h, box, node_id, styler, picture))
    if legend:
        table, lw, lh = legend
        lx = scene.width + 2 * _MARGIN + lw / 2
        ly = height - title_h - lh / 2
        out.append(f"legend [shape=box, style=\"rounded,filled\", fillcolor=\"{theme['legend']}\", "
                   f"color=\"{theme['line']}\", pos=\"{lx:.1f},{ly:.1f}!\", width={lw / PT:.3f}, "
                   f"height={lh / PT:.3f}, fontsize=9, class=\"legend\", id=\"legend\", "
                   f"label={table}];")
        titles["legend"] = "legend"
    if options.title:
        out.append(f"title [shape=plaintext, fontsize=14, pos=\"{width / 2:.1f},"
                   f"{height - title_h / 2:.1f}!\", width={width / PT:.3f}, height=0.3, "
                   f"class=\"title\", id=\"title\", "
                   f"label=<<B>{dot_html(clean_text(options.title, 200))}</B>>];")
        titles["title"] = options.title
    failed = set(h.model.shape_error_ops())
    for j, wire in enumerate(scene.wires):
        agg = wire.agg
        if agg.src not in ids or agg.dst not in ids or not wire.points:
            continue
        out.append(_wire_edge(h, wire, f"e{j}", ids, failed, styler))
        titles[f"e{j}"] = f"{titles[ids[agg.src]]}->{titles[ids[agg.dst]]}"
    out.append("}")
    return DotDocument("\n".join(out) + "\n", titles, width, height)


#: Room between the scene and the legend, and the height of the title's band (points).
_MARGIN = 8.0
_TITLE_H = 28.0


def _box_node(h: Hierarchy, box: Box, node_id: str, styler: _Styler, picture: Picture) -> str:
    """One member's node statement: its shape and outline say what kind of op or group it
    is, its fill the picture's colouring, its tooltip what it is and what it cost or how it
    changed."""
    m, theme, totals, diff = box.member, styler.theme, picture.totals, picture.diff
    fill = styler.fill(m, box.expanded)
    style = ["filled"]
    if isinstance(m, OpNode):
        shape = "box" if m.op in ("Const", "HostConst") else "ellipse"
        if "Summary" in m.op:
            shape = "note"
        if m.role in ("missing",):
            style.append("dashed")
        if m.op in ("Const", "HostConst"):
            style.append("rounded")
    else:
        shape = "box"
        style.append("rounded")
        if box.expanded:
            fill = fill + "55"
    tip = _tooltip(h, m, totals)
    if diff is not None:
        tip += _diff_lines(h, m, diff)
        if not box.expanded and diff.status(m) == "removed":
            style.append("dashed")  # what only the old graph has: a dashed outline
    # The second line says what a box cost: as dark as the name, on any colour of the scale.
    second = theme["fg"] if totals is not None else theme["muted"]
    attrs = [
        f"pos=\"{box.x:.2f},{box.y:.2f}!\"",
        f"width={box.w / PT:.3f}",
        f"height={box.h / PT:.3f}",
        f"shape={shape}",
        f"style=\"{','.join(style)}\"",
        f"fillcolor=\"{fill}\"",
        f"label={_node_label(m, box.lines, box.expanded, second)}",
        f"class=\"{_classes(m, box.expanded, h)}{' aux' if box.aux else ''}\"",
        f"tooltip={dot_lines(tip)}",
        f"id=\"{node_id}\"",
    ]
    if box.expanded:
        attrs.append("labelloc=t")
    data = h.model.g.nodes[m.name] if isinstance(m, OpNode) else None
    if data is not None and (data["role"] == "missing" or data.get("shape_error")):
        attrs.append(f"color=\"{theme['missing']}\"")
        attrs.append("penwidth=2")
    if data is not None and (data.get("recursion_cut") or data.get("depth_cut")):
        attrs.append("peripheries=2")  # a call left closed: a double outline
    return f"{node_id} [{', '.join(attrs)}];"


def _wire_edge(h: Hierarchy, wire: Wire, edge_id: str, ids: dict[Member, str],
               failed: set[str], styler: _Styler) -> str:
    """One wire's edge statement: its spline as laid out, dashed for control, doubled for a
    reference, red into an op where shape inference failed, coloured by a diff when only
    one version has it; its tooltip names both ends and the tensors it carries."""
    agg, theme = wire.agg, styler.theme
    kind = agg.kind
    spline = " ".join(f"{x:.2f},{y:.2f}" for x, y in wire.points)
    pos = (f"e,{wire.arrow[0]:.2f},{wire.arrow[1]:.2f} " if wire.arrow else "") + spline
    dash = "dashed" if kind == CONTROL else "solid"
    error = bool(failed) and _into_shape_error(h, agg, failed)
    line = theme["missing"] if error else theme["line"]
    attrs = [f"pos=\"{pos}\"", f"style={dash}", f"class=\"{kind}"
             + (" back" if agg.back else "") + (" shape-error" if error else "") + "\"",
             f"id=\"{edge_id}\""]
    moved = _edge_diff(h, agg) if styler.diff is not None else None
    if moved is not None:  # an edge only the old graph or only the new one has
        line = DIFF_LINES[styler.options.theme][moved]
        attrs[2] = attrs[2][:-1] + f" diff-{moved}\""
        if kind != REF:
            attrs.append(f"color=\"{line}\"")
    if kind == REF:  # a double line: the variable itself flows in and is changed
        attrs.append(f"color=\"{line}:{theme['bg']}:{line}\"")
    elif kind != CONTROL:
        attrs.append(f"penwidth={max(wire.width, 2.0) if error else wire.width:.2f}")
        if error:
            attrs.append(f"color=\"{line}\"")
    if wire.label and wire.label_pos:
        attrs.append(f"label={dot_string(clean_text(wire.label, 40))}")
        attrs.append(f"lp=\"{wire.label_pos[0]:.2f},{wire.label_pos[1]:.2f}\"")
    tip = [f"{clean_text(agg.src.name, 200)} → {clean_text(agg.dst.name, 200)}"]
    counts = ", ".join(f"{n} {k}" for k, n in agg.counts.items() if n)
    tip.append(counts + (f" · {wire.label}" if wire.label else ""))
    tip.extend(clean_text(line, 300) for line in tensor_lines(h, agg))
    attrs.append(f"tooltip={dot_lines(tip)}")
    return f"{ids[agg.src]} -> {ids[agg.dst]} [{', '.join(attrs)}];"
