"""What the worker draws for the tab: a graph's viewer page, or the diff of two runs' graphs.

Each is a job body for :class:`.renders.Renders`: it reports its stage on the job as it goes
(reading, grouping, laying out with the pipeline's own progress, writing the page) and returns
the page's bytes.  Everything is done through ``graphviz_tb.api``, as a user's script would,
from the runs' blobs (:mod:`.runs`); the page is the same viewer ``tbgraph render -o x.html``
writes, with its costs' step picker and colourings when the run recorded run metadata.
"""

from __future__ import annotations

import hashlib
import re
from typing import cast

from .. import api
from ..options import RenderOptions
from ..version import __version__
from .renders import Job, Work
from .runs import RunData

__all__ = ["content_key", "diff_work", "page_policy", "view_work"]

_POLICY = re.compile(rb'<meta http-equiv="Content-Security-Policy" content="([^"]*)">')


def content_key(*parts: object) -> str:
    """The key of a page drawn from ``parts`` (what it is, its runs' digests, its choices)."""
    text = "\0".join(str(part) for part in (__version__, *parts))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def view_work(data: RunData, index: int | None, title: str) -> Work:
    """The viewer page of graph ``index`` of a run (None: the one ``load`` picks)."""

    def work(job: Job) -> bytes:
        job.stage = "reading"
        graph = api.load(data.logged, graph=index)
        return _draw(job, graph, RenderOptions(title=title))

    return work


def diff_work(new: RunData, new_index: int | None, old: RunData, old_index: int | None,
              title: str) -> Work:
    """The diff page of a run's graph (``new``) against another run's (``old``)."""

    def work(job: Job) -> bytes:
        job.stage = "reading"
        before = api.load(old.logged, graph=old_index)
        after = api.load(new.logged, graph=new_index)
        job.stage = "comparing"
        changes = api.diff(before, after)
        return _draw(job, changes.graph, RenderOptions(color_by="diff", title=title))

    return work


def _draw(job: Job, graph: api.Graph, options: RenderOptions) -> bytes:
    job.stage = "grouping"
    graph.hierarchy(options).settle()  # before the layout: the progress bar is the layout's
    job.stage = "laying out"
    page = cast("str", graph.render(format="html", options=options, progress=job.progress))
    return page.encode("utf-8")


def page_policy(page: bytes) -> str:
    """The content security policy a viewer page states in its ``<meta>``, to send as a
    header too (a header can also say who may frame the page: TensorBoard alone)."""
    found = _POLICY.search(page[:4096])
    policy = found.group(1).decode("ascii") if found else "default-src 'none'"
    return f"{policy}; frame-ancestors 'self'"
