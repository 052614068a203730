"""The grouping and the page's stages timed in one process, again and again, to compare two
builds of the package more finely than whole renders can.

A whole render of a million-op graph varies by half a second from run to run on a shared
machine, which hides any change smaller than that.  Here the model is built once per process,
then each stage runs ``--repeat`` times on it, each time from a fresh start: the grouping step
by step (a fresh tree each time), the picture, the templates of every group and the page's
data.  Each process's fastest time per stage is kept.  With several packages (``--site DIR``
each, as ``stages.py`` takes one), the processes alternate, so drift on the machine falls on
all alike.

Usage: ``python bench/inprocess.py GRAPH.pb --site A --site B [--rounds 2] [--repeat 3]``;
without ``--site``, this tree's modules as they are.  Nothing here is a test.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import run

_PROBE = """\
import gc, json, sys, time
gc.disable()
import graphviz_tb
from graphviz_tb import pipeline
from graphviz_tb.group import build
from graphviz_tb.group.tree import Hierarchy
from graphviz_tb.options import RenderOptions

graph, repeat = sys.argv[1], int(sys.argv[2])
model = graphviz_tb.load(graph).model
options = RenderOptions()
steps = {"build_scopes": build.build_scopes, "frame_first_replica": build.frame_first_replica,
         "adopt_loose_ops": build.adopt_loose_ops, "fold_variables": build.fold_variables,
         "fold_metrics": build.fold_metrics, "mirror_updates": build.mirror_updates,
         "fold_shared_handles": build.fold_shared_handles, "prefix_groups": build.prefix_groups}
best = {}

def timed(name, work):
    start = time.perf_counter()
    out = work()
    best[name] = min(best.get(name, 1e9), time.perf_counter() - start)
    return out

for _ in range(repeat):
    # The grouping, step by step, as build.build_hierarchy makes it.
    h = Hierarchy(model, options.series_min if options.series else None)
    for name, step in steps.items():
        timed(name, lambda: step(h))
    timed("op_series", lambda: build.op_series(h, options.series_min))
    meet = timed("meetings", h.meetings)
    known = timed("repair_convexity", lambda: build.repair_convexity(h, meet))
    known = timed("find_blocks", lambda: build.find_blocks(h, meet, known))
    timed("sections", lambda: build.sections(h, meet, known))
    timed("finish", lambda: build.finish(h))
    del h, meet, known
    # The picture and the page, on a tree grouped as a render groups it.
    h = timed("group (whole)", lambda: pipeline.group(model, options))
    picture = timed("choose_picture", lambda: pipeline.choose_picture(
        h, options, None, page=True, name="graph", alone=True))
    scene = timed("build_scene", lambda: pipeline.build_scene(h, options, picture))
    timed("complete", lambda: pipeline.complete(h))
    timed("build_data", lambda: pipeline.build_data(
        h, scene, picture, options, title="graph", costs=None))
    del h, picture, scene
print(json.dumps(best))
"""


def measure(graph: Path, site: Path | None, repeat: int) -> dict[str, float]:
    """One fresh process: each stage's fastest of ``repeat`` runs, in seconds."""
    first = run.site_first(site) if site is not None else ""
    done = subprocess.run([run.PY, "-c", first + _PROBE, str(graph), str(repeat)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"inprocess.py: the run failed: {done.stderr.strip()}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graph", type=Path)
    parser.add_argument("--site", type=Path, action="append", metavar="DIR",
                        help="a package installed under DIR (pip install --target DIR); give "
                        "two or more to compare them")
    parser.add_argument("--rounds", type=int, default=2, help="processes per package")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each stage a process")
    args = parser.parse_args()
    sites: list[Path | None] = [s.resolve() for s in args.site] if args.site else [None]
    results: list[list[dict[str, float]]] = [[] for _ in sites]
    for r in range(args.rounds):
        for i, site in enumerate(sites):
            results[i].append(measure(args.graph, site, args.repeat))
            run.say(f"round {r + 1} of {args.rounds}: {site or 'this tree'} done")
    names = list(results[0][0])
    heads = [str(site or "this tree") for site in sites]
    print(f"{args.graph.name}: each stage's fastest of {args.repeat} runs a process, the lowest "
          f"and highest over {args.rounds} processes; load average {run.load_average()}:\n")
    print("| stage | " + " | ".join(heads) + " |")
    print("|---|" + "--:|" * len(sites))
    for name in names:
        cells = []
        for runs in results:
            low, high = min(x[name] for x in runs), max(x[name] for x in runs)
            cells.append(f"{low:.3f}" if f"{low:.3f}" == f"{high:.3f}" else
                         f"{low:.3f}-{high:.3f}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
