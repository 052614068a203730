// The details panel, the legend and the minimap.

import { h } from "./dom.js";
import { cleanText } from "./draw.js";
import { colorKey, formatCost, palette, structureColor } from "./colors.js";
import { EDGE_KINDS } from "./graph.js";

const LIST_LIMIT = 40;

// ------------------------------------------------------------------------- details

function link(app, i, text) {
  return h("button", { class: "link", type: "button", title: app.g.name[i],
    onclick: () => app.ui.jumpTo(i) }, text === undefined ? app.g.name[i] : text);
}

function tensorText(info) {
  if (!info) return "";
  return [info[0], info[1]].filter(Boolean).join(" ");
}

function fmtNumber(n) {
  return typeof n === "number" ? n.toLocaleString("en-US") : String(n);
}

export function formatAttr(v) {
  if (v === null || v === undefined) return "?";
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (Array.isArray(v)) {
    if (v.length && v.every((x) => x === null || typeof x === "number")) {
      return "[" + v.map((x) => (x === null ? "?" : String(x))).join(", ") + "]";
    }
    return "[" + v.map(formatAttr).join(", ") + "]";
  }
  if (typeof v === "object") {
    if ("function" in v) return "ƒ " + v.function;
    if ("dtype" in v && "shape" in v) {
      let s = `${v.dtype} [${v.shape.join(", ")}]`;
      if (v.bytes) s += ` · ${fmtNumber(v.bytes)} bytes`;
      if (v.values) s += ` = ${JSON.stringify(v.values)}`;
      return s;
    }
    return JSON.stringify(v);
  }
  return String(v);
}

function section(title, ...rows) {
  return h("section", null, h("h3", null, title), ...rows);
}

function limited(items, render) {
  const shown = items.slice(0, LIST_LIMIT).map(render);
  if (items.length > LIST_LIMIT) {
    shown.push(h("li", { class: "more" }, `… ${fmtNumber(items.length - LIST_LIMIT)} more`));
  }
  return h("ul", { class: "list" }, shown);
}

// What each kind of group tbgraph makes stands for (none is a name scope of the model).
const INVENTED = {
  prefix: "names sharing a prefix",
  series: "numbered alike siblings",
  block: "a stretch of the dataflow",
  section: "a slice of a group too big to draw at once",
  update: "the optimizer's updates of one layer's variables",
  variables: "the variables the calls beside it read",
  metrics: "a training step's updates of its metrics",
  replica: "the first replica of a distributed step, named as the others are",
  clipping: "the optimizer's clipping of the gradients by their global norm",
  decay: "the weight decay of one variable, apart from its step",
};

export function renderDetails(app, i) {
  const g = app.g;
  const box = [];
  const close = h("button", { class: "close", type: "button", title: "close (Esc)",
    onclick: () => app.select(-1) }, "×");
  box.push(h("div", { class: "head" }, h("h2", null, cleanText(g.label[i] || g.name[i], 200)),
    close));
  // A group tbgraph made (no name scope of the model's) has a made-up name: say what it is
  // and where it sits instead of showing that name as if the model had it.
  const made = g.isGroup(i) ? INVENTED[g.kindName(i)] : null;
  if (made) {
    const parent = g.parent[i] > 0 ? cleanText(g.name[g.parent[i]]) : "the graph";
    box.push(h("div", { class: "fullname invented" }, `grouped by tbgraph: ${made}, in ${parent}`));
  } else {
    box.push(h("div", { class: "fullname" }, cleanText(g.name[i])));
  }
  const facts = [];
  const fact = (k, v) => facts.push(h("dt", null, k), h("dd", null, v));
  const actions = h("div", { class: "actions" },
    g.isGroup(i) ? h("button", { type: "button", onclick: () => app.toggle(i) },
      app.isOpen(i) ? "− collapse" : "+ expand") : null,
    h("button", { type: "button", title: "t", onclick: () => app.ui.trace("in") }, "trace inputs"),
    h("button", { type: "button", title: "o", onclick: () => app.ui.trace("out") },
      "trace outputs"));
  if (g.isGroup(i)) {
    fact("kind", g.kindName(i));
    costFacts(app, i, fact);
    if (g.diff) {
      const c = g.diff.counts[i];
      fact("diff", c ? `${c[0]} added, ${c[1]} removed, ${c[2]} changed` : "unchanged");
    }
    fact(`${g.unit}s`, fmtNumber(g.nops[i]));
    fact("children", fmtNumber(g.kids(i).length));
    if (g.functions[i]) fact("function", cleanText(g.functions[i]));
    if (g.tpl[i] >= 0) {
      const [, count] = g.templates[g.tpl[i]];
      const sw = h("span", { class: "swatch" });
      sw.style.background = structureColor(g, g.tpl[i], app.theme);
      fact("structure", h("span", null, sw,
        ` same as ${fmtNumber(count - 1)} other group${count === 2 ? "" : "s"}`));
    } else {
      fact("structure", "unique");
    }
    const dev = g.devices[g.dev[i]];
    if (dev) fact("device", cleanText(dev));
    box.push(h("dl", null, facts), actions);
    box.push(...groupEdges(app, i));
    return box;
  }
  fact("op", cleanText(g.opType(i)));
  const dev = g.devices[g.dev[i]];
  fact("device", dev === "(no device)" ? "none" : cleanText(dev));
  if (g.role(i) !== "op") fact("role", g.role(i));
  if (g.calls[i]) {
    fact("calls", h("span", null, g.calls[i].map((fn, k) => {
      const body = g.lookup(g.name[i]);
      const label = (k ? ", " : "") + "ƒ " + cleanText(fn);
      return body >= 0 && g.isGroup(body) ? link(app, body, label) : label;
    })));
  }
  box.push(h("dl", null, facts), actions);
  for (const note of g.notes[i] || []) box.push(h("p", { class: "note" }, cleanText(note)));
  box.push(...opDiff(app, i));
  box.push(...opCost(app, i));
  box.push(...opEdges(app, i));
  const attrs = g.attrs(i);
  const keys = Object.keys(attrs);
  if (keys.length) {
    box.push(section("attributes", h("table", { class: "attrs" }, keys.map((k) =>
      h("tr", null, h("th", null, cleanText(k)), h("td", null,
        cleanText(formatAttr(attrs[k]), 4000)))))));
  }
  return box;
}

// A group's totals in the current step: its compute time and memory, summed over its ops.
function costFacts(app, i, fact) {
  if (app.step < 0) return;
  const g = app.g;
  const step = g.costSteps()[app.step];
  const time = g.costTotals(app.step, "time")[i];
  fact("compute time", Number.isNaN(time) ? "no record" : formatCost("time", time));
  if (step.memory) {
    const bytes = g.costTotals(app.step, "memory")[i];
    fact("memory", Number.isNaN(bytes) ? "no record" : formatCost("memory", bytes));
  }
}

// What op i cost in the current step (see draw/viewer_data.py costs_data for the row).
function opCost(app, i) {
  if (app.step < 0) return [];
  const g = app.g;
  const step = g.costSteps()[app.step];
  const title = `cost · ${cleanText(step.name, 80)}`;
  const row = g.costRow(app.step, i);
  if (!row) return [section(title, h("p", { class: "none" }, "no record in this step"))];
  const [, time, allocated, wall, kernel, start, runs, peak, persistent, temporary, outs] = row;
  const t = (v) => formatCost("time", v);
  const b = (v) => formatCost("memory", v);
  const rows = [];
  const fact = (k, v) => rows.push(h("dt", null, k), h("dd", null, v));
  fact("compute time", t(time) + (time !== wall ? ` (with what it ran: ${t(wall)})` : ""));
  if (kernel) fact("kernel", t(kernel));
  if (start >= 0) fact("started", `${t(start)} after the step's first op`);
  fact("runs", fmtNumber(runs));
  if (step.memory) {
    fact("allocated", b(allocated) + (peak ? ` · peak ${b(peak)}` : ""));
    if (persistent) fact("persistent", b(persistent));
    if (temporary) fact("temporary", b(temporary));
  }
  const parts = [section(title, h("dl", null, rows))];
  if (outs >= 0) {
    parts.push(section("output sizes", h("ul", { class: "list" },
      g.costs.outputs[outs].map(([slot, dtype, shape, bytes]) => h("li", null,
        h("span", { class: "slot" }, `${slot}`),
        h("span", null, [dtype, shape].filter(Boolean).join(" ") || "?"),
        h("span", { class: "shape" }, b(bytes)))))));
  }
  return parts;
}

// How a list shows each op: the end of its name, at least its last two components, and as
// many more as tell it from every other name listed (`…/BiasAdd/ReadVariableOp/resource` and
// `…/Cast/ReadVariableOp/resource`, not `ReadVariableOp/resource` twice); `…/` marks a cut.
function distinctEnds(names, least = 2) {
  const parts = names.map((n) => n.split("/"));
  const keep = parts.map((p) => Math.min(least, p.length));
  const end = (i) => parts[i].slice(-keep[i]).join("/");
  for (let grew = true; grew;) {
    const count = new Map();
    parts.forEach((_, i) => count.set(end(i), (count.get(end(i)) || 0) + 1));
    grew = false;
    parts.forEach((p, i) => {
      if (count.get(end(i)) > 1 && keep[i] < p.length) {
        keep[i] += 1;
        grew = true;
      }
    });
  }
  return parts.map((p, i) => (keep[i] < p.length ? "…/" : "") + end(i));
}

// A list row's name, free to wrap after each "/" (Chromium breaks a path only mid-word): cut
// at its start to fit, two rows read alike where the part telling them apart came first.
// A name's end of 120 characters at most (a model's names can be kilobytes long).
function rowName(text) {
  const chars = [...cleanText(text)];
  const shown = chars.length > 120 ? `…${chars.slice(-119).join("")}` : chars.join("");
  const parts = shown.split("/");
  return h("span", { class: "name" }, h("bdi", null,
    parts.map((p, k) => (k < parts.length - 1 ? [`${p}/`, h("wbr")] : p))));
}

// The most expensive ops of the current step, each a link to its box.
export function renderTopOps(app) {
  const g = app.g;
  const metric = app.costMetric() || "time";
  const totals = g.costTotals(app.step, metric);
  const top = app.topOps();
  const ends = distinctEnds(top.map((i) => g.name[i]));
  const rows = top.map((i, k) => h("li", null, h("button", {
    class: "link", type: "button", title: g.name[i], "data-name": g.name[i],
    onclick: () => app.ui.jumpTo(i) },
  rowName(ends[k]),
  h("span", { class: "value" }, formatCost(metric, totals[i])))));
  const what = metric === "memory" ? "memory" : "compute time";
  return [h("h3", null, `top ops by ${what}`),
    rows.length ? h("ol", null, rows) : h("p", { class: "none" }, "nothing recorded")];
}

// A diff's changes, each a link to its box: changed ops first, then added, then removed.
const SIGNS = { changed: "~", added: "+", removed: "−" };

export function renderChanges(app) {
  const g = app.g;
  const d = g.diff;
  const ends = distinctEnds(d.changes.map((i) => g.name[i]));
  const rows = d.changes.map((i, k) => {
    const status = g.diffStatus(i);
    const what = (d.what[i] || [])[0];
    return h("li", { class: `diff-${status}` }, h("button", {
      class: "link", type: "button", title: g.name[i], "data-name": g.name[i],
      onclick: () => app.ui.jumpTo(i) },
    h("span", { class: "sign" }, SIGNS[status]),
    rowName(ends[k]),
    what ? h("span", { class: "value" }, cleanText(what, 60)) : null));
  });
  const t = d.total;
  return [h("h3", null, `changes: ${t.added} added, ${t.removed} removed, ${t.changed} changed`),
    rows.length ? h("ol", null, rows) : h("p", { class: "none" }, "the graphs are equal")];
}

// What a diff says of op i: its status, its old name, its changes, and its attributes then
// and now side by side.
function opDiff(app, i) {
  const g = app.g;
  const d = g.diff;
  if (!d) return [];
  const status = g.diffStatus(i);
  const rows = [];
  const fact = (k, v) => rows.push(h("dt", null, k), h("dd", null, v));
  fact("status", status);
  if (d.was[i] && status !== "removed") fact("was", cleanText(d.was[i]));
  const parts = [section("diff", h("dl", null, rows))];
  if (d.what[i]) {
    parts.push(section("what changed", h("ul", { class: "list" },
      d.what[i].map((w) => h("li", null, cleanText(w, 400))))));
  }
  const before = d.before[i];
  if (before) {
    const now = g.attrs(i);
    const keys = [...new Set([...Object.keys(before.attrs), ...Object.keys(now)])].sort();
    const cell = (v) => h("td", null, v === undefined ? "—" : cleanText(formatAttr(v), 400));
    parts.push(section("attributes: old · new", h("table", { class: "attrs diff" },
      h("tr", null, h("th", null, ""), h("th", null, "old"), h("th", null, "new")),
      h("tr", { class: before.op !== g.opType(i) ? "differs" : "" }, h("th", null, "op"),
        cell(before.op), cell(g.opType(i))),
      keys.map((k) => h("tr", { class: JSON.stringify(before.attrs[k]) !==
        JSON.stringify(now[k]) ? "differs" : "" }, h("th", null, cleanText(k)),
      cell(before.attrs[k]), cell(now[k]))))));
  }
  return parts;
}

function opEdges(app, i) {
  const g = app.g;
  const inputs = [];
  const controls = [];
  for (let k = g.inStart[i]; k < g.inStart[i + 1]; k++) {
    const e = g.inList[k];
    if ((g.ecode[e] & 3) === 1) controls.push(e);
    else inputs.push(e);
  }
  inputs.sort((a, b) => g.eslot[a] - g.eslot[b]);
  const outs = g.outputs(i);
  const consumers = new Map();
  const dependents = [];
  for (let k = g.outStart[i]; k < g.outStart[i + 1]; k++) {
    const e = g.outList[k];
    if ((g.ecode[e] & 3) === 1) {
      dependents.push(e);
      continue;
    }
    const slot = g.ecode[e] >> 3;
    if (!consumers.has(slot)) consumers.set(slot, []);
    consumers.get(slot).push(e);
  }
  const parts = [];
  parts.push(section(`inputs (${inputs.length})`, inputs.length ? limited(inputs, (e) => {
    const src = g.esrc[e];
    const out = g.ecode[e] >> 3;
    const info = tensorText(g.outputs(src)[out]);
    const kind = EDGE_KINDS[g.ecode[e] & 3];
    return h("li", null, h("span", { class: "slot" }, `${g.eslot[e]}`), link(app, src),
      out ? `:${out}` : "", info ? h("span", { class: "shape" }, info) : null,
      kind === "ref" ? h("span", { class: "tag" }, "ref") : null);
  }) : h("p", { class: "none" }, "none")));
  if (controls.length) {
    parts.push(section(`control inputs (${controls.length})`, limited(controls, (e) =>
      h("li", null, "^", link(app, g.esrc[e])))));
  }
  const count = Math.max(outs.length, consumers.size ? Math.max(...consumers.keys()) + 1 : 0);
  const rows = [];
  for (let o = 0; o < count; o++) {
    const users = consumers.get(o) || [];
    const info = tensorText(outs[o]) || "unknown";
    rows.push(h("li", null, h("span", { class: "slot" }, `${o}`),
      h("span", { class: "shape" }, info),
      users.length ? h("span", { class: "to" }, " → ", users.slice(0, 12).map((e, k) =>
        [k ? ", " : "", link(app, g.edst[e], g.label[g.edst[e]])]),
      users.length > 12 ? ` … ${users.length - 12} more` : "") : null));
  }
  parts.push(section(`outputs (${count})`, count ? h("ul", { class: "list" }, rows)
    : h("p", { class: "none" }, "none")));
  if (dependents.length) {
    parts.push(section(`control dependents (${dependents.length})`, limited(dependents, (e) =>
      h("li", null, link(app, g.edst[e])))));
  }
  return parts;
}

function groupEdges(app, i) {
  const g = app.g;
  const end = i + g.size[i];
  const from = new Map();
  const to = new Map();
  for (let v = i; v < end; v++) {
    if (!g.isOp(v)) continue;
    for (let k = g.inStart[v]; k < g.inStart[v + 1]; k++) {
      const u = g.esrc[g.inList[k]];
      if (u < i || u >= end) from.set(u, (from.get(u) || 0) + 1);
    }
    for (let k = g.outStart[v]; k < g.outStart[v + 1]; k++) {
      const w = g.edst[g.outList[k]];
      if (w < i || w >= end) to.set(w, (to.get(w) || 0) + 1);
    }
  }
  const row = ([u, n]) => h("li", null, link(app, u), n > 1 ? h("span", { class: "shape" },
    `× ${n}`) : null);
  return [
    section(`inputs from outside (${from.size})`, from.size ? limited([...from], row)
      : h("p", { class: "none" }, "none")),
    section(`outputs to outside (${to.size})`, to.size ? limited([...to], row)
      : h("p", { class: "none" }, "none")),
  ];
}

// ------------------------------------------------------------------------- legend

const COST_TITLES = { "compute-time": "colour = compute time, log scale (×3.2 a step)",
  memory: "colour = memory, log scale (×3.2 a step)" };
const TITLES = { structure: "same colour = same structure", op: "colour = op type",
  device: "colour = device", dtype: "colour = dtype", none: "edges", diff: "what changed",
  ...COST_TITLES };

export function renderLegend(app) {
  const g = app.g;
  const rows = [];
  const mode = app.colorBy;
  const swatchRow = (color, text) => {
    const sw = h("span", { class: "swatch" });
    sw.style.background = color;
    return h("li", null, sw, cleanText(text, 40));
  };
  if (mode === "diff" && g.diff) {
    const t = g.diff.total;
    for (const s of ["added", "removed", "changed", "unchanged"]) {
      rows.push(swatchRow(app.data.diffColors[app.theme][s], `${s}: ${fmtNumber(t[s])} op${t[s] === 1 ? "" : "s"}`));
    }
  } else if (app.cost) {
    const { scale, metric, colors, noRecord, total } = app.cost;
    rows.push(h("li", { class: "total" }, `step total: ${formatCost(metric, total)}`));
    for (const [k, lo, hi] of scale.ranges().reverse()) {
      const text = lo === hi ? formatCost(metric, lo)
        : `${formatCost(metric, lo)} – ${formatCost(metric, hi)}`;
      rows.push(swatchRow(colors[app.theme][k], text));
    }
    rows.push(swatchRow(noRecord[app.theme], "no record"));
  } else if (app.scene && mode !== "none" && mode !== "diff" && !(mode in COST_TITLES)) {
    const keys = new Set();
    for (const b of app.scene.boxes) {
      if (b.stub) continue;
      const key = colorKey(g, b.m, mode);
      if (key) keys.add(key[1]);
    }
    const sorted = [...keys].sort((a, b) => a - b);
    if (mode === "structure") {
      // As the static legend: the structures with a colour of their own, then one row for
      // the others (past the palette, or too small to spend a colour on).
      const own = sorted.filter((k) => g.templates[k][2] >= 0);
      for (const k of own.slice(0, 12)) {
        const [label, count] = g.templates[k];
        rows.push(swatchRow(structureColor(g, k, app.theme), `${label} × ${count}`));
      }
      if (own.length > 12) rows.push(h("li", { class: "more" }, `… ${own.length - 12} more structures`));
      const more = sorted.length - own.length;
      if (more) {
        rows.push(swatchRow(structureColor(g, sorted.find((k) => g.templates[k][2] < 0),
          app.theme), `${more}${own.length ? " other" : ""} repeated structure${more > 1 ? "s" : ""}`));
      }
      rows.push(swatchRow(app.unique[app.theme], "unique structure"));
    } else {
      const table = mode === "op" ? g.opTypes : mode === "device" ? g.devices : g.dtypes;
      for (const k of sorted.slice(0, 14)) rows.push(swatchRow(palette(k, app.theme), table[k]));
      if (sorted.length > 14) rows.push(h("li", { class: "more" }, `… ${sorted.length - 14} more`));
    }
  }
  const edge = (cls, text, color) => {
    const sample = h("span", { class: `edge-sample ${cls}` });
    if (color) sample.style.borderTopColor = color;
    return h("li", null, sample, text);
  };
  if (mode === "diff" && g.diff && app.data.diffLines) {
    const lines = app.data.diffLines[app.theme];
    rows.push(edge("data", "edge added", lines.added), edge("data", "edge removed",
      lines.removed));
  }
  rows.push(edge("data", "data (label: shape)"), edge("control", "control dependency"),
    edge("ref", "reference (mutated)"));
  // Why the data edges have no labels, and what adds them (as the static legend says).
  for (const note of app.data.legendNotes || []) rows.push(h("li", { class: "more" }, note));
  if (g.shapesNote) rows.push(h("li", { class: "more" }, g.shapesNote));
  return [h("h3", null, TITLES[mode] || ""), h("ul", null, rows)];
}

// ------------------------------------------------------------------------- minimap

export class Minimap {
  constructor(app, canvas) {
    this.app = app;
    this.canvas = canvas;
    this.scale = 1;
    this.pending = false;
    let dragging = false;
    const move = (ev) => {
      const r = canvas.getBoundingClientRect();
      const x = (ev.clientX - r.left - this.ox) / this.scale;
      const y = this.sceneH - (ev.clientY - r.top - this.oy) / this.scale;
      app.centerOn(x, y);
    };
    canvas.addEventListener("pointerdown", (ev) => {
      dragging = true;
      canvas.setPointerCapture(ev.pointerId);
      move(ev);
      ev.stopPropagation();
    });
    canvas.addEventListener("pointermove", (ev) => dragging && move(ev));
    canvas.addEventListener("pointerup", () => { dragging = false; });
  }

  schedule() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      this.draw();
    });
  }

  draw() {
    const app = this.app;
    const scene = app.scene;
    if (!scene) return;
    const c = this.canvas;
    const maxW = 200;
    const maxH = 150;
    const s = Math.min(maxW / Math.max(scene.w, 1), maxH / Math.max(scene.h, 1));
    const cw = Math.max(40, Math.ceil(scene.w * s)) + 8;
    const ch = Math.max(30, Math.ceil(scene.h * s)) + 8;
    const dpr = window.devicePixelRatio || 1;
    if (c.width !== cw * dpr || c.height !== ch * dpr) {
      c.width = cw * dpr;
      c.height = ch * dpr;
      c.style.width = `${cw}px`;
      c.style.height = `${ch}px`;
    }
    this.scale = s;
    this.ox = 4;
    this.oy = 4;
    this.sceneH = scene.h;
    const ctx = c.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const colors = app.themes[app.theme];
    ctx.fillStyle = colors.bg;
    ctx.fillRect(0, 0, cw, ch);
    for (const b of scene.boxes) {
      if (b.stub) continue;
      const x = 4 + (b.x - b.w / 2) * s;
      const y = 4 + (scene.h - b.y - b.h / 2) * s;
      if (b.open) {
        ctx.strokeStyle = colors.muted;
        ctx.lineWidth = 0.5;
        ctx.strokeRect(x, y, b.w * s, b.h * s);
      } else {
        ctx.fillStyle = app.g.isGroup(b.m) ? colors.muted : colors.line;
        ctx.fillRect(x, y, Math.max(1, b.w * s), Math.max(1, b.h * s));
      }
    }
    // The part of the scene on screen.
    const { k, tx, ty } = app.view;
    const [W, H] = app.size();
    const x0 = -tx / k;
    const yTop = ty / k; // world y (up) at the top of the screen
    ctx.strokeStyle = "#e8590c";
    ctx.lineWidth = 1.5;
    ctx.strokeRect(4 + x0 * s, 4 + (scene.h - yTop) * s, (W / k) * s, (H / k) * s);
  }
}
