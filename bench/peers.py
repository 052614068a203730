"""The browser half of the benchmarks: tbgraph's HTML page and its peers, in one headless Chromium.

Every tool is measured the same way: a fresh browser context per repetition, the clock started
just before ``page.goto`` and stopped when the tool's own "drawn" signal appears in the page.

* **tbgraph's HTML**, opened from ``file://``: ``window.tbgraph.ready`` (the page sets
  ``data-ready`` on ``<html>`` at the same moment).  Then, in the page, ``performance.now()``
  around ``await window.tbgraph.expand(name)`` for the group with the most children among those
  the default view shows collapsed, and for the group of at most 200 children (the HTML issue's
  target) with the most children plus edges between them.  The layout engine is compiled first
  (``tbgraph.warmUp()``; the page does the same by itself once idle), so the times are what a
  person waits for after a double-click, not the one-off WebAssembly compile.
* **TensorBoard's Graphs dashboard**: ``tensorboard --logdir`` on a logdir the bench writes (one
  event file holding the GraphDef), served on 127.0.0.1; drawn when the graph scene holds node
  groups (``tf-graph-scene g.node``, found through the shadow DOM by Playwright's CSS engine).
* **Netron**: ``netron FILE`` served on 127.0.0.1; drawn when the page has left its loading
  screen (``body.default``) and the graph has nodes (``#target g.node``).  Netron asks first-time
  visitors for cookie consent before opening anything; the bench sets that cookie up front, as
  for any returning user.

Servers listen on the loopback interface only, are waited for with a bound, and are killed (their
whole process group) in ``finally``.  Chromium resolves no host but the loopback, so nothing
leaves the machine; requests for other hosts are counted and reported.  A page that does not
finish in time is reported as ``> N s (timed out)``, one that crashes (a renderer out of memory)
as ``failed: …``; either ends that tool's repetitions for the graph.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from timing import Timing

from graphviz_tb.write.page import page_data

__all__ = ["Browser", "HtmlResult", "browser_or_none", "drawn", "measure_html", "measure_netron",
           "measure_tensorboard", "page_ready", "tensorboard"]

BROWSER_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
    # No host resolves but the loopback: a page that reaches for the network fails at once.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
]
VIEWPORT = {"width": 1280, "height": 860}
LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}
#: How long a server may take to start (TensorBoard imports TensorFlow when it is installed).
SERVER_START_S = 180.0
#: What "up to 200 children" means in the HTML issue's target.
SMALL_GROUP = 200

_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


# --------------------------------------------------------------------------- the browser


class Browser:
    """Debian's headless Chromium driven by Playwright; one per benchmark run."""

    def __init__(self) -> None:
        executable = shutil.which("chromium")
        if executable is None:
            raise RuntimeError("no chromium on PATH (apt-get install chromium)")
        try:
            from playwright.sync_api import sync_playwright
        except ImportError as exc:
            raise RuntimeError("playwright is not installed (pip install -e '.[test]')") from exc
        self._pw = sync_playwright().start()
        try:
            self._browser = self._pw.chromium.launch(
                executable_path=executable, headless=True, args=BROWSER_ARGS)
        except Exception:
            self._pw.stop()
            raise
        self.version = self._browser.version

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._browser.close()
        self._pw.stop()

    @contextlib.contextmanager
    def page(self, cookies: list[dict] | None = None) -> Iterator[tuple[Any, list[str]]]:
        """A page in a fresh context, and the list it appends non-loopback request URLs to."""
        context = self._browser.new_context(viewport=VIEWPORT)
        outside: list[str] = []

        def note(request: Any) -> None:
            parts = urlsplit(request.url)
            if parts.scheme in {"http", "https", "ws", "wss"} and parts.hostname not in LOOPBACK:
                outside.append(request.url)

        context.on("request", note)
        try:
            if cookies:
                context.add_cookies(cookies)
            yield context.new_page(), outside
        finally:
            context.close()


def browser_or_none(wanted: bool, say: Any) -> Browser | None:
    """A Browser when ``wanted`` and one can start; else None, ``say`` told why (the bench's
    command-line columns are still measured without one)."""
    if not wanted:
        return None
    try:
        return Browser()
    except Exception as exc:
        say(f"no browser measurements: {exc}")
        return None


def _timed_out(timeout: float) -> Timing:
    return Timing(note=f"> {timeout:.0f} s (timed out)", limit=timeout)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:80]


class PageFailed(Exception):
    """The page died or navigation failed (a renderer crash, out of memory, a refused load)."""


def _timed_goto(page: Any, url: str, selector: str, timeout: float) -> float | None:
    """Seconds from navigation to ``selector`` attached (piercing shadow DOM), None on timeout."""
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    start = time.perf_counter()
    try:
        page.goto(url, wait_until="commit", timeout=timeout * 1000)
        left = max(1.0, timeout - (time.perf_counter() - start))
        page.wait_for_selector(selector, state="attached", timeout=left * 1000)
    except PlaywrightTimeout:
        return None
    except PlaywrightError as exc:
        raise PageFailed(_first_line(exc).split(": ", 1)[-1]) from exc
    return time.perf_counter() - start


# --------------------------------------------------------------------------- tbgraph's HTML


#: tbgraph's page sets ``data-ready`` on ``<html>`` when ready; ``.fatal`` is its error screen.
READY = 'html[data-ready="true"], .fatal'


def page_ready(page: Any, url: str, timeout: float) -> Timing:
    """Open tbgraph's page at ``url`` in ``page``: one time to ``window.tbgraph.ready``, or no
    time and a note saying why (timed out, crashed, or the page's own error)."""
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        seconds = _timed_goto(page, url, READY, timeout)
    except PageFailed as exc:
        return Timing(note=f"failed: {exc}")
    if seconds is None:
        return _timed_out(timeout)
    if not page.evaluate("window.tbgraph && window.tbgraph.ready === true"):
        why = page.evaluate("window.tbgraph && window.tbgraph.error") or "; ".join(errors)
        return Timing(note=f"failed: {str(why)[:80]}")
    return Timing(times=[seconds])


@dataclass
class HtmlResult:
    """tbgraph's page in the browser: time to ready and two expand times (ms, in the page)."""

    ready: Timing = field(default_factory=Timing)
    largest: Timing = field(default_factory=lambda: Timing(unit="ms"))
    largest_group: str = ""
    largest_children: int = 0
    largest_edges: int = 0
    small: Timing = field(default_factory=lambda: Timing(unit="ms"))
    small_group: str = ""
    small_children: int = 0
    small_edges: int = 0
    outside: int = 0


@dataclass(frozen=True)
class GroupInfo:
    """One group of a tbgraph page's hierarchy: direct children, edges among them, parent, depth."""

    children: int
    edges: int
    parent: str
    depth: int


def page_groups(html_path: Path) -> dict[str, GroupInfo]:
    """Every group in a tbgraph HTML page's embedded data, by full name."""
    data = page_data(html_path.read_text(encoding="utf-8"))
    parent, kind, nb, ns = data["parent"], data["kind"], data["nb"], data["ns"]
    n = len(parent)
    names, depth, children, edges = [""] * n, [0] * n, [0] * n, [0] * n
    for i in range(1, n):
        names[i] = ns[i] if nb[i] < 0 else f"{names[nb[i]]}/{ns[i]}"
        depth[i] = depth[parent[i]] + 1
        children[parent[i]] += 1
    for g in data["ag"]:  # each aggregated edge is drawn inside group g
        edges[g] += 1
    return {names[i]: GroupInfo(children[i], edges[i], names[parent[i]], depth[i])
            for i in range(1, n) if kind[i] > 0}


#: Milliseconds an expand may take before the bench gives up on it.
EXPAND_LIMIT_MS = 60_000
_EXPAND_MS = """async ([name, limit]) => {
  const t = performance.now();
  const late = new Promise((resolve) => setTimeout(() => resolve("late"), limit));
  const ok = await Promise.race([window.tbgraph.expand(name), late]);
  return ok === "late" ? -2 : ok === false ? -1 : performance.now() - t;
}"""


def _expand_ms(page: Any, name: str) -> float:
    ms = page.evaluate(_EXPAND_MS, [name, EXPAND_LIMIT_MS])
    if ms == -2:
        raise RuntimeError(f"> {EXPAND_LIMIT_MS / 1000:.0f} s (gave up)")
    if ms < 0:
        raise RuntimeError("the page reported a layout failure")
    return float(ms)


def _pick_groups(page: Any, groups: dict[str, GroupInfo], result: HtmlResult) -> None:
    """The largest group the default view shows collapsed; the largest with ≤ 200 children.

    The second is looked for in the whole hierarchy, the default view of a big graph seldom
    showing a group of that size (a person opens their way to it).  "Largest" there means the
    most children plus edges among them, the work of a layout: a group of 190 unconnected ops
    is quicker to lay out than one of 150 wired ones.
    """
    drawn = page.evaluate("window.tbgraph.boxes().filter((b) => !b.open).map((b) => b.name)")
    collapsed = sorted({n for n in drawn if n in groups},
                       key=lambda n: (-groups[n].children, n))
    if collapsed:
        result.largest_group = collapsed[0]
        result.largest_children = groups[collapsed[0]].children
        result.largest_edges = groups[collapsed[0]].edges
    small = sorted((n for n, g in groups.items() if g.children <= SMALL_GROUP),
                   key=lambda n: (-groups[n].children - groups[n].edges, groups[n].depth, n))
    if small:
        result.small_group = small[0]
        result.small_children = groups[small[0]].children
        result.small_edges = groups[small[0]].edges


def _expand_small(page: Any, name: str, groups: dict[str, GroupInfo]) -> float:
    """Open the way to ``name`` and show it collapsed (untimed), then time its expand."""
    parent = groups[name].parent
    if parent:
        page.evaluate("(n) => window.tbgraph.expand(n)", parent)
    page.evaluate("(n) => window.tbgraph.collapse(n)", name)
    return _expand_ms(page, name)


def measure_html(browser: Browser, html_path: Path, repeat: int,
                 timeout: float = 120.0) -> HtmlResult:
    """Open tbgraph's page ``repeat`` times: time to ready, then the two expands.

    Each repetition is a fresh page, so no layout is cached from an earlier one.  In it, the
    largest collapsed group is expanded from the default view, collapsed again, and then the
    ≤ 200-children group is revealed and expanded.
    """
    result = HtmlResult()
    url = html_path.resolve().as_uri()
    groups = page_groups(html_path)
    for rep in range(repeat):
        with browser.page() as (page, outside):
            ready = page_ready(page, url, timeout)
            result.outside += len(outside)
            if not ready.ok:
                result.ready = ready
                break
            result.ready.times += ready.times
            if rep == 0:
                _pick_groups(page, groups, result)
                for timing, name in ((result.largest, result.largest_group),
                                     (result.small, result.small_group)):
                    if not name:
                        timing.note = "no such group"
            try:
                page.evaluate("window.tbgraph.warmUp()")
            except Exception as exc:
                result.largest.note = result.small.note = f"failed: {_first_line(exc)}"
                break
            for timing, name, expand in (
                    (result.largest, result.largest_group, _expand_ms),
                    (result.small, result.small_group,
                     lambda p, n: _expand_small(p, n, groups))):
                if not name or timing.note:
                    continue
                try:
                    timing.times.append(expand(page, name))
                    page.evaluate("(n) => window.tbgraph.collapse(n)", name)
                except Exception as exc:  # a layout failure in the page is a result
                    timing.times.clear()
                    timing.note = f"failed: {_first_line(exc)}"
    return result


# --------------------------------------------------------------------------- servers


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> bytes | None:
    try:
        with _NO_PROXY.open(url, timeout=5) as response:
            return response.read()
    except OSError:
        return None


@contextlib.contextmanager
def _server(cmd: list[str], log: Path, up: Any, what: str,
            start_s: float = SERVER_START_S) -> Iterator[None]:
    """Run ``cmd`` in its own process group until the block ends; wait (at most ``start_s``)
    for ``up()``.  It polls every 0.1 s: bench/cold.py counts the start-up, to that grain."""
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + start_s
        while not up():
            if proc.poll() is not None:
                tail = log.read_text(errors="replace").strip().splitlines()[-1:]
                raise RuntimeError(f"{what} exited ({proc.returncode}): {' '.join(tail)[:100]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not start in {start_s:.0f} s")
            time.sleep(0.1)
        yield
    finally:
        _kill(proc)


def _kill(proc: subprocess.Popen) -> None:
    """End the server and whatever it started (its own process group), politely first."""
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
        if proc.poll() is not None:
            break
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(wait)
    # Children that outlived the leader (TensorBoard's data server) share its group id.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _tool(name: str) -> str:
    """A console script from this venv (beside the running Python), else from PATH."""
    local = Path(sys.executable).with_name(name)
    found = str(local) if local.exists() else shutil.which(name)
    if found is None:
        raise RuntimeError(f"{name} is not installed (pip install -e '.[bench]')")
    return found


def drawn(browser: Browser, url: str, selector: str, repeat: int, timeout: float,
           cookies: list[dict] | None = None, failed: str = "") -> Timing:
    """Open ``url`` ``repeat`` times, each in a fresh context, until ``selector`` appears.

    ``failed`` is a selector that means the tool gave up (an error screen): it ends the wait.
    """
    timing = Timing()
    outside = 0
    wanted = f"{selector}, {failed}" if failed else selector
    for _ in range(repeat):
        with browser.page(cookies) as (page, sent):
            try:
                seconds = _timed_goto(page, url, wanted, timeout)
            except PageFailed as exc:
                timing = Timing(note=f"failed: {exc}")
                break
            finally:
                outside += len(sent)
            if seconds is None:
                timing = _timed_out(timeout)
                break
            if failed and page.locator(failed).count():
                text = " ".join(page.locator(failed).first.inner_text().split())[:80]
                timing = Timing(note=f"failed: {text or 'error screen'}")
                break
            timing.times.append(seconds)
    if outside:
        timing.note = f"{timing.note} ({outside} requests to other hosts blocked)".strip()
    return timing


# --------------------------------------------------------------------------- TensorBoard


def write_logdir(graph_pb: Path, run_dir: Path) -> None:
    """One event file holding the GraphDef, as ``tf.summary`` / ``FileWriter.add_graph`` write.

    TensorBoard's own writer does it, in a separate Python: it imports TensorFlow when installed
    (for its file system layer), which the measuring process is better without.
    """
    run_dir.mkdir(parents=True, exist_ok=True)
    code = (
        "import sys, time\n"
        "from tensorboard.compat.proto import event_pb2\n"
        "from tensorboard.summary.writer.event_file_writer import EventFileWriter\n"
        "writer = EventFileWriter(sys.argv[2])\n"
        "graph_def = open(sys.argv[1], 'rb').read()\n"
        "writer.add_event(event_pb2.Event(wall_time=time.time(), step=0, graph_def=graph_def))\n"
        "writer.close()\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(graph_pb), str(run_dir)],
                          capture_output=True, text=True, check=False)
    if done.returncode or not any(run_dir.glob("events.out.tfevents.*")):
        raise RuntimeError(f"writing the event file failed: {done.stderr.strip()[-200:]}")


#: The Graphs dashboard has drawn: node groups in its graph scene (inside shadow roots).
TB_DRAWN = "tf-graph-scene g.node"


@contextlib.contextmanager
def tensorboard(logdir: Path, run: str, log: Path,
                start_s: float = SERVER_START_S) -> Iterator[str]:
    """``tensorboard --logdir`` on a free loopback port until the block ends; yields the Graphs
    dashboard's address for ``run`` once the server lists that run's graph (opened sooner, the
    dashboard says there is no graph and waits for its next reload, 30 s on)."""
    base = f"http://127.0.0.1:{_free_port()}"

    def up() -> bool:
        body = _get(f"{base}/data/plugin/graphs/info")
        return body is not None and run.encode() in body

    cmd = [_tool("tensorboard"), "--logdir", str(logdir), "--host", "127.0.0.1",
           "--port", base.rsplit(":", 1)[1]]
    with _server(cmd, log, up, "tensorboard", start_s):
        yield f"{base}/#graphs&run={run}"


def measure_tensorboard(browser: Browser, graph_pb: Path, work: Path, repeat: int,
                        timeout: float = 180.0) -> Timing:
    """TensorBoard's Graphs dashboard: page opened -> graph drawn, on a logdir made here."""
    run = graph_pb.stem
    logdir = work / f"tb-{run}"
    try:
        write_logdir(graph_pb, logdir / run)
        with tensorboard(logdir, run, work / f"tb-{run}.log") as url:
            return drawn(browser, url, TB_DRAWN, repeat, timeout)
    except RuntimeError as exc:
        return Timing(note=f"n/a ({exc})")


# --------------------------------------------------------------------------- Netron


def measure_netron(browser: Browser, graph_pb: Path, work: Path, repeat: int,
                   timeout: float = 180.0) -> Timing:
    """Netron: page opened -> graph drawn, serving the GraphDef file itself."""
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    cmd = [_tool("netron"), str(graph_pb), "--host", "127.0.0.1", "--port", str(port),
           "--verbosity", "quiet"]
    consent = [{"name": "consent", "value": str(int(time.time() * 1000)), "url": base}]
    try:
        with _server(cmd, work / f"netron-{graph_pb.stem}.log", lambda: _get(base) is not None,
                     "netron"):
            return drawn(browser, f"{base}/", "body.default #target g.node", repeat, timeout,
                         cookies=consent, failed="body.alert #message-text")
    except RuntimeError as exc:
        return Timing(note=f"n/a ({exc})")
