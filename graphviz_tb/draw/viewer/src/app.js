// The viewer's state and actions: which groups are open, selection, trace, colours, the view
// transform; re-layout in place and redraw.

import { Layouts, cmp } from "./layout.js";
import { drawScene, svgEl } from "./draw.js";
import { COST_MODES, CostScale } from "./colors.js";
import { firstView, fitView } from "./framing.js";

const MIN_ZOOM = 0.01;
const MAX_ZOOM = 8;

export class App {
  constructor(graph, data, svg) {
    this.g = graph;
    this.data = data;
    this.options = data.options;
    this.themes = data.themes;
    this.unique = data.unique;
    this.svg = svg;
    this.viewport = svgEl("g", { class: "viewport" }, svg);
    this.layouts = new Layouts(graph, data.options);
    for (const k in data.layouts) this.layouts.layouts.set(+k, data.layouts[k]);
    this.defaultExpanded = new Set(data.expanded);
    this.lead = data.lead ?? -1;
    this.expanded = new Set(data.expanded);
    this.expanded.add(0);
    this.selected = -1;
    this.trace = null;
    this.traceControl = true;
    this.step = data.costs ? data.costs.chosen : -1;
    this.colorBy = this.options.colorBy;
    this.theme = this.options.theme;
    this.view = { k: 1, tx: 0, ty: 0 };
    this.scene = null;
    this.els = null;
    this.listeners = new Set();
    this.busy = Promise.resolve();
    this.lastLayoutMs = 0;
  }

  on(fn) { this.listeners.add(fn); }
  emit(what) { for (const fn of this.listeners) fn(what); }

  // ----------------------------------------------------------------------- visibility

  isOpen(i) {
    const g = this.g;
    if (!g.isGroup(i) || !this.expanded.has(i)) return false;
    for (let p = g.parent[i]; p >= 0; p = g.parent[p]) if (!this.expanded.has(p)) return false;
    return true;
  }

  // Whether the group holding i is drawn open (so i itself is drawn).
  isOpenParent(i) {
    const p = this.g.parent[i];
    return p >= 0 && (p === 0 || this.isOpen(p));
  }

  isDrawn(i) {
    return this.scene !== null && this.scene.index.has(i);
  }

  // Open groups that are drawn, root excluded.
  openGroups() {
    return this.scene.boxes.filter((b) => !b.stub && b.open).map((b) => b.m);
  }

  visibleNodes() {
    if (!this.scene) return [];
    return this.scene.boxes.filter((b) => !b.stub).map((b) => this.g.name[b.m]);
  }

  // ----------------------------------------------------------------------- layout

  // Apply a change of open groups: lay out what changed, then its ancestors bottom-up, then
  // compose and redraw.  Runs one at a time; on failure the previous state comes back.
  change(mutate, anchor = -1) {
    const run = this.busy.then(() => this._change(mutate, anchor));
    this.busy = run.catch(() => {});
    return run;
  }

  async _change(mutate, anchor) {
    const g = this.g;
    const before = new Set(this.expanded);
    const saved = new Map(this.layouts.layouts);
    const changed = mutate();
    if (!changed || !changed.length) return true;
    const pending = new Set();
    for (const c of changed) {
      for (let p = g.parent[c]; p >= 0; p = g.parent[p]) pending.add(p);
      if (this.isOpen(c)) this._collectMissing(c, pending);
    }
    // A group laid out again may change size, so its ancestors are laid out again too.
    for (const x of [...pending]) {
      for (let p = g.parent[x]; p >= 0 && !pending.has(p); p = g.parent[p]) pending.add(p);
    }
    // A closed group's remembered layout is stale once something inside it changed.
    for (const x of pending) if (x !== 0 && !this.isOpen(x)) this.layouts.layouts.delete(x);
    const order = [...pending].filter((x) => x === 0 || this.isOpen(x));
    order.sort((a, b) => g.depth[b] - g.depth[a] || a - b);
    const anchorPos = this._screenPos(anchor);
    const t0 = performance.now();
    this.emit({ type: "busy", on: true });
    try {
      if (order.some((x) => g.kids(x).length > 300)) await nextFrame();
      for (const grp of order) {
        const L = await this.layouts.layoutGroup(grp, (c) => this.isOpen(c));
        this.layouts.layouts.set(grp, L);
      }
    } catch (err) {
      this.expanded = before;
      this.layouts.layouts = saved;
      this.emit({ type: "error", message: err.message || String(err) });
      return false;
    } finally {
      this.emit({ type: "busy", on: false });
    }
    this.lastLayoutMs = performance.now() - t0;
    this.redraw();
    if (anchorPos) this._keepAt(anchor, anchorPos);
    this.emit({ type: "layout", ms: this.lastLayoutMs });
    return true;
  }

  // A newly shown open group, and the open groups inside it, need layouts if they have none.
  _collectMissing(c, pending) {
    const g = this.g;
    if (!this.layouts.layouts.has(c)) pending.add(c);
    for (const ch of g.kids(c)) {
      if (g.isGroup(ch) && this.expanded.has(ch)) this._collectMissing(ch, pending);
    }
  }

  expand(i) {
    const g = this.g;
    if (i < 0 || !g.isGroup(i)) return Promise.resolve(false);
    return this.change(() => {
      const changed = [];
      for (const a of [i, ...g.ancestors(i)]) {
        if (!this.expanded.has(a)) {
          this.expanded.add(a);
          changed.push(a);
        }
      }
      return changed;
    }, i);
  }

  collapse(i) {
    if (i <= 0 || !this.g.isGroup(i)) return Promise.resolve(false);
    return this.change(() => {
      if (!this.expanded.has(i)) return [];
      this.expanded.delete(i);
      return [i];
    }, i);
  }

  toggle(i) {
    return this.isOpen(i) ? this.collapse(i) : this.expand(i);
  }

  // Open every group above `i` so it is drawn.
  reveal(i) {
    const g = this.g;
    return this.change(() => {
      const changed = [];
      for (const a of g.ancestors(i)) {
        if (!this.expanded.has(a)) {
          this.expanded.add(a);
          changed.push(a);
        }
      }
      return changed;
    });
  }

  // Set the open groups to exactly `groups` (plus the root); used by the URL state.
  setExpanded(groups) {
    return this.change(() => {
      const next = new Set(groups);
      next.add(0);
      const changed = [];
      for (const x of next) if (!this.expanded.has(x)) changed.push(x);
      for (const x of this.expanded) if (!next.has(x)) changed.push(x);
      this.expanded = next;
      return changed;
    });
  }

  // Auxiliary column on or off: every open group is laid out again.
  setAux(on) {
    if (this.layouts.aux === on) return Promise.resolve(true);
    return this.change(() => {
      this.layouts.aux = on;
      const open = [...this.expanded].filter((x) => this.isOpen(x));
      for (const x of open) this.layouts.layouts.delete(x);
      return open;
    });
  }

  // ----------------------------------------------------------------------- drawing

  redraw() {
    this.scene = this.layouts.compose(new Set([...this.expanded].filter((x) => this.isOpen(x))));
    this.cost = this.costContext();
    this.viewport.replaceChildren();
    this.els = drawScene(this.viewport, this.scene, {
      graph: this.g, mode: this.colorBy, theme: this.theme, themes: this.themes,
      unique: this.unique, cost: this.cost, diffColors: this.data.diffColors,
      diffLines: this.data.diffLines,
    });
    this.svg.style.background = this.themes[this.theme].bg;
    this.applyMarks();
    this.emit({ type: "draw" });
  }

  // Selection and trace classes on the drawn elements.
  applyMarks() {
    if (!this.scene) return;
    const { boxEls, wireEls } = this.els;
    const tr = this.trace;
    this.svg.classList.toggle("tracing", !!tr);
    this.scene.boxes.forEach((b, k) => {
      const el = boxEls[k];
      if (b.stub) {
        el.classList.remove("hl");
        return;
      }
      el.classList.toggle("selected", b.m === this.selected);
      el.classList.toggle("hl", !!tr && this._boxHit(b.m));
      el.classList.toggle("trace-root", !!tr && b.m === tr.root);
    });
    this.scene.wires.forEach((w, k) => {
      const hit = !!tr && this._wireHit(w.agg);
      wireEls[k].g.classList.toggle("hl", hit);
      if (wireEls[k].labelEl) wireEls[k].labelEl.classList.toggle("hl", hit);
      if (hit) {
        if (w.srcStub >= 0) boxEls[w.srcStub].classList.add("hl");
        if (w.dstStub >= 0) boxEls[w.dstStub].classList.add("hl");
      }
    });
  }

  _boxHit(i) {
    const p = this.trace.pref;
    return p[i + this.g.size[i]] - p[i] > 0;
  }

  _wireHit(a) {
    const g = this.g;
    const { emark } = this.trace;
    for (let e = g.aeStart[a]; e < g.aeStart[a + 1]; e++) if (emark[e]) return true;
    return false;
  }

  // The metric of the colour mode ("time", "memory"), when it is a cost mode this page can draw.
  costMetric(mode = this.colorBy) {
    const metric = COST_MODES[mode];
    if (!metric || this.step < 0) return null;
    if (metric === "memory" && !this.g.costSteps()[this.step].memory) return null;
    return metric;
  }

  // What drawing by cost needs: each member's total, and the scale over the collapsed boxes
  // drawn (as graphviz_tb/draw/dot.py scales the static picture).
  costContext() {
    const metric = this.costMetric();
    if (!metric) return null;
    const totals = this.g.costTotals(this.step, metric);
    const open = new Set();
    const values = [];
    for (const b of this.scene.boxes) {
      if (b.stub) continue;
      if (b.open) open.add(b.m);
      else if (!Number.isNaN(totals[b.m])) values.push(totals[b.m]);
    }
    return { metric, totals, open, scale: new CostScale(values), colors: this.data.costs.colors,
      noRecord: this.data.costs.noRecord, total: Number.isNaN(totals[0]) ? 0 : totals[0] };
  }

  // The ops of the current step, most expensive first in the colour mode's metric (time when
  // the mode is no cost mode).
  topOps(limit = 20) {
    if (this.step < 0) return [];
    const col = this.costMetric() === "memory" ? 2 : 1;
    return this.g.costSteps()[this.step].ops.filter((r) => r[col] > 0)
      .sort((a, b) => b[col] - a[col] || a[0] - b[0]).slice(0, limit).map((r) => r[0]);
  }

  setColorBy(mode) {
    this.colorBy = mode;
    this.redraw();
  }

  setStep(k) {
    if (k < 0 || k >= this.g.costSteps().length) return;
    this.step = k;
    if (!this.costMetric() && COST_MODES[this.colorBy]) this.colorBy = "compute-time";
    this.redraw();
    this.emit({ type: "step", k });
  }

  setTheme(theme) {
    this.theme = theme;
    document.documentElement.setAttribute("data-theme", theme);
    this.redraw();
  }

  // ----------------------------------------------------------------------- selection, trace

  select(i) {
    this.selected = i;
    if (this.trace && this.trace.root !== i) this.trace = null;
    this.applyMarks();
    this.emit({ type: "select", i });
  }

  // Transitive inputs ("in") or outputs ("out") of member i, through every op inside
  // collapsed groups and function bodies; control edges unless switched off.
  //
  // A call into a function body is followed argument by argument: from argument i back to the
  // producer of the call's matching input only, and from a producer into the call on to the
  // matching arguments only.  The call's control inputs (when control edges count) and its
  // inputs that feed no argument (the predicate of an If, the index of a Case) decide whether
  // the body runs at all, so they are inputs of every argument, and an output of theirs reaches
  // all of the call.  The op edges followed are marked, so only they light up.
  computeTrace(root, dir) {
    const g = this.g;
    const control = this.traceControl;
    const mark = new Uint8Array(g.n); // lit
    const done = new Uint8Array(g.n); // all edges followed (calls passed by one slot: not)
    const emark = new Uint8Array(g.ne);
    const passed = new Map(); // call -> slots passed through
    const queue = [];
    const visit = (u) => {
      mark[u] = 1;
      if (!done[u]) {
        done[u] = 1;
        queue.push(u);
      }
    };
    const firstPass = (c, slot) => {
      mark[c] = 1;
      let slots = passed.get(c);
      if (!slots) passed.set(c, (slots = new Set()));
      if (slots.has(slot)) return false;
      slots.add(slot);
      return true;
    };
    // Back from argument `slot` of call c: its input there, and what gates the whole call.
    const backThrough = (c, slot) => {
      if (!firstPass(c, slot)) return;
      const args = g.argSlots(c);
      for (let k = g.inStart[c]; k < g.inStart[c + 1]; k++) {
        const f = g.inList[k];
        const gate = g.isControl(f) ? control : !args.has(g.eslot[f]);
        if (gate || (!g.isControl(f) && g.eslot[f] === slot)) {
          emark[f] = 1;
          visit(g.esrc[f]);
        }
      }
    };
    // On from input `slot` of call c: the arguments it feeds (a gating input: all of c).
    const onThrough = (c, slot) => {
      if (!g.argSlots(c).has(slot)) {
        visit(c);
        return;
      }
      if (!firstPass(c, slot)) return;
      for (let k = g.outStart[c]; k < g.outStart[c + 1]; k++) {
        const f = g.outList[k];
        if (g.isArgEdge(f) ? g.argSlot(f) === slot : control || !g.isControl(f)) {
          emark[f] = 1;
          visit(g.edst[f]);
        }
      }
    };
    for (let i = root; i < root + g.size[root]; i++) if (g.isOp(i)) visit(i);
    const into = dir === "in";
    while (queue.length) {
      const v = queue.pop();
      const start = into ? g.inStart : g.outStart;
      const list = into ? g.inList : g.outList;
      for (let k = start[v]; k < start[v + 1]; k++) {
        const e = list[k];
        if (!control && g.isControl(e)) continue;
        emark[e] = 1;
        if (into) {
          if (g.isArgEdge(e)) backThrough(g.esrc[e], g.argSlot(e));
          else visit(g.esrc[e]);
        } else if (g.opensBody[g.edst[e]] && !g.isArgEdge(e) && !g.isControl(e)) {
          onThrough(g.edst[e], g.eslot[e]);
        } else {
          visit(g.edst[e]);
        }
      }
      // Values a loop carries to its next iteration.
      const cstart = into ? g.cinStart : g.coutStart;
      const clist = into ? g.cinList : g.coutList;
      const cother = into ? g.csrc : g.cdst;
      for (let k = cstart[v]; k < cstart[v + 1]; k++) visit(cother[clist[k]]);
    }
    const pref = new Int32Array(g.n + 1);
    for (let i = 0; i < g.n; i++) pref[i + 1] = pref[i] + mark[i];
    return { root, dir, control, mark, emark, pref, count: pref[g.n] };
  }

  setTrace(root, dir) {
    if (root < 0 || !dir) {
      this.trace = null;
    } else {
      this.selected = root;
      this.trace = this.computeTrace(root, dir);
    }
    this.applyMarks();
    this.emit({ type: "trace" });
    this.emit({ type: "select", i: this.selected });
  }

  setTraceControl(on) {
    this.traceControl = on;
    if (this.trace) this.setTrace(this.trace.root, this.trace.dir);
  }

  highlighted() {
    if (!this.trace || !this.scene) return [];
    return this.scene.boxes.filter((b) => !b.stub && this._boxHit(b.m))
      .map((b) => this.g.name[b.m]);
  }

  // ----------------------------------------------------------------------- search

  search(query, limit = 1000) {
    const g = this.g;
    let q = String(query || "").trim().toLowerCase();
    if (!q) return [];
    let opOnly = false;
    if (q.startsWith("op:")) {
      opOnly = true;
      q = q.slice(3).trim();
      if (!q) return [];
    }
    const names = g.lowerNames();
    const labels = g._lowerLabels;
    const types = g._lowerTypes;
    const hits = [];
    for (let i = 1; i < g.n; i++) {
      let score = -1;
      const t = g.type[i] >= 0 ? types[g.type[i]] : "";
      if (opOnly) {
        if (t === q) score = 0;
        else if (t && t.includes(q)) score = 1;
      } else if (labels[i] === q) score = 0;
      else if (labels[i].startsWith(q)) score = 1;
      else if (names[i].includes(q)) score = 2;
      else if (t === q) score = 3;
      else if (t && t.startsWith(q)) score = 4;
      if (score >= 0) hits.push([score, i]);
    }
    hits.sort((a, b) => a[0] - b[0] || g.name[a[1]].length - g.name[b[1]].length ||
      cmp(g.name[a[1]], g.name[b[1]]));
    return hits.slice(0, limit).map((h) => h[1]);
  }

  // ----------------------------------------------------------------------- the view

  setView(k, tx, ty) {
    k = Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, k));
    this.view = { k, tx, ty };
    this.viewport.setAttribute("transform", `translate(${tx},${ty}) scale(${k})`);
    this.emit({ type: "view" });
  }

  size() {
    const r = this.svg.getBoundingClientRect();
    return [r.width || 800, r.height || 600];
  }

  // Fit the whole picture into the free canvas (see framing.js).
  fit() {
    if (this.scene) this.setView(...fitView(this, this.size(), this.panels ? this.panels() : []));
  }

  // The first view: the picture, or the model the page leads with (see framing.js).
  firstView() {
    if (this.scene) {
      this.setView(...firstView(this, this.size(), this.panels ? this.panels() : []));
    }
  }

  zoomAt(factor, sx, sy) {
    const { k, tx, ty } = this.view;
    const k2 = Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, k * factor));
    const wx = (sx - tx) / k;
    const wy = (sy - ty) / k;
    this.setView(k2, sx - wx * k2, sy - wy * k2);
  }

  // Centre the view on world point (x, y up) at zoom k (default: keep).
  centerOn(x, y, k) {
    const [W, H] = this.size();
    k = k || this.view.k;
    this.setView(k, W / 2 - x * k, H / 2 + y * k);
  }

  // Bring a drawn member into view, beside the details panel rather than under it.
  focusMember(i) {
    if (!this.isDrawn(i)) return;
    const b = this.scene.boxes[this.scene.index.get(i)];
    const [W0, H] = this.size();
    const inset = Math.min(this.insetRight ? this.insetRight() : 0, W0 / 2);
    const W = W0 - inset;
    let k = this.view.k;
    const fitK = Math.min((W * 0.8) / b.w, (H * 0.8) / b.h);
    if (k < 0.7 || k > fitK) k = Math.min(Math.max(k, 0.9), fitK);
    this.setView(k, W / 2 - b.x * k, H / 2 + b.y * k);
  }

  _screenPos(i) {
    if (i < 0 || !this.isDrawn(i)) return null;
    const b = this.scene.boxes[this.scene.index.get(i)];
    const { k, tx, ty } = this.view;
    return [tx + b.x * k, ty - (b.y + b.h / 2) * k];
  }

  _keepAt(i, [sx, sy]) {
    if (!this.isDrawn(i)) return;
    const b = this.scene.boxes[this.scene.index.get(i)];
    const { k } = this.view;
    this.setView(k, sx - b.x * k, sy + (b.y + b.h / 2) * k);
  }
}

function nextFrame() {
  return new Promise((resolve) => {
    requestAnimationFrame(() => setTimeout(resolve, 0));
  });
}
