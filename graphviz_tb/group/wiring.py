"""A group's wiring, described for :mod:`~graphviz_tb.group.templates` to tell structures apart.

A template is decided from its children's labels (their templates, or their op types) and the
edges between them.  Equal descriptions (:func:`canonical`) put two groups in one bucket, and
prove them alike when the description pins the graph down; otherwise a witness does (the
children's local names, :func:`by_names`, or their places in natural name order,
:func:`by_order`), and an isomorphism test (:func:`same_structure`) is the last resort.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .tree import Group, natural_key

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["ChildGraph", "DescriptionIds", "by_names", "by_order", "canonical", "same_structure"]


class ChildGraph:
    """A group's children as a labelled digraph (node label = template or op type, edge label
    = kinds and multiplicity), kept for the isomorphism test that names and order could not
    settle.  As plain lists: networkx, which runs the test, is imported only when one runs
    (most pictures never need one, and the import costs more than a small graph's render)."""

    __slots__ = ("_digraph", "edges", "nodes")

    def __init__(self, group: Group, label: dict[int, int]) -> None:
        self.nodes = [(id(m), label[id(m)]) for m in group.children]
        self.edges = [(id(a), id(b), (agg.data, agg.control, agg.ref))
                      for (a, b), agg in group.edges.items()]
        self._digraph: nx.DiGraph | None = None

    def digraph(self) -> nx.DiGraph:
        if self._digraph is None:
            import networkx as nx  # imported when a test runs (see the class docstring)

            g = self._digraph = nx.DiGraph()
            for n, t in self.nodes:
                g.add_node(n, t=t)
            for a, b, kinds in self.edges:
                g.add_edge(a, b, t=kinds)
        return self._digraph


def same_structure(g1: ChildGraph, g2: ChildGraph) -> bool:
    from networkx.algorithms.isomorphism import DiGraphMatcher  # see ChildGraph: on demand

    def match(x: dict, y: dict) -> bool:
        return x["t"] == y["t"]

    return DiGraphMatcher(g1.digraph(), g2.digraph(), node_match=match,
                          edge_match=match).is_isomorphic()


class DescriptionIds:
    """Maps structural descriptions (nested tuples) to small ints, the same across groups."""

    def __init__(self) -> None:
        self.ids: dict[tuple, int] = {}

    def __call__(self, key: tuple) -> int:
        found = self.ids.get(key)
        if found is None:
            found = self.ids[key] = len(self.ids) + 1
        return found


def canonical(group: Group, label: dict[int, int], intern: DescriptionIds
               ) -> tuple[tuple, bool]:
    """A description of the group's wiring, and whether it is canonical (exact).

    Children's labels are first refined by their neighbourhoods (up to two rounds of colour
    refinement).  The description is the sorted label multiset and the sorted labelled edge
    list; it is exact (equal descriptions mean equal structure) when :func:`_determined` says
    the description pins the graph down.  Otherwise it is only a bucket key, and equality
    needs an isomorphism check.
    """
    children = group.children
    if len(children) == 1 and not group.edges:
        return ((label[id(children[0])],), ()), True
    lab = {id(m): label[id(m)] for m in children}
    edges = [(id(a), id(b), (agg.data, agg.control, agg.ref))
             for (a, b), agg in group.edges.items()]
    for _ in range(2):
        if len(set(lab.values())) == len(lab):
            break
        ins: dict[int, list] = {k: [] for k in lab}
        outs: dict[int, list] = {k: [] for k in lab}
        for a, b, t in edges:
            outs[a].append((lab[b], t))
            ins[b].append((lab[a], t))
        lab = {k: intern((v, tuple(sorted(ins[k])), tuple(sorted(outs[k]))))
               for k, v in lab.items()}
    labels = sorted(lab.values())
    wiring = sorted((lab[a], lab[b], t) for a, b, t in edges)
    return (tuple(labels), tuple(wiring)), _determined(labels, wiring)


def _determined(labels: list[int], wiring: list[tuple]) -> bool:
    """Whether any two graphs with this description are isomorphic.

    True when every label is distinct.  Also when children that share a label are twins: no
    edge joins two of them, and each entry of the edge list that touches a shared label occurs
    once per child bearing it.  Then each such child has the same edges to the same uniquely
    labelled children, so the description fixes the graph up to swapping twins.  That covers
    symmetric groups that would otherwise need an isomorphism search (a fan-out into two alike
    ops, several unconnected alike ops), and it is a property of the description alone, so
    two groups with one description always agree on it.
    """
    count: dict[int, int] = {}
    for x in labels:
        count[x] = count.get(x, 0) + 1
    if len(count) == len(labels):
        return True
    seen: dict[tuple, int] = {}
    for entry in wiring:
        a, b, _ = entry
        if count[a] > 1 and count[b] > 1:
            return False
        seen[entry] = seen.get(entry, 0) + 1
    return all(n == max(count[e[0]], count[e[1]]) for e, n in seen.items())


def by_order(group: Group, label: dict[int, int]) -> tuple:
    """The group's wiring by its children's places in natural name order.

    Two groups with equal results are isomorphic, the places being the witness.  This proves
    the sections of one series alike (``add_1…add_200`` against ``add_201…add_400``), whose
    names differ and whose chain of identical ops defeats both the refinement in
    :func:`canonical` and the isomorphism search, which is slow on a long chain.
    """
    children = sorted(group.children, key=lambda m: natural_key(m.label))
    place = {id(m): i for i, m in enumerate(children)}
    edges = sorted((place[id(a)], place[id(b)], agg.data, agg.control, agg.ref)
                   for (a, b), agg in group.edges.items())
    return tuple(label[id(m)] for m in children), tuple(edges)


def by_names(group: Group, label: dict[int, int]) -> tuple | None:
    """The group's wiring keyed by its children's local names, or None if names repeat.

    Two groups with equal results are isomorphic, the name bijection being the witness; this
    proves the usual case (repeated blocks built by the same code) without a search.
    """
    names = {m.label: label[id(m)] for m in group.children}
    if len(names) != len(group.children):
        return None
    edges = sorted((a.label, b.label, agg.data, agg.control, agg.ref)
                   for (a, b), agg in group.edges.items())
    return tuple(sorted(names.items())), tuple(edges)
