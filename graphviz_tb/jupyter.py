"""How a :class:`~graphviz_tb.Graph` shows itself in Jupyter (and anything using IPython's
display protocol).

A graph left as the last expression of a cell is drawn through ``_repr_mimebundle_``: as SVG
by default (static, and kept in the saved notebook), or as the interactive viewer
(``text/html``) after ``graphviz_tb.set_display("html")``.

Notebooks cap an ``image/svg+xml`` output at the width of their column, so a model's picture
came out with names 4-6 px high.  The SVG therefore also goes out as ``text/html``, which
notebooks prefer: an ``<img>`` of it at its own size in a frame that scrolls, as in the docs
(:func:`scroll_frame`).  The plain ``image/svg+xml`` stays for converters that take no HTML.

The viewer is a whole HTML document with its own Content-Security-Policy and scripts.  Pasting
it into the notebook's page would mix those with Jupyter's, so it goes into an ``<iframe>``
whose ``srcdoc`` holds the escaped document and whose ``sandbox`` lets its scripts run but not
reach the notebook.  Nothing is loaded from a CDN: the page carries everything it needs.

The one setting lives in this module because a notebook has one display preference at a time;
it is a frozen :class:`DisplaySettings` replaced whole by :func:`set_display`, so a render never
sees half an update.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Container
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from .options import RenderOptions

__all__ = ["SCROLL_HEIGHT", "DisplaySettings", "Displayable", "get_display", "mimebundle",
           "scroll_frame", "set_display", "srcdoc_iframe"]

_FORMATS = ("svg", "html")

#: The tallest a static picture stands in a page before its frame scrolls.
SCROLL_HEIGHT = "720px"


class Displayable(Protocol):
    """What a notebook shows: something that renders itself (a :class:`graphviz_tb.Graph`)."""

    @property
    def name(self) -> str:
        """What the graph is called (a title)."""

    def render(self, path: None = None, *, format: str | None = None,
               options: RenderOptions | None = None) -> str | bytes | None:
        """SVG or HTML text of the picture."""


@dataclass(frozen=True)
class DisplaySettings:
    """What a graph shows in a notebook.

    Attributes
    ----------
    format:
        ``svg`` (the default) or ``html`` (the interactive viewer).
    options:
        How to draw it, as for :meth:`graphviz_tb.Graph.render`.
    height:
        CSS height of the viewer's frame (the html form only).
    """

    format: str = "svg"
    options: RenderOptions = field(default_factory=RenderOptions)
    height: str = "600px"

    def __post_init__(self) -> None:
        if self.format not in _FORMATS:
            raise ValueError(f"display format must be 'svg' or 'html', not {self.format!r}")


_settings = DisplaySettings()


def get_display() -> DisplaySettings:
    """The settings graphs are displayed with now."""
    return _settings


def set_display(format: str = "svg", *, options: RenderOptions | None = None,
                height: str = "600px", **kwargs: Any) -> DisplaySettings:
    """Choose how graphs display themselves in Jupyter from now on.

    Parameters
    ----------
    format:
        ``"svg"`` for a static picture (the default), ``"html"`` for the interactive viewer
        (expand groups, search, trace inputs) inside the notebook.
    options, **kwargs:
        A :class:`~graphviz_tb.RenderOptions`, or its fields as keywords (``depth=2`` ...).
    height:
        CSS height of the viewer's frame.

    Returns
    -------
    DisplaySettings
        The settings that were in force before, so a caller can put them back.

    Examples
    --------
    >>> import graphviz_tb
    >>> previous = graphviz_tb.set_display("html", depth=2)
    >>> graphviz_tb.jupyter.get_display().options.depth
    2
    >>> _ = graphviz_tb.set_display(previous.format, options=previous.options)
    """
    global _settings
    options = options or RenderOptions()
    if kwargs:
        options = replace(options, **kwargs)
    previous = _settings
    _settings = DisplaySettings(format=format, options=options, height=height)
    return previous


def srcdoc_iframe(page: str, height: str = "600px", title: str = "graph") -> str:
    """An ``<iframe>`` holding the HTML document ``page`` in its (escaped) ``srcdoc``."""
    return (f'<iframe srcdoc="{html.escape(page, quote=True)}" '
            f'title="{html.escape(title, quote=True)}" '
            f'sandbox="allow-scripts allow-downloads" '
            f'style="width:100%;height:{html.escape(height, quote=True)};'
            f'border:1px solid #c8c8c8;border-radius:4px"></iframe>')


def scroll_frame(src: str, alt: str, style: str = "max-width:none;height:auto",
                 href: str | None = None) -> str:
    """A static picture at its own size (``style``) in a frame that scrolls, linked to
    ``href`` when given: shrunk to a 700-900 px column, a model's names would be 5 px high.
    ``src``, ``alt`` and ``href`` are escaped here."""
    img = (f'<img class="tbgraph tbgraph-svg" src="{html.escape(src, quote=True)}" '
           f'alt="{html.escape(alt, quote=True)}" style="{style}">')
    if href is not None:
        img = f'<a class="tbgraph-link" href="{html.escape(href, quote=True)}">{img}</a>'
    return (f'<div class="tbgraph-scroll" style="overflow:auto;max-height:{SCROLL_HEIGHT}">'
            f'{img}</div>')


def mimebundle(graph: Displayable, include: Container[str] | None = None,
               exclude: Container[str] | None = None,
               settings: DisplaySettings | None = None) -> dict[str, str]:
    """The display data for ``graph``: one picture (SVG or the framed viewer) and a text line.

    ``include`` and ``exclude`` are IPython's: MIME types the front end wants or refuses.
    Only the chosen format is drawn, so a notebook never pays for both.
    """
    settings = settings or _settings

    def wanted(mime: str) -> bool:
        return (include is None or mime in include) and not (exclude and mime in exclude)

    bundle: dict[str, str] = {}
    if settings.format == "html":
        if wanted("text/html"):
            page = graph.render(format="html", options=settings.options)
            assert isinstance(page, str)
            bundle["text/html"] = srcdoc_iframe(page, settings.height, graph.name)
    elif wanted("image/svg+xml"):  # the framed copy is of no use where SVG is refused
        svg = graph.render(format="svg", options=settings.options)
        assert isinstance(svg, str)
        bundle["image/svg+xml"] = svg
        if wanted("text/html"):
            data = base64.b64encode(svg.encode()).decode("ascii")
            bundle["text/html"] = scroll_frame(f"data:image/svg+xml;base64,{data}", graph.name)
    if wanted("text/plain"):
        bundle["text/plain"] = repr(graph)
    return bundle
