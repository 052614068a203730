// Bundle the HTML viewer (graphviz_tb/draw/viewer/src) with its npm dependencies into two
// build products, both inlined by graphviz_tb/write/page.py into every page and never
// committed (see .gitignore):
//
// * graphviz_tb/draw/viewer/bundle.js: the viewer itself (no Graphviz in it);
// * graphviz_tb/draw/viewer/layout-worker.js.gz: Graphviz (WebAssembly) and its message loop,
//   to run in a Web Worker, gzipped.  The page carries it base64-encoded as inert data and
//   decompresses it with DecompressionStream only when a layout is first needed.
//
// * graphviz_tb/tbplugin/tab.js: the tbgraph tab of TensorBoard, an ES module TensorBoard
//   imports in the tab's iframe (it shows the viewer pages the plugin serves).
//
// All are deterministic: the same sources give the same bytes (gzip at a fixed level, with no
// timestamp and a fixed operating-system byte in its header).
//
// First it writes graphviz_tb/draw/viewer/src/style.gen.js (also ignored by git): the palette,
// cost-scale steps, layout sizes and grouping rules the viewer shares with Python, printed as
// JSON by `$PYTHON graphviz_tb/style.py` and `$PYTHON graphviz_tb/group/aside.py` (PYTHON
// defaults to python3), so they have one source.
//
// Usage: node scripts/build-viewer.mjs [--dev]   (run `npm ci` first; `make viewer` does both)
import { build } from "esbuild";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { constants, gzipSync } from "node:zlib";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const viewer = path.join(root, "graphviz_tb", "draw", "viewer");
const dev = process.argv.includes("--dev");
const BUNDLE = path.join(viewer, "bundle.js");
const TAB = path.join(root, "graphviz_tb", "tbplugin", "tab.js");
const WORKER = path.join(viewer, "layout-worker.js.gz");

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

function fail(message) {
  console.error(`build-viewer: ${message}`);
  process.exit(1);
}

const kib = (n) => `${(n / 1024).toFixed(0)} KiB`;

// 0. What the viewer shares with Python, as one JavaScript module: each source prints its part
// as a JSON object.  It is rewritten only when it changes, so its time stamp says when the
// shared values last did.
const STYLE = path.join(viewer, "src", "style.gen.js");
const SHARED = ["graphviz_tb/style.py", "graphviz_tb/group/aside.py"];
const python = process.env.PYTHON || "python3";
const shared = {};
for (const source of SHARED) {
  const run = spawnSync(python, [source], { cwd: root, encoding: "utf8", maxBuffer: 1 << 20 });
  if (run.error || run.status !== 0) {
    const why = run.error ? run.error.message
      : (run.stderr || "").trim().split("\n").pop() || `exit status ${run.status}`;
    fail(`could not write the viewer's style: ${python} ${source} failed (${why}); ` +
      "set PYTHON to a Python 3 interpreter");
  }
  let part = null;
  try {
    part = JSON.parse(run.stdout);
  } catch {
    // reported below
  }
  if (part === null || typeof part !== "object" || Array.isArray(part)) {
    fail(`${python} ${source} printed no JSON object`);
  }
  for (const [key, value] of Object.entries(part)) {
    if (key in shared) fail(`${source} and an earlier source both set ${key}`);
    shared[key] = value;
  }
}
const sorted = Object.fromEntries(Object.keys(shared).sort().map((k) => [k, shared[k]]));
const styleText = `// Generated from ${SHARED.join(" and ")} by scripts/build-viewer.mjs: ` +
  `do not edit.\nexport const STYLE = ${JSON.stringify(sorted)};\n`;
const oldStyle = await readFile(STYLE, "utf8").catch(() => null);
if (oldStyle !== styleText) await writeFile(STYLE, styleText);

// 1. Graphviz and its message loop, to run in a Web Worker: bundled, then gzipped.
const worker = await build({
  ...common,
  entryPoints: [path.join(viewer, "src", "layout-worker.js")],
  write: false,
});
const workerBytes = worker.outputFiles[0].contents;
const gz = gzipSync(workerBytes, {
  level: constants.Z_BEST_COMPRESSION, memLevel: 9, windowBits: 15,
  strategy: constants.Z_DEFAULT_STRATEGY,
});
// The gzip header: MTIME (bytes 4-7) is already 0; the OS byte (9) depends on the platform
// zlib was built for, so it is fixed to 255 ("unknown") for the same bytes everywhere.
if (gz[0] !== 0x1f || gz[1] !== 0x8b || gz.readUInt32LE(4) !== 0) fail("unexpected gzip header");
gz[9] = 0xff;
await writeFile(WORKER, gz);

// 2. The viewer, which must not carry Graphviz (the page gets it from the data above).  The
// worker's legal notices (Viz.js, Graphviz, Expat) head it, readable in every page.
const notices = new TextDecoder().decode(workerBytes).match(/\/\*![\s\S]*?\*\//g) || [];
if (!notices.length) fail("the layout worker carries no licence notice");
const result = await build({
  ...common,
  entryPoints: [path.join(viewer, "src", "main.js")],
  outfile: BUNDLE,
  metafile: true,
  banner: { js: notices.join("\n") },
  // ASCII (other characters as escapes), as the page's data is: a page inside an iframe's
  // srcdoc is decoded in the charset its host document was given or guessed, and a script
  // decoded any other way than it was hashed is refused by the page's Content-Security-Policy.
  charset: "ascii",
});
const viz = Object.keys(result.metafile.inputs).filter((p) => p.includes("@viz-js"));
if (viz.length) fail(`the main bundle pulls in Graphviz (${viz.join(", ")}); refusing it`);
// The bundle goes inside <script>…</script>: it must hold neither a closing tag nor an opening
// one (which, after a "<!--", would stop "</script>" from closing the element).
const text = await readFile(BUNDLE, "utf8");
if (/<\/?script/i.test(text)) fail("the bundle contains a <script> or </script> tag; refusing it");
if (/[^\x00-\x7f]/.test(text)) fail("the bundle is not ASCII (see the charset option above)");
const bytes = Object.values(result.metafile.outputs)[0].bytes;

// 3. The TensorBoard tab: an ES module (TensorBoard calls its `render()`), served as a file of
// its own, so only ASCII matters (the same reason as above: no charset surprises).
const tab = await build({
  ...common,
  format: "esm",
  entryPoints: [path.join(root, "graphviz_tb", "tbplugin", "src", "tab.js")],
  outfile: TAB,
  metafile: true,
  charset: "ascii",
});
const tabBytes = Object.values(tab.metafile.outputs)[0].bytes;
console.log(`viewer bundle: ${path.relative(root, BUNDLE)} (${kib(bytes)}); ` +
  `layout worker: ${path.relative(root, WORKER)} (${kib(workerBytes.length)}, ` +
  `gzipped ${kib(gz.length)}, ${kib(Math.ceil(gz.length / 3) * 4)} as base64); ` +
  `TensorBoard tab: ${path.relative(root, TAB)} (${kib(tabBytes)})`);
