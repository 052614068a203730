"""Every colour, theme and palette a picture uses, and the sizes the viewer's layout shares
with the Python one: the one source both writers and the viewer read.

The DOT writer (:mod:`graphviz_tb.draw.dot`) and the viewer's page data
(:mod:`graphviz_tb.draw.viewer_data`) import the tables here; the viewer's own code gets them at
build time: ``python graphviz_tb/style.py`` prints :func:`viewer_style` as a JavaScript module,
which ``scripts/build-viewer.mjs`` writes beside the viewer's sources before bundling.  So this
module imports nothing of the package: it runs as a script too.
"""

from __future__ import annotations

import colorsys
import json
from typing import Any

__all__ = [
    "CHAR_WIDTH",
    "COST_COLORS",
    "DIFF_COLORS",
    "DIFF_LINES",
    "NO_RECORD",
    "PT",
    "SCALE_STEPS",
    "THEMES",
    "UNIQUE_COLOR",
    "palette",
    "viewer_style",
]

# --------------------------------------------------------------------------- themes

#: The two themes: background, text, lines, an op's fill, muted text, a missing op's mark and
#: the legend's background.
THEMES = {
    "light": {"bg": "#ffffff", "fg": "#222222", "line": "#555555", "op": "#ffffff",
              "muted": "#777777", "missing": "#c62828", "legend": "#fafafa"},
    "dark": {"bg": "#1e1f22", "fg": "#e6e6e6", "line": "#a0a0a0", "op": "#2b2d31",
             "muted": "#9a9a9a", "missing": "#ef5350", "legend": "#26282c"},
}

#: The fill of a group whose structure is unique (grey: nothing else looks like it).
UNIQUE_COLOR = {"light": "#dcdcdc", "dark": "#4a4a4a"}

# --------------------------------------------------------------------------- palette

#: The palette's hue walk: start, and the golden-ratio step between neighbours.
_HUE_START = 0.08
_HUE_STEP = 0.618033988749895
#: Every this many colours, the next lightness band (three bands, so hues that come round
#: again after many steps still differ).
_BAND_EVERY = 7
#: Lightness and saturation of each band, per theme.
_BANDS = {
    "light": {"light": (0.80, 0.72, 0.86), "sat": (0.65, 0.55, 0.75)},
    "dark": {"light": (0.34, 0.30, 0.40), "sat": (0.45, 0.45, 0.45)},
}


def palette(index: int, theme: str = "light") -> str:
    """The ``index``-th distinct colour: golden-ratio hue steps, with three lightness bands so
    neighbouring hues after many steps still differ."""
    hue = (_HUE_START + index * _HUE_STEP) % 1.0
    band = (index // _BAND_EVERY) % 3
    bands = _BANDS["dark" if theme == "dark" else "light"]
    r, g, b = colorsys.hls_to_rgb(hue, bands["light"][band], bands["sat"][band])
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


# --------------------------------------------------------------------------- costs and diffs

#: Colour steps of the cost scale (:class:`graphviz_tb.model.costs.Scale`).
SCALE_STEPS = 7
#: The sequential scale of ``--color-by compute-time`` / ``memory``, coolest to hottest (one
#: colour per step); dark text stays readable on each.
COST_COLORS = {
    "light": ["#feedde", "#fdd9b4", "#fdbe85", "#fda45d", "#fd8d3c", "#f16913", "#e5530b"],
    "dark": ["#553620", "#65391e", "#713d1c", "#8e4517", "#ab4d12", "#c8560c", "#e65f05"],
}
#: The fill of a box with no record in a cost picture: grey, as the legend's swatch says,
#: and unlike any step of the scale (the cheapest step is a light orange, not white).
NO_RECORD = {"light": "#d4d4d4", "dark": "#3a3a3a"}

#: Fills of a diff's boxes by status: added green, removed red, changed amber, the rest grey.
DIFF_COLORS = {
    "light": {"added": "#b5e3a7", "removed": "#f2aeae", "changed": "#f6d488",
              "unchanged": "#eeeeee"},
    "dark": {"added": "#2f6b2a", "removed": "#7a2f2f", "changed": "#7a5f1f",
             "unchanged": "#34363a"},
}
#: Lines of added and removed edges in a diff.
DIFF_LINES = {"light": {"added": "#3f9a2f", "removed": "#c62828"},
              "dark": {"added": "#7ccf6b", "removed": "#ef5350"}}

# --------------------------------------------------------------------------- sizes

#: Points per inch (Graphviz sizes nodes in inches, draws in points).
PT = 72.0
#: Average glyph width over font size for Helvetica-like fonts: how wide a label is measured.
CHAR_WIDTH = 0.58


def viewer_style() -> dict[str, Any]:
    """What the viewer's code needs from here (the rest reaches it in the page data)."""
    return {
        "palette": {"hueStart": _HUE_START, "hueStep": _HUE_STEP, "bandEvery": _BAND_EVERY,
                    "bands": _BANDS},
        "scaleSteps": SCALE_STEPS,
        "pt": PT,
        "charWidth": CHAR_WIDTH,
    }


if __name__ == "__main__":  # scripts/build-viewer.mjs: the viewer's copy, as a JS module
    print("// Generated from graphviz_tb/style.py by scripts/build-viewer.mjs: do not edit.")
    print(f"export const STYLE = {json.dumps(viewer_style(), sort_keys=True)};")
