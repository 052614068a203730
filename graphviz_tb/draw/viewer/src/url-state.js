// The view's state in the URL's hash, so a link (or a graph shown again in a page of several)
// opens the same view: what differs from the file's defaults, written and read back for a UI
// (see ui.js).

// Set the hash without a new history entry.
export function replaceHash(text) {
  try {
    history.replaceState(null, "", text);
  } catch {
    // Some embeddings (sandboxed iframes) refuse; the view still works.
  }
}

// The hash holds what differs from the file's defaults: x=opened, c=closed groups,
// s=selection, t=trace direction, nc=no control edges in the trace, v=zoom,x,y (world),
// color, theme, aux.
export function stateParams(ui) {
  const app = ui.app;
  const g = app.g;
  const p = new URLSearchParams();
  if (ui.shell.key !== undefined) p.set("graph", ui.shell.key);
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

// Restore the view a hash (`raw`, without its "#") describes; false when it describes none.
export async function restoreState(ui, raw) {
  const app = ui.app;
  const g = app.g;
  const p = new URLSearchParams(raw);
  p.delete("graph");
  if (!p.toString()) return false;
  ui.restoring = true;
  try {
    const step = app.g.costSteps().findIndex((st) => st.name === p.get("step"));
    if (step >= 0) {
      app.step = step;
      ui.stepSelect.value = String(step);
    }
    const color = p.get("color");
    if (color && ui.modes.some(([m]) => m === color)) {
      app.colorBy = color;
      ui.colorSelect.value = color;
    }
    const theme = p.get("theme");
    if (theme === "dark" || theme === "light") {
      app.theme = theme;
      document.documentElement.setAttribute("data-theme", theme);
    }
    if (p.get("nc") === "1") {
      app.traceControl = false;
      ui.controlBox.checked = false;
    }
    const aux = p.get("aux");
    if (aux === "0" || aux === "1") {
      await app.setAux(aux === "1");
      ui.auxBox.checked = app.layouts.aux;
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
    else app.firstView();
    return true;
  } finally {
    ui.restoring = false;
  }
}
