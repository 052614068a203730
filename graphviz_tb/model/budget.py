"""Whether a graph fits in memory, estimated before it is built.

A graph too large for the machine should get one clear line, not a kill by the kernel after a
minute of swapping.  Every stage is linear in the graph, so what a render needs is estimated
from the GraphDef alone, before the model and the scope tree are built:

* what the process already holds: the parsed GraphDef (with any large constants), the
  modules;
* per op (top-level ops, plus the function-body ops that opening calls will add): the model's
  node and edges, the tree's op and group, the picture's share;
* per character of the op names: the copies the model and its edges keep;
* the names of nested groups: each group keeps its full name, so scopes nested ``d`` deep
  hold about ``d`` times their names' length (two ops under 4,000 scopes: 46 MB).  This is
  the one term that is not linear in the file, so it is counted exactly, over the distinct
  scopes of the ops.

The coefficients come from the peak resident memory of ``tbgraph render`` (default view, SVG)
on the bench's graphs (bench/scale.py): NASNet-Large's training step, the 200,000-op composed
graph, 100,000 siblings in one group, 80,000 Keras-3-like layer names, 4,000 functions, 4,000
nested scopes, 10 kB names.  The estimate is within 15% of each.  The HTML viewer ships the
whole tree with every edge and attribute, and ``--expand-all`` lays out every group: each adds
its own cost per op (within 30%).

The limit is ``TBGRAPH_MEMORY_LIMIT`` (bytes, or with ``K``, ``M``, ``G``) when set, else the
memory the system has available (``MemAvailable`` on Linux); with neither known, nothing is
checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import GraphvizTbError
from ..limits import ENV, MB, memory_limit, resident
from .calls import call_targets, calling_ops, wired_ops

if TYPE_CHECKING:
    from ..options import LoadOptions

__all__ = ["Cost", "TooLargeError", "check_load", "check_page", "check_render", "graph_cost"]

_PER_OP = 2_800
_PER_NAME_CHAR = 2.1  # an op's name: the model's copies of it (its key, its edges' ends)
_PER_NESTED_CHAR = 1.0  # a nested group's name, held once per group
_PER_HTML_OP = 3_000
_PER_EXPANDED_OP = 19_000


class TooLargeError(GraphvizTbError):
    """The graph would need more memory than the machine has (or than the set limit)."""


@dataclass(frozen=True)
class Cost:
    """What a graph holds that costs memory, counted from its GraphDef."""

    ops: int
    #: Of ``ops``, those that opening function calls adds (bounded by ``max_function_ops``).
    inlined: int
    #: The characters of the top-level op names.
    names: int
    #: The characters of every nested group's full name (see the module docstring).
    nested_names: int
    depth: int
    #: What the process held when the graph had been read (resident memory).
    resident: int

    def load_bytes(self) -> int:
        """Reading the graph and drawing its default view."""
        return int(self.resident + _PER_OP * self.ops + _PER_NAME_CHAR * self.names
                   + _PER_NESTED_CHAR * self.nested_names)

    def render_bytes(self, fmt: str, expand_all: bool) -> int:
        """A render in ``fmt``: the default view's, plus the viewer's data or every layout."""
        extra = _PER_HTML_OP * self.ops if fmt == "html" else 0
        if expand_all:
            extra += _PER_EXPANDED_OP * self.ops
        return self.load_bytes() + extra

    def describe(self) -> str:
        """``1,204,311 ops, scopes nested up to 12 deep``."""
        text = f"{self.ops:,} ops"
        if self.inlined:
            text += f" ({self.inlined:,} of them in opened function calls)"
        return text + f", scopes nested up to {self.depth:,} deep"


def graph_cost(graph_def: Any, options: LoadOptions, names: list[str] | None = None) -> Cost:
    """Count what costs memory in a GraphDef (one pass over its names, ``names`` when the
    caller read them already; no model built)."""
    if names is None:
        names = [node.name for node in graph_def.node]
    nested, depth = _group_names(names)
    inlined = 0
    library = ({f.signature.name: f for f in graph_def.library.function}
               if options.functions and graph_def.HasField("library") else {})
    if library:
        bodies = [graph_def.node, *(f.node_def for f in library.values())]
        calling = calling_ops(library, wired_ops(bodies, library))
        for nodes in bodies:
            for node in nodes:
                if node.op not in calling:
                    continue
                for _, fname in call_targets(node, library)[0]:
                    callee = library.get(fname)
                    inlined += len(callee.node_def) if callee is not None else 0
        if not graph_def.node:  # a library alone: every function drawn once
            inlined += sum(len(f.node_def) for f in library.values())
        inlined = min(inlined, options.max_function_ops)
    return Cost(len(names) + inlined, inlined, sum(map(len, names)), nested, depth,
                resident())


def _group_names(names: list[str]) -> tuple[int, int]:
    """The characters of every group's name (each op's scope and each of its ancestors, once),
    and how deep the scopes nest.

    An op in the same scope as the op before it (ops of a scope mostly come together) is
    passed over without cutting its scope's name out; a new scope's ancestors are walked only
    until one already counted.  So the work is the names' length, and the names counted, once
    each; only their hashes are kept, not the names (20,000 nested scopes over one op would
    hold 1.4 GB of them).
    """
    seen: set[int] = set()
    total = depth = 0
    last = ""
    for name in names:
        cut = name.rfind("/")
        if cut <= 0 or (cut == len(last) and name.startswith(last)):
            continue  # no scope, or the last op's
        scope = last = name[:cut]
        key = hash(scope)
        if key in seen:
            continue
        depth = max(depth, scope.count("/") + 1)  # a new scope is no deeper's ancestor
        while key not in seen:
            seen.add(key)
            total += len(scope)
            cut = scope.rfind("/")
            if cut <= 0:
                break
            scope = scope[:cut]
            key = hash(scope)
    return total, depth


def _gb(n: float) -> str:
    return f"{n / 2**30:.1f} GB" if n >= 2**30 else f"{n / MB:,.0f} MB"


def _refuse(where: str, cost: Cost, need: int, limit: int, source: str, advice: str) -> None:
    have = (f"the {_gb(limit)} this machine has available" if source == "available"
            else f"the {_gb(limit)} {ENV} allows")
    raise TooLargeError(
        f"{where}: {cost.describe()}: drawing it needs about {_gb(need)} of memory, more "
        f"than {have}; {advice}")


def check_load(cost: Cost, where: str) -> None:
    """Refuse, in one line, a graph whose default view would not fit in memory."""
    limit, source = memory_limit()
    need = cost.load_bytes()
    if limit is not None and need > limit:
        advice = (f"run it on a machine with more memory, or set {ENV} higher to try anyway "
                  "(--depth and --focus draw less, but the whole graph is read first)")
        if cost.nested_names > cost.load_bytes() // 2:
            advice = (f"most of it is the {cost.depth:,} levels of nested scopes, each "
                      f"holding its full name; {advice}")
        _refuse(where, cost, need, limit, source, advice)


def check_render(cost: Cost, where: str, fmt: str, expand_all: bool) -> None:
    """Refuse, in one line, a render that would not fit, saying what would (all groups open
    with ``expand_all``)."""
    limit, source = memory_limit()
    need = cost.render_bytes(fmt, expand_all)
    if limit is None or need <= limit:
        return
    fits = []
    if expand_all and cost.render_bytes(fmt, False) <= limit:
        fits.append("without --expand-all (--depth N opens fewer levels, --focus NAME "
                    "one part)")
    if fmt == "html" and cost.render_bytes("svg", expand_all) <= limit:
        fits.append("as SVG instead of HTML")
    if not fits:
        check_load(cost, where)
        fits.append("with the default view (--depth 1) as SVG")
    _refuse(where, cost, need, limit, source, "it would fit " + ", or ".join(fits))


def check_page(costs: list[Cost], where: str, expand_all: bool) -> None:
    """Refuse, in one line, a viewer page of several graphs (a logdir's) that would not fit in
    memory together: each graph's model, tree and viewer data are all held until the page is
    written.  Costs add up, as each is linear in its graph; the process counts once."""
    limit, source = memory_limit()
    if limit is None or len(costs) < 2:
        return
    total = Cost(sum(c.ops for c in costs), sum(c.inlined for c in costs),
                 sum(c.names for c in costs), sum(c.nested_names for c in costs),
                 max(c.depth for c in costs), resident())
    need = total.render_bytes("html", expand_all)
    if need > limit:
        _refuse(where, total, need, limit, source,
                f"the page holds {len(costs)} graphs: choose one with --graph N, --run or "
                "--tag (tbgraph info lists them), or draw one as SVG")


