// Drawing a composed scene as SVG, styled like the static output (graphviz_tb/draw/dot.py).
//
// Every string that comes from the model goes into the DOM as text (textContent or an
// attribute value set with setAttribute); nothing is ever parsed as markup.

import { fill, formatCost, formatShare } from "./colors.js";
import { textWidth } from "./layout.js";
import { STYLE } from "./style.gen.js";
import { counted } from "./graph.js";

export const SVG_NS = "http://www.w3.org/2000/svg";
const MAX_LABEL = STYLE.maxLine;
// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

// The lines a box shows its name on, rule for rule as layout/text.py's label_lines (which sizes
// the box): one, or two for a name longer than WRAP, broken after the separator (or between the
// words of CamelCase) nearest the middle, at the middle when none is within a quarter of the length
// (a block's "first … last" after its "…" when that is within a quarter); a name longer than
// WRAP_MOST is cut first.  Counted in characters, as Python counts: a string's length and indices
// count UTF-16 units, two for an emoji or a mathematical letter.  The numbers and the breaks
// are graphviz_tb/style.py's.
const WRAP = STYLE.wrap;
const WRAP_MOST = STYLE.wrapMost;
const BREAKS = new Set([...STYLE.labelBreaks]);
const isLower = (c) => c !== c.toUpperCase() && c === c.toLowerCase();
const isUpper = (c) => c !== c.toLowerCase() && c === c.toUpperCase();

export function labelLines(label) {
  let chars = [...label];
  if (chars.length <= WRAP) return [label];
  if (chars.length > WRAP_MOST) chars = [...chars.slice(0, WRAP_MOST - 1), "…"];
  const n = chars.length;
  const mid = Math.floor(n / 2);
  let best = -1;
  for (let i = 1; i < n; i++) {
    const a = chars[i - 1];
    if ((BREAKS.has(a) || (isLower(a) && isUpper(chars[i])))
        && Math.abs(i - mid) < Math.abs(best - mid)) best = i;
  }
  // A block named by its first and last members: between them.
  const block = chars.findIndex((c, i) => c === "…" && chars[i - 1] === " "
    && chars[i + 1] === " ") + 2;
  if (block > 2 && Math.abs(block - mid) <= Math.floor(n / 4)) best = block;
  const cut = Math.abs(best - mid) <= Math.floor(n / 4) ? best : mid;
  return [chars.slice(0, cut).join(""), chars.slice(cut).join("")];
}

// A closed box's text: its name (one or two lines) in 10 pt, the second line below in 8 pt,
// centred as Graphviz centres the static picture's.
// A box's name and second line.  `toggled` is the width of a box with a toggle at its top
// right: its first name line is kept clear of it.
function boxText(g, label, second, below, colors, secondColor, toggled = 0) {
  const name = labelLines(label).map((t) => cleanText(t));
  const shift = 6 * (name.length - 1);
  name.forEach((t, k) => text(g, k === 0 && toggled ? clearOfToggle(t, toggled, 1) : 0,
    (second === null ? 3.5 : -1.5) - shift + 12 * k, t, { "font-size": 10, fill: colors.fg }));
  if (second !== null) text(g, 0, below + shift, second, { "font-size": 8, fill: secondColor });
}

// Model strings made safe to show: control characters replaced, newlines (a lone \r too) as ↵,
// cut; rule for rule as graphviz_tb/escaping.py clean_text, whose examples are the spec.
export function cleanText(text, limit) {
  let t = String(text).replace(/\r\n|\n|\r/g, "↵").replace(CONTROL_CHARS, "\ufffd");
  if (limit !== undefined) {
    const chars = [...t];
    if (chars.length > limit) t = chars.slice(0, limit - 1).join("") + "…";
  }
  return t;
}

export function svgEl(tag, attrs, parent) {
  const e = document.createElementNS(SVG_NS, tag);
  if (attrs) for (const k in attrs) e.setAttribute(k, String(attrs[k]));
  if (parent) parent.appendChild(e);
  return e;
}

function fmt(x) {
  return Math.round(x * 100) / 100;
}

function text(parent, x, y, content, attrs) {
  const t = svgEl("text", { x: fmt(x), y: fmt(y), "text-anchor": "middle", ...attrs }, parent);
  t.textContent = content;
  return t;
}

function title(parent, lines) {
  const t = svgEl("title", null, parent);
  t.textContent = lines.join("\n");
}

// The tooltip of a member: full name, op or kind, shapes, device (like draw/dot.py _tooltip).
export function tooltip(graph, i) {
  const lines = [cleanText(graph.name[i], 300)];
  if (graph.isGroup(i)) {
    lines.push(`${graph.kindName(i)}: ${counted(graph.nops[i], graph.unit)}`);
    if (graph.functions[i]) lines.push(`function: ${cleanText(graph.functions[i], 200)}`);
    return lines;
  }
  lines.push(`op: ${cleanText(graph.opType(i), 100)}`);
  const shapes = graph.outputs(i).map(([dt, shape]) => [dt, shape].filter(Boolean).join(" "));
  if (shapes.some(Boolean)) lines.push("shape: " + shapes.map((s) => s || "?").join(", "));
  const dev = graph.devices[graph.dev[i]];
  if (dev && dev !== "(no device)") lines.push(`device: ${cleanText(dev, 200)}`);
  if (graph.calls[i]) lines.push("calls: " + graph.calls[i].map((c) => cleanText(c, 100)).join(", "));
  for (const note of graph.notes[i] || []) lines.push(cleanText(note, 400));
  return lines;
}

function notePath(w, h) {
  const x0 = -w / 2;
  const y0 = -h / 2;
  const f = Math.min(8, h / 3);
  return `M${fmt(x0)},${fmt(y0)}H${fmt(-x0 - f)}L${fmt(-x0)},${fmt(y0 + f)}V${fmt(-y0)}` +
    `H${fmt(x0)}Z M${fmt(-x0 - f)},${fmt(y0)}V${fmt(y0 + f)}H${fmt(-x0)}`;
}

// Draw the scene into `root` (an empty <g>); returns the elements by box and by wire.
export function drawScene(root, scene, ctx) {
  const { graph, mode, theme, themes } = ctx;
  const colors = themes[theme];
  // Open groups' frames under the edges, closed boxes over them: a click anywhere on a box
  // reaches the box, even where a line passes under it.
  const frameLayer = svgEl("g", { class: "frames" }, root);
  const edgeLayer = svgEl("g", { class: "edges" }, root);
  const nodeLayer = svgEl("g", { class: "nodes" }, root);
  const labelLayer = svgEl("g", { class: "edge-labels" }, root);
  const boxEls = new Array(scene.boxes.length);
  scene.boxes.forEach((b, k) => {
    boxEls[k] = b.stub ? drawStub(nodeLayer, b, graph, colors)
      : drawBox(b.open ? frameLayer : nodeLayer, b, graph, mode, theme, ctx, colors);
  });
  const diffLines = ctx.diffLines ? ctx.diffLines[theme] : null;
  const wireEls = scene.wires.map((w, k) => drawWire(edgeLayer, labelLayer, w, k, graph,
    colors, scene, diffLines));
  return { boxEls, wireEls };
}

function drawStub(layer, b, graph, colors) {
  const g = svgEl("g", { class: "stub", "data-stub": String(b.far), "data-near": String(b.near),
    transform: `translate(${fmt(b.x)},${fmt(-b.y)})` }, layer);
  // The box the layout gave the stub: its edge ends on it; it is also what takes the pointer.
  svgEl("rect", { x: fmt(-b.w / 2), y: fmt(-b.h / 2), width: fmt(b.w), height: fmt(b.h),
    fill: "transparent", class: "shape" }, g);
  text(g, 0, 2.5, cleanText(graph.label[b.far], MAX_LABEL), { "font-size": 7,
    fill: colors.muted });
  title(g, ["edge to or from the auxiliary node " + cleanText(graph.name[b.far], 200)]);
  return g;
}

function drawBox(layer, b, graph, mode, theme, ctx, colors) {
  const i = b.m;
  const group = graph.isGroup(i);
  const classes = ["node"];
  const g = svgEl("g", { transform: `translate(${fmt(b.x)},${fmt(-b.y)})` }, layer);
  g.setAttribute("data-node", graph.name[i]);
  g.setAttribute("data-i", String(i));
  // An open group in a diff is neutral, as in the static picture: its boxes carry the colours.
  const f = mode === "diff" && b.open && ctx.diffColors ? ctx.diffColors[theme].unchanged
    : fill(graph, i, mode, theme, ctx.themes, ctx.unique, ctx.cost, ctx.diffColors);
  const status = graph.diff ? graph.diffStatus(i) : null;
  if (status && status !== "unchanged") classes.push(`diff-${status}`);
  // On the cost scale's colours the second line is as dark as the name (as draw/dot.py).
  const second = ctx.cost ? colors.fg : colors.muted;
  const stroke = { stroke: colors.line, "stroke-width": 1 };
  if (status === "removed" && !b.open) stroke["stroke-dasharray"] = "4,2";  // only the old has it
  const w = b.w;
  const h = b.h;
  if (group) {
    classes.push(graph.kindName(i) === "series" ? "series" : "group", graph.kindName(i));
    if (b.open) classes.push("expanded");
    if (b.aux) classes.push("aux");
    const attrs = { x: fmt(-w / 2), y: fmt(-h / 2), width: fmt(w), height: fmt(h), rx: 6,
      fill: f, ...stroke, class: "shape" };
    if (b.open) attrs["fill-opacity"] = 0.333;
    svgEl("rect", attrs, g);
    const raw = graph.lines(i);
    const lines = raw.map((t) => cleanText(t, MAX_LABEL));
    if (b.open) {
      const head = frameTitle(lines[0], i, w, ctx);
      text(g, clearOfToggle(head, w, 1.1), -h / 2 + 13, head, { "font-size": 10,
        "font-weight": "bold", fill: colors.fg });
    } else {
      boxText(g, raw[0], lines.length > 1 ? lines[1] : null, 9, colors, second, w);
    }
    drawToggle(g, w, h, b.open, colors);
  } else {
    const op = graph.opType(i);
    const role = graph.role(i);
    classes.push("op");
    const konst = graph.isConst(i);
    if (konst) classes.push("const");
    if (op.includes("Summary")) classes.push("summary");
    if (role !== "op") classes.push(role);
    if (b.aux) classes.push("aux");
    const bad = role === "missing" || (graph.notes[i] || []).some((n) => n.startsWith("shape error"));
    if (bad) {
      stroke.stroke = colors.missing;
      stroke["stroke-width"] = 2;
    }
    if (role === "missing") stroke["stroke-dasharray"] = "5,2";
    if (konst) {
      svgEl("rect", { x: fmt(-w / 2), y: fmt(-h / 2), width: fmt(w), height: fmt(h), rx: 4,
        fill: f, ...stroke, class: "shape" }, g);
    } else if (op.includes("Summary")) {
      svgEl("path", { d: notePath(w, h), fill: f, ...stroke, class: "shape" }, g);
    } else {
      svgEl("ellipse", { rx: fmt(w / 2), ry: fmt(h / 2), fill: f, ...stroke, class: "shape" }, g);
    }
    const raw = graph.lines(i);
    const lines = raw.map((t) => cleanText(t, MAX_LABEL));
    if (konst) {
      text(g, 0, 3, lines[0], { "font-size": 8, fill: colors.fg });
    } else {
      boxText(g, raw[0], lines.length > 1 ? lines[1] : null, 8.5, colors, second);
    }
  }
  g.setAttribute("class", classes.join(" "));
  const tip = tooltip(graph, i);
  if (graph.diff) tip.push(...diffLines(graph, i));
  if (ctx.cost) {
    const v = ctx.cost.totals[i];
    tip.splice(1, 0, `${ctx.cost.metric === "time" ? "compute time" : "memory"}: ` +
      (Number.isNaN(v) ? "no record"
        : `${formatCost(ctx.cost.metric, v)} · ${formatShare(v, ctx.cost.total)}`));
  }
  title(g, tip);
  return g;
}

// An open group's title: in a cost mode, with its total and share as the static picture
// writes it ("train · 82.3 ms · 83 %"), as much of that as fits the frame.
function frameTitle(name, i, w, ctx) {
  const v = ctx.cost ? ctx.cost.totals[i] : NaN;
  if (Number.isNaN(v)) return name;
  const cost = `${name} · ${formatCost(ctx.cost.metric, v)}`;
  for (const title of [`${cost} · ${formatShare(v, ctx.cost.total)}`, cost]) {
    if (textWidth(title, 10) * 1.1 <= w - 16) return title;
  }
  return name;
}

// The width the toggle takes at a box's top right, with a gap before it.
const TOGGLE_ROOM = 18;

// Where a line of 10-point text at a box's top is centred: in the middle, or as far left as
// keeps it clear of the toggle at the top right (a box is as wide as its name, or a frame as
// its title, with no room for the toggle).  `widen` is the layout's allowance on the text's
// width (1.1 for a frame's title).
function clearOfToggle(line, w, widen) {
  const half = textWidth(line, 10) * widen / 2;
  return Math.max(Math.min(0, w / 2 - TOGGLE_ROOM - half), -w / 2 + 4 + half);
}

// What a diff's tooltip says of a member (as draw/dot.py _diff_lines).
function diffLines(graph, i) {
  const d = graph.diff;
  if (graph.isGroup(i)) {
    const c = d.counts[i];
    return c ? [`diff: ${c[0]} added, ${c[1]} removed, ${c[2]} changed`] : ["diff: unchanged"];
  }
  const lines = [`diff: ${graph.diffStatus(i)}`];
  if (d.was[i] && graph.diffStatus(i) !== "removed") lines.push(`was: ${cleanText(d.was[i], 200)}`);
  for (const w of (d.what[i] || []).slice(0, 12)) lines.push(cleanText(w, 300));
  return lines;
}

function drawToggle(g, w, h, open, colors) {
  const x = w / 2 - 9;
  const y = -h / 2 + 9;
  const c = svgEl("g", { class: "ctl", transform: `translate(${fmt(x)},${fmt(y)})` }, g);
  svgEl("rect", { x: -5.5, y: -5.5, width: 11, height: 11, rx: 2, fill: colors.bg,
    stroke: colors.line, "stroke-width": 0.8 }, c);
  svgEl("path", { d: open ? "M-3,0H3" : "M-3,0H3M0,-3V3", stroke: colors.fg,
    "stroke-width": 1.2 }, c);
  title(c, [open ? "collapse (double-click, or −)" : "expand (double-click, or +)"]);
}

// A wire's end as the oracle and the styles read it: a member index, or the stub of member
// `far` beside member `near`.
function endKey(scene, member, stub) {
  if (member >= 0) return String(member);
  const b = scene.boxes[stub];
  return `stub:${b.far}:${b.near}`;
}

// The tensors an edge carries, one line each with its shape (the tooltip under the counts).
function tensorLines(graph, a, limit = 12) {
  const tensors = graph.tensors(a);
  const lines = tensors.slice(0, limit).map(([src, out]) => {
    const o = graph.outputs(src)[out];
    const shape = o ? [o[0], o[1]].filter(Boolean).join(" ") : "";
    return `${cleanText(graph.name[src], 200)}:${out} (${shape || "shape unknown"})`;
  });
  if (tensors.length > limit) lines.push(`… and ${tensors.length - limit} more`);
  return lines;
}

// `diffLines`: on a diff's page, the colours of added and removed edges.
function drawWire(edgeLayer, labelLayer, w, k, graph, colors, scene, diffLines) {
  const a = w.agg;
  const kind = graph.edgeKind(a);
  const width = kind === "control" ? 1 : graph.aw[a];
  const p = w.pts;
  let d = `M${fmt(p[0])},${fmt(-p[1])}`;
  for (let q = 2; q + 5 < p.length; q += 6) {
    d += `C${fmt(p[q])},${fmt(-p[q + 1])} ${fmt(p[q + 2])},${fmt(-p[q + 3])} ` +
      `${fmt(p[q + 4])},${fmt(-p[q + 5])}`;
  }
  const cls = ["edge", kind];
  if (graph.ab[a]) cls.push("back");
  const moved = graph.diff ? graph.diffEdge(a) : "unchanged";
  if (moved !== "unchanged") cls.push(`diff-${moved}`);
  const g = svgEl("g", { class: cls.join(" "), "data-agg": String(a), "data-wire": String(k),
    "data-src": endKey(scene, w.src, w.srcStub), "data-dst": endKey(scene, w.dst, w.dstStub) },
  edgeLayer);
  const line = moved === "unchanged" || !diffLines ? colors.line : diffLines[moved];
  const attrs = { d, fill: "none", stroke: line,
    "stroke-width": kind === "ref" ? Math.max(2, width) : width };
  if (kind === "control") attrs["stroke-dasharray"] = "5,2";
  svgEl("path", attrs, g);
  if (w.tip) {
    const ex = p[p.length - 2];
    const ey = p[p.length - 1];
    const dx = w.tip[0] - ex;
    const dy = w.tip[1] - ey;
    const hw = 0.35;
    const pts = [
      [w.tip[0], w.tip[1]],
      [ex - dy * hw, ey + dx * hw],
      [ex + dy * hw, ey - dx * hw],
    ].map(([x, y]) => `${fmt(x)},${fmt(-y)}`).join(" ");
    svgEl("polygon", { points: pts, fill: line, stroke: line,
      "stroke-width": Math.min(width, 2) }, g);
  }
  const label = graph.edgeLabel(a);
  let labelEl = null;
  if (label && w.lp) {
    labelEl = text(labelLayer, w.lp[0], -w.lp[1] + 3, cleanText(label, 40),
      { "font-size": 8, fill: colors.muted, "data-agg": String(a), "data-wire": String(k),
        class: "edge-label" });
  }
  const src = w.src >= 0 ? graph.name[w.src] : graph.name[scene.boxes[w.srcStub].far];
  const dst = w.dst >= 0 ? graph.name[w.dst] : graph.name[scene.boxes[w.dstStub].far];
  const counts = [["data", graph.an[a]], ["control", graph.ac[a]], ["ref", graph.ar[a]]]
    .filter(([, n]) => n).map(([kk, n]) => `${n} ${kk}`).join(", ");
  title(g, [`${cleanText(src, 200)} → ${cleanText(dst, 200)}`,
    counts + (label ? ` · ${cleanText(label, 40)}` : ""), ...tensorLines(graph, a)]);
  return { g, labelEl };
}
