// Graphviz (WebAssembly) in a Web Worker, so a long layout never freezes the page and can be
// stopped.  Bundled on its own (scripts/build-viewer.mjs) and gzipped; the page carries it as
// base64 data, and layout.js decompresses it and starts it from a blob: URL.
//
// Messages in:  { id, dot }  (dot === null only warms the engine up)
// Messages out: { id, output } with Graphviz's json0 text, or { id, error, fatal }.

import { instance } from "@viz-js/viz";

let engine = null;

self.onmessage = async (event) => {
  const { id, dot } = event.data;
  try {
    if (!engine) engine = instance();
    const viz = await engine;
    if (dot === null) {
      self.postMessage({ id, output: null });
      return;
    }
    const result = viz.render(dot, { format: "json0" });
    if (result.status === "success") {
      self.postMessage({ id, output: result.output });
    } else {
      const message = (result.errors || []).map((e) => e.message).join("; ");
      self.postMessage({ id, error: message || "no output", fatal: false });
    }
  } catch (err) {
    // A trapped WebAssembly instance (stack overflow, out of memory) is not reusable.
    engine = null;
    self.postMessage({ id, error: String((err && err.message) || err), fatal: true });
  }
};
