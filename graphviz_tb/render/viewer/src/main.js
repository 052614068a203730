// The graphviz_tb viewer: boots from the embedded JSON, draws the precomputed view at once,
// and wires up the toolbar, panels, mouse, keyboard, URL state and `window.tbgraph`.

import { App } from "./app.js";
import { Graph } from "./graph.js";
import { h } from "./dom.js";
import { svgEl, cleanText } from "./draw.js";
import { Minimap, renderChanges, renderDetails, renderLegend, renderTopOps } from "./panels.js";
import { download, exportSvg, fileStem, pngBlob } from "./exporter.js";
import { engine, viz } from "./layout.js";

const DATA_VERSION = 2;
const COLOR_MODES = [["structure", "structure"], ["op", "op type"], ["device", "device"],
  ["dtype", "dtype"], ["compute-time", "compute time"], ["memory", "memory"],
  ["diff", "what changed"], ["none", "none"]];

// The colour modes this page offers: the cost modes only when it holds recorded costs (memory
// only when some step recorded memory).
function colorModes(graph) {
  const steps = graph.costSteps();
  return COLOR_MODES.filter(([m]) => (m === "compute-time" ? steps.length > 0
    : m === "memory" ? steps.some((st) => st.memory) : m === "diff" ? !!graph.diff : true));
}

class UI {
  // `shell` (a page of several graphs): { picker, key, signal } — the graph picker to show in
  // the toolbar, this graph's key in the URL, and the signal that ends this view's listeners.
  constructor(app, root, shell = {}) {
    this.app = app;
    app.ui = this;
    this.root = root;
    this.shell = shell;
    this.signal = shell.signal;
    this.hashTimer = 0;
    this.restoring = false;
    this.build();
    app.on((ev) => this.onEvent(ev));
  }

  build() {
    const app = this.app;
    const btn = (label, title, onclick, cls) => h("button", { type: "button", title, onclick,
      class: cls }, label);
    this.search = h("input", { type: "search", placeholder: "Search names or op types  /",
      "aria-label": "search", autocomplete: "off", spellcheck: "false" });
    this.completions = h("ul", { class: "completions", role: "listbox" });
    this.search.addEventListener("input", () => this.updateCompletions());
    this.search.addEventListener("keydown", (ev) => this.searchKey(ev));
    this.search.addEventListener("blur", () => setTimeout(() => this.hideCompletions(), 150));
    this.modes = colorModes(app.g);
    this.colorSelect = h("select", { title: "colour nodes by", "aria-label": "colour by",
      onchange: () => {
        app.setColorBy(this.colorSelect.value);
        this.saveHash();
      } },
    this.modes.map(([v, label]) => h("option", { value: v }, label)));
    this.colorSelect.value = app.colorBy;
    const steps = app.g.costSteps();
    this.stepSelect = h("select", { title: "the recorded step to show costs of",
      "aria-label": "step", class: steps.length > 1 ? "" : "hidden",
      onchange: () => app.setStep(+this.stepSelect.value) },
    steps.map((st, k) => h("option", { value: String(k) }, cleanText(st.name, 60))));
    if (app.step >= 0) this.stepSelect.value = String(app.step);
    this.controlBox = h("input", { type: "checkbox", checked: true,
      onchange: () => app.setTraceControl(this.controlBox.checked) });
    this.auxBox = h("input", { type: "checkbox", checked: app.layouts.aux,
      onchange: () => app.setAux(this.auxBox.checked).then(() => this.saveHash()) });
    // A diff's page: which version to show (the old hides what was added, the new what was
    // removed), and the list of changes.
    this.sideSelect = h("select", { title: "which version to show", "aria-label": "version",
      class: app.g.diff ? "" : "hidden", onchange: () => this.setSide(this.sideSelect.value) },
    [["both", "old + new"], ["old", "old"], ["new", "new"]].map(([v, label]) =>
      h("option", { value: v }, label)));
    this.traceIn = btn("⇡ inputs", "trace the selection's inputs (t)", () => this.trace("in"));
    this.traceOut = btn("⇣ outputs", "trace the selection's outputs (o)",
      () => this.trace("out"));
    const toolbar = h("header", { class: "toolbar" },
      this.shell.picker ? h("div", { class: "group" }, this.shell.picker)
        : h("div", { class: "title", title: app.options.title }, cleanText(app.options.title, 80)),
      h("div", { class: "search" }, this.search, this.completions),
      h("div", { class: "group" },
        btn("⤢", "fit to screen (f)", () => app.fit()),
        btn("+", "expand the selected group (+)", () => this.expandSelection()),
        btn("−", "collapse the selected group, or the group holding the selection (−)",
          () => this.collapseSelection())),
      h("div", { class: "group" }, h("span", { class: "label" }, "trace"), this.traceIn,
        this.traceOut, h("label", { title: "follow control edges when tracing" },
          this.controlBox, " control")),
      h("div", { class: "group" }, h("label", null, "colour ", this.colorSelect),
        this.stepSelect, this.sideSelect),
      h("div", { class: "group" }, h("label", {
        title: "move high-degree nodes (init, save, summaries …) to a side column" },
      this.auxBox, " aux. area")),
      h("div", { class: "group" },
        btn("SVG", "export the current view as SVG", () => this.exportSvg()),
        btn("PNG", "export the current view as PNG", () => this.exportPng())),
      h("div", { class: "group" },
        btn("◐", "light / dark theme (d)", () => this.toggleTheme()),
        btn("?", "keyboard shortcuts (?)", () => this.help.classList.toggle("hidden"))));
    this.svg = app.svg;
    this.details = h("aside", { class: "details hidden", "aria-label": "details" });
    this.legend = h("div", { class: "legend" });
    this.topops = h("nav", { class: "topops hidden", "aria-label": "top ops" });
    this.changes = h("nav", { class: "topops changes hidden", "aria-label": "changes" });
    this.minimapCanvas = h("canvas", { class: "minimap", title: "minimap: click to move" });
    this.toast = h("div", { class: "toast hidden", role: "status" });
    this.status = h("footer", { class: "status" });
    this.help = h("div", { class: "help hidden" }, h("h3", null, "Keyboard"), h("dl", null,
      [["/", "search"], ["Esc", "clear selection, trace, search"],
        ["+ / =", "expand the selection"], ["−", "collapse the selection (or its group)"],
        ["t / o", "trace inputs / outputs"], ["f", "fit to screen"], ["d", "dark theme"],
        ["double-click", "expand or collapse a group"], ["wheel / drag", "zoom / pan"]]
        .map(([k, v]) => [h("dt", null, k), h("dd", null, v)])));
    const main = h("main", null, this.svg, this.legend, this.topops, this.changes, this.details,
      this.minimapCanvas,
      this.toast, this.help);
    this.root.replaceChildren(toolbar, main, this.status);
    this.minimap = new Minimap(app, this.minimapCanvas);
    app.insetRight = () => (this.details.classList.contains("hidden") ? 0
      : this.details.getBoundingClientRect().width);
    // The panels over the canvas, in its coordinates (the minimap sized for this scene first).
    app.panels = () => {
      this.minimap.draw();
      const at = this.svg.getBoundingClientRect();
      return [this.legend, this.minimapCanvas, this.topops, this.changes, this.details]
        .map((e) => e.getBoundingClientRect()).filter((r) => r.width > 0 && r.height > 0)
        .map((r) => ({ left: r.left - at.left, right: r.right - at.left,
          top: r.top - at.top, bottom: r.bottom - at.top }));
    };
    if (!app.options.legend) this.legend.classList.add("hidden");
    this.bindCanvas();
    this.bindKeys();
  }

  // ----------------------------------------------------------------------- events from the app

  onEvent(ev) {
    const app = this.app;
    if (ev.type === "draw") {
      this.legend.replaceChildren(...renderLegend(app));
      this.topops.classList.toggle("hidden", !app.cost);
      if (app.cost) this.topops.replaceChildren(...renderTopOps(app));
      this.changes.classList.toggle("hidden", !app.g.diff);
      if (app.g.diff) this.changes.replaceChildren(...renderChanges(app));
      this.colorSelect.value = app.colorBy;
      this.minimap.schedule();
      this.updateStatus();
      if (app.selected >= 0) this.showDetails(app.selected);
    } else if (ev.type === "step") {
      this.stepSelect.value = String(ev.k);
      this.saveHash();
    } else if (ev.type === "view") {
      this.minimap.schedule();
      this.saveHash();
    } else if (ev.type === "select") {
      this.showDetails(ev.i);
      this.saveHash();
    } else if (ev.type === "trace") {
      this.traceIn.classList.toggle("on", !!app.trace && app.trace.dir === "in");
      this.traceOut.classList.toggle("on", !!app.trace && app.trace.dir === "out");
      this.updateStatus();
      this.saveHash();
    } else if (ev.type === "layout") {
      this.updateStatus();
      this.saveHash();
    } else if (ev.type === "busy") {
      this.svg.classList.toggle("busy", ev.on);
      clearTimeout(this.busyTimer);
      if (ev.on) {
        this.busyTimer = setTimeout(() => { this.status.textContent = "laying out …"; }, 250);
      } else {
        this.updateStatus();
      }
    } else if (ev.type === "error") {
      this.message(ev.message, true);
    }
  }

  updateStatus() {
    const app = this.app;
    const g = app.g;
    const drawn = app.scene ? app.scene.boxes.filter((b) => !b.stub).length : 0;
    const parts = [`${drawn.toLocaleString("en-US")} nodes drawn`,
      `${(g.n - 1).toLocaleString("en-US")} ops and groups in all`];
    if (app.trace) {
      const ops = app.trace.count;
      parts.push(`trace ${app.trace.dir === "in" ? "inputs" : "outputs"} of ` +
        `${cleanText(g.name[app.trace.root], 80)}: ${ops.toLocaleString("en-US")} ops`);
    }
    if (app.lastLayoutMs) parts.push(`last layout ${Math.round(app.lastLayoutMs)} ms`);
    this.status.textContent = parts.join(" · ");
  }

  message(text, isError) {
    this.toast.textContent = text;
    this.toast.classList.toggle("error", !!isError);
    this.toast.classList.remove("hidden");
    clearTimeout(this.toastTimer);
    this.toastTimer = setTimeout(() => this.toast.classList.add("hidden"), 7000);
  }

  showDetails(i) {
    if (i < 0) {
      this.details.classList.add("hidden");
      this.details.replaceChildren();
      return;
    }
    this.details.replaceChildren(...renderDetails(this.app, i));
    this.details.classList.remove("hidden");
  }

  // ----------------------------------------------------------------------- actions

  async jumpTo(i) {
    const app = this.app;
    if (i < 0) return;
    await app.reveal(i);
    app.select(i); // shows the details panel first, so focusing leaves room for it
    app.focusMember(i);
  }

  // Show both versions of a diff, or only the old or the new one (what the other version
  // alone has is hidden, edges included).
  setSide(side) {
    this.side = side;
    this.sideSelect.value = side;
    this.svg.classList.toggle("side-old", side === "old");
    this.svg.classList.toggle("side-new", side === "new");
  }

  trace(dir) {
    const app = this.app;
    if (app.selected < 0) {
      this.message("Select a node first, then trace its inputs or outputs.");
      return;
    }
    if (app.trace && app.trace.dir === dir && app.trace.root === app.selected) {
      app.setTrace(-1);
    } else {
      app.setTrace(app.selected, dir);
    }
  }

  expandSelection() {
    const app = this.app;
    const i = app.selected;
    if (i >= 0 && app.g.isGroup(i)) app.expand(i);
  }

  collapseSelection() {
    const app = this.app;
    const g = app.g;
    let i = app.selected;
    if (i < 0) return;
    if (!app.isOpen(i)) i = g.parent[i];
    if (i > 0) {
      app.collapse(i).then(() => app.select(i));
    }
  }

  toggleTheme() {
    const app = this.app;
    app.setTheme(app.theme === "dark" ? "light" : "dark");
    this.saveHash();
  }

  exportSvg() {
    const { text } = exportSvg(this.app);
    download(new Blob([text], { type: "image/svg+xml" }), `${fileStem(this.app)}.svg`);
  }

  async exportPng() {
    try {
      download(await pngBlob(this.app), `${fileStem(this.app)}.png`);
    } catch (err) {
      this.message(String(err.message || err), true);
    }
  }

  // ----------------------------------------------------------------------- search box

  updateCompletions() {
    clearTimeout(this.searchTimer);
    this.searchTimer = setTimeout(() => {
      const app = this.app;
      const g = app.g;
      const hits = app.search(this.search.value, 30);
      this.active = hits.length ? 0 : -1;
      this.hits = hits;
      this.completions.replaceChildren(...hits.map((i, k) => h("li", {
        role: "option", class: k === 0 ? "active" : "", title: g.name[i],
        onmousedown: (ev) => {
          ev.preventDefault();
          this.choose(i);
        },
      }, h("span", { class: "c-label" }, cleanText(g.label[i], 60)),
      h("span", { class: "c-kind" }, g.isGroup(i) ? g.kindName(i) : g.opType(i)),
      h("span", { class: "c-name" }, cleanText(g.name[i], 160)))));
      this.completions.classList.toggle("open", hits.length > 0);
    }, 60);
  }

  hideCompletions() {
    this.completions.classList.remove("open");
  }

  searchKey(ev) {
    const items = this.completions.children;
    if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
      ev.preventDefault();
      if (!items.length) return;
      items[this.active]?.classList.remove("active");
      this.active = (this.active + (ev.key === "ArrowDown" ? 1 : -1) + items.length) %
        items.length;
      items[this.active].classList.add("active");
      items[this.active].scrollIntoView({ block: "nearest" });
    } else if (ev.key === "Enter") {
      ev.preventDefault();
      clearTimeout(this.searchTimer);
      const hits = this.hits && this.hits.length ? this.hits : this.app.search(this.search.value, 1);
      const i = hits[Math.max(0, this.active || 0)];
      if (i !== undefined) this.choose(i);
    } else if (ev.key === "Escape") {
      this.search.value = "";
      this.hideCompletions();
      this.search.blur();
    }
  }

  choose(i) {
    this.hideCompletions();
    this.search.blur();
    this.jumpTo(i);
  }

  // ----------------------------------------------------------------------- mouse

  bindCanvas() {
    const app = this.app;
    const svg = this.svg;
    let drag = null;
    let suppressClick = false;
    svg.addEventListener("wheel", (ev) => {
      ev.preventDefault();
      const r = svg.getBoundingClientRect();
      const unit = ev.deltaMode === 1 ? 16 : ev.deltaMode === 2 ? 400 : 1;
      app.zoomAt(Math.exp(-ev.deltaY * unit * 0.0016), ev.clientX - r.left, ev.clientY - r.top);
    }, { passive: false });
    svg.addEventListener("pointerdown", (ev) => {
      if (ev.button !== 0) return;
      drag = { x: ev.clientX, y: ev.clientY, tx: app.view.tx, ty: app.view.ty, moved: false };
    });
    window.addEventListener("pointermove", (ev) => {
      if (!drag) return;
      const dx = ev.clientX - drag.x;
      const dy = ev.clientY - drag.y;
      if (!drag.moved && Math.hypot(dx, dy) < 4) return;
      drag.moved = true;
      svg.classList.add("panning");
      app.setView(app.view.k, drag.tx + dx, drag.ty + dy);
    }, { signal: this.signal });
    window.addEventListener("pointerup", () => {
      if (drag && drag.moved) suppressClick = true;
      drag = null;
      svg.classList.remove("panning");
    }, { signal: this.signal });
    svg.addEventListener("click", (ev) => {
      if (suppressClick) {
        suppressClick = false;
        return;
      }
      const ctl = ev.target.closest(".ctl");
      const node = ev.target.closest("[data-i]");
      if (ctl && node) {
        const i = +node.getAttribute("data-i");
        app.toggle(i).then(() => app.select(i));
        return;
      }
      const stub = ev.target.closest("[data-stub]");
      if (stub) {
        this.jumpTo(+stub.getAttribute("data-stub"));
        return;
      }
      if (node) app.select(+node.getAttribute("data-i"));
      else {
        app.setTrace(-1);
        app.select(-1);
      }
    });
    svg.addEventListener("dblclick", (ev) => {
      const node = ev.target.closest("[data-i]");
      if (!node || ev.target.closest(".ctl")) return;
      const i = +node.getAttribute("data-i");
      if (app.g.isGroup(i)) app.toggle(i).then(() => app.select(i));
    });
    window.addEventListener("resize", () => this.minimap.schedule(), { signal: this.signal });
  }

  // ----------------------------------------------------------------------- keyboard

  bindKeys() {
    const app = this.app;
    document.addEventListener("keydown", (ev) => {
      const t = ev.target;
      if (t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA")) {
        return;
      }
      if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
      const k = ev.key;
      if (k === "/") {
        ev.preventDefault();
        this.search.focus();
        this.search.select();
      } else if (k === "Escape") {
        this.help.classList.add("hidden");
        if (app.trace) app.setTrace(-1);
        else app.select(-1);
      } else if (k === "+" || k === "=") {
        this.expandSelection();
      } else if (k === "-" || k === "_") {
        this.collapseSelection();
      } else if (k === "t") {
        this.trace("in");
      } else if (k === "o" || k === "T") {
        this.trace("out");
      } else if (k === "f") {
        app.fit();
      } else if (k === "d") {
        this.toggleTheme();
      } else if (k === "?") {
        this.help.classList.toggle("hidden");
      } else {
        return;
      }
      ev.preventDefault();
    }, { signal: this.signal });
  }

  // ----------------------------------------------------------------------- URL state

  // The hash holds what differs from the file's defaults: x=opened, c=closed groups,
  // s=selection, t=trace direction, nc=no control edges in the trace, v=zoom,x,y (world),
  // color, theme, aux.
  stateParams() {
    const app = this.app;
    const g = app.g;
    const p = new URLSearchParams();
    if (this.shell.key !== undefined) p.set("graph", this.shell.key);
    const open = new Set(app.scene ? app.openGroups() : []);
    for (const x of [...open].sort((a, b) => a - b)) {
      if (!app.defaultExpanded.has(x)) p.append("x", g.name[x]);
    }
    for (const x of [...app.defaultExpanded].sort((a, b) => a - b)) {
      if (x !== 0 && !open.has(x) && app.isOpenParent(x)) p.append("c", g.name[x]);
    }
    if (app.selected >= 0) p.set("s", g.name[app.selected]);
    if (app.trace) p.set("t", app.trace.dir);
    if (!app.traceControl) p.set("nc", "1");
    if (app.colorBy !== app.options.colorBy) p.set("color", app.colorBy);
    if (app.step >= 0 && app.step !== app.data.costs.chosen) {
      p.set("step", app.g.costSteps()[app.step].name);
    }
    if (app.theme !== app.options.theme) p.set("theme", app.theme);
    if (app.layouts.aux !== app.options.aux) p.set("aux", app.layouts.aux ? "1" : "0");
    const [W, H] = app.size();
    const { k, tx, ty } = app.view;
    const cx = (W / 2 - tx) / k;
    const cy = (ty - H / 2) / k;
    p.set("v", [k.toFixed(4), cx.toFixed(1), cy.toFixed(1)].join(","));
    return p;
  }

  saveHash() {
    if (this.restoring || !this.app.ready) return;
    clearTimeout(this.hashTimer);
    this.hashTimer = setTimeout(() => {
      const text = "#" + this.stateParams().toString();
      if (text === location.hash) return;
      try {
        history.replaceState(null, "", text);
      } catch {
        // Some embeddings (sandboxed iframes) refuse; the view still works.
      }
    }, 250);
  }

  // Restore the view a link (or a state kept while another graph was shown) describes.
  async restoreHash(raw = location.hash.replace(/^#/, "")) {
    const app = this.app;
    const g = app.g;
    const p = new URLSearchParams(raw);
    p.delete("graph");
    if (!p.toString()) return false;
    this.restoring = true;
    try {
      const step = app.g.costSteps().findIndex((st) => st.name === p.get("step"));
      if (step >= 0) {
        app.step = step;
        this.stepSelect.value = String(step);
      }
      const color = p.get("color");
      if (color && this.modes.some(([m]) => m === color)) {
        app.colorBy = color;
        this.colorSelect.value = color;
      }
      const theme = p.get("theme");
      if (theme === "dark" || theme === "light") {
        app.theme = theme;
        document.documentElement.setAttribute("data-theme", theme);
      }
      if (p.get("nc") === "1") {
        app.traceControl = false;
        this.controlBox.checked = false;
      }
      const aux = p.get("aux");
      if (aux === "0" || aux === "1") {
        await app.setAux(aux === "1");
        this.auxBox.checked = app.layouts.aux;
      }
      const open = new Set(app.defaultExpanded);
      for (const name of p.getAll("c")) open.delete(g.lookup(name));
      for (const name of p.getAll("x")) {
        const i = g.lookup(name);
        if (i > 0 && g.isGroup(i)) open.add(i);
      }
      open.delete(-1);
      await app.setExpanded(open);
      app.redraw();
      const s = g.lookup(p.get("s") || "");
      const t = p.get("t");
      if (s > 0 && (t === "in" || t === "out")) app.setTrace(s, t);
      else if (s > 0) app.select(s);
      const v = (p.get("v") || "").split(",").map(Number);
      if (v.length === 3 && v.every(Number.isFinite) && v[0] > 0) app.centerOn(v[1], v[2], v[0]);
      else app.fit();
      return true;
    } finally {
      this.restoring = false;
    }
  }
}

function fail(root, message) {
  root.replaceChildren(h("div", { class: "fatal" }, message));
  window.tbgraph = { ready: false, error: message };
}

async function boot() {
  const root = document.getElementById("app");
  const holder = document.getElementById("tbgraph-data");
  let data;
  try {
    data = JSON.parse(holder.textContent);
  } catch (err) {
    fail(root, `The embedded graph could not be read: ${err.message}`);
    return;
  }
  holder.textContent = ""; // free the text: the parsed copy is all we need
  if (data.version !== DATA_VERSION) {
    fail(root, `This page holds data of version ${data.version}; the viewer reads ${DATA_VERSION}.`);
    return;
  }
  // Graphviz's worker, gzipped and base64-encoded: decoded when a layout is first needed.
  const workerData = document.getElementById("tbgraph-worker");
  engine.source = () => (workerData ? workerData.textContent.trim() : "");
  if (data.pages) await showPages(root, data);
  else await show(root, data);
}

// A page holding every graph of a logdir: a picker switches between them without a reload,
// and each graph keeps its own view (its URL state) while another is shown.
async function showPages(root, data) {
  const pages = data.pages;
  const saved = new Map(); // page index -> its view state, kept while another is shown
  const linked = new URLSearchParams(location.hash.replace(/^#/, "")).get("graph");
  let current = pages.findIndex((pg) => pg.name === linked);
  if (current < 0) current = data.first || 0;
  const runs = [...new Set(pages.map((pg) => pg.run))];
  const picker = h("select", { title: "the graph to show (run · step · what was logged)",
    "aria-label": "graph" }, runs.map((run) => h("optgroup", { label: `run ${run}` },
    pages.map((pg, k) => [pg, k]).filter(([pg]) => pg.run === run)
      .map(([pg, k]) => h("option", { value: String(k) }, cleanText(pg.name, 90))))));
  let controller = null;
  const open = async (k, state) => {
    if (controller) {
      saved.set(current, window.tbgraph.state());
      controller.abort();
    }
    current = k;
    picker.value = String(k);
    controller = new AbortController();
    const shell = { picker, key: pages[k].name, signal: controller.signal };
    await show(root, data.graphs[pages[k].graph], shell, state);
    const api = window.tbgraph;
    api.pages = () => pages.map((pg) => ({ run: pg.run, name: pg.name }));
    api.page = () => pages[current].name;
    api.showPage = (name) => {
      const j = pages.findIndex((pg) => pg.name === name);
      return j < 0 ? Promise.resolve(false) : open(j, saved.get(j) || "").then(() => true);
    };
  };
  picker.addEventListener("change", () => {
    const k = +picker.value;
    open(k, saved.get(k) || "").then(() => window.tbgraph.saveNow());
  });
  await open(current, location.hash.replace(/^#/, ""));
}

// Show one graph's data in `root`: build its view, restore `state` (a link's hash), and set
// `window.tbgraph` to drive it.
async function show(root, data, shell = {}, state = location.hash.replace(/^#/, "")) {
  const graph = new Graph(data);
  const svg = svgEl("svg", { class: "canvas", role: "img", "aria-label": "graph" });
  const app = new App(graph, data, svg);
  app.ready = false;
  const ui = new UI(app, root, shell);
  document.title = data.options.title;
  const api = {
    ready: false,
    visibleNodes: () => app.visibleNodes(),
    expand: async (name) => app.expand(graph.lookup(name)),
    collapse: async (name) => app.collapse(graph.lookup(name)),
    toggle: async (name) => app.toggle(graph.lookup(name)),
    select: async (name) => {
      const i = graph.lookup(name);
      if (i <= 0) return false;
      await ui.jumpTo(i);
      return true;
    },
    traceInputs: (name) => traceApi(name, "in"),
    traceOutputs: (name) => traceApi(name, "out"),
    clearTrace: () => app.setTrace(-1),
    setTraceControl: (on) => app.setTraceControl(!!on),
    search: (query) => app.search(query).map((i) => graph.name[i]),
    setColorBy: (mode) => {
      ui.colorSelect.value = mode;
      app.setColorBy(mode);
      ui.saveHash();
    },
    colorModes: () => ui.modes.map(([m]) => m),
    // Recorded steps by name; choose one by name or index.
    steps: () => graph.costSteps().map((st) => st.name),
    step: () => (app.step >= 0 ? graph.costSteps()[app.step].name : null),
    setStep: (which) => {
      const k = typeof which === "number" ? which
        : graph.costSteps().findIndex((st) => st.name === which);
      app.setStep(k);
      return k >= 0;
    },
    topOps: () => app.topOps().map((i) => graph.name[i]),
    changes: () => (graph.diff ? graph.diff.changes.map((i) => graph.name[i]) : []),
    diffStatus: (name) => graph.diffStatus(graph.lookup(name)),
    setSide: (side) => ui.setSide(side),
    fills: () => (app.scene ? Object.fromEntries(app.scene.boxes.filter((b) => !b.stub)
      .map((b) => [graph.name[b.m], app.els.boxEls[app.scene.boxes.indexOf(b)]
        .querySelector(".shape").getAttribute("fill")])) : {}),
    setTheme: (theme) => app.setTheme(theme),
    setAux: (on) => app.setAux(!!on),
    fit: () => app.fit(),
    boxes: () => (app.scene ? app.scene.boxes.filter((b) => !b.stub).map((b) => ({
      name: graph.name[b.m], parent: b.group === 0 ? "" : graph.name[b.group],
      x: b.x, y: b.y, w: b.w, h: b.h, open: b.open })) : []),
    exportSvg: () => exportSvg(app).text,
    exportPng: () => pngBlob(app).then((blob) => blob.size),
    // The DOT the page gives Graphviz for an open group now (the same text as Python's).
    dot: (name) => {
      const i = name === "" ? 0 : graph.lookup(name);
      return i >= 0 && graph.isGroup(i) ? app.layouts.prepare(i, (c) => app.isOpen(c)).dot
        : null;
    },
    state: () => ui.stateParams().toString(),
    saveNow: () => {
      const text = "#" + ui.stateParams().toString();
      try {
        history.replaceState(null, "", text);
      } catch {
        // Some embeddings (sandboxed iframes) refuse; the view still works.
      }
    },
    layoutStats: () => ({ ...app.layouts.stats, lastMs: app.lastLayoutMs }),
    warmUp: () => viz().then(() => true),
    setLayoutTimeout: (ms) => {
      engine.timeoutMs = Math.max(1, +ms || 20000);
    },
  };

  async function traceApi(name, dir) {
    const i = graph.lookup(name);
    if (i <= 0) return [];
    await app.busy;
    if (!app.isDrawn(i)) await app.reveal(i);
    app.setTrace(i, dir);
    return app.highlighted();
  }

  window.tbgraph = api;
  app.redraw();
  app.fit();
  let restored = false;
  try {
    restored = await ui.restoreHash(state);
  } catch (err) {
    ui.message(`Could not restore the view from the link: ${err.message || err}`, true);
  }
  if (!restored) app.fit();
  app.ready = true;
  api.ready = true;
  document.documentElement.setAttribute("data-ready", "true");
  for (const w of data.warnings || []) console.warn(`tbgraph: ${w}`);
  // Index the names (left out of the start-up) while the person looks, so the first lookup of
  // a click, a search or the API is quick.
  whenIdle(() => graph.lookup(""), 1000);
  if (!warming) {
    // Compile the layout engine while the person looks, so the first expand is quick.
    warming = true;
    whenIdle(() => viz().catch((err) => ui.message(`Layout engine unavailable: ${err}`, true)),
      1500);
  }
}

let warming = false;

function whenIdle(fn, timeout) {
  if ("requestIdleCallback" in window) requestIdleCallback(fn, { timeout });
  else setTimeout(fn, 200);
}

boot();
