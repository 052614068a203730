"""The first grouping: every op placed in the group its name scope makes, function bodies as
groups, and flat Keras 3 names split by shared prefix; then each member's depth, order and
structure invariant fixed in one walk."""

from __future__ import annotations

from collections import defaultdict

from .tree import (
    Group,
    Hierarchy,
    Member,
    OpNode,
    is_section,
    label_of,
    ordered,
    reparent,
    scope_path,
)

#: A group with more children than this is split by shared name prefix (Keras 3 flat names).
PREFIX_SPLIT_THRESHOLD = 12


def ensure_group(h: Hierarchy, path: str, labels: dict[str, str]) -> Group:
    """The group for a clean scope path (no empty components), creating it and its ancestors.

    The search starts from the deepest ancestor that already exists, not from the root: ops
    usually arrive beside or just below a known scope, and walking down from the root would
    re-hash every ancestor's full name: quadratic in the depth, times the name length.  Each
    new group's label is the path's component, one string per distinct label (``labels``).
    """
    groups = h.groups
    cut = len(path)
    missing: list[int] = []  # where the names of the groups to create end in ``path``
    while cut > 0 and path[:cut] not in groups:
        missing.append(cut)
        cut = path.rfind("/", 0, cut)
    node = groups[path[:cut]] if cut > 0 else h.root
    for end in reversed(missing):
        name = path[:end]
        label = path[cut + 1:end]  # clean: never empty
        child = groups[name] = Group(name, h, node, node.depth + 1,
                                     label=labels.setdefault(label, label))
        node._children.append(child)
        node = child
        cut = end
    return node


def build_scopes(h: Hierarchy) -> None:
    # The ops whose scope path is not their name (empty components dropped), with it.
    cleaned: dict[OpNode, str] = {}
    callers: list[tuple[str, list[str]]] = []
    by_scope: dict[str, Group] = {"": h.root}
    # One string per distinct label: a graph's ops repeat a few hundred last components
    # (``Relu``, ``read``), and every op kept its own copy (60 MB of a million-op graph).
    labels: dict[str, str] = {}
    ops = h.ops
    for name, data in h.model.g.node_data.items():  # the node dict itself: no view overhead
        if "//" not in name and name[:1] != "/" and name[-1:] != "/":
            scope, _, label = name.rpartition("/")
            path = name
        else:  # empty components (``a//b``, a trailing ``/``) are dropped
            parts = scope_path(name)
            scope, path = "/".join(parts[:-1]), "/".join(parts)
            label = label_of(name)
        parent = by_scope.get(scope)
        if parent is None:
            parent = by_scope[scope] = ensure_group(h, scope, labels)
        op = ops[name] = OpNode(name, parent, labels.setdefault(label, label), data["op"],
                                data["role"])
        if path is not name:
            cleaned[op] = path
        if "calls" in data:
            callers.append((path, data["calls"]))
    groups = h.groups
    # A second pass over the ops rather than a list of (op, path) pairs: a tuple per op was
    # 80 MB of a million-op graph's peak.
    for op in ops.values():
        # An op whose name is also a scope becomes a leaf inside that scope.
        home = groups.get(cleaned.get(op, op.name) if cleaned else op.name)
        if home is not None:
            op.parent = home
        op.parent._children.append(op)  # type: ignore[union-attr]
    for prefix, fname in h.model.function_groups.items():
        group = groups.get("/".join(scope_path(prefix)))
        if group is not None:
            group.kind, group.function = "function", fname
    for path, calls in callers:
        group = groups.get(path) if calls else None
        if group is not None and group.kind != "function":
            group.kind, group.function = "function", ", ".join(dict.fromkeys(calls))
    for path, label in h.model.scope_labels.items():
        group = groups.get(path)
        if group is not None:
            group.label = label


def finish(h: Hierarchy) -> None:
    """Once the eager regrouping is done, in one walk of the tree: every member's depth and
    place among its siblings (see :func:`ordered`; sections keep their numeric order), and
    each group's op count, size (see :class:`~.tree.Group`) and the sum of the hashes of the
    op types below it (a cheap invariant of its structure that scope series leave alone; see
    :mod:`.structure`)."""
    preorder: list[Group] = []
    stack = [h.root]
    while stack:
        g = stack.pop()
        preorder.append(g)
        children = g._children
        if len(children) > 1 and not is_section(children[0]):  # sections are made in order
            g._children = children = ordered(children)
        depth = g.depth + 1
        for m in children:
            m.depth = depth
            if isinstance(m, Group):
                stack.append(m)
    for g in reversed(preorder):  # children before parents
        count = total = 0
        size = 1
        for c in g._children:
            if isinstance(c, Group):
                count += c.op_count
                total += c.op_hash
                size += c.size
            else:
                count += c.role == "op"  # type: ignore[attr-defined]
                total += hash(c.op)  # type: ignore[attr-defined]
                size += 1
        g.op_count, g.op_hash, g.size = count, total, size


def _first_token(label: str, prefix: str) -> str | None:
    """``prefix`` and the next ``_``-separated token of ``label``, if it has one more token
    after it.  An empty token (``_x``, ``a__b``) is none: it named a group ``""``, the root's
    name, or one ending in ``_``."""
    rest = label[len(prefix):] if label.startswith(prefix) else None
    if not rest or "_" not in rest:
        return None
    token = rest.split("_", 1)[0]
    return prefix + token if token else None


def _split_by_prefix(h: Hierarchy, group: Group, prefix: str = "") -> None:
    """Form virtual groups of children sharing a name prefix, level by level (iteratively)."""
    work = [(group, prefix)]
    while work:
        grp, pre = work.pop()
        if len(grp._children) <= PREFIX_SPLIT_THRESHOLD:
            continue
        base = grp.name if grp.kind != "prefix" else grp.parent.name  # type: ignore[union-attr]
        taken = {m.label for m in grp._children}
        buckets: dict[str, list[Member]] = defaultdict(list)
        for m in grp._children:
            key = _first_token(m.label, pre)
            if key is not None:
                buckets[key].append(m)
        keys = [k for k, ms in buckets.items() if len(ms) >= 2 and k not in taken]
        if len(keys) == 1 and len(buckets[keys[0]]) == len(grp._children):
            work.append((grp, keys[0] + "_"))  # all share it: look one token further
            continue
        if not keys:
            continue
        moved = {m for k in keys for m in buckets[k]}  # a set: list membership would be quadratic
        keep = [m for m in grp._children if m not in moved]
        new_groups = []
        for key in sorted(keys):
            full = f"{base}/{key}" if base else key
            if full in h.groups or full in h.ops:
                keep.extend(buckets[key])
                continue
            virt = Group(full, h, grp, grp.depth + 1, kind="prefix")
            reparent(buckets[key], virt)
            h.groups[full] = virt
            new_groups.append(virt)
            work.append((virt, key + "_"))
        grp._children = new_groups + keep


def prefix_groups(h: Hierarchy) -> None:
    """Split groups of many flat names by shared prefix (see :func:`_split_by_prefix`), but
    not a training step's top level: its children are the step's parts, named by the user's
    code (each call of a model, each loss call, each optimizer), and a prefix box would
    hide them (a GAN's two discriminator calls in one box ``discriminator``, its three
    losses in one box ``binary``)."""
    for group in list(h._raw_groups()):
        if group.kind != "prefix" and len(group._children) > PREFIX_SPLIT_THRESHOLD \
                and group not in h.training:
            _split_by_prefix(h, group)
