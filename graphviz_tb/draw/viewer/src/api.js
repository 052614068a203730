// `window.tbgraph`: the script interface to one graph's view, for tests, notebooks and other
// pages that drive the viewer (names, not member indices, go in and come out).

import { exportSvg, pngBlob } from "./exporter.js";
import { engine, viz } from "./layout.js";
import { replaceHash } from "./url-state.js";

export function viewerApi(app, graph, ui) {
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
    fills: (groupsOnly) => (app.scene ? Object.fromEntries(app.scene.boxes
      .filter((b) => !b.stub && (!groupsOnly || graph.isGroup(b.m)))
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
    saveNow: () => replaceHash("#" + ui.stateParams().toString()),
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

  return api;
}
