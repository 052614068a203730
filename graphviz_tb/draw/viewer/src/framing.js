// Where the picture sits on screen: fitting it whole, and the first view.  Each function takes
// the app (its scene, graph and the model the page leads with), the canvas size and the
// panels floating over the canvas, and returns the view as [zoom, tx, ty] (screen x = tx +
// k·x, screen y = ty − k·y: the picture's y grows upwards).

// The zoom at which box names (10 pt) stand about 10 px high on screen: the first view
// never draws them smaller.
const READABLE_ZOOM = 0.9;
// Room kept between what is shown and the free area's edges (px).
const MARGIN = 24;

// The free area of the canvas the picture fits best into, the zoom that fits it there, and
// the picture's size.  Clear of the panels (legend, minimap, top ops, details): the band
// between the panels above and below, or the column between those left and right, whichever
// draws it bigger.  Fitted to the whole canvas, a wide picture had its first inputs under the
// legend.  (Only a window too small for either puts the picture under the panels.)
function fitted(app, [W, H], panels) {
  const m = MARGIN;
  const sw = Math.max(app.scene.w, 1);
  const sh = Math.max(app.scene.h, 1);
  let top = 0, bottom = H, left = 0, right = W;
  for (const p of panels) {
    if (p.top + p.bottom < H) top = Math.max(top, p.bottom);
    else bottom = Math.min(bottom, p.top);
    if (p.left + p.right < W) left = Math.max(left, p.right);
    else right = Math.min(right, p.left);
  }
  const free = [[0, top, W, bottom - top], [left, 0, right - left, H]]
    .filter(([, , w, h]) => w > 4 * m && h > 4 * m);
  const areas = free.length ? free : [[0, 0, W, H]];  // a window too small for both
  const scale = ([, , w, h]) => Math.min((w - 2 * m) / sw, (h - 2 * m) / sh, 1.5);
  const [x, y, w, h] = areas.reduce((a, b) => (scale(b) > scale(a) ? b : a));
  return [x, y, w, h, scale([x, y, w, h]), sw, sh];
}

// The whole picture, centred in the free area.
export function fitView(app, size, panels) {
  const [x, y, w, h, k, sw, sh] = fitted(app, size, panels);
  return [k, x + (w - sw * k) / 2, y + (h + sh * k) / 2];
}

// The first view: the whole picture when its names stay readable so.  Else the model the
// page names (data.lead: a training step's model, an inference graph's), as the top of a
// picture is its outputs' plumbing (data flows up): the whole model when its names stay
// readable so, else its top at a readable zoom.  With no model named, the picture's top at
// a readable zoom.  Across, what is shown is centred when narrower than the area; a wider
// one has its top box in the middle as far as its edges allow (centred, a wide picture lost
// its left edge).  Fitting a tall graph into the window drew a strip with 4-pixel names; the
// whole picture stays one key away (f).
export function firstView(app, size, panels) {
  const [x, y, w, h, k, sw, sh] = fitted(app, size, panels);
  if (k >= READABLE_ZOOM) return fitView(app, size, panels);
  const m = MARGIN;
  const scene = app.scene;
  const lead = app.lead >= 0 && scene.index.has(app.lead)
    ? scene.boxes[scene.index.get(app.lead)] : null;
  // What is shown, as [left, right, top] in the picture's coordinates (y up).
  const [left, right, top] = lead
    ? [lead.x - lead.w / 2, lead.x + lead.w / 2, lead.y + lead.h / 2] : [0, sw, sh];
  if (lead) {
    const fits = Math.min((w - 2 * m) / lead.w, (h - 2 * m) / lead.h, 1.5);
    if (fits >= READABLE_ZOOM) return [fits, x + w / 2 - lead.x * fits, y + h / 2 + lead.y * fits];
  }
  const r = READABLE_ZOOM;
  let tx = x + w / 2 - ((left + right) / 2) * r;
  if ((right - left) * r > w - 2 * m) {
    const high = topBox(app, lead ? lead.m : 0);
    const middle = x + w / 2 - (high ? high.x : (left + right) / 2) * r;
    tx = Math.min(x + m - left * r, Math.max(x + w - m - right * r, middle));
  }
  return [r, tx, y + m + top * r];
}

// The box drawn highest (an output, as data flows up) within group `within`, leftmost among
// equals: closed boxes only, not the bookkeeping set aside.
function topBox(app, within) {
  let best = null;
  for (const b of app.scene.boxes) {
    if (b.stub || b.open || b.aux || !app.g.contains(within, b.m)) continue;
    const top = b.y + b.h / 2;
    if (!best || top > best.y + best.h / 2 || (top === best.y + best.h / 2 && b.x < best.x)) {
      best = b;
    }
  }
  return best;
}
