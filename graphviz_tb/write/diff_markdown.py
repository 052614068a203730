"""``tbgraph diff --markdown``: what changed between two models, as a pull-request comment.

A reviewer reads the counts, then where the changes are, then follows the pointer to the
picture.  So the text is:

* a title naming both inputs, and the counts of ops and edges added, removed and changed;
* the **changed modules**: the groups of the merged model's tree that hold changes (name
  scopes and function bodies; the groups tbgraph invents, series, prefixes and dataflow
  blocks, are looked through), one level below the innermost module holding every change
  (a model's wrapper scope, or the one block a change is confined to), largest first.  Each
  changed op is counted once, in its row, so the rows add up to the counts above; ops directly
  in that innermost module have a row of their own;
* the changed ops and what changed in each, folded (``<details>``);
* where the full picture is: the file ``-o`` wrote, else the command that draws it.

GitHub refuses a comment over 65,536 characters: each table keeps its rows within a byte
budget and ends in an ``… and N more`` row that still counts what it leaves out, so the whole
stays under :data:`LIMIT` bytes however large the diff.  Every text from a model (and the
paths) is a code span made by :func:`~graphviz_tb.escaping.markdown_code`: nothing in a name
becomes markup, HTML, a link or a mention.
"""

from __future__ import annotations

import os
import shlex
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from ..escaping import markdown_code
from ..group.tree import natural_key
from ..model.diff import ADDED, CHANGED, REMOVED, UNCHANGED
from ..picture import DiffTally
from .files import write_output

if TYPE_CHECKING:
    from ..group.tree import Group, Hierarchy
    from ..model.diff import GraphDiff

__all__ = ["LIMIT", "ModuleChanges", "changed_modules", "diff_markdown"]

#: The whole text stays under this many bytes (UTF-8): within GitHub's 65,536 characters.
LIMIT = 60_000
#: The groups a person named: the modules a row can be.
_MODULE_KINDS = ("scope", "function")
#: Rows of each table at most, and the bytes each table's rows may take.
_MODULE_ROWS, _MODULE_BYTES = 30, 24_000
_OP_ROWS, _OP_BYTES = 20, 24_000
#: Longest name, "what changed" and input path shown (in characters, cut with ``…``).
_NAME_CHARS, _WHAT_CHARS, _PATH_CHARS = 160, 300, 200
#: The statuses a row counts, in the order of its columns.
_COUNTED = (ADDED, REMOVED, CHANGED)


class ModuleChanges(NamedTuple):
    """One row of the changed modules: the module (None for the ops directly in the
    innermost module holding every change) and how many of its ops were added, removed or
    changed."""

    module: Group | None
    added: int
    removed: int
    changed: int

    @property
    def total(self) -> int:
        return self.added + self.removed + self.changed


def changed_modules(h: Hierarchy) -> tuple[Group, list[ModuleChanges]]:
    """The innermost module holding every change (the root when none does), and one row for
    each of its child modules holding changes, with one for its own changed ops, largest
    first (ties in name order, numbers as numbers).  ``h`` is the tree of a diff's merged
    model, its ops marked ``diff``."""
    chains: list[tuple[list[Group], str]] = []
    for name, data in h.model.g.node_data.items():
        status = data.get("diff", UNCHANGED)
        if status != UNCHANGED:
            modules = [g for g in h.ops[name].ancestors() if g.kind in _MODULE_KINDS]
            chains.append((modules[::-1], status))
    depth = _common_depth([chain for chain, _ in chains])
    focus = chains[0][0][depth - 1] if depth else h.root
    counts: dict[Group | None, Counter[str]] = {}
    for chain, status in chains:
        counts.setdefault(chain[depth] if len(chain) > depth else None, Counter())[status] += 1
    rows = [ModuleChanges(m, c[ADDED], c[REMOVED], c[CHANGED]) for m, c in counts.items()]
    rows.sort(key=lambda r: (-r.total, r.module is not None,
                             natural_key(r.module.name) if r.module is not None else []))
    return focus, rows


def _common_depth(chains: list[list[Group]]) -> int:
    """How many outer modules every chain shares."""
    if not chains:
        return 0
    depth = min(map(len, chains))
    first = chains[0]
    for chain in chains[1:]:
        while depth and chain[depth - 1] is not first[depth - 1]:
            depth -= 1
    return depth


def diff_markdown(d: GraphDiff, h: Hierarchy, *, titles: tuple[str, str],
                  picture: str | None = None, command: Sequence[str] = (),
                  path: str | os.PathLike[str] | None = None) -> str:
    """The comment (see the module docstring) for the diff ``d``, whose merged model's tree is
    ``h``.  ``titles`` name the old and new inputs; ``picture`` is the file the full picture
    was written to, else ``command`` the command line that draws it.  With ``path``, the
    comment is also written there, whole or not at all."""
    old, new = (markdown_code(t, _PATH_CHARS) for t in titles)
    parts = [f"### tbgraph diff: {old} → {new}", _counts(d)]
    if not d.equal:
        focus, rows = changed_modules(h)
        if focus is not h.root:
            parts.append(f"Every change is inside {_module(h, focus, table=False)}.")
        parts.append(_module_table(h, focus, rows))
        if d.changed:
            parts.append(_changed_ops(d))
    if picture is not None:
        parts.append(f"Full picture: {markdown_code(picture, _PATH_CHARS)}"
                     + (" (open it in a browser)." if picture.endswith(".html") else "."))
    elif command and not d.equal:
        parts.append("Full picture: "
                     + markdown_code(shlex.join(command), 2 * _PATH_CHARS + 100) + ".")
    text = "\n\n".join(parts) + "\n"
    if path is not None:
        write_output(path, text.encode("utf-8"))
    return text


def _counts(d: GraphDiff) -> str:
    if d.equal:
        renamed = f" ({_n(len(d.renamed), 'op')} renamed, nothing else)" if d.renamed else ""
        return f"**No change:** the graphs are equal{renamed}."
    renamed = f", {len(d.renamed):,} renamed" if d.renamed else ""
    return (f"**Ops:** {len(d.added):,} added, {len(d.removed):,} removed, "
            f"{len(d.changed):,} changed{renamed}. **Edges:** {len(d.edges_added):,} added, "
            f"{len(d.edges_removed):,} removed.")


def _n(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _module(h: Hierarchy, g: Group, *, table: bool = True) -> str:
    """A module as the picture names it: the label its format gives it (PyTorch's
    ``layer1.0.conv1 (Conv2d)``), else its full name."""
    return markdown_code(h.model.scope_labels.get(g.name) or g.name, _NAME_CHARS, table=table)


def _module_table(h: Hierarchy, focus: Group, rows: list[ModuleChanges]) -> str:
    own = "ops at the top level" if focus is h.root else f"{_module(h, focus)}, its own ops"
    tally = DiffTally(h)

    def name(m: Group | None) -> str:
        if m is None:
            return own
        whole = tally.status(m)  # a layer inserted or deleted whole says so
        if whole == ADDED:
            return f"{_module(h, m)} (new)"
        if whole == REMOVED and not m.name.endswith(" (removed)"):
            return f"{_module(h, m)} (removed)"
        return _module(h, m)

    lines = (f"| {name(r.module)} | {r.added:,} | {r.removed:,} | {r.changed:,} |"
             for r in rows)
    kept, left = _within(lines, _MODULE_ROWS, _MODULE_BYTES)
    table = ["| Changed module | Added | Removed | Changed |", "|:--|--:|--:|--:|", *kept]
    if left:
        rest = rows[len(kept):]
        table.append(f"| … and {_n(len(rest), 'more module')} | "
                     + " | ".join(f"{sum(getattr(r, s) for r in rest):,}" for s in _COUNTED)
                     + " |")
    return "\n".join(table)


def _changed_ops(d: GraphDiff) -> str:
    def line(old: str, new: str, what: list[str]) -> str:
        name = markdown_code(new, _NAME_CHARS, table=True)
        if old != new:
            name += f" (was {markdown_code(old, _NAME_CHARS, table=True)})"
        return f"| {name} | {markdown_code('; '.join(what), _WHAT_CHARS, table=True)} |"

    kept, left = _within((line(c.old, c.new, c.what) for c in d.changed), _OP_ROWS, _OP_BYTES)
    table = ["| Op | What changed |", "|:--|:--|", *kept]
    if left:
        table.append(f"| … and {_n(left, 'more changed op')} | |")
    return (f"<details><summary>{_n(len(d.changed), 'changed op')}</summary>\n\n"
            + "\n".join(table) + "\n\n</details>")


def _within(lines: Iterable[str], rows: int, budget: int) -> tuple[list[str], int]:
    """The first lines, at most ``rows`` of them and ``budget`` bytes in all, and how many
    of the rest were left out."""
    kept: list[str] = []
    left = 0
    for line in lines:
        size = len(line.encode("utf-8")) + 1
        if left or len(kept) == rows or size > budget:
            left += 1
            continue
        kept.append(line)
        budget -= size
    return kept, left
