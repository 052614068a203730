"""Every colour, theme and palette a picture uses, and the sizes and spacings the viewer's
layout shares with the Python one: the one source both writers and the viewer read.

The DOT writer (:mod:`graphviz_tb.draw.dot`) and the viewer's page data
(:mod:`graphviz_tb.draw.viewer_data`) import the tables here; the viewer's own code gets them at
build time: ``python graphviz_tb/style.py`` prints :func:`viewer_style` as JSON, which
``scripts/build-viewer.mjs`` writes as a JavaScript module beside the viewer's sources before
bundling (with the grouping rules of :mod:`graphviz_tb.group.aside`, printed the same way).  So
this module imports nothing of the package: it runs as a script too.
"""

from __future__ import annotations

import colorsys
import json
from typing import Any

__all__ = [
    "ARROW_SIZE",
    "CHAR_WIDTH",
    "COST_COLORS",
    "DIFF_COLORS",
    "DIFF_LINES",
    "EDGE_LABEL_SIZE",
    "LABEL_BREAKS",
    "LABEL_GAP",
    "LABEL_GAP_ALONG",
    "LABEL_H",
    "LABEL_REACH",
    "LABEL_REACH_ALONG",
    "MAX_LINE",
    "MIN_COLORED_OPS",
    "NODESEP",
    "NO_RECORD",
    "OTHER_REPEATED",
    "PAD",
    "PT",
    "RANKSEP",
    "SCALE_STEPS",
    "STRUCTURE_COLORS",
    "STUB_H",
    "STUB_LABEL_SIZE",
    "STUB_PAD",
    "STUB_WEIGHT",
    "THEMES",
    "TITLE_SIZE",
    "TITLE_SLACK",
    "UNIQUE_COLOR",
    "WRAP",
    "WRAP_MOST",
    "palette",
    "structure_color",
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

# --------------------------------------------------------------------------- structures

#: The fills of repeated structures, the largest first: each picked in CIELAB as far as it can
#: be from those before it and from the grey of unique structures, from a grid of pastel
#: (light theme) or deep (dark theme) colours, so any two, the grey and the colour of other
#: repeated structures differ by a CIE76 distance of 16 or more: told apart at a glance.
STRUCTURE_COLORS = {
    "light": ["#eec7af", "#6ecea3", "#e3a7e7", "#52c7fe", "#dde99c", "#8ff2f9", "#f2a7b7",
              "#dbb772", "#b0b8f0", "#a9c3a2", "#fda58c", "#8fc3d9", "#ffd7f2", "#3acfc9",
              "#9cc883", "#b8f0c5"],
    "dark": ["#745540", "#137c5f", "#6667a4", "#793358", "#3e5216", "#07778f", "#a55556",
             "#82637e", "#174f77", "#5f7354", "#7f6b2f", "#135454", "#623c71", "#773b22",
             "#13572e", "#6a3f45"],
}
#: The fill of the repeated structures past those, and of those too small to spend a colour
#: on (fewer than :data:`MIN_COLORED_OPS` ops: a two-op helper).
OTHER_REPEATED = {"light": "#f8e0a9", "dark": "#5d6d8e"}
MIN_COLORED_OPS = 3


def structure_color(slot: int | None, theme: str = "light") -> str:
    """The fill of the structure in palette ``slot`` (None: past the palette, or too small)."""
    colors = STRUCTURE_COLORS["dark" if theme == "dark" else "light"]
    if slot is None or slot >= len(colors):
        return OTHER_REPEATED["dark" if theme == "dark" else "light"]
    return colors[slot]


# --------------------------------------------------------------------------- keys

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
    """The ``index``-th colour of a colour key (op type, device, dtype): golden-ratio hue
    steps, with three lightness bands so neighbouring hues after many steps still differ."""
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
#: A box's name goes on two lines past this many characters, broken after one of
#: :data:`LABEL_BREAKS` (or between a lower and an upper case letter) nearest the middle; a
#: name past :data:`WRAP_MOST` is cut first.
WRAP = 28
WRAP_MOST = 60
LABEL_BREAKS = "_-/.: "
#: The longest line a box shows (the writers cut longer ones).
MAX_LINE = 48

# --------------------------------------------------------------------------- layout

#: Graphviz's room between neighbouring boxes and between ranks in a group's layout (inches).
NODESEP = 0.22
RANKSEP = 0.32
#: Graphviz's ``arrowsize`` of every edge: the layouts leave room for the arrowhead the
#: drawing puts there, so each line runs into its arrowhead (the default size left a 4 pt gap).
ARROW_SIZE = 0.6
#: How hard the layout pulls a stub towards the end it stands beside (ordinary edges: 1).
STUB_WEIGHT = 8
#: Room inside an expanded group's border, and above its content for its title (points).
PAD = 10.0
LABEL_H = 20.0
#: The font size of an edge's label, which the layout measures it by.
EDGE_LABEL_SIZE = 8
#: An open group's frame is at least as wide as its title: the title's font size, and the
#: slack on its measured width (the width table underestimates bold capitals).
TITLE_SIZE = 10
TITLE_SLACK = 1.1
#: A stub (an edge's far end drawn beside a side-column member): its label's font size, the
#: room added to the label's width, and its height (points).
STUB_LABEL_SIZE = 8
STUB_PAD = 10.0
STUB_H = 14.0
#: An edge's label reads as its own when its path passes this near Graphviz's place for it:
#: half its width and :data:`LABEL_REACH` across a vertical path (rank direction TB or BT),
#: :data:`LABEL_REACH_ALONG` along a horizontal one.  Farther, dot left it beside another
#: line (a tall box sharing the label's rank), and it goes beside its own path's nearest
#: point: half its width and :data:`LABEL_GAP` to the side, or :data:`LABEL_GAP_ALONG` above
#: or below.
LABEL_REACH = 10
LABEL_REACH_ALONG = 14
LABEL_GAP = 4
LABEL_GAP_ALONG = 8

def viewer_style() -> dict[str, Any]:
    """What the viewer's code needs from here (the rest reaches it in the page data)."""
    return {
        "palette": {"hueStart": _HUE_START, "hueStep": _HUE_STEP, "bandEvery": _BAND_EVERY,
                    "bands": _BANDS},
        "scaleSteps": SCALE_STEPS,
        "structure": STRUCTURE_COLORS,
        "otherRepeated": OTHER_REPEATED,
        "pt": PT,
        "charWidth": CHAR_WIDTH,
        "wrap": WRAP,
        "wrapMost": WRAP_MOST,
        "labelBreaks": LABEL_BREAKS,
        "maxLine": MAX_LINE,
        "nodesep": NODESEP,
        "ranksep": RANKSEP,
        "arrowSize": ARROW_SIZE,
        "stubWeight": STUB_WEIGHT,
        "edgeLabelSize": EDGE_LABEL_SIZE,
        "labelReach": LABEL_REACH,
        "labelReachAlong": LABEL_REACH_ALONG,
        "labelGap": LABEL_GAP,
        "labelGapAlong": LABEL_GAP_ALONG,
        "titleSize": TITLE_SIZE,
        "titleSlack": TITLE_SLACK,
        "stubLabelSize": STUB_LABEL_SIZE,
        "stubPad": STUB_PAD,
        "stubH": STUB_H,
    }


if __name__ == "__main__":  # scripts/build-viewer.mjs: the viewer's copy, as JSON
    print(json.dumps(viewer_style(), sort_keys=True))
