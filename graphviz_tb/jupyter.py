"""How a :class:`~graphviz_tb.Graph` shows itself in Jupyter (and anything using IPython's
display protocol).

A graph left as the last expression of a cell is drawn through ``_repr_mimebundle_``: as SVG
by default (``image/svg+xml``: small, static, and kept in the saved notebook), or as the
interactive viewer (``text/html``) after ``graphviz_tb.set_display("html")``.

The viewer is a whole HTML document with its own Content-Security-Policy and scripts.  Pasting
it into the notebook's page would mix those with Jupyter's, so it goes into an ``<iframe>``
whose ``srcdoc`` holds the escaped document and whose ``sandbox`` lets its scripts run but not
reach the notebook.  Nothing is loaded from a CDN: the page carries everything it needs.

The one setting lives in this module because a notebook has one display preference at a time;
it is a frozen :class:`DisplaySettings` replaced whole by :func:`set_display`, so a render never
sees half an update.
"""

from __future__ import annotations

import html
from collections.abc import Container
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from .options import RenderOptions

__all__ = ["DisplaySettings", "Displayable", "get_display", "mimebundle", "set_display",
           "srcdoc_iframe"]

_FORMATS = ("svg", "html")


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


def mimebundle(graph: Displayable, include: Container[str] | None = None,
               exclude: Container[str] | None = None,
               settings: DisplaySettings | None = None) -> dict[str, str]:
    """The display data for ``graph``: one picture (SVG or the framed viewer) and a text line.

    ``include`` and ``exclude`` are IPython's: MIME types the front end wants or refuses.
    Only the chosen format is drawn, so a notebook never pays for both.
    """
    settings = settings or _settings
    picture = "image/svg+xml" if settings.format == "svg" else "text/html"
    wanted = (include is None or picture in include) and not (exclude and picture in exclude)
    bundle: dict[str, str] = {}
    if wanted:
        text = graph.render(format=settings.format, options=settings.options)
        assert isinstance(text, str)
        bundle[picture] = (text if settings.format == "svg"
                           else srcdoc_iframe(text, settings.height, graph.name))
    if (include is None or "text/plain" in include) and not (exclude and "text/plain" in exclude):
        bundle["text/plain"] = repr(graph)
    return bundle
