"""Run Graphviz on the positioned DOT (``neato -n2``) for SVG, PNG and PDF.

``neato -n2`` keeps every position we computed and only draws, so the picture is the composed
per-group layout, drawn by Graphviz's own renderers.  For SVG, the generated node IDs in
``<title>`` are replaced by the full op and group names, XML-escaped, so the file is easy to
test and to style: ``g.node.op > title`` is an op's full name, ``g.edge > title`` is
``src->dst``.
"""

from __future__ import annotations

import re
import subprocess
from html import escape

from ..errors import ExecutableNotFound, GraphvizTbError
from .dot import DotDocument, clean_text

__all__ = ["run_neato"]

_TITLED = re.compile(r'(<g id="([^"]+)" class="[^"]*">\n<title>)[^<]*(</title>)')
_COMMENT = re.compile(r"<!-- .*? -->\n", re.S)


def _patch_svg(svg: str, doc: DotDocument) -> str:
    def title(m: re.Match[str]) -> str:
        name = doc.titles.get(m.group(2))
        if name is None:
            return m.group(0)
        # Text content: &, < and > only (xml.sax.saxutils would pull in urllib, 10 ms).
        return f"{m.group(1)}{escape(clean_text(name), quote=False)}{m.group(3)}"

    svg = _COMMENT.sub("", svg)  # Graphviz repeats each raw ID as a comment; drop them
    return _TITLED.sub(title, svg)


def run_neato(doc: DotDocument, fmt: str) -> bytes:
    """Draw the positioned document as ``svg``, ``png`` or ``pdf``."""
    try:
        proc = subprocess.run(["neato", "-n2", f"-T{fmt}"], input=doc.text.encode("utf-8"),
                              capture_output=True, check=False)
    except FileNotFoundError:
        raise ExecutableNotFound() from None
    if proc.returncode != 0 or not proc.stdout:
        lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GraphvizTbError(f"Graphviz failed to draw {fmt}: "
                              f"{lines[-1] if lines else 'no output'}")
    if fmt == "svg":
        return _patch_svg(proc.stdout.decode("utf-8"), doc).encode("utf-8")
    return proc.stdout
