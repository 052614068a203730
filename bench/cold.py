"""tbgraph against TensorBoard from a cold start: the time to the first picture, each tool
started fresh, side by side on the same graphs (issue 47).

What the clock counts (each tool's whole path from a command to a picture):

* **TensorBoard**: from starting ``tensorboard --logdir … --host 127.0.0.1 --port <free>``
  until its Graphs dashboard draws its first node (``tf-graph-scene g.node``).  The logdir (one
  event file holding the GraphDef) is written beforehand, untimed.  The server is polled every
  0.1 s until it lists the run's graph, then the dashboard is opened; opened sooner, it would say
  there is no graph until its next reload, 30 s on.  Both parts are reported.
* **tbgraph's HTML**: from starting ``tbgraph render FILE -o out.html`` until it exits
  (*written*), then the ``file://`` page in the browser until ``window.tbgraph.ready``
  (*ready*); the time is their sum, per round.
* **tbgraph's SVG**: the ``tbgraph render FILE -o out.svg`` process (the default view).

tbgraph runs as ``pip install`` gives it: the wheel built from this tree, with its compiled
accelerator, installed into a temporary folder (``--tree`` times this tree's pure-Python
modules instead).

Chromium is launched once beforehand for both, untimed; every page gets a fresh context.  Cold
means fresh processes: both tools read the graph file from the page cache, as right after it
was written.  Each round runs TensorBoard, the HTML and the SVG one after the other, so drift on
the shared machine falls on all alike.  The ratio is TensorBoard's median over tbgraph's; the
issue asks for at least 2×.  Peak memory is the largest resident set of the ``tbgraph`` process
and what it waits for (``dot``).

The graphs: ResNet-50's and NASNet-Large's training steps from ``bench/graphs/`` (3 rounds), and
bench/scale.py's composed graph of 12 copies of four real models, 1,158,552 ops (1 round).  Its
section of RESULTS.md sits between markers that ``run.py`` keeps.

    .venv/bin/python bench/cold.py                          # all three (~25 min)
    .venv/bin/python bench/cold.py --graphs resnet50_train --quick
"""

from __future__ import annotations

import argparse
import compileall
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import peers
from run import (
    COLD_BEGIN,
    COLD_END,
    GRAPHS,
    load_average,
    machine,
    ratio,
    say,
    tbgraph,
    use_wheel,
    versions,
    write_section,
)
from scale import (
    BY_NAME,
    COMPOSED_FROM,
    Targets,
    mib,
    once,
    op_count,
    shape_file,
    target_table,
)
from timing import Timing

HERE = Path(__file__).resolve().parent
#: The longest either tool may take to a picture (the million-op graph's HTML took ~3 min).
TIMEOUT = 600.0
#: The issue's goal: TensorBoard's time at least this many times tbgraph's.
GOAL = 2.0


@dataclass(frozen=True)
class Graph:
    """One graph of the bench: what it is, how many rounds by default, where its file is made."""

    name: str
    what: str
    rounds: int
    path: Callable[[], Path]
    #: The graphs bench/make_graphs.py builds for it.
    needs: tuple[str, ...]


def _step(name: str) -> Callable[[], Path]:
    return lambda: GRAPHS / f"{name}.pb"


COMPOSED = 12
CHOICES = {g.name: g for g in [
    Graph("resnet50_train", "ResNet-50 training step", 3, _step("resnet50_train"),
          ("resnet50_train",)),
    Graph("nasnet_large_step", "NASNet-Large training step (tf.function, GradientTape, Adam)",
          3, _step("nasnet_large_step"), ("nasnet_large_step",)),
    Graph(f"composed_{COMPOSED}", f"{COMPOSED} copies of NASNet-Large, BERT, ResNet-50 and "
          "NASNet-Mobile, each under a scope (bench/scale.py's `composed`)", 1,
          lambda: shape_file(BY_NAME["composed"], COMPOSED), tuple(COMPOSED_FROM)),
]}


@dataclass
class Row:
    """One graph's figures: each Timing holds one value per round (or a note saying why not)."""

    graph: Graph
    ops: int = 0
    file_bytes: int = 0
    tensorboard: Timing = field(default_factory=Timing)
    tb_up: Timing = field(default_factory=Timing)
    tb_page: Timing = field(default_factory=Timing)
    svg: Timing = field(default_factory=Timing)
    written: Timing = field(default_factory=Timing)
    ready: Timing = field(default_factory=Timing)
    html: Timing = field(default_factory=Timing)
    html_bytes: int = 0


# --------------------------------------------------------------------------- one round each


def _stop(timing: Timing, note: str, limit: float = 0.0) -> None:
    """End ``timing``'s rounds with ``note`` (a timeout or a failure is the result)."""
    timing.times.clear()
    timing.note, timing.limit = note, limit


def tensorboard_round(row: Row, browser: peers.Browser, logdir: Path, work: Path) -> None:
    """One cold TensorBoard: a fresh server, a fresh page, until the first node is drawn."""
    if row.tensorboard.note:
        return
    run = logdir.name
    start = time.perf_counter()
    try:
        with peers.tensorboard(logdir.parent, run, work / f"tb-{run}.log", TIMEOUT) as url:
            up = time.perf_counter() - start
            page = peers.drawn(browser, url, peers.TB_DRAWN, 1, max(1.0, TIMEOUT - up))
    except RuntimeError as exc:  # the server exited, or never listed the graph
        if "did not start" in str(exc):
            _stop(row.tensorboard, f"> {TIMEOUT:.0f} s (timed out: the graph never listed)",
                  TIMEOUT)
        else:
            _stop(row.tensorboard, f"failed: {exc}")
        return
    if not page.ok:
        if page.limit:
            _stop(row.tensorboard, f"> {TIMEOUT:.0f} s (timed out)", TIMEOUT)
        else:
            _stop(row.tensorboard, page.note)
        return
    row.tb_up.times.append(up)
    row.tb_page.times += page.times
    row.tensorboard.times.append(up + page.times[0])


def html_round(row: Row, browser: peers.Browser, work: Path) -> None:
    """One cold HTML: ``tbgraph render`` to a page, then the page until the viewer is ready."""
    if row.html.note:
        return
    out = work / f"{row.graph.name}.html"
    out.unlink(missing_ok=True)
    once(row.written, tbgraph("render", str(row.graph.path()), "-o", str(out)))
    if not row.written.ok:
        _stop(row.html, row.written.note, row.written.limit)
        return
    row.html_bytes = out.stat().st_size
    with browser.page() as (page, _):
        ready = peers.page_ready(page, out.resolve().as_uri(), TIMEOUT)
    if not ready.ok:
        _stop(row.ready, ready.note, ready.limit)
        _stop(row.html, f"written, then {ready.note}",
              ready.limit and row.written.times[-1] + ready.limit)
        return
    row.ready.times += ready.times
    row.html.times.append(row.written.times[-1] + ready.times[0])


def svg_round(row: Row, work: Path) -> None:
    """One cold SVG: the ``tbgraph render`` process, default view."""
    once(row.svg, tbgraph("render", str(row.graph.path()), "-o", str(work / "out.svg")))


def bench_graph(graph: Graph, rounds: int, browser: peers.Browser, work: Path) -> Row:
    path = graph.path()
    row = Row(graph, ops=op_count(path), file_bytes=path.stat().st_size)
    say(f"== {graph.name}: {row.ops:,} ops, {row.file_bytes / 2**20:.0f} MB, {rounds} round(s)")
    logdir = work / f"tb-{graph.name}" / graph.name
    peers.write_logdir(path, logdir)
    for n in range(1, rounds + 1):
        tensorboard_round(row, browser, logdir, work)
        say(f"   round {n}: TensorBoard {row.tensorboard.cell()}")
        html_round(row, browser, work)
        say(f"   round {n}: tbgraph HTML {row.written.cell()} + {row.ready.cell()}")
        svg_round(row, work)
        say(f"   round {n}: tbgraph SVG {row.svg.cell()}")
    return row


# --------------------------------------------------------------------------- the report


def _value(t: Timing) -> float | None:
    """The median, or the bound a timeout gives (the true value lies above it)."""
    return t.median if t.ok else (t.limit or None)


def verdict(tb: Timing, ours: Timing) -> tuple[str, str]:
    """TensorBoard's time over tbgraph's as shown ("ahead 3.1×", "**behind** 0.7×"), and
    whether it meets the goal ("pass", "**fail**", or "–" when a bound cannot tell)."""
    shown = ratio(tb, ours)
    a, b = _value(tb), _value(ours)
    if a is None or b is None or shown == "–":
        return "–", "–"
    x = a / b
    # A timeout makes x a bound: the true ratio lies above it when TensorBoard timed out,
    # below it when tbgraph did; a bound on the wrong side decides nothing.
    where = "ahead" if x >= 1 else "**behind**"
    if x >= GOAL:
        return f"{where} {shown}", "pass" if ours.ok else "–"
    return f"{where} {shown}", "**fail**" if tb.ok else "–"


def _mb(n: int) -> str:
    return f"{n / 2**20:,.0f} MB" if n >= 10 * 2**20 else f"{n / 2**20:.1f} MB" if n else "–"


def figures_table(rows: list[Row]) -> list[str]:
    lines = ["| graph | ops (top level) | file | TensorBoard: start → first node drawn "
             "(server lists the graph · page drawn) | tbgraph SVG (peak memory) "
             "| tbgraph HTML: written (peak memory) | + ready in Chromium | = HTML total "
             "| HTML file |",
             "|---|--:|--:|---|---|---|---|---|--:|"]
    for r in rows:
        parts = (f"; medians: lists {r.tb_up.median:.2f} s · page {r.tb_page.median:.2f} s"
                 if r.tensorboard.ok else "")
        lines.append(
            f"| `{r.graph.name}`: {r.graph.what} | {r.ops:,} | {_mb(r.file_bytes)} "
            f"| {r.tensorboard.cell()}{parts} | {r.svg.cell()} ({mib(r.svg.peak_kib)}) "
            f"| {r.written.cell()} ({mib(r.written.peak_kib)}) | {r.ready.cell()} "
            f"| {r.html.cell()} | {_mb(r.html_bytes)} |")
    return lines


def ratio_table(rows: list[Row]) -> list[str]:
    lines = ["| graph | tbgraph output | TensorBoard ÷ tbgraph | "
             f"at least {GOAL:.0f}× |", "|---|---|---|---|"]
    for r in rows:
        for what, ours in (("SVG (default view)", r.svg), ("HTML viewer, written + ready",
                                                            r.html)):
            shown, ok = verdict(r.tensorboard, ours)
            lines.append(f"| `{r.graph.name}` | {what} | {shown} | {ok} |")
    return lines


def million_targets(rows: list[Row]) -> list[str]:
    """Issue 47's targets at a million ops, for the composed graph when it was measured."""
    row = next((r for r in rows if r.ops >= 1_000_000), None)
    if row is None:
        return []
    targets = Targets()
    for what, t, limit in (("default-view SVG ≤ 15 s", row.svg, 15),
                           ("HTML written ≤ 25 s", row.written, 25),
                           ("HTML ready in the browser ≤ 5 s more", row.ready, 5)):
        targets.add(what, t.cell(), t.median <= limit if t.ok else (False if t.limit else None))
    for what, t in (("SVG peak memory ≤ 2 GB", row.svg), ("HTML peak memory ≤ 2 GB",
                                                          row.written)):
        targets.add(what, mib(t.peak_kib), t.peak_kib <= 2 * 2**20 if t.peak_kib else None)
    targets.add("HTML file ≤ 60 MB", _mb(row.html_bytes),
                row.html_bytes <= 60 * 2**20 if row.html_bytes else None)
    return ["", f"Issue 47's targets at a million ops (`{row.graph.name}`, {row.ops:,} ops):",
            "", *target_table(targets)]


def section(rows: list[Row], load: tuple[str, str], seconds: float,
            browser: peers.Browser, timed: str) -> str:
    rounds = ", ".join(f"`{r.graph.name}` {max(len(r.tensorboard.times), len(r.svg.times))}"
                       for r in rows)
    lines = [
        COLD_BEGIN,
        "## tbgraph against TensorBoard, from a cold start",
        "",
        "Generated by `bench/cold.py` (part of `make bench`): the time to the first picture, "
        "each tool started fresh. TensorBoard: from starting `tensorboard --logdir` (the event "
        "file written beforehand) until its Graphs dashboard draws its first node, in two "
        "parts: until the server lists the graph (polled every 0.1 s), then the dashboard "
        "opened until drawn. tbgraph: the whole `tbgraph render` process, and for the HTML "
        "the `file://` page until the viewer is ready, added round by round. One Chromium, "
        "launched beforehand, a fresh context per page; the graph file in the page cache for "
        "both. Rounds alternate the tools (TensorBoard, HTML, SVG, then again); cells are "
        f"the median (min–max) of the rounds ({rounds}); ratios are TensorBoard's median over "
        f"tbgraph's, the goal at least {GOAL:.0f}×. Peak memory: the largest resident set of "
        "the `tbgraph` process and what it waits for.",
        "",
        f"tbgraph timed: {timed}.",
        "",
        f"Machine: {machine()}; {versions(browser)}.",
        "",
        f"Load average (1, 5, 15 min) at the start: {load[0]}; at the end: {load[1]} "
        "(the machine is shared: another engineer's work may run beside the bench).",
        "",
        *figures_table(rows),
        "",
        *ratio_table(rows),
        *million_targets(rows),
        "",
        f"Cold-start bench time: {seconds:.0f} s.",
        COLD_END,
    ]
    return "\n".join(lines)


# --------------------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", nargs="*", choices=list(CHOICES), metavar="NAME",
                        help=f"which graphs (default: all): {', '.join(CHOICES)}")
    parser.add_argument("--repeat", type=int, default=None,
                        help="rounds per graph (default: 3 for the steps, 1 for the million ops)")
    parser.add_argument("--quick", action="store_true", help="one round each")
    parser.add_argument("--tree", action="store_true",
                        help="time this tree's pure-Python modules, not the built wheel")
    parser.add_argument("--out", default=str(HERE / "RESULTS.md"))
    args = parser.parse_args()
    wanted = [CHOICES[n] for n in args.graphs or CHOICES]
    graphs = []
    for g in wanted:
        missing = [n for n in g.needs if not (GRAPHS / f"{n}.pb").exists()]
        if missing:
            say(f"{g.name} not measured: needs {', '.join(missing)} "
                f"(python bench/make_graphs.py --only {' '.join(missing)})")
        else:
            graphs.append(g)
    if not graphs:
        return 1
    for g in graphs:  # made (untimed) before anything is measured
        g.path()
    with tempfile.TemporaryDirectory(prefix="tbgraph-cold-") as tmp:
        if args.tree:
            # As run.py says why: time the tool as an install runs it, its bytecode compiled.
            compileall.compile_dir(str(HERE.parent / "graphviz_tb"), quiet=1)
            timed = "this tree's pure-Python modules (`--tree`)"
        else:
            say("building and installing the wheel (untimed)")
            timed = f"the wheel `pip install` gives (`{use_wheel(Path(tmp) / 'wheel')}`)"
        started, load_start = time.perf_counter(), load_average()
        browser = peers.Browser()
        try:
            rows = [bench_graph(g, 1 if args.quick else args.repeat or g.rounds, browser,
                                Path(tmp)) for g in graphs]
            text = section(rows, (load_start, load_average()), time.perf_counter() - started,
                           browser, timed)
        finally:
            browser.close()
    write_section(Path(args.out), text, COLD_BEGIN, COLD_END)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
