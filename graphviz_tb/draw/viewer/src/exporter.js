// Export of the current view (open groups, colours, selection, trace) as SVG or PNG.

import { SVG_NS } from "./draw.js";

const EXPORT_CSS = `
.ctl { display: none; }
text { font-family: Helvetica, Arial, sans-serif; }
.tracing .node:not(.hl), .tracing .edge:not(.hl), .tracing .edge-label:not(.hl),
.tracing .stub:not(.hl) { opacity: 0.18; }
.node.selected > .shape { stroke: #e8590c; stroke-width: 2.5px; }
.tracing .edge.hl path { stroke: #e8590c; }
.tracing .edge.hl polygon { fill: #e8590c; stroke: #e8590c; }
`;

// A standalone SVG document of the whole drawing as it looks now.
export function exportSvg(app) {
  const scene = app.scene;
  const m = 14;
  const w = scene.w + 2 * m;
  const hgt = scene.h + 2 * m;
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("xmlns", SVG_NS);
  svg.setAttribute("width", `${Math.ceil(w)}pt`);
  svg.setAttribute("height", `${Math.ceil(hgt)}pt`);
  svg.setAttribute("viewBox", `${-m} ${-scene.h - m} ${w} ${hgt}`);
  svg.setAttribute("font-family", "Helvetica, Arial, sans-serif");
  if (app.trace) svg.setAttribute("class", "tracing");
  const style = document.createElementNS(SVG_NS, "style");
  style.textContent = EXPORT_CSS;
  svg.appendChild(style);
  const bg = document.createElementNS(SVG_NS, "rect");
  for (const [k, v] of Object.entries({ x: -m, y: -scene.h - m, width: w, height: hgt,
    fill: app.themes[app.theme].bg })) bg.setAttribute(k, String(v));
  svg.appendChild(bg);
  const content = app.viewport.cloneNode(true);
  content.removeAttribute("transform");
  svg.appendChild(content);
  const text = new XMLSerializer().serializeToString(svg);
  return { text: '<?xml version="1.0" encoding="UTF-8"?>\n' + text, width: w, height: hgt };
}

export function download(blob, filename) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

export function pngBlob(app, scale = 2) {
  const { text, width, height } = exportSvg(app);
  // Keep the bitmap within what canvases allow (about 268 M pixels, 32767 px a side).
  const s = Math.min(scale, 16000 / width, 16000 / height, Math.sqrt(1.2e8 / (width * height)));
  const url = URL.createObjectURL(new Blob([text], { type: "image/svg+xml" }));
  return new Promise((resolve, reject) => {
    const img = new Image();
    img.onload = () => {
      const canvas = document.createElement("canvas");
      canvas.width = Math.max(1, Math.round(width * s));
      canvas.height = Math.max(1, Math.round(height * s));
      const ctx = canvas.getContext("2d");
      ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
      URL.revokeObjectURL(url);
      canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error("PNG export failed"))),
        "image/png");
    };
    img.onerror = () => {
      URL.revokeObjectURL(url);
      reject(new Error("PNG export failed"));
    };
    img.src = url;
  });
}

export function fileStem(app) {
  const t = (app.options.title || "graph").replace(/\.[a-z]+$/i, "");
  return t.replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 80) || "graph";
}
