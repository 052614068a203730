// Fill colours, the same as the static SVG's (graphviz_tb/draw/dot.py): the palette's
// parameters and the cost scale's step count come from graphviz_tb/style.py (STYLE, generated
// at build time), the cost scale's rule is graphviz_tb.model.costs.Scale's.

import { STYLE } from "./style.gen.js";

const ONE_THIRD = 1 / 3;
const ONE_SIXTH = 1 / 6;
const TWO_THIRD = 2 / 3;

function mod1(x) {
  return ((x % 1) + 1) % 1;
}

function v(m1, m2, hue) {
  hue = mod1(hue);
  if (hue < ONE_SIXTH) return m1 + (m2 - m1) * hue * 6.0;
  if (hue < 0.5) return m2;
  if (hue < TWO_THIRD) return m1 + (m2 - m1) * (TWO_THIRD - hue) * 6.0;
  return m1;
}

function hlsToRgb(h, l, s) {
  if (s === 0) return [l, l, l];
  const m2 = l <= 0.5 ? l * (1.0 + s) : l + s - l * s;
  const m1 = 2.0 * l - m2;
  return [v(m1, m2, h + ONE_THIRD), v(m1, m2, h), v(m1, m2, h - ONE_THIRD)];
}

function hex2(x) {
  return Math.round(x * 255).toString(16).padStart(2, "0");
}

const cache = new Map();

// The index-th distinct colour: golden-ratio hue steps in three lightness bands (as
// graphviz_tb.style.palette).
export function palette(index, theme) {
  const key = theme + index;
  let c = cache.get(key);
  if (c) return c;
  const { hueStart, hueStep, bandEvery, bands } = STYLE.palette;
  const hue = mod1(hueStart + index * hueStep);
  const band = Math.floor(index / bandEvery) % 3;
  const { light, sat } = bands[theme === "dark" ? "dark" : "light"];
  const [r, g, b] = hlsToRgb(hue, light[band], sat[band]);
  c = `#${hex2(r)}${hex2(g)}${hex2(b)}`;
  cache.set(key, c);
  return c;
}

// The fill of structure `k` of the page's table (its palette slot is the table's third
// column, -1 past the palette): the same as the static picture's (graphviz_tb.style).
export function structureColor(graph, k, theme) {
  const slot = graph.templates[k][2];
  const colors = STYLE.structure[theme === "dark" ? "dark" : "light"];
  return slot >= 0 && slot < colors.length ? colors[slot]
    : STYLE.otherRepeated[theme === "dark" ? "dark" : "light"];
}

// The colour key of a member in a colour-by mode: [table name, index] or null.
export function colorKey(graph, i, mode) {
  if (graph.isGroup(i)) {
    if (mode === "structure") return graph.tpl[i] >= 0 ? ["templates", graph.tpl[i]] : null;
    if (mode === "device") return graph.dev[i] >= 0 ? ["devices", graph.dev[i]] : null;
    return null;
  }
  if (mode === "op") return ["opTypes", graph.type[i]];
  if (mode === "device") return ["devices", graph.dev[i]];
  if (mode === "dtype") return ["dtypes", graph.dt[i]];
  return null;
}

// ------------------------------------------------------------------------- costs

export const COST_MODES = { "compute-time": "time", memory: "memory" };
const SCALE_STEPS = STYLE.scaleSteps;

// The cost scale over the values of the boxes drawn, on a log scale: the same steps as
// graphviz_tb.model.costs.Scale (the most expensive box hottest, a step every factor of √10
// below).
export class CostScale {
  constructor(values) {
    this.values = Float64Array.from(values).sort();
    const n = this.values.length;
    this.top = n ? this.values[n - 1] : 0;
  }

  step(v) {
    if (v >= this.top) return SCALE_STEPS - 1;
    if (v <= 0) return 0;
    const below = Math.floor(2 * Math.log10(this.top / v) + 1e-9);
    return Math.max(0, SCALE_STEPS - 1 - below);
  }

  // Each step that holds a value: [step, smallest, largest], coolest first.
  ranges() {
    const out = new Map();
    for (const v of this.values) {
      const k = this.step(v);
      const r = out.get(k);
      if (r) r[2] = v;
      else out.set(k, [k, v, v]);
    }
    return [...out.values()];
  }
}

// As graphviz_tb.model.costs.format_share: a box's share of the step's total.
export function formatShare(part, whole) {
  if (!(whole > 0)) return "–";
  const share = (100 * part) / whole;
  if (share >= 10 || share === 0) return `${Math.round(share)} %`;
  return share >= 0.1 ? `${share.toFixed(1)} %` : "<0.1 %";
}

function threeDigits(value, units, base) {
  let unit = 0;
  while (unit + 1 < units.length && Number(value.toPrecision(3)) >= base) {
    value /= base;
    unit += 1;
  }
  return `${Number(value.toPrecision(3))} ${units[unit]}`;
}

// As graphviz_tb.model.costs.format_time / format_bytes.
export function formatCost(metric, v) {
  return metric === "memory" ? threeDigits(v, ["B", "KiB", "MiB", "GiB", "TiB"], 1024)
    : threeDigits(v, ["ns", "µs", "ms", "s"], 1000);
}

export function fill(graph, i, mode, theme, themes, unique, cost, diffColors) {
  if (mode === "diff" && graph.diff && diffColors) return diffColors[theme][graph.diffStatus(i)];
  if (cost) {
    const v = cost.open.has(i) ? NaN : cost.totals[i];
    if (cost.open.has(i)) return unique[theme];
    if (Number.isNaN(v)) return cost.noRecord[theme];
    return cost.colors[theme][cost.scale.step(v)];
  }
  const key = colorKey(graph, i, mode);
  if (key) return key[0] === "templates" ? structureColor(graph, key[1], theme)
    : palette(key[1], theme);
  return graph.isGroup(i) ? unique[theme] : themes[theme].op;
}
