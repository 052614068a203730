// Run in the viewer page by tests/picture.py: the drawn scene as plain records, in the
// scene's own coordinates (y downwards, as drawn).  It reads the DOM only: every box's
// outline, and every edge's path, arrowhead, dashes, width, label and the ends it names.
() => {
  const num = (s) => (String(s).match(/-?\d+(?:\.\d+)?(?:e-?\d+)?/g) || []).map(Number);
  const shift = (el) => {
    const m = num(el.getAttribute("transform") || "");
    return [m[0] || 0, m[1] || 0];
  };
  const scene = document.querySelector("svg.canvas");
  const boxes = [];
  for (const g of scene.querySelectorAll("g.node, g.stub")) {
    const [tx, ty] = shift(g);
    const stub = g.classList.contains("stub");
    const shape = g.querySelector(".shape");
    const rec = {
      key: stub ? `s:${g.getAttribute("data-stub")}:${g.getAttribute("data-near")}`
        : `m:${g.getAttribute("data-i")}`,
      name: stub ? "" : g.getAttribute("data-node"),
      kind: stub ? "stub" : (g.classList.contains("op") ? "op" : "group"),
      classes: [...g.classList],
      texts: [...g.querySelectorAll(":scope > text")].map((t) => t.textContent),
      open: g.classList.contains("expanded"),
      fill: shape ? shape.getAttribute("fill") : "",
    };
    if (shape && shape.tagName === "ellipse") {
      Object.assign(rec, { shape: "ellipse", cx: tx, cy: ty,
        w: 2 * +shape.getAttribute("rx"), h: 2 * +shape.getAttribute("ry") });
    } else {
      const b = (shape || g.querySelector("text")).getBBox();
      Object.assign(rec, { shape: "rect", cx: tx + b.x + b.width / 2,
        cy: ty + b.y + b.height / 2, w: b.width, h: b.height });
    }
    boxes.push(rec);
  }
  const edges = [];
  for (const g of scene.querySelectorAll("g.edge")) {
    const path = g.querySelector("path");
    const poly = g.querySelector("polygon");
    const wire = g.getAttribute("data-wire");
    const label = scene.querySelector(`text.edge-label[data-wire="${wire}"]`);
    edges.push({
      key: `w:${wire}`, src: g.getAttribute("data-src"), dst: g.getAttribute("data-dst"),
      d: path.getAttribute("d"), poly: poly ? poly.getAttribute("points") : null,
      dashed: path.hasAttribute("stroke-dasharray"), width: +path.getAttribute("stroke-width"),
      classes: [...g.classList], title: (g.querySelector("title") || {}).textContent || "",
      label: label ? label.textContent : "", lx: label ? +label.getAttribute("x") : null,
      ly: label ? +label.getAttribute("y") - 3 : null,
    });
  }
  // The legend's colour rows: (swatch colour as #rrggbb, text), as the static legend's.
  const hex = (rgb) => "#" + (rgb.match(/\d+/g) || []).slice(0, 3)
    .map((v) => (+v).toString(16).padStart(2, "0")).join("");
  const legend = [...document.querySelectorAll(".legend li")]
    .filter((li) => li.querySelector(".swatch"))
    .map((li) => [hex(getComputedStyle(li.querySelector(".swatch")).backgroundColor),
      li.textContent.trim()]);
  return { boxes, edges, legend };
}
