// The tbgraph tab: the ES module TensorBoard runs in the tab's iframe (its `render()`), from
// data/plugin_entry.html, whose base is data/plugin/tbgraph/ (so "runs" is our route).
//
// A bar of pickers (run, graph, "compare with" another run) over the viewer page of the
// chosen graph (or diff), which the server draws on first request: while it does, the tab
// polls `progress` and shows how far it got, then opens the page in an inner iframe.  The tab
// follows TensorBoard's light and dark themes, and offers the page as a standalone HTML file
// (the viewer's own toolbar exports the current view as SVG or PNG).  Bundled by
// scripts/build-viewer.mjs into graphviz_tb/tbplugin/tab.js; nothing is loaded from elsewhere.

import { h } from "../../draw/viewer/src/dom.js";

const CSS = `
:root { --bg: #ffffff; --fg: #212121; --muted: #666; --panel: #f5f6f8; --border: #d6d8dc;
  --accent: #f57c00; --input: #ffffff; color-scheme: light;
  font: 13px/1.35 Roboto, system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; }
[data-theme="dark"] { --bg: #1e1f22; --fg: #e6e6e6; --muted: #9a9a9a; --panel: #26282c;
  --border: #3a3d42; --accent: #ff9d3d; --input: #2b2d31; color-scheme: dark; }
* { box-sizing: border-box; }
html, body { margin: 0; height: 100%; background: var(--bg); color: var(--fg); }
body { display: flex; flex-direction: column; height: 100vh; overflow: hidden; }
.bar { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 14px; padding: 6px 12px;
  background: var(--panel); border-bottom: 1px solid var(--border); flex: none; }
.bar label { display: inline-flex; align-items: center; gap: 4px; color: var(--muted); }
.bar select { font: inherit; color: var(--fg); background: var(--input); max-width: 46ch;
  border: 1px solid var(--border); border-radius: 4px; padding: 3px 6px; min-height: 26px; }
.bar a { color: var(--accent); text-decoration: none; border: 1px solid var(--border);
  border-radius: 4px; padding: 3px 8px; background: var(--input); }
.bar a[aria-disabled="true"] { pointer-events: none; opacity: 0.5; }
.bar .brand { font-weight: 600; color: var(--fg); }
.bar .note { color: var(--muted); flex: 1 1 auto; text-align: right; white-space: nowrap;
  overflow: hidden; text-overflow: ellipsis; }
main { position: relative; flex: 1 1 auto; min-height: 0; }
main iframe { position: absolute; inset: 0; width: 100%; height: 100%; border: 0;
  background: var(--bg); }
.cover { position: absolute; inset: 0; display: flex; align-items: center;
  justify-content: center; background: var(--bg); }
.cover.hidden { display: none; }
.box { max-width: 60ch; padding: 18px 22px; border: 1px solid var(--border); border-radius: 6px;
  background: var(--panel); }
.box h2 { margin: 0 0 8px; font-size: 15px; }
.box p { margin: 6px 0; color: var(--muted); overflow-wrap: anywhere; }
.box.error h2 { color: #c62828; }
[data-theme="dark"] .box.error h2 { color: #ef7b7b; }
progress { width: 100%; height: 10px; accent-color: var(--accent); }
`;

const POLL_MS = 250;
const RUNS_EVERY_MS = 30000;

// TensorBoard's theme: its page's body has the class "dark-mode" in the dark theme (the
// tab's iframe is of the same origin); outside TensorBoard, the browser's preference.
function hostBody() {
  try {
    return window.parent !== window ? window.parent.document.body : null;
  } catch {
    return null;
  }
}

function hostTheme() {
  const body = hostBody();
  if (body) return body.classList.contains("dark-mode") ? "dark" : "light";
  return window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches
    ? "dark" : "light";
}

function stage(status) {
  if (status.stage === "laying out" && status.total) {
    return `laying out: ${status.done.toLocaleString("en-US")} of ` +
      `${status.total.toLocaleString("en-US")} groups`;
  }
  return status.stage;
}

async function json(url) {
  const response = await fetch(url, { cache: "no-store" });
  const text = await response.text();
  if (!response.ok) throw new Error(text.trim() || `${response.status} ${response.statusText}`);
  return JSON.parse(text);
}

class Tab {
  constructor(root) {
    this.runs = [];
    this.listing = Promise.resolve(); // the run listing asked for last (see listRuns)
    this.token = 0;
    this.shown = ""; // the page in the viewer's frame now (route and query)
    this.theme = hostTheme();
    this.runSelect = h("select", { "aria-label": "run", title: "the run to show",
      onchange: () => this.chooseRun(this.runSelect.value) });
    this.graphSelect = h("select", { "aria-label": "graph",
      title: "the graph of the run (step · what was logged)", onchange: () => this.show() });
    this.againstSelect = h("select", { "aria-label": "compare with",
      title: "draw what changed from another run's graph to this one",
      onchange: () => this.show() });
    this.download = h("a", { download: "", title: "this page as one standalone HTML file",
      "aria-disabled": "true" }, "⤓ HTML");
    this.note = h("span", { class: "note" });
    this.frame = h("iframe", { title: "graph", name: "tbgraph-view" });
    this.cover = h("div", { class: "cover" });
    root.replaceChildren(
      h("header", { class: "bar" }, h("span", { class: "brand" }, "tbgraph"),
        h("label", null, "run ", this.runSelect), h("label", null, "graph ", this.graphSelect),
        h("label", null, "compare with ", this.againstSelect), this.download, this.note),
      h("main", null, this.frame, this.cover));
    this.runSelect.addEventListener("focus", () => this.refresh());
    this.applyTheme();
    const body = hostBody();
    if (body) {
      new MutationObserver(() => this.applyTheme()).observe(body,
        { attributes: true, attributeFilter: ["class"] });
    }
    setInterval(() => {
      if (document.visibilityState === "visible") this.refresh();
    }, RUNS_EVERY_MS);
    window.tbgraphTab = this; // for scripts and tests: the tab's state and actions
  }

  applyTheme() {
    this.theme = hostTheme();
    document.documentElement.setAttribute("data-theme", this.theme);
    const viewer = this.viewer();
    if (viewer && viewer.ready) viewer.setTheme(this.theme);
  }

  viewer() {
    try {
      return this.frame.contentWindow ? this.frame.contentWindow.tbgraph : null;
    } catch {
      return null;
    }
  }

  // The runs, asked for one request at a time.  Two listings in flight at once (the timer's
  // and the picker's focus, say) may be served in either order while TensorBoard is reading a
  // new run, so the answer to the one asked last could hold the older list, and a run just
  // listed would leave the picker.  Each request leaves once the one before is answered, so
  // each answer is at least as new as the one shown.
  listRuns() {
    const answer = this.listing.then(() => json("runs"));
    this.listing = answer.catch(() => {});
    return answer.then((body) => body.runs);
  }

  async start() {
    try {
      this.runs = await this.listRuns();
    } catch (err) {
      this.message("error", "The runs could not be listed", String(err.message || err));
      return;
    }
    const first = this.runs.find((r) => r.graphs.length);
    if (!first) {
      this.message("", "No graphs yet", "No run of this logdir has logged a graph or run " +
        "metadata (tf.summary.trace_export, Keras' TensorBoard callback, " +
        "FileWriter.add_graph, PyTorch's SummaryWriter.add_graph). Runs appear on reload.");
      return;
    }
    this.fillRuns();
    await this.chooseRun(first.run);
  }

  // The runs again: a run written since appears (the first one is shown if none was), a run's
  // new graphs too, and the pickers keep their choice.  Unchanged, the pickers are left alone
  // (one may be open).  Asked for by the timer, the picker's focus and scripts.
  async refresh() {
    let runs;
    try {
      runs = await this.listRuns();
    } catch {
      return;
    }
    const key = (list) => JSON.stringify(list.map((r) => [r.run, r.graphs.map((g) => g.name),
      r.costs.length]));
    if (key(runs) === key(this.runs)) return;
    this.runs = runs;
    const [run, graph, against] = [this.runSelect.value, this.graphSelect.value,
      this.againstSelect.value];
    this.fillRuns();
    if (!run) {
      const first = runs.find((r) => r.graphs.length);
      if (first) await this.chooseRun(first.run);
      return;
    }
    this.runSelect.value = run;
    this.fillGraphs(run);
    this.graphSelect.value = graph;
    this.fillAgainst(run);
    this.againstSelect.value = against;
  }

  fillRuns() {
    this.runSelect.replaceChildren(...this.runs.filter((r) => r.graphs.length).map((r) =>
      h("option", { value: r.run }, `${r.run} (${r.graphs.length} graph` +
        `${r.graphs.length === 1 ? "" : "s"}${r.costs.length ? ", costs" : ""})`)));
  }

  fillAgainst(run) {
    this.againstSelect.replaceChildren(h("option", { value: "" }, "—"),
      ...this.runs.filter((r) => r.graphs.length && r.run !== run)
        .map((r) => h("option", { value: r.run }, r.run)));
  }

  fillGraphs(run) {
    const entry = this.runs.find((r) => r.run === run);
    const prefix = `${run} · `;
    this.graphSelect.replaceChildren(...(entry ? entry.graphs : []).map((g) => h("option",
      { value: String(g.index) }, g.name.startsWith(prefix) ? g.name.slice(prefix.length)
        : g.name)));
  }

  async chooseRun(run) {
    const entry = this.runs.find((r) => r.run === run);
    if (!entry) return;
    this.runSelect.value = run;
    this.fillGraphs(run);
    // The graph shown first: the latest op graph (a conceptual graph when there is none).
    const ops = entry.graphs.filter((g) => g.kind === "op");
    const pick = (ops.length ? ops : entry.graphs).reduce((a, b) =>
      ((b.wall_time || 0) >= (a.wall_time || 0) ? b : a));
    this.graphSelect.value = String(pick.index);
    this.fillAgainst(run);
    this.note.textContent = entry.costs.length
      ? `${entry.costs.length} recorded step${entry.costs.length === 1 ? "" : "s"}: ` +
        "colour by compute time or memory in the viewer" : "";
    await this.show();
  }

  // What is chosen now, as the query of view/diff/progress.
  query() {
    const q = new URLSearchParams({ run: this.runSelect.value, graph: this.graphSelect.value });
    if (this.againstSelect.value) q.set("against", this.againstSelect.value);
    return q;
  }

  // Draw the chosen graph (or diff): poll its render's progress, then open its page.
  async show() {
    const token = ++this.token;
    const q = this.query();
    const route = q.has("against") ? "diff" : "view";
    const viewer = this.viewer();
    if (`${route}?${q}` === this.shown && viewer && viewer.ready) {
      this.cover.classList.add("hidden"); // chosen again: it is there already
      return;
    }
    this.download.setAttribute("aria-disabled", "true");
    this.download.removeAttribute("href");
    this.message("", "Drawing the graph", "queued", true);
    let status;
    for (;;) {
      try {
        status = await json(`progress?${q}`);
      } catch (err) {
        if (token === this.token) this.message("error", "This graph cannot be drawn",
          String(err.message || err));
        return;
      }
      if (token !== this.token) return;
      if (status.state !== "rendering") break;
      this.message("", `Drawing ${status.title}`, `${stage(status)} · ${status.seconds} s`,
        true, status.total ? status.done / status.total : null);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    if (status.state === "failed") {
      this.message("error", "This graph cannot be drawn", status.error);
      return;
    }
    const download = new URLSearchParams(q);
    download.set("download", "1");
    this.download.href = `${route}?${download}`;
    this.download.setAttribute("aria-disabled", "false");
    this.message("", `Opening ${status.title}`, `drawn in ${status.seconds} s`, true);
    await this.open(`${route}?${q}`, token);
  }

  // Load a page in the viewer's frame (a new document each time: the query differs, or the
  // page was left), in the tab's theme.
  async open(page, token) {
    const loaded = new Promise((resolve) => {
      this.frame.addEventListener("load", resolve, { once: true });
    });
    this.shown = "";
    this.frame.src = `${page}#theme=${this.theme}`;
    await loaded;
    if (token !== this.token) return;
    this.shown = page;
    this.cover.classList.add("hidden");
    const viewer = this.viewer();
    if (viewer && viewer.ready && viewer.setTheme) viewer.setTheme(this.theme);
  }

  // A message over the viewer: a title, a line, and a progress bar while drawing.
  message(kind, title, line, busy = false, fraction = null) {
    const bar = busy ? h("progress", fraction === null ? {} : { max: "1", value: String(fraction) })
      : null;
    this.cover.replaceChildren(h("div", { class: `box ${kind}`, role: "status" },
      h("h2", null, title), h("p", null, line), bar));
    this.cover.classList.remove("hidden");
  }
}

export async function render() {
  document.head.appendChild(h("style", null, CSS));
  document.title = "tbgraph";
  const tab = new Tab(document.body);
  await tab.start();
}
