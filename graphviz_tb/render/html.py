"""The interactive HTML viewer: one self-contained, offline file.

Python does the heavy lifting once: it builds the hierarchy, lays out the initial view with
Graphviz (exactly what the SVG output shows) and embeds everything the page needs as compact,
column-oriented JSON, its numeric columns packed as base64 typed arrays (:func:`_pack`):

* every member of the hierarchy (ops and groups): parent, name (as a suffix of an ancestor's
  name), kind, op type, collapsed size (interned) and label, colour keys (structure template,
  op type, device, dtype);
* every group's aggregated edges between its children, in the order :func:`~graphviz_tb.layout.
  compute_layout` feeds them to Graphviz, with their shape labels and widths (both interned);
* every op edge (for tracing and for the details panel), ordered by the aggregated edge that
  stands for it, with its source output and destination input slot (an edge from a call op into
  an argument of its body carries the call's input slot it passes on, so the page's trace goes
  through a call argument by argument);
* the values ``While`` loops carry from one iteration to the next, which no edge shows;
* per-op details: attributes (already cut by :mod:`graphviz_tb.attrs`) and outputs, both
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

import base64
import hashlib
import html
import json
import math
import re
import sys
from array import array
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..attrs import decode_attr
from ..errors import GraphvizTbError
from ..functions import call_targets
from ..hierarchy import AggEdge, Group, Member, OpNode
from ..layout import (
    LABEL_H,
    PAD,
    PT,
    Carried,
    GroupLayout,
    Stub,
    edge_look,
    leaf_size,
)
from ..model import CONTROL, DATA, REF
from ..scene import Scene, build_scene
from ..shapes import format_shape
from ..structure import UNIQUE_COLOR, legend_labels, templates_of
from ..view import DiffTally, focus_members
from .dot import COST_COLORS, DIFF_COLORS, DIFF_LINES, NO_RECORD, THEMES, clean_text

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..costs import CostSet
    from ..hierarchy import Hierarchy
    from ..model import GraphModel
    from ..options import RenderOptions
    from ..shapes import TensorInfo

__all__ = ["VIEWER_DIR", "EmbeddedGraph", "PageEntry", "build_data", "page_data",
           "render_html", "render_pages"]

VIEWER_DIR = Path(__file__).with_name("viewer")
#: Format of the embedded data; the bundle refuses data of another version.
DATA_VERSION = 2

#: The most changes a diff's page lists (the picture colours them all).
_MAX_CHANGES = 5000
_KINDS = {"root": 1, "scope": 2, "function": 3, "prefix": 4, "series": 5}
_ROLES = {"op": 0, "missing": 1, "arg": 2, "retval": 3}
_EDGE_KINDS = {DATA: 0, CONTROL: 1, REF: 2}
#: The integer columns a page carries packed (see :func:`_pack`).
_PACKED = ("parent", "nb", "kind", "type", "sz", "tpl", "dev", "dt", "nops", "attr", "out",
           "ag", "as", "ad", "an", "ac", "ar", "ab", "al", "aw", "ae", "es", "ed", "ec", "ei",
           "carry")
#: Array typecodes for integers (int8, int16, int32), narrowest first.
_INT_CODES = ("b", "h", "i")
_PAGE_DATA = re.compile(r'<script type="application/json" id="tbgraph-data">(.*?)</script>',
                        re.DOTALL)


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
    """Compact JSON in ASCII: every other character escaped, so no lone surrogate (which UTF-8
    cannot encode) nor U+2028/U+2029 reaches the page, with no pass over the text to find them
    (that pass, and encoding the text to UTF-8, cost more than the escapes)."""
    try:
        return json.dumps(value, separators=(",", ":"), allow_nan=False)
    except ValueError:
        return json.dumps(_finite(value), separators=(",", ":"))


def _script_safe(text: str) -> str:
    """JSON (:func:`_json`) made safe inside ``<script type="application/json">``: no
    ``</script>``, no ``<!--``."""
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _little_endian(values: array[Any]) -> array[Any]:
    """``values`` in place as little-endian (as the page reads them), whatever this machine's
    own order."""
    if sys.byteorder == "big":
        values.byteswap()
    return values


def _pack(data: dict[str, Any]) -> dict[str, Any]:
    """One graph's data with its integer columns packed: each as its array typecode (the
    narrowest of int8, int16, int32 that holds it) then base64 of its little-endian bytes.

    A column of NASNet-Large is 60,000 to 370,000 numbers: as JSON they were most of the
    page's encoding in Python and of its parsing in the browser, which then copied them into
    typed arrays anyway.  Packed, Python writes each with a few C calls and the page views
    the decoded bytes as a typed array.
    """
    out = dict(data)
    for key in _PACKED:
        column = data[key]
        # The narrowest typecode that takes every value: array checks the range in C, where
        # two passes for the minimum and the maximum cost as much again.
        for code in _INT_CODES:
            try:
                values = array(code, column)
            except OverflowError:
                continue
            packed = _little_endian(values).tobytes()
            out[key] = code + base64.b64encode(packed).decode("ascii")
            break
        # else beyond int32 (a hostile file's output slot): left as JSON
    return out


def _unpack(data: dict[str, Any]) -> dict[str, Any]:
    """The inverse of :func:`_pack`."""
    out = dict(data)
    for key in _PACKED:
        if isinstance(data[key], str):
            values = array(data[key][0], base64.b64decode(data[key][1:]))
            out[key] = _little_endian(values).tolist()
    return out


def page_data(page: str) -> dict[str, Any]:
    """The data embedded in a viewer page, as :func:`build_data` made it (or, for a page of
    several graphs, as :func:`render_pages` assembled it): what benchmarks and tests read
    back from a written page."""
    match = _PAGE_DATA.search(page)
    if match is None:
        raise GraphvizTbError("no embedded tbgraph data in this page")
    data = json.loads(match.group(1))
    if "graphs" in data:
        return {**data, "graphs": [_unpack(g) for g in data["graphs"]]}
    return _unpack(data)


def _csp_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


# --------------------------------------------------------------------------- the data


class _Ranked:
    """Names ranked by how many ops carry them, most first (then by name): the page's colour
    keys, so the commonest op types, devices and dtypes take the first colours."""

    def __init__(self, values: list[str]) -> None:
        counts = Counter(values)
        self.names = sorted(counts, key=lambda k: (-counts[k], k))
        self.index = {k: i for i, k in enumerate(self.names)}


class _AttrTable:
    """Op attributes interned twice: each distinct ``[name, value]`` pair once (``pairs``), and
    each op's sorted list of pair indices once (``sets``).

    Ops share most attributes (a dtype, a colocation class, a padding) but seldom all of them,
    so interning whole maps kept a third of NASNet-Large's page in near-copies.  And an
    AttrValue is decoded once per distinct serialized form, not once per op: decoding every
    op's attributes was a sixth of the page's build.  Pairs are told apart by their decoded
    value, so two encodings of one value (a map inside a ``func``) still make one pair.
    """

    def __init__(self) -> None:
        self.pairs: list[list[Any]] = []
        self.sets = _Interner()
        #: Serialized attribute -> (its id among the serialized forms, its pair or -1).
        self._by_raw: dict[tuple[str, bytes], tuple[int, int]] = {}
        self._by_value: dict[tuple[str, str], int] = {}

    def __call__(self, node_def: Any) -> tuple[int, tuple[int, ...]]:
        """The index of a NodeDef's attributes (``_output_shapes`` left to the outputs), or -1
        for none; and the ids of its attributes' serialized forms, ``_output_shapes``
        included: two NodeDefs of one op type with equal ids have equal outputs."""
        amap = node_def.attr
        ids = []
        raws = []
        by_raw = self._by_raw
        for key in sorted(amap):
            raw = (key, amap[key].SerializeToString())
            found = by_raw.get(raw)
            if found is None:
                pair = -1
                if key != "_output_shapes":
                    decoded = decode_attr(amap[key])
                    pair = self._by_value.setdefault((key, repr(decoded)), len(self.pairs))
                    if pair == len(self.pairs):
                        self.pairs.append([key, decoded])
                found = by_raw[raw] = (len(by_raw), pair)
            raws.append(found[0])
            if found[1] >= 0:
                ids.append(found[1])
        return (self.sets(tuple(ids), ids) if ids else -1), tuple(raws)


def _op_notes(m: OpNode, data: dict[str, Any]) -> list[str]:
    """What the details panel says of an op beyond its attributes and edges."""
    notes = []
    if data.get("function"):
        notes.append(f"in the body of function {data['function']}")
    if m.role == "missing":
        notes.append("missing: named as an input, but no such op exists")
    if data.get("recursion_cut"):
        notes.append("recursion cut here: the function calls itself")
    if data.get("depth_cut"):
        notes.append("left closed: a call nested too deep to open")
    if data.get("shape_error"):
        notes.append(f"shape error: {data['shape_error']}")
    return notes


class _OpsData:
    """What the page shows of each op, in the order given: its device and first output's
    dtype (colour keys), its attributes and outputs (interned), its calls and notes."""

    def __init__(self, model: GraphModel, members: list[OpNode]) -> None:
        node = model.g._node  # the node dicts themselves: networkx's view is slower
        known = model.cached_outputs()
        self.members = members
        self.devices: list[str] = []
        self.dtypes: list[str] = []
        self.attr: list[int] = []
        self.out: list[int] = []
        self.calls: dict[int, list[str]] = {}
        self.notes: dict[int, list[str]] = {}
        self.attrs = _AttrTable()
        self.outs = _Interner()
        by_info: dict[tuple[TensorInfo, ...], int] = {}  # outputs -> index in ``outs``
        # An op's outputs follow from its type and attributes alone (shapes.node_outputs):
        # worked out once per distinct pair, not once per op (a seventh of the page's build).
        # They go to the model's cache as op_outputs would put them, for the edge labels.
        by_attrs: dict[Any, tuple[list[TensorInfo], int, str]] = {}
        for j, m in enumerate(members):
            data = node[m.name]
            self.devices.append(data["device"] or "(no device)")
            node_def = data.get("node_def")
            if node_def is not None:
                attr, raws = self.attrs(node_def)
            else:
                attr, raws = -1, ()
            self.attr.append(attr)
            # None: the outputs are not the type's and the attributes' alone (no NodeDef, or
            # known otherwise).
            key = (node_def.op, raws) if node_def is not None and m.name not in known \
                and "outputs" not in data else None
            found = by_attrs.get(key) if key is not None else None
            if found is None:
                infos = model.op_outputs(m.name)
                outs = tuple(infos)
                index = by_info.get(outs, -1) if outs else -1
                if outs and index < 0:
                    index = by_info[outs] = self.outs(tuple(
                        (o.dtype, format_shape(o) or None) for o in infos))
                found = (infos, index, (infos[0].dtype if infos else None) or "(unknown)")
                if key is not None:
                    by_attrs[key] = found
            else:
                model.set_outputs(m.name, found[0])
            self.out.append(found[1])
            self.dtypes.append(found[2])
            if data.get("calls"):
                self.calls[j] = list(data["calls"])
            notes = _op_notes(m, data)
            if notes:
                self.notes[j] = notes
        self.type_names = _Ranked([m.op for m in members])
        self.device_names = _Ranked(self.devices)
        self.dtype_names = _Ranked(self.dtypes)


class _Builder:
    """Collects the embedded data; see the module docstring for what and why."""

    def __init__(self, h: Hierarchy, scene: Scene, options: RenderOptions,
                 keep: set[Member] | None,
                 notes: Callable[[Member], str | None] | None = None) -> None:
        self.h, self.scene, self.options, self.keep = h, scene, options, keep
        #: What a box's second line adds (a diff's change), sized as the static picture does.
        self.notes = notes
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
        """The nearest ancestor whose name prefixes ``m``'s, and the rest of the name (a loop,
        not ``ancestors()``: the parent nearly always answers, and the generator cost more)."""
        anc = m.parent
        while anc is not None:
            if anc.name and m.name.startswith(anc.name + "/") and anc in self.ids:
                return self.ids[anc], m.name[len(anc.name) + 1:]
            anc = anc.parent
        return -1, m.name

    def _device_keys(self, devices: dict[OpNode, str]) -> dict[Group, str]:
        """Each group's commonest device among all its ops (bottom-up, so linear).  Most graphs
        name one device or none: then every group holding an op takes it, with no count per
        group (a Counter per member was a sixth of NASNet-Large's page data)."""
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
        """Every member's columns (see the module docstring), built in one pass over the
        members after one over the ops: a per-member dict of columns cost more than the data."""
        self._order()
        templates = templates_of(self.h)
        rank = {t: i for i, t in enumerate(templates.repeated)}
        ops = _OpsData(self.model, [m for m in self.members if isinstance(m, OpNode)])
        # A group's device is its commonest op device, so always in the ops' table.
        group_dev = self._device_keys(dict(zip(ops.members, ops.devices, strict=True)))
        op_i, dev_i, dt_i = ops.type_names.index, ops.device_names.index, ops.dtype_names.index
        n = len(self.members)
        parent, nb, ns = [-1] * n, [-1] * n, [""] * n
        kind, typ, tpl, dev, dt = [0] * n, [-1] * n, [-1] * n, [-1] * n, [-1] * n
        sz, nops, attr, out = [0] * n, [1] * n, [-1] * n, [-1] * n
        # Collapsed sizes (NASNet-Large's 101,000 members have 96), in inches to 3 decimals:
        # exactly what layout.group_dot writes, so the page's DOT for a group is Python's.
        sizes = _Interner()
        sizes((0.0, 0.0))  # the root's
        labels: dict[int, str] = {}
        captions: dict[int, str] = {}
        functions: dict[int, str] = {}
        # An op's box depends only on its label and type (layout.leaf_size): sized once per
        # distinct pair (NASNet-Large's 65,000 ops have 750 or 2,900), its size interned with it.
        op_box: dict[tuple[str, str], tuple[int, str]] = {}
        ids, k = self.ids, 0
        for i, m in enumerate(self.members):
            if isinstance(m, Group):
                lines: tuple[str, ...] = ("",)  # the root's
                if i:
                    nb[i], ns[i] = self._name_parts(m)
                    parent[i] = ids[m.parent]  # type: ignore[index]
                    w, hh, lines = leaf_size(m, self.notes(m) if self.notes else None)
                    sz[i] = sizes((round(w / PT, 3), round(hh / PT, 3)))
                    if lines[0] != ns[i]:
                        labels[i] = lines[0]
                kind[i] = _KINDS.get(m.kind, 2)
                t = rank.get(templates.shown(m))
                if t is not None:
                    tpl[i] = t
                dev[i] = dev_i.get(group_dev.get(m, ""), -1)
                nops[i] = m.op_count
                if len(lines) > 1:
                    captions[i] = lines[1]
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
                captions[i] = lines[1]
            elif box is None:
                w, hh, lines = leaf_size(m)
                box = op_box[(m.label, m.op)] = (
                    sizes((round(w / PT, 3), round(hh / PT, 3))), lines[0])
            sz[i] = box[0]
            if box[1] != ns[i]:
                labels[i] = box[1]
            kind[i], typ[i] = -_ROLES.get(m.role, 0), op_i[m.op]
            dev[i], dt[i] = dev_i[ops.devices[k]], dt_i[ops.dtypes[k]]
            attr[i], out[i] = ops.attr[k], ops.out[k]
            k += 1
        op_ids = [ids[m] for m in ops.members]
        tpl_table = []
        called = legend_labels([templates.representative(t) for t in templates.repeated])
        for t, name in zip(templates.repeated, called, strict=True):
            tpl_table.append([name, len(templates.instances[t])])
        return {
            "parent": parent, "nb": nb, "ns": ns, "kind": kind, "type": typ, "sz": sz,
            "sizes": sizes.values, "tpl": tpl, "dev": dev, "dt": dt, "nops": nops,
            "attr": attr, "out": out, "labels": labels, "captions": captions,
            "functions": functions,
            "calls": {op_ids[j]: c for j, c in ops.calls.items()},
            "notes": {op_ids[j]: c for j, c in ops.notes.items()},
            "attrs": ops.attrs.pairs, "attrSets": ops.attrs.sets.values,
            "outs": ops.outs.values, "opTypes": ops.type_names.names,
            "devices": ops.device_names.names, "dtypes": ops.dtype_names.names,
            "templates": tpl_table,
        }

    # -- edges

    def edges_data(self) -> dict[str, Any]:
        """Aggregated edges group by group, and the op edges each stands for, in that order."""
        succ, ids = self.model.g._succ, self.ids
        # Op name -> member index, for the kept ops: one lookup per edge end, not two.
        op_id = {m.name: i for m, i in ids.items() if isinstance(m, OpNode)}
        labels, widths = _Interner(), _Interner()  # NASNet-Large: 61,000 edges, 400 widths
        labels("")
        ag: list[int] = []
        a_src: list[int] = []
        a_dst: list[int] = []
        an: list[int] = []
        ac: list[int] = []
        ar: list[int] = []
        ab: list[int] = []
        al: list[int] = []
        aw: list[int] = []
        ae: list[int] = []
        # Op edges: source, destination, code (kind | back << 2 | source output << 3) and
        # destination input slot, a column each.
        es: list[int] = []
        ed: list[int] = []
        ec: list[int] = []
        ei: list[int] = []
        self.agg_index: dict[int, int] = {}  # id(agg.edges) -> index, also for stub edges
        self.aggs: list[AggEdge] = []  # in their index order
        # The tensors each edge carries are gathered in the one pass over its op edges; an
        # edge carrying none (control only) is unlabelled and thin, looked at once.
        none: tuple[int, int] | None = None
        whole = self.keep is None
        for g in self.members:
            if not isinstance(g, Group):
                continue
            gi = ids[g]
            items = sorted(g.edges.items(), key=lambda kv: (kv[0][0].name, kv[0][1].name))
            for (a, b), agg in items:
                if not whole and (a not in ids or b not in ids):
                    continue
                self.agg_index[id(agg.edges)] = len(ag)
                self.aggs.append(agg)
                start = len(es)
                tensors: dict[Any, tuple[str, str, int]] = {}  # as layout.carried_tensors
                for u, v, k in agg.edges:
                    d = succ[u][v][k]  # the adjacency dicts: the edge view costs 3x more
                    kind = d["kind"]
                    if kind != CONTROL and d["tensor"] not in tensors:
                        tensors[d["tensor"]] = (u, v, k)
                    iu, iv = op_id.get(u), op_id.get(v)
                    if iu is None or iv is None:
                        continue
                    es.append(iu)
                    ed.append(iv)
                    ec.append(_EDGE_KINDS[kind] | (4 if d["back"] else 0) | (
                        d["src_output"] << 3))
                    ei.append(d["dst_input"])
                ae.append(len(es) - start)
                if not tensors:
                    look = none = none or self._look(agg, tensors, labels, widths)
                else:
                    look = self._look(agg, tensors, labels, widths)
                counts = agg.counts
                ag.append(gi)
                a_src.append(ids[a])
                a_dst.append(ids[b])
                an.append(counts[DATA])
                ac.append(counts[CONTROL])
                ar.append(counts[REF])
                ab.append(agg.back)
                al.append(look[0])
                aw.append(look[1])
        return {"ag": ag, "as": a_src, "ad": a_dst, "an": an, "ac": ac, "ar": ar, "ab": ab,
                "al": al, "aw": aw, "ae": ae, "edgeLabels": labels.values,
                "edgeWidths": widths.values, "es": es, "ed": ed, "ec": ec, "ei": ei,
                "carry": self._loop_carry()}

    def _look(self, agg: AggEdge, tensors: Carried, labels: _Interner,
              widths: _Interner) -> tuple[int, int]:
        """An aggregated edge's label and width, interned, as the pictures draw them."""
        label, width = edge_look(self.h, agg, shapes=self.options.shapes,
                                 dtypes=self.options.dtypes, tensors=tensors)
        return labels(label), widths(width)

    def _loop_carry(self) -> list[int]:
        """What a ``While`` loop carries between iterations, as dependencies for the page's trace
        (flat ``[src, dst, ...]``, never drawn): the body's result ``i`` becomes argument ``i``
        of the body and of the condition in the next iteration, and the condition's result
        decides every result of the loop."""
        graph, ops, ids = self.model.g, self.h.ops, self.ids
        node = graph._node  # the node dicts themselves: the view cost more than the rest
        groups = self.model.function_groups
        results: dict[str, dict[int, int]] = {}  # body prefix -> result index -> member
        for m in self.members:
            if isinstance(m, OpNode) and m.role == "retval":
                data = node[m.name]
                prefix = m.name.rpartition("/")[0]
                if groups.get(prefix) == data.get("function") and "ret_index" in data:
                    results.setdefault(prefix, {})[data["ret_index"]] = ids[m]
        out: list[int] = []
        for m in self.members:
            op_data = node[m.name] if isinstance(m, OpNode) else None
            if not op_data or not op_data.get("calls") or op_data["node_def"] is None:
                continue
            subs = {sub for sub, _ in call_targets(op_data["node_def"], self.model.functions)[0]}
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
        graph = self.model.g
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
    notes = tally.note if tally is not None else None
    scene = build_scene(h, options, progress=progress, notes=notes,
                        weigh=tally.opening if tally is not None else None)
    h.complete()  # the page ships every group's edges and template
    keep = focus_members(h, options.focus, options.radius)[0] if options.focus else None
    b = _Builder(h, scene, options, keep, notes)
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
    packed = ({**data, "graphs": [_pack(g) for g in data["graphs"]]} if "graphs" in data
              else _pack(data))
    payload = _script_safe(_json(packed))
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
