// The viewer's mouse and keyboard: zoom and pan, clicks and double-clicks on the canvas, and
// the keyboard shortcuts (listed in the help panel).  Each binds to a UI (see ui.js).

// How long a click waits for a second one before it selects.
const DOUBLE_CLICK_MS = 250;

// Wheel to zoom, drag to pan, click to select (or to follow a stub to what it stands for),
// double-click or a group's control to open or close it.
export function bindCanvas(ui) {
  const app = ui.app;
  const svg = ui.svg;
  let drag = null;
  let suppressClick = false;
  let pendingSelect = 0;
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
  }, { signal: ui.signal });
  window.addEventListener("pointerup", () => {
    if (drag && drag.moved) suppressClick = true;
    drag = null;
    svg.classList.remove("panning");
  }, { signal: ui.signal });
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
      ui.jumpTo(+stub.getAttribute("data-stub"));
      return;
    }
    clearTimeout(pendingSelect);
    if (node) {
      // Selected once a double-click can no longer follow: the details panel it opens would
      // otherwise cover a box near the right edge before the second click lands on it.
      const i = +node.getAttribute("data-i");
      if (ev.detail <= 1) pendingSelect = setTimeout(() => app.select(i), DOUBLE_CLICK_MS);
    } else {
      app.setTrace(-1);
      app.select(-1);
    }
  });
  svg.addEventListener("dblclick", (ev) => {
    const node = ev.target.closest("[data-i]");
    if (!node || ev.target.closest(".ctl")) return;
    clearTimeout(pendingSelect);
    const i = +node.getAttribute("data-i");
    if (app.g.isGroup(i)) app.toggle(i).then(() => app.select(i));
  });
  window.addEventListener("resize", () => ui.minimap.schedule(), { signal: ui.signal });
}

// The keyboard shortcuts, anywhere but in a text field or a menu.
export function bindKeys(ui) {
  const app = ui.app;
  document.addEventListener("keydown", (ev) => {
    const t = ev.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA")) {
      return;
    }
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const k = ev.key;
    if (k === "/") {
      ev.preventDefault();
      ui.searchBox.focus();
    } else if (k === "Escape") {
      ui.help.classList.add("hidden");
      if (app.trace) app.setTrace(-1);
      else app.select(-1);
    } else if (k === "+" || k === "=") {
      ui.expandSelection();
    } else if (k === "-" || k === "_") {
      ui.collapseSelection();
    } else if (k === "t") {
      ui.trace("in");
    } else if (k === "o" || k === "T") {
      ui.trace("out");
    } else if (k === "f") {
      app.fit();
    } else if (k === "d") {
      ui.toggleTheme();
    } else if (k === "?") {
      ui.help.classList.toggle("hidden");
    } else {
      return;
    }
    ev.preventDefault();
  }, { signal: ui.signal });
}
