"""Options by stage.  Each stage takes one typed value of its own, regrouped from the flat
keywords users pass; the hierarchy cache is keyed by the grouping options themselves: a
grouping option that the key left out would serve a stale tree with no error, and an option of
a later stage in the key would rebuild the tree for nothing."""

from __future__ import annotations

import inspect
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import pytest

import graphviz_tb
from graphviz_tb.draw.dot import scene_to_dot
from graphviz_tb.draw.viewer_data import build_data
from graphviz_tb.group.build import build_hierarchy
from graphviz_tb.layout.dot_layout import laid_edge
from graphviz_tb.layout.groups import layout_groups
from graphviz_tb.layout.scene import build_scene
from graphviz_tb.options import STAGES, GroupOptions, RenderOptions
from graphviz_tb.view.opening import choose_picture, expanded_groups
from graphviz_tb.write.page import write_page

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


def test_the_stages_options_share_out_every_render_option_once() -> None:
    """Each flat option belongs to exactly one stage's value, with the same default: the
    stage values are the flat keywords, regrouped, and nothing else."""
    owners: dict[str, list[str]] = {}
    for stage in STAGES:
        for f in fields(stage):
            owners.setdefault(f.name, []).append(stage.__name__)
            assert getattr(stage(), f.name) == getattr(RenderOptions(), f.name), f.name
    assert {name: len(o) for name, o in owners.items()} == {
        f.name: 1 for f in fields(RenderOptions)}
    changed = RenderOptions(depth=3, rankdir="LR", theme="dark", series=False)
    assert changed.view.depth == 3 and changed.layout.rankdir == "LR"
    assert changed.style.theme == "dark" and changed.grouping.series is False


#: Each stage's entry points, the parameter that takes options, and the one type it takes.
STAGE_FUNCTIONS = [
    (build_hierarchy, "options", "GroupOptions"),
    (expanded_groups, "options", "ViewOptions"),
    (choose_picture, "options", "ViewOptions"),
    (build_scene, "options", "LayoutOptions"),
    (layout_groups, "options", "LayoutOptions"),
    (laid_edge, "options", "LayoutOptions"),
    (scene_to_dot, "options", "StyleOptions"),
    (build_data, "options", "StyleOptions"),
    (write_page, "options", "StyleOptions"),
]


@pytest.mark.parametrize(("function", "param", "kind"), STAGE_FUNCTIONS,
                         ids=[f.__name__ for f, _, _ in STAGE_FUNCTIONS])
def test_each_stage_takes_only_its_own_options(function: Any, param: str, kind: str) -> None:
    assert inspect.signature(function).parameters[param].annotation in (kind, f"{kind} | None")


def test_no_stage_reads_the_whole_bag() -> None:
    """Below the driver, no module names RenderOptions: a stage handed the whole bag could
    read another stage's option, and the hierarchy cache would not know."""
    package = Path(graphviz_tb.__file__).parent
    readers = sorted(str(p.relative_to(package))
                     for folder in ("read", "model", "group", "view", "layout", "draw", "write")
                     for p in (package / folder).rglob("*.py")
                     if "RenderOptions" in p.read_text(encoding="utf-8"))
    assert readers == []
    assert "RenderOptions" not in (package / "picture.py").read_text(encoding="utf-8")
