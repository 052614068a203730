"""Run Graphviz on the positioned DOT (``neato -n2``) for SVG, PNG and PDF.

``neato -n2`` keeps every position we computed and only draws, so the picture is the composed
per-group layout, drawn by Graphviz's own renderers.  For SVG, the generated node IDs in
``<title>`` are replaced by the full op and group names, XML-escaped, so the file is easy to
test and to style: ``g.node.op > title`` is an op's full name, ``g.edge > title`` is
``src->dst``.  Each box has its own title: an op sharing its name with a scope (drawn inside
that scope) is ``scope/(label)``, as TensorBoard names it (see ``Hierarchy.title``).
"""

from __future__ import annotations

import re
from html import escape

from ..escaping import clean_text
from ..layout import engine
from .dot import DotDocument

__all__ = ["run_neato"]

_TITLED = re.compile(r'(<g id="([^"]+)" class="[^"]*">\n<title>)[^<]*(</title>)')
_COMMENT = re.compile(r"<!-- .*? -->\n", re.S)


def _patch_svg(svg: str, doc: DotDocument) -> str:
    def title(m: re.Match[str]) -> str:
        name = doc.titles.get(m.group(2))
        if name is None:
            return m.group(0)
        # Text content: &, < and > only (xml.sax.saxutils would import urllib).
        return f"{m.group(1)}{escape(clean_text(name), quote=False)}{m.group(3)}"

    svg = _COMMENT.sub("", svg)  # Graphviz repeats each raw ID as a comment; drop them
    return _TITLED.sub(title, svg)


def run_neato(doc: DotDocument, fmt: str) -> bytes:
    """Draw the positioned document as ``svg``, ``png`` or ``pdf``."""
    data = engine.current().draw(doc.text, fmt)
    if fmt == "svg":
        return _patch_svg(data.decode("utf-8"), doc).encode("utf-8")
    return data
