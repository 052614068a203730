"""Structural templates: groups with the same internal structure get the same colour.

Structure means op types and wiring, recursively.  Children are decided before their parents
(TensorBoard checks parents first, so identical blocks often end up with different colours), a
cheap signature buckets candidates, and real equality is then verified with a labelled graph
isomorphism test, so two templates never share a colour by hash collision.  Every template with
two or more instances gets its own colour from an open-ended golden-ratio hue sequence (not a
cycle of 10 hues); unique structure is grey.
"""

from __future__ import annotations

import colorsys
from typing import TYPE_CHECKING

import networkx as nx
from networkx.algorithms.isomorphism import DiGraphMatcher

if TYPE_CHECKING:
    from .hierarchy import Group, Hierarchy

__all__ = ["UNIQUE_COLOR", "Templates", "assign_templates", "palette"]

UNIQUE_COLOR = {"light": "#dcdcdc", "dark": "#4a4a4a"}
#: Above this many children, a group is matched by signature alone (isomorphism is costly).
_VERIFY_LIMIT = 600


class Templates:
    """Template id -> its instances, with a representative name, largest templates first."""

    def __init__(self, instances: dict[int, list[Group]]) -> None:
        self.instances = instances
        repeated = [t for t, gs in instances.items() if len(gs) >= 2]
        repeated.sort(key=lambda t: (-instances[t][0].op_count * len(instances[t]),
                                     instances[t][0].name))
        #: Templates that occur at least twice, in legend order.
        self.repeated: list[int] = repeated
        self._rank = {t: i for i, t in enumerate(repeated)}

    def color(self, template: int | None, theme: str = "light") -> str:
        """The fill colour of a group of this template (grey when its structure is unique)."""
        rank = self._rank.get(template) if template is not None else None
        return UNIQUE_COLOR[theme] if rank is None else palette(rank, theme)

    def representative(self, template: int) -> Group:
        return self.instances[template][0]


def palette(index: int, theme: str = "light") -> str:
    """The ``index``-th distinct colour: golden-ratio hue steps, with three lightness bands so
    neighbouring hues after many steps still differ."""
    hue = (0.08 + index * 0.618033988749895) % 1.0
    band = (index // 7) % 3
    if theme == "dark":
        light, sat = (0.34, 0.30, 0.40)[band], 0.45
    else:
        light, sat = (0.80, 0.72, 0.86)[band], (0.65, 0.55, 0.75)[band]
    r, g, b = colorsys.hls_to_rgb(hue, light, sat)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def _child_graph(group: Group, label: dict[int, int]) -> nx.DiGraph:
    """The group's children as a labelled digraph (edge label = kinds and multiplicity)."""
    g = nx.DiGraph()
    for m in group.children:
        g.add_node(id(m), t=label[id(m)])
    for (a, b), agg in group.edges.items():
        g.add_edge(id(a), id(b), t=(agg.counts["data"], agg.counts["control"], agg.counts["ref"]))
    return g


def _same(g1: nx.DiGraph, g2: nx.DiGraph) -> bool:
    def match(x: dict, y: dict) -> bool:
        return x["t"] == y["t"]

    return DiGraphMatcher(g1, g2, node_match=match, edge_match=match).is_isomorphic()


class _Interner:
    """Maps structural descriptions (nested tuples) to small ints, the same across groups."""

    def __init__(self) -> None:
        self.ids: dict[tuple, int] = {}

    def __call__(self, key: tuple) -> int:
        found = self.ids.get(key)
        if found is None:
            found = self.ids[key] = len(self.ids) + 1
        return found


def _canonical(group: Group, label: dict[int, int], intern: _Interner
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
    edges = [(id(a), id(b), (agg.counts["data"], agg.counts["control"], agg.counts["ref"]))
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
    the symmetric groups that used to go to an isomorphism search (a fan-out into two alike
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


def _by_names(group: Group, label: dict[int, int]) -> tuple | None:
    """The group's wiring keyed by its children's local names, or None if names repeat.

    Two groups with equal results are isomorphic, the name bijection being the witness; this
    proves the usual case (repeated blocks built by the same code) without a search.
    """
    names = {m.label: label[id(m)] for m in group.children}
    if len(names) != len(group.children):
        return None
    edges = sorted((a.label, b.label, agg.counts["data"], agg.counts["control"],
                    agg.counts["ref"]) for (a, b), agg in group.edges.items())
    return tuple(sorted(names.items())), tuple(edges)


def assign_templates(h: Hierarchy) -> Templates:
    """Give every group a ``template`` id (bottom-up) and return the template table."""
    label: dict[int, int] = {}
    op_ids: dict[str, int] = {}
    intern = _Interner()
    buckets: dict[tuple, list[tuple[int, tuple | None, nx.DiGraph | None]]] = {}
    instances: dict[int, list[Group]] = {}
    next_id = 0
    for op in h.ops.values():
        label[id(op)] = op_ids.setdefault(op.op, -len(op_ids) - 1)
    for group in h.groups_bottom_up():
        description, exact = _canonical(group, label, intern)
        key = (group.kind == "function", group.function if group.kind == "function" else None,
               description)
        bucket = buckets.setdefault(key, [])
        template = None
        named = graph = None
        if exact or len(group.children) > _VERIFY_LIMIT:
            template = bucket[0][0] if bucket else None
        else:
            named = _by_names(group, label)
            template = next((tid for tid, rep, _ in bucket if named is not None and rep == named),
                            None)
            if template is None and bucket:
                graph = _child_graph(group, label)
                for tid, _, rep_graph in bucket:
                    if rep_graph is None:
                        continue
                    if _same(graph, rep_graph):
                        template = tid
                        break
        if template is None:
            next_id += 1
            template = next_id
            bucket.append((template, named, graph or _child_graph(group, label)
                           if not exact else None))
        group.template = template
        label[id(group)] = template
        instances.setdefault(template, []).append(group)
    for gs in instances.values():
        gs.sort(key=lambda g: g.name)
    h.templates = Templates(instances)
    return h.templates


