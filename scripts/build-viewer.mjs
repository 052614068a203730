// Bundle the HTML viewer (graphviz_tb/render/viewer/src) with its npm dependencies into
// graphviz_tb/render/viewer/bundle.js, which graphviz_tb/render/html.py inlines into every
// page.  The bundle is a build product: it is never committed (see .gitignore).
//
// Usage: node scripts/build-viewer.mjs [--dev]   (run `npm ci` first; `make viewer` does both)
import { build } from "esbuild";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { readFile } from "node:fs/promises";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const viewer = path.join(root, "graphviz_tb", "render", "viewer");
const dev = process.argv.includes("--dev");

const common = {
  bundle: true,
  format: "iife",
  platform: "browser",
  target: ["es2020"],
  minify: !dev,
  sourcemap: false,
  legalComments: "inline",
  // Graphviz's WebAssembly is a long string literal: keep its bytes as UTF-8 rather than
  // \uXXXX escapes, which would make the bundle several times larger.
  charset: "utf8",
  // The bundle is inlined in a <script> element (and the worker runs from a blob: URL):
  // import.meta has no meaning there.
  define: { "import.meta.url": "undefined" },
  logLevel: "warning",
};

// 1. Graphviz and its message loop, to run in a Web Worker.
const worker = await build({
  ...common,
  entryPoints: [path.join(viewer, "src", "layout-worker.js")],
  write: false,
});
const workerSource = worker.outputFiles[0].text;

// 2. The viewer, carrying the worker's bundle as a string (imported as "tbgraph:layout-worker").
const embedWorker = {
  name: "embed-layout-worker",
  setup(b) {
    b.onResolve({ filter: /^tbgraph:layout-worker$/ }, (args) => ({
      path: args.path, namespace: "tbgraph-worker" }));
    b.onLoad({ filter: /.*/, namespace: "tbgraph-worker" }, () => ({
      contents: workerSource, loader: "text" }));
  },
};
const result = await build({
  ...common,
  entryPoints: [path.join(viewer, "src", "main.js")],
  outfile: path.join(viewer, "bundle.js"),
  plugins: [embedWorker],
  metafile: true,
});
// The bundle goes inside <script>…</script>: it must hold neither a closing tag nor an opening
// one (which, after a "<!--", would stop "</script>" from closing the element).
const text = await readFile(path.join(viewer, "bundle.js"), "utf8");
if (/<\/?script/i.test(text)) {
  console.error("build-viewer: the bundle contains a <script> or </script> tag; refusing it");
  process.exit(1);
}
const bytes = Object.values(result.metafile.outputs)[0].bytes;
console.log(`viewer bundle: ${path.relative(root, path.join(viewer, "bundle.js"))} ` +
  `(${(bytes / 1024).toFixed(0)} KiB)`);
