"""How much of a speed budget the stages every picture needs take on their own.

The speed targets are ratios to the protobuf parse (``run.py``'s baseline).  This bench runs
the pipeline cut after each of its first stages, each cut a fresh process that does everything
before it too, and prints each one's median wall time and its ratio to the parse measured in
the same run, the runs of all cuts taken in turn so that the machine's drift spreads evenly:

* ``parse``: the baseline, a fresh Python that imports the protos and parses the file;
* ``networkx``: the parse, then a bare networkx MultiDiGraph of the ops and their input edges,
  written straight into its dicts (no attribute but the op type, no check): what the mission's
  "into a networkx graph" costs at least;
* ``load``: ``graphviz_tb.load``, with what ``tbgraph render`` imports (read and model stages);
* ``scopes``: then the scope tree (one group per name scope, every op placed);
* ``meetings``: then where every edge meets (the lowest group holding both ends), the depths
  and the child order, which any aggregation of edges into boxes needs;
* ``hierarchy``: then the whole grouping (training steps, prefixes, series, convexity, blocks,
  sections and settling);
* ``svg`` and ``html``: ``tbgraph render`` of the default view, and of the viewer page.

Usage: ``python bench/floor.py [GRAPH.pb] [--repeat N]`` (default: NASNet-Large's TF2 training
step from ``bench/graphs``, 5 runs).  Nothing here is a test, and nothing is written.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from run import GRAPHS, PY, parse_only, run_timed, tbgraph

_NETWORKX = """\
import gc, os, sys
gc.disable()
import networkx as nx
from tensorboard.compat.proto import graph_pb2
gd = graph_pb2.GraphDef.FromString(open(sys.argv[1], 'rb').read())
g = nx.MultiDiGraph()
node, succ, pred = g._node, g._succ, g._pred
for nd in gd.node:
    node[nd.name] = {'op': nd.op}
    succ[nd.name] = {}
    pred[nd.name] = {}
for nd in gd.node:
    into = pred[nd.name]
    for slot, text in enumerate(nd.input):
        src = text.partition(':')[0].lstrip('^')
        if src in succ:
            keys = into.get(src)
            if keys is None:
                keys = succ[src][nd.name] = into[src] = {}
            keys[slot] = {'slot': slot}
os._exit(0)
"""

_STAGES = """\
import gc, os, sys
gc.disable()
import graphviz_tb.api, graphviz_tb.cli.render, graphviz_tb.pipeline
from graphviz_tb import load
from graphviz_tb.group.scopes import build_scopes, finish
from graphviz_tb.group.tree import Hierarchy
graph = load(sys.argv[1])
stage = sys.argv[2]
if stage == 'hierarchy':
    graph.hierarchy()
elif stage != 'load':
    h = Hierarchy(graph.model, None)
    build_scopes(h)
    if stage == 'meetings':
        h.meetings()
        finish(h)
os._exit(0)
"""


def commands(path: Path, work: Path) -> dict[str, list[str]]:
    """Each cut of the pipeline, as a command."""
    return {
        "parse": parse_only(path),
        "networkx": [PY, "-c", _NETWORKX, str(path)],
        **{stage: [PY, "-c", _STAGES, str(path), stage]
           for stage in ("load", "scopes", "meetings", "hierarchy")},
        "svg": tbgraph("render", str(path), "-o", str(work / "floor.svg")),
        "html": tbgraph("render", str(path), "-o", str(work / "floor.html")),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graph", nargs="?", default=str(GRAPHS / "nasnet_large_step.pb"))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    path = Path(args.graph)
    if not path.is_file():
        sys.exit(f"floor.py: {path} does not exist (bench/make_graphs.py builds the bench's)")
    with tempfile.TemporaryDirectory() as tmp:
        cuts = commands(path, Path(tmp))
        times: dict[str, list[float]] = {name: [] for name in cuts}
        for n in range(args.repeat):
            print(f"run {n + 1} of {args.repeat}", file=sys.stderr)
            for name, cmd in cuts.items():
                times[name].append(run_timed(cmd).wall)
    parse = statistics.median(times["parse"])
    print(f"{path.name}, median of {args.repeat} fresh processes each\n")
    print("| cut after | wall (median, min–max) | ÷ parse |")
    print("|---|---|---|")
    for name, runs in times.items():
        mid = statistics.median(runs)
        print(f"| {name} | {mid:.2f} s ({min(runs):.2f}–{max(runs):.2f}) | {mid / parse:.1f}× |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
