"""Benchmarks: tbgraph against baselines and peers measured in the same run, in bench/RESULTS.md.

Command-line figures are the wall time of a fresh process (what a user waits for); browser
figures come from Debian's headless Chromium driven by Playwright (see bench/peers.py).  Each is
repeated and reported as a median with min–max.  The baselines and peers run in the same session
on the same graphs:

* parsing the GraphDef protobuf alone in a fresh Python (the floor for any Python tool);
* a flat ``dot -Tsvg`` of the graph, one node per op (what naive Graphviz tools do), with a
  timeout;
* TensorBoard's Graphs dashboard and Netron: time from opening the page to the graph drawn.

Usage: ``python bench/run.py [--graphs NAME ...] [--repeat N] [--quick] [--no-peers]
[--no-browser] [--build-missing]``.  ``make bench`` runs everything.
No test asserts on these numbers: speed is measured here, never in timed tests.
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import json
import math
import os
import platform
import re
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import NamedTuple

import peers
from timing import Timing

HERE = Path(__file__).resolve().parent
GRAPHS = HERE / "graphs"
PY = sys.executable

#: name -> what it is; files are made by bench/make_graphs.py (in this order).
CATALOGUE = {
    "mnist_tf1": "TF1 MNIST training graph",
    "resnet50_infer": "ResNet-50 inference",
    "nasnet_mobile": "NASNet-Mobile inference",
    "bert_train": "12-layer BERT-like training step",
    "resnet50_train": "ResNet-50 training step",
    "nasnet_large_train": "NASNet-Large training step",
    "nasnet_large_step": "NASNet-Large TF2 training step (tf.function, GradientTape, Adam)",
    "synthetic_200k": "synthetic graph composed from the above",
}
#: Where the sections of RESULTS.md that the other scripts write (scale.py, floor.py,
#: tbplugin.py, onnx_sizes.py, versus.py, cold.py) begin and end (this script keeps them).
SCALE_BEGIN, SCALE_END = "<!-- scale: begin -->", "<!-- scale: end -->"
FLOOR_BEGIN, FLOOR_END = "<!-- floor: begin -->", "<!-- floor: end -->"
TBPLUGIN_BEGIN, TBPLUGIN_END = "<!-- tbplugin: begin -->", "<!-- tbplugin: end -->"
ONNX_BEGIN, ONNX_END = "<!-- onnx: begin -->", "<!-- onnx: end -->"
VERSUS_BEGIN, VERSUS_END = "<!-- versus: begin -->", "<!-- versus: end -->"
COLD_BEGIN, COLD_END = "<!-- cold: begin -->", "<!-- cold: end -->"
_SECTIONS = ((FLOOR_BEGIN, FLOOR_END), (SCALE_BEGIN, SCALE_END), (TBPLUGIN_BEGIN, TBPLUGIN_END),
             (ONNX_BEGIN, ONNX_END), (VERSUS_BEGIN, VERSUS_END), (COLD_BEGIN, COLD_END))
#: Files this large are measured once, whatever --repeat says.
BIG_FILE = 20_000_000


class Run(NamedTuple):
    """One fresh process: wall seconds, peak RSS (KiB), whether it finished in time, and its
    user and system CPU seconds (with what it waited for, e.g. ``dot``)."""

    wall: float
    peak_kib: int
    done: bool
    user: float = 0.0
    system: float = 0.0


def run_timed(cmd: list[str], timeout: float | None = None) -> Run:
    """Run a command in a fresh process and measure it (see :class:`Run`)."""
    wrapper = [
        PY, "-c",
        "import resource, subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        "rc = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
        "dt = time.perf_counter() - t\n"
        "use = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(dt, use.ru_maxrss, rc, use.ru_utime, use.ru_stime)\n",
        *cmd,
    ]
    # Its own process group, so a timeout ends the command and what it started (dot), not
    # only the wrapper.
    proc = subprocess.Popen(wrapper, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return Run(timeout or 0.0, 0, False)
    finally:
        if proc.poll() is None:  # interrupted (Ctrl-C): leave nothing behind
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    dt, peak, rc, user, system = stdout.split()
    if rc != "0":
        raise RuntimeError(f"{' '.join(cmd)} failed: {stderr.strip()[-400:]}")
    return Run(float(dt), int(peak), True, float(user), float(system))


def measure(cmd: list[str], repeat: int, timeout: float | None = None) -> Timing:
    timing = Timing()
    for _ in range(repeat):
        dt, peak, done, _, _ = run_timed(cmd, timeout)
        if not done:
            timing.note = f"> {timeout:.0f} s (timed out)"
            timing.limit = timeout or 0.0
            timing.times.clear()
            break
        timing.times.append(dt)
        timing.peak_kib = max(timing.peak_kib, peak)
    return timing


def parse_only(path: Path) -> list[str]:
    """The baseline: a fresh Python that imports the protos and parses the file."""
    code = ("import sys\nfrom tensorboard.compat.proto import graph_pb2\n"
            "graph_pb2.GraphDef.FromString(open(sys.argv[1], 'rb').read())\n")
    return [PY, "-c", code, str(path)]


def flat_dot(path: Path, out_dir: Path) -> list[str]:
    """A flat DOT (one node per op, every input an edge) rendered by dot, as naive tools do."""
    code = (
        "import subprocess, sys\n"
        "from tensorboard.compat.proto import graph_pb2\n"
        "g = graph_pb2.GraphDef.FromString(open(sys.argv[1], 'rb').read())\n"
        "ids = {n.name: i for i, n in enumerate(g.node)}\n"
        "lines = ['digraph G {']\n"
        "lines += [f'n{i} [label=\"{n.op}\"];' for i, n in enumerate(g.node)]\n"
        "for i, n in enumerate(g.node):\n"
        "    for x in n.input:\n"
        "        s = x.lstrip('^').split(':')[0]\n"
        "        if s in ids: lines.append(f'n{ids[s]} -> n{i};')\n"
        "lines.append('}')\n"
        "subprocess.run(['dot', '-Tsvg', '-o', sys.argv[2]], input='\\n'.join(lines).encode(),"
        " check=True)\n"
    )
    return [PY, "-c", code, str(path), str(out_dir / "flat.svg")]


#: How the benches start ``tbgraph``: this tree's modules, unless :func:`use_wheel` said
#: otherwise.  (``-m`` from the repository imports the tree even when the package installed
#: elsewhere comes first on the path: the current directory is searched first.)
_TBGRAPH = [PY, "-m", "graphviz_tb"]


def tbgraph(*args: str) -> list[str]:
    return [*_TBGRAPH, *args]


def use_wheel(into: Path) -> str:
    """Time ``tbgraph`` as ``pip install`` gives it from now on (see :func:`install_wheel`).
    Returns the wheel's file name."""
    wheel, site = install_wheel(into)
    _TBGRAPH[:] = [PY, "-c", site_first(site) + "from graphviz_tb.cli import run; run()"]
    return wheel


def site_first(site: Path) -> str:
    """Python code that puts the package installed under ``site`` first on the path, before
    the current directory (see _TBGRAPH), for a ``python -c`` to run before the rest."""
    return f"import sys; sys.path.insert(0, {str(site)!r}); "


def install_wheel(into: Path) -> tuple[str, Path]:
    """The wheel built from this tree (its compiled accelerator required) and installed under
    ``into`` without its dependencies (this environment has them): its file name, and the
    folder to put first on the path."""
    dist, site = into / "dist", into / "site"
    subprocess.run([PY, "-m", "build", "--wheel", "--outdir", str(dist), str(HERE.parent)],
                   env={**os.environ, "TBGRAPH_COMPILE": "require"}, check=True,
                   capture_output=True)
    (wheel,) = dist.glob("*.whl")
    subprocess.run([PY, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site),
                    str(wheel)], check=True, capture_output=True)
    where = subprocess.run([PY, "-c", site_first(site) + "import graphviz_tb.group.tree as t; "
                            "print(t.__file__)"], capture_output=True, text=True, check=True)
    if not where.stdout.strip().endswith(sysconfig.get_config_var("EXT_SUFFIX") or ".so"):
        raise RuntimeError(f"the installed wheel is not the compiled one: {where.stdout}")
    return wheel.name, site


def op_count(path: Path) -> int:
    out = subprocess.run(tbgraph("info", "--json", str(path)), capture_output=True, text=True,
                         check=True)
    return int(json.loads(out.stdout)["nodes"])


# --------------------------------------------------------------------------- one graph


@dataclass(frozen=True)
class Settings:
    repeat: int
    quick: bool
    peers: bool
    work: Path

    def reps(self, path: Path) -> int:
        return 1 if self.quick or path.stat().st_size > BIG_FILE else self.repeat

    @property
    def flat_dot_timeout(self) -> float:
        return 30 if self.quick else 120

    @property
    def expand_all_timeout(self) -> float:
        return 120 if self.quick else 600

    @property
    def page_timeout(self) -> float:
        return 60 if self.quick else 180


def bench_graph(name: str, path: Path, s: Settings, browser: peers.Browser | None) -> dict:
    """All measurements of one graph."""
    reps = s.reps(path)
    work = s.work
    row: dict = {"name": name, "what": CATALOGUE.get(name, name), "ops": op_count(path)}
    say(f"== {name}: {row['ops']:,} ops, {reps} run(s) each")
    say("   protobuf parse, tbgraph info")
    row["parse"] = measure(parse_only(path), reps)
    row["info"] = measure(tbgraph("info", str(path)), reps)
    say("   render SVG (default view, --expand-all)")
    row["svg"] = measure(tbgraph("render", str(path), "-o", str(work / f"{name}.svg")), reps)
    row["svg_bytes"] = (work / f"{name}.svg").stat().st_size
    row["svg_all"] = measure(
        tbgraph("render", str(path), "--expand-all", "-o", str(work / f"{name}_all.svg")),
        1, timeout=s.expand_all_timeout)
    say("   render HTML")
    html = work / f"{name}.html"
    row["html"], row["html_bytes"] = _html(path, html, reps)
    say("   flat dot -Tsvg")
    row["flat_dot"] = measure(flat_dot(path, work), 1, timeout=s.flat_dot_timeout)
    row["page"] = peers.HtmlResult()
    row["tensorboard"] = row["netron"] = Timing(note="not run")
    if browser is None:
        return row
    if row["html_bytes"]:
        say("   HTML in Chromium: ready, expand")
        row["page"] = peers.measure_html(browser, html, reps, timeout=s.page_timeout)
    if s.peers:
        say("   TensorBoard's Graphs dashboard")
        row["tensorboard"] = peers.measure_tensorboard(browser, path, work, reps,
                                                       timeout=s.page_timeout)
        say("   Netron")
        row["netron"] = peers.measure_netron(browser, path, work, reps, timeout=s.page_timeout)
    return row


def _html(path: Path, out: Path, reps: int) -> tuple[Timing, int]:
    try:
        timing = measure(tbgraph("render", str(path), "-o", str(out)), reps)
    except RuntimeError as exc:
        return Timing(note=f"n/a ({str(exc).splitlines()[-1][:60]})"), 0
    return timing, out.stat().st_size


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- the report


def ratio(a: Timing, b: Timing) -> str:
    """``a`` over ``b`` by median; a bound when either timed out; "–" when either is missing."""
    if a.ok and b.ok:
        return _times(a.median / b.median)
    if a.ok and b.limit:
        return "< " + _times(a.median / b.limit)
    if a.limit and b.ok:
        return "> " + _times(a.limit / b.median)
    return "–"


def _times(x: float) -> str:
    if x >= 10:
        return f"{x:.0f}×"
    if x >= 1:
        return f"{x:.1f}×"
    return f"{x:.2f}×" if x >= 0.01 else f"{x:.3f}×"


def _mb(n: int) -> str:
    if not n:
        return "–"
    return f"{n / 2**20:.1f} MB" if n >= 2**20 else f"{n / 2**10:.0f} kB"


def _expand_cell(t: Timing, group: str, children: int, edges: int) -> str:
    if not group:
        return t.note or "–"
    short = group if len(group) <= 40 else "…" + group[-39:]
    return f"{t.cell()} · `{short}` ({children} children, {edges} edges)"


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    # Said, not required: without Graphviz on PATH tbgraph draws with the port pip installs, and
    # a bench that measured for half an hour must not then fail on its machine line.
    try:
        dot = subprocess.run(["dot", "-V"], capture_output=True, text=True).stderr.strip()
    except OSError:
        dot = "no Graphviz on PATH (tbgraph drew with graphviz-pure)"
    return (f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores ({cpu}), "
            f"{mem:.0f} GiB RAM, Python {platform.python_version()}, {dot}")


def versions(browser: peers.Browser | None) -> str:
    parts = []
    for dist in ("tensorboard", "netron", "playwright", "protobuf"):
        try:
            parts.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{dist} (not installed)")
    if browser is not None:
        parts.insert(0, f"Chromium {browser.version} (headless)")
    return ", ".join(parts)


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def cli_table(rows: list[dict]) -> list[str]:
    lines = [
        "| graph | ops | protobuf parse (baseline) | `tbgraph info` | info ÷ parse "
        "| render SVG (default view) | SVG ÷ parse | render SVG, `--expand-all` "
        "| flat `dot -Tsvg` (baseline) | expand-all ÷ flat dot | peak memory |",
        "|---|--:|---|---|--:|---|--:|---|---|--:|--:|",
    ]
    for r in rows:
        peak = max(r["svg"].peak_kib, r["svg_all"].peak_kib, r["html"].peak_kib) / 1024
        lines.append(
            f"| {r['what']} | {r['ops']:,} | {r['parse'].cell()} | {r['info'].cell()} | "
            f"{ratio(r['info'], r['parse'])} | {r['svg'].cell()} · {_mb(r['svg_bytes'])} | "
            f"{ratio(r['svg'], r['parse'])} | {r['svg_all'].cell()} | {r['flat_dot'].cell()} | "
            f"{ratio(r['svg_all'], r['flat_dot'])} | {peak:.0f} MiB |")
    return lines


def browser_table(rows: list[dict]) -> list[str]:
    lines = [
        "| graph | ops | write HTML | HTML size | HTML ready in Chromium "
        "| expand the largest collapsed group | expand a group of ≤ 200 children "
        "| TensorBoard: graph drawn | ready ÷ TensorBoard | Netron: graph drawn "
        "| ready ÷ Netron |",
        "|---|--:|---|--:|---|---|---|---|--:|---|--:|",
    ]
    for r in rows:
        p: peers.HtmlResult = r["page"]
        lines.append(
            f"| {r['what']} | {r['ops']:,} | {r['html'].cell()} | {_mb(r['html_bytes'])} | "
            f"{p.ready.cell()} | "
            f"{_expand_cell(p.largest, p.largest_group, p.largest_children, p.largest_edges)} | "
            f"{_expand_cell(p.small, p.small_group, p.small_children, p.small_edges)} | "
            f"{r['tensorboard'].cell()} | {ratio(p.ready, r['tensorboard'])} | "
            f"{r['netron'].cell()} | {ratio(p.ready, r['netron'])} |")
    return lines


@dataclass(frozen=True)
class Target:
    """A promise from an issue, checked against this run's numbers."""

    source: str
    text: str
    graph: str
    #: row (and all rows by name) -> (measured value or None, how to show it)
    value: Callable[[dict, dict[str, dict]], tuple[float | None, str]]
    limit: float


def _median(t: Timing, fmt: str = "{:.2f} s") -> tuple[float | None, str]:
    if t.ok:
        return t.median, fmt.format(t.median)
    if t.limit:
        return math.inf, t.note
    return None, t.note or "–"


def _over(a: Timing, b: Timing) -> tuple[float | None, str]:
    if a.ok and b.ok:
        x = a.median / b.median
        return x, f"{x:.1f}× ({a.median:.2f} s ÷ {b.median:.2f} s)"
    return (math.inf, a.note) if a.limit else (None, "–")


def _small_group(p: peers.HtmlResult) -> tuple[float | None, str]:
    value, shown = _median(p.small, "{:.0f} ms")
    if p.small_group and p.small.ok:
        shown += f" (`{p.small_group}`: {p.small_children} children, {p.small_edges} edges)"
    return value, shown


def _other_svg(other: str) -> Callable[[dict, dict[str, dict]], tuple[float | None, str]]:
    def value(row: dict, rows: dict[str, dict]) -> tuple[float | None, str]:
        if other not in rows:
            return None, f"not measured ({other} not in this run)"
        return _over(row["svg"], rows[other]["svg"])
    return value


LARGE = "nasnet_large_train"
STEP = "nasnet_large_step"
TARGETS = [
    Target("issue 2", "`tbgraph info` on NASNet-Large's training step < 2 s", LARGE,
           lambda r, _: _median(r["info"]), 2.0),
    Target("issue 3", "NASNet-Large, default view to SVG < 12× protobuf parse", LARGE,
           lambda r, _: _over(r["svg"], r["parse"]), 12.0),
    Target("issue 3", "NASNet-Large, `--expand-all` to SVG < 120 s", LARGE,
           lambda r, _: _median(r["svg_all"]), 120.0),
    Target("issue 3", "ResNet-50 fully expanded (`--expand-all`) < 10 s — the inference graph; "
           "the training step is in the table above", "resnet50_infer",
           lambda r, _: _median(r["svg_all"]), 10.0),
    Target("issue 4", "NASNet-Large, HTML written < 60 s", LARGE,
           lambda r, _: _median(r["html"]), 60.0),
    Target("issue 4", "NASNet-Large, HTML file < 30 MB", LARGE,
           lambda r, _: ((r["html_bytes"] / 2**20, _mb(r["html_bytes"])) if r["html_bytes"]
                         else (None, "–")), 30.0),
    Target("issue 4", "NASNet-Large, HTML ready in headless Chromium < 5 s", LARGE,
           lambda r, _: _median(r["page"].ready), 5.0),
    Target("issue 4", "NASNet-Large, expanding a group of ≤ 200 children < 300 ms", LARGE,
           lambda r, _: _small_group(r["page"]), 300.0),
    Target("issue 32", "NASNet-Large's TF2 training step (as users trace it), default view to "
           "SVG < 12× protobuf parse", STEP, lambda r, _: _over(r["svg"], r["parse"]), 12.0),
    Target("issue 32", "NASNet-Large's TF2 training step, HTML written < 25× protobuf parse",
           STEP, lambda r, _: _over(r["html"], r["parse"]), 25.0),
    Target("issue 8", "200,000-op graph's default view < 4× the NASNet-Large one's",
           "synthetic_200k", _other_svg(LARGE), 4.0),
]


def targets_table(rows: list[dict]) -> list[str]:
    by_name = {r["name"]: r for r in rows}
    lines = ["| from | target | measured | result |", "|---|---|---|---|"]
    for t in TARGETS:
        row = by_name.get(t.graph)
        if row is None:
            shown, verdict = f"not measured ({t.graph} not in this run)", "–"
        else:
            value, shown = t.value(row, by_name)
            verdict = "–" if value is None else ("pass" if value < t.limit else "**fail**")
        lines.append(f"| {t.source} | {t.text} | {shown} | {verdict} |")
    return lines


def write_results(rows: list[dict], target: Path, started: float, s: Settings,
                  browser: peers.Browser | None, load_start: str) -> None:
    mode = ("`--quick`: one run each, short timeouts" if s.quick
            else f"{s.repeat} runs each (1 for files over {BIG_FILE // 10**6} MB)")
    lines = [
        "# Benchmarks",
        "",
        "Generated by `make bench` (`bench/run.py`); do not edit by hand. Median (min–max) of "
        f"the runs ({mode}); ratios divide medians measured in the same run. Command-line "
        "figures are the wall time of a fresh process; browser figures come from headless "
        "Chromium, a fresh context per run (bench/peers.py says exactly what each one waits "
        "for).",
        "",
        f"Machine: {machine()}.  ",
        f"Software: {versions(browser)}.  ",
        f"Load average (1, 5, 15 min) at the start: {load_start}; at the end: {load_average()}.",
        "",
        "## Command line",
        "",
        *cli_table(rows),
        "",
        "`--expand-all` draws every op, as the flat `dot` baseline does; a `<` ratio means the "
        "baseline timed out, so the true ratio is smaller still.",
        "",
        "## HTML, in the browser",
        "",
        *browser_table(rows),
        "",
    ]
    if browser is None:
        lines += ["Nothing was measured in Chromium in this run.", ""]
    else:
        lines += [
            "tbgraph's page opens from `file://`; *ready* is `window.tbgraph.ready`. Expand "
            "times are measured in the page (`performance.now()` around `await "
            "tbgraph.expand(name)`, after the layout engine is warmed up, as the page does by "
            "itself when idle): first the group with the most children among those the default "
            "view shows collapsed, then, among the groups of up to 200 children anywhere in the "
            "hierarchy, the one with the most children and edges between them (its parent "
            "opened beforehand, untimed). TensorBoard (`tensorboard --logdir`) "
            "and Netron (`netron FILE`) are served on 127.0.0.1 and timed from opening the page "
            "until the graph is drawn; their server start-up is not counted, nor is tbgraph's "
            "HTML generation (in the *write HTML* column).",
            "",
        ]
    lines += [
        "## Targets",
        "",
        *targets_table(rows),
        "",
        f"Total benchmark time: {time.perf_counter() - started:.0f} s.",
        "",
    ]
    kept = "".join(f"\n{part}\n" for part in _sections(target))  # the other scripts' parts
    target.write_text("\n".join(lines) + kept, encoding="utf-8")


def _sections(results: Path) -> list[str]:
    """The sections bench/floor.py and bench/scale.py wrote into RESULTS.md (each between
    its markers), as they are."""
    text = results.read_text(encoding="utf-8") if results.exists() else ""
    out = []
    for begin, end in _SECTIONS:
        start, stop = text.find(begin), text.find(end)
        if 0 <= start < stop:
            out.append(text[start:stop + len(end)])
    return out


def one_graph_arguments(description: str, repeat: int, script: str
                        ) -> tuple[Path, argparse.Namespace]:
    """The command line of a bench on one graph (floor.py, tbplugin.py): the graph (default
    NASNet-Large's training step from ``bench/graphs``), ``--repeat`` and ``--out`` (default
    RESULTS.md); stops, saying what builds it, when the graph is missing."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("graph", nargs="?", default=str(GRAPHS / "nasnet_large_step.pb"))
    parser.add_argument("--repeat", type=int, default=repeat)
    parser.add_argument("--out", default=str(HERE / "RESULTS.md"))
    args = parser.parse_args()
    path = Path(args.graph)
    if not path.is_file():
        sys.exit(f"{script}: {path} does not exist (bench/make_graphs.py builds the bench's)")
    return path, args


def write_section(results: Path, text: str, begin: str, end: str) -> None:
    """Put a section (``text``, from ``begin`` to ``end``) in RESULTS.md in place of the
    previous one, or at the end."""
    old = results.read_text(encoding="utf-8") if results.exists() else "# Benchmarks\n"
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    if pattern.search(old):
        new = pattern.sub(lambda _: text, old)
    else:
        new = old.rstrip("\n") + "\n\n" + text + "\n"
    results.write_text(new, encoding="utf-8")


# --------------------------------------------------------------------------- main


def build_missing(names: list[str]) -> None:
    missing = [n for n in CATALOGUE if n in names and not (GRAPHS / f"{n}.pb").exists()]
    if missing:
        say(f"building {', '.join(missing)} with TensorFlow (bench/make_graphs.py)")
        subprocess.run([PY, str(HERE / "make_graphs.py"), "--only", *missing], check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", nargs="*", choices=list(CATALOGUE), metavar="NAME",
                        help=f"which graphs (default: all): {', '.join(CATALOGUE)}")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one run each, short timeouts")
    parser.add_argument("--no-peers", action="store_true",
                        help="leave out TensorBoard and Netron")
    parser.add_argument("--no-browser", action="store_true",
                        help="leave out everything measured in Chromium")
    parser.add_argument("--build-missing", action="store_true",
                        help="first build missing graphs with bench/make_graphs.py")
    parser.add_argument("--out", default=str(HERE / "RESULTS.md"))
    args = parser.parse_args()
    wanted = args.graphs or list(CATALOGUE)
    if args.build_missing:
        build_missing(wanted)
    names = [n for n in wanted if (GRAPHS / f"{n}.pb").exists()]
    if not names:
        say("no graphs in bench/graphs; run: python bench/make_graphs.py")
        return 1
    if len(names) < len(wanted):
        say(f"missing (not measured): {', '.join(n for n in wanted if n not in names)}")
    # Time the tool as a regular install runs it: pip compiles bytecode when it installs a
    # package, an editable checkout has none until run, and under PYTHONDONTWRITEBYTECODE it
    # would compile every module on every start (0.15 s of each measured command).
    compileall.compile_dir(str(HERE.parent / "graphviz_tb"), quiet=1)
    started, load_start = time.perf_counter(), load_average()
    browser = peers.browser_or_none(not args.no_browser, say)
    rows = []
    try:
        with tempfile.TemporaryDirectory(prefix="tbgraph-bench-") as tmp:
            s = Settings(args.repeat, args.quick, not args.no_peers, Path(tmp))
            for name in names:
                rows.append(bench_graph(name, GRAPHS / f"{name}.pb", s, browser))
            write_results(rows, Path(args.out), started, s, browser, load_start)
    finally:
        if browser is not None:
            browser.close()
    print(Path(args.out).read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
