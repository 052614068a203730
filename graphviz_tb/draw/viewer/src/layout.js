// Per-group layout in the page, the same algorithm as graphviz_tb/layout/groups.py (with the
// DOT of layout/dot_layout.py and the text sizes of layout/text.py):
// each open group's children are laid out on their own by Graphviz (compiled to WebAssembly),
// with open children as boxes as big as their own layout; auxiliary children go to a side
// column with stubs in their place; the results are composed by translation.
//
// A group layout ("L") is the same shape whether it came from Python or from here:
//   { w, h, n: [member, x, y, ...], s: [[far, near, x, y, w, h], ...],
//     e: [[src, dst, agg, points, tip, labelPos], ...] }
// with coordinates relative to the content's lower-left corner (y up, as in DOT); a wire end
// is a member index, or -1 - k for stub k.

import { base64Bytes, inflated } from "./bytes.js";
import { nearestOnSpline } from "./spline.js";
import { STYLE } from "./style.gen.js";

// Points per inch and the glyph width over font size, as the Python layout measures
// (layout/text.py text_width; both from graphviz_tb/style.py).
export const PT = STYLE.pt;
const CHAR = STYLE.charWidth;
// The auxiliary-node rule of graphviz_tb/group/auxiliary.py, its names and numbers from
// graphviz_tb/group/aside.py (a control-flow Merge is not bookkeeping).
const CONVENTIONAL = new RegExp(STYLE.bookkeepingNames);
const BOOKKEEPING_OPS = new Set(STYLE.bookkeepingOps);
const MIN_CHILDREN = STYLE.auxMinChildren;
const MIN_DEGREE = STYLE.auxMinDegree;
const IQR_FACTOR = STYLE.auxIqrFactor;
//: Above this many children a group is not laid out in the page (Graphviz WASM runs out of
//: stack near 1,000 dense nodes; chain-like groups go much further).
export const MAX_CHILDREN = 4000;

export function textWidth(text, size) {
  return [...text].length * size * CHAR;
}

// A DOT quoted string, as graphviz_tb/escaping.py dot_string (its examples are the spec).
export function quote(text) {
  return '"' + text.replace(/\\/g, "\\\\").replace(/"/g, '\\"') + '"';
}

// The DOT of one group, character for character what layout/dot_layout.py group_dot writes
// (its numbers from graphviz_tb/style.py).
// `shapes[i]` is "ellipse" for an op drawn as one (so edges are clipped at its real outline).
// Every edge is named by its place in `edges`: Graphviz answers edges in an order of its own.
export function groupDot(sizes, shapes, edges, rankdir) {
  const out = [
    "digraph G {",
    `graph [rankdir=${rankdir}, nodesep=${STYLE.nodesep}, ranksep=${STYLE.ranksep}, ` +
      "fontname=Helvetica];",
    'node [fixedsize=true, label="", shape=box];',
    // As graphviz_tb/layout/dot_layout.py: room for the arrowhead the drawing puts there.
    `edge [fontname=Helvetica, fontsize=${STYLE.edgeLabelSize}, arrowsize=${STYLE.arrowSize}];`,
  ];
  sizes.forEach(([w, h], i) => {
    const shape = shapes[i] === "ellipse" ? ", shape=ellipse" : "";
    out.push(`n${i} [width=${(w / PT).toFixed(3)}, height=${(h / PT).toFixed(3)}${shape}];`);
  });
  edges.forEach((e, j) => {
    const attrs = [`id=e${j}`];
    if (e.label) attrs.push(`label=${quote(e.label)}`);
    // As layout/dot_layout.py: the width a data line is drawn, so newer Graphviz leaves its
    // arrowhead room.
    if (e.kind === "data" && e.width !== 1) attrs.push(`penwidth=${e.width.toFixed(2)}`);
    if (e.back && e.back === e.total) attrs.push("constraint=false");
    // As layout/dot_layout.py: a stub is kept beside the end it stands for.
    const stub = typeof e.src !== "number" || typeof e.dst !== "number";
    if (stub) attrs.push(`weight=${STYLE.stubWeight}`);
    else if (e.kind === "control") attrs.push("weight=0");
    out.push(`n${e.s} -> n${e.t} [${attrs.join(", ")}];`);
  });
  out.push("}");
  return out.join("\n");
}

// Is member c bookkeeping by its name or op type (group/auxiliary.py _bookkeeping)?
function bookkeeping(g, c) {
  if (g.isGroup(c)) return CONVENTIONAL.test(g.label[c]);
  const op = g.opType(c);
  return BOOKKEEPING_OPS.has(op) || (op !== "Merge" && CONVENTIONAL.test(g.label[c]));
}

// The children of a group to draw in its side column (group/auxiliary.py auxiliary_children,
// rule for rule): ops whose degree is an outlier, and bookkeeping with two neighbours or more;
// never function arguments or results, nor the call op of an opened call (the body's entry),
// never more than a quarter of the children.
export function auxiliaryChildren(group, children, aggs, g) {
  if (children.length < MIN_CHILDREN) return new Set();
  const neighbours = new Map(children.map((c) => [c, new Set()]));
  for (const a of aggs) {
    if (a.src !== a.dst) {
      neighbours.get(a.src).add(a.dst);
      neighbours.get(a.dst).add(a.src);
    }
  }
  const degree = new Map();
  for (const [c, ns] of neighbours) degree.set(c, ns.size);
  const ordered = [...degree.values()].sort((x, y) => x - y);
  const n = ordered.length;
  const q1 = ordered[Math.floor(n / 4)];
  const q3 = ordered[Math.floor((3 * n) / 4)];
  const bound = Math.max(q3 + IQR_FACTOR * Math.max(q3 - q1, 1.0), MIN_DEGREE);
  const entry = g.kindName(group) === "function" ? g.name[group] : null;
  const chosen = children.filter((c) => g.role(c) === "op" && g.name[c] !== entry &&
    ((degree.get(c) > bound && !g.isGroup(c)) || (bookkeeping(g, c) && degree.get(c) >= 2)));
  chosen.sort((a, b) => degree.get(b) - degree.get(a) || cmp(g.name[a], g.name[b]));
  return new Set(chosen.slice(0, Math.max(1, Math.floor(children.length / 4))));
}

export function cmp(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

// Edges touching an auxiliary child go to a stub beside their other end (layout/groups.py
// _stub_edges).
function stubEdges(aux, aggs) {
  if (!aux.size) return [[], aggs];
  const stubs = new Map();
  const kept = [];
  for (const agg of aggs) {
    const aAux = aux.has(agg.src);
    const bAux = aux.has(agg.dst);
    if (aAux && bAux) continue;
    if (!aAux && !bAux) {
      kept.push(agg);
      continue;
    }
    const [far, near] = aAux ? [agg.src, agg.dst] : [agg.dst, agg.src];
    const key = far + "," + near;
    let stub = stubs.get(key);
    if (!stub) {
      stub = { stub: stubs.size, far, near };
      stubs.set(key, stub);
    }
    kept.push({ ...agg, src: aAux ? stub : agg.src, dst: aAux ? agg.dst : stub, back: 0 });
  }
  return [[...stubs.values()], kept];
}

function floats(text) {
  return text.split(",").map(Number);
}

// Where an edge's label goes: Graphviz's place when it touches the edge's path, else beside
// the path's point nearest that place (layout/dot_layout.py attach_label; dot may leave a
// label 70 points from its line when a tall box shares the label's rank); its distances are
// graphviz_tb/style.py's.
export function attachLabel(points, lp, label, rankdir) {
  if (points.length < 8) return lp;
  const half = textWidth(label, STYLE.edgeLabelSize) / 2;
  const across = rankdir === "BT" || rankdir === "TB";
  const touch = across ? half + STYLE.labelReach : STYLE.labelReachAlong;
  const best = nearestOnSpline(points, lp[0], lp[1], touch);
  const dx = best[0] - lp[0];
  const dy = best[1] - lp[1];
  if (Math.sqrt(dx * dx + dy * dy) <= touch) return lp;
  if (across) return [best[0] + (half + STYLE.labelGap) * (lp[0] >= best[0] ? 1 : -1), best[1]];
  return [best[0], best[1] + STYLE.labelGapAlong * (lp[1] >= best[1] ? 1 : -1)];
}

function parseSpline(pos, bx, by) {
  const points = [];
  let tip = null;
  for (const token of pos.split(/\s+/)) {
    if (!token) continue;
    if (token.startsWith("e,")) {
      const [x, y] = floats(token.slice(2));
      tip = [x - bx, y - by];
    } else if (!token.startsWith("s,")) {
      const [x, y] = floats(token);
      points.push(x - bx, y - by);
    }
  }
  return [points, tip];
}

// The worker's script (Graphviz and layout-worker.js) comes gzipped and base64-encoded as inert
// data in the page (see graphviz_tb/write/page.py); it is decompressed with the browser's own
// DecompressionStream into a Blob, and the worker starts from that Blob's blob: URL.
export async function workerBlob(base64) {
  if (!base64) throw new Error("the page carries no layout engine");
  const code = await inflated(base64Bytes(base64), "gzip").arrayBuffer();
  return new Blob([code], { type: "text/javascript" });
}

// Graphviz runs in a Web Worker (see layout-worker.js), started on first use.  A layout that
// takes longer than `timeoutMs` is stopped by ending the worker; the next one starts afresh.
class Engine {
  constructor() {
    this.worker = null;
    this.pending = new Map();
    this.nextId = 1;
    this.timeoutMs = 20000;
    this.source = () => ""; // the worker's script, gzipped and base64-encoded (set by main.js)
    this.url = null; // a promise of the worker script's blob: URL, made once
  }

  workerUrl() {
    if (!this.url) {
      this.url = workerBlob(this.source()).then((blob) => URL.createObjectURL(blob));
      this.url.catch(() => { this.url = null; });
    }
    return this.url;
  }

  start(url) {
    if (this.worker) return this.worker;
    const worker = new Worker(url);
    worker.onmessage = (ev) => {
      const job = this.pending.get(ev.data.id);
      if (!job) return;
      this.pending.delete(ev.data.id);
      clearTimeout(job.timer);
      if (ev.data.error !== undefined) {
        if (ev.data.fatal) this.stop();
        job.reject(new Error(`Graphviz failed: ${ev.data.error}`));
      } else {
        job.resolve(ev.data.output);
      }
    };
    worker.onerror = (ev) => {
      ev.preventDefault();
      this.fail(`the layout engine stopped (${ev.message || "error"})`);
    };
    this.worker = worker;
    return worker;
  }

  stop() {
    if (this.worker) this.worker.terminate();
    this.worker = null;
  }

  fail(message) {
    this.stop();
    const jobs = [...this.pending.values()];
    this.pending.clear();
    for (const job of jobs) {
      clearTimeout(job.timer);
      job.reject(new Error(message));
    }
  }

  // Graphviz's json0 text for a DOT text (null: only compile the engine).
  async run(dot, what) {
    let url;
    try {
      url = await this.workerUrl();
    } catch (err) {
      throw new Error(`the layout engine cannot start here: ${err.message || err}`);
    }
    // From here on synchronous up to postMessage, so no other job can stop the worker between
    // its start and this job's message.
    return new Promise((resolve, reject) => {
      let worker;
      try {
        worker = this.start(url);
      } catch (err) {
        reject(new Error(`the layout engine cannot start here: ${err.message || err}`));
        return;
      }
      const id = this.nextId++;
      const timer = setTimeout(() => {
        this.fail(`laying out ${what || "the group"} took more than ` +
          `${Math.round(this.timeoutMs / 1000)} s; stopped`);
      }, dot === null ? Math.max(this.timeoutMs, 30000) : this.timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      worker.postMessage({ id, dot });
    });
  }
}

export const engine = new Engine();

export function viz() {
  return engine.run(null);
}

export class Layouts {
  constructor(graph, options) {
    this.g = graph;
    this.rankdir = options.rankdir;
    this.pad = options.pad;
    this.labelH = options.labelH;
    this.aux = options.aux;
    this.cache = new Map(); // DOT text -> Graphviz's json0 answer, parsed
    this.layouts = new Map(); // group -> L, for every group whose layout is known
    this.stats = { runs: 0, ms: 0, cached: 0 };
  }

  // Size of a member as drawn: its collapsed size, or when open as big as its own layout
  // and as wide as its title (as layout/groups.py sizes a frame).
  size(i, open) {
    const g = this.g;
    if (open) {
      const L = this.layouts.get(i);
      if (L) {
        const title = textWidth(g.lines(i)[0], STYLE.titleSize) * STYLE.titleSlack + 2 * this.pad;
        return [Math.max(L.w + 2 * this.pad, g.w[i], title), L.h + 2 * this.pad + this.labelH];
      }
    }
    return [g.w[i], g.h[i]];
  }

  // What Graphviz is asked for one group: its nodes (children, then stubs), their sizes,
  // its edges and the DOT text.  `isOpen(c)` says which children are drawn open (their own
  // layouts must be known already).
  prepare(group, isOpen) {
    const g = this.g;
    const children = g.kids(group);
    const sizes = new Map();
    for (const c of children) sizes.set(c, this.size(c, isOpen(c)));
    const aggs = [];
    if (g.aggStart[group] >= 0) {
      for (let a = g.aggStart[group]; a < g.aggEnd[group]; a++) {
        aggs.push({ src: g.as[a], dst: g.ad[a], agg: a, back: g.ab[a],
          total: g.an[a] + g.ac[a] + g.ar[a], kind: g.edgeKind(a), label: g.edgeLabel(a),
          width: g.aw[a] });
      }
    }
    const aux = this.aux ? auxiliaryChildren(group, children, aggs, g) : new Set();
    const main = children.filter((c) => !aux.has(c));
    const [stubs, kept] = stubEdges(aux, aggs);
    const nodes = [...main, ...stubs];
    const index = new Map(nodes.map((m, i) => [m, i]));
    const nodeSizes = nodes.map((m) => (typeof m === "number" ? sizes.get(m)
      : [textWidth(g.label[m.far], STYLE.stubLabelSize) + STYLE.stubPad, STYLE.stubH]));
    const shapes = nodes.map((m) => (typeof m === "number" ? g.outline(m) : "box"));
    const edges = kept.map((a) => ({ ...a, s: index.get(a.src), t: index.get(a.dst) }));
    return { sizes, aux, nodes, nodeSizes, edges,
      dot: groupDot(nodeSizes, shapes, edges, this.rankdir) };
  }

  // Lay out one group with its children at their current sizes.
  async layoutGroup(group, isOpen) {
    const g = this.g;
    const count = g.kids(group).length;
    if (count > MAX_CHILDREN) {
      throw new Error(`${count.toLocaleString()} children are too many to lay out ` +
        "in the page; render this group with 'tbgraph render --expand'");
    }
    const { sizes, aux, nodes, nodeSizes, edges, dot } = this.prepare(group, isOpen);
    const label = g.name[group] || "the top level";
    const res = await this.run(dot, `${label} (${count.toLocaleString()} children)`);
    const [bx, by, bx2, by2] = floats(res.bb || "0,0,0,0");
    const L = { w: bx2 - bx, h: by2 - by, n: [], s: [], e: [], x: [] };
    const pos = new Array(nodes.length);
    for (const obj of res.objects || []) {
      const name = obj.name || "";
      if (name[0] === "n" && obj.pos) pos[+name.slice(1)] = floats(obj.pos);
    }
    nodes.forEach((m, i) => {
      const p = pos[i] || [0, 0];
      const x = p[0] - bx;
      const y = p[1] - by;
      if (typeof m === "number") L.n.push(m, x, y);
      else L.s.push([m.far, m.near, x, y, nodeSizes[i][0], nodeSizes[i][1]]);
    });
    const ref = (m) => (typeof m === "number" ? m : -1 - m.stub);
    const drawn = new Map();
    for (const e of res.edges || []) {
      const id = /^e(\d+)$/.exec(e.id || "");
      if (id) drawn.set(+id[1], e);
    }
    if (drawn.size !== edges.length) {
      throw new Error(`Graphviz returned ${drawn.size} of ${edges.length} edges`);
    }
    edges.forEach((edge, j) => {
      const e = drawn.get(j);
      const [points, tip] = parseSpline(e.pos || "", bx, by);
      if (!points.length) return;
      const lp = e.lp && edge.label ? floats(e.lp) : null;
      L.e.push([ref(edge.src), ref(edge.dst), edge.agg, points, tip,
        lp ? attachLabel(points, [lp[0] - bx, lp[1] - by], edge.label, this.rankdir) : null]);
    });
    if (aux.size) placeAux(L, [...aux].sort((a, b) => cmp(g.name[a], g.name[b])), sizes);
    return L;
  }

  async run(dot, what) {
    const hit = this.cache.get(dot);
    if (hit) {
      this.stats.cached++;
      return hit;
    }
    const t0 = performance.now();
    const output = await engine.run(dot, what);
    this.stats.runs++;
    this.stats.ms += performance.now() - t0;
    const parsed = JSON.parse(output);
    this.cache.set(dot, parsed);
    return parsed;
  }

  // Everything to draw, in absolute coordinates (y up), parents before children.
  compose(expanded) {
    const g = this.g;
    const root = this.layouts.get(0);
    const scene = { w: root.w, h: root.h, boxes: [], wires: [], index: new Map() };
    const stack = [[0, 0, 0]];
    while (stack.length) {
      const [group, ox, oy] = stack.pop();
      const L = this.layouts.get(group);
      const stubIds = [];
      for (const [far, near, x, y, w, h] of L.s) {
        const box = { m: -1, stub: true, far, near, group, x: x + ox, y: y + oy, w, h,
          open: false };
        stubIds.push(scene.boxes.length);
        scene.boxes.push(box);
      }
      const n = L.n;
      const aside = new Set(L.x || []);
      const order = [];
      for (let k = 0; k < n.length; k += 3) order.push(k);
      order.sort((a, b) => cmp(g.name[n[a]], g.name[n[b]]));
      for (const k of order) {
        const c = n[k];
        const open = expanded.has(c) && this.layouts.has(c);
        const [w, h] = this.size(c, open);
        const ax = n[k + 1] + ox;
        const ay = n[k + 2] + oy;
        scene.index.set(c, scene.boxes.length);
        scene.boxes.push({ m: c, x: ax, y: ay, w, h, open, group, aux: aside.has(c) });
        if (open) {
          const inner = this.layouts.get(c);
          stack.push([c, ax - inner.w / 2, ay - h / 2 + this.pad]);
        }
      }
      for (const [a, b, agg, pts, tip, lp] of L.e) {
        const shifted = new Array(pts.length);
        for (let k = 0; k < pts.length; k += 2) {
          shifted[k] = pts[k] + ox;
          shifted[k + 1] = pts[k + 1] + oy;
        }
        scene.wires.push({
          agg, group,
          src: a >= 0 ? a : -1, dst: b >= 0 ? b : -1,
          srcStub: a < 0 ? stubIds[-1 - a] : -1, dstStub: b < 0 ? stubIds[-1 - b] : -1,
          pts: shifted, tip: tip ? [tip[0] + ox, tip[1] + oy] : null,
          lp: lp ? [lp[0] + ox, lp[1] + oy] : null,
        });
      }
    }
    return scene;
  }
}

// Stack auxiliary children in a column to the right of the main layout (layout/groups.py
// _place_aux).
function placeAux(L, aux, sizes) {
  const gap = 28.0;
  const column = Math.max(...aux.map((m) => sizes.get(m)[0]));
  const x = L.w + gap + column / 2;
  let total = 0;
  for (const m of aux) total += sizes.get(m)[1] + 12;
  const y = Math.max(L.h, total);
  let top = y;
  for (const m of aux) {
    const hh = sizes.get(m)[1];
    L.n.push(m, x, top - hh / 2);
    top -= hh + 12;
  }
  L.w += gap + column;
  L.h = y;
  L.x = aux;
}
