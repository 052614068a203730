"""The scaling bench: each graph shape at 1×, 2× and 4× size, and the cost per doubling.

A stage that is linear in every dimension of the graph costs twice as much when one of them
doubles; a quadratic one four times.  For each shape of ``graphs_shapes.py`` (and up to 12
copies, 1.16 million ops, of the real models in ``bench/graphs/``), this draws the default
view to SVG at three sizes, each doubling the last, in a fresh process each time (the ``diff_``
shapes run ``tbgraph diff`` of two versions instead: their table row's first graph is the old
side, and its parse the baseline), and reports
its wall time and peak memory (the largest resident set of the process and what it waits for,
``dot`` included), the protobuf parse of the same file as the baseline, and the ratio of each
size to the one before, in wall time and in user CPU time (the program's own work, without
the kernel's time to give it memory).  The goal is at most 2.2× per doubling, in time and in
memory.

It also checks the issue's targets, each against a baseline measured in the same run:

* NASNet-Large's training step (every ``nasnet_large_train*.pb`` in bench/graphs/, however
  many TensorFlow versions built one): default view ≤ 8× the protobuf parse, HTML written in
  ≤ 2 s, HTML ready in headless Chromium in ≤ 1 s;
* two ops under 3,000 nested scopes: drawn in < 2 s and < 300 MB;
* the 12 copies (over 1,000,000 ops): default view in < 60 s and < 8 GB.

The section it writes into RESULTS.md sits between markers, which ``run.py`` keeps.

Usage: ``python bench/scale.py [--shapes NAME ...] [--repeat N] [--quick] [--no-browser]``.
No test asserts on these numbers: speed is measured here, never in timed tests.
"""

from __future__ import annotations

import argparse
import compileall
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import graphs_shapes
import peers
from graphs_synthetic import compose_to_file
from run import (
    GRAPHS,
    SCALE_BEGIN,
    SCALE_END,
    load_average,
    parse_only,
    run_timed,
    say,
    tbgraph,
    write_section,
)
from tensorboard.compat.proto import graph_pb2
from timing import Timing

HERE = Path(__file__).resolve().parent
SCALE = GRAPHS / "scale"
#: The per-doubling goal, in time and in memory.
GOAL = 2.2
#: Real graphs the composed one is made of (bench/make_graphs.py builds them).
COMPOSED_FROM = ["nasnet_large_train", "bert_train", "resnet50_train", "nasnet_mobile"]


@dataclass(frozen=True)
class Shape:
    """One shape: how to make it at a size, and the three sizes (each twice the last)."""

    name: str
    what: str
    unit: str
    sizes: tuple[int, int, int]
    make: Callable[[int, Path], None]
    #: The command timed on the shape's file, given a work directory (default: its default
    #: view drawn to SVG).
    command: Callable[[Path, Path], list[str]] | None = None

    def timed(self, path: Path, work: Path) -> list[str]:
        if self.command is None:
            return tbgraph("render", str(path), "-o", str(work / "out.svg"))
        return self.command(path, work)


def _writer(build: Callable[[int], object]) -> Callable[[int, Path], None]:
    def make(size: int, path: Path) -> None:
        path.write_bytes(build(size).SerializeToString())  # type: ignore[attr-defined]
    return make


def _composed(copies: int, path: Path) -> None:
    """``copies`` copies of the unit (each real model once, 96,546 ops), each under a scope
    of its own: every doubling doubles the ops exactly, in the same mix and nesting.  (Models
    copied up to a number of ops overshoot it by up to one model, 258,875, 548,513 and
    1,031,243 ops for 250k, 500k and 1M, in a different mix at each.)"""
    unit = SCALE / "composed_unit.pb"
    if not unit.exists():
        sources = [GRAPHS / f"{name}.pb" for name in COMPOSED_FROM]
        missing = [p.name for p in sources if not p.exists()]
        if missing:
            raise FileNotFoundError(f"needs {', '.join(missing)} (python bench/make_graphs.py)")
        tmp = unit.with_suffix(".tmp")
        compose_to_file(sources, tmp, target=sum(op_count(p) for p in sources))
        tmp.replace(unit)
    compose_to_file([unit], path, target=op_count(unit) * copies)


def new_side(path: Path) -> Path:
    """Where a diff shape keeps its second graph, beside the first (``x.pb``: ``x_new.pb``)."""
    return path.with_name(f"{path.stem}_new.pb")


def _pair_writer(old: Callable[[int], object], new: Callable[[int], object]
                 ) -> Callable[[int, Path], None]:
    def make(size: int, path: Path) -> None:
        new_side(path).write_bytes(new(size).SerializeToString())  # type: ignore[attr-defined]
        path.write_bytes(old(size).SerializeToString())  # type: ignore[attr-defined]
    return make


def _nasnet_pair(copies: int, path: Path) -> None:
    """NASNet-Large's training step as TF 2.21 and TF 2.15 build it (names, functions and
    gradients differ), each composed ``copies`` times."""
    sides = [GRAPHS / "nasnet_large_train_tf2.15.pb", GRAPHS / "nasnet_large_train.pb"]
    missing = [p.name for p in sides if not p.exists()]
    if missing:
        raise FileNotFoundError(f"needs {', '.join(missing)} (python bench/make_graphs.py)")
    for source, out in zip(sides, [new_side(path), path], strict=True):
        compose_to_file([source], out, target=op_count(source) * copies)


def _diff(path: Path, work: Path) -> list[str]:
    """``tbgraph diff`` of the pair to SVG; it exits 1 when the graphs differ, as they do."""
    return ["sh", "-c", '"$@"; test $? -le 1', "sh",
            *tbgraph("diff", str(path), str(new_side(path)), "-o", str(work / "diff.svg"))]


SHAPES = [
    Shape("deep", "two ops under nested scopes", "levels", (1_000, 2_000, 4_000),
          _writer(graphs_shapes.deep)),
    Shape("wide_numbered", "one group of numbered siblings (`add_1`…)", "siblings",
          (25_000, 50_000, 100_000), _writer(graphs_shapes.wide)),
    Shape("wide_plain", "one group of siblings, not numbered", "siblings",
          (25_000, 50_000, 100_000), _writer(lambda n: graphs_shapes.wide(n, numbered=False))),
    Shape("prefixes", "Keras-3-like flat layer names, many shared prefixes", "cells of 25 layers",
          (400, 800, 1_600), _writer(graphs_shapes.prefixes)),
    Shape("long_names", "500 ops with names of 10 kB and more", "characters per name",
          (10_000, 20_000, 40_000), _writer(graphs_shapes.long_names)),
    Shape("functions", "functions each called once, each calling a shared one", "functions",
          (1_000, 2_000, 4_000), _writer(graphs_shapes.functions)),
    Shape("nested_calls", "calls nested in calls (past 100 levels drawn closed)", "levels",
          (1_000, 2_000, 4_000), _writer(graphs_shapes.nested_calls)),
    Shape("composed", "copies of four real models (NASNet-Large, BERT, ResNet-50, "
          "NASNet-Mobile), each copy under a scope", "copies", (3, 6, 12), _composed),
    Shape("diff_deep", "`tbgraph diff` of two versions of the deep shape (an op changed, "
          "one added, at the bottom)", "levels", (1_000, 2_000, 4_000),
          _pair_writer(graphs_shapes.deep, graphs_shapes.deep_changed), _diff),
    Shape("diff_ops", "`tbgraph diff` of NASNet-Large's training step as TF 2.21 and TF 2.15 "
          "build it, each side composed of copies", "copies", (1, 2, 4), _nasnet_pair, _diff),
]
BY_NAME = {s.name: s for s in SHAPES}


def shape_file(shape: Shape, size: int) -> Path:
    """The shape's GraphDef at this size, made once and kept in bench/graphs/scale/."""
    path = SCALE / f"{shape.name}_{size}.pb"
    if not path.exists():
        say(f"   making {path.name}")
        SCALE.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        shape.make(size, tmp)
        tmp.replace(path)
    return path


# --------------------------------------------------------------------------- measuring


@dataclass
class Point:
    """One size of one shape: the parse baseline and the default view."""

    size: int
    ops: int
    parse: Timing
    svg: Timing


@dataclass
class Row:
    shape: Shape
    points: list[Point] = field(default_factory=list)


def once(timing: Timing, cmd: list[str]) -> None:
    """One more run of ``cmd`` into ``timing`` (a fresh process, a 10-minute bound); a failure
    (a graph refused as too large for the machine) ends the timing with its last line."""
    if timing.note:
        return
    try:
        seconds, peak, done, user, system = run_timed(cmd, timeout=600)
    except RuntimeError as exc:
        timing.times.clear()
        timing.note = f"failed: {str(exc).splitlines()[-1][-100:]}"
        return
    if not done:
        timing.times.clear()
        timing.note, timing.limit = "> 600 s (timed out)", 600.0
        return
    timing.times.append(seconds)
    timing.user.append(user)
    timing.system.append(system)
    timing.peak_kib = max(timing.peak_kib, peak)


def alternating(commands: list[list[str]], reps: list[int]) -> list[Timing]:
    """Each command run ``reps[i]`` times, in rounds (A B C, A B C …) rather than one after
    the other: drift on a shared machine then spreads over all of them alike, and each round
    pairs measurements taken moments apart."""
    timings = [Timing() for _ in commands]
    for round_ in range(max(reps)):
        for cmd, n, timing in zip(commands, reps, timings, strict=True):
            if round_ < n:
                once(timing, cmd)
    return timings


def paired_ratio(a: Timing, b: Timing, what: str = "times") -> float | None:
    """The median of ``a``'s runs over ``b``'s, round by round (see :func:`alternating`):
    their wall times, or ``what`` names another list of both (``user``)."""
    pairs = [x / y for x, y in zip(getattr(a, what), getattr(b, what), strict=False) if y > 0]
    return statistics.median(pairs) if pairs else None


def op_count(path: Path) -> int:
    """Top-level NodeDefs, counted by protobuf alone."""
    return len(graph_pb2.GraphDef.FromString(path.read_bytes()).node)


def bench_shape(shape: Shape, repeat: int, work: Path) -> Row:
    """The three sizes measured in rounds: parse and render of each size, then again."""
    paths = [shape_file(shape, size) for size in shape.sizes]
    say(f"== {shape.name}: {', '.join(f'{s:,}' for s in shape.sizes)} {shape.unit}")
    commands, reps = [], []
    for path in paths:
        commands += [parse_only(path), shape.timed(path, work)]
        reps += [repeat] * 2
    timings = alternating(commands, reps)
    row = Row(shape)
    for i, (size, path) in enumerate(zip(shape.sizes, paths, strict=True)):
        row.points.append(Point(size, op_count(path), timings[2 * i], timings[2 * i + 1]))
    return row


@dataclass
class Targets:
    """The issue's targets, measured in this run: (what, measured text, pass or not)."""

    rows: list[tuple[str, str, bool | None]] = field(default_factory=list)

    def add(self, what: str, shown: str, ok: bool | None) -> None:
        self.rows.append((what, shown, ok))


def _median(t: Timing) -> float | None:
    return t.median if t.ok else None


def nasnet_targets(targets: Targets, repeat: int, work: Path,
                   browser: peers.Browser | None) -> None:
    copies = sorted(GRAPHS.glob("nasnet_large_train*.pb"))
    if not copies:
        targets.add("NASNet-Large training step", "not measured (no nasnet_large_train*.pb; "
                    "python bench/make_graphs.py --only nasnet_large_train)", None)
    for path in copies:
        say(f"== {path.name}: parse, default view, HTML")
        html = work / "nasnet.html"
        parse, svg, write = alternating(
            [parse_only(path), tbgraph("render", str(path), "-o", str(work / "nasnet.svg")),
             tbgraph("render", str(path), "-o", str(html))], [repeat] * 3)
        name = f"`{path.name}` ({op_count(path):,} ops)"
        ratio = paired_ratio(svg, parse)
        targets.add(f"{name}: default view ≤ 8× protobuf parse",
                    f"{ratio:.1f}× (median of {len(svg.times)} rounds; {svg.cell()} ÷ "
                    f"{parse.cell()})" if ratio else "–",
                    None if ratio is None else ratio <= 8)
        w = _median(write)
        targets.add(f"{name}: HTML written ≤ 2 s", write.cell(), None if w is None else w <= 2)
        if browser is None or not write.ok:
            targets.add(f"{name}: HTML ready in Chromium ≤ 1 s", "not measured",
                        None)
            continue
        page = peers.measure_html(browser, html, repeat)
        r = _median(page.ready)
        targets.add(f"{name}: HTML ready in Chromium ≤ 1 s", page.ready.cell(),
                    None if r is None else r <= 1)


def deep_target(targets: Targets, repeat: int, work: Path) -> None:
    shape = BY_NAME["deep"]
    path = shape_file(shape, 3_000)
    say("== deep 3,000 levels")
    (svg,) = alternating([tbgraph("render", str(path), "-o", str(work / "deep.svg"))], [repeat])
    t, mb = _median(svg), svg.peak_kib / 1024
    targets.add("two ops under 3,000 nested scopes: default view < 2 s and < 300 MB",
                f"{svg.cell()}, {mb:.0f} MB" if t is not None else svg.cell(),
                None if t is None else t < 2 and mb < 300)


def composed_target(targets: Targets, rows: list[Row]) -> None:
    row = next((r for r in rows if r.shape.name == "composed"), None)
    if row is None:
        targets.add("1,000,000-op graph (12 copies): default view < 60 s and < 8 GB",
                    "not measured (composed not in this run)", None)
        return
    point = row.points[-1]
    t, gb = _median(point.svg), point.svg.peak_kib / 2**20
    targets.add(f"{point.ops:,}-op composed graph: default view < 60 s and < 8 GB",
                f"{point.svg.cell()}, {gb:.1f} GB" if t is not None else point.svg.cell(),
                None if t is None else t < 60 and gb < 8)


# --------------------------------------------------------------------------- the report


def _ratio(x: float | None) -> str:
    """A per-doubling ratio, marked when over the goal."""
    if x is None:
        return "–"
    return f"{x:.2f}×" + ("" if x <= GOAL else " **over**")


def _times(x: float | None) -> str:
    return "–" if x is None else f"{x:.1f}×"


def mib(kib: int) -> str:
    """A peak of ``kib`` KiB as whole MB (what the bench tables show), or a dash."""
    return f"{kib / 1024:,.0f} MB" if kib else "–"


def shape_table(rows: list[Row]) -> list[str]:
    lines = [
        "| shape | size | ops (top level) | protobuf parse (baseline) "
        "| default view to SVG (`diff_`: the diff to SVG) "
        "| ÷ parse | peak memory | time × per doubling | CPU in the program × per doubling "
        "| memory × per doubling |",
        "|---|--:|--:|---|---|--:|--:|--:|--:|--:|",
    ]
    for row in rows:
        before: Point | None = None
        for point in row.points:
            doubling_t = _ratio(paired_ratio(point.svg, before.svg)) if before else ""
            doubling_u = _ratio(paired_ratio(point.svg, before.svg, "user")) if before else ""
            doubling_m = (_ratio(point.svg.peak_kib / before.svg.peak_kib)
                          if before and before.svg.peak_kib else "")
            what = f"**{row.shape.name}**: {row.shape.what}" if before is None else ""
            lines.append(
                f"| {what} | {point.size:,} {row.shape.unit} | {point.ops:,} | "
                f"{point.parse.cell()} | {point.svg.cell()} | "
                f"{_times(paired_ratio(point.svg, point.parse))} "
                f"| {mib(point.svg.peak_kib)} | {doubling_t} | {doubling_u} | {doubling_m} |")
            before = point
    return lines


def target_table(targets: Targets) -> list[str]:
    lines = ["| target | measured | result |", "|---|---|---|"]
    for what, shown, ok in targets.rows:
        verdict = "–" if ok is None else ("pass" if ok else "**fail**")
        lines.append(f"| {what} | {shown} | {verdict} |")
    return lines


def section(rows: list[Row], targets: Targets, repeat: int, load_start: str,
            seconds: float) -> str:
    lines = [
        SCALE_BEGIN,
        "## Scaling: each shape at 1×, 2× and 4×",
        "",
        "Generated by `bench/scale.py` (part of `make bench`). Each cell is the median "
        f"(min–max) of {repeat} runs of a fresh process, the three "
        "sizes and their parse taken in rounds (so drift on the shared machine falls on all "
        "alike); peak memory is the largest resident set among the process and what it waits "
        "for (`dot`). "
        "*× per doubling* divides a size's time by the one before it, round by round, and "
        "gives the median (memory: the peaks); *CPU in the program* does the same with "
        "the user CPU time alone, without the kernel's (which grows faster than the work on "
        "a virtual machine that hands out fresh memory slowly); *÷ parse* likewise against "
        "the parse of the "
        f"same file in the same round. At most {GOAL}× per doubling is the goal (a quadratic "
        "stage shows 4×). The shapes "
        "come from `bench/graphs_shapes.py`; the composed graph is 3, 6 and 12 copies of the "
        "real models in `bench/graphs/` (1.16 million ops at 12); the `diff_` shapes time "
        "`tbgraph diff` of two versions: the deep shape with an op changed and one added at "
        "the bottom, and NASNet-Large's training step as TF 2.21 and TF 2.15 build it, 1, 2 "
        "and 4 copies a side.",
        "",
        f"Load average (1, 5, 15 min) at the start: {load_start}; at the end: {load_average()}.",
        "",
        *shape_table(rows),
        "",
        "### Targets",
        "",
        *target_table(targets),
        "",
        f"Scaling bench time: {seconds:.0f} s.",
        SCALE_END,
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", nargs="*", choices=list(BY_NAME), metavar="NAME",
                        help=f"which shapes (default: all): {', '.join(BY_NAME)}")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one run each")
    parser.add_argument("--no-browser", action="store_true",
                        help="leave out the HTML page in Chromium")
    parser.add_argument("--out", default=str(HERE / "RESULTS.md"))
    args = parser.parse_args()
    repeat = 1 if args.quick else args.repeat
    compileall.compile_dir(str(HERE.parent / "graphviz_tb"), quiet=1)  # as run.py says why
    started, load_start = time.perf_counter(), load_average()
    browser = peers.browser_or_none(not args.no_browser, say)
    rows: list[Row] = []
    targets = Targets()
    try:
        with tempfile.TemporaryDirectory(prefix="tbgraph-scale-") as tmp:
            work = Path(tmp)
            for name in args.shapes or list(BY_NAME):
                try:
                    rows.append(bench_shape(BY_NAME[name], repeat, work))
                except FileNotFoundError as exc:
                    say(f"   {name} not measured: {exc}")
            nasnet_targets(targets, repeat, work, browser)
            deep_target(targets, repeat, work)
            composed_target(targets, rows)
    finally:
        if browser is not None:
            browser.close()
    text = section(rows, targets, repeat, load_start, time.perf_counter() - started)
    write_section(Path(args.out), text, SCALE_BEGIN, SCALE_END)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
