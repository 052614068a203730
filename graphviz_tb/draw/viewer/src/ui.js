// The viewer's user interface for one graph: the toolbar, the panels over the canvas and the
// status line, what the app's events change in them, and the actions of buttons and keys.
// Its search box, mouse and keyboard, and URL state are in search.js, input.js and
// url-state.js.

import { h } from "./dom.js";
import { cleanText } from "./draw.js";
import { counted } from "./graph.js";
import { Minimap, renderChanges, renderDetails, renderLegend, renderTopOps } from "./panels.js";
import { download, exportSvg, fileStem, pngBlob } from "./exporter.js";
import { SearchBox } from "./search.js";
import { bindCanvas, bindKeys } from "./input.js";
import { replaceHash, restoreState, stateParams } from "./url-state.js";

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

export class UI {
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
    this.searchBox = new SearchBox(app, (i) => this.jumpTo(i));
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
      this.searchBox.element,
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
    bindCanvas(this);
    bindKeys(this);
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
      `${(g.n - 1).toLocaleString("en-US")} ${g.unit}s and groups in all`];
    if (app.trace) {
      const ops = app.trace.count;
      parts.push(`trace ${app.trace.dir === "in" ? "inputs" : "outputs"} of ` +
        `${cleanText(g.name[app.trace.root], 80)}: ${counted(ops, g.unit)}`);
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

  // ----------------------------------------------------------------------- URL state

  stateParams() {
    return stateParams(this);
  }

  saveHash() {
    if (this.restoring || !this.app.ready) return;
    clearTimeout(this.hashTimer);
    this.hashTimer = setTimeout(() => {
      const text = "#" + this.stateParams().toString();
      if (text === location.hash) return;
      replaceHash(text);
    }, 250);
  }

  // Restore the view a link (or a state kept while another graph was shown) describes.
  restoreHash(raw = location.hash.replace(/^#/, "")) {
    return restoreState(this, raw);
  }
}
