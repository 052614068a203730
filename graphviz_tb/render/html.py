"""The interactive HTML viewer: one self-contained, offline file.

Python does the heavy lifting once: it builds the hierarchy, lays out the initial view with
Graphviz (exactly what the SVG output shows) and embeds everything the page needs as compact,
column-oriented JSON:

* every member of the hierarchy (ops and groups): parent, name (as a suffix of an ancestor's
  name), kind, op type, collapsed size and label, colour keys (structure template, op type,
  device, dtype);
* every group's aggregated edges between its children, in the order :func:`~graphviz_tb.layout.
  compute_layout` feeds them to Graphviz, with their shape labels and widths;
* every op edge (for tracing and for the details panel), ordered by the aggregated edge that
  stands for it, with its source output and destination input slot (an edge from a call op into
  an argument of its body carries the call's input slot it passes on, so the page's trace goes
  through a call argument by argument);
* the values ``While`` loops carry from one iteration to the next, which no edge shows;
* per-op details: attributes (already cut by :mod:`graphviz_tb.attrs`) and outputs, both
  interned, because most ops share them;
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

import base64
import hashlib
import html
import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import GraphvizTbError
from ..functions import call_targets
from ..hierarchy import AggEdge, Group, Member, OpNode
from ..layout import (
    LABEL_H,
    PAD,
    PT,
    GroupLayout,
    Stub,
    edge_label,
    edge_width,
    leaf_size,
)
from ..model import CONTROL, DATA, REF
from ..scene import Scene, build_scene
from ..shapes import format_shape
from ..structure import UNIQUE_COLOR, templates_of
from ..view import DiffTally, focus_members
from .dot import COST_COLORS, DIFF_COLORS, DIFF_LINES, THEMES, clean_text

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..costs import CostSet
    from ..hierarchy import Hierarchy
    from ..options import RenderOptions

__all__ = ["VIEWER_DIR", "EmbeddedGraph", "PageEntry", "build_data", "render_html",
           "render_pages"]

VIEWER_DIR = Path(__file__).with_name("viewer")
#: Format of the embedded data; the bundle refuses data of another version.
DATA_VERSION = 1

#: The most changes a diff's page lists (the picture colours them all).
_MAX_CHANGES = 5000
_KINDS = {"root": 1, "scope": 2, "function": 3, "prefix": 4, "series": 5}
_ROLES = {"op": 0, "missing": 1, "arg": 2, "retval": 3}
_EDGE_KINDS = {DATA: 0, CONTROL: 1, REF: 2}
_SURROGATES = re.compile("[\ud800-\udfff]")


# --------------------------------------------------------------------------- small helpers


class _Interner:
    """Values -> dense indices, so repeated attribute maps, labels and keys are stored once."""

    def __init__(self) -> None:
        self.index: dict[Any, int] = {}
        self.values: list[Any] = []

    def __call__(self, key: Any, value: Any = None) -> int:
        i = self.index.get(key)
        if i is None:
            i = self.index[key] = len(self.values)
            self.values.append(key if value is None else value)
        return i


def _r(x: float) -> float | int:
    """Coordinates to 0.1 pt: plenty for drawing, and a third of the JSON."""
    v = round(x, 1)
    return int(v) if v == int(v) else v


def _finite(value: Any) -> Any:
    """JSON has no NaN or infinity: spell them as strings (attribute values may hold them)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, list):
        return [_finite(v) for v in value]
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    return value


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:
        return json.dumps(_finite(value), ensure_ascii=False, separators=(",", ":"))


def _script_safe(text: str) -> str:
    """JSON made safe inside ``<script type="application/json">``: no ``</script>``, no ``<!--``,
    and no lone surrogates (which UTF-8 cannot encode)."""
    text = (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
    return _SURROGATES.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def _csp_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


# --------------------------------------------------------------------------- the data


class _Builder:
    """Collects the embedded data; see the module docstring for what and why."""

    def __init__(self, h: Hierarchy, scene: Scene, options: RenderOptions,
                 keep: set[Member] | None) -> None:
        self.h, self.scene, self.options, self.keep = h, scene, options, keep
        self.model = h.model
        self.ids: dict[Member, int] = {}
        self.members: list[Member] = []

    # -- members

    def _order(self) -> None:
        """Root first, then every member parents-before-children (the order ``walk`` gives)."""
        self.ids[self.h.root] = 0
        self.members.append(self.h.root)
        stack: list[Member] = list(reversed(self.h.root.children))
        while stack:
            m = stack.pop()
            if self.keep is not None and m not in self.keep:
                continue
            self.ids[m] = len(self.members)
            self.members.append(m)
            if isinstance(m, Group):
                stack.extend(reversed(m.children))

    def _name_parts(self, m: Member) -> tuple[int, str]:
        """The nearest ancestor whose name prefixes ``m``'s, and the rest of the name."""
        for anc in m.ancestors():
            if anc.name and m.name.startswith(anc.name + "/") and anc in self.ids:
                return self.ids[anc], m.name[len(anc.name) + 1:]
        return -1, m.name

    def _device_keys(self) -> dict[Group, str]:
        """Each group's commonest device among all its ops (bottom-up, so linear).  Most graphs
        name one device or none: then every group holding an op takes it, with no count per
        group (a Counter per member was a sixth of NASNet-Large's page data)."""
        node = self.model.graph._node
        devices = {m: node[m.name]["device"] or "(no device)" for m in self.members
                   if isinstance(m, OpNode)}
        if len(set(devices.values())) == 1:
            holding: set[Member] = set()
            for m in reversed(self.members):
                if (m in devices or m in holding) and m.parent in self.ids:
                    holding.add(m.parent)  # type: ignore[arg-type]
            return dict.fromkeys(holding, next(iter(devices.values())))  # type: ignore[arg-type]
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
        self._order()
        h, graph = self.h, self.model.graph
        templates = templates_of(h)
        rank = {t: i for i, t in enumerate(templates.repeated)}
        op_keys: Counter[str] = Counter()
        dev_keys: Counter[str] = Counter()
        dt_keys: Counter[str] = Counter()
        op_dtype: dict[OpNode, str] = {}
        for m in self.members:
            if isinstance(m, OpNode):
                data = graph._node[m.name]  # the node dict itself: networkx's view is slower
                outs = self.model.op_outputs(m.name)
                op_dtype[m] = (outs[0].dtype if outs else None) or "(unknown)"
                op_keys[m.op] += 1
                dev_keys[data["device"] or "(no device)"] += 1
                dt_keys[op_dtype[m]] += 1
        group_dev = self._device_keys()  # always among the ops' devices
        ops = [k for k, _ in sorted(op_keys.items(), key=lambda kv: (-kv[1], kv[0]))]
        devs = [k for k, _ in sorted(dev_keys.items(), key=lambda kv: (-kv[1], kv[0]))]
        dts = [k for k, _ in sorted(dt_keys.items(), key=lambda kv: (-kv[1], kv[0]))]
        op_i = {k: i for i, k in enumerate(ops)}
        dev_i = {k: i for i, k in enumerate(devs)}
        dt_i = {k: i for i, k in enumerate(dts)}

        attrs, outs = _Interner(), _Interner()
        cols: dict[str, list[Any]] = {k: [] for k in (
            "parent", "nb", "ns", "kind", "type", "w", "h", "tpl", "dev", "dt", "nops",
            "attr", "out")}
        labels: dict[int, str] = {}
        captions: dict[int, str] = {}
        functions: dict[int, str] = {}
        calls: dict[int, list[str]] = {}
        notes: dict[int, list[str]] = {}
        for i, m in enumerate(self.members):
            nb, ns = self._name_parts(m) if i else (-1, "")
            w, hh, lines = leaf_size(m) if i else (0.0, 0.0, ("",))
            cols["parent"].append(self.ids[m.parent] if m.parent is not None else -1)
            cols["nb"].append(nb)
            cols["ns"].append(ns)
            # In inches to 3 decimals: exactly what layout.group_dot writes, so the page's
            # DOT for a group is the same text as Python's.
            cols["w"].append(round(w / PT, 3))
            cols["h"].append(round(hh / PT, 3))
            if i and lines[0] != ns:
                labels[i] = lines[0]
            if isinstance(m, Group):
                cols["kind"].append(_KINDS.get(m.kind, 2))
                cols["type"].append(-1)
                t = rank.get(templates.shown(m))
                cols["tpl"].append(-1 if t is None else t)
                cols["dev"].append(dev_i.get(group_dev.get(m, ""), -1))
                cols["dt"].append(-1)
                cols["nops"].append(m.op_count)
                cols["attr"].append(-1)
                cols["out"].append(-1)
                if len(lines) > 1:
                    captions[i] = lines[1]
                if m.function:
                    functions[i] = m.function
                continue
            assert isinstance(m, OpNode)
            data = graph._node[m.name]
            cols["kind"].append(-_ROLES.get(m.role, 0))
            cols["type"].append(op_i[m.op])
            cols["tpl"].append(-1)
            cols["dev"].append(dev_i[data["device"] or "(no device)"])
            cols["dt"].append(dt_i[op_dtype[m]])
            cols["nops"].append(1)
            # Interned: most ops share their attributes and outputs with others.  (repr of
            # a dict of plain values is deterministic, and cheaper than JSON as a key.)
            decoded = self.model.attrs(m.name)
            cols["attr"].append(attrs(repr(decoded), decoded) if decoded else -1)
            infos = tuple((o.dtype, format_shape(o) or None)
                          for o in self.model.op_outputs(m.name))
            cols["out"].append(outs(infos) if infos else -1)
            if data.get("calls"):
                calls[i] = list(data["calls"])
            extra = []
            if data.get("function"):
                extra.append(f"in the body of function {data['function']}")
            if m.role == "missing":
                extra.append("missing: named as an input, but no such op exists")
            if data.get("recursion_cut"):
                extra.append("recursion cut here: the function calls itself")
            if data.get("shape_error"):
                extra.append(f"shape error: {data['shape_error']}")
            if extra:
                notes[i] = extra
        tpl_table = []
        for t in templates.repeated:
            rep = templates.representative(t)
            tpl_table.append([rep.label, len(templates.instances[t])])
        return {
            **cols, "labels": labels, "captions": captions, "functions": functions,
            "calls": calls, "notes": notes, "attrs": attrs.values, "outs": outs.values,
            "opTypes": ops, "devices": devs, "dtypes": dts, "templates": tpl_table,
        }

    # -- edges

    def edges_data(self) -> dict[str, Any]:
        """Aggregated edges group by group, and the op edges each stands for, in that order."""
        h, succ, options = self.h, self.model.graph._succ, self.options
        labels = _Interner()
        labels("")
        agg_cols: dict[str, list[Any]] = {k: [] for k in (
            "ag", "as", "ad", "an", "ac", "ar", "ab", "al", "aw", "ae")}
        op_edges: list[int] = []
        self.agg_index: dict[int, int] = {}  # id(agg.edges) -> index, also for stub edges
        self.aggs: list[AggEdge] = []  # in their index order
        for g in self.members:
            if not isinstance(g, Group):
                continue
            gi = self.ids[g]
            items = sorted(g.edges.items(), key=lambda kv: (kv[0][0].name, kv[0][1].name))
            for (a, b), agg in items:
                if a not in self.ids or b not in self.ids:
                    continue
                self.agg_index[id(agg.edges)] = len(agg_cols["ag"])
                self.aggs.append(agg)
                label = edge_label(h, agg, dtypes=options.dtypes) if options.shapes else ""
                agg_cols["ag"].append(gi)
                agg_cols["as"].append(self.ids[a])
                agg_cols["ad"].append(self.ids[b])
                agg_cols["an"].append(agg.counts[DATA])
                agg_cols["ac"].append(agg.counts[CONTROL])
                agg_cols["ar"].append(agg.counts[REF])
                agg_cols["ab"].append(agg.back)
                agg_cols["al"].append(labels(label))
                agg_cols["aw"].append(edge_width(h, agg))
                n = 0
                for u, v, k in agg.edges:
                    ou, ov = h.ops[u], h.ops[v]
                    if ou not in self.ids or ov not in self.ids:
                        continue
                    d = succ[u][v][k]  # the adjacency dicts: the edge view costs 3x more
                    code = _EDGE_KINDS[d["kind"]] | (4 if d["back"] else 0) | (
                        d["src_output"] << 3)
                    op_edges.extend((self.ids[ou], self.ids[ov], code, d["dst_input"]))
                    n += 1
                agg_cols["ae"].append(n)
        return {**agg_cols, "edgeLabels": labels.values, "E": op_edges,
                "carry": self._loop_carry()}

    def _loop_carry(self) -> list[int]:
        """What a ``While`` loop carries between iterations, as dependencies for the page's trace
        (flat ``[src, dst, ...]``, never drawn): the body's result ``i`` becomes argument ``i``
        of the body and of the condition in the next iteration, and the condition's result
        decides every result of the loop."""
        graph, ops, ids = self.model.graph, self.h.ops, self.ids
        groups = self.model.function_groups
        results: dict[str, dict[int, int]] = {}  # body prefix -> result index -> member
        for m in self.members:
            if isinstance(m, OpNode) and m.role == "retval":
                data = graph.nodes[m.name]
                prefix = m.name.rpartition("/")[0]
                if groups.get(prefix) == data.get("function") and "ret_index" in data:
                    results.setdefault(prefix, {})[data["ret_index"]] = ids[m]
        out: list[int] = []
        for m in self.members:
            data = graph.nodes[m.name] if isinstance(m, OpNode) else None
            if not data or not data.get("calls") or data["node_def"] is None:
                continue
            subs = {sub for sub, _ in call_targets(data["node_def"], self.model.functions)[0]}
            if subs != {"cond", "body"}:
                continue
            body = results.get(f"{m.name}/body", {})
            for _, v, d in graph.out_edges(m.name, data=True):
                arg = ops.get(v)
                src = body.get(d["src_output"])
                if (d["kind"] != CONTROL and src is not None and arg in ids
                        and arg.role == "arg"):
                    out.extend((src, ids[arg]))
            cond = results.get(f"{m.name}/cond", {}).get(0)
            if cond is not None:
                for i in sorted(body):
                    out.extend((cond, body[i]))
        return out

    # -- diffs

    def diff_data(self, tally: DiffTally | None = None) -> dict[str, Any] | None:
        """What changed, when the model is a diff's merged model: each member's status
        (0 unchanged, 1 added, 2 removed, 3 changed), each group's counts, each changed op's
        changes and what it was, each op's old name, each aggregated edge's status, and the
        list of changes in the order the page lists them."""
        graph = self.model.graph
        if not any("diff" in data for data in graph._node.values()):
            return None
        tally = tally if tally is not None else DiffTally(self.h)
        code = {"unchanged": 0, "added": 1, "removed": 2, "changed": 3}
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
        edges = []
        for agg in self.aggs:
            seen = {graph.edges[e].get("diff", "unchanged") for e in agg.edges}
            edges.append(code[next(iter(seen))] if len(seen) == 1 and seen <= {
                "added", "removed"} else 0)
        changes = (order[3] + order[1] + order[2])[:_MAX_CHANGES]
        return {"status": status, "counts": counts, "what": what, "was": was,
                "before": _finite(before), "edges": edges, "changes": changes,
                "total": {k: tally(self.h.root)[k] for k in code}}

    # -- costs

    def costs_data(self, costs: CostSet) -> dict[str, Any]:
        """Every recorded step of the graph's run, op by op (the page sums groups itself: a
        group's members are one range of the pre-order), with what the details panel shows.

        A row: member, time, allocated bytes, whole time, kernel time, start after the step's
        first op (-1: unknown), executions, peak bytes, persistent bytes, temporary bytes,
        outputs (an index into ``outputs``: ``[slot, dtype, shape, bytes]`` each, interned).
        """
        outputs = _Interner()
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
                "colors": COST_COLORS}

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
            agg = self.agg_index.get(id(wire.agg.edges))
            if a is None or b is None or agg is None or not wire.points:
                continue
            pts = [_r(v) for p in wire.points for v in p]
            tip = [_r(wire.arrow[0]), _r(wire.arrow[1])] if wire.arrow else None
            lp = [_r(wire.label_pos[0]), _r(wire.label_pos[1])] if wire.label_pos else None
            wires.append([a, b, agg, pts, tip, lp])
        aux = [self.ids[m] for m in loc.aux if m in self.ids]
        return {"w": round(loc.width, 3), "h": round(loc.height, 3), "n": nodes, "s": stub_rows,
                "e": wires, "x": aux}


def build_data(h: Hierarchy, options: RenderOptions, *, title: str = "graph",
               progress: Callable[[int, int], None] | None = None,
               costs: CostSet | None = None) -> dict[str, Any]:
    """Everything the viewer embeds, as one JSON-ready dict."""
    tally = DiffTally(h) if options.color_by == "diff" else None  # one count, used twice
    scene = build_scene(h, options, progress=progress,
                        weigh=tally.changes if tally is not None else None)
    h.complete()  # the page ships every group's edges and template
    keep = focus_members(h, options.focus, options.radius)[0] if options.focus else None
    b = _Builder(h, scene, options, keep)
    data: dict[str, Any] = {"version": DATA_VERSION}
    data.update(b.members_data())
    data.update(b.edges_data())
    data["layouts"] = b.layouts_data()
    data["expanded"] = sorted(b.ids[g] for g in scene.expanded if g in b.ids)
    if costs is not None:
        data["costs"] = b.costs_data(costs)
    changed = b.diff_data(tally)
    if changed is not None:
        data["diff"] = changed
    data["options"] = {
        "title": options.title or title, "rankdir": options.rankdir,
        "theme": options.theme, "colorBy": options.color_by, "aux": options.aux,
        "shapes": options.shapes, "legend": options.legend, "pad": PAD, "labelH": LABEL_H,
    }
    data["themes"] = THEMES
    if changed is not None:
        data["diffColors"], data["diffLines"] = DIFF_COLORS, DIFF_LINES
    data["unique"] = UNIQUE_COLOR
    data["warnings"] = h.model.warnings.lines()[:50]
    return data


# --------------------------------------------------------------------------- the page


def _read_viewer() -> tuple[str, str, str]:
    """The viewer's script, its style, and its layout worker (gzipped, as base64)."""
    bundle, worker = VIEWER_DIR / "bundle.js", VIEWER_DIR / "layout-worker.js.gz"
    missing = [p for p in (bundle, worker) if not p.is_file()]
    if missing:
        raise GraphvizTbError(
            f"the HTML viewer is not built ({', '.join(map(str, missing))} missing); run "
            "'make viewer' (it needs Node.js and npm) in the graphviz_tb source tree"
        )
    script = bundle.read_text(encoding="utf-8")
    style = (VIEWER_DIR / "viewer.css").read_text(encoding="utf-8")
    # A bundle is inlined between <script> tags: it must not close them itself.
    script = re.sub(r"</(script)", r"<\\/\1", script, flags=re.IGNORECASE)
    return script, style, base64.b64encode(worker.read_bytes()).decode("ascii")


def render_html(h: Hierarchy, options: RenderOptions, *, title: str = "graph",
                progress: Callable[[int, int], None] | None = None,
                costs: CostSet | None = None) -> str:
    """The viewer page for hierarchy ``h``: one self-contained HTML document."""
    data = build_data(h, options, title=title, progress=progress, costs=costs)
    return _page(data, options, options.title or title)


@dataclass(frozen=True)
class PageEntry:
    """One graph of a logdir as the page's picker lists it: its run, its name in the run,
    and which embedded graph draws it (a graph several runs share is embedded once)."""

    run: str
    name: str
    graph: int


@dataclass(frozen=True)
class EmbeddedGraph:
    """One distinct graph of a logdir page: what :func:`build_data` needs for it."""

    hierarchy: Hierarchy
    title: str
    costs: CostSet | None = None


def render_pages(graphs: list[EmbeddedGraph], entries: list[PageEntry], options: RenderOptions,
                 *, first: int = 0, title: str = "logdir",
                 progress: Callable[[int, int], None] | None = None) -> str:
    """One viewer page holding several graphs (every graph of a logdir) with a picker.

    ``entries`` lists what the picker shows, in order; ``first`` is the entry shown at first.
    The page switches between the graphs without reloading and keeps each one's view.
    """
    data = {
        "version": DATA_VERSION,
        "pages": [{"run": e.run, "name": e.name, "graph": e.graph} for e in entries],
        "first": first,
        "graphs": [build_data(g.hierarchy, options, title=g.title, progress=progress,
                              costs=g.costs) for g in graphs],
    }
    return _page(data, options, options.title or title)


def _page(data: dict[str, Any], options: RenderOptions, title: str) -> str:
    """The HTML document around the embedded data: style, viewer, layout worker, policy."""
    script, style, worker = _read_viewer()
    payload = _script_safe(_json(data))
    title = html.escape(clean_text(title, 200), quote=True)
    csp = "; ".join([
        "default-src 'none'",
        f"script-src {_csp_hash(script)} 'wasm-unsafe-eval'",
        f"style-src {_csp_hash(style)}",
        "img-src data: blob:",
        "connect-src 'none'",
        "font-src 'none'",
        "media-src 'none'",
        "object-src 'none'",
        "frame-src 'none'",
        "worker-src blob:",  # Graphviz lays out in a worker started from the page's own code
        "manifest-src 'none'",
        "base-uri 'none'",
        "form-action 'none'",
    ])
    theme = "dark" if options.theme == "dark" else "light"
    return (
        "<!DOCTYPE html>\n"
        f"<html lang=\"en\" data-theme=\"{theme}\">\n<head>\n"
        "<meta charset=\"utf-8\">\n"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<meta name=\"generator\" content=\"graphviz_tb\">\n"
        f"<title>{title}</title>\n"
        f"<style>{style}</style>\n"
        "</head>\n<body>\n"
        "<div id=\"app\"><noscript>This graph viewer needs JavaScript.</noscript></div>\n"
        f"<script type=\"application/json\" id=\"tbgraph-data\">{payload}</script>\n"
        # Inert data (never run as it is): the worker's script, decoded by the viewer.
        f"<script type=\"application/octet-stream\" id=\"tbgraph-worker\">{worker}</script>\n"
        f"<script>{script}</script>\n"
        "</body>\n</html>\n"
    )
