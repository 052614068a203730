"""Where one render's time and memory go, stage by stage: the profile a speed-up starts from.

Each run is a fresh process that renders the graph as ``tbgraph render`` does (the collector
off, as the command keeps it) with every stage of the pipeline timed from the outside: the
memory estimate, the model, the grouping, the picture, the scene, then for the viewer page the
edges and templates of every group and the page's data (for SVG: the DOT and Graphviz), then
the file's writing (a viewer page is made as it is written).  After each stage it notes the
resident memory and the peak so far.  The runs' lowest and highest figures are printed as a
Markdown table.

Usage: ``python bench/stages.py GRAPH.pb [--format html|svg] [--repeat N] [--wheel | --site
DIR]``.  ``--wheel`` times the package as ``pip install`` gives it (the compiled accelerator),
built from this tree as ``run.py`` builds it; ``--site DIR`` the package installed under DIR
(another commit's wheel, to compare with); without either, this tree's modules as they are.
Nothing here is a test.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import run

#: The pipeline's stages, in the order a render calls them (each a name in graphviz_tb.pipeline).
STAGES = ("graph_cost", "build_model", "build_hierarchy", "choose_picture", "build_scene",
          "complete", "build_data", "scene_to_dot", "run_neato", "write_output")

_PROBE = """\
import json, resource, sys, time
import graphviz_tb.pipeline as P
from graphviz_tb.cli import main

def rss():
    with open('/proc/self/statm') as f:
        return int(f.read().split()[1]) * 4096 // 2**20

rows = []
def timed(name):
    inner = getattr(P, name)
    def stage(*args, **kwargs):
        start = time.perf_counter()
        out = inner(*args, **kwargs)
        rows.append((name, time.perf_counter() - start, rss(),
                     resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024))
        return out
    setattr(P, name, stage)

for name in json.loads(sys.argv[1]):
    timed(name)
began = time.perf_counter()
status = main(sys.argv[2:])
rows.append(("total", time.perf_counter() - began, rss(),
             resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024))
print(json.dumps({"status": status, "rows": rows}))
"""


def profile(graph: Path, fmt: str, out: Path, site: Path | None
            ) -> list[tuple[str, float, int, int]]:
    """One fresh render of ``graph`` as ``fmt`` (the package installed under ``site`` first on
    the path, when given): each stage's seconds, resident MB after it and peak MB so far."""
    first = run.site_first(site) if site is not None else ""
    # The collector off, as graphviz_tb.cli.run keeps it for the command.
    code = first + "import gc; gc.disable()\n" + _PROBE
    done = subprocess.run([run.PY, "-c", code, json.dumps(STAGES), "render", str(graph), "-o",
                           str(out)], capture_output=True, text=True, check=False)
    lines = done.stdout.strip().splitlines()
    result = json.loads(lines[-1]) if lines else {"status": done.returncode}
    if result["status"] != 0:
        raise SystemExit(f"stages.py: the render failed: {done.stderr.strip()}")
    return [(name, secs, rss, peak) for name, secs, rss, peak in result["rows"]]


def table(runs: list[list[tuple[str, float, int, int]]]) -> list[str]:
    """The runs side by side: each stage's lowest and highest time and memory."""
    lines = ["| stage | seconds | resident after | peak so far |", "|---|--:|--:|--:|"]
    for i, (name, *_) in enumerate(runs[0]):
        secs = sorted(r[i][1] for r in runs)
        rss = sorted(r[i][2] for r in runs)
        peak = sorted(r[i][3] for r in runs)
        lines.append(f"| {name} | {_span(secs, '{:.2f}')} | {_span(rss, '{:,} MB')} | "
                     f"{_span(peak, '{:,} MB')} |")
    return lines


def _span(values: list, fmt: str) -> str:
    low, high = fmt.format(values[0]), fmt.format(values[-1])
    return low if low == high else f"{low}-{high}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graph", type=Path)
    parser.add_argument("--format", choices=("html", "svg"), default="html")
    parser.add_argument("--repeat", type=int, default=3)
    package = parser.add_mutually_exclusive_group()
    package.add_argument("--wheel", action="store_true",
                         help="time the installed wheel (compiled accelerator), built from here")
    package.add_argument("--site", type=Path, metavar="DIR",
                         help="time the package installed under DIR (pip install --target DIR),"
                         " say an older commit's wheel, to compare with")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        site = args.site.resolve() if args.site else None
        if args.wheel:
            wheel, site = run.install_wheel(Path(tmp))
            run.say(f"built and installed {wheel}")
        out = Path(tmp) / f"out.{args.format}"
        runs = []
        for i in range(args.repeat):
            runs.append(profile(args.graph, args.format, out, site))
            run.say(f"run {i + 1} of {args.repeat}: {runs[-1][-1][1]:.2f} s")
        size = out.stat().st_size
    print(f"{args.graph.name}, {args.format.upper()} ({size:,} bytes), {args.repeat} runs, "
          f"load average {run.load_average()} at the end:\n")
    print("\n".join(table(runs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
