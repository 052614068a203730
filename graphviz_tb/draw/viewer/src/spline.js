// The point of an edge's drawn path nearest a place, as graphviz_tb/layout/dot_layout.py's
// nearest_on_spline finds it, operation for operation (products, not powers; the same
// comparisons and ties), so the page anchors a label where Python does: each cubic segment
// sampled at SAMPLES even steps, then golden-section search around every sample nearer than
// both its neighbours.  The work is fixed per segment, however long the path is drawn.

const SAMPLES = 8;
const REFINE = 30;
const GOLDEN = 0.6180339887498949;

// The point at `s` along the path: segment floor(s) at parameter s - floor(s).
function pointAt(segments, s) {
  const i = Math.min(Math.floor(s), segments.length - 1);
  const t = s - i;
  const [x0, y0, x1, y1, x2, y2, x3, y3] = segments[i];
  const u = 1 - t;
  const a = u * u * u;
  const b = 3 * t * u * u;
  const c = 3 * t * t * u;
  const d = t * t * t;
  return [a * x0 + b * x1 + c * x2 + d * x3, a * y0 + b * y1 + c * y2 + d * y3];
}

// Where f is least on [lo, hi] (one-humped there), and its value there.
function golden(f, lo, hi) {
  let c = hi - (hi - lo) * GOLDEN;
  let d = lo + (hi - lo) * GOLDEN;
  let fc = f(c);
  let fd = f(d);
  for (let n = 0; n < REFINE; n++) {
    if (fc < fd) {
      hi = d;
      d = c;
      fd = fc;
      c = hi - (hi - lo) * GOLDEN;
      fc = f(c);
    } else {
      lo = c;
      c = d;
      fc = fd;
      d = lo + (hi - lo) * GOLDEN;
      fd = f(d);
    }
  }
  const s = (lo + hi) / 2;
  return [s, f(s)];
}

// `p` is flat [x, y, ...]: the start, then three points per segment (at least one).  The
// first sample within `enough` of the place is answer enough (whether the path passes that
// close).
export function nearestOnSpline(p, px, py, enough = 0) {
  const segments = [];
  for (let i = 0; i + 7 < p.length; i += 6) segments.push(p.slice(i, i + 8));
  const dist = (s) => {
    const [x, y] = pointAt(segments, s);
    return (x - px) * (x - px) + (y - py) * (y - py);
  };
  const last = segments.length * SAMPLES;
  const near = [];
  for (let k = 0; k <= last; k++) {
    near.push(dist(k / SAMPLES));
    if (near[k] <= enough * enough) return pointAt(segments, k / SAMPLES);
  }
  let best = 0;
  let bestD = near[0];
  for (let k = 0; k <= last; k++) {
    const d = near[k];
    if ((k && d >= near[k - 1]) || (k < last && d > near[k + 1])) continue;
    let [s, found] = golden(dist, Math.max(0, k - 1) / SAMPLES, Math.min(last, k + 1) / SAMPLES);
    if (found >= d) {
      s = k / SAMPLES;
      found = d;
    }
    if (found < bestD) {
      best = s;
      bestD = found;
    }
  }
  return pointAt(segments, best);
}
