"""Benchmarks: tbgraph against baselines measured in the same run, written to bench/RESULTS.md.

Every figure is the wall time of a fresh process (what a user waits for), repeated and reported
as a median with min–max.  The baselines run in the same session on the same graphs:

* parsing the GraphDef protobuf alone in a fresh Python (the floor for any Python tool);
* a flat ``dot -Tsvg`` of the graph, one node per op (what naive Graphviz tools do), with a
  timeout;
* TensorBoard's Graphs dashboard and Netron, when ``--peers`` is given (see bench/peers.py).

Usage: ``python bench/run.py [--graphs NAME ...] [--repeat N] [--peers] [--quick]``.
No test asserts on these numbers: speed is measured here, never in timed tests.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
GRAPHS = HERE / "graphs"
PY = sys.executable

#: name -> what it is; files are made by bench/make_graphs.py.
CATALOGUE = {
    "mnist_tf1": "TF1 MNIST training graph",
    "resnet50_infer": "ResNet-50 inference",
    "nasnet_mobile": "NASNet-Mobile inference",
    "bert_train": "12-layer BERT-like training step",
    "resnet50_train": "ResNet-50 training step",
    "nasnet_large_train": "NASNet-Large training step",
    "synthetic_200k": "synthetic graph composed from the above",
}


@dataclass
class Timing:
    """Repeated wall times (seconds) and the largest peak memory (KiB) of one measurement."""

    times: list[float] = field(default_factory=list)
    peak_kib: int = 0
    note: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.times) if self.times else float("nan")

    def cell(self) -> str:
        if self.note and not self.times:
            return self.note
        if not self.times:
            return "–"
        lo, hi = min(self.times), max(self.times)
        text = f"{self.median:.2f} s"
        if len(self.times) > 1:
            text += f" ({lo:.2f}–{hi:.2f})"
        return text + (f" {self.note}" if self.note else "")


def run_timed(cmd: list[str], timeout: float | None = None) -> tuple[float, int, bool]:
    """Run a command in a fresh process: (wall seconds, peak RSS KiB, finished in time)."""
    wrapper = [
        PY, "-c",
        "import resource, subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        "rc = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
        "dt = time.perf_counter() - t\n"
        "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
        "print(dt, peak, rc)\n",
        *cmd,
    ]
    try:
        out = subprocess.run(wrapper, capture_output=True, text=True, timeout=timeout,
                             check=False)
    except subprocess.TimeoutExpired:
        return timeout or 0.0, 0, False
    dt, peak, rc = out.stdout.split()
    if rc != "0":
        raise RuntimeError(f"{' '.join(cmd)} failed: {out.stderr.strip()[-400:]}")
    return float(dt), int(peak), True


def measure(cmd: list[str], repeat: int, timeout: float | None = None) -> Timing:
    timing = Timing()
    for _ in range(repeat):
        dt, peak, done = run_timed(cmd, timeout)
        if not done:
            timing.note = f"> {timeout:.0f} s (timed out)"
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


def tbgraph(*args: str) -> list[str]:
    return [PY, "-m", "graphviz_tb", *args]


def op_count(path: Path) -> int:
    out = subprocess.run(tbgraph("info", "--json", str(path)), capture_output=True, text=True,
                         check=True)
    return int(json.loads(out.stdout)["nodes"])


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
    dot = subprocess.run(["dot", "-V"], capture_output=True, text=True).stderr.strip()
    return (f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores ({cpu}), "
            f"{mem:.0f} GiB RAM, Python {platform.python_version()}, {dot}")


def bench_graph(name: str, path: Path, repeat: int, quick: bool, work: Path) -> dict:
    """All measurements of one graph."""
    reps = 1 if quick or path.stat().st_size > 20_000_000 else repeat
    row: dict = {"name": name, "what": CATALOGUE.get(name, name), "ops": op_count(path)}
    print(f"== {name}: {row['ops']:,} ops", file=sys.stderr)
    row["parse"] = measure(parse_only(path), reps)
    row["info"] = measure(tbgraph("info", str(path)), reps)
    row["svg"] = measure(tbgraph("render", str(path), "-o", str(work / f"{name}.svg")), reps)
    row["svg_bytes"] = (work / f"{name}.svg").stat().st_size
    row["svg_all"] = measure(
        tbgraph("render", str(path), "--expand-all", "-o", str(work / f"{name}_all.svg")),
        1, timeout=600)
    row["html"] = _html(name, path, work, reps)
    row["flat_dot"] = measure(flat_dot(path, work), 1, timeout=120 if not quick else 30)
    return row


def _html(name: str, path: Path, work: Path, reps: int) -> Timing:
    out = work / f"{name}.html"
    try:
        timing = measure(tbgraph("render", str(path), "-o", str(out)), reps)
    except RuntimeError as exc:
        return Timing(note=f"n/a ({str(exc).splitlines()[-1][:60]})")
    timing.note = f"· {out.stat().st_size / 2**20:.1f} MB"
    return timing


def ratio(a: Timing, b: Timing) -> str:
    if not a.times or not b.times:
        return "–"
    return f"{a.median / b.median:.1f}×"


def write_results(rows: list[dict], target: Path, started: float) -> None:
    lines = [
        "# Benchmarks",
        "",
        "Generated by `make bench` (`bench/run.py`); do not edit by hand. Wall time of a fresh "
        "process, median (min–max) of the runs; ratios are against baselines measured in the "
        "same run.",
        "",
        f"Machine: {machine()}.",
        "",
        "| graph | ops | protobuf parse (baseline) | `tbgraph info` | render SVG (default view)"
        " | ratio to parse | render SVG, `--expand-all` | HTML | flat `dot -Tsvg` | peak memory |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        peak = max(r["svg"].peak_kib, r["svg_all"].peak_kib, r["html"].peak_kib) / 1024
        lines.append(
            f"| {r['what']} | {r['ops']:,} | {r['parse'].cell()} | {r['info'].cell()} | "
            f"{r['svg'].cell()} | {ratio(r['svg'], r['parse'])} | {r['svg_all'].cell()} | "
            f"{r['html'].cell()} | {r['flat_dot'].cell()} | {peak:.0f} MiB |"
        )
    lines += ["", f"Total benchmark time: {time.perf_counter() - started:.0f} s.", ""]
    target.write_text("\n".join(lines), encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", nargs="*", help="names from bench/graphs (default: all)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one run each, short timeouts")
    parser.add_argument("--out", default=str(HERE / "RESULTS.md"))
    args = parser.parse_args()
    names = args.graphs or [n for n in CATALOGUE if (GRAPHS / f"{n}.pb").exists()]
    if not names:
        print("no graphs in bench/graphs; run: python bench/make_graphs.py", file=sys.stderr)
        return 1
    started = time.perf_counter()
    rows = []
    with tempfile.TemporaryDirectory(prefix="tbgraph-bench-") as tmp:
        for name in names:
            rows.append(bench_graph(name, GRAPHS / f"{name}.pb", args.repeat, args.quick,
                                    Path(tmp)))
    write_results(rows, Path(args.out), started)
    print(Path(args.out).read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
