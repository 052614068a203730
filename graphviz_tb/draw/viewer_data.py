"""The interactive HTML viewer: one self-contained, offline file.

Python does the heavy lifting once: it builds the hierarchy, lays out the initial view with
Graphviz (exactly what the SVG output shows) and embeds everything the page needs as compact,
column-oriented JSON, its integer columns packed as base64 typed arrays (write.page):

* every member of the hierarchy (ops and groups): parent, name (as a suffix of an ancestor's
  name), kind, op type, collapsed size (interned), label and second line (interned), colour
  keys (structure template, op type, device, dtype);
* every group's aggregated edges between its children, in the order
  :func:`~graphviz_tb.layout.groups.layout_groups` feeds them to Graphviz, with their shape
  labels and widths (both interned);
* every op edge (for tracing and for the details panel), ordered by the aggregated edge that
  stands for it, with its source output and destination input slot (an edge from a call op into
  an argument of its body carries the call's input slot it passes on, so the page's trace goes
  through a call argument by argument);
* the values loops carry from one iteration to the next, which no edge shows;
* per-op details: attributes (already cut by :mod:`graphviz_tb.read.attrs`) and outputs, both
  interned, because most ops share them (attributes pair by pair, :class:`_AttrTable`);
* the per-group layouts of the groups open at first;
* what each op cost in every recorded step of the graph's run, when there are any.

A page may also hold several graphs (every graph of a logdir, :func:`render_pages`): the data
is then a list of graphs, each as above and each embedded once however many runs logged it,
and the entries of the page's picker that show them.

The page (``viewer/src``, bundled at build time into ``viewer/bundle.js``) draws that at once, and
re-lays out in place with the same per-group algorithm when a group is opened or closed.
Graphviz, compiled to WebAssembly, is most of the page's weight: it is built as a separate
worker script, gzipped (``viewer/layout-worker.js.gz``) and embedded base64-encoded as inert
data, which the page decompresses (``DecompressionStream``) and starts as a Web Worker from a
``blob:`` URL only when a layout is first needed.

Model strings are never parsed as markup: the JSON is embedded with ``<``, ``>`` and ``&``
escaped, and the page only ever puts them in the DOM as text.  A Content-Security-Policy allows
the inline script and style by hash and forbids every outside load.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..group.legend import legend_labels
from ..group.tree import AggEdge, Group, Member, OpNode
from ..layout.parts import GroupLayout, Stub
from ..layout.scene import Scene
from ..layout.text import WEIGHED, group_box, group_lines, leaf_size, look_of
from ..model.graph import CONTROL, DATA, REF, OpGraph
from ..style import (
    COST_COLORS,
    DIFF_COLORS,
    DIFF_LINES,
    LABEL_H,
    NO_RECORD,
    PAD,
    PT,
    THEMES,
    UNIQUE_COLOR,
)
from .viewer_ops import Interner, OnPage, OpEdgeTensors, OpsData, loop_carry

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..group.tree import Hierarchy
    from ..model.costs import CostSet
    from ..model.shapes import TensorInfo
    from ..options import StyleOptions
    from ..picture import DiffTally, Picture

__all__ = ["DATA_VERSION", "VIEWER_DIR", "build_data", "finite"]

VIEWER_DIR = Path(__file__).with_name("viewer")
#: Format of the embedded data; the bundle refuses data of another version.
DATA_VERSION = 3

#: The most changes a diff's page lists (the picture colours them all).
_MAX_CHANGES = 5000
_KINDS = {"root": 1, "scope": 2, "function": 3, "prefix": 4, "series": 5, "block": 6,
          "section": 7, "update": 8, "variables": 9, "metrics": 10, "replica": 11,
          "clipping": 12, "decay": 13}
_ROLES = {"op": 0, "missing": 1, "arg": 2, "retval": 3}
_EDGE_KINDS = {DATA: 0, CONTROL: 1, REF: 2}
_INT32 = range(-(1 << 31), 1 << 31)  # what a 4-byte column holds


# --------------------------------------------------------------------------- small helpers


#: A diff's statuses as the page codes them.
_DIFF_CODES = {"unchanged": 0, "added": 1, "removed": 2, "changed": 3}


def _edge_diff(graph: OpGraph, agg: AggEdge) -> int:
    """An aggregated edge's status in a diff: added or removed when all its edges are, else
    unchanged (0)."""
    seen = {graph.edges[e].get("diff", "unchanged") for e in agg.edges}
    return _DIFF_CODES[next(iter(seen))] if len(seen) == 1 and seen <= {"added", "removed"} \
        else 0


def _r(x: float) -> float | int:
    """Coordinates to 0.1 pt: plenty for drawing, and a third of the JSON."""
    v = round(x, 1)
    return int(v) if v == int(v) else v


# --------------------------------------------------------------------------- the data


def finite(value: Any) -> Any:
    """JSON has no NaN or infinity: spell them as strings (attribute values may hold them)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, list):
        return [finite(v) for v in value]
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    return value


class _Builder:
    """Collects the embedded data; see the module docstring for what and why."""

    def __init__(self, h: Hierarchy, scene: Scene, keep: set[Member] | None,
                 notes: Callable[[Member], str | None] | None = None) -> None:
        self.h, self.scene, self.options, self.keep = h, scene, scene.options, keep
        #: What a box's second line adds (a diff's change), sized as the static picture does.
        self.notes = notes
        self.model = h.model
        self.members: list[Member] = []
        self.ids = OnPage(self.members)
        self._carried = OpEdgeTensors(self.model, self.ids)  # what edges carry, once ops are read
        #: The ops calling functions, in member order (see :meth:`members_data`).
        self._callers: list[OpNode] = []
        self._looks: dict[tuple[int, ...], tuple[str, float]] = {}  # see look_of

    # -- members

    def _order(self) -> None:
        """Root first, then every member parents-before-children (the order ``walk`` gives)."""
        self.ids.add(self.h.root)
        stack: list[Member] = list(reversed(self.h.root.children))
        while stack:
            m = stack.pop()
            if self.keep is not None and m not in self.keep:
                continue
            self.ids.add(m)
            if isinstance(m, Group):
                stack.extend(reversed(m.children))

    def _name_parts(self, m: Member) -> tuple[int, str]:
        """The nearest ancestor whose name prefixes ``m``'s, and the rest of the name (a loop,
        not ``ancestors()``: the parent nearly always answers, and the generator cost more).
        The rest is nearly always the member's label, given as that string rather than cut
        anew: a string per member was a ninth of a big graph's page data in memory."""
        anc = m.parent
        name = m.name
        while anc is not None:
            n = len(anc.name)  # name[n] == "/" first: startswith(anc.name + "/") made a string
            if n and len(name) > n and name[n] == "/" and name.startswith(anc.name) \
                    and anc in self.ids:
                start = n + 1
                label = m.label
                if len(name) - start == len(label) and name.endswith(label):
                    return self.ids[anc], label
                return self.ids[anc], name[start:]
            anc = anc.parent
        return -1, name

    def _device_keys(self, ops: OpsData) -> dict[Group, str]:
        """Each group's commonest device among all its ops (bottom-up, so linear).  Most graphs
        name one device or none: then every group holding an op takes it, with no count per
        group (a Counter per member was a large part of a big graph's page data)."""
        if len(ops.devices.names) == 1:  # each op's groups, up to one already found
            holding: set[Group] = set()  # (all on the page: _order keeps whole chains)
            for op in ops.members:
                g = op.parent
                while g is not None and g not in holding:
                    holding.add(g)
                    g = g.parent
            return dict.fromkeys(holding, ops.devices.names[0])
        devices = {op: ops.devices.value(k) for k, op in enumerate(ops.members)}
        counts: dict[Group, Counter[str]] = {}
        for m in reversed(self.members):
            if isinstance(m, Group):
                c = counts.setdefault(m, Counter())
            else:
                c = Counter({devices[m]: 1})  # type: ignore[index]
            parent = m.parent
            if parent is not None and parent in self.ids:
                counts.setdefault(parent, Counter()).update(c)
        return {g: c.most_common(1)[0][0] for g, c in counts.items() if c}

    def members_data(self) -> dict[str, Any]:
        """Every member's columns (see the module docstring), built in one pass over the
        members after one over the ops: a per-member dict of columns cost more than the data."""
        self._order()
        templates = self.h.templates
        rank = {t: i for i, t in enumerate(templates.repeated)}
        ops = OpsData(self.model, [m for m in self.members if isinstance(m, OpNode)])
        self._carried.note(ops)
        # A group's device is its commonest op device, so always in the ops' table.
        group_dev = self._device_keys(ops)
        self._callers = [ops.members[j] for j in ops.calls]  # see loop_carry
        types, devices, dtypes, dev_i = ops.types, ops.devices, ops.dtypes, ops.devices.index
        n = len(self.members)
        # The integer columns as 4-byte arrays (the page packs them as such): a list holds
        # 8 bytes a member per column.
        unset, zero = array("i", [-1]), array("i", [0])
        parent, nb, ns = unset * n, unset * n, [""] * n
        kind, typ, tpl, dev, dt = zero * n, unset * n, unset * n, unset * n, unset * n
        sz, nops, attr, out = zero * n, array("i", [1]) * n, unset * n, unset * n
        # Second lines interned ("12 ops", a diff's note): a dict held 600,000 for 1M ops.
        cap, captions = unset * n, Interner()
        # Collapsed sizes (NASNet-Large's 101,000 members have 96), in inches to 3 decimals:
        # exactly what layout.group_dot writes, so the page's DOT for a group is Python's.
        sizes = Interner()
        sizes((0.0, 0.0))  # the root's
        labels: dict[int, str] = {}
        functions: dict[int, str] = {}
        # An op's box depends only on its label and type (layout.leaf_size): sized once per
        # distinct pair (NASNet-Large's 65,000 ops have 750 or 2,900), its size interned with it.
        op_box: dict[tuple[str, str], tuple[int, str]] = {}
        # A group's box depends only on its two lines (layout.group_box): sized once per
        # distinct pair (NASNet-Large's step: 27,000 groups, 13,000 pairs; composed_1 of
        # bench/scale.py: 52,000 groups, 5,000 pairs).
        group_box_size: dict[tuple[str, ...], int] = {}
        ids, k = self.ids, 0
        for i, m in enumerate(self.members):
            if isinstance(m, Group):
                lines: tuple[str, ...] = ("",)  # the root's
                if i:
                    nb[i], ns[i] = self._name_parts(m)
                    parent[i] = ids[m.parent]  # type: ignore[index]
                    lines = group_lines(m, self.notes(m) if self.notes else None)
                    size = group_box_size.get(lines)
                    if size is None:
                        w, hh = group_box(lines)
                        size = group_box_size[lines] = sizes((round(w / PT, 3),
                                                              round(hh / PT, 3)))
                    sz[i] = size
                    if lines[0] != ns[i]:
                        labels[i] = lines[0]
                kind[i] = _KINDS.get(m.kind, 2)
                t = rank.get(templates.shown(m))
                if t is not None:
                    tpl[i] = t
                dev[i] = dev_i.get(group_dev.get(m, ""), -1)
                nops[i] = m.op_count
                if len(lines) > 1:
                    cap[i] = captions(lines[1])
                if m.function:
                    functions[i] = m.function
                continue
            nb[i], ns[i] = self._name_parts(m)
            parent[i] = ids[m.parent]  # type: ignore[index]
            assert isinstance(m, OpNode)
            note = self.notes(m) if self.notes else None
            box = op_box.get((m.label, m.op)) if not note else None
            if note:  # its own second line (a diff's change): sized alone, and shipped
                w, hh, lines = leaf_size(m, note)
                box = (sizes((round(w / PT, 3), round(hh / PT, 3))), lines[0])
                cap[i] = captions(lines[1])
            elif box is None:
                w, hh, lines = leaf_size(m)
                box = op_box[(m.label, m.op)] = (
                    sizes((round(w / PT, 3), round(hh / PT, 3))), lines[0])
            sz[i] = box[0]
            if box[1] != ns[i]:
                labels[i] = box[1]
            kind[i], typ[i] = -_ROLES.get(m.role, 0), types.ranked(k)
            dev[i], dt[i] = devices.ranked(k), dtypes.ranked(k)
            attr[i], out[i] = ops.attr[k], ops.out[k]
            k += 1
        tpl_table = []
        called = legend_labels([templates.representative(t) for t in templates.repeated])
        for t, name in zip(templates.repeated, called, strict=True):
            slot = templates.slot(templates.instances[t][0])
            tpl_table.append([name, len(templates.instances[t]), -1 if slot is None else slot])
        return {
            "parent": parent, "nb": nb, "ns": ns, "kind": kind, "type": typ, "sz": sz,
            "sizes": sizes.values, "tpl": tpl, "dev": dev, "dt": dt, "nops": nops,
            "attr": attr, "out": out, "labels": labels, "cap": cap, "captions": captions.values,
            "functions": functions,
            "calls": {ops.members[j].page: c for j, c in ops.calls.items()},
            "notes": {ops.members[j].page: c for j, c in ops.notes.items()},
            "attrs": ops.attrs.pairs, "attrSets": ops.attrs.sets.values,
            "outs": ops.outs.values, "opTypes": ops.types.names,
            "devices": ops.devices.names, "dtypes": ops.dtypes.names,
            "templates": tpl_table,
        }

    # -- edges

    def edges_data(self) -> dict[str, Any]:
        """Aggregated edges group by group, and the op edges each stands for, in that order."""
        ids, carried = self.ids, self._carried
        shapes, dtypes = self.options.shapes, self.options.dtypes
        labels, widths = Interner(), Interner()  # NASNet-Large: 61,000 edges, 400 widths
        labels("")
        # Integer columns as 4-byte arrays, as the members' (the page packs them as such).
        col = array("i")
        ag, a_src, a_dst, an, ac, ar, ab = (
            col[:], col[:], col[:], col[:], col[:], col[:], col[:])
        al, aw, ae = col[:], col[:], col[:]
        # Op edges: source, destination, code (kind | back << 2 | source output << 3) and
        # destination input slot, a column each.  The last two become lists when a hostile
        # file's slot numbers do not fit in 4 bytes (the page then keeps them as JSON).
        es, ed = col[:], col[:]
        ec: array[int] | list[int] = col[:]
        ei: array[int] | list[int] = col[:]
        # id(agg.flat) -> index, for the edges the initial layouts draw (a stub's edge shares
        # its list): a dict of every edge was 3% of a big page's memory, for a few hundred.
        drawn = {id(w.agg.flat) for loc in self.scene.layouts.values() for w in loc.wires}
        self.agg_index: dict[int, int] = {}
        # A diff's page: each aggregated edge's status (see diff_data), in index order.
        diff = self.model.is_diff
        self.agg_diff: list[int] = []
        # The tensors each edge carries are gathered in the one pass over its op edges, and
        # edges carrying the same ones are looked at once (look_of's memo, self._looks).
        whole = self.keep is None
        # What the columns take from an edge's dict, worked out once per dict (keyed by id: the
        # graph's, alive meanwhile): NASNet-Large's step has 14,000 for 107,000 edges.
        seen: dict[int, tuple[bool, Any, int, int, int]] = {}
        members, on_page = self.members, len(self.members)
        for g in self.members:
            if not isinstance(g, Group):
                continue
            gi = ids[g]
            items = sorted(g.edges.items(), key=lambda kv: (kv[0][0].name, kv[0][1].name))
            for (a, b), agg in items:
                if not whole and (a not in ids or b not in ids):
                    continue
                if id(agg.flat) in drawn:
                    self.agg_index[id(agg.flat)] = len(ag)
                if diff:
                    self.agg_diff.append(_edge_diff(self.model.g, agg))
                start = len(es)
                # The distinct tensors, as layout.carried_tensors: the first alone, a set only
                # for a second (most aggregated edges stand for one op edge).
                first: Any = None
                tensors: set[Any] | None = None
                infos: list[TensorInfo | None] = []  # the first WEIGHED tensors' (look_of)
                flat = agg.flat  # read in place: ``agg.edges`` makes a tuple per edge
                for j in range(0, len(flat), 4):
                    x, y = cast("OpNode", flat[j]), cast("OpNode", flat[j + 1])
                    d = flat[j + 3]
                    cols = seen.get(id(d))
                    if cols is None:
                        kind = d["kind"]
                        cols = seen[id(d)] = (
                            kind != CONTROL, d.get("tensor"), d["src_output"],
                            _EDGE_KINDS[kind] | (4 if d["back"] else 0) | (
                                d["src_output"] << 3), d["dst_input"])
                        if type(ec) is not list and (cols[3] not in _INT32
                                                     or cols[4] not in _INT32):
                            ec, ei = list(ec), list(ei)
                    if cols[0]:  # a tensor: as tensor_of(u, d)
                        tensor = cols[1] or (x.name, cols[2])
                        if first is None:
                            first, new = tensor, True
                        elif tensors is None:
                            new = tensor != first
                            if new:
                                tensors = {first, tensor}
                        else:
                            new = tensor not in tensors
                            if new:
                                tensors.add(tensor)
                        if new and len(infos) < WEIGHED:
                            infos.append(carried(x, d, cols[1], cols[2]))
                    # On the page (OnPage, inlined: this runs once per op edge)?
                    iu, iv = x.page, y.page
                    if iu >= on_page or members[iu] is not x or iv >= on_page \
                            or members[iv] is not y:
                        continue
                    es.append(iu)
                    ed.append(iv)
                    ec.append(cols[3])
                    ei.append(cols[4])
                ae.append(len(es) - start)
                # Its label and width, as the pictures draw them, interned.
                count = 0 if first is None else 1 if tensors is None else len(tensors)
                label, width = look_of(agg, count, infos, shapes=shapes, dtypes=dtypes,
                                       memo=self._looks)
                ag.append(gi)
                a_src.append(ids[a])
                a_dst.append(ids[b])
                an.append(agg.data)
                ac.append(agg.control)
                ar.append(agg.ref)
                ab.append(agg.back)
                al.append(labels(label))
                aw.append(widths(width))
            g.release_edges()  # in the columns now (the pictures keep theirs)
        return {"ag": ag, "as": a_src, "ad": a_dst, "an": an, "ac": ac, "ar": ar, "ab": ab,
                "al": al, "aw": aw, "ae": ae, "edgeLabels": labels.values,
                "edgeWidths": widths.values, "es": es, "ed": ed, "ec": ec, "ei": ei,
                "carry": loop_carry(self.h, self.members, self._callers, self.ids)}

    # -- diffs

    def diff_data(self, tally: DiffTally | None) -> dict[str, Any] | None:
        """What changed, when the model is a diff's merged model (``tally`` counts it): each
        member's status (0 unchanged, 1 added, 2 removed, 3 changed), each group's counts,
        each changed op's changes and what it was, each op's old name, each aggregated edge's
        status, and the list of changes in the order the page lists them."""
        graph = self.model.g
        if tally is None or not self.model.is_diff:
            return None
        code = _DIFF_CODES
        status, counts, what, was, before = [], {}, {}, {}, {}
        order: dict[int, list[int]] = {3: [], 1: [], 2: []}
        for i, m in enumerate(self.members):
            if isinstance(m, OpNode):
                data = graph.nodes[m.name]
                s = code[data.get("diff", "unchanged")]
                if data.get("diff_what"):
                    what[i] = data["diff_what"]
                if data.get("diff_old") and data["diff_old"] != m.name:
                    was[i] = data["diff_old"]
                if "diff_before" in data:
                    before[i] = data["diff_before"]
                if s and m.role == "op":
                    order[s].append(i)
            else:
                s = code[tally.status(m)] if i else 0
                c = tally(m)
                if c["added"] or c["removed"] or c["changed"]:
                    counts[i] = [c["added"], c["removed"], c["changed"]]
            status.append(s)
        edges = self.agg_diff
        changes = (order[3] + order[1] + order[2])[:_MAX_CHANGES]
        return {"status": status, "counts": counts, "what": what, "was": was,
                "before": finite(before), "edges": edges, "changes": changes,
                "total": {k: tally(self.h.root)[k] for k in code}}

    # -- costs

    def costs_data(self, costs: CostSet) -> dict[str, Any]:
        """Every recorded step of the graph's run, op by op (the page sums groups itself: a
        group's members are one range of the pre-order), with what the details panel shows.

        A row: member, time, allocated bytes, whole time, kernel time, start after the step's
        first op (-1: unknown), executions, peak bytes, persistent bytes, temporary bytes,
        outputs (an index into ``outputs``: ``[slot, dtype, shape, bytes]`` each, interned).
        """
        outputs = Interner()
        steps = []
        for step in costs.steps:
            rows = []
            for name, cost in sorted(step.ops.items()):
                op = self.h.ops.get(name)
                if op is None or op not in self.ids:
                    continue
                outs = tuple((o.slot, o.dtype, "×".join(map(str, o.shape))
                              if o.shape else ("scalar" if o.shape == () else None), o.bytes)
                             for o in cost.outputs)
                rows.append([self.ids[op], cost.time, cost.allocated, cost.wall, cost.op,
                             -1 if cost.start is None else cost.start, cost.runs, cost.peak,
                             cost.persistent, cost.temporary,
                             outputs(outs, [list(o) for o in outs]) if outs else -1])
            rows.sort()
            source = step.source
            steps.append({"name": step.name, "tag": source.tag, "run": source.run,
                          "origin": source.origin, "memory": step.memory,
                          "records": step.records, "unmatched": step.unmatched, "ops": rows})
        return {"steps": steps, "chosen": costs.chosen, "outputs": outputs.values,
                "colors": COST_COLORS, "noRecord": NO_RECORD}

    # -- the initial layouts

    def layouts_data(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for g, loc in self.scene.layouts.items():
            if g not in self.ids:
                continue
            out[str(self.ids[g])] = self._layout(loc)
        return out

    def _layout(self, loc: GroupLayout) -> dict[str, Any]:
        """One group's layout: member positions, stubs, auxiliary members and wires."""
        stubs: dict[int, int] = {}  # id(stub) -> index
        stub_rows: list[list[Any]] = []
        near: dict[int, Member] = {}  # id(stub) -> the member at its other end
        for wire in loc.wires:
            src, dst = wire.agg.src, wire.agg.dst
            if isinstance(src, Stub):
                near[id(src)] = dst
            if isinstance(dst, Stub):
                near[id(dst)] = src
        nodes: list[float | int] = []
        sizes = self.scene.sizes
        for m, (x, y) in loc.pos.items():
            if m in self.ids:
                nodes.extend((self.ids[m], _r(x), _r(y)))
                continue
            target = getattr(m, "target", None)
            other = near.get(id(m))
            if target is None or target not in self.ids or other not in self.ids:
                continue
            w, hh = sizes.get(m, (0.0, 0.0))
            stubs[id(m)] = len(stub_rows)
            stub_rows.append([self.ids[target], self.ids[other], _r(x), _r(y), _r(w), _r(hh)])

        def ref(m: Member) -> int | None:
            if m in self.ids:
                return self.ids[m]
            s = stubs.get(id(m))
            return None if s is None else -1 - s

        wires = []
        for wire in loc.wires:
            a, b = ref(wire.agg.src), ref(wire.agg.dst)
            agg = self.agg_index.get(id(wire.agg.flat))
            if a is None or b is None or agg is None or not wire.points:
                continue
            pts = [_r(v) for p in wire.points for v in p]
            tip = [_r(wire.arrow[0]), _r(wire.arrow[1])] if wire.arrow else None
            lp = [_r(wire.label_pos[0]), _r(wire.label_pos[1])] if wire.label_pos else None
            wires.append([a, b, agg, pts, tip, lp])
        aux = [self.ids[m] for m in loc.aux if m in self.ids]
        return {"w": round(loc.width, 3), "h": round(loc.height, 3), "n": nodes, "s": stub_rows,
                "e": wires, "x": aux}


def build_data(h: Hierarchy, scene: Scene, picture: Picture, options: StyleOptions, *,
               title: str = "graph", costs: CostSet | None = None) -> dict[str, Any]:
    """Everything the viewer embeds, as one dict, ready for JSON once the page packs its
    member columns (arrays; see :func:`~graphviz_tb.write.page.write_page`): the whole tree,
    with every group's edges and template (:func:`~graphviz_tb.group.build.complete` ran),
    and the layouts of the ``scene`` of ``picture`` drawn first."""
    b = _Builder(h, scene, picture.keep, picture.notes)
    laid = scene.options
    data: dict[str, Any] = {"version": DATA_VERSION}
    data.update(b.members_data())
    data.update(b.edges_data())
    data["layouts"] = b.layouts_data()
    data["expanded"] = sorted(b.ids[g] for g in scene.expanded if g in b.ids)
    if picture.lead is not None and picture.lead in b.ids:
        data["lead"] = b.ids[picture.lead]  # what the first view shows: the model
    if costs is not None:
        data["costs"] = b.costs_data(costs)
    changed = b.diff_data(picture.tally)
    if changed is not None:
        data["diff"] = changed
    data["options"] = {
        "title": options.title or title, "rankdir": laid.rankdir,
        "theme": options.theme, "colorBy": picture.color_by, "aux": laid.aux,
        "shapes": laid.shapes, "legend": options.legend, "pad": PAD, "labelH": LABEL_H,
    }
    data["themes"] = THEMES
    if changed is not None:
        data["diffColors"], data["diffLines"] = DIFF_COLORS, DIFF_LINES
    data["unique"] = UNIQUE_COLOR
    data["warnings"] = h.model.warnings.lines()[:50]
    data["shapesNote"] = h.model.shapes_note() if laid.shapes else None
    if h.model.unit != "op":  # a Keras layer graph counts layers (ops by default)
        data["unit"] = h.model.unit
    if h.model.notes:
        data["legendNotes"] = h.model.notes
    return data
