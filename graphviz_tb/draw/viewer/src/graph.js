// The embedded graph, decoded from the compact columns graphviz_tb/draw/viewer_data.py builds
// and graphviz_tb/write/page.py writes.
//
// Members (ops and groups) are numbered in pre-order (root = 0, parents before children), so
// every group's descendants form one contiguous range [i, i + size[i]).  That makes "does this
// collapsed group contain a traced op" a prefix-sum lookup instead of a walk.

import { base64Bytes } from "./bytes.js";

export const KIND = { ROOT: 1, SCOPE: 2, FUNCTION: 3, PREFIX: 4, SERIES: 5, BLOCK: 6, SECTION: 7,
  UPDATE: 8, VARIABLES: 9, METRICS: 10, REPLICA: 11, CLIPPING: 12,
  DECAY: 13 };
export const KIND_NAMES = ["op", "root", "scope", "function", "prefix", "series", "block",
  "section", "update", "variables", "metrics", "replica", "clipping", "decay"];
export const ROLE_NAMES = ["op", "missing", "arg", "retval"];
export const EDGE_KINDS = ["data", "control", "ref"];
export const DIFF_STATUSES = ["unchanged", "added", "removed", "changed"];

const CONST_OPS = new Set(["Const", "HostConst"]);
const ARG = -2; // kind of an _Arg op (role 2)
const CONTROL = 1;

// The integer columns come packed (write/page.py _packed): an array typecode (b int8, h int16,
// i int32) then base64 of the little-endian array, decoded once and viewed as a typed array,
// widened to int32, the type the viewer works in (as is a column beyond int32, which comes as
// a JSON array).
const TYPES = { b: Int8Array, h: Int16Array, i: Int32Array };
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function column(packed) {
  if (typeof packed !== "string") return Int32Array.from(packed);
  const Type = TYPES[packed[0]];
  const bytes = base64Bytes(packed.slice(1));
  const size = Type.BYTES_PER_ELEMENT;
  if (!LITTLE_ENDIAN) {
    for (let i = 0; i < bytes.length; i += size) bytes.subarray(i, i + size).reverse();
  }
  const out = new Type(bytes.buffer, bytes.byteOffset, bytes.length / size);
  return Type === Int32Array ? out : Int32Array.from(out);
}

// "1 op", "12 ops", "9 layers": a count in the graph's unit.
export function counted(n, unit) {
  return `${n.toLocaleString("en-US")} ${unit}${n === 1 ? "" : "s"}`;
}

export class Graph {
  constructor(d) {
    const ints = (key) => column(d[key]);
    this.parent = ints("parent");
    const n = this.parent.length;
    this.n = n;
    this.data = d;
    for (const key of ["kind", "type", "tpl", "dev", "dt", "nops", "attr", "out", "cap"]) {
      this[key] = ints(key);
    }
    // Collapsed sizes come interned, in inches (as the DOT gets them); drawing is in points.
    const sz = ints("sz");
    this.w = new Float64Array(n);
    this.h = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const [w, h] = d.sizes[sz[i]];
      this.w[i] = w * 72;
      this.h[i] = h * 72;
    }
    this.opTypes = d.opTypes;
    this.devices = d.devices;
    this.dtypes = d.dtypes;
    this.templates = d.templates;
    this.shapesNote = d.shapesNote || null;
    // What a node is to the reader: an op, or a layer of a Keras layer graph.
    this.unit = d.unit || "op";
    this.captions = d.captions;
    this.functions = d.functions;
    this.calls = d.calls;
    this.notes = d.notes;

    // Names: each is an ancestor's name + "/" + a suffix (or a full name).
    const name = new Array(n);
    const label = new Array(n);
    name[0] = "";
    label[0] = "";
    const nb = ints("nb");
    for (let i = 1; i < n; i++) {
      const b = nb[i];
      name[i] = b < 0 ? d.ns[i] : name[b] + "/" + d.ns[i];
      label[i] = d.ns[i];
    }
    for (const k in d.labels) label[+k] = d.labels[k];
    this.name = name;
    this.label = label;

    // Tree: depth, subtree sizes, and children (in index order) as one flat list, each group's
    // children an array only when asked for (kids): one array per group would slow loading.
    this.depth = new Int32Array(n);
    this.size = new Int32Array(n).fill(1);
    for (let i = 1; i < n; i++) this.depth[i] = this.depth[this.parent[i]] + 1;
    for (let i = n - 1; i > 0; i--) this.size[this.parent[i]] += this.size[i];
    [this.kidStart, this.kidList] = csr(n, this.parent.subarray(1), n - 1, 1);
    this._kids = new Array(n);
    this._byName = null; // built on the first lookup: a map of every name is costly to build

    // Aggregated edges: contiguous per group, and each one's op edges contiguous too.
    this.ag = ints("ag");
    const na = this.ag.length;
    this.na = na;
    for (const key of ["as", "ad", "an", "ac", "ar", "ab", "al", "ae"]) this[key] = ints(key);
    const aw = ints("aw"); // interned widths
    this.aw = new Float64Array(na);
    for (let a = 0; a < na; a++) this.aw[a] = d.edgeWidths[aw[a]];
    this.edgeLabels = d.edgeLabels;
    this.aeStart = new Int32Array(na + 1);
    for (let a = 0; a < na; a++) this.aeStart[a + 1] = this.aeStart[a] + this.ae[a];
    this.aggStart = new Int32Array(n).fill(-1);
    this.aggEnd = new Int32Array(n).fill(-1);
    for (let a = 0; a < na; a++) {
      const g = this.ag[a];
      if (this.aggStart[g] < 0) this.aggStart[g] = a;
      this.aggEnd[g] = a + 1;
    }

    // Op edges (src, dst, code = kind | back << 2 | srcOutput << 3, dst input slot), and
    // adjacency.
    this.esrc = ints("es");
    this.edst = ints("ed");
    this.ecode = ints("ec");
    this.eslot = ints("ei");
    const ne = this.esrc.length;
    this.ne = ne;
    [this.inStart, this.inList] = csr(n, this.edst, ne);
    [this.outStart, this.outList] = csr(n, this.esrc, ne);
    // Calls whose function bodies were opened: ops with an edge into an argument.
    this.opensBody = new Uint8Array(n);
    for (let e = 0; e < ne; e++) if (this.isArgEdge(e)) this.opensBody[this.esrc[e]] = 1;
    this._argSlots = new Map();

    // What While loops carry between iterations (src, dst pairs): dependencies for the trace
    // that no edge shows, never drawn.
    const C = ints("carry");
    const nc = C.length / 2;
    this.csrc = new Int32Array(nc);
    this.cdst = new Int32Array(nc);
    for (let c = 0; c < nc; c++) {
      this.csrc[c] = C[2 * c];
      this.cdst[c] = C[2 * c + 1];
    }
    [this.cinStart, this.cinList] = csr(n, this.cdst, nc);
    [this.coutStart, this.coutList] = csr(n, this.csrc, nc);
    this._lower = null;

    // What ops cost when they ran, one set per recorded step (draw/viewer_data.py costs_data).
    this.costs = d.costs || null;
    this.diff = d.diff || null;
    this._totals = new Map();
    this._costRows = new Map();
  }

  costSteps() { return this.costs ? this.costs.steps : []; }

  // A diff's page (draw/viewer_data.py diff_data): what happened to member i, and to agg a.
  diffStatus(i) { return DIFF_STATUSES[this.diff ? this.diff.status[i] : 0]; }
  diffEdge(a) { return DIFF_STATUSES[this.diff ? this.diff.edges[a] : 0]; }

  // Each member's time (metric "time") or allocated bytes ("memory") in step k: an op's own,
  // a group's the sum over the ops below it (NaN: nothing below was recorded).
  costTotals(k, metric) {
    const key = `${k}:${metric}`;
    let t = this._totals.get(key);
    if (t) return t;
    t = new Float64Array(this.n).fill(NaN);
    const col = metric === "memory" ? 2 : 1;
    for (const row of this.costSteps()[k].ops) t[row[0]] = row[col];
    for (let i = this.n - 1; i > 0; i--) {
      if (Number.isNaN(t[i])) continue;
      const p = this.parent[i];
      t[p] = (Number.isNaN(t[p]) ? 0 : t[p]) + t[i];
    }
    this._totals.set(key, t);
    return t;
  }

  // The recorded row of op i in step k (see costs_data), or null.
  costRow(k, i) {
    let rows = this._costRows.get(k);
    if (!rows) {
      rows = new Map(this.costSteps()[k].ops.map((r) => [r[0], r]));
      this._costRows.set(k, rows);
    }
    return rows.get(i) || null;
  }

  isGroup(i) { return this.kind[i] > 0; }
  isOp(i) { return this.kind[i] <= 0; }
  role(i) { return ROLE_NAMES[-this.kind[i]] || "op"; }
  kindName(i) { return this.kind[i] > 0 ? KIND_NAMES[this.kind[i]] : "op"; }
  opType(i) { return this.type[i] >= 0 ? this.opTypes[this.type[i]] : ""; }
  isConst(i) { return this.kind[i] <= 0 && CONST_OPS.has(this.opType(i)); }
  // The outline a member is drawn with (layout/text.py outline): ops are ellipses, the rest
  // boxes.
  outline(i) {
    return this.kind[i] <= 0 && !this.isConst(i) && !this.opType(i).includes("Summary")
      ? "ellipse" : "box";
  }
  contains(g, i) { return i >= g && i < g + this.size[g]; }

  ancestors(i) {
    const out = [];
    for (let p = this.parent[i]; p >= 0; p = this.parent[p]) out.push(p);
    return out;
  }

  // The children of member i, in index order (none for an op).
  kids(i) {
    let k = this._kids[i];
    if (!k) {
      k = Array.from(this.kidList.subarray(this.kidStart[i], this.kidStart[i + 1]));
      this._kids[i] = k;
    }
    return k;
  }

  // The member of a full name, or -1: a group wins over an op of the same name (as
  // Hierarchy.lookup does).
  lookup(name) {
    if (!this._byName) {
      const byName = new Map();
      for (let i = this.n - 1; i > 0; i--) {
        if (!byName.has(this.name[i]) || this.kind[i] > 0) byName.set(this.name[i], i);
      }
      this._byName = byName;
    }
    const i = this._byName.get(name);
    return i === undefined ? -1 : i;
  }

  // Label lines of a collapsed member, as layout/text.py leaf_size gives them.
  lines(i) {
    const label = this.label[i];
    // A group's second line, or an op's diff note ("Tanh · was Relu"), interned.
    const cap = this.cap[i] >= 0 ? this.captions[this.cap[i]] : null;
    if (cap) return [label, cap];
    if (this.kind[i] > 0) return [label];
    const op = this.opType(i);
    if (CONST_OPS.has(op) || op === label) return [label];
    return [label, op];
  }

  isControl(e) { return (this.ecode[e] & 3) === CONTROL; }

  // Whether op edge e runs from a call op into an argument of one of its function bodies; such
  // an edge carries, as its source output, the call's input slot it passes on.
  isArgEdge(e) { return (this.ecode[e] & 3) !== CONTROL && this.kind[this.edst[e]] === ARG; }

  argSlot(e) { return this.ecode[e] >> 3; }

  // The input slots of op c that feed arguments of its function bodies (none: c is no call, or
  // its bodies were not opened).
  argSlots(c) {
    let slots = this._argSlots.get(c);
    if (!slots) {
      slots = new Set();
      for (let k = this.outStart[c]; k < this.outStart[c + 1]; k++) {
        const e = this.outList[k];
        if (this.isArgEdge(e)) slots.add(this.argSlot(e));
      }
      this._argSlots.set(c, slots);
    }
    return slots;
  }

  edgeKind(a) {
    if (this.an[a]) return "data";
    return this.ar[a] ? "ref" : "control";
  }

  edgeLabel(a) { return this.edgeLabels[this.al[a]] || ""; }

  // The distinct tensors aggregated edge `a` carries, as [producer, output index] pairs
  // (layout/text.py carried_tensors): one tensor read by several ops counts once.  An edge
  // into a function argument carries what the call was given at that input.
  tensors(a) {
    const seen = new Map();
    for (let e = this.aeStart[a]; e < this.aeStart[a + 1]; e++) {
      if (this.isControl(e)) continue;
      let src = this.esrc[e];
      let out = this.ecode[e] >> 3;
      if (this.isArgEdge(e)) {
        for (let k = this.inStart[src]; k < this.inStart[src + 1]; k++) {
          const f = this.inList[k];
          if (!this.isControl(f) && this.eslot[f] === out) {
            src = this.esrc[f];
            out = this.ecode[f] >> 3;
            break;
          }
        }
      }
      const key = `${src}:${out}`;
      if (!seen.has(key)) seen.set(key, [src, out]);
    }
    return [...seen.values()];
  }

  outputs(i) { return this.out[i] >= 0 ? this.data.outs[this.out[i]] : []; }
  // Attributes come as interned [name, value] pairs, and each op's sorted list of them
  // (draw/viewer_ops.py _AttrTable).
  attrs(i) {
    if (this.attr[i] < 0) return {};
    const pairs = this.data.attrs;
    return Object.fromEntries(this.data.attrSets[this.attr[i]].map((p) => pairs[p]));
  }

  lowerNames() {
    if (!this._lower) {
      this._lower = this.name.map((s) => s.toLowerCase());
      this._lowerLabels = this.label.map((s) => s.toLowerCase());
      this._lowerTypes = this.opTypes.map((s) => s.toLowerCase());
    }
    return this._lower;
  }
}

// Items 0 .. ne-1 grouped by key[item] (each key's in item order): list[start[k] ..
// start[k + 1]) holds key k's items, each plus `offset`.
function csr(n, key, ne, offset = 0) {
  const start = new Int32Array(n + 1);
  for (let e = 0; e < ne; e++) start[key[e] + 1]++;
  for (let i = 0; i < n; i++) start[i + 1] += start[i];
  const fill = start.slice(0, n);
  const list = new Int32Array(ne);
  for (let e = 0; e < ne; e++) list[fill[key[e]]++] = e + offset;
  return [start, list];
}
