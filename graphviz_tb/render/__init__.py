"""Rendering: the laid-out scene as SVG, PNG, PDF, DOT or the interactive HTML viewer.

:func:`render_bytes` is the one entry point; :func:`write_output` writes atomically (a temp file
in the same directory, then a rename), so a failure never leaves a half-written file.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from .._gc import paused_gc
from ..errors import GraphvizTbError

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..costs import CostSet
    from ..hierarchy import Hierarchy
    from ..options import RenderOptions

__all__ = ["FORMATS", "format_for", "render_bytes", "write_output"]

FORMATS = ("svg", "png", "pdf", "dot", "html")


def format_for(path: str | os.PathLike[str] | None, fmt: str | None) -> str:
    """The output format: ``fmt`` if given, else the extension of ``path``, else SVG."""
    if fmt:
        fmt = fmt.lower().lstrip(".")
    elif path is not None:
        fmt = Path(path).suffix.lower().lstrip(".") or "svg"
        if fmt == "htm":
            fmt = "html"
        elif fmt == "gv":
            fmt = "dot"
    else:
        fmt = "svg"
    if fmt not in FORMATS:
        raise GraphvizTbError(f"unknown output format {fmt!r}; use one of: {', '.join(FORMATS)}")
    return fmt


@paused_gc
def render_bytes(h: Hierarchy, fmt: str, options: RenderOptions, *, title: str = "graph",
                 progress: Callable[[int, int], None] | None = None,
                 costs: CostSet | None = None) -> bytes:
    """Draw hierarchy ``h`` in ``fmt`` with ``options``; deterministic for the same inputs.

    ``title`` names the page of the HTML viewer (the static formats draw ``options.title``).
    ``costs`` are the recorded steps of the graph's run: the static formats colour by the
    chosen one when ``options.color_by`` is a cost mode; the viewer embeds them all.
    """
    # The writers are imported here, each when its format is asked for: `tbgraph --help` and
    # `import graphviz_tb` stay free of the layout and drawing modules.
    from .. import engine
    from ..costs import Totals, metric_of
    from ..scene import build_scene

    if fmt in engine.DRAW_FORMATS:
        engine.current().require(fmt)  # before the layout: a PDF without `dot` fails at once
    if fmt == "html":
        from .html import render_html  # only this format needs the viewer's writer

        return render_html(h, options, title=title, progress=progress,
                           costs=costs).encode("utf-8")
    metric = metric_of(options.color_by)
    totals = tally = None
    if metric is not None:
        if costs is None:
            raise GraphvizTbError(f"--color-by {options.color_by} needs recorded costs (run "
                                  "metadata or a profiler capture), and there are none")
        totals = Totals(h, costs.current, metric)
    elif options.color_by == "diff":
        from ..view import DiffTally  # as above

        tally = DiffTally(h)
    notes = totals.label if totals is not None else tally.note if tally is not None else None
    scene = build_scene(h, options, progress=progress, notes=notes,
                        weigh=tally.opening if tally is not None else None,
                        titles=totals.label if totals is not None else None)
    from .dot import scene_to_dot  # as above: imported for the formats that need it

    doc = scene_to_dot(h, scene, options, totals, diff=tally)
    if fmt == "dot":
        return doc.text.encode("utf-8")
    from .svg import run_neato  # as above

    return run_neato(doc, fmt)


def write_output(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: temp file beside it, fsync, rename.

    Raises
    ------
    GraphvizTbError
        The file cannot be written (no such directory, a directory in the way, no permission,
        disk full); nothing is left behind, and an existing file keeps its old content.
    """
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise GraphvizTbError(f"{target}: the directory {directory} does not exist")
    if target.is_dir():
        raise GraphvizTbError(f"{target} is a directory; give a file name to write")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise GraphvizTbError(f"{target}: cannot write it ({exc.strerror or exc})") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise GraphvizTbError(f"{target}: cannot write it ({exc.strerror or exc})") from None
        raise
