"""The hierarchy cache is keyed by the grouping options themselves: a grouping option that the
key left out would serve a stale tree with no error, and an option of a later stage in the key
would rebuild the tree for nothing."""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import pytest

import graphviz_tb
from graphviz_tb.options import GroupOptions, RenderOptions

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "mnist_tf1.pb"

#: A value other than the default for every option the grouping stage does not read.
LATER_STAGES: dict[str, Any] = {
    "depth": 2, "budget": 10, "expand": ("x*",), "collapse": ("y*",), "expand_all": True,
    "focus": "x", "radius": 3, "color_by": "op", "aux": False, "shapes": False,
    "dtypes": True, "rankdir": "TB", "theme": "dark", "title": "t", "legend": False,
}
#: Options that change the model itself (shape inference): the graph drops its trees then.
MODEL = {"input_shapes", "infer_shapes"}
GROUPING = [f.name for f in fields(GroupOptions)]


def _other(value: Any) -> Any:
    return not value if isinstance(value, bool) else value + 1


def test_every_render_option_is_grouping_or_of_a_later_stage() -> None:
    """A new option must be put on one side: in :class:`GroupOptions` (it is then part of
    the key) or among the options that leave the tree alone."""
    render = {f.name for f in fields(RenderOptions)}
    assert set(GROUPING) <= render
    assert render == set(GROUPING) | set(LATER_STAGES) | MODEL


@pytest.mark.parametrize("name", GROUPING)
def test_every_grouping_option_changes_the_key_and_the_tree(name: str) -> None:
    base = RenderOptions()
    changed = replace(base, **{name: _other(getattr(base, name))})
    assert changed.grouping != base.grouping
    assert getattr(changed.grouping, name) == getattr(changed, name)
    graph = graphviz_tb.load(SAMPLE)
    assert graph.hierarchy(changed) is not graph.hierarchy(base)
    assert graph.hierarchy(changed) is graph.hierarchy(replace(changed))


@pytest.mark.parametrize("name", sorted(LATER_STAGES))
def test_an_option_of_a_later_stage_serves_the_same_tree(name: str) -> None:
    base = RenderOptions()
    changed = replace(base, **{name: LATER_STAGES[name]})
    assert changed.grouping == base.grouping
    graph = graphviz_tb.load(SAMPLE)
    assert graph.hierarchy(changed) is graph.hierarchy(base)
