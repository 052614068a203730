"""Blocks found from the dataflow, and the rule that keeps every invented group convex.

These are algorithms on one group's *child graph*: its children as nodes ``0 .. n-1``, and an
edge wherever a model edge runs from something inside one child to something inside another.
The hierarchy (:mod:`graphviz_tb.group.tree`) builds that graph and applies the answers.

**Convexity.**  A group we invent (a prefix group, a series, a section, a block) must never let
a path leave it and come back in; otherwise the collapsed picture of an acyclic model shows
loops.  Contracting every proposed group of one parent at once, the groups on a cycle of the
contracted graph are exactly the ones to give up (:func:`cyclic_parts`).  Giving all of them up
in one round is enough: a cycle that survives would have been a cycle before.

**Blocks.**  Where names give no convex grouping (Inception's ``conv2d_57``,
``batch_normalization_57``, ... all directly under the model), the model's modules are found
from the graph.  Its *waists* are the children every path from the group's data inputs to its
outputs passes through (they dominate the outputs): a chain's every layer, the concatenation
closing each Inception module, the add closing each residual block.  Cutting after each waist
gives segments whose contracted graph is a chain, so each is convex (:func:`segments`).  Runs of
tiny segments (a chain of single layers) are joined, and a sequence that repeats with a short
period (a Transformer's attention half and feed-forward half) is cut at its period, so each
block is one layer (:func:`blocks`).
"""

from __future__ import annotations

import heapq
import itertools
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..model.graph import reachable

if TYPE_CHECKING:
    from typing import TypeAlias

    from _typeshed import SupportsRichComparison

    #: One sort key per node (compared, and pushed on heaps: hashing alone is not enough).
    Keys: TypeAlias = Sequence[SupportsRichComparison]

__all__ = ["ChildGraph", "blocks", "convex_chunks", "cyclic_parts", "has_sequence",
           "label_groups", "segments", "strong_components", "topological_order"]

#: Segments smaller than this (children) are joined with their neighbours in a run.
_SMALL = 2
#: A stage's plateau: at least this many positions with the same count of values waiting.
_PLATEAU = 3
#: Periods tried when a sequence of segments repeats (a Transformer layer has two halves).
_PERIODS = (2, 3, 4)
#: A graph whose longest path is shorter than this has no sequence of modules to find (many
#: short independent chains side by side are a job for series and sections).
_MIN_LENGTH = 6


class ChildGraph:
    """One group's children as a DAG (loop back edges left out).

    ``succ[i]`` lists the children ``i`` feeds; ``data_in`` holds the children that receive
    data (not a parameter) from outside the group, and ``data_out`` those whose output leaves
    it: they are where the group's dataflow starts and ends.
    """

    __slots__ = ("_topo", "data_in", "data_out", "n", "pred", "succ")

    def __init__(self, n: int, edges: Sequence[tuple[int, int]],
                 data_in: set[int] | None = None, data_out: set[int] | None = None) -> None:
        self.n = n
        self.succ: list[list[int]] = [[] for _ in range(n)]
        self.pred: list[list[int]] = [[] for _ in range(n)]
        seen = set()
        for a, b in edges:
            if a != b and (a, b) not in seen:
                seen.add((a, b))
                self.succ[a].append(b)
                self.pred[b].append(a)
        self.data_in = data_in or set()
        self.data_out = data_out or set()
        #: :func:`topological_order` by node number, once asked for (cutting one group into
        #: blocks asks four times).
        self._topo: list[int] | None = None

    @classmethod
    def of_lists(cls, succ: list[list[int]], pred: list[list[int]]) -> ChildGraph:
        """The graph of adjacency lists already made, with no repeated edge and no
        self-loop: no set of the edges seen, which cost as much as the rest on an
        optimizer's 40,000 ops."""
        g = cls(0, ())
        g.n, g.succ, g.pred = len(succ), succ, pred
        return g


def topological_order(g: ChildGraph, key: Keys | None = None) -> list[int]:
    """Kahn's algorithm, smallest ``key`` first among the ready (a heap: O(E + V log V)).

    Nodes on a cycle (there should be none) come last, in key order.  Without ``key``, the
    order by node number is worked out once per graph (do not change the list returned).
    """
    if key is None and g._topo is not None:
        return g._topo
    keys = key if key is not None else range(g.n)
    order = _kahn(g, key)
    if len(order) < g.n:
        placed = set(order)
        order.extend(sorted((i for i in range(g.n) if i not in placed), key=lambda i: keys[i]))
    if key is None:
        g._topo = order
    return order


def _kahn(g: ChildGraph, keys: Keys | None) -> list[int]:
    """The nodes in topological order, smallest key first among the ready; those on a cycle
    or after one are left out.  With no ``keys`` each node is its own key, and the heap holds
    the numbers themselves, not a pair per node (an optimizer's 40,000 ops are ordered so)."""
    indeg = [len(p) for p in g.pred]
    ready: list[Any] = [i if keys is None else (keys[i], i)
                        for i in range(g.n) if indeg[i] == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        top = heapq.heappop(ready)
        i = top if keys is None else top[1]
        order.append(i)
        for j in g.succ[i]:
            indeg[j] -= 1
            if indeg[j] == 0:
                heapq.heappush(ready, j if keys is None else (keys[j], j))
    return order


def convex_chunks(g: ChildGraph, key: Keys, size: int) -> list[list[int]]:
    """The nodes dealt into consecutive chunks of about ``size``, each convex.

    Chunks of a topological order are convex: a path leaving one reaches only later ones.
    Where the graph has cycles (the user's own scopes need not be convex), each strongly
    connected part goes whole into one chunk, in topological order of the parts, so the
    chunks still form no loop; a part larger than ``size`` is a chunk of its own.  No chunk
    but a lone one holds less than a quarter of ``size``.
    """
    # Ranks for keys: the heap then compares numbers, not name tuples, and pops the same
    # order (the sort is stable, so equal keys keep their node order, as the heap's ties).
    rank = [0] * g.n
    for r, i in enumerate(sorted(range(g.n), key=key.__getitem__)):
        rank[i] = r
    order = _kahn(g, rank)
    if len(order) == g.n:  # no cycle (the usual case): every part is one node
        return _no_slivers([order[i:i + size] for i in range(0, g.n, size)] or [[]], size)
    part_of = strong_components(g)
    members: list[list[int]] = [[] for _ in range(max(part_of) + 1)]
    for i in range(g.n):
        members[part_of[i]].append(i)
    for m in members:
        m.sort(key=lambda i: key[i])
    parts = ChildGraph(len(members), [(part_of[a], part_of[b]) for a in range(g.n)
                                      for b in g.succ[a] if part_of[a] != part_of[b]])
    chunks: list[list[int]] = [[]]
    for p in topological_order(parts, [key[m[0]] for m in members]):
        if chunks[-1] and len(chunks[-1]) + len(members[p]) > size:
            chunks.append([])
        chunks[-1].extend(members[p])
    return _no_slivers(chunks, size)


def _no_slivers(chunks: list[list[int]], size: int) -> list[list[int]]:
    """Each chunk of less than a quarter of ``size`` joined to the one before it (the first to
    the one after): a section of one op beside one of 600 (where a cycle holds most of a
    group) is a level of nesting that shows nothing.  Consecutive chunks stay convex
    together; one pass, so only a lone chunk can stay that small."""
    out: list[list[int]] = []
    for chunk in chunks:
        if out and 4 * min(len(out[-1]), len(chunk)) < size:
            out[-1] = out[-1] + chunk
        else:
            out.append(chunk)
    return out


def cyclic_parts(g: ChildGraph, part: Sequence[int]) -> set[int]:
    """The parts (``part[i]`` is node ``i``'s part, or -1 for a node alone) that lie on a
    directed cycle once each part is contracted to one node."""
    node: dict[tuple[str, int], int] = {}  # each part, and each node alone, as one node
    of = [node.setdefault(("p", p) if p >= 0 else ("n", i), len(node))
          for i, p in enumerate(part)]
    quotient = ChildGraph(len(node), [(of[a], of[b]) for a in range(g.n) for b in g.succ[a]])
    component = strong_components(quotient)
    size = [0] * quotient.n
    for c in component:
        size[c] += 1
    return {p for (kind, p), x in node.items() if kind == "p" and size[component[x]] > 1}


def strong_components(g: ChildGraph) -> list[int]:
    """Each node's strongly connected component, as a number (Tarjan's algorithm, with an
    explicit stack: groups have up to 100,000 children).

    Written here rather than taken from networkx so that drawing a graph does not import it
    (which costs more than a small graph's whole render); the tests check it against networkx.
    """
    n = g.n
    index = [-1] * n
    low = [0] * n
    component = [-1] * n
    on_stack = [False] * n
    stack: list[int] = []
    count = found = 0
    for root in range(n):
        if index[root] >= 0:
            continue
        index[root] = low[root] = count
        count += 1
        stack.append(root)
        on_stack[root] = True
        work = [(root, 0)]
        while work:
            v, i = work[-1]
            succ = g.succ[v]
            if i < len(succ):
                work[-1] = (v, i + 1)
                w = succ[i]
                if index[w] < 0:
                    index[w] = low[w] = count
                    count += 1
                    stack.append(w)
                    on_stack[w] = True
                    work.append((w, 0))
                elif on_stack[w] and index[w] < low[v]:
                    low[v] = index[w]
                continue
            work.pop()
            if work:
                u = work[-1][0]
                if low[v] < low[u]:
                    low[u] = low[v]
            if low[v] == index[v]:
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    component[w] = found
                    if w == v:
                        break
                found += 1
    return component


def segments(g: ChildGraph, big: int = 40) -> list[int]:
    """Each child's segment (``0, 1, ...`` in dataflow order), or -1 for a child touching no
    other.

    The children the data inputs reach and the outputs need are put in a topological order
    that emits everything a node needs just before it (depth-first from the outputs, deepest
    input first), and cut wherever only one value is still wanted later: after each waist.
    A segment still longer than ``big`` is cut again wherever at most two values are wanted
    later, which separates cells that each read the two cells before them (NASNet).  Every
    cut of a topological order leaves convex pieces.

    Children the data inputs do not reach (constants, parameters) join the earliest segment
    that consumes them, and dead ends the outputs do not need join the latest segment that
    feeds them, so every edge runs from a segment to itself or a later one.
    """
    n = g.n
    starts = g.data_in or {i for i in range(n) if not g.pred[i] and g.succ[i]}
    ends = g.data_out or {i for i in range(n) if not g.succ[i] and g.pred[i]}
    reached = reachable(starts, g.succ)
    needed = reachable(ends, g.pred)
    main = reached & needed
    seg = [-1] * n
    if not main:
        return seg
    order = _emit_order(g, main, ends & main)
    position = {v: k for k, v in enumerate(order)}
    last = [0] * len(order)  # the position of each node's last consumer among the main
    for k, v in enumerate(order):
        last[k] = max((position[w] for w in g.succ[v] if w in position), default=k)
    live = _live_counts(last)
    # The group's own input is a value too: wanted until the last child that reads it.
    readers = [position[v] for v in g.data_in if v in position]
    if len(readers) > 1:
        for k in range(max(readers)):
            live[k] += 1
    cuts = [k for k in range(len(order) - 1) if live[k] <= 1]
    cuts = _refine(cuts, live, len(order), big)
    index, bounds = 0, set(cuts)
    for k, v in enumerate(order):
        seg[v] = index
        if k in bounds:
            index += 1
    topo = topological_order(g)
    for i in topo:  # dead ends after the last thing they need
        if i in reached and i not in main:
            fed = [seg[p] for p in g.pred[i] if seg[p] >= 0]
            seg[i] = max(fed) if fed else -1
    for i in reversed(topo):  # what the data inputs never reach, before its first use
        if i not in reached:
            used = [seg[s] for s in g.succ[i] if seg[s] >= 0]
            seg[i] = min(used) if used else -1
    return seg


def _emit_order(g: ChildGraph, main: set[int], ends: set[int]) -> list[int]:
    """A topological order of ``main`` that emits each node right after what it needs:
    depth-first from the outputs, each node's inputs visited deepest first (so a cell's
    branches come after the cell before it has been emitted whole)."""
    level = dict.fromkeys(main, 0)
    for v in topological_order(g):
        if v in main:
            for w in g.succ[v]:
                if w in main and level[w] < level[v] + 1:
                    level[w] = level[v] + 1
    emitted: set[int] = set()
    order: list[int] = []
    roots = sorted(ends, key=lambda v: (-level[v], v))
    roots += sorted(main - ends, key=lambda v: (-level[v], v))
    def inputs_of(v: int) -> Iterator[int]:
        """``v``'s inputs in ``main``, deepest first (most have one: no sort)."""
        found = [p for p in g.pred[v] if p in main]
        if len(found) > 1:
            found.sort(key=lambda p: (-level[p], p))
        return iter(found)

    for root in roots:
        if root in emitted:
            continue
        stack = [(root, inputs_of(root))]
        emitted.add(root)
        while stack:
            v, inputs = stack[-1]
            for p in inputs:
                if p not in emitted:
                    emitted.add(p)
                    stack.append((p, inputs_of(p)))
                    break
            else:
                stack.pop()
                order.append(v)
    return order


def _live_counts(last: list[int]) -> list[int]:
    """After each position, how many of the values emitted so far are wanted later."""
    ending = [0] * (len(last) + 1)
    for end in last:
        ending[end] += 1
    live, out = 0, []
    for k in range(len(last)):
        live += 1 - ending[k]
        out.append(live)
    return out


def _refine(cuts: list[int], live: list[int], n: int, big: int) -> list[int]:
    """Cut a segment longer than ``big`` again: at the ends of its stages where it has them
    (see :func:`_stages`), else where at most two values cross (NASNet's cells, each reading
    the two before it)."""
    out: list[int] = []
    bounds = [-1, *cuts, n - 1]
    for lo, hi in itertools.pairwise(bounds):
        if hi - lo > big:
            out.extend(_stages(live, lo, hi)
                       or [k for k in range(lo + 1, hi) if live[k] <= 2])
        if hi != n - 1:
            out.append(hi)
    return sorted(set(out))


def _stages(live: list[int], lo: int, hi: int) -> list[int]:
    """The ends of a segment's stages: the positions in ``(lo, hi)`` where a plateau begins
    or ends, when it has two or more.  A plateau is a run of at least ``_PLATEAU`` positions
    with the same count of values wanted later, two or more: a chain of layers that runs
    while values made before it wait (a U-Net's encoder stage, holding the skips of the
    stages above; the decoder stage that takes one of them back; an unrolled LSTM's time
    steps, each holding the cell state).  The count steps at each stage's end: the stages
    are where no waist is, since every cut in a skip's span crosses it."""
    runs: list[tuple[int, int]] = []  # (first, last) position of each plateau
    k = lo + 1
    while k < hi:
        end = k
        while end + 1 < hi and live[end + 1] == live[k]:
            end += 1
        if live[k] >= 2 and end - k + 1 >= _PLATEAU:
            runs.append((k, end))
        k = end + 1
    if len(runs) < 2:
        return []
    return sorted({k for first, last in runs for k in (first - 1, last) if lo < k < hi})


def blocks(g: ChildGraph, signature: Keys) -> list[list[int]]:
    """The group's blocks: its segments, runs of tiny ones joined, a periodic sequence cut at
    its period.  Each block lists its children in dataflow order; children in no block (alone,
    touching nothing) are left out.  Fewer than two blocks means the graph has no modules to
    show.  ``signature[i]`` is a cheap structural fingerprint of child ``i`` (equal children,
    equal fingerprints), used to see a sequence repeat.
    """
    if not has_sequence(g):
        return []
    seg = segments(g)
    count = max(seg) + 1
    if count < 2:
        return []
    members: list[list[int]] = [[] for _ in range(count)]
    for i in topological_order(g):
        if seg[i] >= 0:
            members[seg[i]].append(i)
    members = _join_small(members)
    members = _fold_period(g, members, signature)
    return members if 2 <= len(members) <= g.n // 2 else []


def has_sequence(g: ChildGraph) -> bool:
    """Is the graph long enough to hold a sequence of modules (a path of at least
    ``_MIN_LENGTH`` nodes)?  Many short independent chains side by side are not."""
    return _longest_path(g) >= _MIN_LENGTH


def _longest_path(g: ChildGraph) -> int:
    """The number of nodes on the longest path."""
    length = [1] * g.n
    for v in topological_order(g):
        for w in g.succ[v]:
            if length[w] < length[v] + 1:
                length[w] = length[v] + 1
    return max(length, default=0)


def _join_small(members: list[list[int]]) -> list[list[int]]:
    """Join consecutive segments smaller than ``_SMALL`` (a chain of single layers) into one."""
    out: list[list[int]] = []
    run: list[int] = []
    for m in members:
        if len(m) < _SMALL:
            run.extend(m)
            continue
        if run:
            out.append(run)
            run = []
        out.append(m)
    if run:
        out.append(run)
    return out


def _fold_period(g: ChildGraph, members: list[list[int]], signature: Keys
                 ) -> list[list[int]]:
    """Cut a sequence of segments that repeats with a short period at that period: the
    longest stretch where segment ``k`` looks like segment ``k + p`` (same fingerprints, and
    not all one kind) is grouped ``p`` at a time from its start, and one period more where
    the segment after the stretch begins with what completes it (see :func:`_completion`)."""
    if len(members) < 4:
        return members
    look = [tuple(sorted(signature[i] for i in m)) for m in members]
    best: tuple[int, int, int] | None = None  # (segments covered, period, start)
    for p in _PERIODS:
        k = 0
        while k + p < len(look):
            if look[k] != look[k + p] or len(set(look[k:k + p])) == 1:
                k += 1
                continue
            start = k
            while k + p < len(look) and look[k] == look[k + p]:
                k += 1
            covered = k + p - start
            if covered >= 2 * p and (best is None or covered > best[0]):
                best = (covered, p, start)
    if best is None:
        return members
    covered, p, start = best
    end = start + covered - covered % p
    folded = members[:start]
    folded.extend([i for m in members[k:k + p] for i in m] for k in range(start, end, p))
    # A Transformer's last layer also feeds the classifier, so its closing norm is a
    # one-child segment beside the pooling and the head, and runs of those are joined into
    # one segment: the stretch ends one segment short.  When the segments after it match the
    # period but for the last, the next segment's first children may complete it.
    head = end + p - 1
    last = _completion(g, members[head], look[end - 1], signature) \
        if head < len(members) and look[end:head] == look[end - p:end - 1] else None
    if last is None:
        return folded + members[end:]
    folded.append([i for m in members[end:head] for i in m] + last)
    taken = set(last)
    return [*folded, [i for i in members[head] if i not in taken], *members[head + 1:]]


def _completion(g: ChildGraph, segment: list[int], look: tuple, signature: Keys
                ) -> list[int] | None:
    """The children a segment begins with that together look like ``look`` (a segment's
    sorted fingerprints), or None when it does not begin so or has nothing else.  They are
    taken in dataflow order, each with its inputs in the segment, so they are convex, and so
    is what is left."""
    wanted = Counter(look)
    left = set(segment)  # the segment's children not taken
    taken: list[int] = []
    for i in segment:  # in dataflow order
        if wanted[signature[i]] and not left.intersection(g.pred[i]):
            wanted[signature[i]] -= 1
            left.discard(i)
            taken.append(i)
            if not +wanted:
                return taken if left else None
    return None


def label_groups(g: ChildGraph, labels: Sequence[str], weight: Sequence[int],
                 blocks_: list[list[int]]) -> list[str]:
    """A name for each block from its members, in dataflow order.

    A chain (entered once) is ``first … last``; so is a block whose main entry holds a fair
    share of it (a Transformer layer, entered by its attention and by the residual beside it:
    ``mha_2 … ln2_2``).  A block entered by many small branches (an Inception module, a NASNet
    cell) is named by the member that closes it: ``… mixed3``.  ``weight[i]`` is child
    ``i``'s op count.
    """
    names = []
    for members in blocks_:
        inside = set(members)
        entries = [i for i in members
                   if i in g.data_in or any(p not in inside for p in g.pred[i])]
        last = labels[members[-1]]
        main = max(entries or members[:1], key=lambda i: (weight[i], -members.index(i)))
        share = weight[main] / max(1, sum(weight[i] for i in members))
        if main != members[-1] and (len(entries) == 1 or share >= 0.2):
            names.append(f"{labels[main]} … {last}")
        else:
            names.append(f"… {last}")
    return names
