"""The group stage's driver: every grouping step in order; the scope series are made as views
open groups (:meth:`~graphviz_tb.group.tree.Hierarchy.settle`)."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from .._gc import paused_gc
from ..options import GroupOptions
from .dataflow import find_blocks, repair_convexity, sections
from .replicas import frame_first_replica
from .scopes import build_scopes, finish, prefix_groups
from .series import op_series, settle_level
from .templates import Templates
from .training import adopt_loose_ops, fold_metrics
from .tree import Hierarchy
from .updates import mirror_updates
from .variables import fold_shared_handles, fold_variables

if TYPE_CHECKING:
    from ..model.graph import GraphModel

__all__ = ["build_hierarchy", "complete"]


@paused_gc
def build_hierarchy(model: GraphModel, options: GroupOptions | None = None) -> Hierarchy:
    """Group the model's ops into scopes, function bodies, a training step's parts (its
    optimizer opened into the mirror of the model), prefix groups, series, blocks and
    sections, with the structural templates that decide which numbered scopes are alike.

    Scope series are made when a picture first reads a group's children: ``layer_1 ...
    layer_12`` fold into one series when their templates agree.  Edges between children are
    aggregated when a picture first reads a group's ``edges``, and templates are decided when
    a picture asks (:class:`~graphviz_tb.group.templates.Templates`).
    """
    options = options or GroupOptions()
    h = Hierarchy(model, options.series_min if options.series else None)
    build_scopes(h)
    frame_first_replica(h)
    adopt_loose_ops(h)
    fold_variables(h)
    fold_metrics(h)
    mirror_updates(h)
    fold_shared_handles(h)
    if options.prefix_groups:
        prefix_groups(h)
    if options.series:
        op_series(h, options.series_min)
    meet = h.meetings()
    known = repair_convexity(h, meet)
    if options.blocks:
        known = find_blocks(h, meet, known)
    sections(h, meet, known)
    finish(h)
    h.templates = Templates(h)
    h.settler = partial(settle_level, h, h.templates)
    return h


def complete(h: Hierarchy) -> None:
    """Decide every template, the whole tree settled first (the viewer ships them all).  Each
    group's edges are left to be aggregated as the page reads them, and let go once in its
    columns: aggregated here, all of them were held at once, a tenth of a million-op page's
    peak memory."""
    h.templates.complete()  # settles the tree
