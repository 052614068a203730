"""The TensorBoard plugin: the ``tbgraph`` tab and its data routes.

TensorBoard finds it through the ``tensorboard_plugins`` entry point and imports this module
when it starts, so the module imports nothing heavy: TensorBoard's own plugin API (already
loaded), werkzeug (TensorBoard's server) and ``graphviz_tb.api``, which loads the pipeline only
when a graph is first read (when the tab asks for its runs).

Routes, under ``/data/plugin/tbgraph/``:

* ``index.js``: the tab, an ES module TensorBoard runs in an iframe (a build product, bundled
  from ``src/tab.js`` with the viewer);
* ``runs``: JSON, every run with graphs: its graphs (by index), their tags and steps, and its
  recorded costs;
* ``view?run=R&graph=N``: the viewer page of graph N of run R (``graph`` left out: the graph
  ``tbgraph render`` would pick); ``&download=1`` sends it as a file;
* ``diff?run=A&against=B`` (``&graph=N&against_graph=M``): the diff page, B's graph as the old
  version and A's as the new;
* ``progress?run=R&graph=N`` or ``progress?run=A&against=B``: JSON, how far that page's render
  got; asking starts it, and the tab polls it to show progress.

A run is looked up among the runs TensorBoard's data provider lists (:mod:`.runs`); anything
else gets a 4xx and reads nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tensorboard import plugin_util
from tensorboard.backend import http_util
from tensorboard.plugins import base_plugin
from werkzeug import wrappers

from ..logged import GRAPH_PLUGINS
from .pages import content_key, diff_work, page_policy, view_work
from .renders import Job, Renders
from .runs import RunData, Runs

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

__all__ = ["TbgraphPlugin"]

#: The tab's script, bundled from ``src/tab.js`` by ``scripts/build-viewer.mjs``.
TAB_SCRIPT = Path(__file__).with_name("tab.js")
_INDEX = re.compile(r"\d{1,9}")
_UNSAFE_FILE_CHARS = re.compile(r"[^A-Za-z0-9._-]+")


class _Refused(Exception):
    """A request that names no run, or no graph of it: its status and one line."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class TbgraphPlugin(base_plugin.TBPlugin):
    """tbgraph's viewer as a TensorBoard dashboard, reading graphs through the data provider.

    Parameters
    ----------
    context:
        TensorBoard's ``TBContext``; only its ``data_provider`` is used.
    """

    plugin_name = "tbgraph"

    def __init__(self, context: base_plugin.TBContext) -> None:
        self._runs = Runs(context.data_provider)
        self._renders = Renders()

    def get_plugin_apps(self) -> dict[str, WSGIApplication]:
        return {"/index.js": _wsgi(self._tab), "/runs": _wsgi(self._list),
                "/view": _wsgi(self._view), "/diff": _wsgi(self._diff),
                "/progress": _wsgi(self._progress)}

    def is_active(self) -> bool:
        """Never asked while a run holds a graph: TensorBoard marks the tab active when a run
        logged any of :meth:`data_plugin_names` (its own Graphs dashboard works so too), and
        asks this only otherwise, when there is nothing to show."""
        return False

    def data_plugin_names(self) -> tuple[str, ...]:
        return GRAPH_PLUGINS

    def frontend_metadata(self) -> base_plugin.FrontendMetadata:
        return base_plugin.FrontendMetadata(es_module_path="/index.js", tab_name="tbgraph")

    # ------------------------------------------------------------------ routes

    def _tab(self, request: wrappers.Request) -> wrappers.Response:
        if not TAB_SCRIPT.is_file():
            return _text(request, 500, "the tbgraph tab is not built: run 'make viewer' in "
                                       "the graphviz_tb source tree")
        return http_util.Respond(request, TAB_SCRIPT.read_bytes(),
                                 "text/javascript; charset=utf-8")

    def _list(self, request: wrappers.Request) -> wrappers.Response:
        ctx, experiment = _context(request)
        runs = [self._runs.listing(data) for data in self._runs.all(ctx, experiment)]
        return http_util.Respond(request, {"runs": runs}, "application/json")

    def _view(self, request: wrappers.Request) -> wrappers.Response:
        return self._answer(request, diff=False, page=True)

    def _diff(self, request: wrappers.Request) -> wrappers.Response:
        return self._answer(request, diff=True, page=True)

    def _progress(self, request: wrappers.Request) -> wrappers.Response:
        return self._answer(request, diff="against" in request.args, page=False)

    def _answer(self, request: wrappers.Request, *, diff: bool, page: bool
                ) -> wrappers.Response:
        """The page a request asks for (waiting for its render), or how far its render got."""
        try:
            job = self._job(request, diff)
        except _Refused as refused:
            return _text(request, refused.code, str(refused))
        if page:
            return _page(request, job)
        return http_util.Respond(request, job.status(), "application/json")

    # ------------------------------------------------------------------ jobs

    def _job(self, request: wrappers.Request, diff: bool) -> Job:
        """The render a request asks for (a graph, or a diff against another run's), queued
        unless it is done or under way."""
        ctx, experiment = _context(request)
        data, index, name = self._graph(ctx, experiment, request, "run", "graph")
        if not diff:
            key = content_key("view", data.run, index, data.digest())
            return self._renders.submit(key, name, view_work(data, index, name))
        old, old_index, old_name = self._graph(ctx, experiment, request, "against",
                                               "against_graph")
        title = f"{name} against {old_name}"
        key = content_key("diff", data.run, index, data.digest(), old.run, old_index,
                          old.digest())
        return self._renders.submit(key, title, diff_work(data, index, old, old_index, title))

    def _graph(self, ctx: Any, experiment: str, request: wrappers.Request, run_arg: str,
               graph_arg: str) -> tuple[RunData, int | None, str]:
        """The run a request names under ``run_arg``, the graph index under ``graph_arg``
        (None when left out) and the graph's name; refused when either is not there."""
        run = request.args.get(run_arg)
        if run is None:
            raise _Refused(400, f"query parameter {run_arg!r} is required")
        data = self._runs.run(ctx, experiment, run)
        if data is None:
            raise _Refused(404, f"no run {run[:200]!r} with a graph in this TensorBoard")
        listing = self._runs.listing(data)
        if listing.get("error"):
            raise _Refused(404, listing["error"])
        text = request.args.get(graph_arg)
        if text is None:
            return data, None, data.run
        if not _INDEX.fullmatch(text):
            raise _Refused(400, f"query parameter {graph_arg!r} is a graph's index (0, 1, …)")
        graphs = listing["graphs"]
        if int(text) >= len(graphs):
            raise _Refused(404, f"run {data.run!r} has {len(graphs)} graph(s); there is no "
                                f"graph {text}")
        return data, int(text), graphs[int(text)]["name"]


def _wsgi(handler: Callable[[wrappers.Request], wrappers.Response]) -> WSGIApplication:
    """``handler`` as the WSGI application TensorBoard mounts."""

    def application(environ: WSGIEnvironment, start_response: StartResponse
                    ) -> Iterable[bytes]:
        return handler(wrappers.Request(environ))(environ, start_response)

    return application


def _context(request: wrappers.Request) -> tuple[Any, str]:
    return plugin_util.context(request.environ), plugin_util.experiment_id(request.environ)


def _text(request: wrappers.Request, code: int, message: str) -> wrappers.Response:
    return http_util.Respond(request, message + "\n", "text/plain", code=code)


def _page(request: wrappers.Request, job: Job) -> wrappers.Response:
    """The finished page (waiting for it), or the one line saying why there is none."""
    job.finished.wait()
    if job.page is None:
        return _text(request, job.code, job.error or "the render failed")
    headers = [("Content-Security-Policy", page_policy(job.page)),
               ("X-Content-Type-Options", "nosniff"),
               ("Cache-Control", "no-cache, must-revalidate")]
    if request.args.get("download"):
        stem = _UNSAFE_FILE_CHARS.sub("_", job.title).strip("._")[:80] or "graph"
        headers.append(("Content-Disposition", f'attachment; filename="{stem}.html"'))
    return wrappers.Response(job.page, status=200, headers=headers,
                             content_type="text/html; charset=utf-8")
