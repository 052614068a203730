// The graphviz_tb viewer: boots from the embedded JSON, draws the precomputed view at once,
// and sets up its user interface (ui.js) and `window.tbgraph` (api.js); a page of several
// graphs gets a picker to switch between them.

import { App } from "./app.js";
import { base64Bytes, inflated } from "./bytes.js";
import { Graph } from "./graph.js";
import { h } from "./dom.js";
import { svgEl, cleanText } from "./draw.js";
import { engine, viz } from "./layout.js";
import { UI } from "./ui.js";
import { viewerApi } from "./api.js";

const DATA_VERSION = 3;

function fail(root, message) {
  root.replaceChildren(h("div", { class: "fatal" }, message));
  window.tbgraph = { ready: false, error: message };
}

async function boot() {
  const root = document.getElementById("app");
  const holder = document.getElementById("tbgraph-data");
  let data;
  try {
    // The data comes deflated, as base64 (graphviz_tb/write/page.py): a fifth of its JSON.
    data = JSON.parse(await inflated(base64Bytes(holder.textContent.trim()), "deflate").text());
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
  const api = viewerApi(app, graph, ui);
  window.tbgraph = api;
  app.redraw();
  app.fit();
  let restored = false;
  try {
    restored = await ui.restoreHash(state);
  } catch (err) {
    ui.message(`Could not restore the view from the link: ${err.message || err}`, true);
  }
  if (!restored) app.firstView();
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
