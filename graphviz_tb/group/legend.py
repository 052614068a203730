"""What the legend calls each structure: a short name that no other row shares.

Structures are named by their first instance, a group, and the names of groups repeat across
a graph (the model's ``conv1`` and its gradients' ``conv1``), so a legend row needs as much of
its group's path as tells it apart, and no more: the legend is narrow, and a name cut to fit
it says nothing.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .tree import label_of

if TYPE_CHECKING:
    from .tree import Group

__all__ = ["legend_labels"]

#: A label a format gives a scope: a dotted path, then its kind in brackets where the format
#: says it (the TorchScript ONNX exporter's paths come without).
_OWN_LABEL = re.compile(r"([^ ]+)( \(.*\))?")


#: A legend name longer than this, three scopes deep or more, is shortened to the scope that
#: tells it apart and its label (``gradient_tape/…/block_11``).
_LEGEND_NAME = 32


def legend_labels(groups: list[Group]) -> list[str]:
    """What the legend calls each structure, by its first instance: the group's label,
    lengthened by its parents' (``gradients/conv1``) while another row would read the same.

    A training graph's default view shows the model's ``conv1`` and ``conv2`` and the
    gradients' ``conv1`` and ``conv2``: two structures, each first seen in a group named
    ``conv1``, whose legend rows read alike.  Each pass lengthens only the rows that still
    collide, so the passes are at most the deepest name's components.  A name grown long
    under scopes every alike row shares (what Keras' ``fit`` runs puts all under one call)
    would be cut before it said anything: it keeps the first scope that differs and the label.
    """
    # A label of the format's own, a dotted path and maybe a kind (PyTorch's ``layer1.0.conv1
    # (Conv2d)``), is shortened along its path; a list's index keeps the list's name
    # (``features.11``, not ``11``).
    own = [_OWN_LABEL.fullmatch(g.label) if g.label != label_of(g.name) else None
           for g in groups]
    parts = [m.group(1).split(".") if m else [p for p in g.name.split("/") if p] or [g.label]
             for g, m in zip(groups, own, strict=True)]
    keep = [2 if m and p[-1].isdigit() and len(p) > 1 else 1
            for p, m in zip(parts, own, strict=True)]
    while True:
        ends = [f"{'.'.join(p[-k:])}{m.group(2) or ''}" if m else "/".join(p[-k:])
                for p, k, m in zip(parts, keep, own, strict=True)]
        seen: dict[str, int] = {}
        for end in ends:
            seen[end] = seen.get(end, 0) + 1
        grew = False
        for i, p in enumerate(parts):
            if seen[ends[i]] > 1 and keep[i] < len(p):
                keep[i] += 1
                grew = True
        if not grew:
            return _shortened(parts, keep, ends, own)


def _shortened(parts: list[list[str]], keep: list[int], ends: list[str],
               own: list[re.Match[str] | None]) -> list[str]:
    """``ends`` with each long scope path cut to ``first scope that differs/…/label``, unless
    the cut would make two rows read alike (a format's own labels are already short)."""
    alike: dict[str, list[int]] = {}
    for i, p in enumerate(parts):
        alike.setdefault(p[-1], []).append(i)
    short = list(ends)
    for i, end in enumerate(ends):
        if len(end) <= _LEGEND_NAME or keep[i] < 3 or own[i] is not None:
            continue
        rows = alike[parts[i][-1]]
        shared = 0
        while all(len(parts[j]) > shared + 1 and parts[j][shared] == parts[i][shared]
                  for j in rows):
            shared += 1
        rest = parts[i][max(shared, len(parts[i]) - keep[i]):]
        if len(rest) >= 3:
            short[i] = f"{rest[0]}/…/{rest[-1]}"
    return short if len(set(short)) == len(set(ends)) else ends
